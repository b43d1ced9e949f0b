"""Chapter 2, long softmax and attention (notebooks/02_softmax_and_attention.ipynb): puzzles 4-6,
softmax_three_loop, softmax_online and flash_attention."""

from __future__ import annotations

from collections.abc import Callable

import torch

from grader.course import specs
from grader.course.budgets import Reads, Writes
from grader.course.cases import Case, normal, odd_rows_negated, per_input, rows, uniform
from grader.course.chapters.online_softmax_hints import (
    flipped_text,
    lost_to_a_max_of_0,
    max_took_in_0_hint,
    per_tile_hints,
    rescale_hints,
)
from grader.course.puzzle import Hint, Puzzle, Tolerance

from ..mistakes import (
    keys_padded_with_zeros,
    matches,
    one_pass_softmax,
    padding,
    scalar_attention,
    softmax_counting_padding,
    softmax_max_in_log2_units,
)

NOTEBOOK = "02_softmax_and_attention"
LOG2E = 1.4426950408889634  # exp(x) = exp2(x * log2(e))

# -- puzzles 4 and 5: softmax_online shares softmax_three_loop's cases, tolerance and hints --------------------


def _spike_row(position: Callable[[int, int], int], height: float = 1000.0):
    def make(i, length, gen):
        row = torch.randn(length, generator=gen, dtype=torch.float64)
        row[position(i, length)] = height
        return row
    return make


SOFTMAX_THREE_LOOP_CASES = (
    Case("spec", dict(N0=4, T=200), dict(B0=2, B1=32), about="the spec's own size"),
    Case("ragged", dict(N0=37, T=301), dict(B0=4, B1=64), about="neither size a multiple of its block"),
    Case("single row", dict(N0=1, T=1000), dict(B0=1, B1=128)),
    Case("single element", dict(N0=1, T=1), dict(B0=1, B1=16)),
    Case("large", dict(N0=64, T=2000), dict(B0=8, B1=256)),
    Case("65 blocks per row", dict(N0=3, T=257), dict(B0=2, B1=4),
         about="65 blocks of 4 in a row: a row held in separate tiles (no tile may be wider than a block), so that x "
               "is read once, takes 17 of them; the passes must loop over the whole row, however long"),
    Case("max falls by 100 after the first block", dict(N0=3, T=200), dict(B0=2, B1=32),
         fill=rows(lambda i, n, g: torch.randn(n, generator=g, dtype=torch.float64)
                   + torch.where(torch.arange(n) < 32, 80.0, -20.0), "about 80 in the first block, -20 after"),
         about="the row's max sits in the first block, 100 above the rest: every exp must be taken against the "
               "whole row's max, or exp(100) overflows float32 (exp(x) alone still fits)"),
    Case("[1000, 1, 2, 3]", dict(N0=3, T=4), dict(B0=2, B1=2),
         fill=rows(lambda i, n, g: torch.tensor([1000.0, 1.0, 2.0, 3.0]), "every row is [1000, 1, 2, 3]"),
         about="exp(1000) overflows unless the max is subtracted first"),
    Case("spike in the last block", dict(N0=5, T=300), dict(B0=2, B1=64),
         fill=rows(_spike_row(lambda i, n: n - 1 - i), "normal, with 1000 near the end of each row"),
         about="the row max arrives in the last block: the max must see the whole row (an online sum, "
               "rescaled when it grows)"),
    Case("max grows every block", dict(N0=4, T=300), dict(B0=4, B1=32),
         fill=rows(lambda i, n, g: torch.linspace(0, 40, n, dtype=torch.float64) + 0.1 * torch.randn(n, generator=g,
                   dtype=torch.float64), "increasing from 0 to 40"),
         about="a new maximum in every block"),
    Case("magnitudes 1e4", dict(N0=6, T=250), dict(B0=2, B1=64), fill=normal(1e4)),
    Case("values near 1e-9", dict(N0=6, T=250), dict(B0=4, B1=64), fill=normal(1e-9),
         about="nearly uniform rows: every output is close to 1/T"),
    Case("all-equal rows", dict(N0=6, T=250), dict(B0=2, B1=64),
         fill=rows(lambda i, n, g: torch.full((n,), [0.0, 1.0, -5.0, 1e4, -1e4, 3.5][i % 6], dtype=torch.float64),
                   "each row one constant: 0, 1, -5, 1e4, -1e4, 3.5"),
         about="every output is exactly 1/T"),
    Case("large negative rows", dict(N0=6, T=250), dict(B0=4, B1=64), fill=normal(3.0, shift=-1e4),
         about="every value near -1e4: exp(x - m) underflows to 0 unless m is the row's own max"),
)


