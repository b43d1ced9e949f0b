"""README's "Where things live" table points at what is there: every path it names exists, every name it puts
beside a path is in that file (a function, a table, a field), and the table is one table, not split by a blank line.

    python -m pytest -q tests/test_readme.py
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TITLE = "Where things live:"
PATH = re.compile(r"^[\w.]+(/[\w.]*)+$|^[\w]+\.py$")  # grader/course/budgets.py, grader/course/chapters/
NAME = re.compile(r"^[A-Za-z_]\w*(\(\))?$")  # _ADVICE, hint(), lesson_blocks; not Puzzle(...), *_CASES, lesson=


def table(text: str) -> tuple[list[list[str]], str]:
    """The rows under TITLE, as lists of cells, and the first line that is not a row after them."""
    lines = text.split(TITLE, 1)[1].lstrip("\n").splitlines()
    assert lines[:2] == ["| what | where |", "|---|---|"], lines[:2]
    rows = []
    for index, line in enumerate(lines[2:], 2):
        if not line.startswith("|"):
            return rows, next((rest for rest in lines[index:] if rest.strip()), "")
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows, ""


def named(cell: str) -> tuple[list[str], list[str]]:
    """(paths, names) among a cell's backquoted spans; a template path (solutions/pNN_slug.py) stands for a glob."""
    spans = re.findall(r"`([^`]+)`", cell)
    return [s for s in spans if PATH.match(s.replace("pNN_slug", "p01_add"))], [s for s in spans if NAME.match(s)]


def where(path: str) -> list[Path]:
    found = sorted(ROOT.glob(path.replace("pNN_slug", "p[0-9][0-9]_*")))
    return [p for p in found if p.is_file()] or found


README_ROWS, AFTER = table((ROOT / "README.md").read_text())


def test_the_table_is_one_table():
    assert len(README_ROWS) >= 10 and all(len(row) == 2 for row in README_ROWS), README_ROWS
    assert not AFTER.startswith("|"), f"a blank line splits the table before: {AFTER}"


@pytest.mark.parametrize("row", README_ROWS, ids=lambda row: row[0][:40])
def test_every_path_exists_and_holds_the_names_beside_it(row):
    paths, names = named(row[1])
    for path in paths:
        assert where(path), f"README's table names {path}, which is not there"
    files = [file for path in paths for found in where(path)
             for file in ([found] if found.is_file() else sorted(found.rglob("*.py")))]
    for name in names:
        bare = name.removesuffix("()")
        assert files, f"README's table names {name} without a file to find it in"
        assert any(re.search(rf"\b{re.escape(bare)}\b", file.read_text()) for file in files), \
            f"README's table says {name} is in {', '.join(paths)}; it is not"


@pytest.mark.parametrize("cell, paths, names", [
    ("`INTERPRETER_ADVICE` in `grader/worker/compiler_advice.py`", ["grader/worker/compiler_advice.py"],
     ["INTERPRETER_ADVICE"]),
    ("`hint()` in `grader/judge/checker.py`", ["grader/judge/checker.py"], ["hint()"]),
    ("the puzzle's `*_CASES` in `grader/course/chapters/`", ["grader/course/chapters/"], []),
    ("the `Tolerance(...)` of its `Puzzle(...)` entry, `lesson=`", [], []),
    ("the \"Hints\" of `solutions/pNN_slug.py`'s docstring", ["solutions/pNN_slug.py"], []),
])
def test_the_reader_sees_paths_and_names(cell, paths, names):
    assert named(cell) == (paths, names)


def test_a_stale_row_would_fail():
    """What the issue found: a name sent to the wrong file, a file that moved, a table split in two."""
    stale = "Where things live:\n\n| what | where |\n|---|---|\n| a | `_ADVICE` in `grader/worker/compose.py` |\n"
    (row,), _ = table(stale)
    with pytest.raises(AssertionError, match="_ADVICE"):
        test_every_path_exists_and_holds_the_names_beside_it(row)
    with pytest.raises(AssertionError, match="not there"):
        test_every_path_exists_and_holds_the_names_beside_it(["b", "`grader/bench_settings.py`"])
    rows, after = table(stale + "\n| c | `grader/paths.py` |\n")
    assert len(rows) == 1 and after.startswith("|")
