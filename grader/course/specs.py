"""The specs: what each puzzle computes, as plain PyTorch with jaxtyped shapes.

The grader evaluates these on float64 copies of the inputs to get the reference, and reads
the annotations to build inputs of the right shape and dtype. Puzzle files show a copy of
their spec; the grader only ever uses this one.

Chapter 5's specs are backward passes: each is float64 autograd (``torch.autograd.grad``) of a
forward spec, so the reference is the forward's true gradient, not a formula that could share a
learner's mistake. A backward's launcher also takes what the forward saved (its output, a
log-sum-exp, a denominator); ``saves`` marks those arguments, and the grader computes them itself
from the case's other inputs (``grader.course.cases.make_inputs``).
"""

from collections.abc import Callable

import torch
from jaxtyping import Float16, Float32, Int32, Int64
from torch import Tensor

from grader.course.graphs import bsb_edges, slot_nodes


def add(x: Float32[Tensor, "N0"], y: Float32[Tensor, "N0"]) -> Float32[Tensor, "N0"]:
    return x + y


def outer_add(x: Float32[Tensor, "N0"], y: Float32[Tensor, "N1"]) -> Float32[Tensor, "N1 N0"]:
    return x[None, :] + y[:, None]


def row_sum(x: Float32[Tensor, "N0 T"]) -> Float32[Tensor, "N0"]:
    return x.sum(dim=1)


def softmax(x: Float32[Tensor, "N0 T"]) -> Float32[Tensor, "N0 T"]:
    x_max = x.max(dim=1, keepdim=True).values
    x_exp = torch.exp(x - x_max)
    return x_exp / x_exp.sum(dim=1, keepdim=True)


def flash_attention(
    q: Float32[Tensor, "N0"], k: Float32[Tensor, "T"], v: Float32[Tensor, "T"]
) -> Float32[Tensor, "N0"]:
    scores = q[:, None] * k[None, :]
    weights = torch.softmax(scores, dim=1)
    return weights @ v


# -- chapter 3: graph attention. Edges run src -> dst; duplicate edges count twice. --------------------

EPS = 1e-6  # keeps a node with no incoming edge at 0 / (0 + EPS) = 0


def scatter_add(
    v_scaled: Float32[Tensor, "E H D"], score: Float32[Tensor, "E H"], dst: Int32[Tensor, "E"], num_nodes: int
) -> Float32[Tensor, "N H D"]:
    numerator = v_scaled.new_zeros(num_nodes, *v_scaled.shape[1:]).index_add_(0, dst.long(), v_scaled)
    denominator = score.new_zeros(num_nodes, score.shape[1]).index_add_(0, dst.long(), score)
    return numerator / (denominator[..., None] + EPS)


def csc_gather(
    v_scaled: Float32[Tensor, "E H D"], score: Float32[Tensor, "E H"], col_ptr: Int32[Tensor, "N+1"],
    edge_id: Int32[Tensor, "E"],
) -> Float32[Tensor, "N H D"]:
    dst = torch.empty_like(edge_id, dtype=torch.long)
    dst[edge_id.long()] = slot_nodes(col_ptr)  # slot s holds edge edge_id[s], whose destination is its node
    return scatter_add(v_scaled, score, dst, col_ptr.numel() - 1)


def csr_aggregate(
    node_feat: Float32[Tensor, "N H D"], edge_weight: Float32[Tensor, "E H"], row_ptr: Int32[Tensor, "N+1"],
    col_idx: Int32[Tensor, "E"],
) -> Float32[Tensor, "N H D"]:
    messages = edge_weight[..., None] * node_feat[col_idx.long()]  # slot s brings its neighbour's features
    return torch.zeros_like(node_feat).index_add_(0, slot_nodes(row_ptr), messages)


