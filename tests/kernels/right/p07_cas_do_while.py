"""Correct: puzzle 7 with den built by a do-while compare-and-swap loop (load, swap, go round while any lane's
swap failed; the loop's test reads a flag made from the swap's result, not the swap's result itself), out by
tl.atomic_add (the seventeenth review: it was refused as a swap outside a retry loop). The grader makes its
contended swaps fail once; the loop swaps again."""

import triton
import triton.language as tl

EPS = tl.constexpr(1e-6)


@triton.jit
def scatter_kernel(v_scaled_ptr, score_ptr, dst_ptr, out_ptr, den_ptr, E, H, D,
                   BLOCK_E: tl.constexpr, H_PAD: tl.constexpr, D_PAD: tl.constexpr):
    edges = tl.program_id(0) * BLOCK_E + tl.arange(0, BLOCK_E)
    heads = tl.arange(0, H_PAD)
    feats = tl.arange(0, D_PAD)
    edge_ok = edges < E
    head_mask = edge_ok[:, None] & (heads < H)[None, :]
    tile_mask = head_mask[:, :, None] & (feats < D)[None, None, :]
    dst = tl.load(dst_ptr + edges, mask=edge_ok, other=0)
    tile = edges[:, None, None] * (H * D) + heads[None, :, None] * D + feats[None, None, :]
    values = tl.load(v_scaled_ptr + tile, mask=tile_mask, other=0.0)
    scores = tl.load(score_ptr + edges[:, None] * H + heads[None, :], mask=head_mask, other=0.0)
    target = tl.where(tile_mask, dst[:, None, None] * (H * D) + heads[None, :, None] * D + feats[None, None, :], 0)
    dtarget = tl.where(head_mask, dst[:, None] * H + heads[None, :], 0)
    tl.atomic_add(out_ptr + target, values, mask=tile_mask)
    tl.debug_barrier()
    pending = head_mask.to(tl.int32)
    while tl.max(pending) > 0:  # a do-while retry loop: load, swap, done where the swap took
        tl.debug_barrier()
        dold = tl.load(den_ptr + dtarget)
        dseen = tl.atomic_cas(den_ptr + dtarget, dold, tl.where(pending > 0, dold + scores, dold))
        pending = tl.where(dseen == dold, 0, pending)


@triton.jit
def normalize_kernel(out_ptr, den_ptr, N, H, D, BLOCK_N: tl.constexpr, H_PAD: tl.constexpr, D_PAD: tl.constexpr):
    nodes = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    heads = tl.arange(0, H_PAD)
    feats = tl.arange(0, D_PAD)
    head_mask = (nodes < N)[:, None] & (heads < H)[None, :]
    tile_mask = head_mask[:, :, None] & (feats < D)[None, None, :]
    tile = nodes[:, None, None] * (H * D) + heads[None, :, None] * D + feats[None, None, :]
    den = tl.load(den_ptr + nodes[:, None] * H + heads[None, :], mask=head_mask, other=0.0)
    num = tl.load(out_ptr + tile, mask=tile_mask, other=0.0)
    tl.store(out_ptr + tile, num / (den[:, :, None] + EPS), mask=tile_mask)
