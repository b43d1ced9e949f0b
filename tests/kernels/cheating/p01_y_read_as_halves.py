"""Review 19: a pointer parameter annotated with another element type. On a GPU `y_ptr: tl.pointer_type(tl.float16)`
reads y's float32 bytes as pairs of float16 halves; the interpreter ignores the annotation and reads y as it is."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr: tl.pointer_type(tl.float16), z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + y, mask=mask)
