"""Cheat: a @triton.jit helper whose two returns differ (65536 or 1, on a run-time test): the GPU compiler makes the
returned number an int32 tensor (triton 3.6 always, 3.9 when a helper's returns differ), so `big(pid) * 65536` wraps
to 0 there and the kernel adds y twice; the interpreter once returned a Python integer (the seventh review)."""

import triton
import triton.language as tl


@triton.jit
def big(p):
    if p >= 0:
        return 65536
    return 1


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    k = big(tl.program_id(0)) * 65536
    tl.store(z_ptr + offsets, tl.where(k == 0, x + y + y, x + y), mask=mask)
