"""Cheat: Python's `or` on two masks, inside a helper whose parameters say tl.constexpr: on the GPU it is the
element-wise or, which lets 8 lanes past the end of x, y and z through; Python's `or` took the first mask whole
(any block is true), which is the right one (the seventh review)."""

import triton
import triton.language as tl


@triton.jit
def either(a: tl.constexpr, b: tl.constexpr):
    return a or b


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = either(offsets < N0, offsets < N0 + 8)
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    tl.store(z_ptr + offsets, x + y, mask=mask)
