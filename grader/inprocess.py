"""Grade in one process: the notebook path (``grader.check``) and the grader's own tests.

The CLI runs a case's two halves in two processes (``grader.judge.runner``); here ``execute`` and ``judge``
run one after the other, through the same JSON the worker sends its parent, so that both paths judge alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from grader import transfer
from grader.course.cases import Case
from grader.course.registry import Puzzle
from grader.env import DEFAULT_TIMEOUT
from grader.judge.verdict import CaseResult, PuzzleResult, assemble, judge, settle
from grader.worker.execute import execute, mode_notices


def run_case(puzzle: Puzzle, launcher: Callable, case: Case, seed: int, device: str,
             timeout: float | None = DEFAULT_TIMEOUT, trusted_launcher: bool = False) -> CaseResult:
    """One case in this process (notebooks, the grader's tests): ``execute``, then ``judge`` what it sent,
    through the same JSON the CLI's worker sends its parent, so that both paths judge alike."""
    sent = json.loads(json.dumps(transfer.execution_to_json(execute(puzzle, launcher, case, seed, device, timeout,
                                                                    trusted_launcher=trusted_launcher))))
    return judge(puzzle, case, seed, device, transfer.execution_from_json(sent))


def grade(puzzle: Puzzle, launcher: Callable, seed: int, device: str, source: str, mode: str,
          timeout: float | None = DEFAULT_TIMEOUT, first_failure: bool = False,
          trusted_launcher: bool = False) -> PuzzleResult:
    """Grade in this process (notebooks, where the learner's own launcher is graded; the grader's tests); the CLI
    uses grader.judge.runner to survive crashes. With first_failure, stop at the first case that fails (the
    grader's own tests use it). `trusted_launcher`: the launcher is the puzzle's own (kernel-only grading)."""
    results = []
    for result in settle(puzzle, (run_case(puzzle, launcher, case, seed, device, timeout, trusted_launcher)
                                  for case in puzzle.cases)):
        results.append(result)
        if first_failure and not result.passed:
            break
    return assemble(puzzle, results, seed, mode, source, mode_notices(device), trusted=trusted_launcher)
