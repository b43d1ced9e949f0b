"""Access budgets: limits on memory traffic that make a puzzle's lesson checkable.

A budget is checked against what the interpreter hook recorded (``instrument.Recorder``). It counts
unmasked lanes only, so masked-off padding is free. ``numel`` maps each input's name to its element
count; ``dims`` holds the case's sizes (N and E for a graph).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


def _region(recorder, name):
    return next((r for r in recorder.regions if r.label == name), None)


@dataclass(frozen=True)
class Reads:
    """Each element of input `arg` is loaded at most `times` times: in all, per program, or per edge
    (for a per-node tensor gathered along edges: one row per edge)."""
    arg: str
    times: float
    per: str = "all"  # all, program, edge
    lesson: str = ""  # why the limit exists, in the learner's terms

    def describe(self) -> str:
        per = "" if self.per == "all" else f" per {self.per}"
        return f"{self.arg} read at most {self.times:g}x{per}"

    def check(self, recorder, numel: Mapping[str, int], dims: Mapping[str, int]) -> str | None:
        size = numel[self.arg]
        region = _region(recorder, self.arg)
        unit = {"all": size, "program": size * recorder.programs,
                "edge": size // max(dims.get("N", 1), 1) * dims.get("E", 0)}[self.per]
        loads = region.loads if region is not None else 0
        if unit and not loads:
            return (f"{self.arg} was never loaded by a kernel: pass the input tensor itself "
                    "(not a copy) to the kernel")
        if loads <= self.times * unit:
            return None
        per = {"all": "", "program": f" per program ({recorder.programs} programs)",
               "edge": f" of a row per edge ({dims.get('E', 0)} edges)"}[self.per]
        return (f"over budget: {self.arg} read {loads / max(unit, 1):.2f}x{per}, the budget is "
                f"{self.times:g}x. {self.lesson}").rstrip()


@dataclass(frozen=True)
class Writes:
    """Each element of output `arg` is stored at most `times` times."""
    arg: str
    times: float = 1
    lesson: str = ""

    def describe(self) -> str:
        return f"{self.arg} written at most {self.times:g}x"

    def check(self, recorder, numel: Mapping[str, int], dims: Mapping[str, int]) -> str | None:
        region = _region(recorder, self.arg)
        if region is None or region.stores <= self.times * region.numel:
            return None
        return (f"over budget: {self.arg} written {region.stores / region.numel:.2f}x, the budget is "
                f"{self.times:g}x. {self.lesson}").rstrip()


@dataclass(frozen=True)
class Loads:
    """Elements loaded from `args` together, at most `limit`, a formula in the case's sizes ("E + 3*N")."""
    args: tuple[str, ...]
    limit: str
    lesson: str = ""

    def describe(self) -> str:
        return f"{' + '.join(self.args)} loads at most {self.limit}"

    def check(self, recorder, numel: Mapping[str, int], dims: Mapping[str, int]) -> str | None:
        loaded = sum(r.loads for r in recorder.regions if r.label in self.args)
        limit = eval(self.limit, {"__builtins__": {}}, dict(dims))
        if loaded <= limit:
            return None
        return (f"over budget: {loaded} elements of {', '.join(self.args)} loaded, the budget is {self.limit} = "
                f"{limit}. {self.lesson}").rstrip()


@dataclass(frozen=True)
class NoAtomics:
    lesson: str = ""

    def describe(self) -> str:
        return "no atomics"

    def check(self, recorder, numel: Mapping[str, int], dims: Mapping[str, int]) -> str | None:
        used = {r.label: r.atomics for r in recorder.regions if r.atomics}
        if not used:
            return None
        where = ", ".join(f"{n} ({k})" for n, k in used.items())
        return f"over budget: atomics on {where}; this puzzle allows none. {self.lesson}".rstrip()


@dataclass(frozen=True)
class Dots:
    """tl.dot does at least `work` multiply-adds in all, a formula in the case's sizes ("2*N*T*D"): the
    products must run on tensor cores, not as broadcast multiplies and sums. Counting work rather than
    calls means one product on tensor cores cannot stand in for two. A dot of a partial block counts in
    full, so the formula is the work without padding, a floor any block size reaches."""
    work: str
    lesson: str = ""

    def describe(self) -> str:
        return f"tl.dot does at least {self.work} multiply-adds"

    def check(self, recorder, numel: Mapping[str, int], dims: Mapping[str, int]) -> str | None:
        least = eval(self.work, {"__builtins__": {}}, dict(dims))
        if recorder.dot_work >= least:
            return None
        return (f"over budget: tl.dot did {recorder.dot_work / least:.0%} of the multiply-adds ({recorder.dot_work} "
                f"of {self.work} = {least}, in {recorder.dots} calls). {self.lesson}").rstrip()
