"""Emulated mistakes: what a kernel with a common mistake computes, for the hints to compare a wrong output with.

Each emulator recomputes a puzzle in float64 (float32 where only float32 shows the mistake) with a switch per
mistake; with every switch at its default it gives the right answer. ``matches`` and ``near`` say how close a
wrong output must come to count as that mistake. The chapter modules (``grader/course/chapters/``) turn these into
hints; the benchmark also times the right settings of ``coo_scatter`` and ``coo_attention`` as the eager
PyTorch a practitioner would write (``grader/bench/settings.py``).

- ``online_softmax``: the one online softmax, for puzzles 5, 6, 12 and 13, over steps of (scores, v, allowed).
- ``one_pass_softmax`` (5), ``scalar_attention`` (6), ``tiled_attention`` (12), ``window_attention`` (13):
  its loops, as each puzzle runs it; ``softmax_max_in_log2_units`` (4, 5), an exp2 whose max is in other units.
- ``coo_scatter`` (7, 8) and ``coo_attention`` (10) over COO edges, ``edge_ends`` decoding them from CSC.
- ``softmax_backward`` (14), ``cross_entropy_backward`` (15), ``attention_backward`` (16), ``flash_backward`` (17)
  and ``bsb_backward`` (18): the backward passes in closed form, from the saved tensors as a kernel is given them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import NamedTuple

import torch

from grader.course import graphs, specs

# -- how close a wrong output must be to a mistake's ------------------------------------------------------


def matches(yours: torch.Tensor, candidate: torch.Tensor) -> bool:
    """Close enough to a known wrong answer to name the mistake (NaN where it has NaN counts as a match)."""
    scale = float(torch.nan_to_num(candidate, nan=0.0, posinf=0.0, neginf=0.0).abs().max()) if candidate.numel() else 0
    return bool(torch.allclose(yours, candidate, rtol=1e-4, atol=1e-7 * scale, equal_nan=True))


def matches_any(yours: torch.Tensor, candidates) -> bool:
    """Whether yours matches one of the candidates of its shape (None: a mistake that cannot happen here)."""
    return any(c is not None and c.shape == yours.shape and matches(yours, c) for c in candidates)


def near(yours: torch.Tensor, candidate: torch.Tensor, scale, rtol: float = 1e-2) -> bool:
    """Within rtol * scale of a known wrong answer, element by element. Chapter 4 rounds the weights p to
    16 bits before the second tl.dot, so matches' 1e-4 would never recognise a mistake there."""
    close = ((yours - candidate).abs() <= rtol * scale) | (yours == candidate)
    return bool((close | (yours.isnan() & candidate.isnan())).all())


def padding(length: int, block: int) -> int:
    """Lanes past the end of the last block."""
    return -length % block


# -- the online softmax (puzzles 5, 6, 12, 13) --------------------------------------------------------------

class OnlineState(NamedTuple):
    """Where the online softmax ends: the running max m, the running sum l of exp(s - m), and acc, the running
    sum of exp(s - m) v (None when the steps carry no v)."""
    m: torch.Tensor
    l: torch.Tensor  # noqa: E741 (the math's name)
    acc: torch.Tensor | None


Step = tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]  # (scores, v, allowed)


