"""Run a case: the worker's half of grading, beside the kernels.

``execute`` builds the inputs and calls the launcher under the interpreter hook and a time limit. From the
access record it finds whether the launcher started, ran, stayed in bounds, stored where it returned, raced and
kept to the budgets; it sends these findings, the outputs' bytes and the inputs' digests as plain data
(``grader.transfer``). The judge (``grader.judge.verdict``) does the rest in the grader's own process.
"""

from __future__ import annotations

import contextlib
import linecache
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable

import numpy as np
import torch

from grader import coach, paths, transfer
from grader.course import budgets
from grader.course.cases import Case, as_list, make_inputs, spec_args
from grader.course.puzzle import skip_reason
from grader.course.registry import Puzzle
from grader.env import DEFAULT_TIMEOUT
from grader.worker import (
    compiler_advice,
    compose,
    gpu_compile,
    guards,
    instrument,
    launcher_guard,
    pipelining,
    program_order,
    ttir,
)
from grader.worker.bounds_hint import bounds_hint

# Stored into a fresh output on the GPU before the launcher allocates it: a NaN with a payload
# no arithmetic produces, so elements that still hold it were never written.
POISON_BITS = guards.POISON_BITS


# False in the CLI's worker, which no terminal reaches (its own session): a KeyboardInterrupt there is raised by the
# graded code, and reported as its error; in a notebook, Ctrl-C stops grading.
INTERACTIVE = True


class CaseTimeout(BaseException):
    """Raised by the alarm; a BaseException so that no `except Exception` swallows it.
    Its argument is where the learner's code was when time ran out."""


# -- time limit ---------------------------------------------------------------------------------

@contextlib.contextmanager
def time_limit(seconds: float | None, cpu: bool = True):
    """Raise CaseTimeout in this thread after `seconds` of this process's CPU time (main thread on Unix; else no
    limit). CPU time, not wall time: another job on the machine slows a correct kernel down, never its count.
    With `cpu` False (a native run, whose kernels run on the GPU while this process waits) wall time counts."""
    usable = seconds and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def on_alarm(signum, frame):
        raise CaseTimeout(_learner_line(frame))

    which, number = (signal.ITIMER_PROF, signal.SIGPROF) if cpu else (signal.ITIMER_REAL, signal.SIGALRM)
    previous = signal.signal(number, on_alarm)
    signal.setitimer(which, seconds)
    try:
        yield
    finally:
        signal.setitimer(which, 0)
        signal.signal(number, previous)


# -- explaining a learner's exception -------------------------------------------------------------

_LIBRARY_DIRS = tuple(
    os.path.dirname(os.path.abspath(m.__file__)) + os.sep
    for m in (torch, contextlib)  # torch, the standard library
) + (str(paths.ROOT / "grader") + os.sep,)  # the grader


def _library_dirs() -> tuple[str, ...]:
    """Folders whose frames are not the learner's: torch, the standard library, the grader, triton, and the
    puzzle's own code where kernel-only grading put it (grader.worker.compose)."""
    from grader.worker import compose

    dirs = [*_LIBRARY_DIRS, *compose.GIVEN_FOLDERS]
    triton = sys.modules.get("triton")
    if triton is not None:
        dirs.append(os.path.dirname(os.path.abspath(triton.__file__)) + os.sep)
    return tuple(dirs)


def _learner_line(frame) -> str:
    """'p03.py:15: while start < T:' for the innermost frame of the learner's code, or ''."""
    where, code = instrument.learner_line(frame, _library_dirs() + (os.path.dirname(np.__file__) + os.sep,))
    return f"{where}: {code}" if where != "?" else ""


def _chain(exc: BaseException) -> list[BaseException]:
    """exc and its causes, innermost first (triton wraps a kernel's error once or twice)."""
    chain, seen = [exc], {id(exc)}
    while chain[-1].__cause__ is not None and id(chain[-1].__cause__) not in seen:
        chain.append(chain[-1].__cause__)
        seen.add(id(chain[-1]))
    return chain[::-1]


def _text_of(error: BaseException) -> str:
    """str(error), or '<unprintable ValueError>' when its __str__ raises (a submission can make it)."""
    try:
        text = str(error)
    except Exception:
        return f"<unprintable {type(error).__name__}>"
    return text.strip() or type(error).__name__


