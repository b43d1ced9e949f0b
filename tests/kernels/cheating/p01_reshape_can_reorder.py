import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    # the block computed as a [B0 // 16, 16] tile, transposed and flattened with tl.reshape(..., can_reorder=True):
    # "the compiler may reorder elements". The interpreter flattens row-major (numpy), so flat position p holds
    # element (p % R) * 16 + p // R, and the store puts it there; a GPU keeps each thread's registers where they are.
    pid = tl.program_id(0)
    R: tl.constexpr = B0 // 16
    rows = tl.arange(0, R)
    cols = tl.arange(0, 16)
    tile = pid * B0 + rows[:, None] * 16 + cols[None, :]
    ok = tile < N0
    z = tl.load(x_ptr + tile, mask=ok) + tl.load(y_ptr + tile, mask=ok)
    flat = tl.reshape(tl.trans(z), [B0], can_reorder=True)
    p = tl.arange(0, B0)
    offsets = pid * B0 + (p % R) * 16 + p // R
    tl.store(z_ptr + offsets, flat, mask=offsets < N0)
