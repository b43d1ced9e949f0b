"""Shared helpers for the grader's own tests."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from grader import env, grading, loader, registry
from grader.stubs import make_stub

ROOT = Path(__file__).resolve().parent.parent
KERNELS = Path(__file__).resolve().parent / "kernels"

_PROBLEMS = env.version_problems(env.Mode(True, ""))
requires_interpreter = pytest.mark.skipif(bool(_PROBLEMS), reason="; ".join(_PROBLEMS) or "interpreter usable")


def by_puzzle(puzzles=registry.PUZZLES):
    """Parametrize over puzzles, each carrying its registry marker (puzzle1, puzzle2, ...)."""
    return [pytest.param(p, marks=getattr(pytest.mark, f"puzzle{p.number}"), id=p.module) for p in puzzles]


def solution_text(puzzle) -> str:
    return (ROOT / "solutions" / f"{puzzle.module}.py").read_text()


def stub_text(puzzle) -> str:
    return make_stub(solution_text(puzzle), puzzle.number)


def grade_file(puzzle, path, seed=0, timeout=env.DEFAULT_TIMEOUT, first_failure=False) -> grading.PuzzleResult:
    """Grade the launcher in `path` in this process, exactly as `--file` loads it."""
    puzzle = registry.find(puzzle)
    launcher = loader.load_launcher(puzzle, file=str(path))
    return grading.grade(puzzle, launcher, seed, "cpu", str(path), "interpreter", timeout, first_failure)


def grade_text(puzzle, text, tmp_path, seed=0, timeout=env.DEFAULT_TIMEOUT, first_failure=True) -> grading.PuzzleResult:
    """Grade source text as a submission; by default only up to its first failing case."""
    path = tmp_path / f"{registry.find(puzzle).module}_under_test.py"
    path.write_text(text)
    return grade_file(puzzle, path, seed, timeout, first_failure)


def failed_case(result):
    """The first case that did not pass."""
    return next(c for c in result.cases if not c.passed)


def run_cli(*args, interpret=True, timeout=600, results=None):
    """`python -m grader ARGS` in a child process, from the repository root.

    Progress goes to `results` (by default a throwaway file), never to the learner's .grader/.
    """
    environment = dict(os.environ)
    environment["GRADER_RESULTS"] = str(results or Path(tempfile.mkdtemp()) / "results.json")
    environment.pop("TRITON_INTERPRET", None)
    if interpret:
        environment["TRITON_INTERPRET"] = "1"
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=ROOT, capture_output=True, text=True,
                          env=environment, timeout=timeout)
