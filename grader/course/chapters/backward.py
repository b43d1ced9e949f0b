"""Chapter 5, training: backward passes (notebooks/05_backward.ipynb): puzzles 14-18, softmax_backward,
cross_entropy_backward, graph_attention_backward, attention_backward and sparse_attention_backward.

How the one case generator and the one checker grade a gradient, with no machinery of their own:
- A backward spec (``grader.course.specs``) is float64 autograd of its forward spec: the reference is the
  forward's true gradient, and ``tests/test_backward_specs.py`` checks it against ``torch.autograd.gradcheck``
  and finite differences on tiny cases.
- What the forward saved (y, lse, h, den) is an argument like any other, marked ``@saves``: ``make_inputs``
  draws the case's inputs, then replaces the saved ones by the forward's, computed in float64 from the drawn
  values and cast (``cases.with_saved``). So a backward is graded alone, never through a learner's forward.
- Output gradients (dy, dloss, dh, de_out) are drawn at random in every case: with dy = 1, a kernel that
  writes dx = 0 passes a softmax backward. The named traps are cases of their own.
- Tolerances, as everywhere, are per element and relative to a scale built from the inputs (the rounding
  bound of an honest float32 kernel), and hints compare a wrong gradient with emulated mistakes
  (``grader.course.mistakes``).
"""

# Over the 600 lines grader/'s modules keep to: one module per chapter (README's layout), and this chapter's five
# puzzles each keep their cases, tolerances, hints and budgets beside their entry. Splitting it would split the chapter.

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

import torch

from grader.course import graphs, specs
from grader.course.budgets import Dots, Loads, NoAtomics, Reads, Scratch, Writes
from grader.course.cases import Case, Fill, normal, odd_rows_negated, per_input, rows, uniform
from grader.course.chapters import tensor_cores
from grader.course.chapters.sparse_graphs import _ragged_programs
from grader.course.mistakes import (
    attention_backward,
    attention_terms,
    bsb_backward,
    flash_backward,
    flash_terms,
    matches,
    near,
    pair_terms,
)
from grader.course.mistakes import cross_entropy_backward as cross_entropy_mistake
from grader.course.mistakes import softmax_backward as softmax_backward_mistake
from grader.course.puzzle import Hint, Puzzle, Tolerance

NOTEBOOK = "05_backward"

# -- puzzle 14: softmax_backward ------------------------------------------------------------------------------
# The grader draws y as logits (the spec's @saves turns them into their softmax).


def _logit_rows(make_row: Callable[[int, int, torch.Generator], torch.Tensor], doc: str) -> Fill:
    """y drawn as these logit rows, dy standard normal."""
    return per_input(y=rows(make_row, doc))


def _one_hot_row(i, length, gen):
    """Logits with 1000 at one position (moving along the rows, the last one in the last column): a one-hot y."""
    row = torch.randn(length, generator=gen, dtype=torch.float64)
    row[(length - 1 - 37 * i) % length] = 1000.0
    return row


def _half_minus_infinity(i, length, gen):
    """Logits of which about half are -inf (never all): a y with exact zeros."""
    row = torch.randn(length, generator=gen, dtype=torch.float64)
    row[torch.rand(length, generator=gen) < 0.5] = -torch.inf
    row[i % length] = 0.0
    return row


def _constant_rows(name, shape, gen):
    """dy the same number along each row: 0, 1, -3, 2.5, 1000, -7 in turn."""
    values = torch.tensor([0.0, 1.0, -3.0, 2.5, 1000.0, -7.0], dtype=torch.float64)
    return values[torch.arange(shape[0]) % 6][:, None].expand(shape).clone()


SOFTMAX_BACKWARD_CASES = (
    Case("spec", dict(N0=4, T=200), dict(B0=2, B1=32), about="the spec's own size"),
    Case("ragged", dict(N0=37, T=301), dict(B0=4, B1=64), about="neither size a multiple of its block"),
    Case("dy constant along a row", dict(N0=6, T=250), dict(B0=2, B1=64), fill=per_input(dy=_constant_rows),
         about="dx = y (c - c sum y) = 0: any error in Δ shows, such as a lane past the row counted in it"),
    Case("one-hot y", dict(N0=5, T=300), dict(B0=1, B1=64), fill=_logit_rows(_one_hot_row, "a 1000 in each row"),
         about="y is 0 or 1 (the softmax of a row with one logit 1000 above the rest): dx = 0 again"),
    Case("y with exact zeros", dict(N0=6, T=250), dict(B0=2, B1=64),
         fill=_logit_rows(_half_minus_infinity, "about half the logits -inf"),
         about="the softmax of -inf logits is exactly 0: no log or division of y, or 0 * inf gives NaN"),
    Case("T = 1", dict(N0=5, T=1), dict(B0=2, B1=16), about="a row of one element: y = 1, dx = 0"),
    Case("single row", dict(N0=1, T=1000), dict(B0=1, B1=128)),
    Case("large", dict(N0=64, T=2000), dict(B0=8, B1=256)),
    Case("peaked rows", dict(N0=8, T=500), dict(B0=4, B1=128), fill=per_input(y=normal(10.0)),
         about="logits of scale 10: y spans many magnitudes"),
    Case("65 blocks per row", dict(N0=3, T=257), dict(B0=2, B1=4),
         about="65 blocks of 4 in a row: a row held in separate tiles (none wider than a block), so that y and dy "
               "are read once, takes 17 of them; both passes must loop over the whole row, however long"),
    Case("rows of 2**20", dict(N0=2, T=1 << 20), dict(B0=1, B1=1 << 14),
         about="rows as long as the benchmark's 128 x 2**20 (two rows keep the interpreter fast); on a GPU, "
               "offsets past 2**31 need int64 from 2,048 such rows"),
)


SOFTMAX_BACKWARD_RTOL = 1e-5
# float32's smallest normal number: a y or p below it is flushed to 0 on a GPU, so its product is allowed to be 0.
TINY = torch.finfo(torch.float32).tiny


def _softmax_backward_scale(inputs, expected):
    """Rounding bound of y (dy - Δ) in float32: each term y_t dy_t of Δ carries its rounding, so Δ is good to
    sum_t y_t |dy_t|, which y multiplies, beside y |dy| itself; a y below float32's normal range may be 0."""
    y, dy = inputs["y"], inputs["dy"]
    return (y + TINY / SOFTMAX_BACKWARD_RTOL) * (dy.abs() + (y * dy.abs()).sum(dim=1, keepdim=True))


def _dx_with_delta(**mistake) -> Callable:
    """A hint's check: the output is puzzle 14's dx with this Δ mistake, and that mistake changes dx here."""
    def check(inputs, yours, blocks):
        wrong = softmax_backward_mistake(inputs["y"], inputs["dy"], blocks["B1"], **mistake)
        return matches(yours, wrong) and not matches(softmax_backward_mistake(inputs["y"], inputs["dy"]), wrong)
    check.__doc__ = f"Check whether dx is y (dy - Δ) computed with {mistake}."
    return check


