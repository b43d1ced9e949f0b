"""Find the launcher to grade, in the worker.

Kernel-only grading (the default for puzzles/ and --file) gets the submission's kernels from the judge, which
read them without running the file (``grader.judge.submission``), and puts them under the puzzle's own launcher
(``load_kernels``, ``grader.worker.compose``). The practice path (``--own-launcher``) and the reference solutions
import the whole file and take its launcher (``load_launcher``); the judge vets such a file first.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable

from grader.course.registry import Puzzle
from grader.paths import source_path


class LoadError(Exception):
    """The file could not be imported, or does not define the launcher; the message says which."""


def load_kernels(puzzle: Puzzle, kernels: dict, device: str, folder: str | None = None) -> Callable:
    """Kernel-only grading: the puzzle's own launcher, with the submission's kernels (grader.worker.compose) built
    in `folder` (by default the working directory, the worker's own)."""
    from grader.worker import compose

    try:
        module = compose.build(kernels, os.path.join(folder or os.getcwd(), "kernels"), device)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # a kernel Triton refuses when it is defined
        from grader.worker.execute import explain_exception

        raise LoadError(f"could not load the kernels of {kernels['name']}:\n  {explain_exception(exc)}") from None
    return getattr(module, puzzle.launcher)


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
