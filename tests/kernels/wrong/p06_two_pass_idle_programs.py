"""Puzzle 6 in two passes over the keys, launched with four times the programs it needs: the extra
programs do nothing. Counted per program launched, k would be read 0.5x; counted per query block a
program stores, it is read 2x, over the one-pass budget."""

import torch
import triton
import triton.language as tl


@triton.jit
def idle_padded_two_pass_kernel(q_ptr, k_ptr, v_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    first = tl.program_id(0) * B0
    if first < N0:  # only the first quarter of the programs has queries
        queries = first + tl.arange(0, B0)
        q = tl.load(q_ptr + queries, mask=queries < N0, other=0.0)
        best = tl.full([B0], float("-inf"), dtype=tl.float32)
        for start in tl.range(0, T, B1):
            keys = start + tl.arange(0, B1)
            k = tl.load(k_ptr + keys, mask=keys < T, other=0.0)
            scores = tl.where(keys[None, :] < T, q[:, None] * k[None, :], float("-inf"))
            best = tl.maximum(best, tl.max(scores, axis=1))
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


def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, B0: int = 64, B1: int = 256) -> torch.Tensor:
    z = torch.empty_like(q)
    idle_padded_two_pass_kernel[(4 * triton.cdiv(q.numel(), B0),)](q, k, v, z, q.numel(), k.numel(), B0=B0, B1=B1)
    return z
