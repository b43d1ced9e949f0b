"""Chapter 3's natural mistakes get a report that names the fix (issue 12).

Each mistake is a one-line mutation of the solution, graded through the grader up to its first failing case;
the default report (that case's message and hint) must carry a clue to the fix. The cases themselves are
checked too: a case that gives each program several nodes has a node count that is not a multiple of them.
"""

import inspect

import pytest
import torch
from helpers import Mutation, rejected_case, requires_interpreter, solution_text

from grader import inprocess
from grader.course import registry
from grader.course.cases import make_inputs, reference
from grader.judge import checker
from grader.worker import execute, loader

pytestmark = requires_interpreter

NO_GUARD = ("if node < N:  # the last program's spare nodes, past N, have nothing to do",
            "if node >= 0:  # guard removed: spare nodes past N run too")

MUTATIONS = [
    Mutation(8, "spare nodes not skipped", *NO_GUARD, "out_of_bounds", "out-of-bounds load on col_ptr"),
    Mutation(9, "spare nodes not skipped", *NO_GUARD, "out_of_bounds", "out-of-bounds load on row_ptr"),
    Mutation(10, "spare nodes not skipped", *NO_GUARD, "out_of_bounds", "out-of-bounds load on col_ptr"),
    Mutation(9, "weights read by neighbour, not by slot", "edge_weight_ptr + slots[:, None] * H",
             "edge_weight_ptr + neighbours[:, None] * H", "mismatch", "its rows are by slot"),
    Mutation(9, "weights read by destination node, not by slot", "edge_weight_ptr + slots[:, None] * H",
             "edge_weight_ptr + (slots * 0 + node)[:, None] * H", "mismatch", "its rows are by slot"),
    Mutation(9, "head dropped from the weight load",
             "weights = tl.load(edge_weight_ptr + slots[:, None] * H + heads[None, :],\n"
             "                                  mask=slot_ok[:, None] & (heads < H)[None, :], other=0.0)",
             "weights = tl.load(edge_weight_ptr + slots, mask=slot_ok, other=0.0)", "mismatch",
             "one weight per slot and head", also=(("weights[:, :, None]", "weights[:, None, None]"),)),
    Mutation(9, "every head takes head 0's weight", "edge_weight_ptr + slots[:, None] * H + heads[None, :],",
             "edge_weight_ptr + slots[:, None] * H + heads[None, :] * 0,", "mismatch",
             "one weight per slot and head"),
    Mutation(9, "end = row_ptr[n+1] - 1", "end = tl.load(row_ptr_ptr + node + 1)",
             "end = tl.load(row_ptr_ptr + node + 1) - 1", "mismatch", "not row_ptr[n+1] - 1"),
    Mutation(10, "no 1/sqrt(D)", "other=0.0) * scale\n", "other=0.0)\n", "mismatch",
             "misses the 1/sqrt(D) scale, so e_out and h are both off"),
    Mutation(10, "per-feature clip present, sum clip missing", "logits = tl.clamp(tl.sum(e_out, axis=2), -5.0, 5.0)",
             "logits = tl.sum(e_out, axis=2)", "mismatch", "the sum clip is missing"),
]


@pytest.mark.parametrize("mutation", [m.param() for m in MUTATIONS])
@pytest.mark.slow
def test_the_default_report_names_the_fix(mutation, tmp_path):
    rejected_case(mutation, tmp_path)


NO_CLIP = Mutation(10, "no clip at all", "e_out = tl.clamp(k * q[None, :, :], -5.0, 5.0) * e",
                   "e_out = k * q[None, :, :] * e", "mismatch", "neither clip is applied",
                   also=(("logits = tl.clamp(tl.sum(e_out, axis=2), -5.0, 5.0)", "logits = tl.sum(e_out, axis=2)"),))
SUM_CLIP_MISSING = MUTATIONS[-1]


def _grade_case(mutation, case_name, tmp_path):
    """One named case of a mutated solution, graded as the grader grades it."""
    puzzle = registry.find(mutation.puzzle)
    path = tmp_path / f"{puzzle.module}_under_test.py"
    path.write_text(mutation.apply(solution_text(puzzle)))
    case = next(c for c in puzzle.cases if c.name == case_name)
    return inprocess.run_case(puzzle, loader.load_launcher(puzzle, file=str(path)), case, 0, "cpu")


