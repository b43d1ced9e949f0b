"""Read a submission without running it.

Kernel-only grading (the default for puzzles/, --file, --gradescope and scripts/grade_submission.sh) takes a
file at its word: "what you write: the body of the kernel; the launcher is given". ``read_kernels`` parses the
file with ``ast`` and keeps its @triton.jit functions, its module-level constants that are literals (``B = 64``,
``EPS = tl.constexpr(1e-6)``) and its imports of triton and triton.language; nothing else of the file is ever
executed, in any process: no module-level code, no launcher, no decorator but @triton.jit. Before anything
compiles them, the kernels are held to an allowlist, because Triton evaluates constexpr expressions as Python at
compile time, and the interpreter runs a kernel as Python:

- names: the kernel's parameters and locals, the triton imports (tl, triton, libdevice), other @triton.jit
  functions, literal constants (the file's and the puzzle's), and the builtins Triton accepts (``KERNEL_BUILTINS``,
  ``print`` among them: a device print when compiled);
- no name starting with ``__`` (``_online_update`` is a name like any other), no attribute or keyword starting with
  ``_``, no attribute assignment, no ``**`` arguments;
- the kernel graded in the interpreter is the kernel the GPU compiles, whatever expression chooses a constexpr
  branch: the interpreter runs a stand-in for each of tl's functions (tl.load is patched, tl.core.load is not), so
  a name reached through a triton import takes a path through tl, tl.math and libdevice only (``KERNEL_MODULES``;
  never tl.core), and past the object it names only to a dtype's attributes (never ``tl.load.keywords``); tl's
  functions and modules are called, never used as values (``tl.load == f``); identity is tested against None only
  (``B0 is 1024`` differs too: an int in the interpreter, a constexpr when compiled); a string is a call's argument
  and nothing else (``"%s" % x`` is the block's numbers in the interpreter and its type when compiled);
- no local named like a builtin Triton's code generator falls back to (``getattr``, ``print``, ...: it reads the
  builtin until the local is assigned, ``_TRITON_BUILTINS``), and annotations read module-level names only (Python
  evaluates them when the module is imported);
- an attribute reached through a triton module must name something of triton.language (``tl.core.builtins``,
  ``triton.runtime`` are refused); an attribute of a value must be one of triton.language's types'
  (``x.to``, ``x.shape``, ``desc.load``), never ``format`` (which reads attributes through a format string);
- statements and expressions Triton compiles (``_KERNEL_NODES``): no lambdas, comprehensions, f-strings,
  imports, try, with, global, nested functions or classes;
- nothing of triton.language that leaves Triton, runs as plain Python, or tells the GPU compile from the
  interpreter (``_outside_triton``): inline assembly, external libraries, the compiler's helpers (``tl.str_to_ty``
  evaluates a string), ``target_info`` (``is_cuda()`` is True when the kernel is compiled for the GPU and False in
  the interpreter, so a kernel could be one thing there and another here).

A constant or an import kept must have its lines to itself: ``EPS = 1e-6; import os`` would carry the second
statement into the module the worker imports. A kernel takes the puzzle's kernel's parameters, in order (then its
own, with defaults, and a persistent kernel's NUM_PROGRAMS); @triton.jit may take literal options
(``JIT_OPTIONS``: ``do_not_specialize=[...]``), and no other decorator is kept.

The judge's own work on a file is bounded: at most ``MAX_BYTES``, ``MAX_DEPTH`` and ``MAX_NODES`` of parsed tree
(every later check is about one step per node, and a chain of names is followed with getattr, cached, never
imported), integers of at most ``MAX_INTEGER_BITS`` (Python cannot print one of 4,300 digits). Whatever else goes
wrong while reading a file is a verdict on it (``grader.judge.runner.read_submission``).

The worker then compiles the kernels for the GPU (``grader.worker.gpu_compile``) before the interpreter runs
them, and runs them under the puzzle's own launcher (``given``): the lesson's block sizes, grid and launches are
the puzzle's by construction.

``vet_submission`` is the static check of a file graded with its own launcher (``--own-launcher``): a file that
imports the grader or reaches into the interpreter's machinery (``sys.modules``, stack frames, ``inspect``,
``ctypes``, ``gc``) or the process table (``os.kill``, ``signal``, ``subprocess``, ``/proc``) is refused with the
line that did it. No kernel or launcher needs any of these. This is a speed bump, not a sandbox: Python code can
reach the same things in ways no reading of its source foresees.
"""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

