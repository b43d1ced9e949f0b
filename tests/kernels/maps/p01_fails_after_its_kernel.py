"""Puzzle 1 whose kernel adds the first half of x and y, then whose launcher fails with an error."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    z = torch.empty_like(x)
    half = x.numel() // 2
    add_kernel[(triton.cdiv(half, B0),)](x, y, z, half, B0=B0)
    raise RuntimeError("the second half was never launched")
