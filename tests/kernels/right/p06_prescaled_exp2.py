"""Puzzle 6 with q multiplied by log2(e) once, so every weight is a bare exp2 of a score difference."""

import triton
import triton.language as tl


@triton.jit
def flash_attention_kernel(q_ptr, k_ptr, v_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    queries = tl.program_id(0) * B0 + tl.arange(0, B0)
    q2 = tl.load(q_ptr + queries, mask=queries < N0, other=0.0) * 1.4426950408889634
    top = tl.full([B0], float("-inf"), dtype=tl.float32)
    total = tl.zeros([B0], dtype=tl.float32)
    mixed = tl.zeros([B0], dtype=tl.float32)
    for start in tl.range(0, T, B1):
        keys = start + tl.arange(0, B1)
        k = tl.load(k_ptr + keys, mask=keys < T, other=0.0)
        v = tl.load(v_ptr + keys, mask=keys < T, other=0.0)
        s = tl.where((keys < T)[None, :], q2[:, None] * k[None, :], float("-inf"))
        new_top = tl.maximum(top, tl.max(s, axis=1))
        shrink = tl.exp2(top - new_top)
        p = tl.exp2(s - new_top[:, None])
        total = total * shrink + tl.sum(p, axis=1)
        mixed = mixed * shrink + tl.sum(p * v[None, :], axis=1)
        top = new_top
    tl.store(z_ptr + queries, mixed / total, mask=queries < N0)
