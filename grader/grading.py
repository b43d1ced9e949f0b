"""Grade a launcher on a puzzle's cases.

One case has two halves, which the CLI runs in two processes (``grader.runner``):
- ``execute`` (in the worker, beside the learner's code) builds the inputs and calls the launcher
  under the interpreter hook and a time limit. From the access record it finds whether the launcher
  started, ran, stayed in bounds, stored where it returned, raced and kept to the budgets; it sends
  these findings, the outputs' bytes and the inputs' digests as plain data (``grader.transfer``).
- ``judge`` (in the grader's process) rebuilds the inputs from the seed, computes the float64
  reference and checks that the output has the right kind, every element was written, the values
  are right and the inputs were left alone, reporting the worker's findings in their turn.
``run_case`` composes them in one process (notebooks, the grader's tests), through the same data.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import torch

from . import budgets, checker, coach, env, gpu_compile, instrument, launcher_guard, safe_output, transfer
from .cases import Case, as_list, make_inputs, reference, spec_args, spec_outputs
from .env import DEFAULT_TIMEOUT
from .puzzle import BF16_CAPABILITY
from .registry import BY_NUMBER, Puzzle

# Stored into a fresh output on the GPU before the launcher allocates it: a NaN with a payload
# no arithmetic produces, so elements that still hold it were never written.
POISON_BITS = 0x7FC0DEAD


class CaseTimeout(BaseException):
    """Raised by the alarm; a BaseException so that no `except Exception` swallows it.
    Its argument is where the learner's code was when time ran out."""


@dataclass
class CaseResult:
    name: str
    passed: bool
    reason: str  # passed, not_started, error, gpu_compile, launcher, out_of_bounds, bad_output, never_written,
    #              mismatch, race, input_modified, budget, timeout, crashed, skipped
    message: str = ""
    hint: str | None = None
    errors: list[dict] = field(default_factory=list)
    dims: dict = field(default_factory=dict)
    blocks: dict = field(default_factory=dict)
    about: str = ""
    accesses: list[dict] = field(default_factory=list)
    programs: int = 0  # programs launched, when the interpreter hook counted them
    seconds: float = 0.0
    coach: dict | None = None  # the performance coach's figures (grader.coach.Figures), when there is a record

    def to_json(self) -> dict:
        """JSON-ready: learner strings cleaned and non-finite floats spelt as strings (safe_output)."""
        return safe_output.jsonable(asdict(self))

    @classmethod
    def from_json(cls, data: dict) -> CaseResult:
        return cls(**data)


def result_for(case: Case, reason: str, message: str = "", **extra) -> CaseResult:
    return CaseResult(case.name, reason == "passed", reason, message, dims=dict(case.dims),
                      blocks=dict(case.blocks), about=case.about, **extra)


# -- time limit ---------------------------------------------------------------------------------

@contextlib.contextmanager
def time_limit(seconds: float | None):
    """Raise CaseTimeout in this thread after `seconds` (main thread on Unix; else no limit)."""
    usable = seconds and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def on_alarm(signum, frame):
        raise CaseTimeout(_learner_line(frame))

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- explaining a learner's exception -------------------------------------------------------------

_LIBRARY_DIRS = tuple(
    os.path.dirname(os.path.abspath(m.__file__)) + os.sep
    for m in (torch, contextlib, instrument)  # torch, the standard library, the grader
)


def _library_dirs() -> tuple[str, ...]:
    dirs = list(_LIBRARY_DIRS)
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


