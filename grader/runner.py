"""Grade in a child process (``grader.worker``) that may hang or die without taking the grader along.

The worker streams an event per case. If it goes quiet for longer than the case's time limit
plus a grace period, we kill it and record a timeout; if it dies, we record a crash and start a
fresh worker at the next case. Either way the grader itself keeps going.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time

from . import registry
from .grading import CaseResult, PuzzleResult, assemble, result_for
from .loader import ROOT, shown, source_path

GRACE = 20.0  # seconds beyond the in-process alarm: room for imports, compilation and unwinding


def _describe_exit(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


class _Worker:
    def __init__(self, job: dict):
        read_fd, write_fd = os.pipe()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "grader.worker", str(write_fd)], stdin=subprocess.PIPE,
            pass_fds=(write_fd,), cwd=ROOT, start_new_session=True, text=True)
        os.close(write_fd)
        self.proc.stdin.write(json.dumps(job))
        self.proc.stdin.close()
        self.events = os.fdopen(read_fd, "r")
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.events, selectors.EVENT_READ)

    def next_event(self, deadline: float | None) -> dict | None | str:
        """The next event; None at end of stream; "timeout" when the deadline passes first."""
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not self.selector.select(wait):
                return "timeout"
            line = self.events.readline()
            if not line:
                return None
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue  # a partial line from a dying worker

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.close()

    def close(self) -> int | None:
        self.selector.close()
        self.events.close()
        return self.proc.wait()


def grade_isolated(puzzles: list[registry.Puzzle], impl: str, file: str | None, seed: int, interpret: bool,
                   timeout: float, mode: str, grace: float = GRACE) -> list[PuzzleResult]:
    results: dict[int, list[CaseResult]] = {p.number: [] for p in puzzles}
    notices: dict[int, list[str]] = {p.number: [] for p in puzzles}
    pending = [p.number for p in puzzles]
    while pending:
        start = len(results[pending[0]])
        job = {"puzzles": [{"puzzle": n, "start": start if i == 0 else 0} for i, n in enumerate(pending)],
               "impl": impl, "file": file, "seed": seed, "interpret": interpret, "timeout": timeout}
        worker = _Worker(job)
        current = None  # (puzzle, case index) in flight
        while True:
            deadline = time.monotonic() + timeout + grace if current else None
            event = worker.next_event(deadline)
            if event == "timeout":
                worker.kill()
                number, index = current
                case = registry.find(number).cases[index]
                results[number].append(result_for(case, "timeout", f"stopped after {timeout + grace:g} s "
                                                                   "without an answer: does a loop never end?"))
                pending.remove(number)
                break
            if event is None:
                code = worker.close()
                if current is not None:
                    number, index = current
                    case = registry.find(number).cases[index]
                    results[number].append(result_for(
                        case, "crashed", f"the grading process {_describe_exit(code)} during this case; "
                                         "the grader survived. An out-of-bounds access on the GPU, or a crash "
                                         "inside triton, can do this: try `--interpret` for a precise report."))
                    if index + 1 >= len(registry.find(number).cases):
                        pending.remove(number)
                elif pending:  # died between cases, or before the first: report it once
                    number = pending.pop(0)
                    results[number].append(CaseResult("startup", False, "error",
                                                      f"the grading process {_describe_exit(code)} before "
                                                      "grading this puzzle"))
                break
            kind = event["event"]
            if kind == "start":
                current = (event["puzzle"], event["case"])
            elif kind == "result":
                results[event["puzzle"]].append(CaseResult.from_json(event["result"]))
                current = None
            elif kind == "load_error":
                results[event["puzzle"]] = [CaseResult("import", False, "error", event["message"])]
                pending.remove(event["puzzle"])
            elif kind == "done":
                notices[event["puzzle"]] = event["notices"]
                pending.remove(event["puzzle"])
    return [assemble(p, results[p.number], seed, mode, shown(source_path(p, impl, file)), notices[p.number])
            for p in puzzles]