def _one_delta_per_program(inputs, yours, blocks) -> bool:
    """Check whether dx used one Δ for each program's B0 rows, their sums added together (tl.sum without axis=1)."""
    wrong = softmax_backward_mistake(inputs["y"], inputs["dy"], rows_per_delta=blocks["B0"])
    return blocks["B0"] > 1 and matches(yours, wrong) and \
        not matches(softmax_backward_mistake(inputs["y"], inputs["dy"]), wrong)


def _sign_flipped(inputs, yours, blocks) -> bool:
    """Check whether dx is y (Δ - dy), the right answer negated."""
    right = softmax_backward_mistake(inputs["y"], inputs["dy"])
    return bool(right.abs().max() > 0) and matches(yours, -right)


SOFTMAX_BACKWARD_HINTS = (
    Hint("Δ left out", _dx_with_delta(delta="none"),
         "dx is y * dy: Δ is missing. dx = y * (dy - Δ), where Δ = sum over the row of y * dy, one number per row"),
    Hint("Δ not times y", _dx_with_delta(y_on_delta=False),
         "dx is y * dy - Δ: Δ must be multiplied by y too, dx = y * (dy - Δ[:, None])"),
    Hint("Δ of dy alone", _dx_with_delta(delta="dy"),
         "Δ is the sum of dy alone: it is the sum over the row of y * dy"),
    Hint("Δ of the first block", _dx_with_delta(delta="first block"),
         "Δ covers only the first block of the row: loop over the whole row (in blocks of B1) before any dx"),
    Hint("Δ so far", _dx_with_delta(delta="running"),
         "each block's dx used the Δ of the blocks so far: Δ needs the whole row, so finish one loop for Δ, then "
         "write dx in a second"),
    Hint("sign flipped", _sign_flipped, "dx has the wrong sign: dx = y * (dy - Δ), not y * (Δ - dy)"),
    Hint("dx without its factor y", _dx_with_delta(y_factor=False),
         "dx is dy - Δ: the factor y is missing, dx = y * (dy - Δ[:, None])"),
    Hint("lanes past the row's end counted in Δ", _dx_with_delta(padded_lanes=1.0),
         "Δ is too large by the number of lanes past the row's end: in the loop for Δ, masked loads must add "
         "nothing (other=0.0 for y and dy)"),
    Hint("one Δ per program", _one_delta_per_program,
         "one Δ was shared by a program's B0 rows (their sums added together): Δ is one number per row, "
         "tl.sum(y * dy, axis=1), a [B0] block"),
)

SOFTMAX_BACKWARD = Puzzle(
    14, "softmax_backward", "Softmax backward: Δ, then dx", NOTEBOOK, specs.softmax_backward,
    SOFTMAX_BACKWARD_CASES,
    Tolerance(SOFTMAX_BACKWARD_RTOL, _softmax_backward_scale, "y (|dy| + the row's sum of y |dy|)"),
    hints=SOFTMAX_BACKWARD_HINTS, outputs=("dx",),
    budgets=(Reads("y", 2, lesson="One pass for Δ, one for dx."),
             Reads("dy", 2, lesson="One pass for Δ, one for dx."),
             Writes("dx", 1, lesson="dx is written once, in the second pass.")),
    lesson_blocks=("B1",), int64_offsets=True)  # 2,048 rows of 2**20 pass 2**31 elements

# -- puzzle 15: cross_entropy_backward ------------------------------------------------------------------------


def _targets(vocabulary: int, ignored: float, first: int) -> Fill:
    """Class ids drawn uniformly from first .. vocabulary - 1, a share `ignored` of the rows IGNORE_INDEX."""
    def fill(name, shape, gen):
        ids = torch.randint(first, vocabulary, shape, generator=gen).to(torch.float64)
        return torch.where(torch.rand(shape, generator=gen) < ignored, float(specs.IGNORE_INDEX), ids)
    fill.__doc__ = f"targets in {first}..{vocabulary - 1}, {ignored:.0%} ignored"
    return fill


def _cross_entropy_case(name: str, rows_: int, vocabulary: int, block: int, about: str = "", ignored: float = 0.25,
                        first: int = 0, **fills: Fill) -> Case:
    """A case of N0 = rows_ rows of V = vocabulary columns; targets drawn for that V (see _targets)."""
    return Case(name, dict(N0=rows_, V=vocabulary), dict(BLOCK_V=block), about=about,
                fill=per_input(target=_targets(vocabulary, ignored, first), **fills))


def _fixed(value: float) -> Fill:
    def fill(name, shape, gen):
        return torch.full(shape, value, dtype=torch.float64)
    fill.__doc__ = f"{value:g}"
    return fill


CROSS_ENTROPY_BACKWARD_CASES = (
    _cross_entropy_case("spec", 8, 300, 64, "the spec's own size; a quarter of the rows ignored"),
    _cross_entropy_case("ragged", 13, 1000, 128, "V not a multiple of BLOCK_V"),
    _cross_entropy_case("targets in the last, partial block", 6, 1000, 256,
                        "every target lies in columns 768-999, the last block, which is partial", first=768),
    _cross_entropy_case("every row ignored", 5, 200, 64, "no row counts: dx = 0, with no 0 / 0", ignored=1.0),
    _cross_entropy_case("no row ignored", 6, 200, 32, "every row counts", ignored=0.0),
    _cross_entropy_case("huge logits", 6, 500, 128, "logits of scale 1e4: exp(x) overflows, exp(x - lse) does not",
                        x=normal(1e4)),
    _cross_entropy_case("dloss = -3.5", 7, 300, 64, "the gradient arriving at the loss scales every element",
                        dloss=_fixed(-3.5)),
    _cross_entropy_case("one class", 4, 1, 16, "V = 1: p = 1 at the target, so dx = 0"),
    _cross_entropy_case("a vocabulary of 128,000", 3, 128_000, 1 << 14,
                        "a language model's vocabulary (three rows keep the interpreter fast); on a GPU, offsets "
                        "pass 2**31 from 16,778 such rows"),
    _cross_entropy_case("large", 64, 5000, 1024),
    _cross_entropy_case("65 blocks per row", 2, 1029, 16,
                        "65 blocks of 16 in a row: a row of logits held in a dozen separate tiles, so that x is read "
                        "once, is too short; the loop must run over the whole row, however long", ignored=0.0),
)


def _counted(inputs) -> torch.Tensor:
    return inputs["target"] != specs.IGNORE_INDEX


CROSS_ENTROPY_RTOL = 2e-6


def _cross_entropy_scale(inputs, expected):
    """Rounding bound of dloss (exp(x - lse) - onehot) / n in float32: p carries the rounding of x - lse, of the
    saved lse, and of exp, and may underflow to 0 below float32's normal range; counted rows only, as an ignored
    row must be exactly 0."""
    x, lse, counted = inputs["x"], inputs["lse"], _counted(inputs)
    p = torch.softmax(x, dim=1)
    onehot = torch.nn.functional.one_hot(torch.where(counted, inputs["target"], 0), x.shape[1]).to(x.dtype)
    share = inputs["dloss"].abs() / max(int(counted.sum()), 1)
    rounding = (p - onehot).abs() + p * (1 + x.abs() + lse.abs()[:, None]) + TINY / CROSS_ENTROPY_RTOL
    return share * counted[:, None] * rounding


