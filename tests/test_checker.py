"""The checker: tolerances that pass honest float32 and fail real mistakes, and diagnoses that say what is wrong."""

import pytest
import torch
from helpers import by_puzzle

from grader.course import mistakes, registry
from grader.course.cases import make_inputs, reference
from grader.judge import checker

# Backward specs recompute their forward before autograd; where that recomputation rounds worse than a kernel ever
# does (14 takes the log of y and exponentiates it again), an honest float32 result is the closed form the puzzle's
# docstring derives, which the hints compare with (grader/course/mistakes.py), in float32.
FLOAT32_CLOSED_FORMS = {"softmax_backward": lambda i: mistakes.softmax_backward(i["y"], i["dy"]),
                        "cross_entropy_backward": mistakes.cross_entropy_backward}


def _float32_spec(puzzle, inputs):
    """What an honest float32 implementation computes: the spec itself, run in float32 (or its closed form). The
    16-bit inputs are cast first: run on them, a backward's spec rounds its gradients to 16 bits, which no kernel
    does (they are float32 outputs), and a last key's dv below float16's normal range then misses by its spacing."""
    inputs = {k: v.float() if isinstance(v, torch.Tensor) and v.is_floating_point() else v for k, v in inputs.items()}
    out = FLOAT32_CLOSED_FORMS.get(puzzle.slug, lambda i: puzzle.spec(**i))(inputs)
    return [o.to(torch.float64) for o in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("puzzle", by_puzzle())
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.slow
def test_an_honest_float32_result_is_within_tolerance_on_every_case(puzzle, seed):
    for case in puzzle.cases:
        inputs, _ = make_inputs(puzzle.spec, case, seed)
        references = reference(puzzle.spec, inputs)
        inputs64 = {k: v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v
                    for k, v in inputs.items()}
        ours = _float32_spec(puzzle, inputs)
        for name, expected, mine, tolerance in zip(puzzle.outputs, references, ours, puzzle.tolerances):
            allowed = tolerance.allowed(inputs64, expected)
            assert checker.compare(name, mine, expected, allowed) is None, f"{case.name}: {name}"
            # ... with room to spare: GPU kernels round differently, so demand a margin of 4x.
            assert bool(((mine - expected).abs() * 4 <= allowed).all()), f"{case.name}: {name}"


def test_a_ten_percent_softmax_error_fails_where_a_flat_allclose_passes():
    """Inputs in [-0.5, 0.5) make every output about 1/200; a wrong denominator (padded lanes counted)
    scales them by 0.9, an error under 1e-3 that a flat allclose(atol=1e-3) accepts."""
    puzzle = registry.find(4)
    x = torch.rand(8, 200, dtype=torch.float64) - 0.5
    expected = torch.softmax(x, dim=1)
    wrong = expected * 0.9
    assert torch.allclose(wrong, expected, atol=1e-3)  # the flat tolerance that let this through elsewhere
    allowed = puzzle.tolerance.allowed({"x": x}, expected)
    diagnosis = checker.compare("z", wrong, expected, allowed)
    assert diagnosis is not None and diagnosis.wrong == expected.numel()


def test_never_written_elements_are_reported_apart_from_wrong_ones():
    expected = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    yours = expected.clone()
    yours[0, 0] = 100.0
    written = torch.ones(3, 4, dtype=torch.bool)
    written[2, 2:] = False
    diagnosis = checker.compare("z", yours, expected, torch.full_like(expected, 1e-6), written)
    assert (diagnosis.wrong, diagnosis.never_written) == (1, 2)
    assert any("never written (missing tl.store or mask?)" in line for line in diagnosis.lines)
    assert "z[0, 0]: yours 100, expected 0" in "\n".join(diagnosis.lines)


def test_picture_marks_wrong_and_unwritten_cells():
    bad = torch.zeros(2, 6, dtype=torch.bool)
    unwritten = torch.zeros(2, 6, dtype=torch.bool)
    bad[0, 5], unwritten[1, 0] = True, True
    assert checker.picture(bad, unwritten)[1:] == ["  .....X", "  ?....."]


def _hint(yours, expected, blocks, hints=()):
    allowed = torch.full_like(expected, 1e-9)
    diagnosis = checker.compare("z", yours, expected, allowed)
    return checker.hint(yours, expected, allowed, diagnosis, blocks, {}, hints)


def test_hint_for_a_transposed_output():
    expected = torch.randn(3, 5, dtype=torch.float64)
    assert "transposed" in _hint(expected.T.contiguous().reshape(3, 5), expected, {"B0": 4, "B1": 4})


def test_hint_for_an_unmasked_last_block():
    expected = torch.randn(4, 10, dtype=torch.float64)
    yours = expected.clone()
    yours[:, 8:] += 1.0
    assert "last, partial block" in _hint(yours, expected, {"B0": 2, "B1": 4})


def test_hint_for_rows_off_by_a_factor():
    expected = torch.softmax(torch.randn(4, 10, dtype=torch.float64), dim=1)
    assert "constant factor" in _hint(expected * 1.25, expected, {"B0": 2, "B1": 4})


def test_a_failing_puzzle_hint_is_skipped_not_raised():
    """A hint whose check raises is skipped (no crash, no text); the same hint with a check that holds is shown,
    so the assertion could fail."""
    expected = torch.randn(4, dtype=torch.float64)
    broken = (checker.Hint("broken", lambda inputs, yours, blocks: inputs["missing"], "the puzzle's hint"),)
    working = (checker.Hint("working", lambda inputs, yours, blocks: True, "the puzzle's hint"),)
    assert "the puzzle's hint" not in (_hint(expected + 1, expected, {"B0": 2}, broken) or "")
    assert _hint(expected + 1, expected, {"B0": 2}, working) == "the puzzle's hint"


def test_a_case_is_prepared_once_per_process_and_no_grading_changes_what_was_kept(tmp_path):
    """verdict.prepare keeps each case's inputs, reference and allowed error for the next grading of it (cases.Kept);
    a grading that fails (the hints compute on them) leaves them as they were, and make_inputs hands each caller
    tensors of its own, which a kernel may write into."""
    from helpers import grade_text, lesson_text

    from grader.judge import verdict

    puzzle = registry.find(3)
    case = puzzle.cases[0]
    first = verdict.prepare(puzzle, case, 11)
    kept = [t.clone() for t in first.expected + first.allowances]
    wrong = lesson_text(puzzle).replace("acc += tl.sum(tile, axis=1)", "acc += tl.sum(tile, axis=1) * 1.5")
    result = grade_text(puzzle, wrong, tmp_path, seed=11)
    assert result.cases[0].reason == "mismatch", result
    again = verdict.prepare(puzzle, case, 11)
    assert again is first
    assert all(torch.equal(a, b) for a, b in zip(again.expected + again.allowances, kept))
    one, other = make_inputs(puzzle.spec, case, 11)[0], make_inputs(puzzle.spec, case, 11)[0]
    assert one["x"] is not other["x"] and torch.equal(one["x"], other["x"])
    one["x"].add_(1.0)
    assert torch.equal(make_inputs(puzzle.spec, case, 11)[0]["x"], other["x"])
