"""Puzzle 1 written oddly but right: the sign of x tested on a bfloat16 copy (rounding keeps the sign). The
interpreter once compared bfloat16 blocks as their uint16 bits and refused it."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    # x's sign, tested on a bfloat16 copy (right on a GPU: rounding to bfloat16 keeps the sign)
    neg = x.to(tl.bfloat16) < 0.0
    tl.store(z_ptr + offsets, tl.where(neg, -tl.abs(x), tl.abs(x)) + y, mask=mask)
