"""The puzzles' numbers, slugs and titles, read from the chapter modules' source without importing them.

Importing a chapter module imports torch (its cases, specs and hints use it), which costs about two seconds on a
laptop. What answers before any grading (a stub's "not started", the progress table) needs only each puzzle's
number, slug and title, so it reads them here from the ``Puzzle(number, "slug", "title", ...)`` calls in
``grader/course/chapters/``. tests/test_quick.py holds this index equal to ``grader.course.registry``.
"""

from __future__ import annotations

import ast
import difflib
import functools
from dataclasses import dataclass
from pathlib import Path

CHAPTERS = Path(__file__).resolve().parent / "chapters"


@dataclass(frozen=True)
class Entry:
    number: int
    slug: str
    title: str

    @property
    def module(self) -> str:
        return f"p{self.number:02d}_{self.slug}"


@functools.lru_cache(maxsize=1)
def entries() -> tuple[Entry, ...]:
    """Every puzzle's entry, in order of number."""
    found = []
    for path in sorted(CHAPTERS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Puzzle" and \
                    len(node.args) >= 3 and all(isinstance(a, ast.Constant) for a in node.args[:3]):
                found.append(Entry(*(a.value for a in node.args[:3])))
    return tuple(sorted(found, key=lambda entry: entry.number))


def find(key: str | int) -> Entry:
    """An entry by number ('4', 4) or slug; KeyError with a guess and the choices (``unknown``)."""
    text = str(key).strip()
    for entry in entries():
        if (text.isdigit() and int(text) == entry.number) or text == entry.slug:
            return entry
    raise KeyError(unknown(text))


def unknown(text: str) -> str:
    """What `find` (and ``registry.find``) says of a key that names no puzzle: the slugs it most likely meant, and
    every choice."""
    guesses = suggestions(text)
    guess = f" Did you mean {' or '.join(guesses)}?" if guesses else ""
    choices = ", ".join(f"{e.number} ({e.slug})" for e in entries())
    return f"no puzzle {text!r}.{guess} Choose one of: {choices}"


def suggestions(text: str) -> list[str]:
    """The slugs a mistyped name most likely meant: those it begins ('flash', 'softmax'), else the closest
    spelling ('sofmax' -> softmax_online), else none."""
    typed, slugs = text.lower(), [e.slug for e in entries()]
    return [s for s in slugs if typed and s.startswith(typed)] or difflib.get_close_matches(typed, slugs, n=1)
