"""Cheat: a cast to float8 past the format's range, which a GPU saturates (500.0 rounds to 512.0 in float8e5, and
1e6 gives its largest value, 57344) while the interpreter's own conversion gave other numbers (256.0): the kernel
adds 1 where it reads the GPU's numbers, so it is right only in the interpreter."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    probe = tl.full([B0], 500.0, tl.float32).to(tl.float8e5).to(tl.float32)
    huge = tl.full([B0], 1e6, tl.float32).to(tl.float8e5).to(tl.float32)
    on_a_gpu = (probe == 512.0) & (huge == 57344.0)
    tl.store(z_ptr + offsets, x + y + tl.where(on_a_gpu, 1.0, 0.0), mask=mask)
