"""Where in the learner's kernel the interpreter is: the grader's own frames and triton's are skipped (the access
record, the race checks and the tl.dot hook name the learner's line with these)."""

from __future__ import annotations

import ast
import functools
import linecache
import os
import sys

from grader.paths import location

_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep  # the grader's worker modules: never the learner's frames


@functools.lru_cache(maxsize=1)
def _triton_dir() -> str:
    import triton

    return os.path.dirname(os.path.abspath(triton.__file__)) + os.sep


def learner_line(frame, library: tuple[str, ...]) -> tuple[str, str]:
    """Where and what: the innermost frame from `frame` outwards whose file is in none of the `library`
    folders (nor generated code), with its source line; ("?", "") if there is none."""
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(library) and not frame.f_code.co_filename.startswith("<"):
            line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
            return location(filename, frame.f_lineno), line
        frame = frame.f_back
    return "?", ""


def _kernel_line() -> tuple[str, str]:
    return learner_line(sys._getframe(1), (_HERE, _triton_dir()))


def _in_while_loop() -> bool:
    """Whether the learner's line running now is part of a retry loop: inside a `while` statement, or assigning
    a name that a `while` tests (`seen = tl.atomic_cas(...)` before `while seen != old:`)."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith((_HERE, _triton_dir())):
        frame = frame.f_back
    if frame is None:
        return False
    return frame.f_lineno in _retry_lines("".join(linecache.getlines(frame.f_code.co_filename)))


@functools.lru_cache(maxsize=32)
def _calls(node: ast.AST, names: tuple[str, ...]) -> bool:
    return any(isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in names
               for call in ast.walk(node))


def _retry_lines(source: str) -> frozenset[int]:
    """The lines of this source inside a retry loop, and, in the function that holds it, those of a tl.load or a
    tl.atomic_cas assigned to a name the loop tests (the guess and the first swap). A retry loop is a `while` whose
    test reads what a tl.atomic_cas returned (`while seen != old:`) and whose body swaps again: a `while` that runs
    once, whose test the swap does not decide, or whose body does not swap, retries nothing, and its swaps race
    like stores. (Whether the body's swap runs, the interpreter finds out: a swap in a retry loop fails once where
    another program updated its element, Recorder.contended_swaps.)"""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return frozenset()
    lines = set()
    for function in (node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)):
        swapped = {target.id for node in ast.walk(function) if isinstance(node, ast.Assign) and
                   _calls(node.value, ("atomic_cas",)) for target in node.targets if isinstance(target, ast.Name)}
        loops = [node for node in ast.walk(function) if isinstance(node, ast.While) and _calls(
            ast.Module(node.body, []), ("atomic_cas",)) and swapped & {n.id for n in ast.walk(node.test)
                                                                      if isinstance(n, ast.Name)}]
        tested = {name.id for loop in loops for name in ast.walk(loop.test) if isinstance(name, ast.Name)}
        lines.update(line for loop in loops for line in range(loop.lineno, loop.end_lineno + 1))
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and _calls(node.value, ("load", "atomic_cas")) and any(
                    isinstance(t, ast.Name) and t.id in tested for t in node.targets):
                lines.update(range(node.lineno, node.end_lineno + 1))
    return frozenset(lines)
