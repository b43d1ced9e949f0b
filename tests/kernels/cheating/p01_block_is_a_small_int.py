"""Puzzle 1 branching on `B0 is 1024` (issue 26, class 1): in the interpreter B0 is a Python int, and small ints are
one object, while the compiler holds it as a tl.constexpr, so the test differs. Refused: identity against None only."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    if B0 is 1024:  # noqa: F632 - True in the interpreter for the launcher's B0, False compiled
        tl.store(z_ptr + offsets, x - y, mask=mask)
    else:
        tl.store(z_ptr + offsets, x + y, mask=mask)