def online_softmax(steps: Iterable[Step], rescale: str = "both", forget_old_max: bool = False,
                   zero_is_no_edge: bool = False, no_edge: float = -torch.inf, stand_in: bool = True,
                   max_start: float | None = None, zero_weighs_nothing: bool = False,
                   old_max_terms: bool = False, per_step_sum: str = "") -> OnlineState:
    """The online softmax, one step per block of keys, in the steps' dtype. A step is (scores [rows, keys],
    v [keys, features] or None, allowed [rows, keys] or None: which keys each row attends to).

    The options reproduce mistakes: `rescale` names the running sums rescaled when the max grows (both, l, acc
    or none; "flipped" rescales both by exp(m' - m) instead of exp(m - m')); forget_old_max takes each block's max
    alone as the new max; zero_is_no_edge drops every score of exactly 0; no_edge is the score of a key not
    attended to and, unless max_start says otherwise, the start of the max (-1e30: a finite "minus infinity"; 0:
    non-edges scored 0, in the max); zero_weighs_nothing gives every score of exactly 0 (non-edges so scored too)
    a weight of 0 after the max; without stand_in, a max of -inf is subtracted as it is; old_max_terms takes each
    block's terms against the max from before the block (-inf at first): exp(x - m), not exp(x - m_new);
    per_step_sum divides each step's weights by that step's own sum (normalised per tile, not once at the end), and
    is "divided" (acc / l still divides at the end, l summing those normalised weights) or "undivided" (the output
    is acc itself: the state's l is 1)."""
    running_max = running_sum = acc = None
    for scores, v, allowed in steps:
        if running_max is None:
            running_max = torch.full(scores.shape[:1], no_edge if max_start is None else max_start,
                                     dtype=scores.dtype)
            running_sum = torch.zeros_like(running_max)
            acc = None if v is None else scores.new_zeros(scores.shape[0], v.shape[1])
        if allowed is not None:
            scores = torch.where(allowed & (scores != 0) if zero_is_no_edge else allowed, scores, no_edge)
        block_max = scores.amax(dim=1)
        new_max = block_max if forget_old_max else torch.maximum(running_max, block_max)
        base = torch.where(new_max == -torch.inf, 0, new_max) if stand_in else new_max  # no key allowed so far
        alpha = torch.exp(base - running_max) if rescale == "flipped" else torch.exp(running_max - base)
        weights = torch.exp(scores - (running_max if old_max_terms else base)[:, None])
        if zero_weighs_nothing:
            weights = torch.where(scores == 0, 0, weights)
        if per_step_sum:
            weights = weights / weights.sum(dim=1, keepdim=True)
        running_sum = (running_sum * alpha if rescale in ("both", "l", "flipped") else running_sum) \
            + weights.sum(dim=1)
        if v is not None:
            acc = (acc * alpha[:, None] if rescale in ("both", "acc", "flipped") else acc) + weights @ v
        running_max = new_max
    if per_step_sum == "undivided" and running_sum is not None:
        running_sum = torch.ones_like(running_sum)
    return OnlineState(running_max, running_sum, acc)


def _weighted_mean(q: torch.Tensor, state: OnlineState, features: int) -> torch.Tensor:
    """acc / l, with 0 for a row that attended to nothing (and for no step at all)."""
    if state.m is None:
        return q.new_zeros(q.shape[0], features)
    return state.acc / torch.where(state.l > 0, state.l, 1)[:, None]


def one_pass_softmax(x: torch.Tensor, block: int, **mistake) -> torch.Tensor:
    """Puzzle 5 in x's dtype: the max and the sum from one pass over blocks of B1 columns, then exp(x - m) / l
    with the final m, as its second pass computes it (so only l carries a rescale mistake)."""
    state = online_softmax(((x[:, start:start + block], None, None) for start in range(0, x.shape[1], block)),
                           **mistake)
    return torch.exp(x - state.m[:, None]) / state.l[:, None]


def tiled_attention(inputs, blocks, **mistakes) -> torch.Tensor:
    """Puzzle 12's loop: all queries against BK keys at a time."""
    q, k, v, block = inputs["q"], inputs["k"], inputs["v"], blocks["BK"]
    everything = torch.ones(q.shape[0], block, dtype=torch.bool)
    steps = ((q @ k[s:s + block].T / q.shape[-1] ** 0.5, v[s:s + block], everything[:, :k.shape[0] - s])
             for s in range(0, k.shape[0], block))
    return _weighted_mean(q, online_softmax(steps, **mistakes), v.shape[1])


def scalar_attention(inputs, blocks, **mistakes) -> torch.Tensor:
    """Puzzle 6's loop: its scalars are vectors of D = 1 feature (so no scale), B1 keys at a time."""
    return tiled_attention({name: inputs[name][:, None] for name in "qkv"}, {"BK": blocks["B1"]}, **mistakes)[:, 0]


