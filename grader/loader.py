"""Find the launcher to grade: in puzzles/, in solutions/, or in any file (--file).

All three go through ``load_launcher``, so the same cases grade the learner, the reference
solution and a student's submission.

A --file submission is first read, not run, by ``vet_submission``: a file that imports the grader
or reaches into the interpreter's machinery (``sys.modules``, stack frames, ``inspect``, ``ctypes``,
``gc``) or the process table (``os.kill``, ``signal``, ``subprocess``, ``/proc``) is refused with the
line that did it. No kernel or launcher needs any of these. This is a speed bump, not a sandbox: Python
code can reach the same things in ways no reading of its source foresees. What holds a verdict is
that the submission runs in a worker process that only sends data and the grader judges it (see
``grader/runner.py``); what protects the machine is a container (scripts/grade_submission.sh).
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

from .registry import Puzzle
from .safe_output import one_line

ROOT = Path(__file__).resolve().parent.parent
IMPLS = ("puzzles", "solutions")


class LoadError(Exception):
    """The file could not be imported, or does not define the launcher; the message says which."""


def source_path(puzzle: Puzzle, impl: str = "puzzles", file: str | None = None) -> Path:
    if file is not None:
        return Path(file).resolve()
    return ROOT / impl / f"{puzzle.module}.py"


def shown(path: Path) -> str:
    """A path as the learner would type it: relative to the repository when inside it; a control character in
    it (a newline, an escape) as a '?', so it cannot break or forge a report's line."""
    try:
        text = str(path.relative_to(ROOT))
    except ValueError:
        text = str(path)
    return one_line(text)


# What a submission may not touch; a kernel and its launcher need none of it.
_FORBIDDEN_MODULES = {"grader", "inspect", "ctypes", "gc", "signal", "subprocess", "importlib", "builtins",
                      "threading", "_thread", "multiprocessing", "concurrent", "asyncio", "site", "runpy"}
_FORBIDDEN_NAMES = {"__import__", "__builtins__", "exec", "eval", "compile"}
_FORBIDDEN_ATTRIBUTES = {"_getframe", "_current_frames", "f_back", "f_globals", "f_locals", "f_builtins",
                         "tb_frame", "gi_frame", "cr_frame", "ag_frame", "__globals__", "__builtins__",
                         "__subclasses__", "__import__", "__code__", "__closure__", "__dict__",
                         "modules", "sys", "setitimer", "alarm", "fork", "forkpty"}  # os.sys.modules, ...
_FORBIDDEN_IN_MODULE = {"sys": {"modules", "_getframe", "settrace", "setprofile", "addaudithook"},
                        "os": {"kill", "killpg", "system", "popen", "execv", "execve", "execvp", "execl",
                               "execlp", "spawnv", "spawnl", "posix_spawn", "posix_spawnp", "pidfd_open"}}


def _refusals(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) for each use of a forbidden module, name, attribute or path in a parsed file."""
    aliases = {}  # local name -> module it stands for (import os as o)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                aliases[(alias.asname or root)] = root
                if root in _FORBIDDEN_MODULES:
                    found.append((node.lineno, f"import {alias.name}"))
        elif isinstance(node, ast.ImportFrom) and node.module:
            root = node.module.split(".")[0]
            names = {a.name for a in node.names}
            if root in _FORBIDDEN_MODULES or names & _FORBIDDEN_IN_MODULE.get(root, set()) or "*" in names:
                found.append((node.lineno, f"from {node.module} import {', '.join(sorted(names))}"))
        elif isinstance(node, ast.Name) and node.id in _FORBIDDEN_NAMES:
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            base = aliases.get(node.value.id) if isinstance(node.value, ast.Name) else None
            if node.attr in _FORBIDDEN_ATTRIBUTES or node.attr in _FORBIDDEN_IN_MODULE.get(base, set()):
                found.append((node.lineno, f"{base or '...'}.{node.attr}"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "/proc" in node.value:
            found.append((node.lineno, repr(node.value)[:40]))
    return sorted(set(found))


def vet_submission(file: str) -> str | None:
    """None when a --file submission may be graded; else why not, naming each line (see the module's note)."""
    path = Path(file)
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return None  # the import reports it, with the learner's line
    found = _refusals(tree)
    if not found:
        return None
    lines = "".join(f"\n  {path.name}:{line}: {what}" for line, what in found[:8])
    return (f"not graded: {path.name} reaches into the grader or the process, which a submission may not do:{lines}"
            "\n  A kernel and its launcher need only triton, torch, numpy and math: remove these lines.")


def load_launcher(puzzle: Puzzle, impl: str = "puzzles", file: str | None = None) -> Callable:
    path = source_path(puzzle, impl, file)
    if not path.is_file():
        raise LoadError(f"{path} does not exist")
    refusal = vet_submission(str(path)) if file is not None else None
    if refusal is not None:
        raise LoadError(refusal)
    name = f"{impl}.{puzzle.module}" if file is None else f"submission_{puzzle.module}_{abs(hash(path))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # triton's jit reads the kernel's source through the module
    try:
        spec.loader.exec_module(module)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # sys.exit() at import too: reported, never raised
        from .grading import explain_exception

        raise LoadError(f"could not import {path.name}:\n  {explain_exception(exc)}") from None
    launcher = getattr(module, puzzle.launcher, None)
    if not callable(launcher):
        raise LoadError(f"{path.name} defines no function `{puzzle.launcher}` (the launcher for puzzle "
                        f"{puzzle.number})")
    return launcher
