"""Puzzle 3 with a loop whose counter never advances: the grader must stop it and say so."""

import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    acc = tl.zeros([B0], dtype=tl.float32)
    start = 0
    while start < T:  # forgot `start += B1`
        cols = start + tl.arange(0, B1)
        mask = (rows[:, None] < N0) & (cols[None, :] < T)
        acc += tl.sum(tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=0.0), axis=1)
    tl.store(z_ptr + rows, acc, mask=rows < N0)
