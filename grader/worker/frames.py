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


def _learner_frames():
    """The learner's frames of the running kernel, innermost first (a helper's, then the kernel's that called it):
    up to the frame the interpreter's grid loop called (triton's GridExecutor), and never past the grader's own
    frame that launched it."""
    frame, seen = sys._getframe(1), False
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if path.startswith(_HERE) and seen:
            return
        if not path.startswith((_HERE, _triton_dir())) and not frame.f_code.co_filename.startswith("<"):
            seen = True
            yield frame
            caller = frame.f_back
            if caller is not None and type(caller.f_locals.get("self")).__name__ == "GridExecutor":
                return
        frame = frame.f_back


def _in_while_loop(guess: bool = False) -> bool:
    """Whether the access running now is part of a compare-and-swap retry loop. A swap (`guess` False) is, where
    any of the learner's frames runs a line inside a `while` (in a @triton.jit helper the loop calls too), or one
    assigning a name a `while` tests (`seen = tl.atomic_cas(...)` before `while seen != old:`). A plain load is a
    guess, where its line (the innermost) is a tl.load through the same pointer expression as a tl.atomic_cas (or
    a helper's first argument) in its function, inside a `while` or assigned to a name a `while` tests. Whether the loop
    retries until its swap takes, the interpreter finds out: a swap in it fails once where another program updated
    its element (Recorder.contended_swaps)."""
    for frame in _learner_frames():
        swaps, guesses = _retry_lines("".join(linecache.getlines(frame.f_code.co_filename)))
        if frame.f_lineno in (guesses if guess else swaps):
            return True
        if guess:
            return False
    return False


def _calls(node: ast.AST, names: tuple[str, ...]) -> list[ast.Call]:
    return [call for call in ast.walk(node) if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr in names]


@functools.lru_cache(maxsize=32)
def _retry_lines(source: str) -> tuple[frozenset[int], frozenset[int]]:
    """(the lines where a swap is part of a retry loop, the lines where a load is its guess): see _in_while_loop."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return frozenset(), frozenset()
    swaps, guesses = set(), set()
    for function in (node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)):
        loops = [node for node in ast.walk(function) if isinstance(node, ast.While)]
        inside = {line for loop in loops for line in range(loop.lineno, loop.end_lineno + 1)}
        tested = {name.id for loop in loops for name in ast.walk(loop.test) if isinstance(name, ast.Name)}
        # what a swap goes through: tl.atomic_cas's pointer, or the first argument of a helper (which may swap)
        pointers = {ast.unparse(call.args[0]) for call in ast.walk(function) if isinstance(call, ast.Call) and
                    call.args and (isinstance(call.func, ast.Name) or _calls(call, ("atomic_cas",)) == [call])}
        swaps |= inside
        for node in ast.walk(function):
            if not isinstance(node, ast.Assign):
                continue
            lines = set(range(node.lineno, node.end_lineno + 1))
            named = any(isinstance(t, ast.Name) and t.id in tested for t in node.targets)
            if named:
                swaps |= lines
            if (named or lines & inside) and any(call.args and ast.unparse(call.args[0]) in pointers
                                                 for call in _calls(node.value, ("load",))):
                guesses |= lines
    return frozenset(swaps), frozenset(guesses)