def graph_attention(
    q: Float32[Tensor, "N H D"], k: Float32[Tensor, "N H D"], v: Float32[Tensor, "N H D"],
    e: Float32[Tensor, "E H D"], col_ptr: Int32[Tensor, "N+1"], row_idx: Int32[Tensor, "E"],
    edge_id: Int32[Tensor, "E"],
) -> tuple[Float32[Tensor, "N H D"], Float32[Tensor, "E H D"]]:
    edge = edge_id.long()
    src = torch.empty_like(edge)
    dst = torch.empty_like(edge)
    src[edge], dst[edge] = row_idx.long(), slot_nodes(col_ptr)
    e_out = torch.clamp(k[src] * q[dst] / q.shape[-1] ** 0.5, -5, 5) * e  # clip per feature, before the sum
    weight = torch.exp(torch.clamp(e_out.sum(-1), -5, 5))  # [E, H], within [e^-5, e^5]
    h = scatter_add(weight[..., None] * v[src], weight, dst.to(torch.int32), q.shape[0])
    return h, e_out


# -- chapter 4: tensor cores. Inputs are float16 (or bfloat16); results are float32. ----------------------

def wide(x: Tensor) -> Tensor:
    """A 16-bit float tensor as float32, so the spec sums in float32 (the grader passes float64 anyway)."""
    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x


def matmul(a: Float16[Tensor, "M K"], b: Float16[Tensor, "K N"]) -> Float32[Tensor, "M N"]:
    return wide(a) @ wide(b)


def attention(
    q: Float16[Tensor, "N D"], k: Float16[Tensor, "T D"], v: Float16[Tensor, "T D"]
) -> Float32[Tensor, "N D"]:
    scores = wide(q) @ wide(k).T / q.shape[-1] ** 0.5
    return torch.softmax(scores, dim=1) @ wide(v)


def sparse_attention(
    q: Float16[Tensor, "N D"], k: Float16[Tensor, "N D"], v: Float16[Tensor, "N D"],
    window_ptr: Int32[Tensor, "R+1"], tcb_col: Int32[Tensor, "num_tcb 16"], tcb_mask: Int32[Tensor, "num_tcb 16"],
    window_order: Int32[Tensor, "R"],
) -> Float32[Tensor, "N D"]:
    q, k, v = wide(q), wide(k), wide(v)
    rows, cols = bsb_edges(window_ptr, tcb_col, tcb_mask)  # every (row, neighbour) pair once
    scores = (q[rows] * k[cols]).sum(-1) / q.shape[-1] ** 0.5  # SDDMM: q.k only where there is an edge
    row_max = scores.new_full(q.shape[:1], -torch.inf).scatter_reduce(0, rows, scores, "amax")
    weights = torch.exp(scores - row_max[rows])  # softmax over each row's neighbours
    total = torch.zeros_like(row_max).index_add_(0, rows, weights)
    out = torch.zeros_like(q).index_add_(0, rows, weights[:, None] * v[cols])  # SpMM
    return out / torch.where(total > 0, total, 1)[:, None]  # a row with no neighbour stays 0


# -- chapter 5: backward passes. Each is float64 autograd of a forward spec above. --------------------------

def saves(**tensors: Callable) -> Callable:
    """Mark the arguments of a backward spec that its forward pass saved, with the function that computes each.

    The grader draws every argument of a case as usual, then replaces each saved one with tensors[name] called
    on the drawn inputs its parameters name (in float64, from the values the kernel is given), cast to the
    argument's dtype. So a backward is graded on its own forward's saved tensors, never on a learner's forward."""
    def mark(spec: Callable) -> Callable:
        spec.saved = tensors
        return spec
    return mark


@saves(y=lambda y: softmax(y))  # the grader draws y as logits; the forward saved their softmax
def softmax_backward(y: Float32[Tensor, "N0 T"], dy: Float32[Tensor, "N0 T"]) -> Float32[Tensor, "N0 T"]:
    with torch.enable_grad():
        x = y.log().requires_grad_()  # logits whose softmax is y (softmax ignores a constant added to a row)
        return torch.autograd.grad(softmax(x), x, dy)[0]


