"""Answer at once: the progress table (`python -m grader`), and `python -m grader N` on a puzzle file whose kernels
are still the stub's.

A learner grades dozens of times, and the first answers are "not started". This path needs neither torch (about
two seconds to import) nor a worker: it finds the puzzle in the source index (``grader.course.index``), reads the
file as the judge does (``grader.judge.submission``, with ``ast``), and, when every kernel is still the stub's,
prints the report the full path would print. Anything else (options, several puzzles, a started kernel, a file
that cannot be read) goes the full way, ``grader.show.cli``.
"""

from __future__ import annotations

import sys

from grader.course import index
from grader.judge import submission
from grader.paths import ROOT, course_missing, shown
from grader.show import progress, report


def answer(argv: list[str]) -> int | None:
    """The exit status after printing the progress table (no arguments) or a stub's report; None when the full
    grader must answer."""
    if course_missing():  # installed without the repository: the full grader says so
        return None
    if not argv:
        print(report.format_table(progress.rows("puzzles"), "puzzles"))
        return 0
    if len(argv) != 1 or argv[0].startswith("-"):
        return None
    try:
        puzzle = index.find(argv[0])
        path = ROOT / "puzzles" / f"{puzzle.module}.py"
        kernels = submission.read_kernels(path.read_bytes(), path.name, submission.puzzle_given(puzzle.number),
                                          puzzle.slug)
    except (KeyError, OSError, ValueError, submission.Refused):
        return None
    if kernels.started:
        return None
    lines = report.header_lines(puzzle.number, puzzle.title, shown(path), list(kernels.notes))
    lines += report.not_started_lines(submission.NOT_STARTED, shown(path), f"python -m grader {puzzle.number}")
    print("\n".join(lines) + "\n")
    sys.stdout.flush()
    return 1
