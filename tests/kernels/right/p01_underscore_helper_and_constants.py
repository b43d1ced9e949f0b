"""Puzzle 1 with a helper named with a leading underscore and module constants written the ways README shows
(issue 26, class 8): `SCALE = 1.0` and `STEP: tl.constexpr = 1` are plain numbers to Python, and the grader hands
them to the GPU compiler as tl.constexpr, which is the only kind of global it reads."""

import triton
import triton.language as tl

SCALE = 1.0
STEP: tl.constexpr = 1


@triton.jit
def _add_values(x, y):
    return x + y * STEP


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets, _add_values(x, y) * SCALE, mask=mask)
