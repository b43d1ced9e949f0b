"""The puzzle index: every puzzle, in order, from the chapter modules, found by number or slug.

Each puzzle is defined in one place, its chapter's module in ``grader/course/chapters/`` (cases, tolerance, budgets,
hints and its ``Puzzle`` entry); its spec is in ``specs.py`` and its benchmark settings in ``grader/bench/settings.py``.
README.md's "Adding a puzzle" says what else a puzzle needs.
"""

from __future__ import annotations

from grader.course import index
from grader.course.chapters import backward, softmax, sparse_graphs, tensor_cores, warmup
from grader.course.puzzle import Puzzle

__all__ = ["BY_NUMBER", "BY_SLUG", "PUZZLES", "Puzzle", "find"]

PUZZLES: tuple[Puzzle, ...] = (*warmup.PUZZLES, *softmax.PUZZLES, *sparse_graphs.PUZZLES, *tensor_cores.PUZZLES,
                               *backward.PUZZLES)

BY_NUMBER = {p.number: p for p in PUZZLES}
BY_SLUG = {p.slug: p for p in PUZZLES}


def find(key: str | int | Puzzle) -> Puzzle:
    """A puzzle by number ('4', 4) or slug ('softmax_three_loop'); KeyError with the choices if absent."""
    if isinstance(key, Puzzle):
        return key
    text = str(key).strip()
    if text.isdigit() and int(text) in BY_NUMBER:
        return BY_NUMBER[int(text)]
    if text in BY_SLUG:
        return BY_SLUG[text]
    raise KeyError(index.unknown(text))


if __name__ == "__main__":  # the puzzles' numbers, for scripts/grade_submission.sh
    print(*(p.number for p in PUZZLES))
