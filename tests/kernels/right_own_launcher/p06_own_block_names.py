"""Puzzle 6 with the kernel's own block names (BLOCK_Q, BLOCK_K) and a key block capped at 32.

A launcher may use smaller tiles than the case gives, and name them as it likes: the grader maps
them to B0 and B1 by value (neither is wider than the case's widest block)."""

import torch
import triton
import triton.language as tl


@triton.jit
def capped_attention_kernel(q_ptr, k_ptr, v_ptr, z_ptr, N0, T, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr):
    queries = tl.program_id(0) * BLOCK_Q + tl.arange(0, BLOCK_Q)
    q = tl.load(q_ptr + queries, mask=queries < N0, other=0.0)
    running_max = tl.full([BLOCK_Q], float("-inf"), dtype=tl.float32)
    weight_sum = tl.zeros([BLOCK_Q], dtype=tl.float32)
    weighted_values = tl.zeros([BLOCK_Q], dtype=tl.float32)
    for start in tl.range(0, T, BLOCK_K):
        keys = start + tl.arange(0, BLOCK_K)
        k = tl.load(k_ptr + keys, mask=keys < T, other=0.0)
        v = tl.load(v_ptr + keys, mask=keys < T, other=0.0)
        scores = tl.where((keys < T)[None, :], q[:, None] * k[None, :], float("-inf"))
        new_max = tl.maximum(running_max, tl.max(scores, axis=1))
        p = tl.exp(scores - new_max[:, None])
        shrink = tl.exp(running_max - new_max)  # re-bases the sums kept so far on the new max
        weight_sum = weight_sum * shrink + tl.sum(p, axis=1)
        weighted_values = weighted_values * shrink + tl.sum(p * v[None, :], axis=1)
        running_max = new_max
    tl.store(z_ptr + queries, weighted_values / weight_sum, mask=queries < N0)


def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, B0: int = 64, B1: int = 256) -> torch.Tensor:
    """Keys in blocks of at most 32, whatever the case gives."""
    z = torch.empty_like(q)
    capped_attention_kernel[(triton.cdiv(q.numel(), B0),)](q, k, v, z, q.numel(), k.numel(), BLOCK_Q=B0,
                                                           BLOCK_K=min(B1, 32))
    return z
