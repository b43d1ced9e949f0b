"""Find the launcher to grade: in puzzles/, in solutions/, or in any file (--file).

All three go through ``load_launcher``, so the same cases grade the learner, the reference
solution and a student's submission.

The judge reads a --file submission before a worker imports it (``grader.judge.submission``).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable

from grader.course.registry import Puzzle
from grader.paths import source_path


class LoadError(Exception):
    """The file could not be imported, or does not define the launcher; the message says which."""


def load_launcher(puzzle: Puzzle, impl: str = "puzzles", file: str | None = None) -> Callable:
    path = source_path(puzzle, impl, file)
    if not path.is_file():
        raise LoadError(f"{path} does not exist")
    name = f"{impl}.{puzzle.module}" if file is None else f"submission_{puzzle.module}_{abs(hash(path))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # triton's jit reads the kernel's source through the module
    try:
        spec.loader.exec_module(module)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # sys.exit() at import too: reported, never raised
        from grader.worker.execute import explain_exception

        raise LoadError(f"could not import {path.name}:\n  {explain_exception(exc)}") from None
    launcher = getattr(module, puzzle.launcher, None)
    if not callable(launcher):
        raise LoadError(f"{path.name} defines no function `{puzzle.launcher}` (the launcher for puzzle "
                        f"{puzzle.number})")
    return launcher
