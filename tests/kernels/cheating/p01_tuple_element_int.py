"""Cheat: a number held in a tuple (`t = (65536, 1)`, then `t[0] * 65536`): the GPU compiler makes each element of
an assigned tuple an int32 tensor, so the product wraps to 0 there and the kernel adds y twice; the interpreter once
kept the tuple's Python integers (the seventh attacker's review)."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    t = (65536, 1)
    k = t[0] * 65536
    tl.store(z_ptr + offsets, tl.where(k == 0, x + y + y, x + y), mask=mask)