def _cross_entropy_with(**mistake) -> Callable:
    """A hint's check: dx is puzzle 15's with this mistake (grader.course.mistakes), which changes dx here."""
    def check(inputs, yours, blocks):
        wrong = cross_entropy_mistake(inputs, **mistake)
        return matches(yours, wrong) and not matches(cross_entropy_mistake(inputs), wrong)
    check.__doc__ = f"Check whether dx is the cross-entropy gradient with {mistake}."
    return check


def _target_in_each_block(inputs, yours, blocks) -> bool:
    """Check whether dx subtracted the target's 1 at column `target` of every block of BLOCK_V columns (a local
    column, tl.arange(0, BLOCK_V) == target, taken for the global one)."""
    return _cross_entropy_with(onehot_block=blocks["BLOCK_V"])(inputs, yours, blocks)


def _no_row_counts_nan(inputs, yours, blocks) -> bool:
    """Check whether dx has NaN where no row counts: 0 / 0."""
    return not bool(_counted(inputs).any()) and bool(yours.isnan().any())


CROSS_ENTROPY_BACKWARD_HINTS = (
    Hint("0 / 0 with no row counted", _no_row_counts_nan,
         "every row is ignored, so n = 0 and dloss / n is 0 / 0: divide by max(n, 1); every dx is 0 here"),
    Hint("mean over every row", _cross_entropy_with(mean="all"),
         "the mean is over the rows that count: divide by n, the number of targets that are not -100 (the launcher "
         "passes it), not by N0"),
    Hint("no mean", _cross_entropy_with(mean="none"),
         "the loss is a mean: divide by n, the number of rows whose target is not -100"),
    Hint("dloss left out", _cross_entropy_with(with_dloss=False),
         "dloss is left out: every element is multiplied by dloss, the gradient arriving at the loss"),
    Hint("target's 1 in the block's own column", _target_in_each_block,
         "the target's 1 was subtracted at column `target` of each block (or, where target >= BLOCK_V, nowhere): "
         "compare the global column, cols = tl.program_id(1) * BLOCK_V + tl.arange(0, BLOCK_V), with target"),
    Hint("target not subtracted", _cross_entropy_with(onehot=False),
         "the target's 1 is not subtracted: dx = factor * (p - 1) in the column cols == target"),
    Hint("lse in the wrong units", _cross_entropy_with(lse_units="log2"),
         "p is off by a factor per row: lse is a natural log. With exp2, multiply both x and lse by log2(e): "
         "tl.exp2((x - lse) * 1.4426950408889634)"),
    Hint("ignored rows not zeroed", _cross_entropy_with(zero_ignored=False),
         "a row whose target is -100 does not count: its dx is 0"),
)

CROSS_ENTROPY_BACKWARD = Puzzle(
    15, "cross_entropy_backward", "Cross-entropy backward from the saved log-sum-exp", NOTEBOOK,
    specs.cross_entropy_backward, CROSS_ENTROPY_BACKWARD_CASES,
    Tolerance(CROSS_ENTROPY_RTOL, _cross_entropy_scale, "|dloss| / n (|p - onehot| + p (1 + |x| + |lse|)), "
                                                        "counted rows"),
    hints=CROSS_ENTROPY_BACKWARD_HINTS, outputs=("dx",),
    budgets=(Reads("x", 1, lesson="Recompute p = exp(x - lse) from the saved lse: one pass, no max or sum again."),
             Writes("dx", 1, lesson="dx is written once.")),
    launcher_ops=("aten.ne", "aten.sum"),  # the given launcher counts the rows that are not ignored
    lesson_blocks=("BLOCK_V",),  # a block of columns per program: a whole row in one tile is not the lesson
    int64_offsets=True)  # 16,384 rows of 128,000 columns pass 2**31 elements

# -- puzzle 16: graph_attention_backward ----------------------------------------------------------------------


def _sources_with_degrees(degrees: torch.Tensor):
    """Node n sends degrees[n] edges, to destinations drawn uniformly (the reverse of graphs.with_degrees)."""
    return lambda gen: graphs.with_degrees(degrees, gen).reversed()


def _hub_source(gen):
    """Node 7 sends half the edges of a random graph."""
    return graphs.with_hub(graphs.random_graph(24, 3, gen), 0.5, gen, hub=7).reversed()


def _hubs_both_ways(gen):
    """A random graph of 30 nodes, plus 300 edges into node 3 and 300 out of node 7, from and to random nodes: each
    walk (a node's incoming edges, a node's outgoing edges) has one list of 300 or more."""
    base = graphs.random_graph(30, 2, gen)
    others = graphs._randint(0, 29, 600, gen).to(torch.int32)
    hub_in, hub_out = torch.full((300,), 3, dtype=torch.int32), torch.full((300,), 7, dtype=torch.int32)
    return graphs.from_coo(torch.cat([base.src, others[:300], hub_out]), torch.cat([base.dst, hub_in, others[300:]]),
                           30)


def _small_molecules(batch: int):
    """Molecule-like graphs of 10 to 20 atoms: the interpreter runs each node as a program, so the graphs are
    small (a learner grades dozens of times); the benchmark runs batches of 100-node molecules."""
    return lambda gen: graphs.molecules(batch, gen, nodes=(10, 20))


def _dyadic(values: tuple[float, ...]) -> Fill:
    """Each element one of `values` (with either sign), drawn uniformly: sums of their products are exact."""
    def fill(name, shape, gen):
        table = torch.tensor(values, dtype=torch.float64)
        signs = torch.where(torch.rand(shape, generator=gen) < 0.5, -1.0, 1.0).to(torch.float64)
        return table[torch.randint(len(values), shape, generator=gen)] * signs
    fill.__doc__ = f"one of +-{values}"
    return fill


def _one_feature(values: tuple[float, ...]) -> Fill:
    """One feature per edge and head set to one of `values` (with either sign), the others 0."""
    dyadic = _dyadic(values)

    def fill(name, shape, gen):
        chosen = torch.nn.functional.one_hot(torch.randint(shape[-1], shape[:-1], generator=gen), shape[-1])
        return chosen.to(torch.float64) * dyadic(name, shape, gen)
    fill.__doc__ = f"one feature per edge and head, one of +-{values}"
    return fill


# D = 16, so 1/sqrt(D) = 0.25 exactly: k q / 4 hits +-5 exactly for q = 4, k = 5 and q = 2, k = 10, and with one
# feature of e per head, +-1, +-2 or +-4, the logit is exactly +-5 for many edges (in float32 and float64 alike).
AT_THE_BOUNDS = per_input(q=_dyadic((1.0, 2.0, 4.0)), k=_dyadic((1.0, 2.5, 5.0, 10.0)), e=_one_feature((1.0, 2.0, 4.0)))

