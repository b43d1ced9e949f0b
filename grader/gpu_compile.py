"""The GPU compile check: every kernel a learner launches in the interpreter is also compiled for a GPU.

(Placeholder interface; filled in by the compile-check work of issue 8.)
"""

from __future__ import annotations


def check(puzzle, launches) -> str | None:
    """None when every launched kernel compiles for the puzzle's GPU targets; else the report."""
    return None
