"""Cheat: a loop written with Python's range, whose loop variable the GPU compiler makes an int32 (as tl.range's):
i * 65536 * 65536 wraps to 0 there, so the kernel adds y a second time on a GPU; with a Python integer, as the
interpreter once gave, it does not."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    z = x + y
    for i in range(1, 2):
        z = tl.where(i * 65536 * 65536 == 0, z + y, z)
    tl.store(z_ptr + offsets, z, mask=mask)
