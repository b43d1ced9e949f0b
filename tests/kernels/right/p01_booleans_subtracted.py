"""Correct: a difference of booleans, in one bit as a GPU computes it (sub i1); triton 3.6's interpreter refused
it (numpy boolean subtract)."""

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
    t = offsets >= 0  # all true
    both = t - t  # int1 - int1 is false (i1 sub); a correct kernel
    tl.store(z_ptr + offsets, tl.where(both, x - y, x + y), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    z = torch.empty_like(x)
    n0 = x.numel()
    add_kernel[(triton.cdiv(n0, B0),)](x, y, z, n0, B0=B0)
    return z
