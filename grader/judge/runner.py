"""Run the learner's code in a child process (``grader.worker``) and judge what it sends back, here.

The worker imports the submission, runs the launcher on each case and streams one JSON event per
step (protocol below). It sends data and failures, never a pass: the outputs as bytes, what the
access record showed (``grader.transfer``). This process rebuilds the inputs from the seed, computes
the reference and judges (``verdict.judge``), so the expected values never exist where the submission
runs, and a forged "passed" cannot be expressed. Every event is checked; anything unexpected is a
crashed case.

Protocol (worker -> parent, one JSON object per line, on the file descriptor named in argv):
  {"event": "ready"}                                  the worker started; nothing of a submission has run yet
  {"event": "load", "puzzle": N}                     about to load the kernels (or import the file) for puzzle N
  {"event": "load_error", "puzzle": N, "message": S}  the import failed; no case events follow
  {"event": "start", "puzzle": N, "case": I}          case I begins (I counts up from the job's start)
  {"event": "execution", "puzzle": N, "case": I, "execution": {...}}   transfer.execution_to_json
  {"event": "done", "puzzle": N, "notices": [S, ...]} every case ran, or the last one ended the puzzle
  {"event": "map", "puzzle": N, "maps": {...}}        with "map" in the job: that case's access maps instead
Puzzles come in the job's order. The job (parent -> worker, JSON on stdin) names the puzzles with the
case to start from and, for kernel-only grading, the kernels and the puzzle's code (``submission.kernel_job``);
the implementation or file (the practice path, --own-launcher), the seed, the mode and the time limit.
A worker that ends or hangs before "ready" is the grader's own trouble, not the submission's: ``Broken`` is
raised, and the CLI exits without a score.

Nothing here trusts the worker to end: a deadline of the time limit plus a grace period covers every
step, the import included; the worker's exit is noticed even while a forked child holds the pipe; and
when a worker ends, every process it left behind is killed (this process is their subreaper on Linux,
so even a daemon that called setsid is found). A worker that crashes, hangs or misbehaves costs one
case, and a fresh worker carries on with the next.
"""

from __future__ import annotations

import ctypes
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader import env, transfer
from grader.course import registry
from grader.judge import submission
from grader.judge.submission import vet_submission
from grader.judge.verdict import CaseResult, PuzzleResult, assemble, ends_puzzle, judge, result_for
from grader.paths import ROOT, shown, source_path
from grader.safe_output import clean_text, one_line