from grader.course import index, stubs
from grader.judge.allowlist import (
    MODULE_PREFIX,
    dotted_name,
    is_literal,
    kernel_problems,
    resolve_alias,
    value_attributes,
)
from grader.paths import ROOT

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
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # the import reports it, with the learner's line
    found = _refusals(tree)
    if not found:
        return None
    lines = "".join(f"\n  {path.name}:{line}: {what}" for line, what in found[:8])
    return (f"not graded: {path.name} reaches into the grader or the process, which a submission may not do:{lines}"
            "\n  A kernel and its launcher need only triton, torch, numpy and math: remove these lines.")



# -- the kernels: what kernel-only grading takes from a file ---------------------------------------------------

MAX_BYTES = 1 << 20  # a puzzle file is a few kB; a larger one is refused before it is parsed
MAX_DEPTH = 60  # nesting of the parsed tree: far above any kernel, and below what would exhaust the parser's stack
# Nodes of the parsed tree: the largest solution or test kernel file holds about 3,100. Every check after parsing
# costs about one step per node, so this bounds the judge's own work on any file (a megabyte of `tl.a.b.c` chains
# is refused here, in a second).
MAX_NODES = 50_000
# An integer literal's size: Python refuses to print an integer of more than 4,300 digits (ast.dump and ast.unparse
# raise), and no kernel's number needs more than 64 bits.
MAX_INTEGER_BITS = 128


class Refused(Exception):
    """A submission kernel-only grading will not take; the message names the file, the line and the fix."""


@dataclass(frozen=True)
class Parts:
    """What a puzzle file holds, read with ``ast``: its @triton.jit functions, its literal constants and its
    triton imports (the kernels' world), and its other top-level functions (the launcher and its helpers)."""
    jit: dict  # name -> ast.FunctionDef
    constants: dict  # name -> the node that assigns it
    imports: dict  # bound name -> the import node
    functions: dict  # name -> ast.FunctionDef of the other top-level functions
    lines: list  # the file's lines


@dataclass(frozen=True)
class Kernels:
    """A submission as kernel-only grading takes it: the text of a module holding only its @triton.jit functions,
    literal constants and triton imports, on the lines where the file has them (every other line blank, so
    messages quote the learner's line numbers); what the puzzle's launcher must find in it; and notes for the
    report (a launcher that differs from the puzzle's)."""
    text: str
    name: str  # the file's name, as messages show it
    kernels: tuple[str, ...]  # the puzzle's kernels, as the submission defines them
    notes: tuple[str, ...]
    started: bool  # False when every kernel is still the stub's (nothing to run)
    constants: tuple[str, ...] = ()  # its literal constants' names


def _depth(node: ast.AST, limit: int) -> int:
    """The nesting depth of a tree, counted up to `limit` (without recursion, so a hostile file cannot exhaust
    the stack)."""
    deepest, frontier = 0, [(node, 1)]
    while frontier:
        node, depth = frontier.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        frontier.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


# Characters that str.splitlines() breaks lines at and Python's tokenizer (and linecache) does not: in a file that
# holds one, the lines the allowlist numbers and the lines the worker runs would not be the same lines.
_OTHER_LINE_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def decoded(text: bytes | str, name: str) -> str:
    """The file's text as Python reads it: UTF-8, with or without a byte-order mark (Windows editors write one), or
    the encoding a coding line declares (PEP 263); Refused for bytes that encoding cannot read."""
    if isinstance(text, str):
        return text.removeprefix("\ufeff")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(text).readline)
    except SyntaxError as exc:  # no coding line and bytes that are not UTF-8, or a coding line Python cannot use
        if b"coding" not in b"".join(text.splitlines(keepends=True)[:2]):
            encoding = "utf-8"
        else:
            raise Refused(f"{name}: {exc.msg}: save it as UTF-8") from None
    try:
        return text.decode(encoding).removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise Refused(f"{name} is not {encoding.upper()} text (byte {exc.start}): save it as a Python file") from None


