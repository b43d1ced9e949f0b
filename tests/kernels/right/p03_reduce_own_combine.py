"""Correct: the row sum through tl.reduce with a combine function of its own, which is associative and commutative
(a + b), so any order a GPU takes gives the sum; beside the cheat whose combine is a - b
(cheating/p03_reduce_combine_not_associative.py)."""

import triton
import triton.language as tl


@triton.jit
def _plus(a, b):
    return a + b


@triton.jit
def row_sum_kernel(x_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    row_ok = rows < N0
    acc = tl.zeros([B0], dtype=tl.float32)
    for start in tl.range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = row_ok[:, None] & (cols[None, :] < T)
        tile = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=0.0)
        acc += tl.reduce(tile, 1, _plus)
    tl.store(z_ptr + rows, acc, mask=row_ok)
