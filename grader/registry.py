"""The puzzle registry: the one place that says what each puzzle is and how it is graded.

Adding a puzzle means adding an entry to ``PUZZLES`` (with its spec in ``specs.py``) plus the
files ``solutions/pNN_slug.py`` and ``puzzles/pNN_slug.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import torch

from . import graphs, specs
from .budgets import Dots, Loads, NoAtomics, Reads, Writes
from .cases import Case, Fill, normal, per_input, rows
from .checker import PuzzleHint, Tolerance, magnitude_scale


@dataclass(frozen=True)
class Bench:
    """How `python -m grader bench` times a puzzle on the GPU.

    Bytes are counted from the spec: every input read once and every output written once is the
    compulsory traffic. ``extra_reads`` adds the re-reads the puzzle's algorithm needs, which gives
    the floor that algorithm can reach (puzzle 5 reads x twice: one extra read).
    """
    sizes: tuple[Mapping[str, int] | Case, ...]  # a Case where the inputs need a graph
    blocks: tuple[Mapping[str, int], ...]  # candidate block sizes; the fastest is reported
    extra_reads: Mapping[str, float] = field(default_factory=dict)
    library: Mapping[str, Callable] = field(default_factory=dict)  # what a practitioner would call instead
    exps: Callable[[Mapping[str, int]], int] | None = None  # exponentials computed, for compute-bound puzzles
    # Other launchers in the solution file worth timing, each with the sizes it is run at (a test on dims).
    variants: Mapping[str, Callable[[Mapping[str, int]], bool]] = field(default_factory=dict)
    cuda_graph: bool = False  # also time inside a CUDA graph: for problems near the launch overhead
    baselines: Mapping[str, Baseline] = field(default_factory=dict)  # what a practitioner writes instead, by name
    flops: Callable[[Mapping[str, int]], int] | None = None  # for tensor-core puzzles: floor at the fp16 matmul rate
    # A result counts as correct within rtol, and atol = this share of the reference's largest |value|.
    close: tuple[float, float] = (1e-3, 1e-5)  # (rtol, atol share): float32 puzzles
    compile_spec: bool = True  # also time the spec under torch.compile
    size_note: Callable[[Mapping], str] | None = None  # a note on each size from its inputs, shown in the table


@dataclass(frozen=True)
class Baseline:
    """Code a practitioner would use instead, as the benchmark times it.

    prepare (untimed) turns the inputs into that code's own format, e.g. COO destinations kept from
    preprocessing, and returns run's keyword arguments; run is timed at each launch setting.
    """
    prepare: Callable[[Mapping], Mapping]
    run: Callable
    settings: tuple[Mapping[str, int], ...] = ({},)  # extra keyword arguments of run; the fastest is reported
    compile: bool = True  # also time run under torch.compile (pointless for a Triton kernel, or code that compiles)
    note: Callable[[Mapping], str] | None = None  # a note from prepare's result, e.g. how many blocks are computed


@dataclass(frozen=True)
class Puzzle:
    number: int
    slug: str
    title: str
    notebook: str
    spec: Callable
    cases: tuple[Case, ...]
    tolerance: Tolerance | tuple[Tolerance, ...]  # one per output, or one for all
    budgets: tuple = ()  # budgets.Reads, Writes, Loads, NoAtomics
    hints: tuple[PuzzleHint, ...] = ()
    outputs: tuple[str, ...] = ("z",)
    bench: Bench | None = None
    # Blocks that are the lesson (a loop over blocks, a rescale): a launch may not use a wider tile than the case's.
    lesson_blocks: tuple[str, ...] = ()
    # aten ops ("aten.clone") the launcher may call besides allocations and views (launcher_guard).
    launcher_ops: tuple[str, ...] = ()

    @property
    def tolerances(self) -> tuple[Tolerance, ...]:
        return self.tolerance if isinstance(self.tolerance, tuple) else (self.tolerance,) * len(self.outputs)

    @property
    def module(self) -> str:
        return f"p{self.number:02d}_{self.slug}"

    @property
    def launcher(self) -> str:
        return self.slug

    @property
    def gpu_archs(self) -> tuple[int, ...]:
        """CUDA compute capabilities its kernels must compile for (grader.gpu_compile): the H200's sm_90, and for
        chapters 1-3, which learners also run natively on an A100 or Colab, sm_80."""
        return (90,) if self.notebook == "04_tensor_cores" else (90, 80)


# -- chapter 1: warm-ups ---------------------------------------------------------------------

ADD_CASES = (
    Case("spec", dict(N0=200), dict(B0=32), about="the spec's own size"),
    Case("ragged", dict(N0=1000), dict(B0=128), about="N0 is not a multiple of B0"),
    Case("small blocks", dict(N0=97), dict(B0=16)),
    Case("exact multiple", dict(N0=256), dict(B0=64)),
    Case("single element", dict(N0=1), dict(B0=32)),
    Case("large", dict(N0=100_003), dict(B0=1024)),
    Case("large magnitudes", dict(N0=300), dict(B0=64), fill=normal(1e6)),
)

OUTER_ADD_CASES = (
    Case("spec", dict(N0=50, N1=40), dict(B0=16, B1=16), about="the spec's own size"),
    Case("ragged", dict(N0=301, N1=37), dict(B0=64, B1=8), about="neither size a multiple of its block"),
    Case("square", dict(N0=64, N1=64), dict(B0=32, B1=16)),
    Case("single row", dict(N0=100, N1=1), dict(B0=32, B1=16)),
    Case("single column", dict(N0=1, N1=70), dict(B0=16, B1=32)),
    Case("single element", dict(N0=1, N1=1), dict(B0=16, B1=16)),
    Case("large", dict(N0=1000, N1=700), dict(B0=128, B1=64)),
)

ROW_SUM_CASES = (
    Case("spec", dict(N0=4, T=200), dict(B0=2, B1=32), about="the spec's own size"),
    Case("ragged", dict(N0=37, T=301), dict(B0=4, B1=64), about="T is not a multiple of B1"),
    Case("long rows", dict(N0=3, T=5000), dict(B0=2, B1=256)),
    Case("row shorter than a block", dict(N0=10, T=5), dict(B0=4, B1=64)),
    Case("single row", dict(N0=1, T=1000), dict(B0=1, B1=128)),
    Case("single element", dict(N0=1, T=1), dict(B0=1, B1=16)),
    Case("large", dict(N0=300, T=700), dict(B0=16, B1=128)),
    Case("cancelling magnitudes 1e4", dict(N0=8, T=333), dict(B0=8, B1=64), fill=normal(1e4),
         about="sums near zero from large terms; the tolerance scales with the sum of |x|"),
)


# -- chapter 2: long softmax and attention ------------------------------------------------------

def _spike_row(position: Callable[[int, int], int], height: float = 1000.0):
    def make(i, length, gen):
        row = torch.randn(length, generator=gen, dtype=torch.float64)
        row[position(i, length)] = height
        return row
    return make


SOFTMAX_CASES = (
    Case("spec", dict(N0=4, T=200), dict(B0=2, B1=32), about="the spec's own size"),
    Case("ragged", dict(N0=37, T=301), dict(B0=4, B1=64), about="neither size a multiple of its block"),
    Case("single row", dict(N0=1, T=1000), dict(B0=1, B1=128)),
    Case("single element", dict(N0=1, T=1), dict(B0=1, B1=16)),
    Case("large", dict(N0=64, T=2000), dict(B0=8, B1=256)),
    Case("max falls by 100 after the first block", dict(N0=3, T=200), dict(B0=2, B1=32),
         fill=rows(lambda i, n, g: torch.randn(n, generator=g, dtype=torch.float64)
                   + torch.where(torch.arange(n) < 32, 80.0, -20.0), "about 80 in the first block, -20 after"),
         about="exp(x) alone fits in float32 here, but exp(m - m_new) = exp(100) does not: the new max must keep "
               "the old one"),
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


def _softmax_scale(inputs, expected):
    return expected.abs() + 1e-2 * expected.abs().amax(dim=1, keepdim=True)


SOFTMAX_TOLERANCE = Tolerance(1e-5, _softmax_scale, "|expected| + 0.01 x the row's largest output")

def _online_without_rescale(x: torch.Tensor, block: int) -> torch.Tensor:
    """The online softmax with the classic bug: the running sum is not rescaled when the max grows."""
    running_max = torch.full(x.shape[:1], -torch.inf, dtype=x.dtype)
    running_sum = torch.zeros(x.shape[:1], dtype=x.dtype)
    for start in range(0, x.shape[1], block):
        chunk = x[:, start:start + block]
        running_max = torch.maximum(running_max, chunk.amax(dim=1))
        running_sum = running_sum + torch.exp(chunk - running_max[:, None]).sum(dim=1)
    return torch.exp(x - running_max[:, None]) / running_sum[:, None]


def _matches(yours: torch.Tensor, candidate: torch.Tensor) -> bool:
    """Close enough to a known wrong answer to name the mistake (NaN where it has NaN counts as a match)."""
    scale = float(torch.nan_to_num(candidate, nan=0.0, posinf=0.0, neginf=0.0).abs().max()) if candidate.numel() else 0
    return bool(torch.allclose(yours, candidate, rtol=1e-4, atol=1e-7 * scale, equal_nan=True))


def _padding(length: int, block: int) -> int:
    """Lanes past the end of the last block."""
    return -length % block


def _softmax_counting_padding(x: torch.Tensor, block: int) -> torch.Tensor:
    """The softmax a kernel computes when padded lanes load 0 and count in the max and the sum."""
    padded = torch.nn.functional.pad(x, (0, _padding(x.shape[1], block)))
    return torch.softmax(padded, dim=1)[:, : x.shape[1]]


def _online_with_block_max(x: torch.Tensor, block: int) -> torch.Tensor:
    """The online softmax whose new max is the block's max alone (`m_new = tl.max(x)`), forgetting the old m,
    in float32 as a kernel computes it: the rescaling telescopes, so only an overflow shows the mistake, when
    the max falls by more than 88 from one block to the next and exp(m - m_new) is inf."""
    x = x.to(torch.float32)
    running_max = torch.full(x.shape[:1], -torch.inf, dtype=x.dtype)
    running_sum = torch.zeros(x.shape[:1], dtype=x.dtype)
    for start in range(0, x.shape[1], block):
        chunk = x[:, start:start + block]
        new_max = chunk.amax(dim=1)
        running_sum = running_sum * torch.exp(running_max - new_max) + torch.exp(chunk - new_max[:, None]).sum(dim=1)
        running_max = new_max
    return (torch.exp(x - running_max[:, None]) / running_sum[:, None]).to(torch.float64)


def _new_max_forgets_the_old(i, z, b) -> bool:
    """Check whether the output is _online_with_block_max's, in a case where that differs from a softmax with no
    max subtracted at all (which overflows alike where x itself is large)."""
    x = i["x"]
    candidate = _online_with_block_max(x, b["B1"])
    unshifted = torch.exp(x.float()) / torch.exp(x.float()).sum(dim=1, keepdim=True)
    return _matches(z, candidate) and not _matches(unshifted.double(), candidate)


def _softmax_lost_to_a_max_of_0(i, z, b) -> bool:
    """Check whether the rows that came out NaN or 0 are rows of values far below 0 (see _lost_to_a_max_of_0)."""
    return _lost_to_a_max_of_0(i["x"], z, specs.softmax(i["x"]))


SOFTMAX_HINTS: tuple[PuzzleHint, ...] = (
    (lambda i, z, b: _matches(z, _online_without_rescale(i["x"], b["B1"])),
     "the running sum is not rescaled: when the max grows from m to m', multiply the sum by exp(m - m')"),
    (_new_max_forgets_the_old,
     "the new max forgets the old one: m_new = tl.maximum(m, tl.max(x, axis=1)), not tl.max(x, axis=1) alone; "
     "when a block's max is below the running max, exp(m - m_new) overflows"),
    (lambda i, z, b: _padding(i["x"].shape[1], b["B1"]) > 0 and _matches(z, _softmax_counting_padding(i["x"], b["B1"])),
     "the padded lanes of the last block count as zeros: load them with other=-inf, so exp(-inf) adds nothing"),
    (_softmax_lost_to_a_max_of_0,
     "rows of values far below 0 came out NaN or 0: the max took in a 0 (a max started at 0, or padded lanes "
     "loaded as 0), so every exp(x - m) underflowed and the sum is 0. Start the max at -inf, "
     'tl.full([B0], float("-inf"), dtype=tl.float32), and load padded lanes with other=float("-inf")'),
)


def _first_block_only(inputs, yours, blocks) -> bool:
    x = inputs["x"]
    return x.shape[1] > blocks["B1"] and _matches(yours, x[:, : blocks["B1"]].sum(dim=1))


def _padding_loaded_as_1(inputs, yours, blocks) -> bool:
    """Check whether each row's sum is off by one per padded lane of its last block (other=1.0)."""
    x = inputs["x"]
    padding = _padding(x.shape[1], blocks["B1"])
    return padding > 0 and _matches(yours, x.sum(dim=1) + padding)


