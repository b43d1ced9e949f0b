"""Review 19: @triton.jit(debug=True) compiles an overflow check into every int32 + and * of the GPU build, and a
failing one stops the kernel. This kernel's hash overflows on every lane (and never changes what it stores), so on
a GPU it traps; triton's interpreter ignores the flag. The grader runs the kernel with the flag it was given."""

import triton
import triton.language as tl


@triton.jit(debug=True)
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    mixed = (offsets + 40000) * 65537
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets, tl.where(mixed != 3, x + tl.load(y_ptr + offsets, mask=mask), x), mask=mask)
