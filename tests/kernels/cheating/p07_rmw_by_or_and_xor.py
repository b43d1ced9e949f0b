"""Cheat (the eighteenth review): each edge's update is a read-modify-write built from two atomics that combine:
old = tl.atomic_or(p, 0) reads, tl.atomic_xor(p, old ^ bits(old + v)) writes. The interpreter runs programs one
after another, so no update is lost there; on a GPU two programs that read the same old corrupt the sum. The
grader treats an atomic that writes a value made from what an atomic read there as a store: it races."""
import triton
import triton.language as tl

EPS = tl.constexpr(1e-6)


@triton.jit
def scatter_kernel(v_scaled_ptr, score_ptr, dst_ptr, out_ptr, den_ptr, E, H, D,
                   BLOCK_E: tl.constexpr, H_PAD: tl.constexpr, D_PAD: tl.constexpr):
    heads = tl.arange(0, H_PAD)
    feats = tl.arange(0, D_PAD)
    hmask = heads < H
    tmask = hmask[:, None] & (feats < D)[None, :]
    out_bits = out_ptr.to(tl.pointer_type(tl.int32), bitcast=True)
    den_bits = den_ptr.to(tl.pointer_type(tl.int32), bitcast=True)
    for i in range(0, BLOCK_E):
        e = tl.program_id(0) * BLOCK_E + i
        if e < E:
            dst = tl.load(dst_ptr + e)
            src = e * (H * D) + heads[:, None] * D + feats[None, :]
            values = tl.load(v_scaled_ptr + src, mask=tmask, other=0.0)
            scores = tl.load(score_ptr + e * H + heads, mask=hmask, other=0.0)
            target = dst * (H * D) + heads[:, None] * D + feats[None, :]
            old = tl.atomic_or(out_bits + target, 0, mask=tmask)
            new = (old.to(tl.float32, bitcast=True) + values).to(tl.int32, bitcast=True)
            tl.atomic_xor(out_bits + target, old ^ new, mask=tmask)
            dtarget = dst * H + heads
            dold = tl.atomic_or(den_bits + dtarget, 0, mask=hmask)
            dnew = (dold.to(tl.float32, bitcast=True) + scores).to(tl.int32, bitcast=True)
            tl.atomic_xor(den_bits + dtarget, dold ^ dnew, mask=hmask)


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
