"""Cheat: the smallest int32 divided by -1, whose quotient does not fit: numpy gives the smallest int32 back, a GPU an
undefined value."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    smallest = tl.full([B0], -2147483647, tl.int32) - 1 + (N0 - N0)
    quotient = smallest // (tl.full([B0], -1, tl.int32) + (N0 - N0))
    tl.store(z_ptr + offsets, tl.where(quotient < 0, x + y, x - y), mask=mask)
