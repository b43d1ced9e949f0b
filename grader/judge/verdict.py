"""The verdict on a case: the judge's half of grading, in the grader's own process.

``judge`` rebuilds the inputs from the seed, computes the float64 reference and checks that the output has the
right kind, every element was written, the values are right and the inputs were left alone, reporting the
worker's findings (``grader.transfer.Execution``) in their turn. It never sees the worker's objects, only the
data the worker sent; ``PuzzleResult`` gathers a puzzle's cases.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from dataclasses import asdict, dataclass, field

import torch

from grader import coach, safe_output, transfer
from grader.course.budgets import Scratch
from grader.course.cases import Case, Kept, make_inputs, reference, spec_outputs
from grader.course.puzzle import skip_reason
from grader.course.registry import BY_NUMBER, Puzzle
from grader.judge import checker
from grader.protocol import ends_puzzle


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


@dataclass
class Prepared:
    """What ``judge`` needs of a case besides the worker's execution, computed while the worker runs
    (``grader.judge.runner``): the inputs rebuilt from the seed, the dimensions, the spec's float64 reference,
    and each output's allowed error (the tolerance's scale can cost as much as the reference: puzzle 17's)."""
    inputs: dict
    dims: dict
    expected: list
    inputs64: dict
    allowances: list | None = None  # each output's, once computed (checker.check_outputs fills the rest)


_prepared = Kept(32)  # read only, by the judge and the checker: kept per (puzzle, case, seed) in this process


def prepare(puzzle: Puzzle, case: Case, seed: int, allowances: bool = True) -> Prepared:
    ready = _prepared.get(puzzle, case, seed)
    if ready is None:
        inputs, dims = make_inputs(puzzle.spec, case, seed)
        expected = reference(puzzle.spec, inputs)
        inputs64 = {k: v.to(torch.float64) if isinstance(v, torch.Tensor) and v.is_floating_point() else v
                    for k, v in inputs.items()}
        ready = Prepared(inputs, dims, expected, inputs64,
                         [None] * len(expected) if len(expected) == len(puzzle.tolerances) else None)
        _prepared.put(puzzle, case, seed, ready)
    if allowances and ready.allowances is not None:
        for index, (tolerance, exp) in enumerate(zip(puzzle.tolerances, ready.expected)):
            if ready.allowances[index] is None:
                ready.allowances[index] = tolerance.allowed(ready.inputs64, exp)
    return ready


def judge(puzzle: Puzzle, case: Case, seed: int, device: str, execution: transfer.Execution,
          prepared: Future | None = None) -> CaseResult:
    """The grader's half of a case: rebuild the inputs from the seed, compute the float64 reference, and check
    (in this order) the worker's early failure, the outputs' kind, that every element was written, the values,
    and that the inputs were left alone; then report the budget the worker found exceeded, if any. `prepared`:
    a future of ``prepare``'s result for this case, computed beforehand.
    Raises transfer.Malformed for a case skipped there only."""
    skip = skip_reason(case, device, puzzle.number)
    if skip is not None:
        return result_for(case, "skipped", skip)
    early = execution.early
    if early is not None and early.reason == "skipped":
        raise transfer.Malformed("the worker skipped a case that runs here")
    started = time.perf_counter()
    ready = prepared.result() if prepared is not None else prepare(puzzle, case, seed, allowances=False)
    inputs, dims, expected, inputs64 = ready.inputs, ready.dims, ready.expected, ready.inputs64

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
                                    case.blocks, puzzle.hints, ready.allowances)  # every wrong output is named
    if verdict is not None:  # a scratch tensor read that no kernel wrote explains any wrong value: named first
        hint = (_hands_on_scratch(puzzle) and checker.read_but_never_written(accesses, inputs, puzzle.outputs)) \
            or checker.output_read_unwritten(accesses, puzzle.outputs, outs, expected) or verdict.hint
        return finish(verdict.reason, verdict.message, hint=hint, errors=verdict.errors, accesses=accesses)

    for name, value in inputs.items():
        if isinstance(value, torch.Tensor) and execution.inputs_after.get(name) != transfer.digest(value):
            return finish("input_modified", f"your kernel changed the input {name}: only store into the output",
                          accesses=accesses)

    late = execution.late
    if late is not None:
        return finish(late.reason, late.message, hint=late.hint, accesses=late.accesses)
    return finish("passed", accesses=accesses)


def _hands_on_scratch(puzzle: Puzzle) -> bool:
    """Whether the puzzle's kernels leave a tensor for each other (a Scratch budget: Δ in 17 and 18), so that a
    tensor that is neither an input nor an output is one a kernel must fill before another reads it. Elsewhere a
    launcher may fill one with PyTorch (puzzle 15's count of rows), which no kernel writes."""
    return any(isinstance(budget, Scratch) for budget in puzzle.budgets)


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
    # False where the learner's own launcher was graded (--own-launcher, a notebook): its checks ran in the
    # submission's own process, so a classroom should not trust the verdict.
    trusted: bool = True

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


def status_of(cases: list[CaseResult]) -> str:
    if any(c.reason == "not_started" for c in cases):
        return "not_started"
    # a skipped case fails only through the case that caused it (a timeout); alone it is no verdict
    return "passed" if cases and all(c.passed or c.reason == "skipped" for c in cases) else "failed"


def assemble(puzzle: Puzzle, results: list[CaseResult], seed: int, mode: str, source: str,
             notices: list[str], trusted: bool = True) -> PuzzleResult:
    settled = list(settle(puzzle, results))
    return PuzzleResult(puzzle.number, puzzle.slug, puzzle.title, status_of(settled), seed, mode, source,
                        settled, notices, trusted)
