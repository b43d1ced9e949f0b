"""Puzzle 1 loading through tl.core.load, a second name for tl.load that the interpreter does not patch (issue 26,
class 1). Refused: a kernel names things in tl, tl.math and libdevice only."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets, tl.core.load(y_ptr + offsets, mask=mask) + x, mask=mask)
