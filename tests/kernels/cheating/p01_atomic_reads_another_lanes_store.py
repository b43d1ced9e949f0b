"""Cheat: puzzle 1 with z as scratch: each lane stores its x with a plain store, then reads its mirror lane's
element back through tl.atomic_add(z, 0), with no barrier between (the sixteenth review): on a GPU the mirror
thread (another warp) may not have stored yet. An atomic reads as a load does."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    # z as scratch: lane i stores x[i] with a plain store, then lane i reads its mirror lane's element back
    # through an atomic (atomic_add of 0 returns what it found), with no barrier between: on a GPU the
    # mirror thread (another warp) may not have stored yet
    pid = tl.program_id(0)
    offs = pid * B0 + tl.arange(0, B0)
    mask = offs < N0
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
    rev = pid * B0 + (B0 - 1 - tl.arange(0, B0))
    rmask = rev < N0
    xr = tl.atomic_add(z_ptr + rev, 0.0, mask=rmask, sem="relaxed")
    yr = tl.load(y_ptr + rev, mask=rmask)
    tl.debug_barrier()
    tl.store(z_ptr + rev, xr + yr, mask=rmask)
