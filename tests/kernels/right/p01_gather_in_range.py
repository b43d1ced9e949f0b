"""Correct: tl.gather with every index inside the block (two reversals by B0 - 1 - i give it back), beside the
cheat that counts from the end (cheating/p01_gather_from_the_end.py)."""

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
    backwards = tl.gather(x, B0 - 1 - lanes, 0)
    tl.store(z_ptr + offsets, tl.gather(backwards, B0 - 1 - lanes, 0) + y, mask=mask)