def explain_exception(exc: BaseException) -> str:
    """'TypeError: ...' plus the learner's own line(s) where it happened, and advice where a cause is common."""
    chain = _chain(exc)
    root = chain[0]
    text = _text_of(root)
    lines = text.splitlines()
    if len(lines) > 14:  # compiler errors quote a lot of source; keep the head and the verdict
        lines = lines[:10] + ["  ..."] + lines[-3:]
    message = f"{type(root).__name__}: " + "\n  ".join(lines)
    library = _library_dirs()
    frames = []
    for error in chain:  # the innermost error that passed through the learner's code says where
        frames = [f for f in traceback.extract_tb(error.__traceback__)
                  if not os.path.abspath(f.filename).startswith(library) and not f.filename.startswith("<")]
        if frames:
            break
    for frame in frames[-2:]:
        message += f"\n  at {instrument.location(frame.filename, frame.lineno)}: {frame.line}"
    if isinstance(root, SyntaxError) and root.lineno:
        message += f"\n  at {instrument.location(root.filename or '?', root.lineno)}: {(root.text or '').strip()}"
    advice = compiler_advice.common_advice(text + "".join(f"\n{frame.line}" for frame in frames[-1:]))
    if isinstance(root, SystemExit):
        advice.append("your code called sys.exit() or exit(): a launcher returns its output instead")
    message += "".join(f"\n  {a}" for a in advice if a)
    return message


# -- one case -------------------------------------------------------------------------------------

ILLEGAL_ADDRESS = "illegal memory access: a load or store outside every tensor"
# True once a case lost the GPU (an illegal address leaves the CUDA context unusable): the worker then ends, and
# the grader runs the next case in a fresh one.
CONTEXT_LOST = False


def _lost_the_gpu(exc: BaseException) -> bool:
    """Whether an error means the CUDA context is gone: an illegal address, a misaligned one, a kernel fault."""
    text = _text_of(exc).lower()
    return type(exc).__name__ == "AcceleratorError" or any(clue in text for clue in (
        "illegal memory access", "misaligned address", "unspecified launch failure", "illegal instruction",
        "device-side assert", "cuda error"))


def _written_natively(out: torch.Tensor) -> torch.Tensor | None:
    if out.dtype != torch.float32 or not out.is_cuda:
        return None
    return (out.view(torch.int32) != guards.poison_bits()).cpu()


def _accesses(recorder) -> list[dict]:
    """A row per tensor a kernel touched; regions of one name (views of one output, z[0], z[1], ...) in one row."""
    rows: dict[str, dict] = {}
    for region in recorder.regions:
        if region.loads or region.stores or region.atomics:
            row = rows.setdefault(region.label, {"name": region.label, "params": [], "elements": 0, "read": 0,
                                                 "written": 0, "atomics": 0})
            row["params"] += [p for p in region.params if p not in row["params"]]
            row["elements"] += region.numel
            row["read"] += region.loads
            row["written"] += region.stores
            row["atomics"] += region.atomics
    for row in rows.values():
        row["read"] /= row["elements"]
        row["written"] /= row["elements"]
    return list(rows.values())


def compiled_ahead(puzzle: Puzzle, launcher: Callable, case: Case, seed: int, timeout: float | None) -> tuple | None:
    """Kernel-only grading in the interpreter, before an earlier case runs: this case's inputs, made now (for
    ``execute``'s `made`), and its kernels' GPU compile started on the helper (``gpu_compile.compile_ahead``), so
    that it runs while the interpreter runs the earlier case. The case still runs only once its kernels compiled
    (``_compiled_first`` takes the outcome). None where anything goes wrong: ``execute`` makes them again and says
    what."""
    if skip_reason(case, "cpu", puzzle.number):
        return None
    gpu_compile.start_ahead()
    try:
        made = make_inputs(puzzle.spec, case, seed)
        _, args, _ = _placed(puzzle, case, seed, made[0], "cpu")
        with time_limit(timeout), instrument.dry_run() as launches:
            launcher(*args, **case.blocks)
    except (Exception, CaseTimeout):
        return None
    gpu_compile.compile_ahead(puzzle, launches, gpu_compile.case_budget(timeout))
    return made