# Messages from triton and the driver that have a common cause in a learner's kernel: (clue, advice).
_ADVICE = (
    ("Both operands must be same dtype",
     "tl.dot takes two blocks of one dtype: cast one, e.g. tl.dot(p.to(v.dtype), v). Keep both 16-bit, so the "
     "GPU uses tensor cores (a float32 tl.dot runs as TF32)."),
    ("PassManager::run failed",
     "The Triton compiler itself failed; the assertion it printed names the pass. A known trigger in triton 3.6 "
     "(OptimizeThreadLocality): a loop's reduced result used directly by two later loops. Broadcast it once, "
     "e.g. `m = row_max[:, None]`, and use m in both."),
    ("active drivers",
     "This kernel was defined before `import grader` switched Triton to its interpreter (no GPU here). Run the "
     "cell with `import grader` first, then re-run the cell that defines your kernel."),
    ("Block pointers have been removed",
     "triton 3.9 removed block pointers (tl.make_block_ptr, tl.advance): describe the matrix once with "
     "tl.make_tensor_descriptor(base, shape=[M, K], strides=[K, 1], block_shape=[BM, BK]) and load with "
     "desc.load([row, col]); past the edge it gives zeros, as boundary_check did (puzzle 11's docstring shows it). "
     "Block pointers still work on triton 3.6."),
    ("block offset start must be 16-byte aligned",
     "A tensor descriptor's offsets are in elements, not blocks: desc.load([pid_m * BM, k]), not "
     "desc.load([pid_m, k]); along the last dimension an offset must also be a multiple of 16 bytes (8 float16 or "
     "4 float32 elements)."),
    ("input and other must have equal reduction dimensions",
     "tl.dot multiplies an [M, K] block by a [K, N] block: the first's last dimension must equal the second's "
     "first. If a block came from a tensor descriptor, check the block_shape it was made with (b's is [BK, BN]); "
     "for q k^T, transpose k with tl.trans(k)."),
    ("arange's arguments must be of type tl.constexpr",
     "tl.arange's bounds are compile-time constants: use a block size (`tl.arange(0, B0)`, a tl.constexpr "
     "parameter) and mask the lanes past the size: `offsets < N0`. A size such as N0 is a run-time value."),
    ("arange's range must be a power of 2",
     "tl.arange(0, n) needs n a power of two (16, 32, 64, ...): round the block up (the launcher can use "
     "triton.next_power_of_2) and mask the lanes past the real size."),
    ("Shape element",
     "A block's shape (tl.zeros, tl.full, tl.arange) must be made of tl.constexpr values: a run-time size such "
     "as H or D cannot shape a block. Use the padded constexpr sizes the launcher passes (e.g. H_PAD, D_PAD = "
     "next powers of two) and mask the padding: tl.zeros([H_PAD, D_PAD], dtype=tl.float32)."),
    ("Cannot make_shape_compatible",
     "Two blocks of different shapes meet on this line: check the axis of tl.sum / tl.max (axis=1 reduces a "
     "[B0, B1] tile to [B0]) and the [:, None] / [None, :] broadcasts."),
    ("Expected pointer argument to have shape",
     "The value stored has a different shape from the block of pointers: check the axis of the reductions "
     "that made it."),
    ("out of bounds for shape",
     "tl.max(x, axis) and tl.sum(x, axis) reduce along an axis; for the element-wise maximum of two blocks use "
     "tl.maximum(a, b)."),
)


def _did_you_mean(text: str) -> str | None:
    """For a misspelt tl.something (in an error's text), the closest real name."""
    found = re.search(r"module '(triton\.language)' has no attribute '(\w+)'", text)
    language = sys.modules.get("triton.language")
    if not found or language is None:
        return None
    close = difflib.get_close_matches(found[2], [n for n in dir(language) if not n.startswith("_")], n=1)
    return f"did you mean tl.{close[0]}?" if close else None


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
    advice = [a for clue, a in _ADVICE if clue in text] + [_did_you_mean(text)]
    if isinstance(root, SystemExit):
        advice.append("your code called sys.exit() or exit(): a launcher returns its output instead")
    message += "".join(f"\n  {a}" for a in advice if a)
    return message


# -- one case -------------------------------------------------------------------------------------

def _poison_allocator(shapes: list[tuple[int, ...]], device: str) -> None:
    """Leave blocks full of POISON_BITS in the CUDA caching allocator, sized like the outputs,
    so the launcher's torch.empty most likely gets them back."""
    blocks = [torch.full((int(np.prod(shape)),), POISON_BITS, dtype=torch.int32, device=device) for shape in shapes]
    del blocks


def _written_natively(out: torch.Tensor) -> torch.Tensor | None:
    if out.dtype != torch.float32 or not out.is_cuda:
        return None
    return (out.view(torch.int32) != POISON_BITS).cpu()


def _dims_of(puzzle: Puzzle, label: str) -> tuple[str, ...]:
    """The spec's dimension names of the tensor called `label` (an input or an output), or ()."""
    args = spec_args(puzzle.spec) + [replace(a, name=n) for a, n in
                                     zip(spec_outputs(puzzle.spec), puzzle.outputs)]
    return next((tuple(a.dims) for a in args if a.name == label and a.dims), ())