_SLOT_BITS = torch.arange(graphs.TCB_COLS)
# A TCB's [16 rows, 16 slots] edges from its 16 row masks: bit c of row r's mask is slot c. The other two
# readings are mistakes the hints recognise.
_BITMAPS = {  # each on the masks' device (the bench judges on the GPU)
    "rows": lambda masks: (masks[:, None] >> _SLOT_BITS.to(masks.device)) & 1 == 1,
    "transposed": lambda masks: (masks[None, :] >> _SLOT_BITS.to(masks.device)[:, None]) & 1 == 1,
    "reversed": lambda masks: (masks[:, None] >> (graphs.TCB_COLS - 1 - _SLOT_BITS.to(masks.device))) & 1 == 1,
}


def _tcb_step(inputs, q: torch.Tensor, tcb: int, bitmap: str, gather: str) -> Step:
    """One TCB as a step of the online softmax for the window's rows q: their scores against its k rows, its v
    rows, and the edges of those rows. bitmap and gather name how they are read: "rows" and "tcb_col" are right;
    gather "slot" reads k and v by slot, "k slot" and "v slot" one of them."""
    cols = inputs["tcb_col"][tcb].long()
    slots = _SLOT_BITS.to(cols.device)
    k_rows = slots if gather in ("slot", "k slot") else cols
    v_rows = slots if gather in ("slot", "v slot") else cols
    allowed = _BITMAPS[bitmap](inputs["tcb_mask"][tcb].long())[:q.shape[0]]
    return q @ inputs["k"][k_rows].T / q.shape[-1] ** 0.5, inputs["v"][v_rows], allowed


def window_attention(inputs, blocks, bitmap: str = "rows", gather: str = "tcb_col", **mistakes) -> torch.Tensor:
    """Puzzle 13's loop: each window's 16 rows against its TCBs, one at a time (there are no blocks to choose).
    Besides online_softmax's mistakes: the bitmap read "transposed" or "reversed", and k and v gathered by
    "slot" (node c for slot c) instead of by tcb_col."""
    q, window_ptr = inputs["q"], inputs["window_ptr"].tolist()
    out = torch.zeros_like(q)
    for w in range(len(window_ptr) - 1):
        rows = slice(graphs.WINDOW * w, graphs.WINDOW * (w + 1))
        steps = (_tcb_step(inputs, q[rows], t, bitmap, gather) for t in range(*window_ptr[w:w + 2]))
        out[rows] = _weighted_mean(q[rows], online_softmax(steps, **mistakes), q.shape[1])
    return out


LOG2E = 1.4426950408889634  # exp(x) = exp2(x * log2(e))


def softmax_max_in_log2_units(x: torch.Tensor, block: int = 0) -> torch.Tensor:
    """Puzzles 4 and 5 in float32, as a kernel computes them with tl.exp2(x * LOG2E - m): the max m, in x's own
    units, subtracted after x was put in log2 units (exp2((x - m) * LOG2E) is right). At the max the exponent is
    0.44 m, which overflows once m passes 289. Without `block`, puzzle 4's passes; with it, puzzle 5's online sum
    over blocks of that many columns, rescaled by exp2((m - m') * LOG2E) as written."""
    x = x.to(torch.float32)
    if not block:
        weights = torch.exp2(x * LOG2E - x.amax(dim=1, keepdim=True))
        return (weights / weights.sum(dim=1, keepdim=True)).to(torch.float64)
    row_max = torch.full(x.shape[:1], -torch.inf)
    total = torch.zeros(x.shape[:1])
    for start in range(0, x.shape[1], block):
        part = x[:, start:start + block]
        new_max = torch.maximum(row_max, part.amax(dim=1))
        total = total * torch.exp2((row_max - new_max) * LOG2E) + torch.exp2(part * LOG2E - new_max[:, None]).sum(1)
        row_max = new_max
    return (torch.exp2(x * LOG2E - row_max[:, None]) / total[:, None]).to(torch.float64)


def softmax_counting_padding(x: torch.Tensor, block: int) -> torch.Tensor:
    """The softmax a kernel computes when padded lanes load 0 and count in the max and the sum (puzzles 4, 5)."""
    padded = torch.nn.functional.pad(x, (0, padding(x.shape[1], block)))
    return torch.softmax(padded, dim=1)[:, : x.shape[1]]


