"""Cheat: tl.reduce with a combine function that is not associative (a - b) over a row whose elements after the
first are negated: folded left to right, as the interpreter folds, that is the row's sum; a GPU folds in a tree
(within each thread, then across threads), which is not."""

import triton
import triton.language as tl


@triton.jit
def _difference(a, b):
    return a - b


@triton.jit
def row_sum_kernel(x_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    row_ok = rows < N0
    acc = tl.zeros([B0], dtype=tl.float32)
    for start in tl.range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = row_ok[:, None] & (cols[None, :] < T)
        tile = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=0.0)
        leading = (tl.arange(0, B1) == 0)[None, :]
        acc += tl.reduce(tl.where(leading, tile, -tile), 1, _difference)  # t0 - (-t1) - (-t2) ... left to right
    tl.store(z_ptr + rows, acc, mask=row_ok)
