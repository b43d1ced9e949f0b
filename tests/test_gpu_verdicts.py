"""A native verdict checks what the interpreter checks (issue 18, section 1), on a CUDA GPU: every known-wrong
kernel fails natively for the same reason as in the interpreter, every correct one passes, an illegal address
is one message and the next case runs in a fresh worker, and gradings side by side on one GPU agree with one
alone. Skipped where there is no GPU; scripts/gpu_check.sh runs them."""

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch
from expected_verdicts import EXPECTED
from helpers import KERNELS, ROOT, kernel_file, lesson_text
from test_wrong_kernels import MUTATIONS

from grader.course import registry
from grader.judge import runner

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

KERNEL_MUTATIONS = [m for m in MUTATIONS if not getattr(m, "own_launcher", False) and not m.beyond]


def _native(puzzle, path, first_failure=True):
    (result,) = runner.grade_isolated([registry.find(puzzle)], "puzzles", str(path), seed=0, interpret=False,
                                      timeout=60.0, mode="native", first_failure=first_failure)
    return result


def _one_per_reason(mutations) -> list:
    """The mutations as params, the first of each reason marked for the quick set (scripts/gpu_check.sh)."""
    seen, params = set(), []
    for mutation in mutations:
        quick = mutation.reason not in seen
        seen.add(mutation.reason)
        param = mutation.param()
        params.append(pytest.param(*param.values, id=param.id,
                                   marks=[*param.marks, *([pytest.mark.gpu_quick] if quick else [])]))
    return params


@pytest.mark.parametrize("mutation", _one_per_reason(KERNEL_MUTATIONS))
def test_a_known_wrong_kernel_fails_natively_for_the_interpreters_reason(mutation, tmp_path):
    puzzle = registry.find(mutation.puzzle)
    path = tmp_path / f"{puzzle.module}.py"
    path.write_text(mutation.apply(lesson_text(puzzle)))
    result = _native(puzzle.number, path)
    failed = next((c for c in result.cases if not c.passed), None)
    assert failed is not None, f"{mutation.mistake}: passed natively"
    assert failed.reason == mutation.reason, f"{mutation.mistake}: {failed.reason}: {failed.message}"
    assert mutation.clue in f"{failed.message}\n{failed.hint or ''}", failed.message


@pytest.mark.parametrize("name", sorted(p.name for p in (KERNELS / "right").glob("p*.py")))
def test_a_correct_alternative_passes_natively(name):
    result = _native(int(name[1:3]), KERNELS / "right" / name)
    assert result.status == "passed", [(c.name, c.reason, c.message) for c in result.cases if not c.passed]


ILLEGAL = '''
@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    far = offsets.to(tl.int64) * (1 << 40)  # far outside every tensor: the GPU faults
    tl.store(z_ptr + far, tl.load(x_ptr + offsets, mask=offsets < N0), mask=offsets < N0)
'''


def _one_per_puzzle_and_reason(paths) -> list:
    """The files as params, the first of each (puzzle, reason) marked for the quick set: 14 of 64 files
    (2026-12-04), so that the quick set keeps within its 3 minutes; the full set grades every file."""
    seen, params = set(), []
    for path in sorted(paths):
        key = (Path(path).name[1:3], EXPECTED[path][0])
        params.append(pytest.param(path, id=path, marks=[pytest.mark.gpu_quick] if key not in seen else []))
        seen.add(key)
    return params


@pytest.mark.parametrize("path", _one_per_puzzle_and_reason(EXPECTED))
def test_a_known_cheating_or_wrong_kernel_file_fails_natively(path):
    """Each file of tests/expected_verdicts.py, by its kernels alone, on the GPU: the reason and the clue the
    interpreter gives (tests/test_expected_verdicts.py)."""
    reason, clue = EXPECTED[path]
    result = _native(int(Path(path).name[1:3]), kernel_file(path))
    failed = next((c for c in result.cases if not c.passed), None)
    assert failed is not None, f"{path}: passed natively"
    assert failed.reason == reason, f"{path}: {failed.reason}: {failed.message}"
    assert clue in f"{failed.message}\n{failed.hint or ''}", failed.message


@pytest.mark.gpu_quick
def test_an_illegal_address_is_one_message_and_the_next_case_runs(tmp_path):
    text = lesson_text(registry.find(1))
    start = text.index("@triton.jit\ndef")  # the kernel, not the docstring's words about @triton.jit helpers
    end = text.index("\ndef add(") + 1  # the launcher (the docstring's spec is indented)
    path = tmp_path / "p01_add.py"
    path.write_text(text[:start] + ILLEGAL.lstrip() + "\n\n" + text[end:])
    result = _native(1, path, first_failure=False)
    assert len(result.cases) == len(registry.find(1).cases)
    messages = [c.message for c in result.cases]
    assert all(not c.passed for c in result.cases)
    assert any("illegal memory access" in m or "outside" in m for m in messages), messages
    assert not any("Traceback" in m for m in messages)


def test_gradings_side_by_side_on_one_gpu_agree(tmp_path):
    """Ten native gradings at once of the tensor-descriptor matmul (the lesson's own kernel and launcher): each
    passes, as one alone does."""
    path = tmp_path / "p11_matmul.py"
    path.write_text(lesson_text(registry.find(11)))

    environment = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}

    def grade(_):
        return subprocess.run([sys.executable, "-m", "grader", "11", "--file", str(path)], cwd=ROOT, env=environment,
                              capture_output=True, text=True, timeout=900)

    with ThreadPoolExecutor(10) as pool:
        runs = list(pool.map(grade, range(10)))
    failed = [run.stdout[-2000:] + run.stderr[-2000:] for run in runs if run.returncode != 0]
    assert not failed, failed[0]