GRACE = 20.0  # CPU seconds beyond the in-process limit: room for imports, compilation and unwinding
WALL_FACTOR = 5  # the wall-clock backstop: this many times the CPU limit (a loaded machine is slow, not stuck)
POLL = 0.2  # seconds between checks that the worker is still alive (a forked child may hold the pipe open)
MAX_EVENT_BYTES = 1 << 30  # one event line; far above any case's outputs
PRINTED_BYTES = 20_000  # of what the learner's code printed, shown after the worker ends
PRINTED_LINES = 40
MAX_NOTICES, NOTICE_CHARS = 8, 400  # notes a worker may send per puzzle, and their length
_PR_SET_PDEATHSIG = 1  # linux/prctl.h
_PR_SET_CHILD_SUBREAPER = 36
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _describe_exit(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


class Interrupted(Exception):
    """Grading was stopped by a signal (SIGINT, SIGTERM) after every worker was ended: `results` holds the puzzles
    graded to their end before it, `signal` its name."""

    def __init__(self, results: list, signal_name: str):
        super().__init__(signal_name)
        self.results, self.signal = results, signal_name


class Broken(Exception):
    """The grader itself could not grade: its worker could not start (the Python not runnable by the graded user,
    a missing package, a crash before any submission ran). No score may be written; the message says why."""


# -- processes left behind --------------------------------------------------------------------------

def become_subreaper() -> None:
    """Adopt the orphans of our descendants (Linux), so a double-forked daemon stays findable; else nothing."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        except (OSError, AttributeError):
            pass


def _process_table(cpu: bool = False) -> dict[int, tuple]:
    """pid -> (parent pid, state letter) for every process in /proc, and with `cpu` the CPU seconds it and its
    waited-for children used; empty where there is no /proc."""
    table = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for entry in entries:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
                seconds = sum(int(f) for f in fields[11:15]) / _CLOCK_TICKS if cpu else None  # u, s, cu, cs time
            except (OSError, IndexError, ValueError):
                continue  # it ended while we looked
            table[int(entry)] = (int(fields[1]), fields[0], seconds) if cpu else (int(fields[1]), fields[0])
    return table


def descendants() -> set[int]:
    """Every living process whose chain of parents leads to this one."""
    table = _process_table()
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found, frontier = set(), [os.getpid()]
    while frontier:
        for child in children.get(frontier.pop(), []):
            if child not in found:
                found.add(child)
                frontier.append(child)
    return {pid for pid in found if table[pid][1] != "Z" or table[pid][0] == os.getpid()}


def kill_descendants(spare: set[int]) -> None:
    """SIGKILL every descendant but `spare` (processes that were ours before grading), and reap those that
    become our children, until none is left: a process that forks while we kill is found on the next round."""
    for _ in range(100):
        found = descendants() - spare
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for pid in found:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass  # not our child (yet): its parent dies too, and it comes to us as an orphan
        time.sleep(0.01)


# -- the grader's own files ---------------------------------------------------------------------------------

def snapshot_grader() -> dict[str, bytes]:
    """Every file of the grader package (relative path -> bytes), compiled caches included, and the files at the
    top of the repository, which is on the worker's PYTHONPATH (a sitecustomize.py there would run in every
    later grading)."""
    files = {}
    for path in [*(ROOT / "grader").rglob("*"), *ROOT.glob("*")]:
        if path.is_file():
            try:
                files[str(path.relative_to(ROOT))] = path.read_bytes()
            except OSError:
                continue
    return files


def restore_grader(before: dict[str, bytes]) -> list[str]:
    """Put the grader's files back as `before` had them; the source files a submission changed, added or removed.

    A compiled cache (__pycache__) that is new or changed is deleted rather than judged: Python writes those
    itself, and rebuilds them from the source; a forged one could otherwise stand in for the source next time."""
    changed = []
    now = snapshot_grader()
    for name in sorted(set(before) | set(now)):
        if before.get(name) == now.get(name):
            continue
        path = ROOT / name
        cache = "__pycache__" in path.parts
        try:
            if name in before and not cache:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(before[name])
            else:
                path.unlink(missing_ok=True)
        except OSError:
            pass
        if not cache:
            changed.append(name)
    return changed


# -- one worker -------------------------------------------------------------------------------------------

class _Worker:
    """A worker process, its event pipe (read without blocking, so a partial line cannot stall us) and its
    temporary working directory.

    It starts with ``python -P``, the repository appended to the end of sys.path, so that nothing planted at the
    repository's root (a triton/ folder) can stand in for an installed package; with ``GRADER_WORKER_PREFIX`` (a
    JSON list, set by scripts/grade_submission.sh) its command runs under that prefix, which makes it another
    user in namespaces of its own; ``GRADER_WORKER_OWNER`` ("uid:gid") then owns its working directory. On
    Linux it dies with its parent (PR_SET_PDEATHSIG), so a grader killed outright leaves no worker behind."""

    def __init__(self, job: dict, spare: set[int]):
        self.spare = spare
        self.started = time.monotonic()
        self.workdir = tempfile.mkdtemp(prefix="grader-worker-")
        read_fd, write_fd = os.pipe()
        environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        environment["GRADER_RESULTS"] = os.path.join(self.workdir, "results.json")  # never the learner's cache
        environment["PYTHONDONTWRITEBYTECODE"] = "1"  # the grader's __pycache__ is the parent's alone
        # What the learner's code prints is kept, and shown cleaned when the worker ends (raw, it could carry
        # terminal escapes that hide or fake the report).
        self.printed = open(os.path.join(self.workdir, ".printed"), "w+b")  # closed in close()
        owner = os.environ.get("GRADER_WORKER_OWNER")
        if owner:
            uid, gid = (int(n) for n in owner.split(":"))
            os.chown(self.workdir, uid, gid)
        bootstrap = f"import sys; sys.path.append({str(ROOT)!r}); import runpy; runpy.run_module('grader.worker', " \
                    "run_name='__main__')"
        command = [*json.loads(os.environ.get("GRADER_WORKER_PREFIX", "[]")), sys.executable, "-P", "-c", bootstrap,
                   str(write_fd)]
        try:
            self.proc = subprocess.Popen(
                command, stdin=subprocess.PIPE, pass_fds=(write_fd,), cwd=self.workdir, env=environment,
                start_new_session=True, text=True, stderr=self.printed, preexec_fn=die_with_parent)
        except OSError as exc:  # the worker's command cannot be run at all
            os.close(read_fd)
            self.printed.close()
            shutil.rmtree(self.workdir, ignore_errors=True)
            raise Broken(f"the grading process could not be started: {exc.strerror}: {command[0]}") from None
        finally:
            os.close(write_fd)
        try:
            self.proc.stdin.write(json.dumps(job))
            self.proc.stdin.close()
        except BrokenPipeError:
            pass  # it died at once; the end of its stream says so
        os.set_blocking(read_fd, False)
        self.fd = read_fd
        self.lines = LineBuffer()
        self.eof = False
        self.closed = False
        self.selector = selectors.DefaultSelector()
        self.selector.register(read_fd, selectors.EVENT_READ)

    def _read(self) -> None:
        try:
            chunk = os.read(self.fd, 1 << 20)
        except BlockingIOError:
            return
        if chunk:
            self.lines.feed(chunk)
        else:
            self.eof = True

    def cpu_seconds(self) -> float | None:
        """CPU seconds the worker's processes have used (the worker may run under a prefix, scripts/
        grade_submission.sh, so the whole tree from the process started is counted), or None without /proc."""
        table = _process_table(cpu=True)
        if self.proc.pid not in table:
            return None
        children: dict[int, list[int]] = {}
        for pid, (parent, _, _) in table.items():
            children.setdefault(parent, []).append(pid)
        total, frontier = 0.0, [self.proc.pid]
        while frontier:
            pid = frontier.pop()
            total += table[pid][2]
            frontier += children.get(pid, [])
        return total

    def next_event(self, limit: Limit) -> dict | None | str:
        """The next event; None at the end of the stream (or when the worker has exited); "timeout" when the
        limit passes first. Raises transfer.Malformed for a line that is not a JSON object."""
        while True:
            line = self.lines.pop()
            if line is not None:
                try:
                    event = json.loads(line)
                except (ValueError, RecursionError):  # RecursionError: JSON nested thousands deep
                    raise transfer.Malformed("a line that is not JSON") from None
                if not isinstance(event, dict):
                    raise transfer.Malformed("a line that is not a JSON object")
                return event
            if self.eof:
                return None
            if self.proc.poll() is not None:
                self._drain()
                if self._line_ready():
                    continue
                return None
            if limit.passed(self):
                return "timeout"
            if self.selector.select(POLL):
                self._read()

    def _line_ready(self) -> bool:
        return self.lines.ready()

    def _drain(self) -> None:
        """Read what the exited worker left in the pipe, after stopping any process that still holds it."""
        kill_descendants(self.spare)
        while not self.eof and self.selector.select(0):
            before = len(self.lines.buffer)
            self._read()
            if len(self.lines.buffer) == before and not self.eof:
                break

    def close(self, kill: bool = False) -> int | None:
        """Stop the worker (at once with `kill`, else once it has exited by itself or the pipe is closed),
        every process it left behind, and remove its working directory. Its exit status. Closing twice is
        closing once."""
        if self.closed:
            return self.proc.returncode
        self.closed = True
        if kill or self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        code = self.proc.wait()
        kill_descendants(self.spare)
        self.selector.close()
        os.close(self.fd)
        self.printed.seek(0)
        printed = self.printed.read(PRINTED_BYTES).decode("utf-8", "replace")
        self.printed.close()
        if printed.strip():
            sys.stderr.write(quoted_output(printed))
            sys.stderr.flush()
        shutil.rmtree(self.workdir, ignore_errors=True)
        return code


class LineBuffer:
    """Bytes from the event pipe, taken out a line at a time. Each byte is searched for a newline once (`scanned`
    remembers how far the search went), so a long line arriving in pieces costs one pass, not one per piece."""

    def __init__(self):
        self.buffer = bytearray()
        self.scanned = 0  # bytes at the start of the buffer known to hold no newline

    def feed(self, chunk: bytes) -> None:
        self.buffer += chunk

    def ready(self) -> bool:
        return self.buffer.find(b"\n", self.scanned) >= 0

    def pop(self) -> bytes | None:
        """The next whole line (without its newline), or None; transfer.Malformed past MAX_EVENT_BYTES."""
        newline = self.buffer.find(b"\n", self.scanned)
        if newline < 0:
            self.scanned = len(self.buffer)
            if len(self.buffer) > MAX_EVENT_BYTES:
                raise transfer.Malformed("an event longer than the grader accepts")
            return None
        line = bytes(self.buffer[:newline])
        del self.buffer[:newline + 1]
        self.scanned = 0
        return line


def quoted_output(printed: str) -> str:
    """What the graded code printed, cleaned of escapes and each line quoted ("  | "), so that no line of it can
    pass for a line of the report (a forged "★ Solved")."""
    lines = clean_text(printed, limit=PRINTED_BYTES).splitlines()
    shown = lines[:PRINTED_LINES]
    more = [f"  | ... ({len(lines) - len(shown)} more lines)"] if len(lines) > len(shown) else []
    return "\n".join(["printed by the graded code:", *(f"  | {line}" for line in shown), *more]) + "\n"


class Limit:
    """How long one step of a worker may take: `cpu` seconds of its CPU time (a loaded machine slows a correct
    kernel in wall time, never in CPU time), and a wall-clock backstop several times larger, for a worker that
    waits without computing."""

    def __init__(self, cpu: float, wall: float, worker: _Worker):
        self.cpu, self.wall = cpu, wall
        self.started_wall = time.monotonic()
        self.started_cpu = worker.cpu_seconds()
        self.why = ""  # once passed: "30 s of CPU time", or "150 s" (the wall-clock backstop)

    def passed(self, worker: _Worker) -> bool:
        wall = time.monotonic() - self.started_wall
        used = worker.cpu_seconds()
        if used is None or self.started_cpu is None:  # no /proc: wall time it is
            self.why = f"{self.cpu:g} s" if wall > self.cpu else ""
        elif used - self.started_cpu > self.cpu:
            self.why = f"{self.cpu:g} s of CPU time"
        elif wall > self.wall:
            self.why = f"{self.wall:g} s (it was waiting, not computing)"
        return bool(self.why)


def die_with_parent() -> None:
    """In the worker, before it runs: on Linux, have the kernel kill it when the grader dies (PR_SET_PDEATHSIG)."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass


