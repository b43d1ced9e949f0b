"""Puzzle 1 with no mask at all: the last program shifts its block back to end at N0, so it recomputes
elements its neighbour already stored. Both store the same values, yet it fails as a race: each output
element is written by one program (the overlap is work done twice, and which store lands last is up to the
GPU). The right way is a mask on the last block. (Needs N0 >= B0; smaller vectors use one block of the next
power of two with a mask.)"""

import torch
import triton
import triton.language as tl


@triton.jit
def overlapping_add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    start = tl.minimum(tl.program_id(0) * B0, N0 - B0)
    offsets = start + tl.arange(0, B0)
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))


@triton.jit
def small_add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    mask = offsets < N0
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    z = torch.empty_like(x)
    n0 = x.numel()
    if n0 >= B0:
        overlapping_add_kernel[(triton.cdiv(n0, B0),)](x, y, z, n0, B0=B0)
    elif n0:
        small_add_kernel[(1,)](x, y, z, n0, B0=triton.next_power_of_2(n0))
    return z
