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
  {"event": "start", "puzzle": N, "case": I}          case I begins (the job's cases of the puzzle, in order)
  {"event": "execution", "puzzle": N, "case": I, "execution": {...}}   transfer.execution_to_json
  {"event": "done", "puzzle": N, "notices": [S, ...]} every case ran, or the last one ended the puzzle
  {"event": "map", "puzzle": N, "maps": {...}}        with "map" in the job: that case's access maps instead
Puzzles come in the job's order. The job (parent -> worker, JSON on stdin) names the puzzles with the
case to start from and, for kernel-only grading, the kernels and the puzzle's code (``submission.kernel_job``);
the implementation or file (the practice path, --own-launcher), the seed, the mode and the time limit.
A worker that ends or hangs before "ready" is the grader's own trouble, not the submission's: ``Broken`` is
raised, and the CLI exits without a score.

Starting, timing and ending workers is ``grader.judge.processes``. A worker that crashes, hangs or misbehaves
costs one case, and a fresh worker carries on with the next.
"""

from __future__ import annotations

import math
import os
import threading
import time
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from pathlib import Path

from grader import env, transfer
from grader.course import registry
from grader.course.cases import spec_args
from grader.course.puzzle import skip_reason
from grader.judge import processes, submission
from grader.judge.joined import INTERPRETER_FOUND, Joined, combined  # noqa: F401 (tests name them here)
from grader.judge.processes import GRACE, WALL_FACTOR, Broken, Limit
from grader.judge.submission import vet_submission
from grader.judge.verdict import CaseResult, PuzzleResult, ends_puzzle, judge, prepare, result_for
from grader.paths import shown, source_path
from grader.safe_output import clean_text, one_line

MAX_NOTICES, NOTICE_CHARS = 8, 400  # notes a worker may send per puzzle, and their length

class Interrupted(Exception):
    """Grading was stopped by a signal (SIGINT, SIGTERM) after every worker was ended: `results` holds the puzzles
    graded to their end before it, `signal` its name."""

    def __init__(self, results: list, signal_name: str):
        super().__init__(signal_name)
        self.results, self.signal = results, signal_name


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


def _trace(interpret: bool, event) -> None:
    """With GRADER_TRACE=FILE, a line per worker event: the time (seconds since the epoch), the mode, the event
    (scripts/latency.py --breakdown reads it; a benchmark's tool, off by default)."""
    path = os.environ.get("GRADER_TRACE")
    if path:
        what = event if isinstance(event, str) or event is None else " ".join(
            str(event.get(k, "")) for k in ("event", "puzzle", "case"))
        if isinstance(event, dict) and isinstance(event.get("execution"), dict):  # the worker's own seconds
            what += f" {event['execution'].get('seconds', '')}"
        with open(path, "a") as trace:
            trace.write(f"{time.time():.3f} {'interpreter' if interpret else 'native'} {what}\n")


# -- grading ---------------------------------------------------------------------------------------------

class _Grading:
    """The state of grading some puzzles with a succession of workers: results so far, puzzles left."""

    def __init__(self, puzzles: list[registry.Puzzle], impl: str, file: str | None, seed: int, interpret: bool,
                 timeout: float, grace: float, kernels: dict | None = None, progress=None,
                 only: dict[int, list[int]] | None = None, first_failure: bool = False,
                 references: Executor | None = None):
        self.impl, self.file, self.seed, self.interpret = impl, file, seed, interpret
        # Each case's inputs and reference (verdict.prepare), computed on these threads while the worker runs the
        # puzzle: the judge's float64 reference of a native case can take as long as the GPU's whole run.
        self.references = references
        self.prepared: dict[tuple[int, int], Future] = {}
        self.failure: BaseException | None = None  # what stopped it, raised by grade_isolated
        self.on_finished = None  # called with a puzzle's number once its results are complete
        # The cases to run, by index, per puzzle: every case, or `only` those (the interpreter's checks of a native
        # grading run on the small cases).
        self.order = {p.number: (only or {}).get(p.number, list(range(len(p.cases)))) for p in puzzles}
        self.progress = progress  # called with (puzzle, case index, CaseResult) as each case is judged
        self.first_failure = first_failure  # a puzzle ends at its first failing case (the grader's own tests)
        self.kernels = kernels or {}  # puzzle number -> its kernel job (kernel-only grading)
        self.timeout, self.grace = timeout, grace
        self.device = "cpu" if interpret else "cuda"
        self.results: dict[int, list[CaseResult]] = {p.number: [] for p in puzzles}
        self.notices: dict[int, list[str]] = {p.number: [] for p in puzzles}
        self.pending = [p.number for p in puzzles]

    def _finish_first(self) -> None:
        """The first pending puzzle has all its results."""
        number = self.pending.pop(0)
        for key in [key for key in self.prepared if key[0] == number]:  # cases it did not reach (a stub, a timeout)
            self.prepared.pop(key).cancel()
        if self.on_finished is not None:
            self.on_finished(number)

    def run(self, spare: set[int], stop: threading.Event) -> None:
        """Run workers until every puzzle is graded, or `stop` is set."""
        while self.pending and not stop.is_set():
            self.run_worker(spare)

    def job(self) -> dict:
        return {"puzzles": [{"puzzle": n, "cases": self.order[n][len(self.results[n]):],
                             "kernels": self.kernels.get(n)} for n in self.pending],
                "impl": self.impl, "file": self.file, "seed": self.seed, "interpret": self.interpret,
                "timeout": self.timeout}

    def _next_case(self) -> tuple[registry.Puzzle, int]:
        """The puzzle being graded and the index of its next case (one past the last when all are done)."""
        number = self.pending[0]
        done, order = len(self.results[number]), self.order[number]
        puzzle = registry.find(number)
        return puzzle, order[done] if done < len(order) else len(puzzle.cases)

    def _fail_next_case(self, reason: str, message: str) -> None:
        """Charge the case that was running (or next) with a failure, and move past it."""
        puzzle, index = self._next_case()
        if index < len(puzzle.cases):
            self.results[puzzle.number].append(result_for(puzzle.cases[index], reason, message))
        if len(self.results[puzzle.number]) >= len(self.order[puzzle.number]) or reason == "timeout":
            self._finish_first()

    def _fail_import(self, reason: str, message: str) -> None:
        self.results[self.pending[0]] = [CaseResult("import", False, reason, message)]
        self._finish_first()

    def run_worker(self, spare: set[int]) -> None:
        """Start a worker on the pending puzzles and follow it until it ends, fails or is stopped."""
        worker = processes.Worker(self.job(), spare)
        phase = "startup"  # see _handle
        killed = False
        try:
            while self.pending:
                # Interpreted kernels count CPU time, with a wall-clock backstop; native ones run on the GPU while the
                # worker waits, so wall time is theirs.
                wall = (WALL_FACTOR if self.interpret else 1) * self.timeout + self.grace
                limit = Limit(self.timeout + self.grace, wall, worker)
                event = worker.next_event(limit)
                _trace(self.interpret, event)
                if event == "timeout":
                    killed = True
                    self._timed_out(phase, limit.why)
                    return
                if event is None:
                    self._ended(phase, worker.close())
                    return
                phase = self._handle(event, phase)
                if self.first_failure and phase == "puzzle" and not self.results[self.pending[0]][-1].passed:
                    killed = True  # this puzzle is decided: the worker goes, and a fresh one takes the next puzzle
                    self._finish_first()
                    return
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
            self._prepare(puzzle)
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
            if self.progress is not None:
                self.progress(puzzle, index, self.results[puzzle.number][-1])
            return "puzzle"
        # done: every case has a result, or the last one ended the puzzle
        results, order = self.results[puzzle.number], self.order[puzzle.number]
        if len(results) < len(order) and not (results and ends_puzzle(results[-1].reason, order[len(results) - 1])):
            raise transfer.Malformed(f"a done event after {len(results)} of {len(order)} cases")
        self.notices[puzzle.number] = [clean_text(one_line(n), NOTICE_CHARS) for n in event["notices"][:MAX_NOTICES]]
        self._finish_first()
        return "between"

    def _prepare(self, puzzle: registry.Puzzle) -> None:
        """Start computing the inputs and references of the puzzle's cases still to run."""
        if self.references is None:
            return
        for index in self.order[puzzle.number][len(self.results[puzzle.number]):]:
            case = puzzle.cases[index]
            if (puzzle.number, index) not in self.prepared and skip_reason(case, self.device, puzzle.number) is None:
                self.prepared[puzzle.number, index] = self.references.submit(prepare, puzzle, case, self.seed)

    def _judge(self, puzzle: registry.Puzzle, index: int, execution: transfer.Execution) -> CaseResult:
        try:
            return judge(puzzle, puzzle.cases[index], self.seed, self.device, execution,
                         self.prepared.pop((puzzle.number, index), None))
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
            # the limit counts the case's GPU compiles too, which the worker bounds a little inside it (gpu_compile)
            self._fail_next_case("timeout", f"stopped after {limit} without an answer: does a loop never end (or a "
                                            "helper call itself), or does the kernel take long to compile for the GPU "
                                            "(a tl.static_range of many steps, unrolled in full)?")
        elif phase == "startup":
            raise Broken(f"the grading process did not start within {limit} (it never said it was ready)")
        else:
            where = "before its first case" if phase == "ready" else "between cases"
            self._fail_next_case("timeout", f"stopped after {limit} without an answer, {where}")

    def _ended(self, phase: str, code: int | None) -> None:
        """The worker's stream ended before the puzzles did."""
        if phase == "startup":
            raise Broken(f"the grading process {processes._describe_exit(code)} before it was ready"
                         + (" (126/127: its Python could not be run)" if code in (126, 127) else ""))
        if phase == "case":
            advice = ("A crash inside triton or torch, or your code ending the process (os._exit, a signal), can "
                      "do this." if self.interpret else "An out-of-bounds access on the GPU, or a crash inside "
                      "triton, can do this: try `--interpret` for a precise report.")
            self._fail_next_case("crashed", f"the grading process {processes._describe_exit(code)} during this case; "
                                            f"the grader survived. {advice}")
        elif phase == "import":
            what = shown(source_path(registry.find(self.pending[0]), self.impl, self.file))
            self._fail_import("error", f"the grading process {processes._describe_exit(code)} while importing {what}")
        elif phase == "puzzle" and code == 0:
            pass  # it ended after a case that lost the GPU (worker/execute.CONTEXT_LOST): a fresh one goes on
        else:  # died between cases, or before the first: report it once
            self.results[self.pending[0]].append(CaseResult("startup", False, "error", f"the grading process "
                                                 f"{processes._describe_exit(code)} before grading this puzzle"))
            self._finish_first()


SMALL_CASE = 1 << 18  # input elements: a case the interpreter runs in about a second


def _small_cases(puzzle: registry.Puzzle) -> list[int]:
    """The indices of a puzzle's cases whose inputs are small (sizes the case's dims give; a graph's count as
    small): the interpreter's checks of a native grading run these, so they cost seconds."""
    small = []
    for index, case in enumerate(puzzle.cases):
        total = 0
        for arg in spec_args(puzzle.spec):
            try:
                total += math.prod(arg.shape(case.dims)) if arg.dtype is not None else 0
            except (KeyError, NameError, TypeError, ValueError):
                continue  # a size the graph sets
        if total <= SMALL_CASE:
            small.append(index)
    return small


def interpreter_problem() -> str | None:
    """Why the interpreter's checks cannot run beside a native grading here (triton 3.6's interpreter with numpy
    2.4 or newer), as the note that says so; None when they can."""
    problems = env.version_problems(env.Mode(True, ""))
    if not problems:
        return None
    return ("the interpreter's checks (bounds, undefined lanes, coverage, budgets, races) were not run beside this "
            f"native grading, so only values were graded: {problems[0]}")


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
    except Exception as exc:  # noqa: BLE001 - whatever a file does to the reading, it is a verdict on that file
        return None, [CaseResult("import", False, "error", f"not graded: the grader could not read {path.name} "
                                 f"({type(exc).__name__}: {clean_text(one_line(str(exc)), 200)}); no kernel of it ran. "
                                 "A file that Python and Triton read plainly is read plainly here: simplify it")], []
    if not kernels.started:
        return None, [result_for(puzzle.cases[0], "not_started", submission.NOT_STARTED)], list(kernels.notes)
    return job, [], list(kernels.notes)


def grade_isolated(puzzles: list[registry.Puzzle], impl: str, file: str | None, seed: int, interpret: bool,
                   timeout: float, mode: str, grace: float = GRACE, capability: tuple[int, int] | None = None,
                   own_launcher: bool = False, progress=None, first_failure: bool = False,
                   on_result=None, workers: int | None = None) -> list[PuzzleResult]:
    """Grade each puzzle in worker processes (one at a time, a fresh one after each failure) and judge here.

    Kernel-only grading is the default for puzzles/ and --file: the judge reads the file's kernels without running
    it, and the worker runs them under the puzzle's own launcher. `own_launcher` (the practice path) and the
    reference solutions import the whole file in the worker and grade its launcher; such a result is not to be
    trusted by a classroom (``PuzzleResult.trusted``). Natively, the interpreter's checks of the same kernels run
    beside the GPU's run, in workers of their own (``joined.combined`` joins the two); a puzzle this GPU cannot run
    (``Puzzle.unsupported_on``; capability: the GPU's, found when None) is graded in the interpreter instead, and
    its report says why. `progress`, if given, is called with (puzzle, case index, CaseResult) as each case is
    judged; `on_result` with each PuzzleResult as soon as its puzzle is decided, in the order of `puzzles`. With
    `first_failure`, a puzzle stops at its first failing case (the grader's own tests). `workers`: how many
    workers of each kind grade side by side natively (``processes.workers_for`` by default). Raises ``Broken``
    when a worker cannot start."""
    file = str(Path(file).resolve()) if file is not None else None  # the worker runs in another directory
    notices: dict[int, list[str]] = {p.number: [] for p in puzzles}
    kernels, decided = _read(puzzles, impl, file, own_launcher, notices)
    modes = _modes(puzzles, interpret, capability, notices)
    references = ThreadPoolExecutor(max_workers=2 if interpret else 4, thread_name_prefix="reference")
    workers = workers or processes.workers_for(interpret)
    gradings = [_Grading(share, impl, file, seed, in_interpreter, timeout, grace, kernels, progress,
                         first_failure=first_failure, references=references)
                for in_interpreter, share in _deal(puzzles, modes, decided, interpret, workers)]
    native = [p for p in puzzles if modes[p.number] == "native" and p.number not in decided]
    checks = [_Grading([p for p in native if p.number in only], impl, file, seed, True, timeout, grace, kernels,
                       only=only, first_failure=first_failure, references=references)
              for only in _checks_dealt(native, workers, notices)]
    processes.become_subreaper()
    spare = processes.descendants(excluded=processes.prestarted_pids())  # the prestarted workers are ours to end
    # A file imported whole (--own-launcher) is untrusted: the grader's files are put back as they were, and a
    # change voids the grade. (Not for puzzles/ or solutions/: whoever edits the grader while grading their own
    # kernel keeps the edit; nor for kernel-only grading, which runs none of the file's Python.)
    runs_code = any(grading.pending for grading in gradings)
    grader_files = processes.snapshot_grader() if file is not None and own_launcher and runs_code else None
    together = Joined(puzzles, gradings, checks, decided, modes, notices, seed,
                      {p.number: shown(source_path(p, impl, file)) for p in puzzles}, own_launcher,
                      on_result if grader_files is None else None)
    stopped_by, tampered = None, []
    try:
        _run_side_by_side([*gradings, *checks], spare)
    except KeyboardInterrupt as exc:  # SIGINT, or SIGTERM as the CLI turns it (show/cli.py)
        stopped_by = exc.args[0] if exc.args else "SIGINT"
    finally:
        references.shutdown(wait=False, cancel_futures=True)
        if grader_files is not None:
            tampered = processes.restore_grader(grader_files)
    done = together.done()
    if tampered:  # this grade was judged by the grader as loaded before; it is void all the same
        for puzzle in done:
            together.cases(puzzle.number).append(CaseResult(
                "grader files", False, "error", f"the submission changed the grader's own files "
                f"({', '.join(tampered[:5])}): they were restored, and this grade is void"))
    assembled = [together.assemble(p) for p in done]
    if stopped_by is not None:
        raise Interrupted(assembled, stopped_by)
    return assembled


def _read(puzzles: list[registry.Puzzle], impl: str, file: str | None, own_launcher: bool,
          notices: dict[int, list[str]]) -> tuple[dict[int, dict], dict[int, list[CaseResult]]]:
    """The kernel jobs of kernel-only grading (the default for puzzles/ and --file), and the results known without
    a worker (a refused or unreadable file, a stub); the notes of the reading go to `notices`."""
    kernels, decided = {}, {}
    if not own_launcher and impl != "solutions":
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
    return kernels, decided


def _deal(puzzles, modes, decided, interpret: bool, workers: int):
    """(in the interpreter?, the puzzles) of each grading: per mode (a worker picks the interpreter or the GPU when
    it starts: TRITON_INTERPRET), the mode's puzzles dealt round to `workers` gradings side by side (natively one
    GPU is shared as gradings side by side share it; in the interpreter each is a core, so by default one)."""
    for in_interpreter in sorted({interpret, *(m == "interpreter" for m in modes.values())}):
        ours = [p for p in puzzles if (modes[p.number] == "interpreter") == in_interpreter and p.number not in decided]
        for share in _shares(ours, workers):
            yield in_interpreter, share


def _checks_dealt(native: list[registry.Puzzle], workers: int, notices: dict[int, list[str]]) -> list[dict]:
    """The interpreter's checks of the native puzzles (a native "Solved" must also be an interpreter "Solved"):
    the small cases dealt round to `workers` interpreters, the first case of each puzzle first, as the `only` of
    each; none, with a notice, where this machine's interpreter cannot run them."""
    skipped = interpreter_problem() if native else None
    if skipped:
        for puzzle in native:
            notices[puzzle.number].append(skipped)
        return []
    small = {p.number: _small_cases(p) for p in native}
    dealt = [{n: cases[share::workers] for n, cases in small.items() if cases[share::workers]}
             for share in range(workers)]
    return [only for only in dealt if only]


def _run_side_by_side(parts: list[_Grading], spare: set[int]) -> None:
    """Run each grading on a thread of its own until all end; raise the first failure (Broken), or the Ctrl-C that
    stopped them, after every worker has been ended."""
    stop = threading.Event()
    threads = [threading.Thread(target=_run_part, args=(part, spare, stop), daemon=True) for part in parts]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():  # a join with a timeout, so that Ctrl-C reaches this thread
                thread.join(0.2)
        for part in parts:
            if part.failure is not None:
                raise part.failure
    finally:
        stop.set()
        processes.kill_descendants(spare, processes.prestarted_pids())
        for thread in threads:
            thread.join()


def _modes(puzzles: list[registry.Puzzle], interpret: bool, capability: tuple[int, int] | None,
           notices: dict[int, list[str]]) -> dict[int, str]:
    """Each puzzle's mode, "interpreter" or "native": natively, a puzzle this GPU cannot run goes to the
    interpreter, and its notices say why (or note what the GPU lacks)."""
    modes = {p.number: "interpreter" if interpret else "native" for p in puzzles}
    if interpret:
        return modes
    capability = capability or env.gpu_capability()
    gpu = env.gpu_label() or f"sm_{capability[0]}{capability[1]}"
    for puzzle in puzzles:
        why = puzzle.unsupported_on(capability)
        if why is not None:
            modes[puzzle.number] = "interpreter"
            notices[puzzle.number].append(f"graded in the interpreter, on the CPU: this GPU, {gpu}, cannot run "
                                          f"puzzle {puzzle.number} natively, as {why}")
        else:
            notices[puzzle.number] += puzzle.gpu_notes(capability)
    return modes


def _shares(puzzles: list[registry.Puzzle], count: int) -> list[list[registry.Puzzle]]:
    """The puzzles dealt round to `count` gradings (so the first puzzles finish first), none empty."""
    return [share for share in (puzzles[start::count] for start in range(count)) if share]


def _run_part(part: _Grading, spare: set[int], stop: threading.Event) -> None:
    """One grading, on a thread of its own; a failure (Broken) is kept for the caller to raise."""
    try:
        part.run(spare, stop)
    except BaseException as exc:
        part.failure = exc
        stop.set()


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
    processes.become_subreaper()
    spare = processes.descendants(excluded=processes.prestarted_pids())  # the prestarted worker is ours to end
    grader_files = processes.snapshot_grader() if file is not None and own_launcher else None
    sent, why, tampered = None, "", []
    worker = processes.Worker(job, spare)
    try:
        sent, why = _map_events(worker, puzzle.number, Limit(timeout + grace, WALL_FACTOR * timeout + grace, worker))
    except (transfer.Malformed, ValueError, TypeError, OverflowError) as exc:
        sent, why = None, f"the case's process sent a malformed message ({exc}): nothing to draw"
    finally:
        code = worker.close(kill=True)
        processes.kill_descendants(spare)
        if grader_files is not None:
            tampered = processes.restore_grader(grader_files)
    if tampered:
        return None, (f"the submission changed the grader's own files ({', '.join(tampered[:5])}): they were "
                      "restored, and nothing it recorded is drawn")
    if sent is None and not why:
        why = f"the case's process {processes._describe_exit(code)} before it sent its record back: nothing to draw"
    return sent, why


def _map_events(worker: processes.Worker, number: int, limit: Limit) -> tuple[dict | None, str]:
    """Follow a map job's events: (the maps, '') or (None, why not); (None, '') when the worker ended early."""
    while True:
        event = worker.next_event(limit)
        if event == "timeout":
            return None, (f"stopped after {limit.why} without an answer: does a loop never end (or a helper call "
                          "itself)? (nothing recorded came back)")
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
