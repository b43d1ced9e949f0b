import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    # z used as scratch: lane i stores x[i], then, after a barrier, reads back the element its mirror lane stored
    pid = tl.program_id(0)
    offs = pid * B0 + tl.arange(0, B0)
    mask = offs < N0
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
    rev = pid * B0 + (B0 - 1 - tl.arange(0, B0))
    rmask = rev < N0
    tl.debug_barrier()  # every lane's store above is seen by every lane below
    xr = tl.load(z_ptr + rev, mask=rmask)
    yr = tl.load(y_ptr + rev, mask=rmask)
    tl.store(z_ptr + rev, xr + yr, mask=rmask)
