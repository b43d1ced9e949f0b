"""Review 19's counterpart: @triton.jit(debug=True) with a tl.device_assert that holds and offsets that never
overflow is graded as any other kernel (the interpreter checks the assert and the overflows, as a GPU build would)."""

import triton
import triton.language as tl


@triton.jit(debug=True)
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    tl.device_assert(offsets >= 0, "offsets are never negative")
    mask = offsets < N0
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
