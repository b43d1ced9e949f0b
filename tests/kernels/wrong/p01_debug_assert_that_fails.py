"""Review 19: a tl.device_assert that fails, in a kernel built with @triton.jit(debug=True): the GPU build checks it
and stops the kernel; the grader's interpreter checks it too, as the flag asks."""

import triton
import triton.language as tl


@triton.jit(debug=True)
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    tl.device_assert(offsets < B0, "only the first block may run")
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
