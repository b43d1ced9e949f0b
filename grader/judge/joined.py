"""A grading's parts put together per puzzle (``grader.judge.runner`` runs them side by side): the gradings of
shares of the puzzles, natively the interpreter's checks of the same kernels on the small cases (``combined``),
and the puzzles decided without a worker."""

from __future__ import annotations

import dataclasses
import threading

from grader.course import registry
from grader.judge.verdict import CaseResult, PuzzleResult, assemble
from grader.safe_output import one_line

INTERPRETER_FOUND = "the GPU computed the right values, but the interpreter's checks of the same kernels found: "


def combined(native: list[CaseResult], checked: dict[int, CaseResult]) -> list[CaseResult]:
    """A case passes natively only if the interpreter's checks pass it too. Where the checks find a bug, their
    report is the one shown, reason and hint (they name the tensor, the lanes, the line), with what the GPU said
    beside it; where only the GPU fails a case, the GPU's report says that the interpreter passes it. Where both
    pass, the interpreter's record gives the report its traffic."""
    cases = []
    for index, case in enumerate(native):
        other = checked.get(index)
        if other is None or other.reason in ("skipped", "timeout", "crashed"):  # no finding of the interpreter's
            cases.append(case)
        elif case.passed and not other.passed:
            cases.append(dataclasses.replace(other, message=INTERPRETER_FOUND + other.message))
        elif case.passed:
            cases.append(dataclasses.replace(case, accesses=other.accesses, programs=other.programs,
                                                coach=other.coach))
        elif not other.passed:
            gpu = one_line(case.message)[:300]
            cases.append(dataclasses.replace(other, message=f"{other.message}\n  (on the GPU: {gpu})"))
        else:
            cases.append(dataclasses.replace(case, message=f"on the GPU: {case.message}\n  (the interpreter "
                                                "passes this case: the GPU compiler or the GPU itself differs; see "
                                                "the message above)"))
    return cases


class Joined:
    """The results of a grading's parts (gradings of shares of the puzzles, the interpreter's checks of native
    puzzles, the puzzles decided without a worker), put together per puzzle; each puzzle's result goes to
    `on_result` as soon as every part has finished it and the puzzles before it have gone."""

    def __init__(self, puzzles, gradings, checks, decided, modes, notices, seed, sources, own_launcher, on_result):
        self.puzzles, self.gradings, self.checks, self.decided = puzzles, gradings, checks, decided
        self.modes, self.notices, self.seed, self.own_launcher = modes, notices, seed, own_launcher
        self.sources = sources  # the file each puzzle was graded from, as the report shows it
        self.on_result = on_result
        self.results: dict[int, list[CaseResult]] = {}
        self.sent = 0  # puzzles given to on_result
        self.lock = threading.Lock()
        parts = [*gradings, *checks]
        # Per puzzle, the parts yet to finish it: the grading that holds it and each check that holds some of its
        # cases; none for a puzzle decided without a worker. A puzzle is ready at 0.
        self.left = {p.number: 0 if p.number in decided else sum(p.number in part.results for part in parts)
                     for p in puzzles}
        for part in parts:
            part.on_finished = self._finished

    def _finished_by(self, part, number: int) -> bool:
        return number in part.results and number not in part.pending

    def _finished(self, number: int) -> None:
        """A part finished puzzle `number`: send, in order, every puzzle now ready."""
        with self.lock:
            self.left[number] -= 1
            while self.on_result is not None and self.sent < len(self.puzzles) and \
                    self.left[self.puzzles[self.sent].number] == 0:
                self.on_result(self.assemble(self.puzzles[self.sent]))
                self.sent += 1

    def cases(self, number: int) -> list[CaseResult]:
        """The puzzle's results, its parts joined (once: later calls return the same list)."""
        if number not in self.results:
            cases = self.decided.get(number) or next(g.results[number] for g in self.gradings
                                                     if number in g.results)
            checked = {index: result for c in self.checks if number in c.results
                       for index, result in zip(c.order[number], c.results[number])}
            if checked and self.modes[number] == "native":
                cases = combined(cases, checked)
            self.results[number] = cases
        return self.results[number]

    def assemble(self, puzzle: registry.Puzzle) -> PuzzleResult:
        number = puzzle.number
        worker_notices = [n for g in self.gradings for n in g.notices.get(number, [])]
        return assemble(puzzle, self.cases(number), self.seed, self.modes[number], self.sources[number],
                        self.notices[number] + worker_notices, trusted=not self.own_launcher)

    def done(self) -> list[registry.Puzzle]:
        """The puzzles graded to their end (those a stop cut short are left out)."""
        return [p for p in self.puzzles if p.number in self.decided or
                any(self._finished_by(g, p.number) for g in self.gradings)]
