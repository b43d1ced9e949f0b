"""Puzzle 1 whose interpreter branch reads inside tl's functions and passes `**` arguments (issue 26, class 1):
code only the allowlist reads, since the GPU compiles the other branch. Refused: nothing inside tl's functions, and
each keyword by its name."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    if B0 < 0:  # never taken: the branch is here for the allowlist alone
        options = tl.load.keywords
        tl.store(z_ptr + offsets, x + y, **options)
    tl.store(z_ptr + offsets, x + y, mask=mask)