def keys_padded_with_zeros(spec: Callable, inputs, block: int) -> torch.Tensor:
    """Attention as computed when the keys past T of the last block, loaded as 0 (their v too), score 0
    instead of -inf. Keys are rows of k and v (scalars in puzzle 6, D-vectors in puzzle 12)."""
    k = inputs["k"]
    widths = (0, 0) * (k.dim() - 1) + (0, padding(k.shape[0], block))
    return spec(inputs["q"], *(torch.nn.functional.pad(inputs[name], widths) for name in "kv"))


# -- graphs (puzzles 7, 8, 10) -------------------------------------------------------------------------------

def edge_ends(col_ptr: torch.Tensor, edge_id: torch.Tensor,
              row_idx: torch.Tensor | None = None) -> tuple[torch.Tensor | None, torch.Tensor]:
    """(src, dst) of every edge, in edge-id order, from the CSC arrays: slot s holds edge edge_id[s], whose
    destination is the slot's node and whose source is row_idx[s] (src is None without row_idx)."""
    edge = edge_id.long()
    dst = torch.empty_like(edge)
    dst[edge] = graphs.slot_nodes(col_ptr)
    if row_idx is None:
        return None, dst
    src = torch.empty_like(edge)
    src[edge] = row_idx.long()
    return src, dst


def coo_scatter(v_scaled, score, dst, num_nodes, eps: float = specs.EPS) -> torch.Tensor:
    """Puzzle 7's spec over COO edges, its + 1e-6 the parameter eps (0: the mistake of leaving it out)."""
    numerator = v_scaled.new_zeros(num_nodes, *v_scaled.shape[1:]).index_add_(0, dst.long(), v_scaled)
    denominator = score.new_zeros(num_nodes, score.shape[1]).index_add_(0, dst.long(), score)
    return numerator / (denominator[..., None] + eps)


def coo_attention(q, k, v, e, src, dst, clip_features=True, clip_logits=True, extra_denominator=None,
                  eps: float = specs.EPS) -> tuple[torch.Tensor, torch.Tensor]:
    """(h, e_out): the RTMScore layer in eager PyTorch over a kept COO, as the anchor measurements ran it. The
    options reproduce common mistakes: a clip left out, extra_denominator added to each node's sum of weights,
    eps (the + 1e-6) other than the spec's."""
    product = k[src] * q[dst] / q.shape[-1] ** 0.5
    e_out = (torch.clamp(product, -5, 5) if clip_features else product) * e
    logits = e_out.sum(-1)
    weight = torch.exp(torch.clamp(logits, -5, 5) if clip_logits else logits)
    numerator = torch.zeros_like(q).index_add_(0, dst, weight[..., None] * v[src])
    denominator = torch.zeros_like(q[..., 0]).index_add_(0, dst, weight)
    if extra_denominator is not None:
        denominator += extra_denominator
    return numerator / (denominator[..., None] + eps), e_out


def graph_attention(inputs, clip_features=True, e_out_in_slot_order=False, padding_block=0, clip_logits=True,
                    eps: float = specs.EPS) -> tuple[torch.Tensor, torch.Tensor]:
    """Puzzle 10's (h, e_out) as a common mistake computes them: a clip left out, e_out stored in slot order,
    eps left out, or padded lanes of blocks of padding_block slots each adding exp(0) = 1 to their node's
    denominator."""
    src, dst = edge_ends(inputs["col_ptr"], inputs["edge_id"], inputs["row_idx"])
    padded = None
    if padding_block:
        degree = (inputs["col_ptr"][1:] - inputs["col_ptr"][:-1]).to(inputs["q"].dtype)
        padded = (-degree % padding_block)[:, None]
    h, e_out = coo_attention(inputs["q"], inputs["k"], inputs["v"], inputs["e"], src, dst, clip_features,
                             clip_logits, padded, eps)
    return h, e_out[inputs["edge_id"].long()] if e_out_in_slot_order else e_out


