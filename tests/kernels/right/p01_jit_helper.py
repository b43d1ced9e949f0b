"""Puzzle 1 with the sum in a @triton.jit helper: the GPU compiles the call (the helper is inlined)."""

import triton
import triton.language as tl


@triton.jit
def add_values(x, y):
    return x + y


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets, add_values(x, y), mask=mask)
