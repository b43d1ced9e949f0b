"""Puzzle 1 as one kernel on the GPU and another in the interpreter (issue 26, class 1): `tl.load is tl.core.load`
is True when the kernel is compiled and False in the interpreter, which runs a stand-in for tl.load. The interpreter
takes the `else` branch and adds; the GPU's kernel subtracts. Refused: identity is tested against None only."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    if tl.load is tl.core.load:  # the GPU's branch; the interpreter takes the other
        tl.store(z_ptr + offsets, x - y, mask=mask)
    else:
        tl.store(z_ptr + offsets, x + y, mask=mask)