def _bounds_hint(violation, puzzle: Puzzle) -> str:
    if violation.region is None:
        return "a pointer was built from something other than a kernel argument plus offsets"
    if violation.offsets and min(violation.offsets) < 0:
        return "a negative offset: check where the block starts"
    if len(violation.shape) >= 2:
        dims = _dims_of(puzzle, violation.region.label)
        rows, cols = dims[-2:] if len(dims) >= 2 else ("the number of rows", "the row length")
        gather = any(a.dtype in (torch.int32, torch.int64) for a in spec_args(puzzle.spec))
        return (f"a lane of this tile lies outside {violation.region.label}: mask every dimension, e.g. "
                f"(rows[:, None] < {rows}) & (cols[None, :] < {cols}) for its [{rows}, {cols}] layout; a column "
                "past the end of a row must be masked even where it would land inside the next row"
                + ("; and where the rows come from an index array (a gather), check that you index by the loaded "
                   "index (node_feat at col_idx[s]), not by the slot s itself" if gather else ""))
    if violation.offsets and violation.offsets[0] == violation.region.numel and "mask" in violation.code:
        return (f"the mask lets offset {violation.region.numel} through, one past the end of "
                f"{violation.region.label} ({violation.region.numel} elements: 0..{violation.region.numel - 1}): "
                "compare with `<`, not `<=`")
    return (f"lanes past the end of {violation.region.label} were not masked off: give this {violation.kind} a mask "
            "that is False for them (e.g. offsets < size)")


def _accesses(recorder) -> list[dict]:
    rows = []
    for region in recorder.regions:
        if region.loads or region.stores or region.atomics:
            rows.append({"name": region.label, "params": list(region.params), "elements": region.numel,
                         "read": region.loads / region.numel, "written": region.stores / region.numel,
                         "atomics": region.atomics})
    return rows


def _check_outputs(puzzle: Puzzle, returned: list[transfer.Returned], expected: list[torch.Tensor],
                   device: str) -> str | None:
    if len(returned) != len(expected):
        return f"the launcher returned {len(returned)} value(s); the spec returns {len(expected)}"
    for name, value, exp, spec_out in zip(puzzle.outputs, returned, expected, spec_outputs(puzzle.spec)):
        if not value.is_tensor:
            return f"the launcher returned {value.type_name} for {name}; return the output tensor"
        if value.shape != tuple(exp.shape):
            return f"{name} has shape {value.shape}; the spec's output has shape {tuple(exp.shape)}"
        if value.dtype != str(spec_out.dtype):
            return f"{name} has dtype {value.dtype}; the spec's output is {spec_out.dtype}"
        if value.device.split(":")[0] != torch.device(device).type:
            return f"{name} is on {value.device}; allocate it on the inputs' device ({device})"
        if value.values is None:
            return f"{name} is a sparse or otherwise not dense tensor; return a dense one"
    return None


def skip_reason(case: Case, device: str, number: int) -> str | None:
    """Why this case is not run in this mode, or None. The judge asks it for itself: a worker cannot skip."""
    if device == "cpu" and case.half == torch.bfloat16 and not instrument.status()[0]:
        return ("not run: triton's interpreter multiplies bfloat16 blocks wrongly in tl.dot, and the grader's fix "
                "needs its hook (see the notice above); a GPU grades this case")
    if device == "cuda" and case.half == torch.bfloat16 and env.gpu_capability() < BF16_CAPABILITY:
        return (f"not run: bfloat16 tensor-core dots need a GPU of sm_80 or newer, and this one is {env.gpu_label()}. "
                f"`python -m grader {number}` grades the puzzle in the interpreter instead")
    return None


