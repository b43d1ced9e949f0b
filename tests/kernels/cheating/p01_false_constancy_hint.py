import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    # a compiler hint that is false whenever N0 % 4 != 0: "the mask is constant in runs of 4 lanes". The interpreter
    # ignores hints; the GPU compiler believes it and predicates each 4-wide vector access by its first lane
    mask = tl.max_constancy(offsets < N0, 4)
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets, x + y, mask=mask)