# -- chapter 5: backward passes (puzzles 14-16) -------------------------------------------------------------------

def softmax_backward(y: torch.Tensor, dy: torch.Tensor, block: int = 0, delta: str = "row",
                     y_on_delta: bool = True, rows_per_delta: int = 1, y_factor: bool = True,
                     padded_lanes: float = 0.0) -> torch.Tensor:
    """Puzzle 14's dx = y (dy - Δ), with Δ taken as `delta` says: over the "row" (right); "none" (no Δ at all);
    of "dy" alone (sum dy, without y); over the "first block" of `block` columns only; "running" (one loop that
    writes each block's dx with the sum of the blocks so far). Without y_on_delta, dx = y dy - Δ. With rows_per_delta,
    one Δ shared by each group of that many rows (a program's B0 rows: tl.sum without axis=1). Without y_factor,
    dx = dy - Δ. With padded_lanes, each of the row's lanes past its end (to a whole block) adds that much to Δ
    (masked loads of y and dy with other=1.0)."""
    product = y * dy
    if delta == "row":
        total = product.sum(dim=1, keepdim=True)
    elif delta == "none":
        total = torch.zeros_like(y[:, :1])
    elif delta == "dy":
        total = dy.sum(dim=1, keepdim=True)
    elif delta == "first block":
        total = product[:, :block].sum(dim=1, keepdim=True)
    elif delta == "running":
        ends = torch.clamp((torch.arange(y.shape[1]) // block + 1) * block, max=y.shape[1])  # each column's block end
        total = product.cumsum(dim=1)[:, ends - 1]
    else:
        raise ValueError(f"no such Δ: {delta!r}")
    if padded_lanes:
        total = total + padded_lanes * ((-y.shape[1]) % block)
    if rows_per_delta > 1:
        group = torch.arange(y.shape[0]) // rows_per_delta
        groups = torch.zeros(int(group.max()) + 1 if y.shape[0] else 0, 1, dtype=y.dtype)
        total = groups.index_add_(0, group, total)[group]
    if not y_factor:
        return dy - total
    return y * dy - (y * total if y_on_delta else total)


def cross_entropy_backward(inputs, mean: str = "counted", with_dloss: bool = True, onehot: bool = True,
                           zero_ignored: bool = True, onehot_block: int = 0,
                           lse_units: str = "natural") -> torch.Tensor:
    """Puzzle 15's dx, with a common mistake: the mean over "counted" rows (right), over "all" rows, or "none"
    (a sum); dloss left out; the target's 1 not subtracted; rows with target IGNORE_INDEX not zeroed; with
    onehot_block, the 1 subtracted in every block of that many columns at the block's own column `target`
    (tl.arange(0, BLOCK_V) == target: a local column taken for the global one); with lse_units "log2", p as
    exp2(x log2(e) - lse), the natural-log lse taken for a base-2 one."""
    x, target = inputs["x"], inputs["target"]
    counted = target != specs.IGNORE_INDEX
    p = torch.softmax(x, dim=1) if lse_units == "natural" else torch.exp(x - inputs["lse"][:, None] * math.log(2))
    if onehot and onehot_block:
        local = torch.arange(x.shape[1]) % onehot_block
        p = p - ((local[None, :] == target[:, None]) & counted[:, None]).to(x.dtype)
    elif onehot:
        p = p - torch.nn.functional.one_hot(torch.where(counted, target, 0), x.shape[1]).to(x.dtype) * counted[:, None]
    rows = {"counted": max(int(counted.sum()), 1), "all": max(x.shape[0], 1), "none": 1}[mean]
    dx = p * (inputs["dloss"] if with_dloss else 1.0) / rows
    return torch.where(counted[:, None], dx, 0.0) if zero_ignored else dx


class AttentionTerms(NamedTuple):
    """Puzzle 16's per-edge quantities, in edge-id order ([E, H, D] or [E, H]), and each edge's two ends."""
    src: torch.Tensor
    dst: torch.Tensor
    product: torch.Tensor  # a = k[src] q[dst] / sqrt(D)
    clipped: torch.Tensor  # clip(a, -5, 5)
    logit: torch.Tensor  # z = sum_d clipped * e
    p: torch.Tensor  # exp(clip(z, -5, 5)) / den[dst]
    softmax_grad: torch.Tensor  # p (dh[dst] . v[src] - δ[dst]): dlogit before the logit clip's mask


def attention_terms(inputs) -> AttentionTerms:
    """The quantities puzzle 16's kernels compute per edge, from the inputs (den and h as the grader saved them)."""
    src, dst = edge_ends(inputs["col_ptr"], inputs["edge_id"], inputs["row_idx"])
    q, k, v, e, dh = (inputs[name] for name in ("q", "k", "v", "e", "dh"))
    product = k[src] * q[dst] / q.shape[-1] ** 0.5
    clipped = torch.clamp(product, -5, 5)
    logit = (clipped * e).sum(-1)
    p = torch.exp(torch.clamp(logit, -5, 5)) / inputs["den"][dst]
    delta = (dh * inputs["h"]).sum(-1)  # [N, H]
    return AttentionTerms(src, dst, product, clipped, logit, p, p * ((dh[dst] * v[src]).sum(-1) - delta[dst]))


def attention_backward(inputs, bounds_pass: bool = True, logit_mask: bool = True, feature_mask: bool = True,
                       delta: bool = True, de_clipped: bool = True, with_de_out: bool = True,
                       scaled: bool = True, dk_from: str = "q", scratch_by_slot: bool = False
                       ) -> tuple[torch.Tensor, ...]:
    """Puzzle 16's (dq, dk, dv, de) in closed form, with a common mistake: the clips stop the gradient at exactly
    -5 and 5 (not bounds_pass); the logit or the feature clip's mask left out; δ left out of dlogit; de from the
    unclipped product; de_out left out of g; dq and dk without their 1 / sqrt(D); dk_from "k" (or "scaled k", a k
    that carries its 1 / sqrt(D) already): dk from the sending node's own k instead of the destination's q;
    scratch_by_slot: the first pass's p and dlogit stored at their CSC slot, which the second pass reads by edge id
    (edge e gets the values of the edge in slot e), so dk and dv are wrong and dq right."""
    t = attention_terms(inputs)
    q, k, dh = inputs["q"], inputs["k"], inputs["dh"]
    inside = (lambda x: x.abs() <= 5) if bounds_pass else (lambda x: x.abs() < 5)
    softmax_grad = t.softmax_grad if delta else t.p * (dh[t.dst] * inputs["v"][t.src]).sum(-1)
    dlogit = torch.where(inside(t.logit), softmax_grad, 0.0) if logit_mask else softmax_grad
    grad = (inputs["de_out"] if with_de_out else 0.0) + dlogit[..., None]
    de = grad * (t.clipped if de_clipped else t.product)
    dproduct = torch.where(inside(t.product), grad * inputs["e"], 0.0) if feature_mask else grad * inputs["e"]
    scale = q.shape[-1] ** -0.5 if scaled else 1.0
    dq = torch.zeros_like(q).index_add_(0, t.dst, dproduct * k[t.src]) * scale
    own = {"q": q[t.dst], "k": k[t.src], "scaled k": k[t.src] * scale}[dk_from]
    p_out = t.p
    if scratch_by_slot:
        moved = inputs["edge_id"].long()  # edge e reads slot e, which holds edge edge_id[e]'s values
        p_out, grad = t.p[moved], (inputs["de_out"] if with_de_out else 0.0) + dlogit[moved][..., None]
        dproduct = torch.where(inside(t.product), grad * inputs["e"], 0.0) if feature_mask else grad * inputs["e"]
    dk = torch.zeros_like(k).index_add_(0, t.src, dproduct * own) * scale
    dv = torch.zeros_like(q).index_add_(0, t.src, p_out[..., None] * dh[t.dst])
    return dq, dk, dv, de


# -- chapter 5, part 2: attention backward (puzzles 17 and 18) ----------------------------------------------

class FlashTerms(NamedTuple):
    """What puzzle 17's kernels compute per (query, key) pair, in float64 from the inputs as the grader saved them:
    p = exp(s - lse) where the query sees the key (else 0), dp = dO V^T, and Δ = rowsum(dO * o)."""
    seen: torch.Tensor  # [N, T] booleans
    p: torch.Tensor
    dp: torch.Tensor
    delta: torch.Tensor  # [N]


def flash_terms(inputs, causal_mask: str = "bottom right", lse_units: str = "natural") -> FlashTerms:
    """Puzzle 17's per-pair terms; causal_mask "bottom right" (right: query i sees key j when j <= i + T - N),
    "top left" (j <= i), "strict" (j < i + T - N) or "none" (the flag ignored), used only when the case is causal;
    lse_units "natural" (right) or "log2" (lse taken for log2 units: exp2(s log2(e) - lse), which is
    exp(s - lse ln 2))."""
    q, k, v, o, lse, do = (inputs[name] for name in ("q", "k", "v", "o", "lse", "do"))
    n, t, device = q.shape[0], k.shape[0], q.device  # the bench judges on the GPU: masks go where q is
    if not inputs["causal"] or causal_mask == "none":
        seen = torch.ones(n, t, dtype=torch.bool, device=device)
    elif causal_mask == "top left":
        seen = torch.arange(t, device=device)[None, :] <= torch.arange(n, device=device)[:, None]
    elif causal_mask == "strict":  # the diagonal left out: j < i + T - N
        seen = torch.arange(t, device=device)[None, :] < torch.arange(n, device=device)[:, None] + (t - n)
    else:
        seen = specs.causal_visible(n, t, device)
    shift = lse if lse_units == "natural" else lse * math.log(2)
    exponent = torch.where(seen, q @ k.T * inputs["scale"] - shift[:, None], -torch.inf)
    return FlashTerms(seen, torch.exp(exponent), do @ v.T, (do * o).sum(dim=1))


def flash_backward(inputs, delta: bool = True, scaled: int = 1, causal_mask: str = "bottom right",
                   lse_units: str = "natural", queries_per_delta: int = 1) -> tuple[torch.Tensor, torch.Tensor,
                                                                                   torch.Tensor]:
    """Puzzle 17's (dq, dk, dv) in closed form, with a common mistake: Δ left out of ds; dq and dk times scale**scaled
    (0: the scale left out; 2: applied twice, say to q and again at the end); the causal mask aligned top left or
    ignored; lse taken for log2 units (see flash_terms); with queries_per_delta, one Δ shared by each group of that
    many queries, their Δs added together (a delta kernel's tl.sum over its whole [BQ, D] block)."""
    t = flash_terms(inputs, causal_mask, lse_units)
    shared = t.delta
    if queries_per_delta > 1:
        group = torch.arange(shared.shape[0], device=shared.device) // queries_per_delta
        shared = torch.zeros_like(shared).index_add_(0, group, shared)[group]
    ds = t.p * (t.dp - (shared[:, None] if delta else 0.0))
    scale = inputs["scale"] ** scaled
    return ds @ inputs["k"] * scale, ds.T @ inputs["q"] * scale, t.p.T @ inputs["do"]


class PairTerms(NamedTuple):
    """What puzzle 18's kernels compute per (query, key) pair of a BSB, in float64 from the inputs as saved."""
    rows: torch.Tensor  # the query of each pair
    cols: torch.Tensor  # the key of each pair
    p: torch.Tensor  # exp(s - lse[row])
    dp: torch.Tensor  # dO[row] . v[col]
    delta: torch.Tensor  # [N]: rowsum(dO * o)


def _tcb_slots(window_ptr, tcb_col, num_rows: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Every (row, slot column) of every TCB, bitmap or not, padding slots included (rows past num_rows left out):
    what a kernel that ignores the bitmap sums over."""
    window = graphs.slot_nodes(window_ptr)  # the window of each TCB
    tcb, row, slot = torch.meshgrid(torch.arange(tcb_col.shape[0]), torch.arange(graphs.WINDOW),
                                    torch.arange(graphs.TCB_COLS), indexing="ij")
    rows = (window[tcb] * graphs.WINDOW + row).reshape(-1)
    cols = tcb_col.long()[tcb, slot].reshape(-1)
    return rows[rows < num_rows], cols[rows < num_rows]


def pair_terms(inputs, pairs: str = "bitmap", lse_units: str = "natural") -> PairTerms:
    """Puzzle 18's per-pair terms over the forward BSB's pairs: "bitmap" (right), or "every slot" of the forward
    BSB's TCBs, or "every key slot" of the transposed BSB's TCBs (the bitmap ignored in one of the two kernels),
    or "key bitmap transposed" (the transposed BSB's masks read as one per slot, not one per key);
    lse_units as in flash_terms."""
    q, k, v, o, lse, do = (inputs[name] for name in ("q", "k", "v", "o", "lse", "do"))
    if pairs == "bitmap":
        rows, cols = graphs.bsb_edges(inputs["window_ptr"], inputs["tcb_col"], inputs["tcb_mask"])
    elif pairs == "every slot":
        rows, cols = _tcb_slots(inputs["window_ptr"], inputs["tcb_col"], q.shape[0])
    elif pairs == "key bitmap transposed":  # key r's mask read as slot c's: bit r of mask c
        bits = (inputs["key_tcb_mask"].long()[:, None, :] >> torch.arange(graphs.TCB_COLS)[None, :, None]) & 1
        transposed = (bits << torch.arange(graphs.TCB_COLS)).sum(dim=2)  # [tcb, key r]: bit c is slot c
        cols, rows = graphs.bsb_edges(inputs["key_window_ptr"], inputs["key_tcb_query"], transposed)
        rows, cols = rows[cols < q.shape[0]], cols[cols < q.shape[0]]
    else:
        cols, rows = _tcb_slots(inputs["key_window_ptr"], inputs["key_tcb_query"], q.shape[0])
    return _terms_of_pairs(inputs, rows, cols, lse_units)


def _terms_of_pairs(inputs, rows, cols, lse_units: str = "natural") -> PairTerms:
    """PairTerms over these (query, key) pairs."""
    q, k, v, o, lse, do = (inputs[name] for name in ("q", "k", "v", "o", "lse", "do"))
    shift = lse if lse_units == "natural" else lse * math.log(2)
    p = torch.exp((q[rows] * k[cols]).sum(-1) / q.shape[-1] ** 0.5 - shift[rows])
    return PairTerms(rows, cols, p, (do[rows] * v[cols]).sum(-1), (do * o).sum(dim=1))


def bsb_backward(inputs, delta: bool = True, scaled: int = 1, pairs: str = "bitmap",
                 lse_units: str = "natural", key_side: str = "") -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Puzzle 18's (dq, dk, dv) in closed form, with a common mistake: Δ left out of ds; dq and dk times
    (1 / sqrt(D))**scaled; the bitmap ignored (pair_terms' pairs); lse taken for log2 units; in the dk/dv kernel
    alone, key_side "lse by key" or "Δ by key" (the key's own lse or Δ gathered instead of the query's)."""
    t = pair_terms(inputs, pairs, lse_units)
    q, k, do = inputs["q"], inputs["k"], inputs["do"]
    ds = t.p * (t.dp - (t.delta[t.rows] if delta else 0.0))
    p_key, ds_key = t.p, ds
    if key_side == "lse by key":
        p_key = t.p * torch.exp(inputs["lse"][t.rows] - inputs["lse"][t.cols])
        ds_key = p_key * (t.dp - t.delta[t.rows])
    elif key_side == "Δ by key":
        ds_key = t.p * (t.dp - t.delta[t.cols])
    scale = q.shape[-1] ** (-0.5 * scaled)
    dq = torch.zeros_like(q).index_add_(0, t.rows, ds[:, None] * k[t.cols]) * scale
    dk = torch.zeros_like(k).index_add_(0, t.cols, ds_key[:, None] * q[t.rows]) * scale
    dv = torch.zeros_like(q).index_add_(0, t.cols, p_key[:, None] * do[t.rows])
    return dq, dk, dv
