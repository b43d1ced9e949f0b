"""Correct: N0 widened with tl.cast(N0, tl.int64), which compiles where N0 is 1 (case 'single element'): a GPU's JIT
makes an integer argument equal to 1 a tl.constexpr, a Python int with no .to() (N0.to(tl.int64) does not compile
there, and the grader's compile check, which specializes 1 as the JIT does, refuses it)."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * B0 + tl.arange(0, B0)
    mask = offsets < tl.cast(N0, tl.int64)
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    tl.store(z_ptr + offsets, x + y, mask=mask)