# -- checking events ---------------------------------------------------------------------------------------

_FIELDS = {"ready": set(), "load": {"puzzle"}, "load_error": {"puzzle", "message"}, "start": {"puzzle", "case"},
           "execution": {"puzzle", "case", "execution"}, "done": {"puzzle", "notices"}}


def _checked(event: dict, puzzle: int, expected_case: int, in_flight: bool) -> str:
    """The event's kind, after checking it is the event that can come next; raises transfer.Malformed."""
    kind = event.get("event")
    if kind not in _FIELDS or set(event) != _FIELDS[kind] | {"event"}:
        raise transfer.Malformed(f"an unknown event or fields: {sorted(event)[:6]}")
    if kind == "ready":
        return kind
    if event["puzzle"] != puzzle:
        raise transfer.Malformed(f"a {kind} event for puzzle {event['puzzle']!r} while grading puzzle {puzzle}")
    if kind in ("start", "execution") and event["case"] != expected_case:
        raise transfer.Malformed(f"a {kind} event for case {event['case']!r} where case {expected_case} was next")
    if (kind == "execution") != in_flight:
        raise transfer.Malformed(f"a {kind} event {'during' if in_flight else 'outside'} a case")
    if kind == "load_error" and not isinstance(event["message"], str):
        raise transfer.Malformed("a load_error without a message")
    notices = event.get("notices", [])
    if not (isinstance(notices, list) and all(isinstance(n, str) for n in notices)):
        raise transfer.Malformed("notices that are not a list of strings")
    return kind