def _softmax_three_loop_scale(inputs, expected):
    return expected.abs() + 1e-2 * expected.abs().amax(dim=1, keepdim=True)


SOFTMAX_THREE_LOOP_TOLERANCE = Tolerance(1e-5, _softmax_three_loop_scale,
                                         "|expected| + 0.01 x the row's largest output")


def _sum_not_rescaled(inputs, yours, blocks) -> bool:
    """Check whether the output is the online softmax whose running sum is not rescaled when the max grows."""
    return matches(yours, one_pass_softmax(inputs["x"], blocks["B1"], rescale="none"))


def _new_max_forgets_the_old(inputs, yours, blocks) -> bool:
    """Check whether the output is the online softmax whose new max is the block's max alone (`m_new =
    tl.max(x)`), forgetting the old m, in a case where that differs from a softmax with no max subtracted at
    all (which overflows alike where x itself is large).

    It is computed in float32 on purpose, as a kernel computes it: the rescaling telescopes, so only an overflow
    shows the mistake, when the max falls by more than 88 from one block to the next and exp(m - m_new) is inf."""
    x = inputs["x"]
    candidate = one_pass_softmax(x.to(torch.float32), blocks["B1"], forget_old_max=True).to(torch.float64)
    unshifted = torch.exp(x.float()) / torch.exp(x.float()).sum(dim=1, keepdim=True)
    return matches(yours, candidate) and not matches(unshifted.double(), candidate)


def _unshifted(x: torch.Tensor) -> torch.Tensor:
    """exp(x) / sum exp(x) in float32, no max subtracted: NaN or inf where exp(x) overflows."""
    x = x.float()
    return (torch.exp(x) / torch.exp(x).sum(dim=1, keepdim=True)).double()


def _no_max_subtracted(inputs, yours, blocks) -> bool:
    """Check whether the output is exp(x) / sum exp(x) in float32 with no max subtracted, in a case where that
    overflows (NaN or inf)."""
    unshifted = _unshifted(inputs["x"])
    return bool((~unshifted.isfinite()).any()) and matches(yours, unshifted)


def _padding_counted(inputs, yours, blocks) -> bool:
    """Check whether the padded lanes of the last block counted as zeros in the max and the sum."""
    return (padding(inputs["x"].shape[1], blocks["B1"]) > 0
            and matches(yours, softmax_counting_padding(inputs["x"], blocks["B1"])))


def _rescale_flipped(inputs, yours, blocks) -> bool:
    """Check whether the output is the online softmax whose running sum is rescaled by exp(m' - m), not exp(m - m')."""
    return matches(yours, one_pass_softmax(inputs["x"], blocks["B1"], rescale="flipped"))


def _terms_against_the_old_max(inputs, yours, blocks) -> bool:
    """Check whether the output is the online softmax whose block terms are taken against the max from before the
    block, exp(x - m), not exp(x - m_new): the first block's against -inf, so the sum is inf and every output 0."""
    x = inputs["x"].to(torch.float32)
    return matches(yours, one_pass_softmax(x, blocks["B1"], old_max_terms=True).to(torch.float64))


