"""The grader's processes: starting a worker, reading its events, timing it, and leaving nothing behind.

This module imports no torch, so that the CLI can start a worker (``prestart``) before it imports torch itself:
the two imports, two seconds each on a laptop, then overlap. The worker reads its job only after its own imports,
so a worker started early is as good as one started with its job. ``grader.judge.runner`` drives the workers.

Nothing here trusts a worker to end: a limit of CPU time plus a wall-clock backstop covers every step; the
worker's exit is noticed even while a forked child holds the pipe; and when a worker ends, every process it left
behind is killed (this process is their subreaper on Linux, so even a daemon that called setsid is found). On
Linux a worker also dies with its parent (PR_SET_PDEATHSIG).
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
import threading
import time
from collections.abc import Iterable

from grader.paths import ROOT, shown
from grader.protocol import Malformed, die_with_parent, process_stat
from grader.safe_output import clean_text

GRACE = 20.0  # CPU seconds beyond the in-process limit: room for imports, compilation and unwinding
WALL_FACTOR = 5  # the wall-clock backstop: this many times the CPU limit (a loaded machine is slow, not stuck)
POLL = 0.2  # seconds between checks that the worker is still alive (a forked child may hold the pipe open)
MAX_EVENT_BYTES = 1 << 30  # one event line; far above any case's outputs
PRINTED_BYTES = 20_000  # of what the learner's code printed, shown after the worker ends
PRINTED_LINES = 40
PRINTED_KEPT_BYTES = 10_000_000  # all of it, written to printed_file() when the report shows only its start
_PR_SET_CHILD_SUBREAPER = 36




_SIGNALLED: list[str] = []  # the signals on_signal took, in case Python swallowed their KeyboardInterrupt


def on_signal(signum, frame):
    """The CLI's handler for SIGINT and SIGTERM: a KeyboardInterrupt naming the signal (the runner stops every
    worker, the CLI says so). The signal is kept too: a KeyboardInterrupt raised inside a callback Python runs for
    itself (an import's module-lock weakref: "Exception ignored in ...") is swallowed, and grading then went on to
    exit 0; the next event read raises it again (raise_if_signalled)."""
    name = signal.Signals(signum).name
    _SIGNALLED.append(name)
    raise KeyboardInterrupt(name)


def raise_if_signalled() -> None:
    if _SIGNALLED:
        raise KeyboardInterrupt(_SIGNALLED[0])


def _describe_exit(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"




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
        stat = process_stat(entry) if entry.isdigit() else None  # None: it ended while we looked
        if stat is not None:
            parent, state, own, children = stat
            table[int(entry)] = (parent, state, own + children) if cpu else (parent, state)
    return table


def descendants(excluded: Iterable[int] = ()) -> set[int]:
    """Every living process whose chain of parents leads to this one, but for the `excluded` ones and theirs."""
    table = _process_table()
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    excluded = set(excluded)
    found, frontier = set(), [os.getpid()]
    while frontier:
        for child in children.get(frontier.pop(), []):
            if child not in found and child not in excluded:
                found.add(child)
                frontier.append(child)
    return {pid for pid in found if table[pid][1] != "Z" or table[pid][0] == os.getpid()}


def kill_descendants(spare: set[int], keep: Iterable[int] = ()) -> None:
    """SIGKILL every descendant but `spare` (processes that were ours before grading) and the trees of `keep`
    (workers of other gradings running beside this one, workers started early), and reap those that become our
    children, until none is left: a process that forks while we kill is found on the next round."""
    for _ in range(100):
        found = descendants(excluded=keep) - spare
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


def workers_for(interpret: bool) -> int:
    """How many workers of a kind grade side by side: natively one per four cores, up to four (a worker on the
    GPU, its interpreter's checks, their compile helpers and the judge share the host's cores); in the
    interpreter one per two cores, up to four (each worker is a core's work, and the judge needs one): on 2 cores,
    one. ``GRADER_WORKERS`` sets it (gradings side by side, as a test suite on every core runs them, want one)."""
    if os.environ.get("GRADER_WORKERS", "").isdigit() and int(os.environ["GRADER_WORKERS"]) > 0:
        return int(os.environ["GRADER_WORKERS"])
    cores = os.cpu_count() or 1
    return max(1, min(4, cores // (2 if interpret else 4)))


# -- one worker -------------------------------------------------------------------------------------------

class _Started:
    """A worker process just started: it imports what it needs, says it is ready, then waits for its job on stdin.

    It starts with ``python -P``, the repository appended to the end of sys.path, so that nothing planted at the
    repository's root (a triton/ folder) can stand in for an installed package; with ``GRADER_WORKER_PREFIX`` (a
    JSON list, set by scripts/grade_submission.sh) its command runs under that prefix, which makes it another
    user in namespaces of its own; ``GRADER_WORKER_OWNER`` ("uid:gid") then owns its working directory. Its mode
    (the interpreter or the GPU) is chosen when it starts: ``GRADER_WORKER_INTERPRET``."""

    def __init__(self, interpret: bool):
        self.interpret = interpret
        self.workdir = tempfile.mkdtemp(prefix="grader-worker-")
        read_fd, write_fd = os.pipe()
        environment = dict(os.environ)  # PYTHONPATH too: the caller's own packages (the repository is not added)
        environment["GRADER_RESULTS"] = os.path.join(self.workdir, "results.json")  # never the learner's cache
        environment["PYTHONDONTWRITEBYTECODE"] = "1"  # the grader's __pycache__ is the parent's alone
        environment["GRADER_WORKER_INTERPRET"] = "1" if interpret else "0"
        for threads in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS") if interpret else ():
            # One thread each in the interpreter, whose arithmetic is small blocks: gradings side by side (a test
            # suite, the interpreter's checks of a native grading) would otherwise each start a thread per core. A
            # native worker keeps them: building a backward's inputs runs the forward on the CPU.
            environment.setdefault(threads, "1")
        environment.pop("TRITON_INTERPRET", None)  # the worker sets it from its mode (grader.env.choose_mode)
        # What the learner's code prints is kept, and shown cleaned when the worker ends (raw, it could carry
        # terminal escapes that hide or fake the report).
        self.printed = open(os.path.join(self.workdir, ".printed"), "w+b")  # closed in Worker.close()
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
        os.set_blocking(read_fd, False)
        self.fd = read_fd

    def discard(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        os.close(self.fd)
        self.printed.close()
        shutil.rmtree(self.workdir, ignore_errors=True)


_prestarted: dict[bool, list[_Started]] = {True: [], False: []}  # by mode (interpret): those waiting
_live: dict[int, Worker] = {}  # workers given a job and not yet closed, by pid (gradings may run side by side)
_lock = threading.Lock()


def prestart(interpret: bool, count: int = 1) -> None:
    """Have `count` workers of this mode waiting, started now if need be, to be taken by the next Workers of this
    mode: their imports run while the caller does its own. A prestarted worker that is not taken is ended at
    exit."""
    with _lock:
        if not any(_prestarted.values()):
            import atexit

            atexit.unregister(discard_prestarted)
            atexit.register(discard_prestarted)
        while len(_prestarted[interpret]) < count:
            try:
                _prestarted[interpret].append(_Started(interpret))
            except Broken:
                return  # the Worker that would have taken it says why


def prestarted_pids() -> set[int]:
    """The processes of the workers waiting to be taken (they are no grading's leftovers)."""
    with _lock:
        return {started.proc.pid for waiting in _prestarted.values() for started in waiting}


def _protected(worker: Worker | None = None) -> set[int]:
    """Processes whose trees a worker's end must not touch: the other live workers, and those waiting."""
    with _lock:
        return {pid for pid in _live if _live[pid] is not worker} | \
            {started.proc.pid for waiting in _prestarted.values() for started in waiting}


def _taken_prestarted(interpret: bool) -> _Started | None:
    """A prestarted worker of this mode, if one is alive."""
    while True:
        with _lock:
            if not _prestarted[interpret]:
                return None
            started = _prestarted[interpret].pop(0)
        if started.proc.poll() is None:
            return started
        started.discard()


def discard_prestarted() -> None:
    """End the workers waiting to be taken (registered to run at exit by prestart, so they also end then)."""
    with _lock:
        waiting = [started for mode in _prestarted.values() for started in mode]
        for mode in _prestarted.values():
            mode.clear()
    for started in waiting:
        started.discard()


class Worker:
    """A worker given its job: its process (``_Started``, or the one ``prestart`` started), its event pipe (read
    without blocking, so a partial line cannot stall us) and its temporary working directory."""

    def __init__(self, job: dict, spare: set[int]):
        self.spare = spare
        self.started = time.monotonic()
        started = _taken_prestarted(job["interpret"]) or _Started(job["interpret"])
        self.proc, self.fd, self.workdir, self.printed = started.proc, started.fd, started.workdir, started.printed
        try:
            self.proc.stdin.write(json.dumps(job))
            self.proc.stdin.close()
        except BrokenPipeError:
            pass  # it died at once; the end of its stream says so
        self.lines = LineBuffer()
        self.eof = False
        self.closed = False
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.fd, selectors.EVENT_READ)
        with _lock:
            _live[self.proc.pid] = self

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
        limit passes first. Raises Malformed for a line that is not a JSON object."""
        while True:
            raise_if_signalled()
            line = self.lines.pop()
            if line is not None:
                try:
                    event = json.loads(line)
                except (ValueError, RecursionError):  # RecursionError: JSON nested thousands deep
                    raise Malformed("a line that is not JSON") from None
                if not isinstance(event, dict):
                    raise Malformed("a line that is not a JSON object")
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
        kill_descendants(self.spare, _protected(self))
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
        kill_descendants(self.spare, _protected(self))
        with _lock:
            _live.pop(self.proc.pid, None)
        self.selector.close()
        os.close(self.fd)
        self.printed.seek(0)
        printed = self.printed.read(PRINTED_KEPT_BYTES).decode("utf-8", "replace")
        self.printed.close()
        if printed.strip():
            sys.stderr.write(quoted_output(printed, printed_file()))
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
        """The next whole line (without its newline), or None; Malformed past MAX_EVENT_BYTES."""
        newline = self.buffer.find(b"\n", self.scanned)
        if newline < 0:
            self.scanned = len(self.buffer)
            if len(self.buffer) > MAX_EVENT_BYTES:
                raise Malformed("an event longer than the grader accepts")
            return None
        line = bytes(self.buffer[:newline])
        del self.buffer[:newline + 1]
        self.scanned = 0
        return line


def printed_file() -> str:
    """Where the whole of what the grading process printed is kept when the report shows only its start: beside
    the learner's progress (GRADER_RESULTS, as grader.show.progress reads it), in .grader/ by default."""
    results = os.environ.get("GRADER_RESULTS") or os.path.join(ROOT, ".grader", "results.json")
    return os.path.join(os.path.dirname(results), "printed.txt")


def quoted_output(printed: str, keep: str | None = None) -> str:
    """What the grading process printed (the graded code's prints, and the process's own last words), cleaned of
    escapes and each line quoted ("  | "), so that no line of it can pass for a line of the report (a forged
    "★ Solved"): its first PRINTED_LINES lines. Where there is more, and `keep` names a file, the whole of it
    (cleaned) is written there, and the last line says so."""
    text = clean_text(printed, limit=PRINTED_KEPT_BYTES)
    lines = text.splitlines()
    first = clean_text("\n".join(lines[:PRINTED_LINES]), limit=PRINTED_BYTES).splitlines()
    more = []
    if len(lines) > len(first) or len(text) > PRINTED_BYTES:
        left = len(lines) - len(first)
        rest = f"{left} more line{'s' * (left != 1)}" if left else "the rest of a long line"
        more = [f"  | ... ({rest}{_kept(text, keep)}; or print less: from one program, under "
                "`if tl.program_id(0) == 0:`)"]
    return "\n".join(["printed in the grading process:", *(f"  | {line}" for line in first), *more]) + "\n"


def _kept(text: str, keep: str | None) -> str:
    """Write all of `text` to the file `keep`: '; all N are in FILE' as the report says it, or '' when there is no
    such file (none asked for, or it cannot be written)."""
    if keep is None:
        return ""
    try:
        os.makedirs(os.path.dirname(keep) or ".", exist_ok=True)
        with open(keep, "w", encoding="utf-8") as file:
            file.write(text if text.endswith("\n") else text + "\n")
    except OSError:
        return ""
    return f"; all {len(text.splitlines())} are in {shown(keep)}"


class Limit:
    """How long one step of a worker may take: `cpu` seconds of its CPU time (a loaded machine slows a correct
    kernel in wall time, never in CPU time), and a wall-clock backstop several times larger, for a worker that
    waits without computing."""

    def __init__(self, cpu: float, wall: float, worker: Worker):
        self.cpu, self.wall = cpu, wall
        self.started_wall = time.monotonic()
        self.started_cpu = worker.cpu_seconds()
        self.why = ""  # once passed: "30 s of CPU time", or "150 s" (the wall-clock backstop)

    def passed(self, worker: Worker) -> bool:
        wall = time.monotonic() - self.started_wall
        used = worker.cpu_seconds()
        if used is None or self.started_cpu is None:  # no /proc: wall time it is
            self.why = f"{self.cpu:g} s" if wall > self.cpu else ""
        elif used - self.started_cpu > self.cpu:
            self.why = f"{self.cpu:g} s of CPU time"
        elif wall > self.wall:
            self.why = f"{self.wall:g} s (it was waiting, not computing)"
        return bool(self.why)
