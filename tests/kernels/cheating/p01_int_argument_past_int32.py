"""Cheat: an int parameter of 2**31: the JIT types it int64, so K + K is 2**32 on a GPU; the interpreter held it as
uint32, where K + K wrapped to 0."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr, K=2147483648):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    t = K + K  # an int64 argument: 2**32 on a GPU
    tl.store(z_ptr + offsets, x + y + tl.where(t == 0, 0.0, 1.0), mask=mask)