# -- grading ---------------------------------------------------------------------------------------------

class _Grading:
    """The state of grading some puzzles with a succession of workers: results so far, puzzles left."""

    def __init__(self, puzzles: list[registry.Puzzle], impl: str, file: str | None, seed: int, interpret: bool,
                 timeout: float, grace: float, kernels: dict | None = None):
        self.impl, self.file, self.seed, self.interpret = impl, file, seed, interpret
        self.kernels = kernels or {}  # puzzle number -> its kernel job (kernel-only grading)
        self.timeout, self.grace = timeout, grace
        self.device = "cpu" if interpret else "cuda"
        self.results: dict[int, list[CaseResult]] = {p.number: [] for p in puzzles}
        self.notices: dict[int, list[str]] = {p.number: [] for p in puzzles}
        self.pending = [p.number for p in puzzles]

    def job(self) -> dict:
        return {"puzzles": [{"puzzle": n, "start": len(self.results[n]) if i == 0 else 0,
                             "kernels": self.kernels.get(n)} for i, n in enumerate(self.pending)],
                "impl": self.impl, "file": self.file, "seed": self.seed, "interpret": self.interpret,
                "timeout": self.timeout}

    def _next_case(self) -> tuple[registry.Puzzle, int]:
        number = self.pending[0]
        return registry.find(number), len(self.results[number])

    def _fail_next_case(self, reason: str, message: str) -> None:
        """Charge the case that was running (or next) with a failure, and move past it."""
        puzzle, index = self._next_case()
        if index < len(puzzle.cases):
            self.results[puzzle.number].append(result_for(puzzle.cases[index], reason, message))
        if index + 1 >= len(puzzle.cases) or reason == "timeout":
            self.pending.pop(0)

    def _fail_import(self, reason: str, message: str) -> None:
        self.results[self.pending.pop(0)] = [CaseResult("import", False, reason, message)]

    def run_worker(self, spare: set[int]) -> None:
        """Start a worker on the pending puzzles and follow it until it ends, fails or is stopped."""
        worker = _Worker(self.job(), spare)
        phase = "startup"  # see _handle
        killed = False
        try:
            while self.pending:
                limit = Limit(self.timeout + self.grace, WALL_FACTOR * self.timeout + self.grace, worker)
                event = worker.next_event(limit)
                if event == "timeout":
                    killed = True
                    self._timed_out(phase, limit.why)
                    return
                if event is None:
                    self._ended(phase, worker.close())
                    return
                phase = self._handle(event, phase)
        except Broken:
            killed = True
            raise
        except Exception as exc:  # anything in an event that the judge cannot take is the worker's fault
            killed = True
            what = str(exc) if isinstance(exc, transfer.Malformed) else f"{type(exc).__name__} while reading it"
            self._fail_next_case("crashed", f"the grading process sent a malformed event ({one_line(what)[:200]}); "
                                            "the grader stopped it. A submission that writes to the grader's pipe "
                                            "does this.")
        finally:
            if worker.proc.returncode is None or killed:
                worker.close(kill=True)

    def _handle(self, event: dict, phase: str) -> str:
        """Take one event; the phase it leads to: startup (nothing yet), import (the file is being imported),
        puzzle (between two cases of a puzzle), case (one is running), between (between puzzles)."""
        puzzle, index = self._next_case()
        kind = _checked(event, puzzle.number, index, phase == "case")
        if kind == "ready":
            if phase != "startup":
                raise transfer.Malformed("a second ready event")
            return "ready"
        if phase == "startup":
            raise transfer.Malformed(f"a {kind} event before the worker said it was ready")
        if kind == "load":
            if phase not in ("ready", "between"):
                raise transfer.Malformed("a load event inside a puzzle")
            return "import"
        if kind == "load_error":
            if phase != "import":
                raise transfer.Malformed("a load_error event after the import")
            self._fail_import("error", event["message"])
            return "between"
        if phase not in ("import", "puzzle", "case"):
            raise transfer.Malformed(f"a {kind} event before the load event")
        if kind == "start":
            if index >= len(puzzle.cases):
                raise transfer.Malformed(f"a start event for case {index}, beyond the last case")
            return "case"
        if kind == "execution":
            execution = transfer.execution_from_json(event["execution"])
            self.results[puzzle.number].append(self._judge(puzzle, index, execution))
            return "puzzle"
        # done: every case has a result, or the last one ended the puzzle
        results = self.results[puzzle.number]
        if len(results) < len(puzzle.cases) and not (results and ends_puzzle(results[-1].reason, len(results) - 1)):
            raise transfer.Malformed(f"a done event after {len(results)} of {len(puzzle.cases)} cases")
        self.notices[puzzle.number] = [clean_text(one_line(n), NOTICE_CHARS) for n in event["notices"][:MAX_NOTICES]]
        self.pending.pop(0)
        return "between"

    def _judge(self, puzzle: registry.Puzzle, index: int, execution: transfer.Execution) -> CaseResult:
        try:
            return judge(puzzle, puzzle.cases[index], self.seed, self.device, execution)
        except transfer.Malformed:
            raise
        except Exception as exc:  # data that passed the checks yet cannot be judged: the worker's doing
            raise transfer.Malformed(f"the judge could not use it: {type(exc).__name__}: {exc}") from None

    def _timed_out(self, phase: str, limit: str) -> None:
        if phase == "import":
            what = shown(source_path(registry.find(self.pending[0]), self.impl, self.file))
            self._fail_import("timeout", f"stopped after {limit} while importing {what}: does code at module "
                                         "level (outside any function) loop forever or wait?")
        elif phase == "case":
            self._fail_next_case("timeout", f"stopped after {limit} without an answer: does a loop never end?")
        elif phase == "startup":
            raise Broken(f"the grading process did not start within {limit} (it never said it was ready)")
        else:
            where = "before its first case" if phase == "ready" else "between cases"
            self._fail_next_case("timeout", f"stopped after {limit} without an answer, {where}")

    def _ended(self, phase: str, code: int | None) -> None:
        """The worker's stream ended before the puzzles did."""
        if phase == "startup":
            raise Broken(f"the grading process {_describe_exit(code)} before it was ready"
                         + (" (126/127: its Python could not be run)" if code in (126, 127) else ""))
        if phase == "case":
            advice = ("A crash inside triton or torch, or your code ending the process (os._exit, a signal), can "
                      "do this." if self.interpret else "An out-of-bounds access on the GPU, or a crash inside "
                      "triton, can do this: try `--interpret` for a precise report.")
            self._fail_next_case("crashed", f"the grading process {_describe_exit(code)} during this case; "
                                            f"the grader survived. {advice}")
        elif phase == "import":
            what = shown(source_path(registry.find(self.pending[0]), self.impl, self.file))
            self._fail_import("error", f"the grading process {_describe_exit(code)} while importing {what}")
        else:  # died between cases, or before the first: report it once
            number = self.pending.pop(0)
            self.results[number].append(CaseResult("startup", False, "error", f"the grading process "
                                                   f"{_describe_exit(code)} before grading this puzzle"))


