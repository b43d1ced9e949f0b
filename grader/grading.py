"""Grade a launcher on a puzzle's cases, in this process.

``run_case`` is the whole story of one case: build the inputs, compute the float64 reference,
call the learner's launcher under the interpreter hook and a time limit, then check (in this
order) that it started, ran, stayed in bounds, returned the right kind of output, wrote every
element, got the values right, left its inputs alone and kept to the budget.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from . import checker, gpu_compile, instrument, launcher_guard
from .cases import Case, as_list, make_inputs, reference, spec_args, spec_outputs
from .registry import Puzzle

DEFAULT_TIMEOUT = 30.0  # seconds per case; an honest interpreter case takes well under 5

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

    def to_json(self) -> dict:
        return asdict(self)

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


def _did_you_mean(root: BaseException) -> str | None:
    """For a misspelt tl.something, the closest real name."""
    found = re.search(r"module '(triton\.language)' has no attribute '(\w+)'", str(root))
    language = sys.modules.get("triton.language")
    if not found or language is None:
        return None
    close = difflib.get_close_matches(found[2], [n for n in dir(language) if not n.startswith("_")], n=1)
    return f"did you mean tl.{close[0]}?" if close else None


def explain_exception(exc: BaseException) -> str:
    """'TypeError: ...' plus the learner's own line(s) where it happened, and advice where a cause is common."""
    chain = _chain(exc)
    root = chain[0]
    text = str(root).strip() or type(root).__name__
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
    advice = [a for clue, a in _ADVICE if clue in text] + [_did_you_mean(root)]
    message += "".join(f"\n  {a}" for a in advice if a)
    return message


# -- one case -------------------------------------------------------------------------------------

def _poison_allocator(expected: list[torch.Tensor], device: str) -> None:
    """Leave blocks full of POISON_BITS in the CUDA caching allocator, sized like the outputs,
    so the launcher's torch.empty most likely gets them back."""
    blocks = [torch.full((e.numel(),), POISON_BITS, dtype=torch.int32, device=device) for e in expected]
    del blocks


def _written_natively(out: torch.Tensor) -> torch.Tensor | None:
    if out.dtype != torch.float32 or not out.is_cuda:
        return None
    return (out.view(torch.int32) != POISON_BITS).cpu()


def _bounds_hint(violation) -> str:
    if violation.region is None:
        return "a pointer was built from something other than a kernel argument plus offsets"
    if violation.offsets and min(violation.offsets) < 0:
        return "a negative offset: check where the block starts"
    if len(violation.shape) >= 2:
        return ("a lane of this tile lies outside its tensor: mask every dimension, e.g. "
                "(rows[:, None] < N0) & (cols[None, :] < T); a column past the end of a row must be masked "
                "even where it would land inside the next row")
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


def _check_outputs(puzzle: Puzzle, out, expected: list[torch.Tensor], device: str) -> str | None:
    outs = as_list(out)
    if len(outs) != len(expected):
        return f"the launcher returned {len(outs)} value(s); the spec returns {len(expected)}"
    for name, value, exp, spec_out in zip(puzzle.outputs, outs, expected, spec_outputs(puzzle.spec)):
        if not isinstance(value, torch.Tensor):
            return f"the launcher returned {type(value).__name__} for {name}; return the output tensor"
        if tuple(value.shape) != tuple(exp.shape):
            return f"{name} has shape {tuple(value.shape)}; the spec's output has shape {tuple(exp.shape)}"
        if value.dtype != spec_out.dtype:
            return f"{name} has dtype {value.dtype}; the spec's output is {spec_out.dtype}"
        if value.device.type != torch.device(device).type:
            return f"{name} is on {value.device}; allocate it on the inputs' device ({device})"
    return None