def _rows_overlap(inputs, yours, blocks) -> bool:
    """Check whether row r summed x's flat elements r .. r+T-1 (an offset of `rows + cols` without `* T`)."""
    x = inputs["x"]
    flat, length = x.reshape(-1), x.shape[1]
    return x.shape[0] > 1 and _matches(yours, torch.stack([flat[r:r + length].sum() for r in range(x.shape[0])]))


ROW_SUM_HINTS: tuple[PuzzleHint, ...] = (
    (_first_block_only, "you summed only the first block of each row: loop over the whole row with tl.range"),
    (_padding_loaded_as_1, "each row is off by the number of padded lanes in its last block: load them with "
                           "other=0.0, so they add nothing"),
    (_rows_overlap, "row r must start at r * T in memory: the offsets are rows[:, None] * T + cols[None, :]; "
                    "without * T the rows overlap"),
)


def _online_attention(q, steps, rescale: str = "both", zero_is_no_edge: bool = False, no_edge: float = -torch.inf,
                      stand_in: bool = True):
    """The online softmax of puzzles 6, 12 and 13 in float64, one step per (k, v, allowed) block of keys;
    allowed[i, j] says query i attends to key j. The options reproduce mistakes, for the hints: `rescale`
    names the running sums rescaled when the max grows (both, total, acc, none); zero_is_no_edge drops
    every score of exactly 0; no_edge is the score of a key not attended to and the start of the max
    (-1e30: a finite "minus infinity"); without stand_in, a max of -inf is subtracted as it is."""
    running_max = torch.full(q.shape[:1], no_edge, dtype=q.dtype)
    total, acc = torch.zeros_like(running_max), torch.zeros_like(q)
    for k, v, allowed in steps:
        scores = q @ k.T / q.shape[-1] ** 0.5
        scores = torch.where(allowed & (scores != 0) if zero_is_no_edge else allowed, scores, no_edge)
        new_max = torch.maximum(running_max, scores.amax(dim=1))
        base = torch.where(new_max == -torch.inf, 0, new_max) if stand_in else new_max  # no key allowed so far
        alpha = torch.exp(running_max - base)
        weights = torch.exp(scores - base[:, None])
        total = (total * alpha if rescale in ("both", "total") else total) + weights.sum(dim=1)
        acc = (acc * alpha[:, None] if rescale in ("both", "acc") else acc) + weights @ v
        running_max = new_max
    return acc / torch.where(total > 0, total, 1)[:, None]


def _tiled_attention(i, blocks, **mistakes):
    """Puzzle 12's loop: all queries against BK keys at a time."""
    q, k, v, block = i["q"], i["k"], i["v"], blocks["BK"]
    everything = torch.ones(q.shape[0], block, dtype=torch.bool)
    steps = ((k[s:s + block], v[s:s + block], everything[:, :k.shape[0] - s]) for s in range(0, k.shape[0], block))
    return _online_attention(q, steps, **mistakes)


def _scalar_attention(i, blocks, **mistakes):
    """Puzzle 6's loop: its scalars are vectors of D = 1 feature (so no scale), B1 keys at a time."""
    return _tiled_attention({name: i[name][:, None] for name in "qkv"}, {"BK": blocks["B1"]}, **mistakes)[:, 0]


def _mistaken(compute: Callable, close: Callable, **mistake) -> Callable:
    """A hint's check: the output is compute(inputs, blocks, **mistake), and that mistake changes the answer
    here (close(inputs, yours, candidate) compares two outputs)."""
    def check(i, z, b):
        wrong = compute(i, b, **mistake)
        return close(i, z, wrong) and not close(i, compute(i, b), wrong)
    check.__doc__ = f"Check whether the output is {compute.__name__} with {mistake}."
    return check


def _rescale_hints(loop: Callable, close: Callable, sums: str, total: str) -> tuple[PuzzleHint, ...]:
    """Hints for the running sums of an online softmax (total, and acc) not rescaled when the max grows:
    neither of them, or only one."""
    fix = f"when the max grows from m to m', multiply {total} and acc by exp(m - m')"
    return ((_mistaken(loop, close, rescale="none"), f"{sums} are not rescaled: {fix}"),
            (_mistaken(loop, close, rescale="total"), f"{sums} are not rescaled alike: {total} is, acc is not; {fix}"),
            (_mistaken(loop, close, rescale="acc"), f"{sums} are not rescaled alike: acc is, {total} is not; {fix}"))


# float32's exp(s) underflows to 0 below s = -87 (-104 with subnormals): a row whose scores all lie below this,
# measured from a max of 0, loses every weight.
_UNDERFLOW = -80.0


def _lost_to_a_max_of_0(scores: torch.Tensor, yours: torch.Tensor, expected: torch.Tensor) -> bool:
    """Check whether the rows that came out NaN or 0 (and should not) are rows whose scores all lie far below 0:
    a max that took in a score of 0 leaves every weight exp(s - 0) underflowing, and the sum 0."""
    flat = yours.reshape(yours.shape[0], -1)
    lost = (flat.isnan() | (flat == 0)).all(dim=1) & (expected.reshape(flat.shape) != 0).any(dim=1)
    return bool(lost.any()) and bool((scores.amax(dim=1)[lost] < _UNDERFLOW).all())