def parse(text: bytes | str, name: str) -> ast.Module:
    """The file's tree; Refused, with the reason in a line, for anything that is not a Python file of sane size."""
    if len(text) > MAX_BYTES:
        raise Refused(f"{name} is {len(text):,} bytes; a puzzle file is a few kB (the limit is {MAX_BYTES:,})")
    source = decoded(text, name)
    odd = _OTHER_LINE_BREAKS.search(source)
    if odd:
        line = source.count("\n", 0, odd.start()) + 1
        raise Refused(f"{name}:{line}: the character {odd.group()!r} breaks a line for some readers of a file and "
                      "not for Python: remove it (a form feed, a vertical tab or a Unicode line separator)")
    try:
        tree = ast.parse(source, filename=name)
    except SyntaxError as exc:
        where = f"{name}:{exc.lineno}: " if exc.lineno else f"{name}: "
        quoted = exc.text.strip()[:120] if exc.text else ""  # a line may be a megabyte long
        raise Refused(f"{where}SyntaxError: {exc.msg}" + (f"\n  {quoted}" if quoted else "")) from None
    except (ValueError, RecursionError, MemoryError) as exc:  # a NUL byte; expressions nested thousands deep
        raise Refused(f"{name} cannot be parsed as Python: {type(exc).__name__}") from None
    if _depth(tree, MAX_DEPTH) > MAX_DEPTH:
        raise Refused(f"{name} nests expressions more than {MAX_DEPTH} deep (a chain a + b + c + ... of that many "
                      "terms nests as deep as it is long): split it over lines (s = a + b, then s += c, ...)")
    for count, node in enumerate(ast.walk(tree)):
        if count >= MAX_NODES:
            raise Refused(f"{name} holds more than {MAX_NODES:,} pieces of code (names, numbers, operators); a puzzle "
                          "file holds a few thousand")
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and \
                node.value.bit_length() > MAX_INTEGER_BITS:
            raise Refused(f"{name}:{node.lineno}: an integer literal of {node.value.bit_length():,} bits; a kernel's "
                          f"numbers fit in 64 (the limit is {MAX_INTEGER_BITS})")
    return tree


def _constant_value(node: ast.AST, aliases: dict) -> ast.AST | None:
    """The literal a module-level constant holds (`64`, `tl.constexpr(1e-6)`), else None."""
    if is_literal(node):
        return node
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords and is_literal(node.args[0]):
        if resolve_alias(dotted_name(node.func), aliases) == "triton.language.constexpr":
            return node.args[0]
    return None


