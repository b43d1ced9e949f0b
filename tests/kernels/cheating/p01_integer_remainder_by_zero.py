import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    # a remainder by zero on the masked lanes only: numpy gives 0 there, a GPU another value
    shift = offsets % tl.where(mask, 1, 0)
    tl.store(z_ptr + offsets + shift, x + y, mask=mask)
