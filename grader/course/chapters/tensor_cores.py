"""Chapter 4, tensor cores (notebooks/04_tensor_cores.ipynb): puzzles 11-13, matmul, attention and
sparse_attention."""

from __future__ import annotations

from collections.abc import Callable

import torch

from grader.course import graphs, specs
from grader.course.budgets import Dots, Loads, Reads, Writes
from grader.course.cases import Case, normal, odd_rows_negated, per_input, rows, uniform
from grader.course.chapters.online_softmax_hints import max_took_in_0_hint, mistaken, per_tile_hints, rescale_hints
from grader.course.mistakes import keys_padded_with_zeros, near, tiled_attention, window_attention
from grader.course.puzzle import Hint, Puzzle, Tolerance, magnitude_scale

NOTEBOOK = "04_tensor_cores"

# -- puzzle 11: matmul ----------------------------------------------------------------------------------------

MATMUL_CASES = (
    Case("spec", dict(M=200, K=200, N=168), dict(BM=64, BN=64, BK=64),
         about="no size a multiple of 64: the last blocks of M, N and K are partial"),
    Case("one block", dict(M=16, K=16, N=16), dict(BM=16, BN=16, BK=16)),
    Case("single row", dict(M=1, K=64, N=64), dict(BM=16, BN=32, BK=32)),
    Case("K smaller than a block", dict(M=50, K=8, N=40), dict(BM=32, BN=16, BK=16),
         about="K=8 < BK: the one K step is mostly padding"),
    Case("tall and thin", dict(M=1000, K=40, N=24), dict(BM=128, BN=32, BK=32)),
    Case("rectangular blocks", dict(M=130, K=96, N=264), dict(BM=32, BN=128, BK=64)),
    Case("positive, long K", dict(M=64, K=1024, N=64), dict(BM=32, BN=32, BK=32), fill=uniform(0, 1),
         about="sums near 256 of positive terms: a float16 accumulator loses them"),
    Case("sums beyond float16", dict(M=48, K=256, N=48), dict(BM=16, BN=16, BK=64), fill=normal(60.0),
         about="inputs near 60, sums past 65504: float16 overflows to inf, float32 does not"),
    Case("ten row blocks", dict(M=300, K=48, N=40), dict(BM=32, BN=16, BK=16),
         about="ten row blocks (the last partial) by three column blocks: 30 blocks of c"),
    Case("bfloat16", dict(M=120, K=72, N=80), dict(BM=64, BN=32, BK=32), half=torch.bfloat16,
         about="bfloat16 inputs: the same kernel, the other 16-bit type"),
    Case("65 K blocks", dict(M=16, K=1032, N=16), dict(BM=16, BN=16, BK=16),
         about="K=1032: the K loop takes 65 blocks of 16, the last half full"),
)


def _short_of_k(inputs, yours, blocks):
    """Check whether the loop over K stopped before the last, partial step."""
    a, w = inputs["a"], inputs["b"]
    whole = a.shape[1] // blocks["BK"] * blocks["BK"]
    return whole < a.shape[1] and near(yours, a[:, :whole] @ w[:whole], a.abs() @ w.abs(), rtol=1e-4)


