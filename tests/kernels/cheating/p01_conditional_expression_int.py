"""Cheat: a number chosen by a conditional expression on a run-time test (`65536 if pid >= 0 else 1`): the GPU
compiler makes the chosen branch an int32 tensor, so `k * 65536` wraps to 0 there and the kernel adds y twice; the
interpreter once ran Python's conditional and kept 2**32 (the seventh attacker's review)."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    k = (65536 if tl.program_id(0) >= 0 else 1) * 65536
    tl.store(z_ptr + offsets, tl.where(k == 0, x + y + y, x + y), mask=mask)
