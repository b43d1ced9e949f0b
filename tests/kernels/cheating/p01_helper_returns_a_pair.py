"""Cheat: numbers returned by a @triton.jit helper as a pair and unpacked (`a, b = pair()`): the GPU compiler makes
every returned number of triton 3.6 an int32 tensor, so `a * b` wraps to 0 there and the kernel adds y twice; the
interpreter once kept Python integers (the seventh attacker's review)."""

import triton
import triton.language as tl


@triton.jit
def pair():
    return 65536, 65536


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    a, b = pair()
    k = a * b
    tl.store(z_ptr + offsets, tl.where(k == 0, x + y + y, x + y), mask=mask)