def _max_took_in_0_hint(scores: Callable, spec: Callable, keys: str) -> PuzzleHint:
    """The hint for rows lost to a max of 0; scores(inputs) gives the [queries, keys] scores."""
    def check(i, z, b):
        return _lost_to_a_max_of_0(scores(i), z, spec(**i))
    check.__doc__ = _lost_to_a_max_of_0.__doc__
    return (check, f"rows whose scores all lie far below 0 came out NaN or 0: the max took in a score of 0, so "
                   f"every weight exp(s - m) underflowed and the sum is 0. Set the scores of {keys} to -inf BEFORE "
                   "tl.max (a padded key loads as 0 and scores 0), and start the running max at -inf, not 0")


def _keys_padded_with_zeros(spec: Callable, inputs, block: int):
    """Attention as computed when the keys past T of the last block, loaded as 0 (their v too), score 0
    instead of -inf. Keys are rows of k and v (scalars in puzzle 6, D-vectors in puzzle 12)."""
    k = inputs["k"]
    widths = (0, 0) * (k.dim() - 1) + (0, _padding(k.shape[0], block))
    return spec(inputs["q"], *(torch.nn.functional.pad(inputs[name], widths) for name in "kv"))


def _keys_padded_with_minus_inf(inputs, yours, blocks) -> bool:
    """Check whether exactly the queries q <= 0 came out NaN, in a case with padded keys: keys loaded with
    other=-inf score q * (-inf), which is +inf for q < 0 (the max is inf, and inf - inf is NaN) and NaN for q = 0."""
    if _padding(inputs["k"].shape[0], blocks["B1"]) == 0:
        return False
    nan = yours.isnan()
    return bool(nan.any()) and bool((nan == (inputs["q"] <= 0)).all())


FLASH_HINTS: tuple[PuzzleHint, ...] = (
    (_keys_padded_with_minus_inf,
     "the queries q <= 0 came out NaN: padded keys loaded with other=-inf score q * (-inf), which is +inf for a "
     "negative q (and NaN for q = 0). Load them with other=0.0 and set their scores to -inf: "
     'tl.where(key_ok, q[:, None] * k[None, :], float("-inf"))'),
    (lambda i, z, b: _padding(i["k"].shape[0], b["B1"]) > 0 and
     _matches(z, _keys_padded_with_zeros(specs.flash_attention, i, b["B1"])),
     "padded keys count in the sums with score 0: set their scores to -inf with tl.where(mask, s, -inf)"),
    _max_took_in_0_hint(lambda i: i["q"][:, None] * i["k"][None, :], specs.flash_attention, "keys past T"),
    *_rescale_hints(_scalar_attention, lambda i, z, candidate: _matches(z, candidate), "the running sums",
                    "the denominator d"),
)


def _attention_scale(inputs, expected):
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


def _uniform(low: float, high: float) -> Fill:
    def fill(name, shape, gen):
        return low + (high - low) * torch.rand(shape, generator=gen, dtype=torch.float64)
    fill.__doc__ = f"uniform in [{low:g}, {high:g})"
    return fill


def _odd_rows_negated(fill: Fill) -> Fill:
    """fill with its odd rows (or elements, for a 1-D input) negated."""
    def negated(name, shape, gen):
        values = fill(name, shape, gen)
        values[1::2] *= -1
        return values
    negated.__doc__ = f"{fill.__doc__}, negated on odd rows"
    return negated


FLASH_CASES = (
    Case("spec", dict(N0=32, T=200), dict(B0=8, B1=32), about="the spec's own size"),
    Case("ragged", dict(N0=37, T=301), dict(B0=8, B1=64), about="neither size a multiple of its block"),
    Case("single query", dict(N0=1, T=500), dict(B0=1, B1=64)),
    Case("single key", dict(N0=10, T=1), dict(B0=4, B1=16)),
    Case("single element", dict(N0=1, T=1), dict(B0=1, B1=16)),
    Case("large", dict(N0=256, T=2000), dict(B0=32, B1=256)),
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
         fill=per_input(q=_odd_rows_negated(_uniform(1.0, 2.0)), k=_uniform(-150.0, -110.0)),
         about="every score of the even queries is below -110, and T is not a multiple of B1: padded keys (score "
               "0) that take part in the max make all their weights underflow to 0"),
)

# -- chapter 3: graph attention on sparse graphs ---------------------------------------------------

def _positive_scores(name, shape, gen):
    """Attention-like weights: exp of a logit in [-5, 5]."""
    return torch.exp(torch.rand(shape, generator=gen, dtype=torch.float64) * 10 - 5)


_scores = per_input(score=_positive_scores)


# Graphs every chapter-3 puzzle is graded on: (name, builder, about).
GRAPHS = (
    ("molecules", lambda g: graphs.molecules(2, g), "a batch of two small molecule-like graphs"),
    ("nodes with no incoming edge", lambda g: graphs.with_isolated(graphs.molecules(1, g), 5),
     "five nodes no edge reaches: their output is 0 (a sum over no edge)"),
    ("hub with half the edges", lambda g: graphs.with_hub(graphs.random_graph(100, 4, g), 0.5, g, hub=7),
     "one node receives 50% of all edges: one very long neighbour list (and, with atomics, contention)"),
    ("hub with 90% of the edges", lambda g: graphs.with_hub(graphs.random_graph(60, 3, g), 0.9, g, hub=0),
     "one node receives 90% of all edges"),
    ("duplicate edges and self loops", lambda g: graphs.with_self_loops(graphs.with_duplicates(
        graphs.molecules(2, g), 60, g), 20, g), "each copy of an edge counts: a multigraph"),
    ("power law", lambda g: graphs.power_law(120, 700, g), "hubs and many nodes of degree 0 or 1"),
    ("banded", lambda g: graphs.banded(97, 5, g), "locality: sources near their destination"),
    ("empty graph", lambda g: graphs.empty(37), "no edge at all: every output is 0"),
)


def _graph_cases(blocks: Mapping[str, int], fill: Fill | None = None, extra_blocks=None):
    """The shared graphs as cases with H=4 heads of D=32, alternating two block settings."""
    cases = []
    for index, (name, build, about) in enumerate(GRAPHS):
        chosen = extra_blocks if extra_blocks and index % 2 else blocks
        cases.append(Case(name, dict(H=4, D=32), dict(chosen), fill=fill or normal(), about=about, graph=build))
    return cases


def _spare_nodes(build: Callable[[torch.Generator], graphs.Graph], per_program: int):
    """build, plus one node no edge reaches whenever its node count is a multiple of per_program: the last
    program then always has spare nodes past N, which `if node < N:` (or a node mask) must skip."""
    def build_with_spare_nodes(gen):
        graph = build(gen)
        return graphs.with_isolated(graph, 1) if graph.num_nodes % per_program == 0 else graph
    return build_with_spare_nodes


def _ragged_programs(cases) -> tuple[Case, ...]:
    """The cases, each that gives a program several nodes drawing a node count that is not a multiple of them.
    A random size comes out even half the time, and then a missing node mask goes unnoticed."""
    return tuple(replace(case, graph=_spare_nodes(case.graph, case.blocks["NODES_PER_PROGRAM"]))
                 if case.blocks.get("NODES_PER_PROGRAM", 1) > 1 else case for case in cases)


SCATTER_CASES = (
    *_graph_cases(dict(BLOCK_E=32), _scores, extra_blocks=dict(BLOCK_E=8)),
    Case("H and D not powers of two", dict(H=3, D=20), dict(BLOCK_E=16), fill=_scores,
         graph=lambda g: graphs.molecules(2, g), about="H=3 heads of D=20 features: masks on both"),
)

GATHER_CASES = _ragged_programs((
    *_graph_cases(dict(BLOCK_E=16), _scores, extra_blocks=dict(BLOCK_E=8, NODES_PER_PROGRAM=4)),
    Case("H and D not powers of two", dict(H=3, D=20), dict(BLOCK_E=4, NODES_PER_PROGRAM=2), fill=_scores,
         graph=lambda g: graphs.molecules(2, g), about="H=3 heads of D=20 features: masks on both"),
))


def _reference_problem(gen):
    """The reference aggregation: 320 nodes, node n receiving 14 + (n % 5) - 2 edges."""
    return graphs.with_degrees(12 + torch.arange(320) % 5, gen)


AGGREGATE_CASES = _ragged_programs((
    Case("reference problem", dict(H=8, D=32), dict(BLOCK_E=16), graph=_reference_problem,
         about="320 nodes with 12 to 16 neighbours each, 8 heads of 32 features"),
    *_graph_cases(dict(BLOCK_E=16), extra_blocks=dict(BLOCK_E=4, NODES_PER_PROGRAM=2)),
    Case("H and D not powers of two", dict(H=5, D=12), dict(BLOCK_E=8), graph=lambda g: graphs.molecules(2, g),
         about="H=5 heads of D=12 features: masks on both"),
))


def _aggregate_with_weights(inputs, edge_weight: torch.Tensor | None) -> torch.Tensor | None:
    """Puzzle 9's answer had slot s been given row s of this edge_weight (None: the mistake cannot happen here)."""
    return None if edge_weight is None else specs.csr_aggregate(**dict(inputs, edge_weight=edge_weight))


def _matches_any(yours: torch.Tensor, candidates) -> bool:
    return any(c is not None and c.shape == yours.shape and _matches(yours, c) for c in candidates)


