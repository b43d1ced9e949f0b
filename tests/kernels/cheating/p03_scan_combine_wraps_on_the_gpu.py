"""Review 20: the same trick in tl.associative_scan: the combine's Python number wraps to 0 on a GPU (an int32
tensor there), so the running sum keeps only the first tile's sum; the interpreter ran the raw Python."""

import triton
import triton.language as tl


@triton.jit
def _add_pair(a, b):
    big = 65536
    keep = big * big // 65536 // 65536
    return a * keep + b


@triton.jit
def row_sum_kernel(x_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    acc = tl.zeros([B0], dtype=tl.float32)
    for start in tl.range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = (rows[:, None] < N0) & (cols[None, :] < T)
        tile = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=0.0)
        both = tl.associative_scan(tl.join(acc, tl.sum(tile, axis=1)), 1, _add_pair)
        acc = tl.sum(tl.where(tl.arange(0, 2)[None, :] == 1, both, 0.0), axis=1)
    tl.store(z_ptr + rows, acc, mask=rows < N0)
