"""Puzzle 6 done in two passes over the keys: first the max, then the sums.

The values are right, but k is read twice per program, so the one-pass budget must reject it.
"""

import triton
import triton.language as tl


@triton.jit
def flash_attention_kernel(q_ptr, k_ptr, v_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    queries = tl.program_id(0) * B0 + tl.arange(0, B0)
    q = tl.load(q_ptr + queries, mask=queries < N0, other=0.0)
    best = tl.full([B0], float("-inf"), dtype=tl.float32)
    for start in tl.range(0, T, B1):
        keys = start + tl.arange(0, B1)
        k = tl.load(k_ptr + keys, mask=keys < T, other=0.0)
        best = tl.maximum(best, tl.max(tl.where(keys[None, :] < T, q[:, None] * k[None, :], float("-inf")), axis=1))
    total = tl.zeros([B0], dtype=tl.float32)
    weighted = tl.zeros([B0], dtype=tl.float32)
    for start in tl.range(0, T, B1):
        keys = start + tl.arange(0, B1)
        k = tl.load(k_ptr + keys, mask=keys < T, other=0.0)
        v = tl.load(v_ptr + keys, mask=keys < T, other=0.0)
        p = tl.where(keys[None, :] < T, tl.exp(q[:, None] * k[None, :] - best[:, None]), 0.0)
        total += tl.sum(p, axis=1)
        weighted += tl.sum(p * v[None, :], axis=1)
    tl.store(z_ptr + queries, weighted / total, mask=queries < N0)
