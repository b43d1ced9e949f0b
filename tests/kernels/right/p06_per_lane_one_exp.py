"""Puzzle 6 with a running max, sum and weighted sum per lane ([B0, B1] each), merged after the loop.

Per element the new max is either the old one or the new score, so one of the two exponentials in
the update is exp(0) = 1: a single exp2(-|s - m|) does the work, and the loop needs no reduction.
Correct, but ten times slower than the solution on an H200 (5369 µs against 524 µs at N0 = T = 16384,
with B0 = 32, B1 = 64; triton 3.6, 2026-11-29): three [B0, B1] float32 states per program are a lot of
registers.
"""

import triton
import triton.language as tl


@triton.jit
def flash_attention_kernel(q_ptr, k_ptr, v_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    LOG2E: tl.constexpr = 1.4426950408889634
    queries = tl.program_id(0) * B0 + tl.arange(0, B0)
    q = tl.load(q_ptr + queries, mask=queries < N0, other=0.0) * LOG2E
    lane_max = tl.full([B0, B1], float("-inf"), dtype=tl.float32)
    lane_sum = tl.zeros([B0, B1], dtype=tl.float32)
    lane_mix = tl.zeros([B0, B1], dtype=tl.float32)
    for start in tl.range(0, T, B1):
        keys = start + tl.arange(0, B1)
        ok = keys < T
        k = tl.load(k_ptr + keys, mask=ok, other=0.0)
        v = tl.load(v_ptr + keys, mask=ok, other=0.0)[None, :]
        s = tl.where(ok[None, :], q[:, None] * k[None, :], float("-inf"))
        grows = s > lane_max
        e = tl.exp2(-tl.abs(s - lane_max))  # exp2(m_old - s) if the max grows, else exp2(s - m_old)
        e = tl.where(lane_max == float("-inf"), 0.0, e)  # a lane's first score: nothing to rescale
        lane_sum = tl.where(grows, lane_sum * e + 1.0, lane_sum + tl.where(ok[None, :], e, 0.0))
        lane_mix = tl.where(grows, lane_mix * e + v, lane_mix + tl.where(ok[None, :], e, 0.0) * v)
        lane_max = tl.where(grows, s, lane_max)
    row_max = tl.max(lane_max, axis=1)
    weight = tl.where(lane_max > float("-inf"), tl.exp2(lane_max - row_max[:, None]), 0.0)
    z = tl.sum(lane_mix * weight, axis=1) / tl.sum(lane_sum * weight, axis=1)
    tl.store(z_ptr + queries, z, mask=queries < N0)
