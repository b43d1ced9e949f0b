"""Puzzle 7 as a non-atomic read-modify-write: tl.load, an add, then tl.atomic_xchg of the sum's bits, one edge
at a time. On a GPU, two programs whose edges share a destination both read the old sum and one update is lost."""

import triton
import triton.language as tl

EPS: tl.constexpr = tl.constexpr(1e-6)


@triton.jit
def scatter_kernel(v_scaled_ptr, score_ptr, dst_ptr, out_ptr, den_ptr, E, H, D, BLOCK_E: tl.constexpr,
                   H_PAD: tl.constexpr, D_PAD: tl.constexpr):
    heads = tl.arange(0, H_PAD)
    feats = tl.arange(0, D_PAD)
    hm = heads < H
    tm = hm[:, None] & (feats < D)[None, :]
    tile = heads[:, None] * D + feats[None, :]
    for i in tl.static_range(BLOCK_E):
        e = tl.program_id(0) * BLOCK_E + i
        if e < E:
            d = tl.load(dst_ptr + e)
            old = tl.load(out_ptr + d * H * D + tile, mask=tm)
            new = old + tl.load(v_scaled_ptr + e * H * D + tile, mask=tm)
            tl.atomic_xchg((out_ptr + d * H * D + tile).to(tl.pointer_type(tl.int32)), new.to(tl.int32, bitcast=True),
                           mask=tm)
            oldd = tl.load(den_ptr + d * H + heads, mask=hm)
            newd = oldd + tl.load(score_ptr + e * H + heads, mask=hm)
            tl.atomic_xchg((den_ptr + d * H + heads).to(tl.pointer_type(tl.int32)), newd.to(tl.int32, bitcast=True),
                           mask=hm)


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