def _weights_by_neighbour(inputs, yours, blocks) -> bool:
    """Check whether each slot took the weights of row col_idx[s] (its neighbour) or row n (its node), not row s."""
    weight, col_idx = inputs["edge_weight"], inputs["col_idx"].long()
    by_node = [col_idx, specs.slot_nodes(inputs["row_ptr"]).long()]
    return weight.shape[0] > 1 and _matches_any(yours, (
        _aggregate_with_weights(inputs, weight[rows]) for rows in by_node if int(rows.max()) < weight.shape[0]))


def _one_weight_for_all_heads(inputs, yours, blocks) -> bool:
    """Check whether each slot used one weight for every head: element s of edge_weight (a load of
    edge_weight_ptr + slots) or its head 0 (edge_weight_ptr + slots * H)."""
    weight = inputs["edge_weight"]
    slots, heads = weight.shape
    if slots == 0 or heads < 2:
        return False
    return _matches_any(yours, (_aggregate_with_weights(inputs, column[:, None].expand(slots, heads))
                                for column in (weight.reshape(-1)[:slots], weight[:, 0])))


def _last_slot_left_out(inputs, yours, blocks) -> bool:
    """Check whether each node's last slot, row_ptr[n+1] - 1, was left out of its sum."""
    row_ptr, weight = inputs["row_ptr"].long(), inputs["edge_weight"].clone()
    filled = row_ptr[1:] > row_ptr[:-1]
    weight[row_ptr[1:][filled] - 1] = 0.0
    return bool(filled.any()) and _matches_any(yours, (_aggregate_with_weights(inputs, weight),))


AGGREGATE_HINTS: tuple[PuzzleHint, ...] = (
    (_weights_by_neighbour, "edge_weight was read by node (row col_idx[s] or n), but its rows are by slot: slot s "
                            "takes row s, edge_weight[s, h], like col_idx[s]"),
    (_one_weight_for_all_heads, "edge_weight was read once per slot, where there is one weight per slot and head: "
                                "load the [BLOCK_E, H] tile at slots[:, None] * H + heads[None, :]"),
    (_last_slot_left_out, "each node's last slot is left out: its slots run from row_ptr[n] up to but not including "
                          "row_ptr[n+1], so the loop ends at row_ptr[n+1] itself, not row_ptr[n+1] - 1"),
)

ATTENTION_CASES = _ragged_programs((
    *_graph_cases(dict(BLOCK_E=16), extra_blocks=dict(BLOCK_E=8, NODES_PER_PROGRAM=2)),
    Case("clip per feature", dict(H=4, D=32), dict(BLOCK_E=16), fill=per_input(q=normal(5.0), k=normal(5.0)),
         graph=lambda g: graphs.molecules(2, g),
         about="|k*q/sqrt(D)| exceeds 5 on many features, so the per-feature clip matters"),
    Case("logits beyond 5", dict(H=4, D=32), dict(BLOCK_E=16), fill=per_input(e=normal(4.0)),
         graph=lambda g: graphs.molecules(2, g), about="sums of e_out beyond +-5, so the logit clip matters"),
    Case("H and D not powers of two", dict(H=3, D=20), dict(BLOCK_E=8), graph=lambda g: graphs.molecules(2, g),
         about="H=3 heads of D=20 features: masks on both"),
    Case("H=5, D=7", dict(H=5, D=7), dict(BLOCK_E=4, NODES_PER_PROGRAM=4), fill=per_input(q=normal(3.0)),
         graph=lambda g: graphs.with_hub(graphs.random_graph(40, 3, g), 0.3, g),
         about="small odd sizes with a hub"),
))


def _edge_ends(inputs):
    """(src, dst) of every edge, in edge-id order, from the CSC arrays."""
    edge = inputs["edge_id"].long()
    src, dst = torch.empty_like(edge), torch.empty_like(edge)
    src[edge], dst[edge] = inputs["row_idx"].long(), specs.slot_nodes(inputs["col_ptr"])
    return src, dst


def _attention_h_scale(inputs, expected):
    """Rounding bound for h in units of float32 eps, as for puzzle 6: each weight carries the relative
    error of its logit (about the sum of |e_out| over the features), and the normaliser spreads it."""
    q, k, v = inputs["q"], inputs["k"], inputs["v"]
    src, dst = _edge_ends(inputs)
    e_out = torch.clamp(k[src] * q[dst] / q.shape[-1] ** 0.5, -5, 5) * inputs["e"]
    weight = torch.exp(torch.clamp(e_out.sum(-1), -5, 5))
    condition = 1 + e_out.abs().sum(-1)  # [E, H]
    den = torch.zeros_like(q[..., 0]).index_add_(0, dst, weight) + specs.EPS
    share = weight / den[dst]
    mass = share[..., None] * v[src].abs()
    scale = torch.zeros_like(q).index_add_(0, dst, mass * (1 + condition[..., None]))
    spread = torch.zeros_like(q[..., 0]).index_add_(0, dst, share * condition)
    return scale + torch.zeros_like(q).index_add_(0, dst, mass) * spread[..., None]


def _attention_e_out_scale(inputs, expected):
    src, dst = _edge_ends(inputs)
    product = (inputs["k"][src] * inputs["q"][dst]).abs() / inputs["q"].shape[-1] ** 0.5
    return torch.clamp(product, max=5) * inputs["e"].abs()


def _gather_in_slot_order(inputs, yours, blocks) -> bool:
    wrong = dict(inputs, edge_id=torch.arange(inputs["edge_id"].numel(), dtype=torch.int32))
    return inputs["edge_id"].numel() > 1 and _matches(yours, specs.csc_gather(**wrong))


def _attention_variant(inputs, clip_features=True, e_out_in_slot_order=False, padding_block=0, clip_logits=True):
    """The layer as a common mistake computes it. padding_block: padded lanes of blocks of this size
    each add exp(0) = 1 to their node's denominator."""
    src, dst = _edge_ends(inputs)
    padded = None
    if padding_block:
        degree = (inputs["col_ptr"][1:] - inputs["col_ptr"][:-1]).to(inputs["q"].dtype)
        padded = (-degree % padding_block)[:, None]
    h, e_out = _coo_attention(inputs["q"], inputs["k"], inputs["v"], inputs["e"], src, dst, clip_features,
                              clip_logits, padded)
    return e_out[inputs["edge_id"].long()] if e_out_in_slot_order else h


GATHER_HINTS: tuple[PuzzleHint, ...] = (
    (lambda i, z, b: _gather_in_slot_order(i, z, b),
     "edge features were read in slot order: slot s holds edge edge_id[s], so read row edge_id[s] of "
     "v_scaled and score"),
)
def _without_epsilon(spec: Callable, output: int = 0) -> Callable:
    """A hint predicate: does the answer match the spec with the 1e-6 left out of the denominator?"""
    def fits(inputs, yours, blocks):
        saved, specs.EPS = specs.EPS, 0.0
        try:
            out = spec(**inputs)
        finally:
            specs.EPS = saved
        out = out[output] if isinstance(out, tuple) else out
        return out.shape == yours.shape and _matches(yours, out)
    return fits


def _epsilon_hint(spec: Callable) -> PuzzleHint:
    return (_without_epsilon(spec), "the denominator lacks its + 1e-6: it changes every node a little, and "
                                    "turns a node no edge reaches into 0 / 0")
def _attention_unscaled(inputs, yours, blocks) -> bool:
    """Check whether h or e_out is what the layer gives when k * q is not scaled by 1/sqrt(D)."""
    q = inputs["q"]
    return _matches_any(yours, specs.graph_attention(**dict(inputs, q=q * q.shape[-1] ** 0.5)))


def _float32_h(inputs, **mistakes) -> torch.Tensor:
    """h as a float32 kernel with these clip mistakes computes it: where an unclipped logit passes 88, exp
    overflows to inf and h comes out NaN, in the kernel and here alike. (The inputs hold float32 values.)"""
    single = {k: v.float() if isinstance(v, torch.Tensor) and v.is_floating_point() else v for k, v in inputs.items()}
    return _attention_variant(single, **mistakes).double()


def _fits_float32_h(yours: torch.Tensor, inputs, **mistakes) -> bool:
    """Whether yours is h as _float32_h computes it: NaN in the same places, and elsewhere within 1e-4 of
    sum_j w_j |v_j| / sum_j w_j (huge unclipped weights cancel, so each value's own size is too tight a scale)."""
    if yours.shape != inputs["q"].shape:
        return False
    candidate = _float32_h(inputs, **mistakes)
    scale = _float32_h(dict(inputs, v=inputs["v"].abs()), **mistakes)
    close = ((yours - candidate).abs() <= 1e-4 * scale) | (yours == candidate) | (yours.isnan() & candidate.isnan())
    return bool(close.all())


def _sum_clip_missing(feature_clip_shows: bool):
    """A check whether h is what the per-feature clip alone gives, the summed logit left unclipped, on a case
    where the per-feature clip changes h (feature_clip_shows) or one where it does not, so that a kernel
    without either clip gives that same h."""
    def check(inputs, yours, blocks) -> bool:
        if not _fits_float32_h(yours, inputs, clip_logits=False):
            return False
        return _fits_float32_h(_float32_h(inputs, clip_features=False, clip_logits=False), inputs,
                               clip_logits=False) != feature_clip_shows
    return check