def execute(puzzle: Puzzle, launcher: Callable, case: Case, seed: int, device: str,
            timeout: float | None = DEFAULT_TIMEOUT, keep: list | None = None) -> transfer.Execution:
    """The worker's half of a case: build the inputs, call the launcher under the interpreter hook and a time
    limit, and collect what it returned and what its kernels did, as plain data (``transfer``). What goes wrong
    on the way (an error, a timeout, an out-of-bounds access, a refused launch) is an early failing Outcome;
    a race or a budget, read from the access record kept here, is a failing Outcome the judge reports in turn.
    The expected values are never computed here: ``judge`` does that, in the grader's own process.
    With `keep` (a list), the access record is appended to it, with a map per tensor (grader.memory_map)."""
    if skip_reason(case, device, puzzle.number):
        return transfer.Execution(early=transfer.Outcome("skipped"))
    started = time.perf_counter()
    inputs, dims = make_inputs(puzzle.spec, case, seed)
    # Copies, even on the CPU: the originals stay untouched, to catch a kernel that writes into its inputs.
    args = [inputs[a.name].to(device, copy=True) if a.dtype is not None else inputs[a.name]
            for a in spec_args(puzzle.spec)]
    on_device = {a.name: v for a, v in zip(spec_args(puzzle.spec), args)}

    def stop(reason, message="", **extra):
        return transfer.Execution(early=transfer.Outcome(reason, message, **extra), **_record(recorder, puzzle),
                                  seconds=time.perf_counter() - started)

    with instrument.recording(maps=keep is not None) as recorder:
        if keep is not None and recorder is not None:
            keep.append(recorder)
        if recorder is not None:
            for name, value in on_device.items():
                if isinstance(value, torch.Tensor):
                    recorder.watch(name, value)
            numel = {k: v.numel() for k, v in inputs.items() if isinstance(v, torch.Tensor)}
            recorder.dots_16bit = any(isinstance(b, budgets.Dots) for b in puzzle.budgets)  # see budgets.Dots
            if keep is None:  # a map shows the whole run (the time limit still holds), and its budget at the end
                recorder.watchdog = lambda: budgets.exceeded_so_far(puzzle.budgets, recorder, numel,
                                                                    {**case.blocks, **dims})
        if device != "cpu":
            _poison_allocator([a.shape(dims) for a in spec_outputs(puzzle.spec)], device)
        try:
            # The GPU computes inf - inf = nan silently; so does the interpreter, minus numpy's warnings.
            with time_limit(timeout), np.errstate(all="ignore"), launcher_guard.guard(puzzle, case, device):
                out = launcher(*args, **case.blocks)
                if device != "cpu":
                    torch.cuda.synchronize()
        except launcher_guard.Refused as exc:
            return stop("launcher", str(exc))
        except CaseTimeout as stop_at:
            where = f"\n  it was running {stop_at.args[0]}" if stop_at.args and stop_at.args[0] else ""
            return stop("timeout", f"stopped after {timeout:g} s: does a loop never end?{where}",
                        accesses=_accesses(recorder) if recorder is not None else [])  # the counts reached
        except NotImplementedError as exc:
            said = _text_of(exc)  # the stub's own words, if any (and no crash if its __str__ raises)
            return stop("not_started", "not implemented yet" + ("" if said == type(exc).__name__ else f": {said}"))
        except KeyboardInterrupt:
            raise  # Ctrl-C stops grading in a notebook; the CLI's worker (own session) never gets the terminal's
        except BaseException as exc:  # the learner's bug (SystemExit and BaseException subclasses too), reported
            if recorder is not None and recorder.over_budget is not None:
                return stop("budget", f"{recorder.over_budget}\n  (the kernel was stopped as soon as it went over "
                                      "budget; the counts are those reached then)", accesses=_accesses(recorder))
            if recorder is not None and recorder.violation is not None:
                return stop("out_of_bounds", recorder.violation.message(),
                            hint=_bounds_hint(recorder.violation, puzzle), accesses=_accesses(recorder))
            return stop("error", explain_exception(exc))

    if recorder is not None and not any(r.stores or r.atomics for r in recorder.regions):
        return stop("not_started", "not implemented yet (no kernel stored anything)")
    if recorder is not None:
        problem = gpu_compile.check(puzzle, recorder.launches)
        if problem:
            return stop("gpu_compile", problem)
        problem = launcher_guard.check_launches(puzzle, case, recorder.launches)
        if problem:
            return stop("launcher", problem)
    with torch._C.DisableTorchFunctionSubclass():  # a tensor subclass's overrides cannot lie about its data
        outs = [value.as_subclass(torch.Tensor) if isinstance(value, torch.Tensor) else value
                for value in as_list(out)]

    written, deferred = [], None
    # Coverage is looked at only for the spec's number of tensors; the judge refuses anything else first.
    if len(outs) == len(puzzle.outputs) and all(isinstance(value, torch.Tensor) for value in outs):
        for name, value in zip(puzzle.outputs, outs):
            if recorder is None or value.numel() == 0:  # an empty output (a graph with no edge) has nothing to write
                written.append(_written_natively(value) if value.numel() else None)
                continue
            found = recorder.stored_view(value)  # the tensor, or a view or slice of a buffer a kernel stored into
            if found is None:
                stored = [r.describe() for r in recorder.regions if r.stores or r.atomics]
                where = f" (your kernel stored into {', '.join(stored)}: return that tensor)" if stored else ""
                deferred = transfer.Outcome(
                    "bad_output", f"no kernel stored into the tensor you returned as {name}{where}: every output "
                                  "element must be written by a kernel's tl.store", accesses=_accesses(recorder))
                break
            region, flags = found
            region.label = name
            written.append(torch.from_numpy(flags))
    accesses = _accesses(recorder) if recorder is not None else []
    if deferred is None and recorder is not None and recorder.race is not None:
        # before the values: a lost update looks like a typo
        deferred = transfer.Outcome("race", recorder.race.message(), accesses=accesses)

    # Budgets are read here, beside the kernels (the tl.dot budget asks which dots survived their compilation);
    # the judge reports one only if the values are right and the inputs intact.
    late = None
    if recorder is not None and deferred is None:
        for budget in puzzle.budgets:  # numel: the inputs' sizes, as the watchdog above had them
            problem = budget.check(recorder, numel, {**case.blocks, **dims})  # formulas may name block sizes
            if problem:
                late = transfer.Outcome("budget", problem, accesses=accesses)
                break
    written += [None] * (len(outs) - len(written))
    return transfer.Execution(
        returned=[transfer.Returned.of(value, flags) for value, flags in zip(outs, written)], deferred=deferred,
        late=late, inputs_after={name: transfer.digest(value) for name, value in on_device.items()
                                 if isinstance(value, torch.Tensor)},
        **_record(recorder, puzzle), seconds=time.perf_counter() - started)


