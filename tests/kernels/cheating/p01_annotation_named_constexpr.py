"""Cheat: an annotation whose name holds "constexpr" but whose value is not tl.constexpr (`k: WIDE_constexpr =
65536`): the GPU compiler compares the annotation's value with tl.constexpr, so k is an int32 tensor there and
`k * 65536` wraps to 0 (y added twice); the interpreter once judged the annotation by its text (the seventh review)."""

import triton
import triton.language as tl

WIDE_constexpr = tl.constexpr(32)


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    k: WIDE_constexpr = 65536
    w = k * 65536
    tl.store(z_ptr + offsets, tl.where(w == 0, x + y + y, x + y), mask=mask)
