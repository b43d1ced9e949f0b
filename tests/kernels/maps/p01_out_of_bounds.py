"""Puzzle 1 without its mask: the last program's lanes run past N0, and the grader stops that load."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    z = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), B0),)](x, y, z, x.numel(), B0=B0)
    return z