def read_submission(puzzle: registry.Puzzle, impl: str, file: str | None) -> tuple[dict | None, list, list[str]]:
    """Kernel-only grading, in the judge: the puzzle's kernel job from the learner's file or a --file
    (``submission.kernel_job``), or, where there is nothing to run, the results that say why (a refused or
    unreadable file, kernels still the stub's); and notes for the report."""
    path = source_path(puzzle, impl, file)
    try:
        with open(path, "rb") as handle:
            text = handle.read(submission.MAX_BYTES + 1)
    except OSError as exc:
        return None, [CaseResult("import", False, "error", f"cannot read {shown(path)}: {exc.strerror}")], []
    try:
        job, kernels = submission.kernel_job(puzzle, text, path.name)
    except submission.Refused as exc:
        return None, [CaseResult("import", False, "error", str(exc))], []
    if not kernels.started:
        return None, [result_for(puzzle.cases[0], "not_started", submission.NOT_STARTED)], list(kernels.notes)
    return job, [], list(kernels.notes)


def grade_isolated(puzzles: list[registry.Puzzle], impl: str, file: str | None, seed: int, interpret: bool,
                   timeout: float, mode: str, grace: float = GRACE, capability: tuple[int, int] | None = None,
                   own_launcher: bool = False) -> list[PuzzleResult]:
    """Grade each puzzle in worker processes (one at a time, a fresh one after each failure) and judge here.

    Kernel-only grading is the default for puzzles/ and --file: the judge reads the file's kernels without running
    it, and the worker runs them under the puzzle's own launcher. `own_launcher` (the practice path) and the
    reference solutions import the whole file in the worker and grade its launcher; such a result is not to be
    trusted by a classroom (``PuzzleResult.trusted``). Natively, a puzzle this GPU cannot run
    (``Puzzle.unsupported_on``; capability: the GPU's, found when None) is graded in the interpreter instead, and
    its report says why. Raises ``Broken`` when a worker cannot start."""
    file = str(Path(file).resolve()) if file is not None else None  # the worker runs in another directory
    kernel_only = not own_launcher and impl != "solutions"
    notices: dict[int, list[str]] = {p.number: [] for p in puzzles}
    decided: dict[int, list[CaseResult]] = {}  # results known without a worker
    kernels: dict[int, dict] = {}
    if kernel_only:
        for puzzle in puzzles:
            job, results, notes = read_submission(puzzle, impl, file)
            notices[puzzle.number] += notes
            if job is None:
                decided[puzzle.number] = results
            else:
                kernels[puzzle.number] = job
    elif file is not None:
        refusal = vet_submission(file)
        if refusal is not None:
            decided = {p.number: [CaseResult("import", False, "error", refusal)] for p in puzzles}
    modes = {p.number: mode for p in puzzles}
    if not interpret:
        capability = capability or env.gpu_capability()
        gpu = env.gpu_label() or f"sm_{capability[0]}{capability[1]}"
        for puzzle in puzzles:
            why = puzzle.unsupported_on(capability)
            if why is not None:
                modes[puzzle.number] = "interpreter"
                notices[puzzle.number].append(f"graded in the interpreter, on the CPU: this GPU, {gpu}, cannot "
                                              f"run puzzle {puzzle.number} natively, as {why}")
            else:
                notices[puzzle.number] += puzzle.gpu_notes(capability)
    # One grading per mode: a worker picks the interpreter or the GPU when it starts (TRITON_INTERPRET).
    gradings = [_Grading([p for p in puzzles if (modes[p.number] == "interpreter") == in_interpreter
                          and p.number not in decided], impl, file, seed, in_interpreter, timeout, grace, kernels)
                for in_interpreter in sorted({interpret, *(m == "interpreter" for m in modes.values())})]
    runs_code = any(grading.pending for grading in gradings)
    become_subreaper()
    spare = descendants()
    # A file imported whole (--own-launcher) is untrusted: the grader's files are put back as they were, and a
    # change voids the grade. (Not for puzzles/ or solutions/: whoever edits the grader while grading their own
    # kernel keeps the edit; nor for kernel-only grading, which runs none of the file's Python.)
    grader_files = snapshot_grader() if file is not None and own_launcher and runs_code else None
    tampered, stopped_by = [], None
    try:
        for grading in gradings:
            while grading.pending:
                grading.run_worker(spare)
    except KeyboardInterrupt as exc:  # SIGINT, or SIGTERM as the CLI turns it (show/cli.py)
        stopped_by = exc.args[0] if exc.args else "SIGINT"
    finally:
        kill_descendants(spare)
        if grader_files is not None:
            tampered = restore_grader(grader_files)
    results = {number: cases for grading in gradings for number, cases in grading.results.items()
               if number not in grading.pending}
    results.update(decided)
    if tampered:  # this grade was judged by the grader as loaded before; it is void all the same
        for puzzle in puzzles:
            results[puzzle.number].append(CaseResult(
                "grader files", False, "error", f"the submission changed the grader's own files "
                f"({', '.join(tampered[:5])}): they were restored, and this grade is void"))
    worker_notices = {number: found for grading in gradings for number, found in grading.notices.items()}
    assembled = [assemble(p, results[p.number], seed, modes[p.number], shown(source_path(p, impl, file)),
                          notices[p.number] + worker_notices.get(p.number, []), trusted=not own_launcher)
                 for p in puzzles if p.number in results]
    if stopped_by is not None:
        raise Interrupted(assembled, stopped_by)
    return assembled