GRAPH_ATTENTION_BACKWARD_CASES = _ragged_programs((
    Case("molecules", dict(H=4, D=32), dict(BLOCK_E=8), graph=_small_molecules(2),
         about="a batch of two small molecule-like graphs"),
    Case("nodes with no outgoing edge", dict(H=4, D=32), dict(BLOCK_E=4, NODES_PER_PROGRAM=2),
         graph=_sources_with_degrees(torch.arange(25) % 5), about="a fifth of the nodes send no edge: their dk and "
                                                                   "dv are 0, and must be written"),
    Case("nodes with no incoming edge", dict(H=4, D=32), dict(BLOCK_E=8),
         graph=lambda g: graphs.with_degrees(torch.arange(24) % 4, g),
         about="a quarter of the nodes receive no edge: their dq is 0"),
    Case("hub source", dict(H=4, D=32), dict(BLOCK_E=16), graph=_hub_source,
         about="node 7 sends half of all edges: one long outgoing list (and, with atomics, contention)"),
    Case("duplicate edges and self loops", dict(H=4, D=32), dict(BLOCK_E=8, NODES_PER_PROGRAM=3),
         graph=lambda g: graphs.with_self_loops(graphs.with_duplicates(_small_molecules(1)(g), 20, g), 8, g),
         about="each copy of an edge counts, in both directions"),
    Case("values exactly at the clip bounds", dict(H=2, D=16), dict(BLOCK_E=8), fill=AT_THE_BOUNDS,
         graph=_small_molecules(1),
         about="products and logits exactly +-5, where torch's clamp passes the gradient, and beyond, where it "
               "stops"),
    Case("features and logits beyond 5", dict(H=4, D=32), dict(BLOCK_E=8),
         fill=per_input(q=normal(5.0), k=normal(5.0), e=normal(0.3)), graph=_small_molecules(1),
         about="many features and logits clipped: their gradients are 0"),
    Case("H and D not powers of two", dict(H=3, D=20), dict(BLOCK_E=8), graph=_small_molecules(1),
         about="H=3 heads of D=20 features: masks on both"),
    Case("H=5, D=7", dict(H=5, D=7), dict(BLOCK_E=4, NODES_PER_PROGRAM=4), fill=per_input(q=normal(3.0)),
         graph=lambda g: graphs.with_hub(graphs.random_graph(20, 3, g), 0.3, g), about="small odd sizes with a hub"),
    Case("empty graph", dict(H=4, D=32), dict(BLOCK_E=8), graph=lambda g: graphs.empty(23),
         about="no edge at all: dq, dk and dv are 0"),
    Case("hubs of 300 edges", dict(H=2, D=16), dict(BLOCK_E=4), graph=_hubs_both_ways,
         about="node 3 receives 300 edges and node 7 sends 300: each walk loops over 75 blocks or more"),
))

# The tolerance of puzzle 16. A clip's gradient jumps at +-5: where float32 rounding can move a product or a logit
# across the bound (within NEAR of it, but not on it: exact values are the bound-case's trap), an honest kernel's
# mask may differ from float64's, and the whole term it masks is allowed. Everything else is a rounding bound.
BACKWARD_RTOL = 1e-5
NEAR = 1e-5  # relative: float32 rounds a product to about 1e-7, a logit to 1e-7 of its features' sum of magnitudes


def _near_the_bound(values: torch.Tensor, magnitude: torch.Tensor) -> torch.Tensor:
    distance = (values.abs() - 5).abs()
    return (distance > 0) & (distance <= NEAR * magnitude)


def _graph_attention_backward_bounds(inputs) -> dict[str, torch.Tensor]:
    """Per output, the scale of an honest float32 kernel's error (in units of BACKWARD_RTOL): its rounding bound,
    plus every term a clip near +-5 may mask or not (divided by BACKWARD_RTOL: allowed whole)."""
    t = attention_terms(inputs)
    q, k, v, e, h, dh, de_out = (inputs[name] for name in ("q", "k", "v", "e", "h", "dh", "de_out"))
    condition = 1 + (t.clipped * e).abs().sum(-1)  # [E, H]: the logit's rounding, relative to it
    # dlogit's rounding: p's (the logit's), dh . v's and δ = dh . h's
    rounding = condition * t.softmax_grad.abs() + t.p * ((dh[t.dst] * v[t.src]).abs().sum(-1)
                                                         + (dh[t.dst] * h[t.dst]).abs().sum(-1))
    logit_inside = t.logit.abs() <= 5
    dlogit = torch.where(logit_inside, t.softmax_grad, 0.0)
    flipped_logit = torch.where(_near_the_bound(t.logit, condition), t.softmax_grad.abs(), 0.0)
    grad = de_out.abs() + (dlogit.abs() + rounding * logit_inside + flipped_logit / BACKWARD_RTOL)[..., None]
    feature_inside = t.product.abs() <= 5
    flipped_feature = torch.where(_near_the_bound(t.product, t.product.abs()),
                                  (de_out + dlogit[..., None]).abs() * e.abs() / BACKWARD_RTOL, 0.0)
    dproduct = torch.where(feature_inside, grad * e.abs(), 0.0) + flipped_feature
    scale = q.shape[-1] ** -0.5
    return {"dq": torch.zeros_like(q).index_add_(0, t.dst, dproduct * k[t.src].abs()) * scale,
            "dk": torch.zeros_like(k).index_add_(0, t.src, dproduct * q[t.dst].abs()) * scale,
            "dv": torch.zeros_like(v).index_add_(0, t.src, (t.p * condition)[..., None] * dh[t.dst].abs()),
            "de": grad * t.clipped.abs()}


def _bound_of(bounds: Callable, output: str) -> Callable:
    """A tolerance's scale: `output`'s entry of `bounds` (puzzle 16's, 17's or 18's rounding bounds)."""
    def scale(inputs, expected):
        return bounds(inputs)[output]
    scale.__doc__ = f"The rounding bound of {output} (see {bounds.__name__})."
    return scale


_GRADIENTS_EXPLAINED = ("the float32 rounding bound of each term, through p, δ and the clips, and whole any term "
                        "whose clip float32 may decide either way")


def _attention_backward_with(**mistake) -> Callable:
    """A hint's check: a gradient is puzzle 16's with this mistake (grader.course.mistakes.attention_backward), and
    that mistake changes it here. dq, dk and dv have one shape: each is compared with all three."""
    def check(inputs, yours, blocks):
        wrong, right = attention_backward(inputs, **mistake), attention_backward(inputs)
        return any(w.shape == yours.shape and yours.numel() and matches(yours, w) and not matches(r, w)
                   for w, r in zip(wrong, right))
    check.__doc__ = f"Check whether a gradient is the layer's backward with {mistake}."
    return check


def _dk_from_own_k(inputs, yours, blocks) -> bool:
    """Check whether dk took the sending node's own k (scaled by 1 / sqrt(D) or not) where the destination's q
    belongs."""
    return any(_attention_backward_with(dk_from=taken)(inputs, yours, blocks) for taken in ("k", "scaled k"))