ATTENTION_HINTS: tuple[PuzzleHint, ...] = (
    (lambda i, z, b: z.shape == i["e"].shape and z.numel() > 0 and
     _matches(z, _attention_variant(i, e_out_in_slot_order=True)),
     "e_out is in slot (CSC) order: store the result of slot s at row edge_id[s], the edge's own position"),
    (_attention_unscaled, "k * q misses the 1/sqrt(D) scale, so e_out and h are both off: clip(k * q * scale, -5, 5) "
                          "* e, with the launcher's scale = 1/sqrt(D)"),
    (lambda i, z, b: z.shape == i["e"].shape and _matches(z, _attention_variant(i, clip_features=False)),
     "e_out is not clipped per feature: clip(k * q / sqrt(D), -5, 5) element by element, before the sum"),
    (lambda i, z, b: z.shape == i["q"].shape and _matches(z, _attention_variant(i, clip_features=False)),
     "the weights miss the per-feature clip: clip(k * q / sqrt(D), -5, 5) element by element, then sum"),
    (_sum_clip_missing(feature_clip_shows=True),
     "the sum clip is missing, though each feature is clipped: the weight is exp(clip(sum over d of e_out, -5, 5))"),
    (_sum_clip_missing(feature_clip_shows=False),
     "the sum clip is missing: the weight is exp(clip(sum over d of e_out, -5, 5)). No feature of this case passes "
     "+-5, so whether each feature is clipped shows in the case 'clip per feature'"),
    (lambda i, z, b: _fits_float32_h(z, i, clip_features=False, clip_logits=False),
     "neither clip is applied: clip each feature of k * q / sqrt(D) to [-5, 5], then the summed logit too"),
    (lambda i, z, b: z.shape == i["q"].shape and _matches(z, _attention_variant(i, padding_block=b["BLOCK_E"])),
     "each padded slot adds exp(0) = 1 to the denominator: set the weights of masked slots to 0 after the exp"),
)


# -- chapter 4: tensor cores --------------------------------------------------------------------------

MATMUL_CASES = (
    Case("spec", dict(M=200, K=200, N=168), dict(BM=64, BN=64, BK=64),
         about="no size a multiple of 64: the last blocks of M, N and K are partial"),
    Case("one block", dict(M=16, K=16, N=16), dict(BM=16, BN=16, BK=16)),
    Case("single row", dict(M=1, K=64, N=64), dict(BM=16, BN=32, BK=32)),
    Case("K smaller than a block", dict(M=50, K=8, N=40), dict(BM=32, BN=16, BK=16),
         about="K=8 < BK: the one K step is mostly padding"),
    Case("tall and thin", dict(M=1000, K=40, N=24), dict(BM=128, BN=32, BK=32)),
    Case("rectangular blocks", dict(M=130, K=96, N=264), dict(BM=32, BN=128, BK=64)),
    Case("positive, long K", dict(M=64, K=1024, N=64), dict(BM=32, BN=32, BK=32), fill=_uniform(0, 1),
         about="sums near 256 of positive terms: a float16 accumulator loses them"),
    Case("sums beyond float16", dict(M=48, K=256, N=48), dict(BM=16, BN=16, BK=64), fill=normal(60.0),
         about="inputs near 60, sums past 65504: float16 overflows to inf, float32 does not"),
    Case("bfloat16", dict(M=120, K=72, N=80), dict(BM=64, BN=32, BK=32), half=torch.bfloat16,
         about="bfloat16 inputs: the same kernel, the other 16-bit type"),
)


def _near(yours: torch.Tensor, candidate: torch.Tensor, scale, rtol: float = 1e-2) -> bool:
    """Within rtol * scale of a known wrong answer, element by element. Chapter 4 rounds the weights p to
    16 bits before the second tl.dot, so _matches' 1e-4 would never recognise a mistake there."""
    close = ((yours - candidate).abs() <= rtol * scale) | (yours == candidate)
    return bool((close | (yours.isnan() & candidate.isnan())).all())


def _short_of_k(i, z, b):
    """The loop over K stopped before the last, partial step."""
    a, w = i["a"], i["b"]
    whole = a.shape[1] // b["BK"] * b["BK"]
    return whole < a.shape[1] and _near(z, a[:, :whole] @ w[:whole], a.abs() @ w.abs(), rtol=1e-4)


