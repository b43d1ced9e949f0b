"""What the judge and its child processes agree on, without torch (the judge starts a worker before it imports
torch: grader.judge.processes): the protocol's one error, the rule that ends a puzzle's grading, that a child
dies with its parent, and how a process's line of /proc is read (the judge's process table, the worker's compile
helper). The wire format itself, which needs torch, is grader.transfer."""

from __future__ import annotations

import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1  # linux/prctl.h
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


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


def process_stat(pid: int | str) -> tuple[int, str, float, float] | None:
    """(parent pid, state letter, CPU seconds it used, CPU seconds its waited-for children used) from
    /proc/PID/stat; None where the process is gone or there is no /proc."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()  # after the name, which may hold spaces and parentheses
        own, children = (int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14]))  # utime stime; cu cs
        return int(fields[1]), fields[0], own / _CLOCK_TICKS, children / _CLOCK_TICKS
    except (OSError, IndexError, ValueError):
        return None
