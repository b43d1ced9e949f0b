import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    # z as scratch: lane i stores y[i ^ B0/4] at z[i ^ B0/4] (its partner's element, in another warp on a GPU);
    # then each lane reads its own element back, the one its partner stored, through an int64 pointer (two floats
    # per lane), with no tl.debug_barrier between: a load of what another lane stored, read 8 bytes at a time.
    pid = tl.program_id(0)
    offs = pid * B0 + tl.arange(0, B0)
    mask = offs < N0
    partner = offs ^ (B0 // 4)
    pmask = partner < N0
    tl.store(z_ptr + partner, tl.load(y_ptr + partner, mask=pmask), mask=pmask)
    paired = mask & (offs // 2 * 2 + 1 < N0)  # both floats of the pair inside z
    bits = tl.load(z_ptr.to(tl.pointer_type(tl.int64)) + offs // 2, mask=paired, other=0)
    half = tl.where(offs % 2 == 0, bits & 0xFFFFFFFF, (bits >> 32) & 0xFFFFFFFF)
    y_from_partner = half.to(tl.uint32).to(tl.float32, bitcast=True)
    y_own = tl.load(y_ptr + offs, mask=mask & ~paired)  # the last element of an odd N0
    y = tl.where(paired, y_from_partner, y_own)
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(z_ptr + offs, x + y, mask=mask)
