import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    # a write after a read between the lanes of one program: z first holds x (a barrier makes every lane's store
    # seen), then each lane loads its own element of z and the one of its left-hand neighbour in the block, and
    # stores the sum over its own element with no barrier between those loads and the store. The interpreter runs
    # every lane of each load before the store, so the neighbour's element still holds x; on a GPU the neighbour is
    # another thread (another warp) that may already have stored its sum there, and this lane adds its y too.
    pid = tl.program_id(0)
    offs = pid * B0 + tl.arange(0, B0)
    mask = offs < N0
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
    tl.debug_barrier()
    left = offs - 1
    lmask = mask & (offs > pid * B0)  # the neighbour inside this program's block
    mine = tl.load(z_ptr + offs, mask=mask)
    theirs = tl.load(z_ptr + left, mask=lmask, other=0.0)
    theirs_x = tl.load(x_ptr + left, mask=lmask, other=0.0)
    tl.store(z_ptr + offs, mine + tl.load(y_ptr + offs, mask=mask) + (theirs - theirs_x), mask=mask)
