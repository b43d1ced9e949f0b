"""Cheat: tl.maximum of +0.0 and -0.0, which is +0.0 on a GPU (PTX max orders -0.0 below +0.0) and was -0.0 in the
interpreter (numpy returned its second operand on the tie): 1 / m picks the right answer only in the interpreter."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    plus = x * 0.0 * x * 0.0
    m = tl.maximum(plus * plus, -(plus * plus))
    tl.store(z_ptr + offsets, tl.where(1.0 / m < 0.0, x + y, x - y), mask=mask)
