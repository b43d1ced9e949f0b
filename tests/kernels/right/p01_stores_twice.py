"""Puzzle 1 where each program stores its block twice (zeros, then the sum): one program storing an
element twice is no race."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    tl.store(z_ptr + offsets, tl.zeros([B0], dtype=tl.float32), mask=mask)
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
