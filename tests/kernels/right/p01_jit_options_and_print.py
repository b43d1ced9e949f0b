"""Puzzle 1 with arguments to @triton.jit and a debug print (issue 26, class 7): both are legal Triton.
`do_not_specialize` changes how Triton specialises the kernel, not what it computes; `print` in a kernel is a device
print when compiled and Python's print in the interpreter. The printed lines go to the grader's quoted output, not
into the report."""

import triton
import triton.language as tl


@triton.jit(do_not_specialize=["N0"])
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    if tl.program_id(0) == 0:
        print("first block of z", x + y)
    tl.store(z_ptr + offsets, x + y, mask=mask)
