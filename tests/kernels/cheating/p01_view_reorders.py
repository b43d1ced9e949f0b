"""Cheat: x.view(...), which triton runs as a reshape with can_reorder=True (the compiler's order, not the
interpreter's): the keyword the allowlist checks is never written."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    # x.view is reshape(can_reorder=True): the GPU compiler may permute the elements
    x1 = x.view(B0 // 16, 16).view(B0)
    tl.store(z_ptr + offsets, x1 + y, mask=mask)