IGNORE_INDEX = -100  # the target of a row that does not count: torch.nn.functional.cross_entropy's default


@saves(lse=lambda x: torch.logsumexp(x, dim=1))  # the forward saved each row's log-sum-exp
def cross_entropy_backward(
    x: Float32[Tensor, "N0 V"], target: Int64[Tensor, "N0"], lse: Float32[Tensor, "N0"], dloss: Float32[Tensor, ""]
) -> Float32[Tensor, "N0 V"]:
    with torch.enable_grad():
        logits = x.detach().requires_grad_()
        loss = torch.nn.functional.cross_entropy(logits, target, ignore_index=IGNORE_INDEX)  # mean of counted rows
        return torch.autograd.grad(loss, logits, dloss)[0]


def graph_attention_h(q, k, v, e, col_ptr, row_idx, edge_id) -> Tensor:
    """Puzzle 10's output h, which its forward saves."""
    return graph_attention(q, k, v, e, col_ptr, row_idx, edge_id)[0]


def graph_attention_den(q, k, e, col_ptr, row_idx, edge_id) -> Tensor:
    """What puzzle 10's forward divides by, and saves: per node and head, the sum of the weights of its incoming
    edges, plus EPS ([N, H])."""
    e_out = graph_attention(q, k, torch.zeros_like(q), e, col_ptr, row_idx, edge_id)[1]
    weight = torch.exp(torch.clamp(e_out.sum(-1), -5, 5))  # [E, H], in edge-id order
    return torch.zeros_like(q[..., 0]).index_add_(0, slot_nodes(col_ptr), weight[edge_id.long()]) + EPS


@saves(h=graph_attention_h, den=graph_attention_den)
def graph_attention_backward(
    q: Float32[Tensor, "N H D"], k: Float32[Tensor, "N H D"], v: Float32[Tensor, "N H D"],
    e: Float32[Tensor, "E H D"], h: Float32[Tensor, "N H D"], den: Float32[Tensor, "N H"],
    dh: Float32[Tensor, "N H D"], de_out: Float32[Tensor, "E H D"], col_ptr: Int32[Tensor, "N+1"],
    row_idx: Int32[Tensor, "E"], edge_id: Int32[Tensor, "E"], out_ptr: Int32[Tensor, "N+1"],
    out_dst: Int32[Tensor, "E"], out_edge_id: Int32[Tensor, "E"],
) -> tuple[Float32[Tensor, "N H D"], Float32[Tensor, "N H D"], Float32[Tensor, "N H D"], Float32[Tensor, "E H D"]]:
    with torch.enable_grad():
        leaves = [t.detach().requires_grad_() for t in (q, k, v, e)]
        outputs = graph_attention(*leaves, col_ptr, row_idx, edge_id)  # (h, e_out)
        return torch.autograd.grad(outputs, leaves, (dh, de_out))  # (dq, dk, dv, de)


# -- chapter 5, part 2: attention backward (puzzles 17 and 18). Each forward also gives its log-sum-exp. ------

def causal_visible(n: int, t: int, device=None) -> Tensor:
    """[N, T] booleans: query i sees key j when j <= i + (T - N), the causal mask aligned to the last query and key
    (FlashAttention-2's since v2.1; the same as PyTorch's top-left mask when N = T). With N > T, the first N - T
    queries see no key at all: their output is 0 and their log-sum-exp -inf."""
    return torch.arange(t, device=device)[None, :] <= torch.arange(n, device=device)[:, None] + (t - n)