def _rows_at_block_offsets(inputs, yours, blocks):
    """Check whether row r of c came from row r // BM + r % BM of a: a_desc.load([pid_m, k]) where
    [pid_m * BM, k] was meant. Nothing stops it: only offsets along the last dimension must be 16-byte aligned."""
    a, w, block = inputs["a"], inputs["b"], blocks["BM"]
    rows = torch.arange(a.shape[0])
    padded = torch.cat([a, a.new_zeros(block, a.shape[1])])  # rows past M load as 0
    return a.shape[0] > block and near(yours, padded[rows // block + rows % block] @ w, a.abs() @ w.abs(), rtol=1e-4)


def _b_read_column_major(inputs, yours, blocks):
    """Check whether c is a times b's memory read as an N x K matrix transposed: a descriptor of b with shape [N, K],
    strides [K, 1] (b taken for column-major, or for b^T), and tl.trans of its blocks."""
    a, w = inputs["a"], inputs["b"]
    read = w.reshape(w.shape[1], w.shape[0]).T  # b's memory as N rows of K, transposed (b^T where b is square)
    return near(yours, a @ read, a.abs() @ read.abs(), rtol=1e-4) and not near(a @ w, a @ read, a.abs() @ w.abs(),
                                                                              rtol=1e-4)


def _rounded_to_16_bits(inputs, yours, blocks):
    """Check whether the errors are those of 16-bit rounding (float16 keeps 11 bits), or inf where a sum passes
    float16's 65504."""
    exact = inputs["a"] @ inputs["b"]
    overflow = yours.isinf() & (exact.abs() > 65504)
    return bool(overflow.any()) or near(yours, exact, inputs["a"].abs() @ inputs["b"].abs(), rtol=5e-3)


MATMUL_HINTS = (
    Hint("short of K", _short_of_k,
         "the last, partial step along K is missing: loop over all of K (tl.range(0, K, BK)); the descriptor pads "
         "the columns past K with zeros"),
    Hint("rows at block offsets", _rows_at_block_offsets,
         "c's rows came from the wrong rows of a: a descriptor's offsets are in elements, not blocks: load a at "
         "[pid_m * BM, k], not [pid_m, k]"),
    Hint("b read column-major", _b_read_column_major,
         "b was read as if column-major (or as b^T): it is K x N and row-major, its rows N apart. Describe it as it "
         "lies, tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN]), and load it "
         "at [k, pid_n * BN], with no tl.trans"),
    Hint("rounded to 16 bits", _rounded_to_16_bits,
         "errors the size of 16-bit rounding, or inf past 65504: keep the accumulator float32 (acc = tl.dot(a, b, "
         "acc) with a float32 acc) and the operands 16-bit (a float32 tl.dot runs as TF32 on the GPU)"),
)

MATMUL_RTOL = 2e-5
_magnitude = magnitude_scale(specs.matmul)


def _matmul_scale(inputs, expected):
    """sum_k |a[i, k]| |b[k, j]|, times K 2^-23 / MATMUL_RTOL where K is past 168: a float32 sum of K products
    that rounds each step toward zero (tensor cores truncate) errs by at most K 2^-23 of it (Higham's gamma_K).
    The bench's sizes need it (K = 4096: cuBLAS's own float32 sums were 'wrong' at 2e-5); no case's K does."""
    k = inputs["a"].shape[-1]
    return _magnitude(inputs, expected) * max(1.0, k * 2.0 ** -23 / MATMUL_RTOL)


MATMUL = Puzzle(
    11, "matmul", "Matrix multiply on tensor cores, tensor descriptors", NOTEBOOK, specs.matmul, MATMUL_CASES,
    Tolerance(MATMUL_RTOL, _matmul_scale, "sum_k |a[i, k]| |b[k, j]| (times K 2^-23 / 2e-5 for K past 168): float32 "
                                          "accumulation"),
    hints=MATMUL_HINTS,
    budgets=(Dots("-(-M // BM) * BM * -(-N // BN) * BN * K", says="M*N*K (M, N rounded up to whole blocks)",
                  launched=(("BM", "M"), ("BN", "N")),
                  lesson="Multiply the blocks with tl.dot, so the tensor cores do the work: every step along K, "
                         "the last, partial one too."),
             Writes("c", 1, lesson="Store each block of c once, after the loop over K.")),
    outputs=("c",), descriptors=True, allocator=True)

# -- hints puzzles 12 and 13 share ------------------------------------------------------------------------------


def _v_size(inputs) -> float:
    """The size of an output's terms: the largest |v|. 16-bit weights p are off by up to 2^-8 of it."""
    return float(inputs["v"].abs().max()) if inputs["v"].numel() else 0.0


def _close_in_16_bits(inputs, yours, candidate) -> bool:
    """Whether two outputs of puzzle 12 or 13 agree up to the rounding of the weights p to 16 bits."""
    return near(yours, candidate, _v_size(inputs))


def _unscaled(spec: Callable) -> Callable:
    """A check whether the output is the spec's as computed without the 1 / sqrt(D): q multiplied back by sqrt(D)."""
    def check(inputs, yours, blocks):
        return near(yours, spec(**{**inputs, "q": inputs["q"] * inputs["q"].shape[-1] ** 0.5}), _v_size(inputs))
    check.__doc__ = f"Check whether the output is {spec.__name__}'s without the 1 / sqrt(D) scale."
    return check


def _scores_times(spec: Callable) -> Callable:
    """The spec as computed with every score multiplied by a factor (a mistake's), through q."""
    def run(inputs, blocks, factor: float = 1.0):
        return spec(**{**inputs, "q": inputs["q"] * factor})
    run.__name__ = f"{spec.__name__} with scaled scores"
    return run


_SCALE_HINT = "the scores miss the 1 / sqrt(D) scale: multiply q . k by the `scale` argument before the softmax"
_LOG2E = 1.4426950408889634  # exp(x) = exp2(x * log2(e))


def _exp_base_hints(spec: Callable) -> tuple[Hint, ...]:
    """Hints for an exponential of the wrong base: tl.exp of scores in log2 units, or tl.exp2 of plain scores."""
    scaled = _scores_times(spec)
    return (Hint("tl.exp of log2 scores", mistaken(scaled, _close_in_16_bits, factor=_LOG2E),
                 "the weights are exp(s * log2(e)): scores multiplied by log2(e) are meant for tl.exp2, but went "
                 "into tl.exp. Use tl.exp2 on them (in alpha too), or tl.exp on the plain scores"),
            Hint("tl.exp2 of plain scores", mistaken(scaled, _close_in_16_bits, factor=1 / _LOG2E),
                 "the weights are 2^s: tl.exp2 takes scores in log2 units. Multiply the scores by log2(e) = 1.4427 "
                 "before tl.exp2 (in alpha too), or use tl.exp"))


# -- puzzle 12: attention ---------------------------------------------------------------------------------------

_increasing_keys = per_input(q=uniform(0.5, 1.5), k=rows(lambda i, n, g: torch.full((n,), -3.025 + 0.05 * i),
                                                         "row j is -3.025 + 0.05 j in every feature, never 0"))

ATTENTION_CASES = (
    Case("spec", dict(N=100, T=130, D=32), dict(BQ=32, BK=32), about="neither N nor T a multiple of its block"),
    Case("D=16", dict(N=50, T=70, D=16), dict(BQ=16, BK=16)),
    Case("D=64", dict(N=64, T=200, D=64), dict(BQ=64, BK=32)),
    Case("D=128", dict(N=40, T=90, D=128), dict(BQ=16, BK=64)),
    Case("single query", dict(N=1, T=300, D=32), dict(BQ=16, BK=64)),
    Case("single key", dict(N=20, T=1, D=32), dict(BQ=16, BK=16), about="one key: every weight is 1"),
    Case("large scores", dict(N=40, T=150, D=32), dict(BQ=16, BK=32), fill=normal(8.0),
         about="scores in the hundreds: exp overflows unless the running max is subtracted"),
    Case("scores far below 0, keys padded", dict(N=40, T=100, D=32), dict(BQ=16, BK=32),
         fill=per_input(q=odd_rows_negated(uniform(0.5, 1.5)), k=uniform(-40.0, -30.0)),
         about="the even rows score about -200 on every key, and T is not a multiple of BK: padded keys (score 0) "
               "that take part in the max make all their weights underflow to 0"),
    Case("max grows every block", dict(N=24, T=120, D=32), dict(BQ=16, BK=16), fill=_increasing_keys,
         about="q > 0 and k increasing along T: every key block brings a new max"),
    Case("zero queries", dict(N=20, T=100, D=32), dict(BQ=16, BK=32),
         fill=per_input(q=lambda n, s, g: torch.zeros(s, dtype=torch.float64)),
         about="q = 0: every score is exactly 0 and the answer is the mean of v"),
    Case("bfloat16", dict(N=70, T=90, D=64), dict(BQ=32, BK=32), half=torch.bfloat16,
         about="bfloat16 inputs: cast p to v's dtype for the second tl.dot"),
    Case("65 key blocks", dict(N=16, T=1029, D=16), dict(BQ=16, BK=16),
         about="65 blocks of 16 keys: a row of scores held in a few separate tiles (each read once, none wider "
               "than BK) is right only up to its last tile; the loop over key blocks is right at any length"),
)


def _padded_keys_count(inputs, yours, blocks) -> bool:
    """Check whether the keys past T of the last block counted in the sums with a score of 0, in a case where that
    changes the answer beyond the 16-bit rounding of p (not where the real keys' scores dwarf a score of 0)."""
    if inputs["k"].shape[0] % blocks["BK"] == 0:
        return False
    wrong = keys_padded_with_zeros(specs.attention, inputs, blocks["BK"])
    return near(yours, wrong, _v_size(inputs)) and not near(specs.attention(**inputs), wrong, _v_size(inputs))


ATTENTION_HINTS = (  # the exponential's base before padded keys: scores in the wrong base come close to both
    Hint("scores unscaled", _unscaled(specs.attention), _SCALE_HINT),
    *_exp_base_hints(specs.attention),
    Hint("padded keys count", _padded_keys_count,
         "keys past T count in the sums: their scores must be -inf, not the 0 that a masked load gives, so that "
         "exp adds nothing for them"),
    max_took_in_0_hint(lambda inputs: inputs["q"] @ inputs["k"].T / inputs["q"].shape[-1] ** 0.5, specs.attention,
                       "keys past T"),
    *rescale_hints(tiled_attention, _close_in_16_bits, "the sums", "l"),
    *per_tile_hints(tiled_attention, _close_in_16_bits),
)

ATTENTION = Puzzle(
    12, "attention", "Tiled FlashAttention on tensor cores", NOTEBOOK, specs.attention, ATTENTION_CASES,
    Tolerance(1e-2, magnitude_scale(specs.attention, "v"), "sum_j p_ij |v_j|"),
    hints=ATTENTION_HINTS, outputs=("o",), allocator=True,
    budgets=(Reads("k", 1, per="program", block=("o", "BQ*D"), lesson="Each query block reads every key once."),
             Reads("v", 1, per="program", block=("o", "BQ*D"),
                   lesson="Each query block reads every value once, in the key loop."),
             Dots("2 * -(-N // BQ) * BQ * T * D", says="2*N*T*D (N rounded up to whole BQ blocks)",
                  launched=(("BQ", "M"),), products=2,
                  lesson="Both products, q k^T and p v, are tl.dot calls, in every key block, the last one too."),
             Writes("o", 1, lesson="Store each row of o once, after the key loop.")),
    lesson_blocks=("BK",))

# -- puzzle 13: sparse_attention -------------------------------------------------------------------------------


def _window_of_one_edge(gen):
    """Window 0 an ordinary molecule, window 1 a single edge, window 2 none (48 nodes)."""
    base = graphs.molecules(1, gen, nodes=16, in_degree=(2, 6))
    src = torch.cat([base.src, torch.tensor([3], dtype=torch.int32)])
    dst = torch.cat([base.dst, torch.tensor([20], dtype=torch.int32)])
    return graphs.from_coo(src, dst, 48)


def _window_of_65_tcbs(gen):
    """1,040 nodes: the 16 queries of window 0 attend, between them, to every node once (65 TCBs in that window), and
    every node attends to one of them (65 TCBs in key window 0 of the transposed BSB); each other window has one."""
    nodes = torch.randperm(65 * 16, generator=gen).to(torch.int32)
    first = (torch.arange(65 * 16) % 16).to(torch.int32)
    return graphs.from_coo(torch.cat([nodes, first]), torch.cat([first, nodes]), 65 * 16)


def _same_parity(gen):
    """Node i attends to nodes of its own parity nearby: every window mixes even and odd columns."""
    dst = torch.arange(40).repeat_interleave(6)
    src = (dst + 2 * graphs._randint(-6, 6, dst.numel(), gen)).clamp(0, 39)
    src = torch.where(src % 2 == dst % 2, src, dst)
    return graphs.from_coo(src, dst, 40)


def _parity_rows(i, n, gen):
    """Queries +5 (even rows) or -5 (odd rows); keys 5 on odd rows, small noise on even rows."""
    return torch.full((n,), 5.0 if i % 2 == 0 else -5.0) + 0.1 * torch.randn(n, generator=gen, dtype=torch.float64)


def _parity_keys(i, n, gen):
    return torch.full((n,), 5.0) if i % 2 else 0.1 * torch.randn(n, generator=gen, dtype=torch.float64)


def _zero_every_third(name, shape, gen):
    q = torch.randn(shape, generator=gen, dtype=torch.float64)
    q[::3] = 0
    return q


_far_non_edges = per_input(q=rows(_parity_rows, "+5 on even rows, -5 on odd rows"),
                           k=rows(_parity_keys, "5 on odd rows, small on even rows"))


def _sparse_case(name, build, about, dims=None, fill=None, half=None):
    return Case(name, dims or dict(D=32), fill=fill or normal(), about=about, graph=build, half=half)


SPARSE_ATTENTION_CASES = (
    _sparse_case("molecules", lambda g: graphs.molecules(2, g), "a batch of two small molecule-like graphs"),
    _sparse_case("non-edges score far higher", _same_parity, fill=_far_non_edges,
                 about="each row's non-neighbours in the same TCB score ~140 above its neighbours, and odd "
                       "rows' real scores are all near -140: the mask must come before the max, and the max "
                       "must start at -inf"),
    _sparse_case("max in a later TCB", lambda g: graphs.banded(70, 20, g, width=24), fill=_increasing_keys,
                 about="k grows with the column, so each row's max sits in its window's last TCB: the sums "
                       "must be rescaled"),
    _sparse_case("scores of exactly 0", lambda g: graphs.molecules(2, g), fill=per_input(q=_zero_every_third),
                 about="every third query is 0, so its scores are exactly 0 on real edges"),
    _sparse_case("rows with no neighbour", lambda g: graphs.with_isolated(graphs.molecules(1, g), 21),
                 "21 nodes no edge reaches: their rows are 0, not 0 / 0, and the last windows are empty"),
    _sparse_case("a window with one edge", _window_of_one_edge, "window 1 holds one edge, window 2 none"),
    _sparse_case("hub row", lambda g: graphs.with_hub(graphs.random_graph(60, 3, g), 0.6, g, hub=17),
                 "one node attends to most others: its window has many TCBs"),
    _sparse_case("duplicate edges and self loops", lambda g: graphs.with_self_loops(graphs.with_duplicates(
        graphs.molecules(2, g), 60, g), 20, g), "duplicate edges count once here: attention is over a set"),
    _sparse_case("power law", lambda g: graphs.power_law(90, 500, g), "hubs and many rows of degree 0 or 1"),
    _sparse_case("random, D=16", lambda g: graphs.random_graph(50, 5, g), "D=16", dims=dict(D=16)),
    _sparse_case("banded, D=64", lambda g: graphs.banded(45, 8, g), "locality: few, full TCBs", dims=dict(D=64)),
    _sparse_case("given degrees, D=128", lambda g: graphs.with_degrees(torch.arange(33) % 7, g), "D=128",
                 dims=dict(D=128)),
    _sparse_case("empty graph", lambda g: graphs.empty(20), "no edge at all: every row is 0"),
    _sparse_case("bfloat16", lambda g: graphs.molecules(1, g), "bfloat16 inputs", dims=dict(D=64),
                 half=torch.bfloat16),
    _sparse_case("65 TCBs in a window", _window_of_65_tcbs, dims=dict(D=16),
                 about="window 0's 16 queries attend to 1,040 keys: a loop over its TCBs, not a tile of a few"),
)


def _neighbours_lost(inputs, yours, blocks) -> bool:
    """Check whether some row with a neighbour came out all 0: every weight exp(s - m) underflowed."""
    return bool(((yours == 0).all(dim=1) & (specs.sparse_attention(**inputs) != 0).any(dim=1)).any())


def _in_float32(**mistake) -> Callable:
    """A check whether the output is window_attention with this mistake, computed in float32 as a kernel computes it
    (there, the weights of a row whose real scores lie far below a 0 in its max underflow)."""
    def check(inputs, yours, blocks) -> bool:
        single = {k: v.float() if isinstance(v, torch.Tensor) and v.is_floating_point() else v
                  for k, v in inputs.items()}
        wrong = window_attention(single, blocks, **mistake).double()
        return (_close_in_16_bits(inputs, yours, wrong)
                and not _close_in_16_bits(inputs, specs.sparse_attention(**inputs), wrong))
    check.__doc__ = f"Check whether the output is window_attention with {mistake}, in float32."
    return check


# The quirks of the original Fused3S: non-edges scored 0 (so 0 takes part in the max), and every score of 0 then
# weighs nothing; and the other way a 0 gets into the max, a running max started at 0.
_non_edges_scored_0 = _in_float32(no_edge=0.0, max_start=-torch.inf, zero_weighs_nothing=True)
_max_started_at_0 = _in_float32(max_start=0.0)


def _a_0_in_the_max(inputs, yours, blocks) -> bool:
    """Check whether the output fits both ways a 0 gets into the max (the case cannot tell them apart)."""
    return _non_edges_scored_0(inputs, yours, blocks) and _max_started_at_0(inputs, yours, blocks)


SPARSE_ATTENTION_HINTS = (
    Hint("scores unscaled", _unscaled(specs.sparse_attention), _SCALE_HINT),
    *_exp_base_hints(specs.sparse_attention),
    *rescale_hints(window_attention, _close_in_16_bits, "the sums", "l"),
    *per_tile_hints(window_attention, _close_in_16_bits),
    Hint("scores of 0 dropped", mistaken(window_attention, _close_in_16_bits, zero_is_no_edge=True),
         "edges whose score is exactly 0 were dropped: a score of 0 is a real score (here q or k is 0); tell "
         "edges from non-edges by the bitmap, never by the score's value"),
    Hint("bitmap transposed", mistaken(window_attention, _close_in_16_bits, bitmap="transposed"),
         "the edge bitmap is read transposed: tcb_mask[t, r] is row r's mask, and its bit c is slot c: "
         "edge[r, c] = (mask[r] >> c) & 1, that is (bits[:, None] >> slots[None, :]) & 1"),
    Hint("bitmap reversed", mistaken(window_attention, _close_in_16_bits, bitmap="reversed"),
         "the bits of each row's mask are read in reverse: bit c (the value 1 << c, counting from the least "
         "significant bit) is slot c, not slot 15 - c: (bits[:, None] >> slots[None, :]) & 1"),
    Hint("gathered by slot", mistaken(window_attention, _close_in_16_bits, gather="slot"),
         "k and v were gathered by slot (node c for slot c): slot c of TCB t holds the node tcb_col[t, c], so load "
         "the rows of k and v at the TCB's 16 tcb_col values"),
    *(Hint(f"{name} gathered by slot", mistaken(window_attention, _close_in_16_bits, gather=f"{name} slot"),
           f"{name} was gathered by slot (node c for slot c), {other} by tcb_col: slot c of TCB t holds the node "
           f"tcb_col[t, c], so load the rows of {name} at the TCB's 16 tcb_col values, as those of {other}")
      for name, other in (("k", "v"), ("v", "k"))),
    Hint("a 0 in the max", _a_0_in_the_max,
         "rows whose real scores all lie far below 0 came out 0: a 0 took part in the max, so every weight "
         "exp(s - m) underflowed. Either the running max started at 0, or non-edges were scored 0 (and a score of 0 "
         "taken for no edge). Start the running max at -inf, set non-edges to -inf before the max, and tell edges "
         "by the bitmap, never by the score's value: a score of 0 is a real score"),
    Hint("non-edges scored 0", _non_edges_scored_0,
         "non-edges were scored 0 and a score of 0 taken for no edge: a score of 0 is a real score (here q or k is "
         "0), and a 0 in the max stands above rows whose real scores are all far below 0, so their weights "
         "underflow. Set non-edges to -inf before the max, and tell edges by the bitmap, never by the score"),
    Hint("no stand-in for a max of -inf", mistaken(window_attention, _close_in_16_bits, stand_in=False),
         "NaN in rows that have no edge in some TCB: while a row's max m is still -inf, exp2(s - m) and the rescale "
         "compute -inf - (-inf) = NaN. Subtract a finite stand-in there: base = tl.where(m_new == float(\"-inf\"), "
         "0.0, m_new), and use base for both exponentials"),
    Hint("finite minus infinity", mistaken(window_attention, _close_in_16_bits, no_edge=-1e30),
         "rows with no neighbour came out non-zero: a finite \"minus infinity\" such as -1e30 minus itself is 0, so "
         "in a row with no edge every slot weighs exp(0) = 1. Give non-edges float(\"-inf\") and start the max at "
         "-inf; while the max is -inf, subtract a finite stand-in (0) instead"),
    Hint("neighbours lost", _neighbours_lost,
         "rows that have neighbours came out 0: every weight exp(s - m) underflowed, so m stood far above the row's "
         "real scores. Start the running max at -inf, and set non-edges to -inf before the max (a non-edge can "
         "score far above the real neighbours)"),
)

SPARSE_ATTENTION = Puzzle(
    13, "sparse_attention", "Sparse attention on tensor cores (Fused3S's BSB)", NOTEBOOK, specs.sparse_attention,
    SPARSE_ATTENTION_CASES,
    Tolerance(1e-2, magnitude_scale(specs.sparse_attention, "v"), "sum over neighbours of p_ij |v_j|"),
    hints=SPARSE_ATTENTION_HINTS, outputs=("o",),
    budgets=(Reads("q", 1, lesson="Each window loads its 16 rows of q once, before the TCB loop."),
             Loads(("k",), "16*D*num_tcb", lesson="Each TCB gathers its 16 key rows once."),
             Loads(("v",), "16*D*num_tcb", lesson="Each TCB gathers its 16 value rows once."),
             Dots("2*num_tcb*16*16*D", products=2,
                  lesson="Both products of every TCB, q k^T and p v, are tl.dot calls: that is what puts them on "
                         "tensor cores."),
             Writes("o", 1, lesson="Store each row of o once, after the TCB loop.")))

PUZZLES = (MATMUL, ATTENTION, SPARSE_ATTENTION)
