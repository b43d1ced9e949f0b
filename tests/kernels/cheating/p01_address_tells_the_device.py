"""Review 19: a kernel that reads its tensors' addresses. PyTorch's CUDA allocator puts each tensor on a 512-byte
boundary, CPU tensors seldom are, so the test below subtracts on a GPU and adds in the interpreter. Refused: a
pointer is never cast to a number (nor a number to a pointer)."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    aligned = (x_ptr.to(tl.int64, bitcast=True) | z_ptr.to(tl.int64, bitcast=True)) % 512 == 0
    tl.store(z_ptr + offsets, tl.where(aligned, x - y, x + y), mask=mask)
