"""Puzzle 1 with the last program's block shifted back to end at N0, instead of masked: it recomputes elements
its neighbour already stored. Both store the same values, yet it fails as a race: each output element is
written by one program (the overlap is work done twice, and which store lands last is up to the GPU). The
right way is a mask on the last block. (The mask here is false only where N0 < B0, where nothing overlaps.)"""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    start = tl.maximum(tl.minimum(tl.program_id(0) * B0, N0 - B0), 0)  # the last block shifted back
    offsets = start + tl.arange(0, B0)
    mask = offsets < N0
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    z = torch.empty_like(x)
    n0 = x.numel()
    add_kernel[(triton.cdiv(n0, B0),)](x, y, z, n0, B0=B0)
    return z
