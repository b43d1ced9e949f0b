"""Access budgets: limits on memory traffic that make a puzzle's lesson checkable.

A budget is checked against what the interpreter hook recorded (``instrument.Recorder``).
It counts unmasked lanes only, so masked-off padding is free.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reads:
    """Each element of input ``arg`` is loaded at most ``times`` times (per program, if asked)."""
    arg: str
    times: float
    per_program: bool = False
    lesson: str = ""  # why the limit exists, in the learner's terms

    def describe(self) -> str:
        per = " per program" if self.per_program else ""
        return f"{self.arg} read at most {self.times:g}x{per}"

    def check(self, recorder, numel: int) -> str | None:
        region = next((r for r in recorder.regions if r.label == self.arg), None)
        if region is None or region.loads == 0:
            return (f"{self.arg} was never loaded by a kernel: pass the input tensor itself "
                    "(not a copy) to the kernel")
        copies = recorder.programs if self.per_program else 1
        limit = self.times * numel * copies
        if region.loads <= limit:
            return None
        measured = region.loads / (numel * copies)
        per = f" per program ({recorder.programs} programs)" if self.per_program else ""
        return (f"over budget: {self.arg} read {measured:.2f}x{per}, the budget is {self.times:g}x. "
                f"{self.lesson}").rstrip()
