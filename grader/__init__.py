"""Triton Attention Puzzles' grader.

Import it before defining any kernel: importing picks the interpreter when there is no GPU, and
triton reads that choice when ``@triton.jit`` runs.

    import grader
    ...define a kernel and its launcher...
    grader.check(4, softmax_three_loop)
"""

from __future__ import annotations

from collections.abc import Callable

from . import env

MODE = env.choose_mode()

__all__ = ["MODE", "check"]


def check(puzzle: int | str, launcher: Callable, *, seed: int | None = None, timeout: float = 30.0):
    """Grade `launcher` on every case of `puzzle` in this process, print the report, return the result.

    This is the notebook path; ``python -m grader`` grades in a child process instead, so that a
    crash cannot take the grader down.
    """
    import inspect
    import secrets

    from . import grading, registry, report

    found = registry.find(puzzle)
    problems = env.version_problems(MODE)
    if problems:
        raise RuntimeError("\n".join(problems))
    seed = secrets.randbelow(2**31) if seed is None else seed
    try:
        source = inspect.getsourcefile(launcher) or "<notebook>"
    except TypeError:
        source = "<unknown>"
    result = grading.grade(found, launcher, seed, MODE.device, source, MODE.name, timeout)
    name = getattr(launcher, "__name__", "launcher")
    print(report.format_result(result, f"grader.check({found.number}, {name}, seed={seed})"))
    return result
