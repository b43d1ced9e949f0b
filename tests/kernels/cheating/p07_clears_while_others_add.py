"""Puzzle 7 whose first program clears, with plain stores, the rows of out its edges point at, while every
program adds into out with tl.atomic_add (issue 26, class 4). The interpreter runs program 0 first, so its zeros
come before every atomic and the values are right; on a GPU a zero can land after another program's update and
wipe it. A plain store and an atomic of another program on one element race."""


import torch
import triton
import triton.language as tl

EPS = tl.constexpr(1e-6)  # a global a kernel may read must be a tl.constexpr value


@triton.jit
def scatter_kernel(
    v_scaled_ptr,  # pointer to v_scaled: E x H x D float32, one row of H*D per edge
    score_ptr,  # pointer to score: E x H float32
    dst_ptr,  # pointer to dst: E int32, the destination of each edge
    out_ptr,  # pointer to out: N x H x D float32, zeroed; here the sums num of v_scaled per destination
    den_ptr,  # pointer to den: N x H float32, zeroed; sums of score per destination
    E,  # number of edges
    H,  # heads
    D,  # features per head
    BLOCK_E: tl.constexpr,  # edges per program, a power of two
    H_PAD: tl.constexpr,  # H rounded up to a power of two
    D_PAD: tl.constexpr,  # D rounded up to a power of two
):
    edges = tl.program_id(0) * BLOCK_E + tl.arange(0, BLOCK_E)
    heads = tl.arange(0, H_PAD)
    feats = tl.arange(0, D_PAD)
    edge_ok = edges < E
    head_mask = edge_ok[:, None] & (heads < H)[None, :]
    tile_mask = head_mask[:, :, None] & (feats < D)[None, None, :]
    dst = tl.load(dst_ptr + edges, mask=edge_ok, other=0)
    tile = edges[:, None, None] * (H * D) + heads[None, :, None] * D + feats[None, None, :]
    # Program 0 clears the rows its edges point at with plain stores, while every program adds into them with
    # atomics: the interpreter runs program 0 first, so the others' atomics come after its zeros; on a GPU a zero
    # can land after them and wipe them.
    if tl.program_id(0) == 0:
        tl.store(out_ptr + dst[:, None, None] * (H * D) + heads[None, :, None] * D + feats[None, None, :],
                 tl.zeros([BLOCK_E, H_PAD, D_PAD], dtype=tl.float32), mask=tile_mask)
    values = tl.load(v_scaled_ptr + tile, mask=tile_mask)
    scores = tl.load(score_ptr + edges[:, None] * H + heads[None, :], mask=head_mask)
    # Two edges of this block may share a destination: atomics add both, in some order.
    # Beyond the lesson, sem="relaxed": nothing reads the sums until the next launch, so no atomic needs to order
    # the memory around it; the default ("acq_rel") fences each one, and its result is waited for.
    target = dst[:, None, None] * (H * D) + heads[None, :, None] * D + feats[None, None, :]
    tl.atomic_add(out_ptr + target, values, mask=tile_mask, sem="relaxed")
    tl.atomic_add(den_ptr + dst[:, None] * H + heads[None, :], scores, mask=head_mask, sem="relaxed")


@triton.jit
def normalize_kernel(
    out_ptr,  # pointer to out: N x H x D float32, holding the sums num; overwritten with num / (den + 1e-6)
    den_ptr,  # pointer to den: N x H float32
    N,  # number of nodes
    H,  # heads
    D,  # features per head
    BLOCK_N: tl.constexpr,  # nodes per program, a power of two
    H_PAD: tl.constexpr,  # H rounded up to a power of two
    D_PAD: tl.constexpr,  # D rounded up to a power of two
):
    nodes = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    heads = tl.arange(0, H_PAD)
    feats = tl.arange(0, D_PAD)
    head_mask = (nodes < N)[:, None] & (heads < H)[None, :]
    tile_mask = head_mask[:, :, None] & (feats < D)[None, None, :]
    tile = nodes[:, None, None] * (H * D) + heads[None, :, None] * D + feats[None, None, :]
    den = tl.load(den_ptr + nodes[:, None] * H + heads[None, :], mask=head_mask, other=0.0)
    num = tl.load(out_ptr + tile, mask=tile_mask, other=0.0)
    tl.store(out_ptr + tile, num / (den[:, :, None] + EPS), mask=tile_mask)


def scatter_add(v_scaled: torch.Tensor, score: torch.Tensor, dst: torch.Tensor, num_nodes: int,
                BLOCK_E: int = 64) -> torch.Tensor:
    num_edges, heads, feats = v_scaled.shape
    out = torch.zeros((num_nodes, heads, feats), dtype=v_scaled.dtype, device=v_scaled.device)
    den = torch.zeros((num_nodes, heads), dtype=score.dtype, device=score.device)
    pads = dict(H_PAD=triton.next_power_of_2(heads), D_PAD=triton.next_power_of_2(feats))
    if num_edges:
        scatter_kernel[(triton.cdiv(num_edges, BLOCK_E),)](v_scaled, score, dst, out, den, num_edges, heads, feats,
                                                           BLOCK_E=BLOCK_E, **pads)
    normalize_kernel[(triton.cdiv(num_nodes, 16),)](out, den, num_nodes, heads, feats, BLOCK_N=16, **pads)
    return out
