"""Cheat: puzzle 7's scatter as a compare-and-swap of each edge's sums in a `while` that tests the swap's result
but gives up instead of swapping again (the sixteenth review): in the interpreter no swap fails, so nothing is
lost; on a GPU another program's update between the load and the swap is. The grader makes a swap in a loop fail
once where another program updated its element: the updates it loses make out wrong."""

import triton
import triton.language as tl

EPS = tl.constexpr(1e-6)


@triton.jit
def scatter_kernel(v_scaled_ptr, score_ptr, dst_ptr, out_ptr, den_ptr, E, H, D,
                   BLOCK_E: tl.constexpr, H_PAD: tl.constexpr, D_PAD: tl.constexpr):
    # a read-modify-write by compare-and-swap, in a `while` that tests the swap's result, but whose body
    # gives up instead of retrying: in the interpreter (programs one after another) no swap ever fails;
    # on a GPU another program's update between the load and the swap is lost.
    heads = tl.arange(0, H_PAD)
    feats = tl.arange(0, D_PAD)
    hmask = heads < H
    tmask = hmask[:, None] & (feats < D)[None, :]
    for i in range(0, BLOCK_E):
        e = tl.program_id(0) * BLOCK_E + i
        if e < E:
            dst = tl.load(dst_ptr + e)
            src = e * (H * D) + heads[:, None] * D + feats[None, :]
            values = tl.load(v_scaled_ptr + src, mask=tmask, other=0.0)
            scores = tl.load(score_ptr + e * H + heads, mask=hmask, other=0.0)
            target = tl.where(tmask, dst * (H * D) + heads[:, None] * D + feats[None, :], dst * (H * D))
            dtarget = tl.where(hmask, dst * H + heads, dst * H)
            old = tl.load(out_ptr + target)
            seen = tl.atomic_cas(out_ptr + target, old, old + values)
            while tl.max((seen != old).to(tl.int32)) > 0:
                old = seen
            tl.debug_barrier()
            dold = tl.load(den_ptr + dtarget)
            dseen = tl.atomic_cas(den_ptr + dtarget, dold, dold + scores)
            while tl.max((dseen != dold).to(tl.int32)) > 0:
                dold = dseen
            tl.debug_barrier()


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
