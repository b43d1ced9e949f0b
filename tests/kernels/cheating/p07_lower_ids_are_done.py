"""Cheat: puzzle 7 in one launch: the program holding a node's last edge (in id order) reads the node's sums through
atomics (tl.atomic_add of 0.0), assuming every program of a lower id has added into them, and normalizes them in
place with a compare-and-swap retry loop; normalize_kernel only zeroes the nodes no edge reaches. Atomics race with
no atomic, so no race is seen; the stock interpreter runs programs one after another in id order, so the sums it
reads are whole there; on a GPU the programs of lower ids may still be adding. The grader runs a launch's programs
in a drawn order, never in id order: the sums read are partial, and out is wrong."""

import triton
import triton.language as tl

EPS = tl.constexpr(1e-6)
SCAN = 256


@triton.jit
def scatter_kernel(v_scaled_ptr, score_ptr, dst_ptr, out_ptr, den_ptr, E, H, D,
                   BLOCK_E: tl.constexpr, H_PAD: tl.constexpr, D_PAD: tl.constexpr):
    lane = tl.arange(0, BLOCK_E)
    edges = tl.program_id(0) * BLOCK_E + lane
    heads = tl.arange(0, H_PAD)
    feats = tl.arange(0, D_PAD)
    edge_ok = edges < E
    head_mask = edge_ok[:, None] & (heads < H)[None, :]
    tile_mask = head_mask[:, :, None] & (feats < D)[None, None, :]
    dst = tl.load(dst_ptr + edges, mask=edge_ok, other=0)
    tile = edges[:, None, None] * (H * D) + heads[None, :, None] * D + feats[None, None, :]
    values = tl.load(v_scaled_ptr + tile, mask=tile_mask)
    scores = tl.load(score_ptr + edges[:, None] * H + heads[None, :], mask=head_mask)
    target = dst[:, None, None] * (H * D) + heads[None, :, None] * D + feats[None, None, :]
    tl.atomic_add(out_ptr + target, values, mask=tile_mask)
    tl.atomic_add(den_ptr + dst[:, None] * H + heads[None, :], scores, mask=head_mask)
    # which of this block's edges is its node's last edge, in id order?
    later = (dst[None, :] == dst[:, None]) & (lane[None, :] > lane[:, None]) & edge_ok[None, :]
    last = edge_ok & (tl.max(later.to(tl.int32), axis=1) == 0)
    for start in range((tl.program_id(0) + 1) * BLOCK_E, E, SCAN):
        others = start + tl.arange(0, SCAN)
        od = tl.load(dst_ptr + others, mask=others < E, other=-1)
        last = last & (tl.max((dst[:, None] == od[None, :]).to(tl.int32), axis=1) == 0)
    tl.debug_barrier()
    mine = last[:, None, None] & tile_mask
    den = tl.atomic_add(den_ptr + dst[:, None] * H + heads[None, :], 0.0, mask=last[:, None] & head_mask)
    den = tl.where(last[:, None] & head_mask, den, 0.0)[:, :, None]
    target = tl.where(mine, target, 0)
    old = tl.atomic_add(out_ptr + target, 0.0, mask=mine)
    old = tl.where(mine, old, 0.0)
    seen = tl.atomic_cas(out_ptr + target, old, tl.where(mine, old / (den + EPS), old))
    while tl.max((seen != old).to(tl.int32)) > 0:
        todo = seen != old
        old = tl.where(todo, seen, old)
        seen = tl.where(todo, tl.atomic_cas(out_ptr + target, old, tl.where(mine, old / (den + EPS), old)), old)


@triton.jit
def normalize_kernel(out_ptr, den_ptr, N, H, D, BLOCK_N: tl.constexpr, H_PAD: tl.constexpr, D_PAD: tl.constexpr):
    nodes = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    heads = tl.arange(0, H_PAD)
    feats = tl.arange(0, D_PAD)
    head_mask = (nodes < N)[:, None] & (heads < H)[None, :]
    den = tl.load(den_ptr + nodes[:, None] * H + heads[None, :], mask=head_mask, other=1.0)
    empty = head_mask & (den == 0.0)
    tile_mask = empty[:, :, None] & (feats < D)[None, None, :]
    tile = nodes[:, None, None] * (H * D) + heads[None, :, None] * D + feats[None, None, :]
    tl.store(out_ptr + tile, tl.zeros([BLOCK_N, H_PAD, D_PAD], dtype=tl.float32), mask=tile_mask)
