"""Where things are: the repository, the learner's and the reference files, and a path as a report shows it."""

from __future__ import annotations

import os
import re
from pathlib import Path

from grader.safe_output import one_line

# The repository: the folder that holds grader/ beside the learner's files. An editable install (pip install -e .)
# keeps the grader there; a plain `pip install .` copies grader/ alone into site-packages (see course_missing).
ROOT = Path(__file__).resolve().parent.parent
IMPLS = ("puzzles", "solutions")


def course_missing() -> str | None:
    """Why the course's files (puzzles/, solutions/) are not beside the grader, or None when they are. A plain
    `pip install .` installs the grader alone, and every command needs them: the progress table and a grading read
    puzzles/, and a grading (a --file one too) takes each puzzle's given code from its solution."""
    if all((ROOT / folder).is_dir() for folder in IMPLS):
        return None
    return (f"the course's files (puzzles/, solutions/) are not beside the grader in {one_line(str(ROOT))}: it was "
            "installed without its repository. Install it from a clone of the repository with "
            "`pip install -e .` (editable), and run the command there.")


def source_path(puzzle, impl: str = "puzzles", file: str | None = None) -> Path:
    """The file that holds a puzzle's kernels: puzzles/ (the learner's), solutions/, or a given file."""
    if file is not None:
        return Path(file).resolve()
    return ROOT / impl / f"{puzzle.module}.py"


def shown(path: Path) -> str:
    """A path as the learner would type it: relative to the repository or the working directory when inside
    one, else its name alone (a classroom's scratch folders stay out of a student's report); a control character
    in it (a newline, an escape) as a '?', so it cannot break or forge a report's line."""
    path = Path(path)
    for base in (ROOT, Path.cwd()):
        try:
            return one_line(str(path.resolve().relative_to(base.resolve())))
        except (ValueError, OSError):
            continue
    return one_line(path.name)


def location(filename: str, lineno: int) -> str:
    """'p04_softmax.py:42', or 'your notebook cell, line 42' for code typed into Jupyter."""
    if re.search(r"ipykernel_\d+", filename):
        return f"your notebook cell, line {lineno}"
    return f"{os.path.basename(filename)}:{lineno}"
