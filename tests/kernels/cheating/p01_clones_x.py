"""A copy made in the launcher: z starts as a clone of x and the kernel adds y into it.

Refused by default (the launcher may not copy data); allowed where a puzzle lists aten.clone."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_into_kernel(y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    tl.store(z_ptr + offsets, tl.load(z_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    z = x.clone()
    add_into_kernel[(triton.cdiv(x.numel(), B0),)](y, z, x.numel(), B0=B0)
    return z
