"""Cheat: integers given by a tuple assignment (s, t = -1, 2) and divided in place: int32 tensors on a GPU, whose
-1 // 2 truncates to 0, where Python's integers, as the interpreter once kept them, floor to -1."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    s, t = -1, 2
    s //= t
    tl.store(z_ptr + offsets, x + y + (s + 1) * y, mask=mask)
