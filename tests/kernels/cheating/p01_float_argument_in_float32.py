"""Cheat: a float parameter with a default (S=1e30): a GPU's launch passes it as a float32, so S * 1e10 is inf; the
interpreter kept the Python float (1e40)."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr, S=1e30):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    t = S * 1e10  # a float32 argument: inf on a GPU
    tl.store(z_ptr + offsets, x + y + tl.where(t == float("inf"), 1.0, 0.0), mask=mask)
