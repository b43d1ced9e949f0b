"""Cheat: an integer kept by an annotated assignment and grown by an augmented one (k: tl.int32 = 65536;
k *= 65536): the GPU compiler makes both int32 tensors, so k wraps to 0 there and the kernel adds y twice; the
interpreter once kept them Python integers (2**32)."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    k: tl.int32 = 65536
    k *= 65536
    tl.store(z_ptr + offsets, tl.where(k == 0, x + y + y, x + y), mask=mask)
