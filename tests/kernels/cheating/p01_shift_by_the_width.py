"""Cheat: an int32 shifted by 40, past its width: numpy gives 0, LLVM leaves it undefined (the compiled kernel stores
a register nothing wrote)."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    shifted = tl.full([B0], 1, tl.int32) << 40
    tl.store(z_ptr + offsets, tl.where(shifted == 0, x + y, x - y), mask=mask)
