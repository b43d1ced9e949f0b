"""A GPU that lacks what a puzzle needs: the report says so, and the CLI grades that puzzle in the interpreter.

bfloat16 tensor-core dots need sm_80 (the A100); below it ptxas refuses them. Tensor descriptors work below
sm_90, as ordinary loads (triton's RewriteTensorDescriptorToPointer pass), so puzzle 11 grades natively there
with a note. No such GPU is at hand: the runner takes the capability as a parameter, and these tests give it.
"""

import pytest
import torch

from grader import env
from grader.course import puzzle, registry
from grader.course.puzzle import BF16_CAPABILITY
from grader.judge import runner


def test_the_tensor_core_puzzles_need_sm80_for_their_bfloat16_cases():
    for number in (11, 12, 13):
        puzzle = registry.find(number)
        assert "sm_80" in puzzle.unsupported_on((7, 5))
        assert puzzle.unsupported_on(BF16_CAPABILITY) is None
        assert puzzle.unsupported_on((9, 0)) is None
    for number in range(1, 11):
        assert registry.find(number).unsupported_on((7, 0)) is None


def test_below_sm90_only_the_descriptor_puzzle_says_it_has_no_tma():
    assert "no TMA" in " ".join(registry.find(11).gpu_notes((8, 0)))
    assert registry.find(11).gpu_notes((9, 0)) == []
    assert registry.find(12).gpu_notes((8, 0)) == []


def test_every_puzzle_must_compile_for_the_a100_too():
    assert all(80 in p.gpu_archs and 90 in p.gpu_archs for p in registry.PUZZLES)


@pytest.mark.slow
def test_the_cli_grades_a_puzzle_the_gpu_cannot_run_in_the_interpreter_and_says_why():
    puzzles = [registry.find(12), registry.find(11)]
    results = runner.grade_isolated(puzzles, "solutions", None, 7, False, 60.0, "native", capability=(7, 5))
    assert [r.puzzle for r in results] == [12, 11]  # the order asked for
    for result in results:
        assert result.status == "passed", result
        assert result.mode == "interpreter"
        why = result.notices[0]
        assert why.startswith("graded in the interpreter") and "sm_75" in why and "sm_80" in why, why
        assert not any(c.reason == "skipped" for c in result.cases)  # bfloat16 too: the grader's hook fixes it


def test_in_a_notebook_on_such_a_gpu_the_bfloat16_cases_are_skipped_with_the_reason(monkeypatch):
    monkeypatch.setattr(env, "_CAPABILITY", [(7, 5)])
    monkeypatch.setattr(env, "gpu_label", lambda: "Tesla T4 (sm_75)")
    cases = registry.find(12).cases
    bf16 = next(c for c in cases if c.half == torch.bfloat16)
    fp16 = next(c for c in cases if c.half != torch.bfloat16)
    why = puzzle.skip_reason(bf16, "cuda", 12)
    assert "sm_80" in why and "Tesla T4 (sm_75)" in why and "python -m grader 12" in why
    assert puzzle.skip_reason(fp16, "cuda", 12) is None
    monkeypatch.setattr(env, "_CAPABILITY", [(9, 0)])
    assert puzzle.skip_reason(bf16, "cuda", 12) is None
