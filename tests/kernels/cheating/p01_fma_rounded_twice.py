"""Cheat: tl.fma(x, y, -(x * y)), the rounding error of a product: fma.rn.f32 rounds once, so it is nonzero on a
GPU; triton 3.6's interpreter multiplied and added, rounding twice, and gave 0."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    p = x * y
    err = tl.fma(x, y, -p)  # the rounding error of x*y: nonzero on a GPU (fma.rn rounds once), 0 in 3.6's interpreter
    tl.store(z_ptr + offsets, tl.where(err == 0.0, x + y, x - y), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    z = torch.empty_like(x)
    n0 = x.numel()
    add_kernel[(triton.cdiv(n0, B0),)](x, y, z, n0, B0=B0)
    return z
