"""Cheat, or an honest slip: x + y as a float32 tl.dot of [x, y, 0, ...] with ones, at tl.dot's default precision,
TF32: a tensor core keeps 10 of the 23 mantissa bits, so the sums miss the tolerance on a GPU, while numpy's matmul
was exact (input_precision="ieee" is exact on both: tests/kernels/right/p03_float32_dot.py)."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    lanes = tl.arange(0, 16)
    pair = tl.where(lanes[None, :] == 0, x[:, None], tl.where(lanes[None, :] == 1, y[:, None], 0.0))
    ones = tl.where(lanes[:, None] < 2, 1.0, 0.0) + tl.zeros([16, 16], dtype=tl.float32)
    sums = tl.dot(pair, ones)
    tl.store(z_ptr + offsets, tl.sum(tl.where(lanes[None, :] == 0, sums, 0.0), axis=1), mask=mask)