def _in_log2_units(inputs, yours, blocks) -> torch.Tensor | None:
    """The softmax as computed with tl.exp2(x * LOG2E - m) (puzzle 4's passes or puzzle 5's online sum) that yours
    is, where it differs from the softmax; else None."""
    x = inputs["x"]
    right = specs.softmax(x)
    return next((wrong for wrong in (softmax_max_in_log2_units(x), softmax_max_in_log2_units(x, blocks["B1"]))
                 if matches(yours, wrong) and not matches(right, wrong)), None)


def _max_in_log2_units(inputs, yours, blocks) -> bool:
    """Check whether the output is the softmax computed with tl.exp2(x * LOG2E - m), in a case where that differs
    from the softmax and from one with no max subtracted."""
    wrong = _in_log2_units(inputs, yours, blocks)
    return wrong is not None and not matches(_unshifted(inputs["x"]), wrong)


def _overflow_either_way(inputs, yours, blocks) -> bool:
    """Check whether the output is both what no max subtracted gives and what tl.exp2(x * LOG2E - m) gives: a case
    (one value far above the rest) where the two overflow alike."""
    wrong = _in_log2_units(inputs, yours, blocks)
    return wrong is not None and _no_max_subtracted(inputs, yours, blocks)


def _exp_base(factor: float):
    """A check whether the output is the softmax of x * factor: an exponential of the wrong base."""
    def check(inputs, yours, blocks) -> bool:
        wrong = specs.softmax(inputs["x"] * factor)
        return matches(yours, wrong) and not matches(specs.softmax(inputs["x"]), wrong)
    check.__doc__ = f"Check whether the output is the softmax of x * {factor:.6g}."
    return check


def _softmax_lost_to_a_max_of_0(inputs, yours, blocks) -> bool:
    """Check whether the rows that came out NaN or 0 are rows of values far below 0 (see lost_to_a_max_of_0)."""
    return lost_to_a_max_of_0(inputs["x"], yours, specs.softmax(inputs["x"]))


SOFTMAX_ONLINE_HINTS = (
    Hint("block terms against the old max", _terms_against_the_old_max,
         "this block's terms were taken against the old max (-inf at first, so the sum is inf and every output 0): "
         "once m_new = tl.maximum(m, tl.max(x, axis=1)) is known, sum exp(x - m_new) and rescale the old sum by "
         "exp(m - m_new)"),
    Hint("max subtracted in other units", _max_in_log2_units,
         "the max was subtracted in other units than x: in tl.exp2(x * LOG2E - m), x is in log2 units and m is not, "
         "so the exponent at the max is 0.44 m, which overflows for m above 289 and leaves every weight 0 for m "
         "below about -340 (and an online sum's rescale no longer matches its terms). Subtract first, then convert: "
         "tl.exp2((x - m) * LOG2E)"),
    Hint("overflow: no max, or the max in other units", _overflow_either_way,
         "exp(x) overflowed float32 (above x = 88): subtract the row's max before the exp, exp(x - m); or, if you "
         "did, the max was subtracted in other units than x: tl.exp2(x * LOG2E - m) is 0.44 m at the max. Subtract "
         "first, then convert: tl.exp2((x - m) * LOG2E)"),
    Hint("no max subtracted", _no_max_subtracted,
         "exp(x) overflowed float32 (above x = 88): subtract the row's max before the exp, exp(x - m), so every "
         "weight is at most 1"),
    Hint("rescale flipped", _rescale_flipped, flipped_text("the sum")),
    Hint("tl.exp2 of plain x", _exp_base(1 / LOG2E),
         "the weights are 2^(x - m): tl.exp2 takes its argument in log2 units. Multiply by log2(e) = 1.4427 first, "
         "tl.exp2((x - m) * LOG2E), or use tl.exp"),
    Hint("tl.exp of log2 x", _exp_base(LOG2E),
         "the weights are exp((x - m) * log2(e)): scaled by log2(e), x is meant for tl.exp2, but went into tl.exp. "
         "Use tl.exp2 on it, or tl.exp on x - m itself"),
    Hint("sum not rescaled", _sum_not_rescaled,
         "the running sum is not rescaled: when the max grows from m to m', multiply the sum by exp(m - m')"),
    Hint("new max forgets the old", _new_max_forgets_the_old,
         "the new max forgets the old one: m_new = tl.maximum(m, tl.max(x, axis=1)), not tl.max(x, axis=1) alone; "
         "when a block's max is below the running max, exp(m - m_new) overflows"),
    Hint("padding counted as 0", _padding_counted,
         "the padded lanes of the last block count as zeros: load them with other=-inf, so exp(-inf) adds nothing"),
    Hint("max took in a 0", _softmax_lost_to_a_max_of_0,
         "rows of values far below 0 came out NaN or 0: the max took in a 0 (a max started at 0, or padded lanes "
         "loaded as 0), so every exp(x - m) underflowed and the sum is 0. Start the max at -inf, "
         'tl.full([B0], float("-inf"), dtype=tl.float32), and load padded lanes with other=float("-inf")'),
)

