"""Review 20: a tl.reduce combine function that computes with a Python number. The GPU compiler makes every
assigned number an int32 tensor, so `big * big` wraps to 0 there and the combine drops its second operand; triton's
interpreter called the combine's raw Python, where it is 2**32 and the sum comes out right. The grader runs a
combine as it runs any @triton.jit helper: as the compiler reads it."""

import triton
import triton.language as tl


@triton.jit
def _add_pair(a, b):
    big = 65536
    keep = big * big // 65536 // 65536
    return a + b * keep


@triton.jit
def row_sum_kernel(x_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    acc = tl.zeros([B0], dtype=tl.float32)
    for start in tl.range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = (rows[:, None] < N0) & (cols[None, :] < T)
        tile = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=0.0)
        acc = tl.reduce(tl.join(acc, tl.sum(tile, axis=1)), 1, _add_pair)
    tl.store(z_ptr + rows, acc, mask=rows < N0)
