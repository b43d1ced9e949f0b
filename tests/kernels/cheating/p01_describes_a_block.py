"""Puzzle 1 branching on a block's description (issue 26, class 1, found while closing it): `"%s" % x` is the block's
numbers in the interpreter, which patches a block's str, and a description of its type when compiled, so a test on
it is a constexpr that differs between the two. Refused: a string in a kernel is a call's argument and nothing else."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    if len("%s" % x_ptr) > 24:  # noqa: UP031 - the GPU's branch; the interpreter takes the other
        tl.store(z_ptr + offsets, x - y, mask=mask)
    else:
        tl.store(z_ptr + offsets, x + y, mask=mask)
