"""Correct: the loop over a row written with Python's range, which the GPU compiler takes as tl.range (the grader
runs it so too: its loop variable is an int32 tensor); beside the cheat that counts on a Python integer there
(cheating/p01_range_loop_integer_wraps.py)."""

import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    row_ok = rows < N0
    acc = tl.zeros([B0], dtype=tl.float32)
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = row_ok[:, None] & (cols[None, :] < T)
        tile = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=0.0)
        acc += tl.sum(tile, axis=1)
    tl.store(z_ptr + rows, acc, mask=row_ok)
