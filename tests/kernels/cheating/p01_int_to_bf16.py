"""Cheat: an integer cast to bfloat16 (7 -> 7.0 on a GPU), which the interpreter once put into the uint16 bits (a
tiny denormal): the kernel branches on it."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    # an int32 converted to bfloat16: 7.0 on a GPU; if the interpreter casts 7 into the uint16 bits, a tiny denormal
    seven = (offsets * 0 + 7).to(tl.bfloat16).to(tl.float32)
    tl.store(z_ptr + offsets, x + y + tl.where(seven > 1.0, 1.0, 0.0), mask=mask)
