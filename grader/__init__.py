"""Triton Attention Puzzles' grader.

Import it before defining any kernel: importing picks the interpreter when there is no GPU, and
triton reads that choice when ``@triton.jit`` runs.

    import grader
    ...define a kernel and its launcher...
    grader.check(4, softmax_three_loop)
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable

from grader import env

# grader/show/ (reports and maps) is a subpackage, and importing a subpackage sets its name on the package: loaded
# later, by grader.check, it would take the name of the function show() below. Loaded now, before the function is
# defined, it leaves `grader.show(...)` the function (its modules are imported by their full name, never through
# the attribute).
importlib.import_module("grader.show")

# Chosen now, before any kernel is defined, where a notebook or a script imports the grader. The command line
# (`python -m grader`, or the installed `triton-puzzles`) and the grader's own processes (started as `python -c ...`)
# choose later, so that a stub is answered without importing torch (grader.show.quick).
_COMMAND_LINE = sys.argv[:1] in (["-m"], ["-c"]) or os.path.basename(sys.argv[0]) == "triton-puzzles"
MODE = None if _COMMAND_LINE else env.choose_mode()

if MODE is not None and MODE.interpret and "IPython" in sys.modules:  # a notebook: kernels may run before a check
    from grader.worker import instrument

    instrument.install()

__all__ = ["MODE", "check", "show"]


def check(puzzle: int | str, launcher: Callable, *, seed: int | None = None, timeout: float = env.DEFAULT_TIMEOUT,
          verbose: bool = False):
    """Grade `launcher` on every case of `puzzle` in this process, print the report, return the result.

    This is the notebook path; ``python -m grader`` grades in a child process instead, so that a
    crash cannot take the grader down.
    """
    import inspect
    import secrets

    from grader import inprocess
    from grader.course import registry
    from grader.show import report

    found = registry.find(puzzle)
    mode = MODE or env.choose_mode()
    problems = env.version_problems(mode)
    if problems:
        raise RuntimeError("\n".join(problems))
    seed = secrets.randbelow(2**31) if seed is None else seed
    try:
        source = inspect.getsourcefile(launcher) or "<unknown>"
    except TypeError:
        source = "<unknown>"
    if "ipykernel_" in source:
        source = "this notebook"
    result = inprocess.grade(found, launcher, seed, mode.device, source, mode.name, timeout)
    call = f"grader.check({found.number}, {getattr(launcher, '__name__', 'launcher')}"
    print(report.format_result(result, call + ")", f"{call}, seed={seed})", verbose,
                               "verbose=True shows every failure in full"))
    return result


def show(puzzle: int | str, launcher: Callable, case: int | str | None = None, heat: bool = False, *, seed: int = 0):
    """Draw which program loaded and stored each element of each tensor in one case of `puzzle` (its name or
    number from 1; the first case by default). With `heat`, how often each element was read. Needs the interpreter.

    It returns the drawing: a notebook shows it as a picture when it ends a cell, a terminal as the text map
    (`print(grader.show(...))` in a script)."""
    from grader.show import memory_map

    return memory_map.show(puzzle, launcher, case, heat, seed)
