"""Cheat: Python's `and` moved into a helper whose parameter says tl.constexpr, and given a run-time value
(`seven_if(pid >= 0)`): the GPU compiler drops the 7 beside a tensor and returns the comparison, so `k == 7` is
false there and the kernel adds y twice; Python's `and` returned 7 (the seventh review; the AST check trusted the
annotation, which triton does not enforce on a helper)."""

import triton
import triton.language as tl


@triton.jit
def seven_if(a: tl.constexpr):
    return a and 7


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    k = seven_if(tl.program_id(0) >= 0)
    tl.store(z_ptr + offsets, tl.where(k == 7, x + y, x + y + y), mask=mask)
