"""Beginner's mistakes from the learner studies (issue 9's table, and issue 12's 16-bit rule) that used to get
a bare or misleading report, or none: each is a mutation of a solution, and the default report (the first failing
case's message and hint) names the fix.
"""

import pytest
from helpers import Mutation, rejected_case, requires_interpreter

pytestmark = requires_interpreter

MUTATIONS = [
    # issue 12: tl.dot operands stay 16-bit (float16 converts to TF32 exactly: no tolerance could see it)
    Mutation(11, "float32 operands", "acc = tl.dot(a, b, acc)", "acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc)",
             "error", "tl.dot operands must stay 16-bit"),
    Mutation(12, "p left float32, v cast up", "acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])",
             "acc = tl.dot(p, v.to(tl.float32), acc * alpha[:, None])", "error", "tl.dot(p.to(v.dtype), v)"),
    Mutation(1, "off-by-one mask", "mask = offsets < N0", "mask = offsets <= N0", "out_of_bounds",
             "compare with `<`, not `<=`"),
    Mutation(6, "keys loaded with other=-inf instead of a -inf score", "k = tl.load(k_ptr + keys, mask=key_ok, "
             "other=0.0)", 'k = tl.load(k_ptr + keys, mask=key_ok, other=float("-inf"))', "mismatch",
             "score q * (-inf), which is +inf for a negative q",
             also=(('scores = tl.where(key_ok[:, None], k[:, None] * q[None, :], float("-inf"))',
                    "scores = k[:, None] * q[None, :]"),)),
    # every program on block 0: the one-writer check sees the second program store the first's block exactly
    Mutation(1, "offsets without tl.program_id", "pid = tl.program_id(0)", "pid = tl.program_id(0) * 0",
             "race", "every program works on the same block, so the rest is never written. Start each program's "
             "block from its own index: offsets = tl.program_id(0) * B0"),
    Mutation(2, "missing row mask, hint in puzzle 2's names", "mask = (rows[:, None] < N1) & (cols[None, :] < N0)",
             "mask = cols[None, :] < N0", "out_of_bounds", "(rows[:, None] < N1) & (cols[None, :] < N0)"),
    Mutation(4, "padded lanes load 0 in the max pass", 'other=float("-inf")', "other=0.0", "mismatch",
             "Start the max at -inf"),
    Mutation(5, "the new max forgets the old one", "new_max = tl.maximum(row_max, tl.max(x, axis=1))",
             "new_max = tl.max(x, axis=1)", "mismatch", "m_new = tl.maximum(m, tl.max(x, axis=1))"),
    Mutation(1, "tl.arange over the run-time size", "offsets = pid * B0 + tl.arange(0, B0)",
             "offsets = pid * B0 + tl.arange(0, N0)", "gpu_compile", "use a constexpr block size such as B0"),
    Mutation(9, "tl.zeros with run-time sizes", "acc = tl.zeros([H_PAD, D_PAD], dtype=tl.float32)",
             "acc = tl.zeros([H, D], dtype=tl.float32)", "gpu_compile", "an H_PAD = triton.next_power_of_2(H)"),
]


@pytest.mark.parametrize("mutation", [m.param() for m in MUTATIONS])
def test_the_report_names_the_fix(mutation, tmp_path):
    rejected_case(mutation, tmp_path)
