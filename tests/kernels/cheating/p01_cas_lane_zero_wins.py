"""Cheat: every lane of a block compares-and-swaps one address, and the kernel is right only if lane 0 wins: on a
GPU which lane swaps first is not defined; the interpreter applied the lanes in order."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    lane = tl.arange(0, B0)
    offsets = pid * B0 + lane
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    first = z_ptr + pid * B0 + lane * 0  # every lane: this program's first element of z
    tl.store(first, tl.zeros([B0], dtype=tl.float32), mask=lane == 0)
    tl.debug_barrier()
    # every lane tries to swap 0 for its own number: one wins; the interpreter always lets lane 0 win (lane order),
    # a GPU any lane (threads' atomics on one address land in no defined order)
    old = tl.atomic_cas(first, tl.zeros([B0], dtype=tl.float32), (lane + 1).to(tl.float32))
    lane0_won = tl.max(tl.where((old == 0.0) & (lane == 0), 1, 0), axis=0)
    tl.debug_barrier()
    tl.store(z_ptr + offsets, tl.where(lane0_won == 1, x + y, x - y), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    z = torch.empty_like(x)
    n0 = x.numel()
    add_kernel[(triton.cdiv(n0, B0),)](x, y, z, n0, B0=B0)
    return z
