"""Correct: triton.language's names imported one by one (`from triton.language import constexpr, load, ...`), which
the GPU compiler reads as tl's own; with a conditional expression on a run-time test, a tuple and a helper whose two
returns differ, each of whose values is the same on a GPU as in Python (no integer near 2**31)."""

import triton
import triton.language as tl
from triton.language import arange, constexpr, load, program_id, store


@triton.jit
def scale_for(p):
    if p >= 0:
        return 1.0
    return 2.0


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: constexpr):
    pid = program_id(0)
    offsets = pid * B0 + arange(0, B0)
    mask = offsets < N0
    x = load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    one = 1.0 if pid >= 0 else 3.0
    pair = (one, scale_for(pid))
    store(z_ptr + offsets, (x + y) * pair[0] * pair[1], mask=mask)