def run_case(puzzle: Puzzle, launcher: Callable, case: Case, seed: int, device: str,
             timeout: float | None = DEFAULT_TIMEOUT) -> CaseResult:
    if device == "cpu" and case.half == torch.bfloat16 and not instrument.status()[0]:
        return result_for(case, "skipped", "not run: triton's interpreter multiplies bfloat16 blocks wrongly in "
                                           "tl.dot, and the grader's fix needs its hook (see the notice above); "
                                           "a GPU grades this case")
    started = time.perf_counter()
    inputs, dims = make_inputs(puzzle.spec, case, seed)
    expected = reference(puzzle.spec, inputs)
    inputs64 = {k: v.to(torch.float64) if isinstance(v, torch.Tensor) and v.is_floating_point() else v
                for k, v in inputs.items()}
    # Copies, even on the CPU: the originals stay untouched, to catch a kernel that writes into its inputs.
    args = [inputs[a.name].to(device, copy=True) if a.dtype is not None else inputs[a.name]
            for a in spec_args(puzzle.spec)]
    on_device = {a.name: v for a, v in zip(spec_args(puzzle.spec), args)}

    def finish(reason, message="", **extra):
        programs = recorder.programs if recorder is not None else 0
        result = result_for(case, reason, message, seconds=round(time.perf_counter() - started, 3),
                            programs=programs, **extra)
        result.dims = dims  # with the graph's N and E, where there is one
        return result

    with instrument.recording() as recorder:
        if recorder is not None:
            for name, value in on_device.items():
                if isinstance(value, torch.Tensor):
                    recorder.watch(name, value)
        if device != "cpu":
            _poison_allocator(expected, device)
        try:
            # The GPU computes inf - inf = nan silently; so does the interpreter, minus numpy's warnings.
            with time_limit(timeout), np.errstate(all="ignore"), launcher_guard.guard(puzzle, device):
                out = launcher(*args, **case.blocks)
                if device != "cpu":
                    torch.cuda.synchronize()
        except launcher_guard.Refused as exc:
            return finish("launcher", str(exc))
        except CaseTimeout as stop:
            where = f"\n  it was running {stop.args[0]}" if stop.args and stop.args[0] else ""
            return finish("timeout", f"stopped after {timeout:g} s: does a loop never end?{where}")
        except NotImplementedError as exc:
            return finish("not_started", f"not implemented yet{': ' + str(exc) if str(exc) else ''}")
        except Exception as exc:  # the learner's bug, reported, never raised
            if recorder is not None and recorder.violation is not None:
                return finish("out_of_bounds", recorder.violation.message(), hint=_bounds_hint(recorder.violation),
                              accesses=_accesses(recorder))
            return finish("error", explain_exception(exc))

    if recorder is not None and not any(r.stores or r.atomics for r in recorder.regions):
        return finish("not_started", "not implemented yet (no kernel stored anything)")
    if recorder is not None:
        problem = gpu_compile.check(puzzle, recorder.launches)
        if problem:
            return finish("gpu_compile", problem)
        problem = launcher_guard.check_launches(puzzle, case, recorder.launches)
        if problem:
            return finish("launcher", problem)
    problem = _check_outputs(puzzle, out, expected, device)
    if problem:
        return finish("bad_output", problem)
    outs = as_list(out)

    written = []
    for name, value in zip(puzzle.outputs, outs):
        if recorder is None or value.numel() == 0:  # an empty output (a graph with no edge) has nothing to write
            written.append(_written_natively(value) if value.numel() else None)
            continue
        region = recorder.region_of(value)
        if region is None or not (region.stores or region.atomics):
            stored = [r.describe() for r in recorder.regions if r.stores or r.atomics]
            where = f" (your kernel stored into {', '.join(stored)}: return that tensor)" if stored else ""
            return finish("bad_output", f"no kernel stored into the tensor you returned as {name}{where}: every "
                                        "output element must be written by a kernel's tl.store",
                          accesses=_accesses(recorder))
        region.label = name
        written.append(torch.from_numpy(region.written.copy()))
    accesses = _accesses(recorder) if recorder is not None else []

    if recorder is None and all(w is not None and not w.any() for w in written):
        return finish("not_started", "not implemented yet (no output element was written)")

    for name, value, exp, wr, tolerance in zip(puzzle.outputs, outs, expected, written, puzzle.tolerances):
        allowed = tolerance.allowed(inputs64, exp)
        diagnosis = checker.compare(name, value, exp, allowed, wr, tolerance)
        if diagnosis is not None:
            reason = "mismatch" if diagnosis.wrong else "never_written"
            hint = checker.hint(value, exp, allowed, diagnosis, case.blocks, inputs64, puzzle.hints)
            return finish(reason, "\n".join(diagnosis.lines), hint=hint, errors=diagnosis.listed,
                          accesses=accesses)

    for name, value in on_device.items():
        if isinstance(value, torch.Tensor) and not torch.equal(value.cpu(), inputs[name]):
            return finish("input_modified", f"your kernel changed the input {name}: only store into the output",
                          accesses=accesses)

    if recorder is not None:
        numel = {k: v.numel() for k, v in inputs.items() if isinstance(v, torch.Tensor)}
        for budget in puzzle.budgets:
            problem = budget.check(recorder, numel, dims)
            if problem:
                return finish("budget", problem, accesses=accesses)
    return finish("passed", accesses=accesses)


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
        if result.reason == "not_started":
            return
        if result.reason == "timeout":
            for case in puzzle.cases[index + 1:]:
                yield result_for(case, "skipped", f"not run: case {result.name!r} timed out")
            return


def status_of(cases: list[CaseResult]) -> str:
    if any(c.reason == "not_started" for c in cases):
        return "not_started"
    # a skipped case fails only through the case that caused it (a timeout); alone it is no verdict
    return "passed" if cases and all(c.passed or c.reason == "skipped" for c in cases) else "failed"


def mode_notices(device: str) -> list[str]:
    ok, why = instrument.status()
    return [why] if device == "cpu" and not ok else []


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