# Puzzle 4 has no running sum to rescale: the online softmax's hints (and its old-max mistake) are puzzle 5's alone.
ONLINE_ONLY = ("block terms against the old max", "rescale flipped", "sum not rescaled", "new max forgets the old")
SOFTMAX_THREE_LOOP_HINTS = tuple(h for h in SOFTMAX_ONLINE_HINTS if h.name not in ONLINE_ONLY)

SOFTMAX_THREE_LOOP = Puzzle(
    4, "softmax_three_loop", "Long softmax in three passes", NOTEBOOK, specs.softmax, SOFTMAX_THREE_LOOP_CASES,
    SOFTMAX_THREE_LOOP_TOLERANCE, hints=SOFTMAX_THREE_LOOP_HINTS,
    budgets=(Reads("x", 3, lesson="One pass for the max, one for the sum, one to write."),),
    lesson_blocks=("B1",))

SOFTMAX_ONLINE = Puzzle(
    5, "softmax_online", "Online softmax: max and sum in one pass", NOTEBOOK, specs.softmax, SOFTMAX_THREE_LOOP_CASES,
    SOFTMAX_THREE_LOOP_TOLERANCE, hints=SOFTMAX_ONLINE_HINTS,
    budgets=(Reads("x", 2, lesson="Carry the running max and rescale the running sum, so the max "
                                 "and the sum come from one pass over x."),),
    lesson_blocks=("B1",))

# -- puzzle 6: flash_attention -------------------------------------------------------------------------------

FLASH_ATTENTION_CASES = (
    Case("spec", dict(N0=32, T=200), dict(B0=8, B1=32), about="the spec's own size"),
    Case("ragged", dict(N0=37, T=301), dict(B0=8, B1=64), about="neither size a multiple of its block"),
    Case("single query", dict(N0=1, T=500), dict(B0=1, B1=64)),
    Case("single key", dict(N0=10, T=1), dict(B0=4, B1=16)),
    Case("single element", dict(N0=1, T=1), dict(B0=1, B1=16)),
    Case("large", dict(N0=256, T=2000), dict(B0=32, B1=256)),
    Case("65 key blocks", dict(N0=4, T=257), dict(B0=2, B1=4),
         about="65 blocks of 4 keys: a row of scores held in separate tiles (none wider than a block) takes 17 of "
               "them; the pass must loop over every key block, however many"),
    Case("large scores", dict(N0=20, T=300), dict(B0=4, B1=64), fill=normal(30.0),
         about="scores up to thousands: exp overflows unless the running max is subtracted"),
    Case("max grows every block", dict(N0=12, T=300), dict(B0=4, B1=32),
         fill=per_input(q=lambda n, s, g: 0.5 + torch.rand(s, generator=g, dtype=torch.float64),
                        k=lambda n, s, g: torch.linspace(-20, 20, s[0], dtype=torch.float64)),
         about="q > 0 and k increasing: every key block brings a new max, so the sums must be rescaled"),
    Case("zero queries", dict(N0=9, T=150), dict(B0=2, B1=32),
         fill=per_input(q=lambda n, s, g: torch.zeros(s, dtype=torch.float64)),
         about="q = 0 gives equal weights: the answer is the mean of v"),
    Case("scores far below 0, keys padded", dict(N0=37, T=300), dict(B0=8, B1=64),
         fill=per_input(q=odd_rows_negated(uniform(1.0, 2.0)), k=uniform(-150.0, -110.0)),
         about="every score of the even queries is below -110, and T is not a multiple of B1: padded keys (score "
               "0) that take part in the max make all their weights underflow to 0"),
)


