"""Correct: tl.sum of int32 values whose total passes 2**31 wraps in 32 bits on a GPU (32 lanes of 2**30 give 0);
triton 3.6's interpreter refused the total (OverflowError)."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    big = tl.full([B0], 1073741824, tl.int32)
    s = tl.sum(big, axis=0)  # 16 or more lanes of 2**30 wrap to 0 in int32
    tl.store(z_ptr + offsets, x + y + s.to(tl.float32), mask=mask)