def _record(recorder, puzzle: Puzzle) -> dict:
    """What the judge needs of the access record: whether there is one, the programs, the note, the rows and the
    coach's figures."""
    if recorder is None:
        return {}
    return {"recorded": True, "programs": recorder.programs, "note": recorder.mask_fix_note(),
            "accesses": _accesses(recorder), "coach": coach.figures(recorder, puzzle.outputs).to_json()}


def judge(puzzle: Puzzle, case: Case, seed: int, device: str, execution: transfer.Execution) -> CaseResult:
    """The grader's half of a case: rebuild the inputs from the seed, compute the float64 reference, and check
    (in this order) the worker's early failure, the outputs' kind, that every element was written, the values,
    and that the inputs were left alone; then report the budget the worker found exceeded, if any.
    Raises transfer.Malformed for a case skipped there only."""
    skip = skip_reason(case, device, puzzle.number)
    if skip is not None:
        return result_for(case, "skipped", skip)
    early = execution.early
    if early is not None and early.reason == "skipped":
        raise transfer.Malformed("the worker skipped a case that runs here")
    started = time.perf_counter()
    inputs, dims = make_inputs(puzzle.spec, case, seed)

    def finish(reason, message="", **extra):
        note = execution.note  # passing cases carry it too
        message = f"{message}\n{note}".strip() if note else message
        seconds = round(execution.seconds + time.perf_counter() - started, 3)
        result = result_for(case, reason, message, seconds=seconds, programs=execution.programs,
                            coach=execution.coach, **extra)
        result.dims = dims  # with the graph's N and E, where there is one
        return result

    if early is not None:
        return finish(early.reason, early.message, hint=early.hint, accesses=early.accesses)
    expected = reference(puzzle.spec, inputs)
    inputs64 = {k: v.to(torch.float64) if isinstance(v, torch.Tensor) and v.is_floating_point() else v
                for k, v in inputs.items()}
    problem = _check_outputs(puzzle, execution.returned, expected, device)
    if problem:
        return finish("bad_output", problem)
    deferred = execution.deferred
    if deferred is not None:
        return finish(deferred.reason, deferred.message, hint=deferred.hint, accesses=deferred.accesses)
    outs = [returned.values for returned in execution.returned]
    written = [returned.written for returned in execution.returned]
    accesses = execution.accesses

    if not execution.recorded and all(w is not None and not w.any() for w in written):
        return finish("not_started", "not implemented yet (no output element was written)")

    verdict = checker.check_outputs(puzzle.outputs, outs, expected, written, puzzle.tolerances, inputs64,
                                    case.blocks, puzzle.hints)  # every wrong output is named, not only the first
    if verdict is not None:
        return finish(verdict.reason, verdict.message, hint=verdict.hint, errors=verdict.errors, accesses=accesses)

    for name, value in inputs.items():
        if isinstance(value, torch.Tensor) and execution.inputs_after.get(name) != transfer.digest(value):
            return finish("input_modified", f"your kernel changed the input {name}: only store into the output",
                          accesses=accesses)

    late = execution.late
    if late is not None:
        return finish(late.reason, late.message, hint=late.hint, accesses=late.accesses)
    return finish("passed", accesses=accesses)