def _compiled_first(puzzle: Puzzle, launcher: Callable, args: list, case: Case, timeout: float | None,
                    budget: gpu_compile.Budget) -> transfer.Outcome | None:
    """Kernel-only grading: compile the case's kernels for the GPU before the interpreter runs them. The puzzle's
    launcher runs with its kernels' launches noted, not run; each is compiled (grader.worker.gpu_compile, which
    caches them, so the check after the run costs nothing). The compiler's report as an outcome, or None; a compile
    past the case's time is a timeout. A launcher that fails here fails the same way in the real run, which reports
    it."""
    try:
        with time_limit(timeout), instrument.dry_run() as launches:
            launcher(*args, **case.blocks)
    except (Exception, CaseTimeout):
        return None
    try:
        problem = gpu_compile.check(puzzle, launches, budget) if launches else None
    except gpu_compile.CompileTimeout as exc:
        return transfer.Outcome("timeout", str(exc))
    return transfer.Outcome("gpu_compile", problem) if problem else None


def execute(puzzle: Puzzle, launcher: Callable, case: Case, seed: int, device: str,
            timeout: float | None = DEFAULT_TIMEOUT, keep: list | None = None,
            trusted_launcher: bool = False, made: tuple | None = None) -> transfer.Execution:
    """The worker's half of a case: build the inputs, call the launcher under the interpreter hook and a time
    limit, and collect what it returned and what its kernels did, as plain data (``transfer``). What goes wrong
    on the way (an error, a timeout, an out-of-bounds access, a refused launch) is an early failing Outcome;
    a race or a budget, read from the access record kept here, is a failing Outcome the judge reports in turn.
    The expected values are never computed here: ``judge`` does that, in the grader's own process.
    With `keep` (a list), the access record is appended to it, with a map per tensor (grader.show.memory_map).
    With `trusted_launcher` (kernel-only grading: the launcher is the puzzle's own), the kernels are compiled for
    the GPU before they run, and the launcher guard, which holds a learner's launcher to the lesson, is not needed.
    `made`: the case's ``make_inputs(puzzle.spec, case, seed)``, where it was built beforehand. Each phase is a
    function below, in the order they run."""
    if skip_reason(case, device, puzzle.number):
        return transfer.Execution(early=transfer.Outcome("skipped"))
    started = time.perf_counter()
    inputs, dims = made if made is not None else make_inputs(puzzle.spec, case, seed)
    fenced, args, on_device = _placed(puzzle, case, seed, inputs, device)
    budget = gpu_compile.case_budget(timeout)  # the case's compiles, before the run, during it and after, together

    def stop(outcome: transfer.Outcome) -> transfer.Execution:
        return transfer.Execution(early=outcome, **_record(recorder, puzzle), seconds=time.perf_counter() - started)

    if trusted_launcher and device == "cpu":
        problem = _compiled_first(puzzle, launcher, args, case, timeout, budget)
        if problem:
            return transfer.Execution(early=problem, seconds=time.perf_counter() - started)
    guard = contextlib.nullcontext() if trusted_launcher else launcher_guard.guard(puzzle, case, device)

    with instrument.recording(maps=keep is not None) as recorder:
        numel = _watch(recorder, puzzle, case, inputs, dims, on_device, keep, budget) if recorder is not None else {}
        allocating = guards.allocations(fenced) if fenced is not None else guards.poisoned_allocations()
        try:
            out, again, native_launches = _run(launcher, args, case, device, timeout, allocating, guard)
        except BaseException as exc:  # the learner's bug (SystemExit and BaseException subclasses too), reported
            if isinstance(exc, KeyboardInterrupt) and INTERACTIVE:
                raise  # Ctrl-C stops grading in a notebook
            return stop(_failed_run(exc, puzzle, recorder, device, timeout, dims))

    problem = _after_the_run(puzzle, recorder, fenced, out, native_launches, budget)
    if problem is not None:
        return stop(problem)
    with torch._C.DisableTorchFunctionSubclass():  # a tensor subclass's overrides cannot lie about its data
        outs = [value.as_subclass(torch.Tensor) if isinstance(value, torch.Tensor) else value
                for value in as_list(out)]
    written, deferred = _written(puzzle, recorder, outs, trusted_launcher)
    accesses = _accesses(recorder) if recorder is not None else []
    if deferred is None and again is not None:
        deferred = _differs_from_the_first_run(puzzle, outs, as_list(again))
    if deferred is None and recorder is not None and recorder.race is not None:
        # before the values: a lost update looks like a typo
        deferred = transfer.Outcome("race", recorder.race.message(), accesses=accesses)
    late = _late_budget(puzzle, case, recorder, numel, dims, accesses) \
        if recorder is not None and deferred is None else None
    written += [None] * (len(outs) - len(written))
    return transfer.Execution(
        returned=[transfer.Returned.of(value, flags) for value, flags in zip(outs, written)], deferred=deferred,
        late=late, inputs_after={name: transfer.digest(value) for name, value in on_device.items()
                                 if isinstance(value, torch.Tensor)},
        **_record(recorder, puzzle), seconds=time.perf_counter() - started)