def map_case(puzzle: registry.Puzzle, index: int, impl: str, file: str | None, seed: int, timeout: float,
             grace: float = GRACE, own_launcher: bool = False) -> tuple[dict | None, str]:
    """Run case `index` in a worker, as grading does (kernel-only unless `own_launcher`; its own directory, a time
    limit, every process it leaves killed, a file's changes to the grader undone), for its access maps
    (grader.show.memory_map), in the interpreter. The maps as the worker sent them (for the caller to check), or
    None and why there are none."""
    file = str(Path(file).resolve()) if file is not None else None
    kernels = None
    if not own_launcher and impl != "solutions":
        kernels, results, _ = read_submission(puzzle, impl, file)
        if kernels is None:
            return None, f"not run: {results[0].message}"
    elif file is not None:
        refusal = vet_submission(file)
        if refusal is not None:
            return None, f"not run: {refusal}"
    job = {"puzzles": [{"puzzle": puzzle.number, "start": 0, "kernels": kernels}], "impl": impl, "file": file,
           "seed": seed, "interpret": True, "timeout": timeout, "map": index}
    become_subreaper()
    spare = descendants()
    grader_files = snapshot_grader() if file is not None and own_launcher else None
    sent, why, tampered = None, "", []
    worker = _Worker(job, spare)
    try:
        sent, why = _map_events(worker, puzzle.number, Limit(timeout + grace, WALL_FACTOR * timeout + grace, worker))
    except (transfer.Malformed, ValueError, TypeError, OverflowError) as exc:
        sent, why = None, f"the case's process sent a malformed message ({exc}): nothing to draw"
    finally:
        code = worker.close(kill=True)
        kill_descendants(spare)
        if grader_files is not None:
            tampered = restore_grader(grader_files)
    if tampered:
        return None, (f"the submission changed the grader's own files ({', '.join(tampered[:5])}): they were "
                      "restored, and nothing it recorded is drawn")
    if sent is None and not why:
        why = f"the case's process {_describe_exit(code)} before it sent its record back: nothing to draw"
    return sent, why


def _map_events(worker: _Worker, number: int, limit: Limit) -> tuple[dict | None, str]:
    """Follow a map job's events: (the maps, '') or (None, why not); (None, '') when the worker ended early."""
    while True:
        event = worker.next_event(limit)
        if event == "timeout":
            return None, (f"stopped after {limit.why} without an answer: does a loop never end? "
                          "(nothing recorded came back)")
        if event is None:
            return None, ""
        kind = event.get("event")
        if event.get("puzzle") != number:
            raise transfer.Malformed(f"an event for puzzle {event.get('puzzle')!r}")
        if kind in ("ready", "load"):
            continue
        if kind == "load_error" and isinstance(event.get("message"), str):
            first, *rest = [line.strip() for line in event["message"].strip().splitlines()[:3]] or [""]
            return None, "not run: " + (f"{first.rstrip(':')}: {'; '.join(rest)}" if rest else first)
        if kind == "map" and isinstance(event.get("maps"), dict):
            return event["maps"], ""
        raise transfer.Malformed(f"an unexpected {kind!r} event")