def _rows_at_block_offsets(i, z, b):
    """Check whether row r of c came from row r // BM + r % BM of a: a_desc.load([pid_m, k]) where
    [pid_m * BM, k] was meant. Nothing stops it: only offsets along the last dimension must be 16-byte aligned."""
    a, w, block = i["a"], i["b"], b["BM"]
    rows = torch.arange(a.shape[0])
    padded = torch.cat([a, a.new_zeros(block, a.shape[1])])  # rows past M load as 0
    return a.shape[0] > block and _near(z, padded[rows // block + rows % block] @ w, a.abs() @ w.abs(), rtol=1e-4)


def _rounded_to_16_bits(i, z, b):
    """Errors of 16-bit rounding (float16 keeps 11 bits), or inf where a sum passes float16's 65504."""
    exact = i["a"] @ i["b"]
    overflow = z.isinf() & (exact.abs() > 65504)
    return bool(overflow.any()) or _near(z, exact, i["a"].abs() @ i["b"].abs(), rtol=5e-3)


MATMUL_HINTS: tuple[PuzzleHint, ...] = (
    (_short_of_k, "the last, partial step along K is missing: loop over all of K (tl.range(0, K, BK)); the "
                  "descriptor pads the columns past K with zeros"),
    (_rows_at_block_offsets, "c's rows came from the wrong rows of a: a descriptor's offsets are in elements, not "
                             "blocks: load a at [pid_m * BM, k], not [pid_m, k]"),
    (_rounded_to_16_bits, "errors the size of 16-bit rounding, or inf past 65504: keep the accumulator float32 "
                          "(acc = tl.dot(a, b, acc) with a float32 acc) and the operands 16-bit (a float32 "
                          "tl.dot runs as TF32 on the GPU)"),
)


_SLOT_BITS = torch.arange(graphs.TCB_COLS)
# A TCB's [16 rows, 16 slots] edges from its 16 row masks: bit c of row r's mask is slot c. The other two
# readings are mistakes the hints recognise.
_BITMAPS = {
    "rows": lambda masks: (masks[:, None] >> _SLOT_BITS) & 1 == 1,
    "transposed": lambda masks: (masks[None, :] >> _SLOT_BITS[:, None]) & 1 == 1,
    "reversed": lambda masks: (masks[:, None] >> (graphs.TCB_COLS - 1 - _SLOT_BITS)) & 1 == 1,
}


def _tcb_step(i, tcb: int, height: int, bitmap: str, gather: str):
    """One TCB as a step of the online softmax: its k rows, v rows, and the edges of the window's first `height`
    rows. bitmap and gather name how they are read: "rows" and "tcb_col" are right."""
    cols = i["tcb_col"][tcb].long() if gather == "tcb_col" else _SLOT_BITS
    return i["k"][cols], i["v"][cols], _BITMAPS[bitmap](i["tcb_mask"][tcb].long())[:height]


def _window_attention(i, blocks, bitmap: str = "rows", gather: str = "tcb_col", **mistakes):
    """Puzzle 13's loop: each window's 16 rows against its TCBs, one at a time (there are no blocks to choose).
    Besides _online_attention's mistakes: the bitmap read "transposed" or "reversed", and k and v gathered by
    "slot" (node c for slot c) instead of by tcb_col."""
    q, window_ptr = i["q"], i["window_ptr"].tolist()
    out = torch.zeros_like(q)
    for w in range(len(window_ptr) - 1):
        rows = slice(graphs.WINDOW * w, graphs.WINDOW * (w + 1))
        height = q[rows].shape[0]
        steps = (_tcb_step(i, t, height, bitmap, gather) for t in range(*window_ptr[w:w + 2]))
        out[rows] = _online_attention(q[rows], steps, **mistakes)
    return out


def _v_size(i) -> float:
    """The size of an output's terms: the largest |v|. 16-bit weights p are off by up to 2^-8 of it."""
    return float(i["v"].abs().max()) if i["v"].numel() else 0.0


def _close_in_16_bits(i, yours, candidate) -> bool:
    """Whether two outputs of puzzle 12 or 13 agree up to the rounding of the weights p to 16 bits."""
    return _near(yours, candidate, _v_size(i))


def _unscaled(spec: Callable) -> Callable:
    """The spec as computed without the 1 / sqrt(D): q multiplied back by sqrt(D)."""
    def run(inputs):
        return spec(**{**inputs, "q": inputs["q"] * inputs["q"].shape[-1] ** 0.5})
    return run


def _scores_times(spec: Callable) -> Callable:
    """The spec as computed with every score multiplied by a factor (a mistake's), through q."""
    def run(inputs, blocks, factor: float = 1.0):
        return spec(**{**inputs, "q": inputs["q"] * factor})
    run.__name__ = f"{spec.__name__} with scaled scores"
    return run


_SCALE_HINT = "the scores miss the 1 / sqrt(D) scale: multiply q . k by the `scale` argument before the softmax"
_LOG2E = 1.4426950408889634  # exp(x) = exp2(x * log2(e))


def _exp_base_hints(spec: Callable) -> tuple[PuzzleHint, ...]:
    """Hints for an exponential of the wrong base: tl.exp of scores in log2 units, or tl.exp2 of plain scores."""
    scaled = _scores_times(spec)
    return ((_mistaken(scaled, _close_in_16_bits, factor=_LOG2E),
             "the weights are exp(s * log2(e)): scores multiplied by log2(e) are meant for tl.exp2, but went into "
             "tl.exp. Use tl.exp2 on them (in alpha too), or tl.exp on the plain scores"),
            (_mistaken(scaled, _close_in_16_bits, factor=1 / _LOG2E),
             "the weights are 2^s: tl.exp2 takes scores in log2 units. Multiply the scores by log2(e) = 1.4427 "
             "before tl.exp2 (in alpha too), or use tl.exp"))


ATTENTION_TILE_HINTS: tuple[PuzzleHint, ...] = (
    (lambda i, z, b: _near(z, _unscaled(specs.attention)(i), _v_size(i)), _SCALE_HINT),
    (lambda i, z, b: i["k"].shape[0] % b["BK"] != 0 and _near(z, _keys_padded_with_zeros(specs.attention, i, b["BK"]),
                                                                  _v_size(i)),
     "keys past T count in the sums: their scores must be -inf, not the 0 that a masked load gives, so that "
     "exp adds nothing for them"),
    _max_took_in_0_hint(lambda i: i["q"] @ i["k"].T / i["q"].shape[-1] ** 0.5, specs.attention, "keys past T"),
    *_exp_base_hints(specs.attention),
    *_rescale_hints(_tiled_attention, _close_in_16_bits, "the sums", "l"),
)

_increasing_keys = per_input(q=_uniform(0.5, 1.5), k=rows(lambda i, n, g: torch.full((n,), -3.025 + 0.05 * i),
                                                          "row j is -3.025 + 0.05 j in every feature, never 0"))

ATTENTION_TILE_CASES = (
    Case("spec", dict(N=100, T=130, D=32), dict(BQ=32, BK=32), about="neither N nor T a multiple of its block"),
    Case("D=16", dict(N=50, T=70, D=16), dict(BQ=16, BK=16)),
    Case("D=64", dict(N=64, T=200, D=64), dict(BQ=64, BK=32)),
    Case("D=128", dict(N=40, T=90, D=128), dict(BQ=16, BK=64)),
    Case("single query", dict(N=1, T=300, D=32), dict(BQ=16, BK=64)),
    Case("single key", dict(N=20, T=1, D=32), dict(BQ=16, BK=16), about="one key: every weight is 1"),
    Case("large scores", dict(N=40, T=150, D=32), dict(BQ=16, BK=32), fill=normal(8.0),
         about="scores in the hundreds: exp overflows unless the running max is subtracted"),
    Case("scores far below 0, keys padded", dict(N=40, T=100, D=32), dict(BQ=16, BK=32),
         fill=per_input(q=_odd_rows_negated(_uniform(0.5, 1.5)), k=_uniform(-40.0, -30.0)),
         about="the even rows score about -200 on every key, and T is not a multiple of BK: padded keys (score 0) "
               "that take part in the max make all their weights underflow to 0"),
    Case("max grows every block", dict(N=24, T=120, D=32), dict(BQ=16, BK=16), fill=_increasing_keys,
         about="q > 0 and k increasing along T: every key block brings a new max"),
    Case("zero queries", dict(N=20, T=100, D=32), dict(BQ=16, BK=32),
         fill=per_input(q=lambda n, s, g: torch.zeros(s, dtype=torch.float64)),
         about="q = 0: every score is exactly 0 and the answer is the mean of v"),
    Case("bfloat16", dict(N=70, T=90, D=64), dict(BQ=32, BK=32), half=torch.bfloat16,
         about="bfloat16 inputs: cast p to v's dtype for the second tl.dot"),
)


def _window_of_one_edge(gen):
    """Window 0 an ordinary molecule, window 1 a single edge, window 2 none (48 nodes)."""
    base = graphs.molecules(1, gen, nodes=16, in_degree=(2, 6))
    src = torch.cat([base.src, torch.tensor([3], dtype=torch.int32)])
    dst = torch.cat([base.dst, torch.tensor([20], dtype=torch.int32)])
    return graphs.from_coo(src, dst, 48)


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
)

def _neighbours_lost(i, z, b) -> bool:
    """Some row with a neighbour came out all 0: every weight exp(s - m) underflowed."""
    return bool(((z == 0).all(dim=1) & (specs.sparse_attention(**i) != 0).any(dim=1)).any())


SPARSE_ATTENTION_HINTS: tuple[PuzzleHint, ...] = (
    (lambda i, z, b: _near(z, _unscaled(specs.sparse_attention)(i), _v_size(i)), _SCALE_HINT),
    *_exp_base_hints(specs.sparse_attention),
    *_rescale_hints(_window_attention, _close_in_16_bits, "the sums", "l"),
    (_mistaken(_window_attention, _close_in_16_bits, zero_is_no_edge=True),
     "edges whose score is exactly 0 were dropped: a score of 0 is a real score (here q or k is 0); tell "
     "edges from non-edges by the bitmap, never by the score's value"),
    (_mistaken(_window_attention, _close_in_16_bits, bitmap="transposed"),
     "the edge bitmap is read transposed: tcb_mask[t, r] is row r's mask, and its bit c is slot c: "
     "edge[r, c] = (mask[r] >> c) & 1, that is (bits[:, None] >> slots[None, :]) & 1"),
    (_mistaken(_window_attention, _close_in_16_bits, bitmap="reversed"),
     "the bits of each row's mask are read in reverse: bit c (the value 1 << c, counting from the least "
     "significant bit) is slot c, not slot 15 - c: (bits[:, None] >> slots[None, :]) & 1"),
    (_mistaken(_window_attention, _close_in_16_bits, gather="slot"),
     "k and v were gathered by slot (node c for slot c): slot c of TCB t holds the node tcb_col[t, c], so load "
     "the rows of k and v at the TCB's 16 tcb_col values"),
    (_mistaken(_window_attention, _close_in_16_bits, stand_in=False),
     "NaN in rows that have no edge in some TCB: while a row's max m is still -inf, exp2(s - m) and the rescale "
     "compute -inf - (-inf) = NaN. Subtract a finite stand-in there: base = tl.where(m_new == float(\"-inf\"), 0.0, "
     "m_new), and use base for both exponentials"),
    (_mistaken(_window_attention, _close_in_16_bits, no_edge=-1e30),
     "rows with no neighbour came out non-zero: a finite \"minus infinity\" such as -1e30 minus itself is 0, so in "
     "a row with no edge every slot weighs exp(0) = 1. Give non-edges float(\"-inf\") and start the max at -inf; "
     "while the max is -inf, subtract a finite stand-in (0) instead"),
    (_neighbours_lost, "rows that have neighbours came out 0: every weight exp(s - m) underflowed, so m stood far "
                       "above the row's real scores. Start the running max at -inf, and set non-edges to -inf "
                       "before the max (a non-edge can score far above the real neighbours)"),
)

# -- GPU benchmarks (python -m grader bench) ----------------------------------------------------------

SOFTMAX_SIZES = (dict(N0=4096, T=32768), dict(N0=32768, T=4096), dict(N0=128, T=1_048_576))
SOFTMAX_BLOCKS = (dict(B0=1, B1=1024), dict(B0=1, B1=2048), dict(B0=1, B1=4096), dict(B0=1, B1=8192))
SOFTMAX_LIBRARY = {"torch.softmax": lambda x: torch.softmax(x, dim=1)}


def _sdpa(q, k, v):
    """Scalar attention as PyTorch's fused attention sees it: one head of dimension 1, scale 1."""
    return torch.nn.functional.scaled_dot_product_attention(
        q[None, None, :, None], k[None, None, :, None], v[None, None, :, None], scale=1.0).reshape(-1)


def _molecule_batch(batch: int) -> Case:
    return Case(f"batch {batch}", dict(H=4, D=32),
                graph=lambda g: graphs.molecules(batch, g, nodes=100, in_degree=10))


def GRAPH_BENCH(**settings) -> Bench:  # noqa: N802 (reads like the Bench it makes)
    """Batches of 100-node graphs with in-degree 10, H=4 heads of D=32, as in the anchor measurements."""
    return Bench(sizes=tuple(_molecule_batch(b) for b in (1, 16, 64, 512, 4096)), **settings)


def _dst_of_edges(inputs):
    dst = torch.empty_like(inputs["edge_id"], dtype=torch.long)
    dst[inputs["edge_id"].long()] = specs.slot_nodes(inputs["col_ptr"])
    return {"v_scaled": inputs["v_scaled"], "score": inputs["score"], "dst": dst,
            "num_nodes": inputs["col_ptr"].numel() - 1}


def _coo_scatter(v_scaled, score, dst, num_nodes):
    numerator = v_scaled.new_zeros(num_nodes, *v_scaled.shape[1:]).index_add_(0, dst, v_scaled)
    denominator = score.new_zeros(num_nodes, score.shape[1]).index_add_(0, dst, score)
    return numerator / (denominator[..., None] + specs.EPS)


def _edge_ends_kept(inputs):
    src, dst = _edge_ends(inputs)
    return {"q": inputs["q"], "k": inputs["k"], "v": inputs["v"], "e": inputs["e"], "src": src, "dst": dst}


def _coo_attention(q, k, v, e, src, dst, clip_features=True, clip_logits=True, extra_denominator=None):
    """The RTMScore layer in eager PyTorch over a kept COO, as the anchor measurements ran it. The options
    reproduce common mistakes, for the hints."""
    product = k[src] * q[dst] / q.shape[-1] ** 0.5
    e_out = (torch.clamp(product, -5, 5) if clip_features else product) * e
    logits = e_out.sum(-1)
    weight = torch.exp(torch.clamp(logits, -5, 5) if clip_logits else logits)
    numerator = torch.zeros_like(q).index_add_(0, dst, weight[..., None] * v[src])
    denominator = torch.zeros_like(q[..., 0]).index_add_(0, dst, weight)
    if extra_denominator is not None:
        denominator += extra_denominator
    return numerator / (denominator[..., None] + specs.EPS), e_out


def _slots_kept(inputs):
    return {"node_feat": inputs["node_feat"], "edge_weight": inputs["edge_weight"],
            "row": specs.slot_nodes(inputs["row_ptr"]), "col": inputs["col_idx"].long()}


def _vectorised_aggregate(node_feat, edge_weight, row, col):
    return torch.zeros_like(node_feat).index_add_(0, row, edge_weight[..., None] * node_feat[col])


def _pyg_scatter(v_scaled, score, dst, num_nodes):
    """What a practitioner would write with PyTorch Geometric (imported only when benchmarked)."""
    from torch_geometric.utils import scatter

    numerator = scatter(v_scaled, dst.long(), dim=0, dim_size=num_nodes, reduce="sum")
    denominator = scatter(score, dst.long(), dim=0, dim_size=num_nodes, reduce="sum")
    return numerator / (denominator[..., None] + specs.EPS)


def _pyg_gather(v_scaled, score, col_ptr, edge_id):
    dst = torch.empty_like(edge_id, dtype=torch.long)
    dst[edge_id.long()] = specs.slot_nodes(col_ptr)
    return _pyg_scatter(v_scaled, score, dst, col_ptr.numel() - 1)


# Chapter 4: float16 inputs. Library results come back in float16 (about 1e-3 relative rounding) and
# the kernels round their operands to float16; a wrong answer is off by far more than 2% of the scale.
HALF_CLOSE = (2e-2, 2e-2)

MATMUL_BENCH = Bench(
    sizes=(dict(M=4096, K=4096, N=4096), dict(M=8192, K=8192, N=8192),
           dict(M=4000, K=4096, N=4040)),  # no multiple of 128 in M or N: partial blocks at the edges
    blocks=(dict(BM=128, BN=128, BK=64), dict(BM=128, BN=256, BK=64), dict(BM=64, BN=128, BK=64),
            dict(BM=128, BN=128, BK=32)),
    library={"torch.matmul (float16)": lambda a, b: torch.matmul(a, b)},
    flops=lambda d: 2 * d["M"] * d["N"] * d["K"], close=HALF_CLOSE)


def _sdpa_heads(q, k, v):
    """Tiled attention as PyTorch's fused attention sees it: batch 1, one head, [1, 1, N, D]."""
    return torch.nn.functional.scaled_dot_product_attention(q[None, None], k[None, None], v[None, None])[0, 0]


ATTENTION_BENCH = Bench(
    sizes=(dict(N=4096, T=4096, D=64), dict(N=16384, T=16384, D=64), dict(N=8192, T=8192, D=128)),
    blocks=(dict(BQ=128, BK=64), dict(BQ=128, BK=128), dict(BQ=64, BK=64), dict(BQ=64, BK=128)),
    library={"scaled_dot_product_attention": _sdpa_heads},
    flops=lambda d: 4 * d["N"] * d["T"] * d["D"],  # two products of N x T x D multiply-adds
    close=HALF_CLOSE)


def _from_baselines(name: str) -> Callable:
    """A function of grader/baselines.py, imported when first called: that module imports triton, and the
    registry is imported before the grader decides whether TRITON_INTERPRET is set."""
    def call(*args, **kwargs):
        from . import baselines

        return getattr(baselines, name)(*args, **kwargs)
    call.__name__ = name
    return call


def _bsb_edges_kept(inputs):
    """The BSB decoded once into (row, neighbour) pairs, untimed: the edge list a message-passing layer keeps."""
    rows, cols = graphs.bsb_edges(inputs["window_ptr"], inputs["tcb_col"], inputs["tcb_mask"])
    return {"q": inputs["q"], "k": inputs["k"], "v": inputs["v"], "rows": rows, "cols": cols}


def _unfused_attention(q, k, v, rows, cols):
    """Sparse attention as PyG-style message passing: gather both ends of every edge, a scatter softmax
    (max, exp, sum, each a scatter over rows), then index_add_ of the weighted values. Products in the
    inputs' 16-bit type, sums in float32."""
    scores = (q[rows] * k[cols]).sum(-1, dtype=torch.float32) * q.shape[-1] ** -0.5
    row_max = scores.new_full(q.shape[:1], -torch.inf).scatter_reduce(0, rows, scores, "amax")
    weights = torch.exp(scores - row_max[rows])
    total = torch.zeros_like(row_max).index_add_(0, rows, weights)
    weights = weights / total[rows]  # every row that has an edge has total >= 1
    return scores.new_zeros(q.shape).index_add_(0, rows, weights[:, None] * v[cols])


def _bsb_note(inputs) -> str:
    stats = graphs.bsb_stats(graphs.BSB(*(inputs[name].cpu() for name in graphs.BSB._fields)))
    return f"fill {stats.fill:.1%}, {stats.tcbs / max(stats.windows, 1):.1f} TCBs/window"


def _sparse_bench_sizes(n: int) -> tuple[Case, ...]:
    """Three graphs of about n nodes with d=64: no locality, a band, and a batch of small molecules."""
    return (Case("random, 32 neighbours", dict(D=64), graph=lambda g: graphs.random_graph(n, 32, g)),
            Case("banded, 32 neighbours within 32", dict(D=64), graph=lambda g: graphs.banded(n, 32, g, width=32)),
            Case(f"molecules, batch {n // 100}", dict(D=64),
                 graph=lambda g: graphs.molecules(n // 100, g, nodes=100, in_degree=10)))


SPARSE_ATTENTION_BENCH = Bench(
    sizes=(*_sparse_bench_sizes(16384), *_sparse_bench_sizes(65536)),
    blocks=({},),  # the launcher has no block sizes: 16 x 16 tiles are the format
    close=HALF_CLOSE, size_note=_bsb_note,
    compile_spec=False,  # the spec decodes the BSB with data-dependent sizes: nothing for the compiler to fuse
    baselines={
        "Triton CSR, CUDA cores (one program per row)": Baseline(
            _from_baselines("csr_from_bsb"), _from_baselines("csr_attention"), compile=False,
            settings=(dict(BLOCK_E=16, num_warps=1), dict(BLOCK_E=32, num_warps=2), dict(BLOCK_E=32, num_warps=4),
                      dict(BLOCK_E=64, num_warps=4))),
        "PyTorch, unfused (gather, scatter softmax, index_add_)": Baseline(_bsb_edges_kept, _unfused_attention),
        "FlexAttention (dense adjacency mask_mod)": Baseline(
            _from_baselines("flex_from_bsb"), _from_baselines("flex_attention_dense_mask"), compile=False,
            note=_from_baselines("flex_blocks_note")),
    })


# -- the registry --------------------------------------------------------------------------------

PUZZLES: tuple[Puzzle, ...] = (
    Puzzle(1, "add", "Vector add: programs, blocks and masks", "01_warmup", specs.add, ADD_CASES,
           Tolerance(1e-6, magnitude_scale(specs.add), "|x| + |y|"),
           bench=Bench(sizes=(dict(N0=1 << 26),), blocks=(dict(B0=1024), dict(B0=4096)))),
    Puzzle(2, "outer_add", "Outer add: 2-D blocks", "01_warmup", specs.outer_add, OUTER_ADD_CASES,
           Tolerance(1e-6, magnitude_scale(specs.outer_add), "|x[i]| + |y[j]|"),
           bench=Bench(sizes=(dict(N0=16384, N1=16384),),
                       blocks=(dict(B0=64, B1=64), dict(B0=128, B1=32), dict(B0=256, B1=16)))),
    Puzzle(3, "row_sum", "Row sum: a loop over a long row", "01_warmup", specs.row_sum, ROW_SUM_CASES,
           Tolerance(1e-5, magnitude_scale(specs.row_sum), "the row's sum of |x|"),
           hints=ROW_SUM_HINTS,
           bench=Bench(sizes=(dict(N0=32768, T=4096), dict(N0=4096, T=32768)),
                       blocks=(dict(B0=1, B1=1024), dict(B0=1, B1=4096), dict(B0=4, B1=1024)),
                       library={"torch.sum": lambda x: x.sum(dim=1)}), lesson_blocks=("B1",)),
    Puzzle(4, "softmax_three_loop", "Long softmax in three passes", "02_softmax_and_attention",
           specs.softmax, SOFTMAX_CASES, SOFTMAX_TOLERANCE, hints=SOFTMAX_HINTS,
           budgets=(Reads("x", 3, lesson="One pass for the max, one for the sum, one to write."),),
           bench=Bench(SOFTMAX_SIZES, SOFTMAX_BLOCKS, extra_reads={"x": 2}, library=SOFTMAX_LIBRARY),
           lesson_blocks=("B1",)),
    Puzzle(5, "softmax_online", "Online softmax: max and sum in one pass", "02_softmax_and_attention",
           specs.softmax, SOFTMAX_CASES, SOFTMAX_TOLERANCE, hints=SOFTMAX_HINTS,
           budgets=(Reads("x", 2, lesson="Carry the running max and rescale the running sum, so the max "
                                        "and the sum come from one pass over x."),),
           bench=Bench(SOFTMAX_SIZES, SOFTMAX_BLOCKS, extra_reads={"x": 1}, library=SOFTMAX_LIBRARY),
           lesson_blocks=("B1",)),
    Puzzle(6, "flash_attention", "Scalar FlashAttention: one pass over keys and values",
           "02_softmax_and_attention", specs.flash_attention, FLASH_CASES,
           Tolerance(4e-6, _attention_scale, "the float32 rounding bound of the softmax-weighted sum"),
           hints=FLASH_HINTS,
           budgets=(Reads("k", 1, per="program", block=("z", "B0"), lesson="Read each key once per program."),
                    Reads("v", 1, per="program", block=("z", "B0"),
                          lesson="Read each value once per program, in the same loop as the keys.")),
           bench=Bench(sizes=(dict(N0=16384, T=16384),),
                       blocks=(dict(B0=64, B1=256), dict(B0=128, B1=128), dict(B0=256, B1=64)),
                       library={"scaled_dot_product_attention": _sdpa}, exps=lambda d: d["N0"] * d["T"]),
           lesson_blocks=("B1",)),
    Puzzle(7, "scatter_add", "Scatter-add over COO edges, with atomics", "03_graph_attention", specs.scatter_add,
           SCATTER_CASES, Tolerance(1e-5, magnitude_scale(specs.scatter_add), "sum |v_scaled| / (sum score + 1e-6)"),
           hints=(_epsilon_hint(specs.scatter_add),), outputs=("out",), bench=GRAPH_BENCH(
               blocks=(dict(BLOCK_E=32), dict(BLOCK_E=64), dict(BLOCK_E=128)), library={"PyG scatter": _pyg_scatter},
               variants={"scatter_add_coo_scan": lambda d: d["E"] <= 512_000})),
    Puzzle(8, "csc_gather", "Gather over CSC: each node reads its own edges", "03_graph_attention", specs.csc_gather,
           GATHER_CASES, Tolerance(1e-5, magnitude_scale(specs.csc_gather), "sum |v_scaled| / (sum score + 1e-6)"),
           hints=(*GATHER_HINTS, _epsilon_hint(specs.csc_gather)), outputs=("out",),
           budgets=(Loads(("col_ptr", "edge_id"), "E + 3*N", lesson="Read each node's slot range from col_ptr and "
                                                                    "each slot's edge id once; never scan edges "
                                                                    "that are not the node's own."),
                    Reads("v_scaled", 1, lesson="Each edge's features are read once, by its destination."),
                    Reads("score", 1, lesson="Each edge's score is read once."),
                    NoAtomics(lesson="One program owns each node's sum: no atomics needed, and the result is "
                                     "deterministic.")),
           bench=GRAPH_BENCH(blocks=(dict(BLOCK_E=8), dict(BLOCK_E=16), dict(BLOCK_E=8, NODES_PER_PROGRAM=2)),
                             library={"PyG scatter": _pyg_gather},
                             baselines={"PyTorch index_add_ (COO kept)": Baseline(_dst_of_edges, _coo_scatter)})),
    Puzzle(9, "csr_aggregate", "Multi-head neighbour aggregation over CSR", "03_graph_attention", specs.csr_aggregate,
           AGGREGATE_CASES, Tolerance(1e-5, magnitude_scale(specs.csr_aggregate),
                                      "sum |edge_weight| |node_feat| over the node's slots"),
           hints=AGGREGATE_HINTS, outputs=("out",),
           budgets=(Reads("node_feat", 1, per="edge", lesson="Each slot gathers its neighbour's row once."),
                    Reads("edge_weight", 1, lesson="Each slot's weights are read once.")),
           bench=Bench(sizes=(Case("320 nodes, H=8, D=32", dict(H=8, D=32), graph=_reference_problem),),
                       blocks=(dict(BLOCK_E=8), dict(BLOCK_E=16), dict(BLOCK_E=16, NODES_PER_PROGRAM=2)),
                       cuda_graph=True,
                       baselines={"vectorised index_add_ (slots kept)": Baseline(_slots_kept, _vectorised_aggregate)})),
    Puzzle(10, "graph_attention", "Graph attention in one kernel (RTMScore)", "03_graph_attention",
           specs.graph_attention, ATTENTION_CASES,
           (Tolerance(4e-6, _attention_h_scale, "the float32 rounding bound of the weighted sum"),
            Tolerance(1e-5, _attention_e_out_scale, "min(|k q| / sqrt(D), 5) |e|")),
           hints=(*ATTENTION_HINTS, _epsilon_hint(specs.graph_attention)), outputs=("h", "e_out"),
           budgets=(Reads("e", 1, lesson="Each edge's features are read once."),
                    Reads("k", 1, per="edge", lesson="Each edge gathers its source's key once."),
                    Reads("v", 1, per="edge", lesson="Each edge gathers its source's value once, in the same pass."),
                    Reads("q", 1, lesson="Each node's query is read once, before its edges."),
                    Writes("e_out", 1, lesson="Each edge's output is written once.")),
           bench=GRAPH_BENCH(blocks=(dict(BLOCK_E=8), dict(BLOCK_E=16), dict(BLOCK_E=8, NODES_PER_PROGRAM=2)),
                             baselines={"PyTorch layer (COO kept)": Baseline(_edge_ends_kept, _coo_attention)})),
    Puzzle(11, "matmul", "Matrix multiply on tensor cores, with tensor descriptors", "04_tensor_cores",
           specs.matmul, MATMUL_CASES,
           Tolerance(2e-5, magnitude_scale(specs.matmul), "sum_k |a[i, k]| |b[k, j]|: float32 accumulation"),
           hints=MATMUL_HINTS,
           budgets=(Dots("M*N*K", lesson="Multiply the blocks with tl.dot, so the tensor cores do the work."),
                    Writes("c", 1, lesson="Store each block of c once, after the loop over K.")),
           outputs=("c",), bench=MATMUL_BENCH),
    Puzzle(12, "attention", "Tiled FlashAttention on tensor cores", "04_tensor_cores", specs.attention,
           ATTENTION_TILE_CASES, Tolerance(1e-2, magnitude_scale(specs.attention, "v"), "sum_j p_ij |v_j|"),
           hints=ATTENTION_TILE_HINTS, outputs=("o",),
           budgets=(Reads("k", 1, per="program", block=("o", "BQ*D"), lesson="Each query block reads every key once."),
                    Reads("v", 1, per="program", block=("o", "BQ*D"),
                          lesson="Each query block reads every value once, in the key loop."),
                    Dots("2*N*T*D", lesson="Both products, q k^T and p v, are tl.dot calls."),
                    Writes("o", 1, lesson="Store each row of o once, after the key loop.")),
           bench=ATTENTION_BENCH, lesson_blocks=("BK",)),
    Puzzle(13, "sparse_attention", "Sparse attention on tensor cores (Fused3S, BSB format)", "04_tensor_cores",
           specs.sparse_attention, SPARSE_ATTENTION_CASES,
           Tolerance(1e-2, magnitude_scale(specs.sparse_attention, "v"), "sum over neighbours of p_ij |v_j|"),
           hints=SPARSE_ATTENTION_HINTS, outputs=("o",),
           budgets=(Reads("q", 1, lesson="Each window loads its 16 rows of q once, before the TCB loop."),
                    Loads(("k",), "16*D*num_tcb", lesson="Each TCB gathers its 16 key rows once."),
                    Loads(("v",), "16*D*num_tcb", lesson="Each TCB gathers its 16 value rows once."),
                    Dots("2*num_tcb*16*16*D", lesson="Both products of every TCB, q k^T and p v, are tl.dot calls: "
                                             "that is what puts them on tensor cores."),
                    Writes("o", 1, lesson="Store each row of o once, after the TCB loop.")),
           bench=SPARSE_ATTENTION_BENCH),
)

BY_NUMBER = {p.number: p for p in PUZZLES}
BY_SLUG = {p.slug: p for p in PUZZLES}


def find(key: str | int | Puzzle) -> Puzzle:
    """A puzzle by number ('4', 4) or slug ('softmax_three_loop'); KeyError with the choices if absent."""
    if isinstance(key, Puzzle):
        return key
    text = str(key).strip()
    if text.isdigit() and int(text) in BY_NUMBER:
        return BY_NUMBER[int(text)]
    if text in BY_SLUG:
        return BY_SLUG[text]
    choices = ", ".join(f"{p.number} ({p.slug})" for p in PUZZLES)
    raise KeyError(f"no puzzle {text!r}; choose one of: {choices}")
