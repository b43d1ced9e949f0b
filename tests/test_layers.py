"""The grader's imports go one way: every `import` in `grader/` (at the top of a module or inside a function), read
with `ast`, fits the layers README and STYLE.md describe, and no chain of imports comes back to where it started.

The layers, lowest first (a module may import its own layer or one below, never one above):

0. the shared leaves: `env`, `paths`, `safe_output`, `coach`, `protocol`, `transfer`, `map_transfer` (the wire formats);
1. `course/`: what a puzzle is;
2. `judge/` (the trusted parent) and `worker/` (the untrusted child), side by side: neither imports the other;
3. `bench/`;
4. `show/`: what people see;
5. the package's face: `grader` itself, `__main__`, `inprocess` (both halves in one process), `capstone_runner`.

Besides the ranks: `course/` imports neither the judge, the worker, `show/` nor `bench/`; the judge never imports
the worker; the worker never imports the judge nor `show/`.

    python -m pytest -q tests/test_layers.py
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GRADER = ROOT / "grader"

LEAVES = {"grader.env", "grader.paths", "grader.safe_output", "grader.coach", "grader.transfer",
          "grader.map_transfer", "grader.protocol"}
FACE = {"grader", "grader.__main__", "grader.inprocess", "grader.capstone_runner"}
PART_RANKS = {"course": 1, "judge": 2, "worker": 2, "bench": 3, "show": 4}

# Never, whatever the ranks say: (importing part, imported part).
FORBIDDEN = {("course", "judge"), ("course", "worker"), ("course", "show"), ("course", "bench"),
             ("judge", "worker"), ("worker", "judge"), ("worker", "show")}

# Edges that break a rule today, each in a file another change of issue 28 is rewriting; the lead removes each
# entry with the import it names. A new edge that breaks a rule fails, and so does an entry that no longer exists.
KNOWN: set[tuple[str, str]] = set()  # edges that break a rule, each to be removed (none left)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(path): path for path in sorted(GRADER.rglob("*.py"))}


def _resolved(name: str) -> str:
    """The module an import names: `grader.course.registry` for `from grader.course import registry`, and
    `grader.course.cases` for `from grader.course.cases import Case` (a name in it, not a module)."""
    if name in MODULES:
        return name
    parent = name.rpartition(".")[0]
    return parent if parent in MODULES else name


def imports_of(module: str) -> set[str]:
    """Every grader module `module` imports, anywhere in its text (a function's body, an `if`, a `try`)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            names = [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(name for name in map(_resolved, names) if name in MODULES and name != module)
    return found


GRAPH = {module: imports_of(module) for module in MODULES}


def part(module: str) -> str:
    """'course', 'judge', 'worker', 'bench' or 'show'; 'leaf' or 'face' for the modules at the top of grader/."""
    pieces = module.split(".")
    if len(pieces) > 2 or (len(pieces) == 2 and pieces[1] in PART_RANKS):
        return pieces[1]
    if module in LEAVES:
        return "leaf"
    if module in FACE:
        return "face"
    raise AssertionError(f"{module} is in no layer: add it to LEAVES, FACE or a part in tests/test_layers.py")


def rank(module: str) -> int:
    return {"leaf": 0, "face": 5, **PART_RANKS}[part(module)]


def broken_rules() -> dict[tuple[str, str], str]:
    broken = {}
    for module, imported in GRAPH.items():
        for target in imported:
            if (part(module), part(target)) in FORBIDDEN:
                broken[module, target] = f"{part(module)}/ must not import {part(target)}/"
            elif rank(target) > rank(module):
                broken[module, target] = f"layer {rank(module)} imports layer {rank(target)}, above it"
    return broken


def test_every_module_has_a_layer():
    for module in MODULES:
        part(module)


def test_imports_follow_the_layers():
    broken = broken_rules()
    new = {edge: why for edge, why in broken.items() if edge not in KNOWN}
    assert not new, "imports against the layers:\n" + "\n".join(f"  {a} imports {b}: {why}"
                                                                  for (a, b), why in sorted(new.items()))


def test_known_exceptions_still_exist():
    """An exception that was fixed leaves the table, so that the import cannot come back unnoticed."""
    gone = KNOWN - set(broken_rules())
    assert not gone, f"these imports are gone (or allowed now): remove them from KNOWN: {sorted(gone)}"


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One chain of imports that ends where it began, or None."""
    state: dict[str, str] = {}
    trail: list[str] = []

    def visit(module):
        state[module] = "open"
        trail.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                return [*trail[trail.index(target):], target]
            found = visit(target) if target not in state else None
            if found:
                return found
        trail.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        found = visit(module) if module not in state else None
        if found:
            return found
    return None


def test_no_import_cycle():
    cycle = find_cycle(GRAPH)
    assert cycle is None, f"an import cycle: {' -> '.join(cycle)}"


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


@pytest.mark.parametrize("source, expected", [
    ("import grader.course.registry\n", {"grader.course.registry"}),
    ("from grader.course import registry, cases\n", {"grader.course.registry", "grader.course.cases"}),
    ("from grader.course.cases import Case\n", {"grader.course.cases"}),
    ("def late():\n    from grader.worker import loader\n", {"grader.worker.loader"}),
    ("from . import compose\n", {"grader.worker.compose"}),
    ("from ..judge import verdict\n", {"grader.judge.verdict"}),
    ("import os\nfrom torch import nn\n", set()),
])
def test_imports_are_read_everywhere(tmp_path, monkeypatch, source, expected):
    """The reader finds imports in every form the rules depend on (a rule it cannot see cannot fail)."""
    fake = tmp_path / "execute.py"  # read as grader/worker/execute.py, for the relative imports
    fake.write_text(source)
    monkeypatch.setitem(MODULES, "grader.worker.execute", fake)
    assert imports_of("grader.worker.execute") == expected


def test_a_new_backward_import_fails(monkeypatch):
    """The rule test would catch the edges the issue names, were they new."""
    for edge in [("grader.judge.runner", "grader.worker.execute"), ("grader.course.specs", "grader.show.report"),
                 ("grader.transfer", "grader.course.cases"), ("grader.bench.settings", "grader.show.cli")]:
        monkeypatch.setitem(GRAPH, edge[0], GRAPH[edge[0]] | {edge[1]})
        assert edge in broken_rules()


# -- rooms small enough to change (issue 28): no module over 600 lines, no function over 60, unless a comment in
# the module's first lines (a module) or just above the def (a function) says why, starting "Over the".

MODULE_LINES, FUNCTION_LINES = 600, 60


def _says_why(lines: list[str], start: int, end: int) -> bool:
    return any(line.lstrip().startswith("# Over the") for line in lines[start:end])


def rooms_too_big(modules: dict) -> list[str]:
    found = []
    for module, path in sorted(modules.items()):
        text = path.read_text()
        lines = text.splitlines()
        if len(lines) > MODULE_LINES and not _says_why(lines, 0, 40):
            found.append(f"{module}: {len(lines)} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                if length > FUNCTION_LINES and not _says_why(lines, max(0, first - 4), first - 1):
                    found.append(f"{module}.{node.name}: {length} lines")
    return found


def test_no_room_too_big_to_change():
    too_big = rooms_too_big(MODULES)
    assert not too_big, "over the size rule, with no comment saying why:\n  " + "\n  ".join(too_big)


def test_the_size_rule_sees_a_long_function(tmp_path):
    long = tmp_path / "long.py"
    long.write_text("def long():\n" + "    x = 1\n" * 61)
    explained = tmp_path / "explained.py"
    explained.write_text("# Over the 60 lines: one table, read top to bottom\ndef long():\n" + "    x = 1\n" * 61)
    assert rooms_too_big({"long": long, "explained": explained}) == ["long.long: 62 lines"]