def _triton_import(node: ast.AST) -> dict | None:
    """{bound name: dotted module or object} for an import of triton, triton.language or below; None for others."""
    bound = {}
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name != "triton" and not alias.name.startswith(MODULE_PREFIX):
                return None
            bound[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else "triton"
        return bound
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        if node.module == "triton":
            names = {a.name for a in node.names}
            if not names <= {"language", "jit"}:
                return None
        elif not node.module.startswith(MODULE_PREFIX):
            return None
        for alias in node.names:
            if alias.name == "*":
                return None
            bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        return bound
    return None


def _is_jit(decorator: ast.AST, aliases: dict) -> bool:
    """@triton.jit, or @triton.jit(...) with arguments (``_jit_options_problem`` says which it may take)."""
    called = decorator.func if isinstance(decorator, ast.Call) else decorator
    return resolve_alias(dotted_name(called), aliases) == "triton.jit"


# The arguments of @triton.jit(...) a kernel may take: they change how Triton specialises or inlines the kernel, or
# add its debug checks, never what it computes. Each takes a literal, or a list of parameter names.
JIT_OPTIONS = ("do_not_specialize", "do_not_specialize_on_alignment", "noinline", "debug")


def _jit_options_problem(decorator: ast.AST) -> str | None:
    """Why a @triton.jit(...) decorator's arguments are refused, or None."""
    if not isinstance(decorator, ast.Call):
        return None
    if decorator.args:
        return "@triton.jit takes keyword arguments only"
    for keyword in decorator.keywords:
        value = keyword.value
        literal = is_literal(value) or isinstance(value, ast.List) and all(is_literal(e) for e in value.elts)
        if keyword.arg not in JIT_OPTIONS or not literal:
            shown = f"{keyword.arg}=" if keyword.arg else "**"
            return (f"@triton.jit({shown}...): a kernel may take {', '.join(o + '=' for o in JIT_OPTIONS)} with "
                    "literal values (`do_not_specialize=[\"N0\"]`)")
    return None


def read_parts(tree: ast.Module, text: str) -> Parts:
    """Sort a module's top-level statements into the kernels' world and the rest (see ``Parts``)."""
    jit, constants, imports, functions, aliases = {}, {}, {}, {}, {}
    for node in tree.body:
        found = _triton_import(node)
        if found is not None:
            aliases.update(found)
            imports.update({name: node for name in found})
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            (jit if any(_is_jit(d, aliases) for d in node.decorator_list) else functions)[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name) and node.value is not None and \
                    _constant_value(node.value, aliases) is not None and _plain_annotation(node, aliases):
                constants[targets[0].id] = node
    return Parts(jit, constants, imports, functions, text.splitlines())


def _plain_annotation(node: ast.AST, aliases: dict) -> bool:
    """Whether a constant's annotation, if any, is tl.constexpr or a plain type: Python evaluates a module-level
    annotation when the module is imported, so `EPS: <any expression> = 1e-6` would run that expression."""
    annotation = getattr(node, "annotation", None)
    return annotation is None or resolve_alias(dotted_name(annotation), aliases) == "triton.language.constexpr" or \
        (isinstance(annotation, ast.Name) and annotation.id in {"int", "float", "bool", "str"})


def _aliases(parts: Parts) -> dict:
    aliases = {}
    for node in {id(n): n for n in parts.imports.values()}.values():
        aliases.update(_triton_import(node))
    return aliases


def _refuse_decorators(parts: Parts, name: str, aliases: dict, tree: ast.Module) -> None:
    """Refused for autotune and heuristics (the launcher passes the block sizes), and for any other decorator on a
    kernel."""
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            called = decorator.func if isinstance(decorator, ast.Call) else decorator
            what = resolve_alias(dotted_name(called), aliases) or dotted_name(called) or ast.unparse(called)
            if what.endswith(("autotune", "heuristics")):
                raise Refused(f"{name}:{decorator.lineno}: @{what.split('.')[-1]} on {node.name}: the puzzle's "
                              "launcher passes the block sizes, so a kernel takes them as tl.constexpr parameters. "
                              "Remove the decorator (`--own-launcher` grades your own launcher, for practice)")
            if node.name in parts.jit and not _is_jit(decorator, aliases):
                raise Refused(f"{name}:{decorator.lineno}: @{ast.unparse(decorator)[:60]} on the kernel "
                              f"{node.name}: a kernel takes @triton.jit alone")
            problem = _jit_options_problem(decorator) if node.name in parts.jit else None
            if problem:
                raise Refused(f"{name}:{decorator.lineno}: {problem}")


def _stripped(node: ast.FunctionDef) -> str:
    """A function's tree without its docstring, line numbers or formatting, for comparing two versions."""
    body = node.body[1:] if node.body and isinstance(node.body[0], ast.Expr) and \
        isinstance(node.body[0].value, ast.Constant) and isinstance(node.body[0].value.value, str) else node.body
    copy = ast.FunctionDef(node.name, node.args, body or [ast.Pass()], node.decorator_list, node.returns,
                           getattr(node, "type_comment", None), **({"type_params": []} if hasattr(node, "type_params")
                                                                     else {}))
    return ast.dump(copy, annotate_fields=False, include_attributes=False)


@dataclass(frozen=True)
class Given:
    """What a puzzle gives: its stub's text with the learner's kernels left out (the launcher and its helpers, given
    kernels, constants), the learner's kernels' names, and the stub's parts."""
    text: str
    kernels: tuple[str, ...]
    parts: Parts


def given(stub: str, solution: str) -> Given:
    """The puzzle's own code from its stub: the learner's kernels (the @triton.jit functions that hold a
    solution region in the solution) are blanked, their lines kept, so the rest keeps the stub's line numbers."""
    stub_parts = read_parts(ast.parse(stub), stub)
    solution_lines = solution.splitlines()
    solution_parts = read_parts(ast.parse(solution), solution)
    learner = tuple(name for name, node in solution_parts.jit.items()
                    if any("# >>> solution" in line for line in solution_lines[node.lineno - 1:node.end_lineno]))
    lines = stub.splitlines()
    for name in learner:
        node = stub_parts.jit[name]
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        for at in range(first - 1, node.end_lineno):
            lines[at] = ""
    return Given("\n".join(lines) + "\n", learner, stub_parts)


def read_kernels(text: bytes | str, name: str, puzzle_given: Given, launcher: str) -> Kernels:
    """Read a submission for kernel-only grading; Refused with the reason otherwise (module docstring)."""
    tree = parse(text, name)
    source = decoded(text, name)
    parts = read_parts(tree, source)
    aliases = _aliases(parts)
    _refuse_decorators(parts, name, aliases, tree)
    _refuse_kernels_unlike_the_puzzles(parts, puzzle_given, name)
    started = any(_stripped(parts.jit[k]) != _stripped(puzzle_given.parts.jit[k]) for k in puzzle_given.kernels)
    notes = _notes(tree, parts, puzzle_given.parts, name, launcher)
    if not started:  # nothing will run: no allowlist to hold it to
        return Kernels("", name, puzzle_given.kernels, tuple(notes), False)
    problems = sorted(set(_allowlist_problems(tree, parts, puzzle_given, aliases)))
    if problems:
        listed = "".join(f"\n  {name}:{line}: {what}" for line, what in problems[:8])
        more = f"\n  ... and {len(problems) - 8} more" if len(problems) > 8 else ""
        raise Refused(f"not graded: {name} holds code a kernel may not run:{listed}{more}\n  A kernel is Triton "
                      "code: tl.* calls on its parameters and locals, other @triton.jit functions and literal "
                      "constants")
    return Kernels(_kept_text(tree, parts, name), name, puzzle_given.kernels, tuple(notes), True,
                   tuple(sorted(parts.constants)))


def _refuse_kernels_unlike_the_puzzles(parts: Parts, puzzle_given: Given, name: str) -> None:
    """Refused unless the file defines each of the puzzle's kernels, under its name, with its parameters."""
    missing = [k for k in puzzle_given.kernels if k not in parts.jit]
    if missing:
        found = f" (it defines {', '.join(sorted(parts.jit))})" if parts.jit else \
            " (it defines no @triton.jit function)"
        raise Refused(f"{name} defines no @triton.jit function `{missing[0]}`, the kernel the puzzle's launcher "
                      f"launches{found}. Keep the puzzle's kernel names and parameters; write your code in their "
                      "bodies")
    for kernel in puzzle_given.kernels:
        _refuse_other_parameters(parts.jit[kernel], puzzle_given.parts.jit[kernel], name)


def _allowlist_problems(tree: ast.Module, parts: Parts, puzzle_given: Given, aliases: dict) -> list[tuple[int, str]]:
    """(line, what) for everything in the file's kept code that the allowlist refuses: inside each kernel
    (allowlist.kernel_problems), in how a kernel is laid out (_layout_problems), and in the names of its constants."""
    given_aliases = _aliases(puzzle_given.parts)
    names = set(parts.jit) | set(parts.constants) | set(puzzle_given.parts.constants) | \
        {n for n in puzzle_given.parts.jit if n not in puzzle_given.kernels}
    elsewhere = {function: "a plain Python function: a kernel calls @triton.jit functions only (put @triton.jit "
                           "above it)" for function in parts.functions}
    computed = _assigned(tree) - set(parts.constants)
    elsewhere.update({value: "a module-level value that is not a literal: a kernel reads literal constants only "
                             "(NAME = 64, or NAME: tl.constexpr = 64)" for value in computed})
    strings = frozenset(name for found in (puzzle_given.parts, parts) for name, node in found.constants.items()
                        if any(isinstance(n, ast.Constant) and isinstance(n.value, str) for n in ast.walk(node.value)))
    values = value_attributes()
    problems = []
    for fn in parts.jit.values():
        problems += kernel_problems(fn, names, {**given_aliases, **aliases}, values, elsewhere, strings)
        problems += _layout_problems(fn, parts.lines)
    for constant in parts.constants:
        if constant.startswith("__"):
            problems.append((parts.constants[constant].lineno, f"the constant {constant}: names starting with __ "
                                                                "are not allowed"))
    for shadow in sorted((set(parts.constants) | set(parts.jit)) & (set(aliases) | set(given_aliases))):
        node = parts.constants.get(shadow) or parts.jit[shadow]
        problems.append((node.lineno, f"{shadow}: a constant or a @triton.jit function may not take the name of an "
                                      "import"))
    return problems


def _layout_problems(fn: ast.FunctionDef, lines: list[str]) -> list[tuple[int, str]]:
    """(line, what) where a kernel's lines would make Triton read another kernel than the one checked."""
    problems = [(number, "a line inside a kernel that starts with `def ` (in a string too): Triton's interpreter "
                         "starts a kernel at its last such line, so it would run other code than the kernel checked")
                for number in range(fn.lineno + 1, fn.end_lineno + 1) if lines[number - 1].strip().startswith("def ")]
    # Triton's interpreter finds a kernel by the line that starts with "def " and its compiler by "def name(": a
    # kernel's first line must be both, or each reads something else (a tab after def made the interpreter run the
    # block's last line, a string's inside, as the kernel)
    if not re.match(rf"def {re.escape(fn.name)}\s*\(", lines[fn.lineno - 1].strip()):
        problems.append((fn.lineno, f"write the first line of {fn.name} as `def {fn.name}(...`: one space after def, "
                                    "and the name and its parenthesis on that line"))
    problems += [(d.lineno, f"the decorator of {fn.name} on more than one line: write `@triton.jit` on one")
                 for d in fn.decorator_list if d.end_lineno != d.lineno]
    return problems


def _kept_text(tree: ast.Module, parts: Parts, name: str) -> str:
    """The file with only its kernels, literal constants and triton imports kept, every other line blank (so the
    kept ones keep their numbers); Refused where a line holds a kept statement and another."""
    keep, kept = set(), [*parts.jit.values(), *parts.constants.values(),
                         *{id(n): n for n in parts.imports.values()}.values()]
    for node in kept:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        keep.update(range(first, node.end_lineno + 1))
    for node in tree.body:  # `EPS = 1e-6; import os`: the line is kept whole, so it may hold nothing else
        shared = sorted(set(range(node.lineno, node.end_lineno + 1)) & keep)
        if shared and all(node is not k for k in kept):
            raise Refused(f"{name}:{shared[0]}: this line holds a constant or a triton import and other code; "
                          "put each statement on a line of its own")
    lines = [line if number in keep else "" for number, line in enumerate(parts.lines, 1)]
    return "\n".join(lines) + "\n"


PERSISTENT = "NUM_PROGRAMS"  # a persistent kernel's last parameter (grader.worker.compose)


def _parameters(fn: ast.FunctionDef) -> list[str]:
    args = fn.args
    return [a.arg for a in args.posonlyargs + args.args] + ([f"*{args.vararg.arg}"] if args.vararg else []) + \
        [a.arg for a in args.kwonlyargs] + ([f"**{args.kwarg.arg}"] if args.kwarg else [])


def _refuse_other_parameters(theirs: ast.FunctionDef, ours: ast.FunctionDef, name: str) -> None:
    """Refused, naming the parameters that differ, unless a kernel takes the puzzle's kernel's parameters first, in
    their order: the puzzle's launcher passes those. After them, a parameter with a default (the launcher passes
    none, so it keeps it) and a persistent kernel's NUM_PROGRAMS, last."""
    wanted, found = _parameters(ours), _parameters(theirs)
    args = theirs.args
    defaults = {a.arg for a in (args.posonlyargs + args.args)[len(args.posonlyargs + args.args) - len(args.defaults):]}
    defaults |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
    if found[-1:] == [PERSISTENT] and PERSISTENT not in wanted:
        found = found[:-1]
    if found[:len(wanted)] == wanted and all(p in defaults for p in found[len(wanted):]):
        return
    extra = [p for p in found if p not in wanted and p not in defaults]
    lacking = [p for p in wanted if p not in found]
    said = [f"{', '.join(extra)} {'is' if len(extra) == 1 else 'are'} not the puzzle's"] if extra else []
    said += [f"it lacks {', '.join(lacking)}"] if lacking else []
    said += ["the order differs"] if not said else []
    raise Refused(f"{name}:{theirs.lineno}: the parameters of {theirs.name} differ from the puzzle's kernel's "
                  f"({'; '.join(said)}): the puzzle's launcher passes ({', '.join(wanted)}) and nothing else. Keep "
                  "the puzzle's parameters, in order; one of your own goes after them, with a default "
                  f"(`SCALE: tl.constexpr = 2`; a persistent kernel adds {PERSISTENT}: tl.constexpr last)")


def _notes(tree: ast.Module, parts: Parts, puzzle_parts: Parts, name: str, launcher: str) -> list[str]:
    """What the report says of a file's code that kernel-only grading leaves out: a launcher that differs from
    the puzzle's, and code outside the kernels."""
    notes = []
    theirs, ours = parts.functions.get(launcher), puzzle_parts.functions.get(launcher)
    if theirs is not None and ours is not None and _stripped(theirs) != _stripped(ours):
        notes.append(OWN_LAUNCHER_NOTE)
    ignored = _ignored_lines(tree, parts, puzzle_parts)
    if ignored:
        shown = ", ".join(str(n) for n in ignored[:6]) + (", ..." if len(ignored) > 6 else "")
        notes.append(f"not run: the code of {name} outside its kernels (line{'s' if len(ignored) > 1 else ''} "
                     f"{shown}); a submission is graded by its @triton.jit functions, literal constants and triton "
                     "imports alone")
    return notes


def _assigned(tree: ast.Module) -> set[str]:
    """Names a module's top-level statements assign."""
    found = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        found |= {n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)}
    return found


