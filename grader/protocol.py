"""What the judge and its child processes agree on, without torch (the judge starts a worker before it imports
torch: grader.judge.processes): the protocol's one error, the rule that ends a puzzle's grading, and that a child
dies with its parent. The wire format itself, which needs torch, is grader.transfer."""

from __future__ import annotations

import ctypes
import signal
import sys

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


class Malformed(ValueError):
    """Data from a worker that is not what the protocol promises; the message says what is wrong."""


def ends_puzzle(reason: str, index: int) -> bool:
    """Whether a case of this reason, at this index, ends its puzzle's grading: the first case not started (a
    stub), or a timeout. The rule both sides keep: the worker stops there, and the judge expects it to."""
    return reason == "timeout" or (reason == "not_started" and index == 0)


def die_with_parent() -> None:
    """In a child, before it runs (a preexec_fn): on Linux, have the kernel kill it when its parent dies
    (PR_SET_PDEATHSIG); elsewhere nothing."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
