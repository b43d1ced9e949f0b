"""Cheat: a float cast to int8 past its range (200.0), undefined on a GPU (the compiled kernel keeps the low bits of
a 32-bit integer, or folds any value for a constant), which the interpreter once saturated to 127: the kernel's
right answer hangs on that 127."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    narrow = tl.maximum(N0, 200).to(tl.float32).to(tl.int8)
    tl.store(z_ptr + offsets, tl.where(narrow == 127, x + y, x - y), mask=mask)
