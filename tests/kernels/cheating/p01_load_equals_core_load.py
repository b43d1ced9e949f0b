"""Puzzle 1 branching on `tl.load == tl.core.load` (issue 26, class 1): the same door as `is`, opened with `==`.
Refused: tl's functions are called, never compared or passed, and tl.core is Triton's internals."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    if tl.load == tl.core.load:  # the GPU's branch; the interpreter takes the other
        tl.store(z_ptr + offsets, x - y, mask=mask)
    else:
        tl.store(z_ptr + offsets, x + y, mask=mask)
