"""Puzzle 5 in three passes, the last one reading x through tl.atomic_add(x, 0.0): an atomic returns the value it
found, so it reads x (and writes it back), and counts against the read budget like a load: x read 3x, over the
budget of 2x."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_online_kernel(x_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    row_ok = rows < N0
    row_max = tl.full([B0], float("-inf"), dtype=tl.float32)
    for start in tl.range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = row_ok[:, None] & (cols[None, :] < T)
        x = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=float("-inf"))
        row_max = tl.maximum(row_max, tl.max(x, axis=1))
    m = row_max[:, None]
    denominator = tl.zeros([B0], dtype=tl.float32)
    for start in tl.range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = row_ok[:, None] & (cols[None, :] < T)
        x = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=float("-inf"))
        denominator += tl.sum(tl.exp(x - m), axis=1)
    for start in tl.range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = row_ok[:, None] & (cols[None, :] < T)
        x = tl.atomic_add(x_ptr + rows[:, None] * T + cols[None, :], 0.0, mask=mask)  # the cheat: a read
        tl.store(z_ptr + rows[:, None] * T + cols[None, :], tl.exp(x - m) / denominator[:, None], mask=mask)


def softmax_online(x: torch.Tensor, B0: int = 1, B1: int = 4096) -> torch.Tensor:
    n0, t = x.shape
    z = torch.empty_like(x)
    softmax_online_kernel[(triton.cdiv(n0, B0),)](x, z, n0, t, B0=B0, B1=B1)
    return z
