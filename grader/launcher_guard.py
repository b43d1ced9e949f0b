"""The launcher is not a loophole: it may allocate, reshape and launch kernels, not compute the answer.

(Placeholder interface; filled in by the launcher work of issue 8.)
"""

from __future__ import annotations

import contextlib


class Refused(Exception):
    """The launcher did work that belongs in the kernel; the message says which."""


@contextlib.contextmanager
def guard(puzzle, device: str):
    """Refuse PyTorch compute on input data while the launcher runs (raise Refused)."""
    yield


def check_launches(puzzle, case, launches) -> str | None:
    """None when the launches keep to the case (block sizes); else the report."""
    return None
