"""The one checker: compare an output with the float64 reference and explain what is wrong.

Tolerances are per element and relative to a scale that the puzzle defines from its inputs
(for a sum, the sum of magnitudes; for a softmax, the value itself and its row's maximum).
There is no fixed absolute tolerance, so a small output cannot hide a large relative error.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

import torch

from grader.course.puzzle import Hint, Tolerance
from grader.transfer import UNDEFINED_NAN32, UNDEFINED_PAYLOAD

MAX_LISTED = 5          # mismatching elements listed by index
PICTURE_ROWS, PICTURE_COLS = 12, 48


@dataclass
class Diagnosis:
    """What a failed comparison found; ``lines`` is ready to print."""
    wrong: int
    total: int
    never_written: int
    listed: list[dict]
    lines: list[str]
    bad: torch.Tensor  # True where written but wrong
    unwritten: torch.Tensor  # True where never written


def _fmt(value: float) -> str:
    return f"{value:.6g}"


def _index(idx: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(i) for i in idx) + "]"


def picture(bad: torch.Tensor, unwritten: torch.Tensor) -> list[str]:
    """A small text map of a 2-D output: '.' right, 'X' wrong, '?' never written."""
    rows, cols = bad.shape
    step_r, step_c = -(-rows // PICTURE_ROWS), -(-cols // PICTURE_COLS)
    lines = []
    for r0 in range(0, rows, step_r):
        line = []
        for c0 in range(0, cols, step_c):
            cell = (slice(r0, r0 + step_r), slice(c0, c0 + step_c))
            line.append("?" if unwritten[cell].any() else "X" if bad[cell].any() else ".")
        lines.append("  " + "".join(line))
    legend = f"where it is wrong (X), never written (?), right (.); {rows} rows x {cols} columns"
    if step_r > 1 or step_c > 1:
        legend += f", one character = {step_r}x{step_c} elements"
    return [legend] + lines


def within(yours64: torch.Tensor, expected: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """Element by element: |yours - expected| <= allowed, or the same infinity; a NaN only where one is expected.
    (The bench asks it too, on the GPU, so that its "correct" is the grader's.)"""
    ok = ((yours64 - expected).abs() <= allowed) | (torch.isfinite(expected).logical_not() & (yours64 == expected))
    return ok & ~(torch.isnan(yours64) & ~torch.isnan(expected))


def compare(name: str, yours: torch.Tensor, expected: torch.Tensor, allowed: torch.Tensor,
            written: torch.Tensor | None = None, tolerance: Tolerance | None = None) -> Diagnosis | None:
    """None when every element is within tolerance and was written; else a Diagnosis."""
    yours64 = yours.detach().to("cpu", torch.float64)
    err = (yours64 - expected).abs()
    ok = within(yours64, expected, allowed)
    unwritten = torch.zeros_like(ok) if written is None else ~written.reshape(ok.shape)
    bad = ~ok & ~unwritten
    if not bad.any() and not unwritten.any():
        return None

    lines, listed = [], []
    total = ok.numel()
    if unwritten.any():
        count = int(unwritten.sum())
        first = [_index(tuple(i.tolist())) for i in unwritten.nonzero()[:MAX_LISTED]]
        lines.append(f"{count} of {total} elements of {name} never written (missing tl.store or mask?): "
                     f"first at {', '.join(first)}")
    if bad.any():
        count = int(bad.sum())
        finite_err = torch.where(bad & torch.isfinite(err), err, torch.zeros_like(err))
        nonzero = expected != 0  # a relative error against an expected 0 is no number worth showing
        rel = torch.where(nonzero, finite_err / expected.abs().clamp_min(torch.finfo(torch.float64).tiny), 0.0)
        nonfinite = int((bad & ~torch.isfinite(yours64)).sum())
        if nonfinite == count:
            summary = f"{count} of {total} elements of {name} wrong, all of them NaN or inf"
        else:
            summary = f"{count} of {total} elements of {name} wrong: max abs err {_fmt(float(finite_err.max()))}"
            if bool((bad & nonzero).any()):
                summary += f", max rel err {_fmt(float(rel.max()))}"
            if nonfinite:
                summary += f", {nonfinite} NaN/inf"
        lines.append(summary)
        if tolerance is not None:
            lines.append(f"allowed: {tolerance.rtol:g} x ({tolerance.explain})")
        for idx in bad.nonzero()[:MAX_LISTED]:
            idx = tuple(idx.tolist())
            listed.append({"index": list(idx), "yours": float(yours64[idx]), "expected": float(expected[idx]),
                           "allowed": float(allowed[idx])})
            lines.append(f"  {name}{_index(idx)}: yours {_fmt(float(yours64[idx]))}, "
                         f"expected {_fmt(float(expected[idx]))}")
    if bad.dim() == 2 and bad.numel() > 1:
        lines += picture(bad, unwritten)
    return Diagnosis(int(bad.sum()), total, int(unwritten.sum()), listed, lines, bad, unwritten)


# -- hints: the first pattern that fits the failure gives one line -------------------------------

def _last_block_only(bad, blocks):
    """Wrong only in the trailing partial block along the last axis."""
    size = bad.shape[-1]
    block = blocks.get("B1" if bad.dim() == 2 else "B0")
    if not block or size % block == 0 or size < block:  # one partial block alone: nothing to compare it with
        return False
    tail = (size // block) * block
    return bool(bad[..., tail:].any()) and not bad[..., :tail].any()


def _first_block_only(bad, blocks):
    """Right only in the first block along the last axis: a loop or grid that stops after one block."""
    block = blocks.get("B1" if bad.dim() == 2 else "B0")
    return bool(block) and bad.shape[-1] > block and not bad[..., :block].any() and bool(bad[..., block:].all())


def _first_rows_only(bad, blocks):
    """Right only for the first program's rows: the program id was not used."""
    block = blocks.get("B0")  # (a puzzle with no B0 has no rows per program to name)
    return bool(block) and bad.shape[0] > block and not bad[:block].any() and bool(bad[block:].all())


def _elements_per_program(unwritten, blocks) -> int:
    """For a 1-D output of B0-element blocks written at k < B0 elements per program and nowhere else, k (else 0):
    the first k of each block of B0 (offsets pid * B0 + tl.arange(0, k)), or the first k * cdiv(n, B0) elements
    (offsets pid * k + tl.arange(0, k)). k = 1: no tl.arange at all; k a number: a block size written into the
    kernel where the launcher's B0 was meant."""
    block = blocks.get("B0")
    if not block or block < 2 or unwritten.dim() != 1 or unwritten.numel() <= block or not bool(unwritten.any()):
        return 0  # (every element written: the first `each * programs` are all of them, no block size at fault)
    written, programs = ~unwritten, -(-unwritten.numel() // block)
    each = int(written.sum()) // programs
    if not 1 <= each < block:
        return 0
    index = torch.arange(written.numel())
    if bool((written == (index % block < each)).all()) or bool((written == (index < each * programs)).all()):
        return each
    return 0


def _per_program_text(each: int, blocks) -> str:
    """The hint for an output written at `each` elements per program (_elements_per_program; 0: no such pattern)."""
    if each <= 1:
        return ("each program wrote one element: a program owns a block of B0, offsets = tl.program_id(0) * B0 + "
                "tl.arange(0, B0), with every value of the program a [B0] block (one lane per element)")
    return (f"each program wrote {each} elements where its block is B0 = {blocks.get('B0')}: a block size is written "
            f"into the kernel as a number ({each}). Take it from the B0 parameter, tl.arange(0, B0), which the "
            "launcher sets for each case")


def _undefined(yours: torch.Tensor, bad: torch.Tensor) -> bool:
    """Whether a wrong element is a NaN that carries the payload of an undefined lane (grader.transfer): it came from
    a masked-off lane of a load without other=."""
    if not yours.is_floating_point():
        return False
    bits = yours.detach().to("cpu", torch.float32).view(torch.int32)
    nan = ((bits & 0x7F800000) == 0x7F800000) & ((bits & 0x007FFFFF) != 0)
    marked = (bits & UNDEFINED_PAYLOAD) == (UNDEFINED_NAN32 & UNDEFINED_PAYLOAD)
    return bool((nan & marked & bad.reshape(bits.shape)).any())


def _transposed(yours64, expected, allowed):
    if expected.dim() != 2 or 1 in expected.shape:
        return False
    flipped = yours64.reshape(expected.shape[::-1]).T
    return bool(((flipped - expected).abs() <= allowed).all())


def _negated(yours64, expected, allowed, bad) -> bool:
    """Every wrong element is the expected value negated (within tolerance), and some is not 0: a sign flipped."""
    wrong = bad & (expected != 0)
    return bool(wrong.any()) and bool(((yours64 + expected).abs() <= allowed)[bad].all())


def _rounded_to_16_bits(yours: torch.Tensor, expected, bad) -> str:
    """'float16' or 'bfloat16' when a float32 output's wrong elements are all exactly values of that type, each within
    its rounding of the expected one: the result went through a 16-bit value; else ''."""
    if yours.dtype != torch.float32 or not bool(bad.any()):
        return ""
    yours64 = yours.detach().to("cpu", torch.float64)
    # (type, half its relative spacing, its smallest subnormal: the spacing below its normal range)
    for dtype, half_ulp, smallest in ((torch.float16, 2.0 ** -11, 2.0 ** -24), (torch.bfloat16, 2.0 ** -8, 0.0)):
        values, wanted = yours64[bad], expected[bad]
        exact = values.to(dtype).to(torch.float64) == values
        near = (values - wanted).abs() <= 2 * half_ulp * wanted.abs() + smallest
        if bool((exact & near).all()) and bool((values != 0).any()):  # zeros alone are any type's: no sign
            return "float16" if dtype == torch.float16 else "bfloat16"
    return ""


def _rows_off_by_a_factor(yours64, expected, bad):
    if bad.dim() != 2 or bad.shape[1] < 2 or not bad.all(dim=1).any():
        return False
    rows = bad.all(dim=1)
    ratio = (yours64 / expected)[rows]
    if not torch.isfinite(ratio).all() or (ratio[:, :1] == 0).any():  # rows of zeros: no normaliser at fault
        return False
    return bool(((ratio - ratio[:, :1]).abs() <= 1e-3 * ratio[:, :1].abs()).all())


def hint(yours: torch.Tensor, expected: torch.Tensor, allowed: torch.Tensor, diagnosis: Diagnosis,
         blocks: Mapping[str, int], inputs: Mapping[str, torch.Tensor],
         puzzle_hints: tuple[Hint, ...] = ()) -> str | None:
    """One line that fits the pattern of wrong or unwritten elements, or None. Puzzle hints go first."""
    yours64 = yours.detach().to("cpu", torch.float64)
    bad = diagnosis.bad | diagnosis.unwritten
    nonfinite = ~torch.isfinite(yours64) & torch.isfinite(expected) & diagnosis.bad
    try:
        sixteen = _rounded_to_16_bits(yours, expected, diagnosis.bad)
        per_program = _elements_per_program(diagnosis.unwritten, blocks)
    except Exception:  # no guess, no crash
        sixteen, per_program = "", 0
    detectors = [(lambda: _undefined(yours, diagnosis.bad),
                  "NaN from an undefined lane: a masked load without other= fed this output. Its masked-off lanes "
                  "are undefined (the grader fills them with NaN; a GPU leaves whatever was there), and even a "
                  "weight of 0 times NaN is NaN: give the load other= (0.0 for what is summed, -inf for a max)")]
    # a puzzle's hints read what the kernel stored: an element never written holds the grader's NaN, which no
    # mistake of arithmetic made (the first line names those elements); here it holds 0, as a GPU's memory may
    written64 = yours64.masked_fill(diagnosis.unwritten, 0.0) if diagnosis.unwritten.shape == yours64.shape else yours64
    detectors += [(lambda h=h: h.check(inputs, written64, blocks), h.text) for h in puzzle_hints] + [
        (lambda: bool(nonfinite.any()),
         "NaN or inf where the answer is finite: a masked load without other= (the grader fills masked lanes "
         "with NaN, as undefined as on a GPU), an exp that overflows (subtract the max first), or a 0/0?"),
        (lambda: bool(per_program), _per_program_text(per_program, blocks)),
        (lambda: _transposed(yours64, expected, allowed),
         "your output holds the answer transposed: element [j, i] lives at j * N0 + i"),
        (lambda: _last_block_only(bad, blocks),
         "only the last, partial block is wrong: check the mask for the lanes past the end"),
        (lambda: bad.dim() == 1 and _first_block_only(bad, blocks),
         "only the first block is right: every program computed block 0. Start each program's block at "
         "tl.program_id(0) * B0"),
        (lambda: bad.dim() > 1 and _first_block_only(bad, blocks),
         "only the first block along the row is right: does the loop (or the grid) cover all of it?"),
        (lambda: _first_rows_only(bad, blocks),
         "only the first block of rows is right: offset by tl.program_id(0) * B0"),
        (lambda: bool((yours64 == 0).all()) and bool((expected != 0).any()) and not bool(diagnosis.unwritten.any()),
         "every element was stored, and every one is 0: a factor of the result came out 0 (an integer division "
         "such as 1 // n, a weight or a scale that is 0)"),
        (lambda: bool((yours64 == 0).all()) and bool((expected != 0).any()),
         "your output is all zeros: is the tl.store reached, with the right pointer?"),
        (lambda: bool(sixteen),
         f"your output holds {sixteen} values, each the "
         "expected one rounded: the result went through a 16-bit value (a .to(), a 16-bit accumulator or store). "
         "Keep it float32 until the tl.store"),
        (lambda: _negated(yours64, expected, allowed, diagnosis.bad),
         "every wrong element is the expected value negated: a sign is flipped (which term is subtracted from "
         "which?)"),
        (lambda: _rows_off_by_a_factor(yours64, expected, bad),
         "each wrong row is off by one constant factor: the normaliser (the sum) is wrong"),
    ]
    for fits, text in detectors:
        try:
            if fits():
                return text
        except Exception:  # a hint is a guess; a guess that cannot be made is no hint, never a crash
            continue
    return None


def read_but_never_written(accesses, inputs, outputs) -> str | None:
    """The hint where a kernel read a tensor that is neither an input nor an output (the launcher's own, such as Δ)
    and no kernel ever stored into it: what was read is whatever the launcher allocated. `accesses`: the case's
    rows of accesses (name, read, written, atomics); `inputs` and `outputs`: the spec's names. None otherwise.
    Only for puzzles whose kernels hand such tensors on (verdict._hands_on_scratch)."""
    for row in accesses:
        name = row["name"]
        if name in inputs or name in outputs or row["read"] <= 0 or row["written"] or row["atomics"]:
            continue
        return (f"{name} is read ({row['read']:.1f}x per element) but no kernel stored into it: it is no input but "
                "the launcher's own tensor, for one kernel to fill (every element) before another reads it, and "
                f"unfilled it holds whatever the launcher allocated (torch.empty: anything). Check the tl.store of "
                f"{name} in the kernel that computes it")
    return None


def output_read_unwritten(accesses, outputs, outs, expected) -> str | None:
    """The hint where a kernel read an output and that output holds NaN where the answer is finite: an output has
    no values until a kernel stores them (the launcher's torch.empty, poisoned by the grader as on a GPU), so a sum
    started from a load of it is NaN. None otherwise."""
    read = {row["name"] for row in accesses if row["read"] > 0}
    for name, mine, exp in zip(outputs, outs, expected):
        if name not in read or not isinstance(mine, torch.Tensor) or not mine.is_floating_point():
            continue
        if bool((torch.isnan(mine.detach().cpu().double()) & torch.isfinite(exp.cpu())).any()):
            return (f"{name} is an output, and your kernel read it (accesses: {name} read), and it holds NaN: an "
                    f"output has no values until a kernel stores them (torch.empty: the grader's NaN here, anything "
                    f"on a GPU), so a sum started from a load of {name} is NaN. Start from tl.zeros and store once; "
                    "or, if it was not that, a masked load without other= fed it")
    return None


# -- every output of a case ----------------------------------------------------------------------

def _swapped(names, outputs, expected, allowances, diagnoses) -> str | None:
    """'dk holds what dv should, ...' where two wrong outputs each hold the other's answer (two stores swapped)."""
    wrong = {id(value) for _, value, _, _ in diagnoses}
    for i, j in itertools.combinations(range(len(names)), 2):
        one, other = outputs[i], outputs[j]
        if id(one) not in wrong or id(other) not in wrong or not isinstance(one, torch.Tensor) or \
                not isinstance(other, torch.Tensor) or one.shape != other.shape or allowances[i] is None or \
                allowances[j] is None:
            continue
        mine, theirs = one.detach().to("cpu", torch.float64), other.detach().to("cpu", torch.float64)
        if bool(within(mine, expected[j], allowances[j]).all()) and \
                bool(within(theirs, expected[i], allowances[i]).all()):
            return (f"your {names[i]} holds what {names[j]} should, and your {names[j]} what {names[i]} should: the "
                    "two are swapped (check which pointer each tl.store writes, and which sum goes into which)")
    return None


@dataclass
class Verdict:
    """Why a case's outputs are wrong, ready for a CaseResult."""
    reason: str  # mismatch or never_written: that of the first wrong output
    message: str  # every wrong output's lines, in the spec's order
    hint: str | None  # the first hint that fits a wrong output, in the same order
    errors: list[dict]  # the first wrong output's mismatching elements


def check_outputs(names, outputs, expected, written, tolerances, inputs: Mapping[str, torch.Tensor],
                  blocks: Mapping[str, int], puzzle_hints=(), allowances=None) -> Verdict | None:
    """Compare every output with its reference; None when all are right. `allowances`: each output's
    ``tolerance.allowed(inputs, expected)``, where it was computed beforehand (grader.judge.verdict.prepare).

    Every wrong output is reported, not only the first: one mistake upstream of several outputs (a missing
    scale changes e_out and h alike) shows in each, and that pattern is itself a clue."""
    diagnoses = []
    allowances = allowances if allowances is not None else [None] * len(expected)  # filled in place: kept
    for index, (name, value, exp, was_written, tolerance, allowed) in enumerate(zip(
            names, outputs, expected, written, tolerances, allowances)):
        allowed = allowances[index] = tolerance.allowed(inputs, exp) if allowed is None else allowed
        diagnosis = compare(name, value, exp, allowed, was_written, tolerance)
        if diagnosis is not None:
            diagnoses.append((diagnosis, value, exp, allowed))
    if not diagnoses:
        return None
    first = diagnoses[0][0]
    swapped = _swapped(names, outputs, expected, allowances, diagnoses)
    hints = (hint(value, exp, allowed, diagnosis, blocks, inputs, puzzle_hints)
             for diagnosis, value, exp, allowed in diagnoses)
    hints = itertools.chain([swapped], hints)
    return Verdict("mismatch" if first.wrong else "never_written",
                   "\n".join(line for diagnosis, *_ in diagnoses for line in diagnosis.lines),
                   next((text for text in hints if text), None), first.listed)