def run_case(puzzle: Puzzle, launcher: Callable, case: Case, seed: int, device: str,
             timeout: float | None = DEFAULT_TIMEOUT) -> CaseResult:
    """One case in this process (notebooks, the grader's tests): ``execute``, then ``judge`` what it sent,
    through the same JSON the CLI's worker sends its parent, so that both paths judge alike."""
    sent = json.loads(json.dumps(transfer.execution_to_json(execute(puzzle, launcher, case, seed, device, timeout))))
    return judge(puzzle, case, seed, device, transfer.execution_from_json(sent))


# -- a whole puzzle -------------------------------------------------------------------------------

@dataclass
class PuzzleResult:
    puzzle: int
    slug: str
    title: str
    status: str  # passed, failed, not_started
    seed: int
    mode: str
    source: str
    cases: list[CaseResult]
    notices: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        data = asdict(self)
        data["cases"] = [c.to_json() for c in self.cases]
        data["coach"] = coach.summary(self.cases, BY_NUMBER[self.puzzle])
        return data

    def __repr__(self) -> str:
        passed = sum(c.passed for c in self.cases)
        return f"<puzzle {self.puzzle} ({self.slug}): {self.status}, {passed}/{len(self.cases)} cases passed>"


def settle(puzzle: Puzzle, results: Iterable[CaseResult], start: int = 0) -> Iterator[CaseResult]:
    """Pass results (for cases start, start+1, ...) through, stopping where more cases would tell
    nothing new: after a not-started case, and (marking the rest skipped) after a timeout."""
    started = False
    for index, result in enumerate(results, start):
        if result.reason == "not_started" and (started or index > 0):
            # Earlier cases ran: storing nothing here is a bug of this case (say, an empty graph), not a stub.
            result.reason = "never_written"
            result.message = ("your kernel stored nothing in this case, though earlier cases ran: every output "
                              "element must be written, also where there is nothing to sum (write zeros)")
        started = True
        yield result
        if ends_puzzle(result.reason, index):
            if result.reason == "timeout":
                for case in puzzle.cases[index + 1:]:
                    yield result_for(case, "skipped", f"not run: case {result.name!r} timed out")
            return


def ends_puzzle(reason: str, index: int) -> bool:
    """Whether a case of this reason, at this index, ends its puzzle's grading: the first case not started (a
    stub), or a timeout. The worker stops there too."""
    return reason == "timeout" or (reason == "not_started" and index == 0)


def status_of(cases: list[CaseResult]) -> str:
    if any(c.reason == "not_started" for c in cases):
        return "not_started"
    # a skipped case fails only through the case that caused it (a timeout); alone it is no verdict
    return "passed" if cases and all(c.passed or c.reason == "skipped" for c in cases) else "failed"


def mode_notices(device: str) -> list[str]:
    """Notes for a puzzle's report once its cases ran: a hook the interpreter lacks, and what the launcher guard
    changed (which autotune config the interpreter ran)."""
    ok, why = instrument.status()
    return ([why] if device == "cpu" and not ok else []) + launcher_guard.take_notices() + gpu_compile.take_notices()


def assemble(puzzle: Puzzle, results: list[CaseResult], seed: int, mode: str, source: str,
             notices: list[str]) -> PuzzleResult:
    settled = list(settle(puzzle, results))
    return PuzzleResult(puzzle.number, puzzle.slug, puzzle.title, status_of(settled), seed, mode, source,
                        settled, notices)


def grade(puzzle: Puzzle, launcher: Callable, seed: int, device: str, source: str, mode: str,
          timeout: float | None = DEFAULT_TIMEOUT, first_failure: bool = False) -> PuzzleResult:
    """Grade in this process (notebooks); the CLI uses grader.runner to survive crashes.
    With first_failure, stop at the first case that fails (the grader's own tests use it)."""
    results = []
    for result in settle(puzzle, (run_case(puzzle, launcher, case, seed, device, timeout) for case in puzzle.cases)):
        results.append(result)
        if first_failure and not result.passed:
            break
    return assemble(puzzle, results, seed, mode, source, mode_notices(device))
