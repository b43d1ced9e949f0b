import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    # two stores of one program, by different lanes, into one element, with no tl.debug_barrier between: lane i
    # first writes garbage into its partner's element (another warp on a GPU), then its own right value. The
    # interpreter runs every lane of the first store before the second; on a GPU the partner's warp may reach its
    # second store first, and the garbage lands last.
    pid = tl.program_id(0)
    offs = pid * B0 + tl.arange(0, B0)
    mask = offs < N0
    partner = offs ^ (B0 // 4)
    tl.store(z_ptr + partner, tl.full([B0], 12345.0, tl.float32), mask=partner < N0)
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(z_ptr + offs, x + y, mask=mask)
