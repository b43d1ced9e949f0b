"""Cheat: -1.0 < 1.0 on bfloat16 blocks, which the interpreter once compared as their uint16 bits (0xBF80 <
0x3F80 is False) and a GPU as numbers (True): the kernel adds 1 wherever the GPU says True."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    a = (x * 0.0 - 1.0).to(tl.bfloat16)
    b = (x * 0.0 + 1.0).to(tl.bfloat16)
    # -1 < 1 on a GPU; on bfloat16 kept as uint16 bits, 0xBF80 < 0x3F80 is false
    tl.store(z_ptr + offsets, x + y + tl.where(a < b, 1.0, 0.0), mask=mask)