GRAPH_ATTENTION_BACKWARD_HINTS = (
    Hint("clip bounds stop the gradient", _attention_backward_with(bounds_pass=False),
         "at exactly -5 or 5 the gradient passes: torch's clamp counts the bounds as inside its range, so the masks "
         "are tl.abs(x) <= 5.0, not < 5.0"),
    Hint("logit clip's gradient ignored", _attention_backward_with(logit_mask=False),
         "where the logit clip held the logit at -5 or 5 (|logit| > 5), its gradient is 0: dlogit = "
         "tl.where(tl.abs(logit) <= 5.0, p * (dh . v - δ), 0.0)"),
    Hint("feature clip's gradient ignored", _attention_backward_with(feature_mask=False),
         "where the feature clip held k q / sqrt(D) at -5 or 5, that feature's gradient is 0: mask g * e with "
         "tl.abs(product) <= 5.0 before it reaches dq and dk"),
    Hint("δ left out", _attention_backward_with(delta=False),
         "dlogit misses δ: dlogit = p * (dh_n . v_s - δ_n), with δ_n = dh_n . h_n, the row sum of dh * h over the "
         "features (puzzle 14's Δ), from the saved h"),
    Hint("de from the unclipped product", _attention_backward_with(de_clipped=False),
         "de = g * clip(k q / sqrt(D), -5, 5): the clipped product, as e_out was made, not the raw one"),
    Hint("de_out left out", _attention_backward_with(with_de_out=False),
         "g = de_out + dlogit: e_out is an output too, and its gradient de_out reaches e, q and k directly"),
    Hint("dk from the node's own k", _dk_from_own_k,
         "dk takes the destination's q: for each edge s -> n, dk_s += (g * e masked by the clip) * q_n / sqrt(D); "
         "the sending node's own k belongs in dq_n"),
    Hint("p and dlogit kept by slot", _attention_backward_with(scratch_by_slot=True),
         "dk and dv read p and dlogit of the wrong edges: the first pass stored them at the CSC slot, the second "
         "reads them by edge id. Store them by edge id too (edge_id[slot] * H + head), the one index both passes "
         "know"),
    Hint("1/sqrt(D) left out", _attention_backward_with(scaled=False),
         "dq and dk lack the 1/sqrt(D) of k q / sqrt(D): multiply them by scale"),
)

_PASSES = "once per edge in each pass (the incoming and the outgoing), and once per node"
_SCALARS = "; the two [E, H] tensors the first pass leaves (p and dlogit) count here too"

GRAPH_ATTENTION_BACKWARD = Puzzle(
    16, "graph_attention_backward", "Graph attention backward, over the transposed graph", NOTEBOOK,
    specs.graph_attention_backward, GRAPH_ATTENTION_BACKWARD_CASES,
    tuple(Tolerance(BACKWARD_RTOL, _bound_of(_graph_attention_backward_bounds, name), _GRADIENTS_EXPLAINED)
          for name in ("dq", "dk", "dv", "de")),
    hints=GRAPH_ATTENTION_BACKWARD_HINTS, outputs=("dq", "dk", "dv", "de"),
    budgets=(NoAtomics(lesson="dk and dv sum over each node's outgoing edges: walk the CSR by source, one program "
                              "per node, instead of scattering into the sources."),
             Loads(("e",), "2*E*H*D + 2*E*H", lesson=f"Read each edge's e once in each pass{_SCALARS}; an [E, H, D] "
                                                    "tensor handed from one pass to the next shows here."),
             Loads(("k",), "(2*E + N)*H*D + 2*E*H", lesson=f"Read k at most {_PASSES}{_SCALARS}."),
             Loads(("v",), "(2*E + N)*H*D + 2*E*H", lesson=f"Read v at most {_PASSES}{_SCALARS}."),
             *(Writes(name, 1, lesson=f"{name} is written once.") for name in ("dq", "dk", "dv", "de"))))

# -- puzzle 17: attention_backward -------------------------------------------------------------------------------


