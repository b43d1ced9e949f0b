"""Puzzle 1 with a parameter the puzzle's kernel does not have (issue 26, class 8): the puzzle's launcher does not
pass it. Refused with a message that names it (it used to fail every case with "'NoneType' object has no attribute
'dtype'")."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, stride, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets * stride, x + y, mask=mask)
