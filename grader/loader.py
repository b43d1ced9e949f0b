"""Find the launcher to grade: in puzzles/, in solutions/, or in any file (--file).

All three go through ``load_launcher``, so the same cases grade the learner, the reference
solution and a student's submission.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

from .registry import Puzzle

ROOT = Path(__file__).resolve().parent.parent
IMPLS = ("puzzles", "solutions")


class LoadError(Exception):
    """The file could not be imported, or does not define the launcher; the message says which."""


def source_path(puzzle: Puzzle, impl: str = "puzzles", file: str | None = None) -> Path:
    if file is not None:
        return Path(file).resolve()
    return ROOT / impl / f"{puzzle.module}.py"


def shown(path: Path) -> str:
    """A path as the learner would type it: relative to the repository when inside it."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


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
    except Exception as exc:
        from .grading import explain_exception

        raise LoadError(f"could not import {path.name}:\n  {explain_exception(exc)}") from None
    launcher = getattr(module, puzzle.launcher, None)
    if not callable(launcher):
        raise LoadError(f"{path.name} defines no function `{puzzle.launcher}` (the launcher for puzzle "
                        f"{puzzle.number})")
    return launcher