def walks(sizes: Mapping) -> dict[str, int]:
    """What the two walks of puzzle 17 visit at a case's sizes and block sizes, for its budgets (query i sees key j
    when j <= i + T - N, if causal): key_walk_rows, the query rows all key-block programs load (each starts at the
    first whole query block that sees one of its keys); query_walk_rows, the key rows all query-block programs
    load (each stops after the last key block its last query sees); dot_floor, the tl.dot work of four products
    per (query row, key block) of the key walk and three per (key row, query block) of the query walk (a
    program's own block counts whole, the rows it loops over exactly, as in puzzle 12's budget)."""
    n, t, d, bq, bk, causal = (sizes[name] for name in ("N", "T", "D", "BQ", "BK", "causal"))
    shift = t - n if causal else t  # without the mask, every query sees every key
    key_rows = [n - min(max(first - shift, 0) // bq * bq, n) if causal else n for first in range(0, t, bk)]
    query_ends = [min(t, max(first + bq + shift, 0)) if causal else t for first in range(0, n, bq)]
    query_rows = [min(t, -(-end // bk) * bk) for end in query_ends]
    return dict(key_walk_rows=sum(key_rows), query_walk_rows=sum(query_rows),
                dot_floor=d * (4 * bk * sum(key_rows) + 3 * bq * sum(query_rows)))


def _attention_case(name: str, n: int, t: int, d: int, bq: int, bk: int, causal: bool = False,
                    scale: float | None = None, about: str = "", fill: Fill | None = None, half=None,
                    repeat: bool = False) -> Case:
    """A case of puzzle 17: N queries, T keys of D features, blocks BQ and BK; scale 1 / sqrt(D) unless given;
    values standard normal unless filled otherwise."""
    dims = dict(N=n, T=t, D=d, causal=causal, scale=d ** -0.5 if scale is None else scale)
    return Case(name, dims, dict(BQ=bq, BK=bk), fill=fill or normal(), about=about, half=half, repeat=repeat)


ATTENTION_BACKWARD_CASES = (
    _attention_case("spec", 100, 130, 32, 32, 32, about="neither N nor T a multiple of a block"),
    _attention_case("whole blocks", 64, 96, 32, 32, 32,
                    about="N and T multiples of both blocks: every tile is whole, so all seven products per tile pair "
                          "must be tl.dot calls to reach the budget's work"),
    _attention_case("one key block", 64, 20, 32, 16, 32, about="T < BK: one key-block program walks every query"),
    _attention_case("many key blocks", 40, 1001, 16, 16, 64, about="16 key blocks, the last partial"),
    _attention_case("65 key blocks", 16, 1029, 16, 16, 16,
                    about="65 key blocks of 16, the last partial: each query block's walk must loop over every key "
                          "block, however many (a dozen tiles held at once are too few)"),
    _attention_case("65 query blocks", 1029, 16, 16, 16, 16,
                    about="65 query blocks of 16, the last partial: each key block's walk must loop over every query "
                          "block, however many (a dozen tiles held at once are too few)"),
    _attention_case("N = 3001", 3001, 45, 16, 128, 32,
                    about="3001 queries (no block divides it) against 45 keys (the interpreter is slow at N x T; the "
                          "benchmark runs N = T = 3001)"),
    _attention_case("scale 0.3", 50, 70, 64, 16, 32, scale=0.3, about="a scale other than 1 / sqrt(D): use the "
                                                                       "argument, in s and in dq and dk"),
    _attention_case("dO x 100", 40, 90, 128, 16, 32, fill=per_input(do=normal(100.0)),
                    about="gradients in the thousands: sums in float32, ds below float16's 65504 before its cast"),
    _attention_case("dO x 1e-3", 40, 90, 64, 16, 32, fill=per_input(do=normal(1e-3)),
                    about="ds as small as 1e-8, below float16's normal range (6e-5): float16 keeps fewer digits "
                          "there, which the tolerance allows; nothing may be flushed to 0 on purpose"),
    _attention_case("large scores", 40, 150, 32, 16, 32, fill=normal(8.0),
                    about="scores in the hundreds: p = exp(s - lse) from the saved lse, never exp(s) alone"),
    _attention_case("scores far below 0, keys padded", 40, 100, 32, 16, 32,
                    fill=per_input(q=odd_rows_negated(uniform(0.5, 1.5)), k=uniform(-40.0, -30.0)),
                    about="the even rows score about -200 on every key, so their lse is about -200, and T is not a "
                          "multiple of BK: a padded key (score 0) would get p = exp(200), which overflows"),
    _attention_case("causal, N = T", 100, 100, 32, 16, 32, causal=True,
                    about="query i sees keys 0..i: blocks above the diagonal skipped, the diagonal ones masked"),
    _attention_case("causal, more keys than queries", 40, 100, 32, 16, 32, causal=True,
                    about="query i sees keys 0..i + 60: the mask is aligned to the last key, not the first"),
    _attention_case("causal, more queries than keys", 90, 40, 32, 16, 16, causal=True,
                    about="the mask ends at the last query and key: the first 50 queries see no key, their lse is "
                          "-inf and their gradients 0, with no NaN (inf - inf)"),
    _attention_case("D=128", 40, 90, 128, 16, 32, causal=True, about="D=128, causal"),
    _attention_case("bfloat16", 70, 90, 64, 32, 32, half=torch.bfloat16,
                    about="bfloat16 inputs: cast p and ds to the inputs' dtype for tl.dot"),
    _attention_case("the same case twice", 100, 130, 32, 32, 32, causal=True, repeat=True,
                    about="run twice on a GPU, the two results must be the same bits: no atomics"),
)

ATTENTION_BACKWARD_RTOL = 1e-2
# Half the spacing of float16's subnormal numbers: rounding p or ds below float16's normal range (6.1e-5) to 16 bits
# may move it by this much, whatever its size.
HALF_SUBNORMAL = 2.0 ** -25


def _attention_backward_bounds(inputs) -> dict[str, torch.Tensor]:
    """Per output, the scale of an honest kernel's error: p and ds rounded to 16 bits before their tl.dot (2^-9 of
    each in bfloat16, or HALF_SUBNORMAL below float16's normal range), and Δ from the 16-bit o the forward saved
    (off by up to 2^-9 of sum_d |dO o|)."""
    t = flash_terms(inputs)
    q, k, do = inputs["q"], inputs["k"], inputs["do"]
    floor = HALF_SUBNORMAL / ATTENTION_BACKWARD_RTOL
    ds = torch.where(t.seen, t.p * ((t.dp - t.delta[:, None]).abs() + (do * inputs["o"]).abs().sum(1)[:, None])
                     + floor, 0.0)
    p = torch.where(t.seen, t.p + floor, 0.0)
    return {"dq": ds @ k.abs() * inputs["scale"], "dk": ds.T @ q.abs() * inputs["scale"], "dv": p.T @ do.abs()}


def _tiled_backward_with(backward: Callable, bounds: Callable, what: str, **mistake) -> Callable:
    """A hint's check for puzzles 17 and 18: a gradient is `backward`'s with this mistake (mistakes.flash_backward
    or bsb_backward), within the 16-bit rounding of p and ds (`bounds`, over the pairs the mistake counts where it
    counts others), and the mistake changes it here beyond an honest kernel's rounding."""
    def check(inputs, yours, blocks):
        honest = bounds(inputs)
        rounding = bounds(inputs, mistake["pairs"]) if "pairs" in mistake else honest
        wrong, right = backward(inputs, **mistake), backward(inputs)
        return any(w.shape == yours.shape and yours.numel() and near(yours, w, rounding[name])
                   and not near(r, w, honest[name]) for name, w, r in zip(("dq", "dk", "dv"), wrong, right))
    check.__doc__ = f"Check whether a gradient is the {what} with {mistake}."
    return check


_flash_backward_with = functools.partial(_tiled_backward_with, flash_backward, _attention_backward_bounds,
                                         "attention backward")


def _nan_where_lse_is_minus_inf(inputs, yours, blocks) -> bool:
    """Check whether the gradient has NaN and some query sees no key, or has no neighbour (lse = -inf):
    exp(-inf - -inf)."""
    return bool(yours.isnan().any()) and bool(inputs["lse"].isneginf().any())


def _padded_keys_overflow(inputs, yours, blocks) -> bool:
    """Check whether the gradient has NaN or inf where T is not a multiple of BK and some query's lse is far below 0:
    a padded key's score 0 gives p = exp(-lse), which overflows float32."""
    lse = inputs["lse"]
    return (bool((~yours.isfinite()).any()) and inputs["k"].shape[0] % blocks["BK"] != 0
            and bool((lse.isfinite() & (lse < -80)).any()))


def _one_delta_per_query_block(inputs, yours, blocks) -> bool:
    """Check whether a gradient used one Δ for each program's BQ queries, their Δs added together (the delta
    kernel's tl.sum without axis=1)."""
    return blocks["BQ"] > 1 and _flash_backward_with(queries_per_delta=blocks["BQ"])(inputs, yours, blocks)


ATTENTION_BACKWARD_HINTS = (
    Hint("padded keys overflow", _padded_keys_overflow,
         "NaN or inf: keys past T load as 0, so their score is 0 and p = exp(0 - lse), which overflows where lse is "
         "far below 0 (here about -200). Give them p = 0: tl.where on the keys in range (keys < T). If they get 0 "
         "already, p overflows at real keys: is lse used in natural-log units, exp2(s * log2(e) - lse * log2(e))?"),
    Hint("NaN where a query sees no key", _nan_where_lse_is_minus_inf,
         "NaN: a query that sees no key has lse = -inf, and exp2(-inf - -inf) is NaN. Set p with tl.where(seen, "
         "tl.exp2(s - lse * log2(e)), 0.0), so the masked pairs never reach the subtraction's result. If p is set "
         "so already, `seen` lets such a query see keys: with causal, query i sees key j only when j <= i + (T - N)"),
    Hint("Δ left out", _flash_backward_with(delta=False),
         "ds misses Δ: ds = p * (dp - Δ[:, None]), with Δ_i = dO_i . o_i from the delta kernel (puzzle 14's Δ)"),
    Hint("one Δ per program", _one_delta_per_query_block,
         "one Δ was shared by a program's BQ queries (their sums added together): the delta kernel's sum ran over "
         "its whole [BQ, D] block. Δ is one number per query, Δ_i = dO_i . o_i: tl.sum(o * do, axis=1), a [BQ] block"),
    Hint("scale left out", _flash_backward_with(scaled=0),
         "dq and dk lack the scale of s = scale * q . k: multiply them by `scale` when you store them"),
    Hint("scale applied twice", _flash_backward_with(scaled=2),
         "dq and dk carry the scale twice: it belongs once, in s (for p) and once in dq and dk, not also in q or k"),
    Hint("lse in the wrong units", _flash_backward_with(lse_units="log2"),
         "p is off by a factor per row: lse is a natural log. With exp2, multiply both the scores and lse by "
         "log2(e): p = exp2(s * log2(e) - lse * log2(e))"),
    Hint("causal mask aligned top left", _flash_backward_with(causal_mask="top left"),
         "the causal mask is aligned to the first query and key; here it ends at the last ones: query i sees key j "
         "when j <= i + (T - N)"),
    Hint("causal mask off by one", _flash_backward_with(causal_mask="strict"),
         "the causal mask is off by one: query i sees key j when j <= i + (T - N), the diagonal included (<=, not "
         "<)"),
    Hint("causal mask ignored", _flash_backward_with(causal_mask="none"),
         "with causal set, query i sees only keys j <= i + (T - N): mask p (and skip the blocks above the diagonal)"),
)

# Loads of tensors that are not inputs (Δ) count against every budget on floating-point inputs (grader.course.budgets).
_ONCE_PER_KEY_WALK = "each query row once per key block's walk that needs it, and once in the other kernels, Δ too"
_ONCE_PER_QUERY_WALK = "each key row once per query block's walk that needs it, and once in the key walk, Δ too"

ATTENTION_BACKWARD = Puzzle(
    17, "attention_backward", "FlashAttention backward on tensor cores", NOTEBOOK, specs.attention_backward,
    ATTENTION_BACKWARD_CASES,
    tuple(Tolerance(ATTENTION_BACKWARD_RTOL, _bound_of(_attention_backward_bounds, name),
                    "the 16-bit rounding of p and ds before their tl.dot, through the products that follow")
          for name in ("dq", "dk", "dv")),
    hints=ATTENTION_BACKWARD_HINTS, outputs=("dq", "dk", "dv"),
    budgets=(NoAtomics(lesson="Each program owns the rows it writes: dk and dv in the key walk, dq in the query "
                              "walk, so every sum runs in one order."),
             Loads(("q",), "(key_walk_rows + N) * (D + 1)", says=_ONCE_PER_KEY_WALK,
                   lesson="Read q once per key block's walk and once in the query walk (Δ counts with it); with "
                          "causal, a key block's walk starts at the first query block that sees one of its keys."),
             Loads(("do",), "(key_walk_rows + 2 * N) * D + key_walk_rows + N", says=_ONCE_PER_KEY_WALK,
                   lesson="Read dO once per key block's walk, once in the query walk and once for Δ."),
             Loads(("lse",), "2 * (key_walk_rows + N)", says=_ONCE_PER_KEY_WALK,
                   lesson="Read lse once per key block's walk and once in the query walk (Δ counts with it)."),
             *(Loads((name,), "(query_walk_rows + T) * D + key_walk_rows + N", says=_ONCE_PER_QUERY_WALK,
                     lesson=f"Read {name} once per query block's walk and once in the key walk (Δ counts with it); "
                            "with causal, a query block's walk stops after the last key block its queries see.")
               for name in ("k", "v")),
             Scratch(("dq", "dk", "dv"), "N",
                     lesson="Only Δ (one float per query) goes from one kernel to the next: p and ds live in "
                            "registers, one tile at a time, never as N x T matrices in memory."),
             Dots("dot_floor", says="4 products per key-walk tile and 3 per query-walk tile", products=7,
                  lesson="All seven products are tl.dot calls on 16-bit operands: s and dp in both walks, dv and dk "
                         "in the key walk, dq in the query walk."),
             *(Writes(name, 1, lesson=f"{name} is written once.") for name in ("dq", "dk", "dv"))),
    lesson_blocks=("BQ", "BK"), budget_sizes=walks)

# -- puzzle 18: sparse_attention_backward ----------------------------------------------------------------------


def _column_hub(gen):
    """A random graph of 60 nodes plus an edge from node 5 into every node: every query attends to key 5, whose
    window in the transposed BSB lists all 60 queries (four TCBs)."""
    graph = graphs.random_graph(60, 3, gen)
    everyone = torch.arange(60, dtype=torch.int32)
    return graphs.from_coo(torch.cat([graph.src, torch.full((60,), 5, dtype=torch.int32)]),
                           torch.cat([graph.dst, everyone]), 60)


def _sparse_backward_case(name, build, about, dims=None, fill=None, half=None, repeat=False) -> Case:
    return Case(name, dims or dict(D=32), fill=fill or normal(), about=about, graph=build, half=half, repeat=repeat)


SPARSE_ATTENTION_BACKWARD_CASES = (
    _sparse_backward_case("molecules", lambda g: graphs.molecules(2, g), "a batch of two small molecule-like graphs"),
    _sparse_backward_case("non-edges score far higher", tensor_cores._same_parity, fill=tensor_cores._far_non_edges,
                          about="each row's non-neighbours in the same TCB score ~140 above its neighbours: off the "
                                "bitmap, p must be 0, in both kernels (exp(s - lse) there is huge)"),
    _sparse_backward_case("rows with no neighbour", lambda g: graphs.with_isolated(graphs.molecules(1, g), 21),
                          "21 nodes no edge reaches: their lse is -inf and dq is 0 (no NaN), and as keys nobody "
                          "attends to, their dk and dv are 0, written; the last windows of both BSBs are empty"),
    _sparse_backward_case("a window with one edge", tensor_cores._window_of_one_edge,
                          "window 1 holds one edge, window 2 none, in the BSB and in its transpose"),
    _sparse_backward_case("hub row", lambda g: graphs.with_hub(graphs.random_graph(60, 3, g), 0.6, g, hub=17),
                          "query 17 attends to most keys: its window has many TCBs, and it sits in every key window"),
    _sparse_backward_case("column hub", _column_hub,
                          "every query attends to key 5: key 5's window in the transposed BSB has many TCBs"),
    _sparse_backward_case("duplicate edges and self loops", lambda g: graphs.with_self_loops(graphs.with_duplicates(
        graphs.molecules(2, g), 60, g), 20, g), "duplicate edges count once, in both BSBs"),
    _sparse_backward_case("power law", lambda g: graphs.power_law(90, 500, g), "hubs and many rows of degree 0 or 1"),
    _sparse_backward_case("large scores", lambda g: graphs.random_graph(50, 6, g), "scores of a few hundred: p from "
                          "the saved lse, never exp(s) alone", fill=normal(4.0)),
    _sparse_backward_case("random, D=16", lambda g: graphs.random_graph(50, 5, g), "D=16", dims=dict(D=16)),
    _sparse_backward_case("banded, D=64", lambda g: graphs.banded(45, 8, g), "locality: few, full TCBs",
                          dims=dict(D=64)),
    _sparse_backward_case("given degrees, D=128", lambda g: graphs.with_degrees(torch.arange(33) % 7, g), "D=128",
                          dims=dict(D=128)),
    _sparse_backward_case("empty graph", lambda g: graphs.empty(20), "no edge at all: every gradient is 0, written"),
    _sparse_backward_case("bfloat16", lambda g: graphs.molecules(1, g), "bfloat16 inputs", dims=dict(D=64),
                          half=torch.bfloat16),
    _sparse_backward_case("the same case twice", lambda g: graphs.power_law(90, 500, g), repeat=True,
                          about="run twice on a GPU, the two results must be the same bits: no atomics"),
    _sparse_backward_case("65 TCBs in a window", tensor_cores._window_of_65_tcbs, dims=dict(D=16),
                          about="window 0's 16 queries attend to 1,040 keys, and key window 0 to 1,040 queries: "
                                "both kernels loop over their TCBs"),
)


def _sparse_backward_bounds(inputs, pairs: str = "bitmap") -> dict[str, torch.Tensor]:
    """Per output, the scale of an honest kernel's error, as puzzle 17's (_attention_backward_bounds), over the
    pattern's pairs (or, for a hint, over the pairs a mistaken kernel sums: mistakes.pair_terms)."""
    t = pair_terms(inputs, pairs)
    q, k, do = inputs["q"], inputs["k"], inputs["do"]
    floor = HALF_SUBNORMAL / ATTENTION_BACKWARD_RTOL
    ds = t.p * ((t.dp - t.delta[t.rows]).abs() + (do * inputs["o"]).abs().sum(1)[t.rows]) + floor
    scale = q.shape[-1] ** -0.5
    return {"dq": torch.zeros_like(q).index_add_(0, t.rows, ds[:, None] * k[t.cols].abs()) * scale,
            "dk": torch.zeros_like(k).index_add_(0, t.cols, ds[:, None] * q[t.rows].abs()) * scale,
            "dv": torch.zeros_like(q).index_add_(0, t.cols, (t.p + floor)[:, None] * do[t.rows].abs())}


_bsb_backward_with = functools.partial(_tiled_backward_with, bsb_backward, _sparse_backward_bounds,
                                       "sparse attention backward")


SPARSE_ATTENTION_BACKWARD_HINTS = (
    Hint("NaN where a row has no neighbour", _nan_where_lse_is_minus_inf,
         "NaN: a row with no neighbour has lse = -inf, and exp2(s - lse) there is inf (and inf - inf NaN). Set p "
         "with tl.where(edge, tl.exp2(s * log2(e) - lse * log2(e)), 0.0): the bitmap has no bit for such a row. If p "
         "is set so already, an lse of -inf met an edge: lse (and Δ) belong to the query, gathered by query id in "
         "the dk/dv kernel, and the bitmap's row r is the query's"),
    Hint("bitmap ignored in the dq kernel", _bsb_backward_with(pairs="every slot"),
         "dq counts pairs that are not edges: p must be 0 off the bitmap (and on padding slots) in the dq kernel: "
         "edge[r, c] = (tcb_mask[t, r] >> c) & 1"),
    Hint("bitmap ignored in the dk/dv kernel", _bsb_backward_with(pairs="every key slot"),
         "dk or dv counts pairs that are not edges: in the dk/dv kernel too, p is 0 off the transposed bitmap: "
         "edge[key r, slot c] = (key_tcb_mask[t, r] >> c) & 1"),
    Hint("Δ left out", _bsb_backward_with(delta=False),
         "ds misses Δ: ds = p * (dp - Δ), with Δ_i = dO_i . o_i for each query (gathered by query id in the dk/dv "
         "kernel)"),
    Hint("scale left out", _bsb_backward_with(scaled=0),
         "dq and dk lack the 1 / sqrt(D) of s: multiply them by `scale` when you store them"),
    Hint("scale applied twice", _bsb_backward_with(scaled=2),
         "dq and dk carry 1 / sqrt(D) twice: once in s (for p), once in dq and dk"),
    Hint("lse in the wrong units", _bsb_backward_with(lse_units="log2"),
         "p is off by a factor per row: lse is a natural log. With exp2, multiply both the scores and lse by "
         "log2(e)"),
    Hint("key bitmap transposed", _bsb_backward_with(pairs="key bitmap transposed"),
         "in the dk/dv kernel, the transposed BSB's bitmap was read transposed: key_tcb_mask holds one mask per key "
         "(row r of the key window), whose bit c is slot c: edge[r, c] = (key_tcb_mask[t, r] >> c) & 1"),
    Hint("lse gathered by key", _bsb_backward_with(key_side="lse by key"),
         "in the dk/dv kernel, p used the key's own lse: lse belongs to the query of each pair, gathered by the "
         "query ids of the transposed TCB (key_tcb_query), one per slot"),
    Hint("Δ gathered by key", _bsb_backward_with(key_side="Δ by key"),
         "in the dk/dv kernel, ds used the key's own Δ: Δ_i = dO_i . o_i belongs to the query of each pair, gathered "
         "by the query ids of the transposed TCB (key_tcb_query), one per slot"),
)

_SPARSE_GATHERS = "16*num_key_tcb"  # rows a key window's TCB gathers, per TCB: q, dO, lse and Δ (counted with them)

SPARSE_ATTENTION_BACKWARD = Puzzle(
    18, "sparse_attention_backward", "Sparse attention backward, over the transposed BSB", NOTEBOOK,
    specs.sparse_attention_backward, SPARSE_ATTENTION_BACKWARD_CASES,
    tuple(Tolerance(ATTENTION_BACKWARD_RTOL, _bound_of(_sparse_backward_bounds, name),
                    "the 16-bit rounding of p and ds before their tl.dot, over the pattern's pairs")
          for name in ("dq", "dk", "dv")),
    hints=SPARSE_ATTENTION_BACKWARD_HINTS, outputs=("dq", "dk", "dv"),
    budgets=(NoAtomics(lesson="Each program owns the rows it writes: dq in the query windows, dk and dv in the key "
                              "windows of the transposed BSB."),
             *(Loads((name,), f"(N + {_SPARSE_GATHERS}) * D + {_SPARSE_GATHERS}",
                     lesson=f"Load {name} once per query window (the dq kernel) and gather its 16 rows once per TCB of "
                            "the transposed BSB (the dk/dv kernel); Δ, gathered beside it, counts too.")
               for name in ("q", "do")),
             *(Loads((name,), f"(N + 16*num_tcb) * D + {_SPARSE_GATHERS}",
                     lesson=f"Gather {name}'s 16 rows once per TCB of the BSB (the dq kernel) and load each key "
                            "window's once (the dk/dv kernel); Δ counts too.")
               for name in ("k", "v")),
             Loads(("lse",), f"N + 2 * {_SPARSE_GATHERS}", lesson="Load lse once per query window and gather it "
                                                                  "once per TCB of the transposed BSB (Δ too)."),
             Scratch(("dq", "dk", "dv"), "N", lesson="Only Δ (one float per query) goes from the dq kernel to the "
                                                     "dk/dv kernel."),
             Dots("16*16*D*(3*num_tcb + 4*num_key_tcb)", products=7,
                  lesson="Three products per TCB in the dq kernel (s, dp, dq) and four per TCB of the transposed BSB "
                         "(s, dv, dp, dk), all tl.dot calls on 16-bit operands."),
             *(Writes(name, 1, lesson=f"{name} is written once.") for name in ("dq", "dk", "dv"))))

PUZZLES = (SOFTMAX_BACKWARD, CROSS_ENTROPY_BACKWARD, GRAPH_ATTENTION_BACKWARD, ATTENTION_BACKWARD,
           SPARSE_ATTENTION_BACKWARD)
