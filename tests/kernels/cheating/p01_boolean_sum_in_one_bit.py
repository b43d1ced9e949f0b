"""Cheat: tl.sum of a boolean block with dtype=tl.int1: a GPU adds in one bit (the parity of the count, 2 lanes
give False); the interpreter counted with numpy and cast the count back to bool (True) (the thirteenth review)."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    two = tl.arange(0, B0) < 2
    s = tl.sum(two, axis=0, dtype=tl.int1)  # True + True in one bit
    tl.store(z_ptr + offsets, x + y + tl.where(s, 0.0, 1.0), mask=mask)