def masked_softmax(scores: Tensor) -> tuple[Tensor, Tensor]:
    """Each row's softmax and log-sum-exp over its finite scores; a row of -inf alone gives 0 and -inf, not NaN."""
    row_max = scores.amax(dim=1, keepdim=True).detach()  # the softmax does not change with it: no gradient needed
    base = torch.where(torch.isfinite(row_max), row_max, 0)
    weights = torch.exp(scores - base)
    total = weights.sum(dim=1, keepdim=True)
    return weights / torch.where(total > 0, total, 1), (torch.log(total) + base).squeeze(1)


def masked_attention(q: Tensor, k: Tensor, v: Tensor, causal: bool, scale: float) -> tuple[Tensor, Tensor]:
    """Puzzle 12's attention with any scale and an optional causal mask: (o, lse), lse = log sum_j exp(s_ij)."""
    scores = wide(q) @ wide(k).T * scale
    if causal:
        scores = scores.masked_fill(~causal_visible(q.shape[0], k.shape[0], q.device), -torch.inf)
    weights, lse = masked_softmax(scores)
    return weights @ wide(v), lse


@saves(o=lambda q, k, v, causal, scale: masked_attention(q, k, v, causal, scale)[0],
       lse=lambda q, k, v, causal, scale: masked_attention(q, k, v, causal, scale)[1])
def attention_backward(
    q: Float16[Tensor, "N D"], k: Float16[Tensor, "T D"], v: Float16[Tensor, "T D"], o: Float16[Tensor, "N D"],
    lse: Float32[Tensor, "N"], do: Float16[Tensor, "N D"], causal: bool, scale: float,
) -> tuple[Float32[Tensor, "N D"], Float32[Tensor, "T D"], Float32[Tensor, "T D"]]:
    with torch.enable_grad():
        leaves = [t.detach().requires_grad_() for t in (q, k, v)]
        return torch.autograd.grad(masked_attention(*leaves, causal, scale)[0], leaves, do)  # (dq, dk, dv)


def sparse_attention_lse(q, k, window_ptr, tcb_col, tcb_mask) -> Tensor:
    """Puzzle 13's log-sum-exp per row, log sum_{j in A_i} exp(s_ij), which its forward saves; -inf for a row with
    no neighbour."""
    rows, cols = bsb_edges(window_ptr, tcb_col, tcb_mask)
    scores = (wide(q)[rows] * wide(k)[cols]).sum(-1) / q.shape[-1] ** 0.5
    row_max = scores.new_full(q.shape[:1], -torch.inf).scatter_reduce(0, rows, scores, "amax")
    base = torch.where(torch.isfinite(row_max), row_max, 0)
    total = torch.zeros_like(row_max).index_add_(0, rows, torch.exp(scores - base[rows]))
    return torch.log(total) + base


@saves(o=sparse_attention, lse=sparse_attention_lse)
def sparse_attention_backward(
    q: Float16[Tensor, "N D"], k: Float16[Tensor, "N D"], v: Float16[Tensor, "N D"], o: Float16[Tensor, "N D"],
    lse: Float32[Tensor, "N"], do: Float16[Tensor, "N D"],
    window_ptr: Int32[Tensor, "R+1"], tcb_col: Int32[Tensor, "num_tcb 16"], tcb_mask: Int32[Tensor, "num_tcb 16"],
    window_order: Int32[Tensor, "R"], key_window_ptr: Int32[Tensor, "R+1"],
    key_tcb_query: Int32[Tensor, "num_key_tcb 16"], key_tcb_mask: Int32[Tensor, "num_key_tcb 16"],
    key_window_order: Int32[Tensor, "R"],
) -> tuple[Float32[Tensor, "N D"], Float32[Tensor, "N D"], Float32[Tensor, "N D"]]:
    with torch.enable_grad():  # the key_* arrays (the transposed BSB) are the kernel's; the math needs only these
        leaves = [t.detach().requires_grad_() for t in (q, k, v)]
        out = sparse_attention(*leaves, window_ptr, tcb_col, tcb_mask, window_order)
        return torch.autograd.grad(out, leaves, do)  # (dq, dk, dv)