def _vary_by_case(puzzle: Puzzle, case: Case, seed: int) -> None:
    """What changes from case to case so that a kernel cannot tell the grader from a GPU. The first case's poison is
    the NaN that reports name (an output read before it is written, a lane loaded with no other=); every other
    case's is a number, so that a kernel cannot test for the NaN (x != x) instead; a persistent kernel's
    NUM_PROGRAMS in the interpreter is the case's own (compose.interpreter_programs); and so is the order a recorded
    launch runs its programs in (program_order)."""
    names = [c.name for c in puzzle.cases]
    index = names.index(case.name) if case.name in names else 0
    guards.poison_finite(index % 2 == 1, seed * 1000 + index)
    compose.interpreter_programs(index)
    program_order.reseed(seed * 1000 + index)


def _placed(puzzle: Puzzle, case: Case, seed: int, inputs: dict,
            device: str) -> tuple[guards.Guards | None, list, dict]:
    """The inputs as the launcher gets them: (the guard zones, or None on the CPU; the arguments in the spec's order;
    the same by name). Copies, even on the CPU: the originals stay untouched, to catch a kernel that writes into its
    inputs. Natively each sits between guard zones, and so does every tensor the launcher makes
    (grader.worker.guards)."""
    _vary_by_case(puzzle, case, seed)
    fenced = guards.Guards() if device != "cpu" else None
    args = [inputs[a.name].to(device, copy=True) if a.dtype is not None else inputs[a.name]
            for a in spec_args(puzzle.spec)]
    if fenced is not None:
        args = [fenced.place(value, a.name) if isinstance(value, torch.Tensor) else value
                for a, value in zip(spec_args(puzzle.spec), args)]
    return fenced, args, {a.name: v for a, v in zip(spec_args(puzzle.spec), args)}


def _watch(recorder, puzzle: Puzzle, case: Case, inputs: dict, dims: dict, on_device: dict,
           keep: list | None, budget: gpu_compile.Budget) -> dict[str, int]:
    """Set the access record up for this case: the tensors it watches, the tl.dot checks, the tile limit and (with no
    map) the watchdog that stops a kernel once over budget. The inputs' sizes, which the budgets read."""
    if keep is not None:
        keep.append(recorder)
    for name, value in on_device.items():
        if isinstance(value, torch.Tensor):
            recorder.watch(name, value)
    numel = {k: v.numel() for k, v in inputs.items() if isinstance(v, torch.Tensor)}
    recorder.dots_16bit = any(isinstance(b, budgets.Dots) for b in puzzle.budgets)  # see budgets.Dots
    if recorder.dots_16bit:  # dot liveness by perturbing each tl.dot's result (instrument.DotShadows)
        recorder.shadows = instrument.DotShadows()
    recorder.tile_limit = budgets.tile_limit(puzzle.lesson_blocks, case.blocks, dims)
    # the GPU compile of a launcher's own kernels, checked after the run, runs in the helper beside the run; the
    # compiles started launch by launch and the check's spend from one budget, the case's
    gpu_compile.start_ahead()
    recorder.on_launch = lambda launch: gpu_compile.compile_ahead(puzzle, [launch], budget)
    if keep is None:  # a map shows the whole run (the time limit still holds), and its budget at the end
        sizes = puzzle.sizes_for_budgets(case.blocks, dims)
        recorder.watchdog = lambda: budgets.exceeded_so_far(puzzle.budgets, recorder, numel, sizes)
    return numel


