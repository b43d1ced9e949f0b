"""Puzzle 6 using that scores are rank one: the largest q*k over a block of keys is q*max(k) when q >= 0
and q*min(k) when q < 0, so the block max costs two reductions over B1 keys instead of one over B0*B1.

Correct, but not faster: 739 µs against the solution's 524 µs on an H200 at N0 = T = 16384
(8 warps; triton 3.6, 2026-11-29). The max reduction it saves is not where the time goes."""

import triton
import triton.language as tl


@triton.jit
def flash_attention_kernel(q_ptr, k_ptr, v_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    LOG2E: tl.constexpr = 1.4426950408889634
    queries = tl.program_id(0) * B0 + tl.arange(0, B0)
    q = tl.load(q_ptr + queries, mask=queries < N0, other=0.0) * LOG2E  # scores in log2 units
    top = tl.full([B0], float("-inf"), dtype=tl.float32)
    total = tl.zeros([B0], dtype=tl.float32)
    mixed = tl.zeros([B0], dtype=tl.float32)
    for start in tl.range(0, T, B1):
        keys = start + tl.arange(0, B1)
        ok = keys < T
        k = tl.load(k_ptr + keys, mask=ok, other=0.0)
        v = tl.load(v_ptr + keys, mask=ok, other=0.0)
        k_hi = tl.max(tl.where(ok, k, float("-inf")), axis=0)
        k_lo = tl.min(tl.where(ok, k, float("inf")), axis=0)
        new_top = tl.maximum(top, tl.where(q >= 0, q * k_hi, q * k_lo))
        p = tl.where(ok[None, :], tl.exp2(q[:, None] * k[None, :] - new_top[:, None]), 0.0)
        shrink = tl.exp2(top - new_top)
        total = total * shrink + tl.sum(p, axis=1)
        mixed = mixed * shrink + tl.sum(p * v[None, :], axis=1)
        top = new_top
    tl.store(z_ptr + queries, mixed / total, mask=queries < N0)