@pytest.mark.puzzle10
@pytest.mark.parametrize("mutation, clue, not_clue", [
    (NO_CLIP, "neither clip is applied", "sum clip"),
    (SUM_CLIP_MISSING, "the sum clip is missing, though each feature is clipped", "neither"),
], ids=["no clip", "sum clip missing"])
@pytest.mark.slow
def test_a_missing_sum_clip_is_told_apart_from_no_clip(mutation, clue, not_clue, tmp_path):
    """Where the per-feature clip changes h, the hint says which clips are missing."""
    result = _grade_case(mutation, "clip per feature", tmp_path)
    assert result.reason == "mismatch" and clue in result.hint and not_clue not in result.hint, result.hint


@pytest.mark.puzzle10
@pytest.mark.slow
def test_where_no_feature_reaches_the_clip_the_hint_says_so(tmp_path):
    result = _grade_case(NO_CLIP, "logits beyond 5", tmp_path)
    assert "the sum clip is missing: " in result.hint and "shows in the case 'clip per feature'" in result.hint


# -- every wrong output is reported ----------------------------------------------------------------

def _judge_every_output(puzzle, text, tmp_path, case_name):
    """check_outputs on one case of a submission, as grading.judge would call it."""
    path = tmp_path / f"{puzzle.module}_under_test.py"
    path.write_text(text)
    case = next(c for c in puzzle.cases if c.name == case_name)
    execution = execute.execute(puzzle, loader.load_launcher(puzzle, file=str(path)), case, 0, "cpu")
    inputs, _ = make_inputs(puzzle.spec, case, 0)
    inputs64 = {k: v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v
                for k, v in inputs.items()}
    return checker.check_outputs(puzzle.outputs, [r.values for r in execution.returned],
                                 reference(puzzle.spec, inputs), [r.written for r in execution.returned],
                                 puzzle.tolerances, inputs64, case.blocks, puzzle.hints)


@pytest.mark.puzzle10
@pytest.mark.slow
def test_a_missing_scale_is_reported_in_h_and_in_e_out(tmp_path):
    puzzle = registry.find(10)
    verdict = _judge_every_output(puzzle, MUTATIONS[-2].apply(solution_text(puzzle)), tmp_path, "molecules")
    assert verdict.reason == "mismatch"
    assert "elements of h wrong" in verdict.message and "elements of e_out wrong" in verdict.message
    assert "1/sqrt(D)" in verdict.hint


@pytest.mark.puzzle10
@pytest.mark.slow
def test_one_wrong_output_reports_that_output_only(tmp_path):
    puzzle = registry.find(10)
    verdict = _judge_every_output(puzzle, SUM_CLIP_MISSING.apply(solution_text(puzzle)), tmp_path, "logits beyond 5")
    assert "elements of h wrong" in verdict.message and "e_out" not in verdict.message.replace("sum_d e_out", "")
    assert "sum clip" in verdict.hint


def test_right_outputs_give_no_verdict():
    expected = [torch.ones(3, dtype=torch.float64), torch.zeros(2, dtype=torch.float64)]
    tolerance = checker.Tolerance(1e-6, lambda inputs, exp: exp.abs() + 1, "1")
    assert checker.check_outputs(("a", "b"), [e.float() for e in expected], expected, [None, None],
                                 (tolerance, tolerance), {}, {}) is None


# -- cases with several nodes per program ---------------------------------------------------------

def _nodes_per_program(puzzle, case) -> int:
    """NODES_PER_PROGRAM as the case launches the solution: its own block setting, or the launcher's default."""
    launcher = loader.load_launcher(puzzle, impl="solutions")
    default = inspect.signature(launcher).parameters.get("NODES_PER_PROGRAM")
    return case.blocks.get("NODES_PER_PROGRAM", default.default if default else 1)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
def test_a_program_of_several_nodes_always_has_spare_nodes(seed):
    """N is never a multiple of NODES_PER_PROGRAM, so a missing `if node < N:` always reads past the index."""
    several = [(p, c) for p in registry.PUZZLES for c in p.cases
               if c.graph is not None and _nodes_per_program(p, c) > 1]
    assert {p.number for p, _ in several} == {8, 9, 10, 16}
    for puzzle, case in several:
        _, dims = make_inputs(puzzle.spec, case, seed)
        assert dims["N"] % _nodes_per_program(puzzle, case), f"puzzle {puzzle.number}, {case.name}: N={dims['N']}"