def _ignored_lines(tree: ast.Module, parts: Parts, puzzle_parts: Parts) -> list[int]:
    """The first lines of a file's top-level statements that kernel-only grading leaves out and that the puzzle's
    stub does not have: code a learner may expect to run (a module-level computation, a patch, a class). Imports,
    the docstring and the stub's own functions are not listed; a launcher that differs has a note of its own."""
    kept = {id(n) for n in [*parts.jit.values(), *parts.constants.values(), *parts.imports.values()]}
    found = []
    for node in tree.body:
        if id(node) in kept or isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue  # a docstring
        if isinstance(node, ast.FunctionDef) and node.name in puzzle_parts.functions:
            continue
        found.append(node.lineno)
    return found


NOT_STARTED = "not implemented yet: your kernels are the stub's"
OWN_LAUNCHER_NOTE = ("your launcher differs from the puzzle's: graded with the puzzle's launcher. `--own-launcher` "
                     "grades yours, for practice: its checks run in your process and a classroom should not trust "
                     "them")


# -- what a worker needs to run the kernels ---------------------------------------------------------------------

_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,80}\.py")


@functools.cache
def puzzle_given(number: int) -> Given:
    """The puzzle's own code (``given``), from its solution in solutions/ through its stub."""
    puzzle = index.find(number)
    solution = (ROOT / "solutions" / f"{puzzle.module}.py").read_text()
    return given(stubs.make_stub(solution, puzzle.number), solution)


def kernel_job(puzzle, text: bytes | str, name: str) -> tuple[dict, Kernels]:
    """Read a submission's kernels (Refused otherwise) and the job a worker builds its module from
    (``grader.worker.compose.build``)."""
    name = name if _SAFE_NAME.fullmatch(name) else f"{puzzle.module}.py"
    puzzle_code = puzzle_given(puzzle.number)
    kernels = read_kernels(text, name, puzzle_code, puzzle.launcher)
    parts = puzzle_code.parts
    shared = sorted(set(parts.constants) | set(parts.imports) |
                    {n for n in parts.jit if n not in puzzle_code.kernels})
    job = {"name": name, "text": kernels.text, "given": puzzle_code.text, "module": puzzle.module,
           "kernels": list(puzzle_code.kernels), "shared": shared,
           "constants": sorted(set(kernels.constants) | set(parts.constants))}
    return job, kernels