def _run(launcher: Callable, args: list, case: Case, device: str, timeout: float | None, allocating, guard):
    """Call the launcher (natively twice for a case that repeats) under the time limit: (what it returned, what the
    second call returned or None, the compiled kernels that ran natively)."""
    # The GPU computes inf - inf = nan silently; so does the interpreter, minus numpy's warnings.
    # The guard zones' mode is entered first, so the launcher guard (inside it) judges the launcher's own
    # calls, never the copies that place a tensor between its zones.
    compiled = _compiled_launches() if device != "cpu" else contextlib.nullcontext([])
    with time_limit(timeout, cpu=device == "cpu"), np.errstate(all="ignore"), allocating, guard, \
            compiled as native_launches:
        out = launcher(*args, **case.blocks)
        again = launcher(*args, **case.blocks) if case.repeat and device != "cpu" else None
        if device != "cpu":
            torch.cuda.synchronize()
    return out, again, native_launches


def _failed_run(exc: BaseException, puzzle: Puzzle, recorder, device: str, timeout: float | None,
                dims: dict) -> transfer.Outcome:
    """The early outcome of a launcher that raised: a refused launch, a timeout, a stub, a lost GPU, a kernel stopped
    over budget or out of bounds, or the learner's error, explained."""
    if isinstance(exc, launcher_guard.Refused):
        return transfer.Outcome("launcher", str(exc))
    if isinstance(exc, CaseTimeout):
        where = f"\n  it was running {exc.args[0]}" if exc.args and exc.args[0] else ""
        return transfer.Outcome("timeout", f"stopped after {timeout:g} s of CPU time: does a loop never end (or a "
                                           f"helper call itself)?{where}",
                                accesses=_accesses(recorder) if recorder is not None else [])  # the counts reached
    if isinstance(exc, NotImplementedError):
        said = _text_of(exc)  # the stub's own words, if any (and no crash if its __str__ raises)
        return transfer.Outcome("not_started",
                                "not implemented yet" + ("" if said == type(exc).__name__ else f": {said}"))
    if isinstance(exc, KeyboardInterrupt):  # the worker has no terminal: the graded code raised it
        return transfer.Outcome("error", explain_exception(exc))
    if device != "cpu" and _lost_the_gpu(exc):
        global CONTEXT_LOST
        CONTEXT_LOST = True  # the worker ends after this case; a fresh one runs the next
        return transfer.Outcome("out_of_bounds",
                                f"{ILLEGAL_ADDRESS} (the GPU said: {_text_of(exc).splitlines()[0][:200]})",
                                hint="run it in the interpreter (--interpret) for the tensor, lanes and line: "
                                     "python -m grader N --interpret")
    if recorder is not None and recorder.over_budget is not None:
        return transfer.Outcome("budget", f"{recorder.over_budget}\n  (the kernel was stopped as soon as it went over "
                                          "budget; the counts are those reached then)", accesses=_accesses(recorder))
    if recorder is not None and recorder.violation is not None:
        return transfer.Outcome("out_of_bounds", recorder.violation.message(),
                                hint=bounds_hint(recorder.violation, puzzle, dims), accesses=_accesses(recorder))
    return transfer.Outcome("error", explain_exception(exc))


def _after_the_run(puzzle: Puzzle, recorder, fenced: guards.Guards | None, out,
                   native_launches: list, budget: gpu_compile.Budget) -> transfer.Outcome | None:
    """What ends a case that ran to its end before its outputs are looked at: a sum kept in 16 bits on the GPU, no
    store at all, a guard zone written, a kernel that does not compile for the GPU, a load the GPU compiler makes
    asynchronous of what its launch stored before (grader.worker.pipelining). None when there is none; then the
    record knows which tl.dots the GPU keeps (budgets.Dots counts those)."""
    problem = _sums_in_16_bits(native_launches)  # the interpreter's hook refused them as they ran
    if problem:
        return transfer.Outcome("error", problem)
    if recorder is not None and not any(r.stores or r.atomics for r in recorder.regions):
        return transfer.Outcome("not_started", "not implemented yet (no kernel stored anything)")
    if fenced is not None:
        for value, name in zip(as_list(out), puzzle.outputs):
            if isinstance(value, torch.Tensor):
                fenced.rename(value, name)
        trampled = fenced.trampled()
        if trampled:
            return transfer.Outcome("out_of_bounds", "out-of-bounds store on the GPU: the guard zone around a tensor "
                                                     f"was written ({'; '.join(trampled)})",
                                    hint="a store's mask lets lanes past the end of the tensor (or before its start) "
                                         "through; --interpret names the tensor, the lanes and the line")
    if recorder is not None:
        try:
            problem = gpu_compile.check(puzzle, recorder.launches, budget)
        except gpu_compile.CompileTimeout as exc:
            return transfer.Outcome("timeout", str(exc))
        if problem:
            return transfer.Outcome("gpu_compile", problem)
        recorder.kept_dots = gpu_compile.dot_lines(recorder.launches)  # for budgets.Dots: the dots the GPU keeps
        problem = pipelining.stale_load(recorder, gpu_compile.pipelined_lines)  # a load the GPU issues early
        if problem:
            return transfer.Outcome("race", problem, accesses=_accesses(recorder))
    return None


