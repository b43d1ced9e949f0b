import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    # z comes from torch.empty: reading it before any store is reading uninitialised memory
    pid = tl.program_id(0)
    offs = pid * B0 + tl.arange(0, B0)
    mask = offs < N0
    old = tl.load(z_ptr + offs, mask=mask)
    s = tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask)
    tl.store(z_ptr + offs, tl.where(old != old, 0.0, old) + s, mask=mask)
