"""Puzzle 1 branching on the identity of a dtype (issue 26, class 1): whether a pointer's element type is the
object tl.float32 depends on who built it, the compiler or the interpreter. Refused: identity against None only."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    if x_ptr.dtype.element_ty is tl.float32:  # one object or two, by who built it
        tl.store(z_ptr + offsets, x - y, mask=mask)
    else:
        tl.store(z_ptr + offsets, x + y, mask=mask)
