"""Correct: puzzle 7 with den built by a compare-and-swap retry loop whose swap sits in a @triton.jit helper
(_add_if), out by tl.atomic_add (the seventeenth review: it was refused as a swap outside a retry loop, since the
helper's own line is in no `while`)."""

import triton
import triton.language as tl

EPS = tl.constexpr(1e-6)


@triton.jit
def _add_if(ptrs, old, add, todo):
    return tl.atomic_cas(ptrs, old, tl.where(todo, old + add, old))


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
    dold = tl.load(den_ptr + dtarget)
    dseen = _add_if(den_ptr + dtarget, dold, scores, dold == dold)
    while tl.max((dseen != dold).to(tl.int32)) > 0:
        dtodo = dseen != dold
        dold = tl.where(dtodo, dseen, dold)
        dseen = tl.where(dtodo, _add_if(den_ptr + dtarget, dold, scores, dtodo), dold)


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
