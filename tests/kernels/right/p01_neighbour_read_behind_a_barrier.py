"""Puzzle 1 through z as scratch: z first holds x, then each lane loads its own element of z and its left-hand
neighbour's (which the neighbour's lane stored, seen after a tl.debug_barrier()), and a second barrier between
those loads and the stores makes every lane's load happen before any lane overwrites its element: no lane
races."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * B0 + tl.arange(0, B0)
    mask = offs < N0
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
    tl.debug_barrier()  # every lane's store above is seen by every lane below
    left = offs - 1
    lmask = mask & (offs > pid * B0)  # the neighbour inside this program's block
    mine = tl.load(z_ptr + offs, mask=mask)
    theirs = tl.load(z_ptr + left, mask=lmask, other=0.0)
    theirs_x = tl.load(x_ptr + left, mask=lmask, other=0.0)
    tl.debug_barrier()  # every lane's loads above are done before any lane's store below
    tl.store(z_ptr + offs, mine + tl.load(y_ptr + offs, mask=mask) + (theirs - theirs_x), mask=mask)
