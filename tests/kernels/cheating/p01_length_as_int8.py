"""Review 19: a parameter annotated with a dtype. On a GPU `N0: tl.int8` makes the launcher pass N0 as an 8-bit
integer (200 arrives as -56, so no lane is inside the mask and z stays unwritten); the interpreter ignores the
annotation and adds correctly. Refused: a parameter is annotated tl.constexpr or not at all."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0: tl.int8, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
