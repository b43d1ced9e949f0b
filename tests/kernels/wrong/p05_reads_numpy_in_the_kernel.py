"""Puzzle 5 that only the interpreter can run: it keeps every loaded block in a Python list (x read once),
and reads the numpy module, a global no GPU kernel can use."""
import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_online_kernel(x_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    unused = np  # noqa: F841  (a global no GPU kernel can use)
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    kept = []
    m = tl.full([B0], float("-inf"), dtype=tl.float32)
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = (rows[:, None] < N0) & (cols[None, :] < T)
        x = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=float("-inf"))
        kept.append(x)
        m = tl.maximum(m, tl.max(x, axis=1))
    d = tl.zeros([B0], dtype=tl.float32)
    for x in kept:
        d += tl.sum(tl.exp(x - m[:, None]), axis=1)
    start = 0
    for x in kept:
        cols = start + tl.arange(0, B1)
        mask = (rows[:, None] < N0) & (cols[None, :] < T)
        tl.store(z_ptr + rows[:, None] * T + cols[None, :], tl.exp(x - m[:, None]) / d[:, None], mask=mask)
        start += B1


def softmax_online(x, B0=1, B1=4096):
    n0, t = x.shape
    z = torch.empty_like(x)
    softmax_online_kernel[(triton.cdiv(n0, B0),)](x, z, n0, t, B0=B0, B1=B1)
    return z