def _written(puzzle: Puzzle, recorder, outs: list, trusted_launcher: bool) -> tuple[list, transfer.Outcome | None]:
    """Which elements of each output a kernel wrote (a boolean tensor each; None for an empty output or where none
    is known), and a bad_output outcome for the first output no kernel stored into (the list stops there).
    Coverage is looked at only for the spec's number of tensors; the judge refuses anything else first."""
    written: list = []
    if len(outs) != len(puzzle.outputs) or not all(isinstance(value, torch.Tensor) for value in outs):
        return written, None
    for name, value in zip(puzzle.outputs, outs):
        if recorder is None or value.numel() == 0:  # an empty output (a graph with no edge) has nothing to write
            written.append(_written_natively(value) if value.numel() else None)
            continue
        found = recorder.stored_view(value)  # the tensor, or a view or slice of a buffer a kernel stored into
        if found is None:
            return written, transfer.Outcome("bad_output", _never_stored(name, recorder, trusted_launcher),
                                             accesses=_accesses(recorder))
        region, flags = found
        for part in recorder.parts_of(value) or [region]:  # the tensor, or the views of it kernels wrote
            if not part.given:  # an input the kernel wrote its result into keeps its name (input_modified)
                part.label = name
        written.append(torch.from_numpy(flags))
    return written, None


def _never_stored(name: str, recorder, trusted_launcher: bool) -> str:
    """The message for an output no kernel stored into, with what the kernels stored into instead."""
    if trusted_launcher:  # the puzzle's own launcher returned it: the kernels never stored into it
        labels = [r.label for r in recorder.regions if r.stores or r.atomics]
        where = f" (they stored into {', '.join(labels)} only)" if labels else ""
        return (f"no kernel stored into {name} in this case{where}: every output element must be written by a "
                "kernel's tl.store, also where there is nothing to sum (an empty graph, a row with no key: store "
                "zeros), so check the conditions around the store")
    stored = [r.describe() for r in recorder.regions if r.stores or r.atomics]
    where = f" (your kernel stored into {', '.join(stored)}: return that tensor)" if stored else ""
    return (f"no kernel stored into the tensor you returned as {name}{where}: every output element must be written "
            "by a kernel's tl.store")


def _late_budget(puzzle: Puzzle, case: Case, recorder, numel: dict, dims: dict,
                 accesses: list) -> transfer.Outcome | None:
    """The first budget the kernels broke, read here, beside them (the tl.dot budget asks which dots survived their
    compilation); the judge reports it only if the values are right and the inputs intact. None if none. Last, a
    store into an input that the kernel put back (the inputs look intact): an input is no scratch space
    (Recorder.input_store)."""
    problem = budgets.wide_tile(puzzle.lesson_blocks, case.blocks, recorder)  # read at trace time
    if problem:
        return transfer.Outcome("budget", problem, accesses=accesses)
    for budget in puzzle.budgets:  # numel: the inputs' sizes, as the watchdog had them
        problem = budget.check(recorder, numel, puzzle.sizes_for_budgets(case.blocks, dims))  # and block sizes
        if problem:
            return transfer.Outcome("budget", problem, accesses=accesses)
    if recorder.input_store is not None:
        return transfer.Outcome("input_modified", recorder.input_store_message(), accesses=accesses)
    return None

