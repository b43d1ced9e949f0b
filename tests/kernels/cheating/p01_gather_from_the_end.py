"""Cheat: tl.gather with negative indices, which numpy's take_along_axis counts from the end of the block (so two
reversals by index -1 - i give the block back) while a GPU reads undefined values there."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    lanes = tl.arange(0, B0)
    offsets = pid * B0 + lanes
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    backwards = tl.gather(x, -1 - lanes, 0)
    tl.store(z_ptr + offsets, tl.gather(backwards, -1 - lanes, 0) + y, mask=mask)
