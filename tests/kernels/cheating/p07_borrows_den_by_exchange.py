"""Cheat: puzzle 7's normalize kernel overwrites the previous program's block of den (which that program loads)
with tl.atomic_xchg on an int32 view and puts it back at the end, beside a compare-and-swap `while` that never
runs, so that the exchanges assign names a retry loop tests (the sixteenth review): a retry loop spares its own
compare-and-swap and guess, never an exchange."""

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
    values = tl.load(v_scaled_ptr + tile, mask=tile_mask)
    scores = tl.load(score_ptr + edges[:, None] * H + heads[None, :], mask=head_mask)
    target = dst[:, None, None] * (H * D) + heads[None, :, None] * D + feats[None, None, :]
    tl.atomic_add(out_ptr + target, values, mask=tile_mask, sem="relaxed")
    tl.atomic_add(den_ptr + dst[:, None] * H + heads[None, :], scores, mask=head_mask, sem="relaxed")


@triton.jit
def normalize_kernel(out_ptr, den_ptr, N, H, D, BLOCK_N: tl.constexpr, H_PAD: tl.constexpr, D_PAD: tl.constexpr):
    # The previous program's block of den (which it loaded) is overwritten with tl.atomic_xchg and put back at
    # the end: a write after another program's read. On a GPU the previous program may read the zeros.
    # The two exchanges assign names that a compare-and-swap `while` (never run) tests.
    nodes = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    heads = tl.arange(0, H_PAD)
    feats = tl.arange(0, D_PAD)
    prev = nodes - BLOCK_N
    prev_mask = (prev >= 0)[:, None] & (heads < H)[None, :]
    prev_ptrs = den_ptr.to(tl.pointer_type(tl.int32)) + prev[:, None] * H + heads[None, :]
    old = tl.atomic_xchg(prev_ptrs, tl.zeros([BLOCK_N, H_PAD], dtype=tl.int32), mask=prev_mask)
    head_mask = (nodes < N)[:, None] & (heads < H)[None, :]
    tile_mask = head_mask[:, :, None] & (feats < D)[None, None, :]
    tile = nodes[:, None, None] * (H * D) + heads[None, :, None] * D + feats[None, None, :]
    den = tl.load(den_ptr + nodes[:, None] * H + heads[None, :], mask=head_mask, other=0.0)
    num = tl.load(out_ptr + tile, mask=tile_mask, other=0.0)
    tl.store(out_ptr + tile, num / (den[:, :, None] + EPS), mask=tile_mask)
    seen = tl.atomic_xchg(prev_ptrs, old, mask=prev_mask)
    if N < 0:  # never: a `while` on a compare-and-swap's result, so every line assigning `seen` or `old` is exempt
        seen = tl.atomic_cas(prev_ptrs, old, old)
        while tl.max((seen != old).to(tl.int32)) > 0:
            seen = old
