"""Beginner's mistakes from the first learner study (issue 9's table) that used to get a bare or misleading report:
each is a mutation of a solution, and the default report (the first failing case's message and hint) names the fix.
"""

import pytest
from helpers import failed_case, grade_text, requires_interpreter, solution_text
from test_wrong_kernels import Mutation

from grader import registry

pytestmark = requires_interpreter

MUTATIONS = [
    Mutation(6, "keys loaded with other=-inf instead of a -inf score", "k = tl.load(k_ptr + keys, mask=key_ok, "
             "other=0.0)", 'k = tl.load(k_ptr + keys, mask=key_ok, other=float("-inf"))', "mismatch",
             "score q * (-inf), which is +inf for a negative q",
             also=(('scores = tl.where(key_ok[None, :], q[:, None] * k[None, :], float("-inf"))',
                    "scores = q[:, None] * k[None, :]"),)),
    Mutation(1, "offsets without tl.program_id", "pid = tl.program_id(0)", "pid = tl.program_id(0) * 0",
             "never_written", "Start each program's block at tl.program_id(0) * B0"),
    Mutation(2, "missing row mask, hint in puzzle 2's names", "mask = (rows[:, None] < N1) & (cols[None, :] < N0)",
             "mask = cols[None, :] < N0", "out_of_bounds", "(rows[:, None] < N1) & (cols[None, :] < N0)"),
    Mutation(4, "padded lanes load 0 in the max pass", 'other=float("-inf")', "other=0.0", "mismatch",
             "Start the max at -inf"),
    Mutation(5, "the new max forgets the old one", "new_max = tl.maximum(row_max, tl.max(x, axis=1))",
             "new_max = tl.max(x, axis=1)", "mismatch", "m_new = tl.maximum(m, tl.max(x, axis=1))"),
    Mutation(1, "tl.arange over the run-time size", "offsets = pid * B0 + tl.arange(0, B0)",
             "offsets = pid * B0 + tl.arange(0, N0)", "error", "use a block size (`tl.arange(0, B0)`"),
    Mutation(9, "tl.zeros with run-time sizes", "acc = tl.zeros([H_PAD, D_PAD], dtype=tl.float32)",
             "acc = tl.zeros([H, D], dtype=tl.float32)", "error", "H_PAD, D_PAD"),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: f"p{m.puzzle}-{m.mistake}")
def test_the_report_names_the_fix(mutation, tmp_path):
    puzzle = registry.find(mutation.puzzle)
    case = failed_case(grade_text(puzzle.number, mutation.apply(solution_text(puzzle)), tmp_path))
    said = case.message + "\n" + (case.hint or "")
    assert case.reason == mutation.reason, said
    assert mutation.clue in said, said
