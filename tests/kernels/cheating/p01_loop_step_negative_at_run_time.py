"""Cheat: a loop whose step is -1 but known only at run time: Python's range counts down and runs the body
once (z = x + y), the GPU compiler's loop counts up, takes the step to be positive, and never runs it (z = x)."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    z = x
    for i in range(1, 0, N0 - N0 - 1):
        z = z + y + 0.0 * i
    tl.store(z_ptr + offsets, z, mask=mask)
