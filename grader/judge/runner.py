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
from grader.safe_output import clean_text

GRACE = 20.0  # seconds beyond the in-process alarm: room for imports, compilation and unwinding
POLL = 0.2  # seconds between checks that the worker is still alive (a forked child may hold the pipe open)
MAX_EVENT_BYTES = 1 << 30  # one event line; far above any case's outputs
PRINTED_BYTES = 20_000  # of what the learner's code printed, shown after the worker ends
_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


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


def _process_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state letter) for every process in /proc; empty where there is no /proc."""
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
            except (OSError, IndexError):
                continue  # it ended while we looked
            table[int(entry)] = (int(fields[1]), fields[0])
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
    temporary working directory."""

    def __init__(self, job: dict, spare: set[int]):
        self.spare = spare
        self.started = time.monotonic()
        self.workdir = tempfile.mkdtemp(prefix="grader-worker-")
        read_fd, write_fd = os.pipe()
        environment = dict(os.environ)
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), environment.get("PYTHONPATH")]))
        environment["GRADER_RESULTS"] = os.path.join(self.workdir, "results.json")  # never the learner's cache
        environment["PYTHONDONTWRITEBYTECODE"] = "1"  # the grader's __pycache__ is the parent's alone
        # What the learner's code prints is kept, and shown cleaned when the worker ends (raw, it could carry
        # terminal escapes that hide or fake the report).
        self.printed = open(os.path.join(self.workdir, ".printed"), "w+b")  # closed in close()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "grader.worker", str(write_fd)], stdin=subprocess.PIPE, pass_fds=(write_fd,),
            cwd=self.workdir, env=environment, start_new_session=True, text=True, stderr=self.printed)
        os.close(write_fd)
        try:
            self.proc.stdin.write(json.dumps(job))
            self.proc.stdin.close()
        except BrokenPipeError:
            pass  # it died at once; the end of its stream says so
        os.set_blocking(read_fd, False)
        self.fd = read_fd
        self.buffer = b""
        self.eof = False
        self.selector = selectors.DefaultSelector()
        self.selector.register(read_fd, selectors.EVENT_READ)

    def _read(self) -> None:
        try:
            chunk = os.read(self.fd, 1 << 20)
        except BlockingIOError:
            return
        if chunk:
            self.buffer += chunk
        else:
            self.eof = True

    def _line(self) -> bytes | None:
        newline = self.buffer.find(b"\n")
        if newline < 0:
            if len(self.buffer) > MAX_EVENT_BYTES:
                raise transfer.Malformed("an event longer than the grader accepts")
            return None
        line, self.buffer = self.buffer[:newline], self.buffer[newline + 1:]
        return line

    def next_event(self, deadline: float) -> dict | None | str:
        """The next event; None at the end of the stream (or when the worker has exited); "timeout" when the
        deadline passes first. Raises transfer.Malformed for a line that is not a JSON object."""
        while True:
            line = self._line()
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
            if time.monotonic() >= deadline:
                return "timeout"
            if self.selector.select(min(POLL, max(0.0, deadline - time.monotonic()))):
                self._read()

    def _line_ready(self) -> bool:
        return b"\n" in self.buffer

    def _drain(self) -> None:
        """Read what the exited worker left in the pipe, after stopping any process that still holds it."""
        kill_descendants(self.spare)
        while not self.eof and self.selector.select(0):
            before = len(self.buffer)
            self._read()
            if len(self.buffer) == before and not self.eof:
                break

    def close(self, kill: bool = False) -> int | None:
        """Stop the worker (at once with `kill`, else once it has exited by itself or the pipe is closed),
        every process it left behind, and remove its working directory. Its exit status."""
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
            sys.stderr.write(clean_text(printed, limit=PRINTED_BYTES) + "\n")
            sys.stderr.flush()
        shutil.rmtree(self.workdir, ignore_errors=True)
        return code


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
                deadline = time.monotonic() + self.timeout + self.grace
                event = worker.next_event(deadline)
                if event == "timeout":
                    killed = True
                    self._timed_out(phase)
                    return
                if event is None:
                    self._ended(phase, worker.close())
                    return
                phase = self._handle(event, phase)
        except transfer.Malformed as exc:
            killed = True
            self._fail_next_case("crashed", f"the grading process sent a malformed event ({exc}); the grader "
                                            "stopped it. A submission that writes to the grader's pipe does this.")
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
        self.notices[puzzle.number] = event["notices"]
        self.pending.pop(0)
        return "between"

    def _judge(self, puzzle: registry.Puzzle, index: int, execution: transfer.Execution) -> CaseResult:
        try:
            return judge(puzzle, puzzle.cases[index], self.seed, self.device, execution)
        except transfer.Malformed:
            raise
        except Exception as exc:  # data that passed the checks yet cannot be judged: the worker's doing
            raise transfer.Malformed(f"the judge could not use it: {type(exc).__name__}: {exc}") from None

    def _timed_out(self, phase: str) -> None:
        limit = f"{self.timeout + self.grace:g} s"
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
        return None, [result_for(puzzle.cases[0], "not_started", "not implemented yet: your kernels are the stub's")], \
            list(kernels.notes)
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
    # kernel keeps the edit.) Kernel-only grading runs none of the file's Python, and is snapshotted all the same.
    grader_files = snapshot_grader() if file is not None and runs_code else None
    tampered = []
    try:
        for grading in gradings:
            while grading.pending:
                grading.run_worker(spare)
    finally:
        kill_descendants(spare)
        if grader_files is not None:
            tampered = restore_grader(grader_files)
    results = {number: cases for grading in gradings for number, cases in grading.results.items()}
    results.update(decided)
    if tampered:  # this grade was judged by the grader as loaded before; it is void all the same
        for puzzle in puzzles:
            results[puzzle.number].append(CaseResult(
                "grader files", False, "error", f"the submission changed the grader's own files "
                f"({', '.join(tampered[:5])}): they were restored, and this grade is void"))
    worker_notices = {number: found for grading in gradings for number, found in grading.notices.items()}
    return [assemble(p, results[p.number], seed, modes[p.number], shown(source_path(p, impl, file)),
                     notices[p.number] + worker_notices.get(p.number, []), trusted=not own_launcher)
            for p in puzzles]


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
    grader_files = snapshot_grader() if file is not None else None
    sent, why, tampered = None, "", []
    worker = _Worker(job, spare)
    try:
        sent, why = _map_events(worker, puzzle.number, time.monotonic() + timeout + grace)
    except transfer.Malformed as exc:
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


def _map_events(worker: _Worker, number: int, deadline: float) -> tuple[dict | None, str]:
    """Follow a map job's events: (the maps, '') or (None, why not); (None, '') when the worker ended early."""
    while True:
        event = worker.next_event(deadline)
        if event == "timeout":
            return None, (f"stopped after {deadline - worker.started:.0f} s without an answer: does a loop never "
                          "end? (nothing recorded came back)")
        if event is None:
            return None, ""
        kind = event.get("event")
        if kind == "ready":  # the worker's first event, before any puzzle
            continue
        if event.get("puzzle") != number:
            raise transfer.Malformed(f"an event for puzzle {event.get('puzzle')!r}")
        if kind == "load":
            continue
        if kind == "load_error" and isinstance(event.get("message"), str):
            first, *rest = [line.strip() for line in event["message"].strip().splitlines()[:3]] or [""]
            return None, "not run: " + (f"{first.rstrip(':')}: {'; '.join(rest)}" if rest else first)
        if kind == "map" and isinstance(event.get("maps"), dict):
            return event["maps"], ""
        raise transfer.Malformed(f"an unexpected {kind!r} event")