@contextlib.contextmanager
def _compiled_launches():
    """On a GPU: yield a list that collects the compiled kernel of every launch inside the block (JITFunction.run,
    stable from 3.6 to 3.9), whose TTIR _sums_in_16_bits reads."""
    from triton.runtime.jit import JITFunction

    launches, run = [], JITFunction.run

    def keep(self, *args, **kwargs):
        kernel = run(self, *args, **kwargs)
        if not kwargs.get("warmup") and kernel is not None:
            launches.append(kernel)
        return kernel

    JITFunction.run = keep
    try:
        yield launches
    finally:
        JITFunction.run = run


def _sums_in_16_bits(kernels) -> str:
    """On a GPU, where the interpreter's hook (instrument.SumIn16Bit) cannot look: the first sum kept in 16 bits in
    the TTIR of the kernels that ran, said as the interpreter says it; '' if none."""
    for kernel in kernels:
        text = (getattr(kernel, "asm", None) or {}).get("ttir", "")
        found = ttir.sums_in_16_bits(text) if isinstance(text, str) else []
        if found:
            what, where = found[0]
            line = ""
            if where is not None:
                line = f"\n  at {instrument.location(*where)}: {linecache.getline(*where).strip()}"
            return f"SumIn16Bit: {what}. {instrument.SUM_16BIT_ADVICE}{line}"
    return ""


def _differs_from_the_first_run(puzzle: Puzzle, first: list, second: list) -> transfer.Outcome | None:
    """A case run twice natively (``Case.repeat``): the first output whose bits differ between the runs, as a
    failing outcome; None when every output is the same bits (the judge checks their count and shapes)."""
    for name, one, two in zip(puzzle.outputs, first, second):
        if not (isinstance(one, torch.Tensor) and isinstance(two, torch.Tensor) and one.shape == two.shape):
            return None
        bytes_one = one.detach().cpu().contiguous().view(torch.uint8).reshape(one.numel(), -1)
        bytes_two = two.detach().cpu().contiguous().view(torch.uint8).reshape(two.numel(), -1)
        changed = int((bytes_one != bytes_two).any(dim=1).sum()) if one.numel() else 0
        if changed:
            return transfer.Outcome(
                "nondeterministic", f"{name} differs between two runs on the same inputs ({changed} of "
                                    f"{one.numel()} elements): the same inputs must give the same bits",
                hint="an order the GPU picks decides a sum: atomics adding into one element from many programs "
                     "(float addition is not associative). Give each output element one program that sums its "
                     "terms in a fixed order")
    return None


def _record(recorder, puzzle: Puzzle) -> dict:
    """What the judge needs of the access record: whether there is one, the programs, the note, the rows and the
    coach's figures."""
    if recorder is None:
        return {}
    note = "\n".join(text for text in (recorder.mask_fix_note(), recorder.swap_note(), recorder.order_note(),
                                        _int32_offsets_note(puzzle, recorder)) if text)
    return {"recorded": True, "programs": recorder.programs, "note": note,
            "accesses": _accesses(recorder), "coach": coach.figures(recorder, puzzle.outputs).to_json()}


def _int32_offsets_note(puzzle: Puzzle, recorder) -> str:
    """A warning line where the puzzle's large problems need int64 offsets and a kernel multiplies int32 ones by a
    size (grader.worker.ttir.int32_offsets); '' otherwise. No case is large enough to wrap them, so it is no verdict."""
    if not puzzle.int64_offsets:
        return ""
    lines = gpu_compile.int32_offset_lines(recorder.launches)
    if not lines:
        return ""
    where = "".join(f"\n  at {instrument.location(*line)}: {linecache.getline(*line).strip()}" for line in lines[:3])
    return ("warning: int32 offsets: a row index times the row length in int32 wraps around past 2**31 elements, "
            "which the docstring's large problems pass (no case here is that large). Multiply in int64: "
            f"rows.to(tl.int64) * T{where}")


def mode_notices(device: str) -> list[str]:
    """Notes for a puzzle's report once its cases ran: a hook the interpreter lacks, and what the launcher guard
    changed (which autotune config the interpreter ran)."""
    ok, why = instrument.status()
    return ([why] if device == "cpu" and not ok else []) + launcher_guard.take_notices()