def _flash_attention_scale(inputs, expected):
    """Rounding bound for z_i = sum_j p_ij v_j in units of float32 eps.

    A score s_ij carries a relative rounding error, and so does s_ij - m_i; both move the weight
    p_ij by that much, and through the normaliser every other weight too. Summing those
    condition numbers, weighted by p_ij |v_j|, gives the scale of an honest float32 result.
    """
    q, k, v = inputs["q"], inputs["k"], inputs["v"]
    scores = q[:, None] * k[None, :]
    weights = torch.softmax(scores, dim=1)
    condition = 1 + scores.abs() + (scores - scores.amax(dim=1, keepdim=True)).abs()
    mass = weights * v.abs()[None, :]
    return mass.sum(1) + (mass * condition).sum(1) + mass.sum(1) * (weights * condition).sum(1)


def _keys_padded_with_minus_inf(inputs, yours, blocks) -> bool:
    """Check whether exactly the queries q <= 0 came out NaN, in a case with padded keys: keys loaded with
    other=-inf score q * (-inf), which is +inf for q < 0 (the max is inf, and inf - inf is NaN) and NaN for q = 0."""
    if padding(inputs["k"].shape[0], blocks["B1"]) == 0:
        return False
    nan = yours.isnan()
    return bool(nan.any()) and bool((nan == (inputs["q"] <= 0)).all())


def _padded_keys_score_0(inputs, yours, blocks) -> bool:
    """Check whether the keys past T of the last block counted in the sums with a score of 0."""
    return (padding(inputs["k"].shape[0], blocks["B1"]) > 0
            and matches(yours, keys_padded_with_zeros(specs.flash_attention, inputs, blocks["B1"])))


FLASH_ATTENTION_HINTS = (
    Hint("padded keys loaded as -inf", _keys_padded_with_minus_inf,
         "the queries q <= 0 came out NaN: padded keys loaded with other=-inf score q * (-inf), which is +inf for a "
         "negative q (and NaN for q = 0). Load them with other=0.0 and set their scores to -inf: "
         'tl.where(key_ok, q[:, None] * k[None, :], float("-inf"))'),
    Hint("padded keys score 0", _padded_keys_score_0,
         "padded keys count in the sums with score 0: set their scores to -inf with tl.where(mask, s, -inf)"),
    max_took_in_0_hint(lambda inputs: inputs["q"][:, None] * inputs["k"][None, :], specs.flash_attention,
                       "keys past T"),
    *rescale_hints(scalar_attention, lambda inputs, yours, candidate: matches(yours, candidate), "the running sums",
                   "the denominator d"),
    *per_tile_hints(scalar_attention, lambda inputs, yours, candidate: matches(yours, candidate)),
)

FLASH_ATTENTION = Puzzle(
    6, "flash_attention", "Scalar FlashAttention: keys and values in one pass", NOTEBOOK, specs.flash_attention,
    FLASH_ATTENTION_CASES,
    Tolerance(4e-6, _flash_attention_scale, "the float32 rounding bound of the softmax-weighted sum"),
    hints=FLASH_ATTENTION_HINTS,
    budgets=(Reads("k", 1, per="program", block=("z", "B0"), lesson="Read each key once per program."),
             Reads("v", 1, per="program", block=("z", "B0"),
                   lesson="Read each value once per program, in the same loop as the keys."),
             Writes("z", 1, lesson="Store each query's z once, after the key loop.")),
    lesson_blocks=("B1",))

PUZZLES = (SOFTMAX_THREE_LOOP, SOFTMAX_ONLINE, FLASH_ATTENTION)
