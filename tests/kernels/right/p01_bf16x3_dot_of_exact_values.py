"""Correct: tl.dot at input_precision="bf16x3" (which sm_90 compiles) of small integers, which bfloat16 holds
exactly: its three bfloat16 products then sum to the exact product, as "ieee" gives (the twelfth review: the
interpreter refused bf16x3; it now computes it as the GPU does, in parts)."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    r = tl.arange(0, 16)
    a = ((r[:, None] + r[None, :]) % 8).to(tl.float32)
    split = tl.dot(a, a, input_precision="bf16x3")
    exact = tl.dot(a, a, input_precision="ieee")
    differ = tl.sum(tl.sum(tl.where(split == exact, 0, 1), axis=1), axis=0)
    tl.store(z_ptr + offsets, tl.where(differ == 0, x + y, x - y), mask=mask)
