"""The grader's check runs where the bench puts the tensors: each puzzle's tolerance scales (and the chapter 5
closed forms behind them) on inputs on another device than the CPU. The meta device stands in for a GPU here: an
op that mixes it with a tensor made on the CPU fails as a GPU one does ("Expected all tensors to be on the same
device", the bench's crash on puzzle 17)."""

import pytest
import torch

from grader.course import registry
from grader.course.cases import make_inputs, reference

# The puzzles whose scales need no value of a tensor (the meta device has none: a graph's gathers read indices)
# (puzzle 18's bitmaps are made on the masks' device, by reading, not testable here; the bench runs them on a GPU)
ON_META = [1, 2, 3, 4, 5, 6, 11, 12, 14, 17]


@pytest.mark.parametrize("number", ON_META)
def test_the_tolerance_scales_stay_on_the_inputs_device(number):
    puzzle = registry.find(number)
    case = next(c for c in puzzle.cases if c.half is None) if any(c.half is None for c in puzzle.cases) \
        else puzzle.cases[0]
    inputs, _ = make_inputs(puzzle.spec, case, 0)
    expected = reference(puzzle.spec, inputs)
    elsewhere = {k: v.to("meta") if isinstance(v, torch.Tensor) else v
                 for k, v in inputs.items()}
    tolerances = puzzle.tolerances if isinstance(puzzle.tolerances, tuple) else (puzzle.tolerances,)
    for tolerance, value in zip(tolerances, expected):
        if getattr(tolerance, "scale", None) is not None:
            scale = tolerance.scale(elsewhere, value.to("meta"))
            assert not isinstance(scale, torch.Tensor) or scale.device.type == "meta"


def test_a_descriptor_whose_rows_run_into_the_next_tensor_is_named_by_its_strides():
    """a_desc's rows at a wrong stride can land nearest b (where the allocator put b): the hint is the
    descriptor's, whichever tensor the lanes fell beside (it was "a negative offset" when b lay after a)."""
    from types import SimpleNamespace

    from grader.course import registry
    from grader.worker.bounds_hint import bounds_hint

    violation = SimpleNamespace(region=SimpleNamespace(label="b"), offsets=[-96, -95], wider=False,
                                code="a = a_desc.load([pid_m * BM, k])  # rows past M load as 0")
    hint = bounds_hint(violation, registry.find(11), {})
    assert "check the strides this tensor descriptor was made with" in hint, hint
