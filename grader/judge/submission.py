"""Read a submission without running it.

``vet_submission`` is the static check of a file graded with its own launcher (``--own-launcher``): a file that
imports the grader or reaches into the interpreter's machinery (``sys.modules``, stack frames, ``inspect``,
``ctypes``, ``gc``) or the process table (``os.kill``, ``signal``, ``subprocess``, ``/proc``) is refused with the
line that did it. No kernel or launcher needs any of these. This is a speed bump, not a sandbox: Python code can
reach the same things in ways no reading of its source foresees.
"""

from __future__ import annotations

import ast
from pathlib import Path

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


