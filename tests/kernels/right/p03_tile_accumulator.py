"""Puzzle 3 keeping a [B0, B1] accumulator through the loop and reducing it once at the end."""

import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    acc = tl.zeros([B0, B1], dtype=tl.float32)
    for start in tl.range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = (rows < N0)[:, None] & (cols < T)[None, :]
        acc += tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=0.0)
    tl.store(z_ptr + rows, tl.sum(acc, axis=1), mask=rows < N0)
