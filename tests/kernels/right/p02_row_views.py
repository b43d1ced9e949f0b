"""Puzzle 2 with one launch per row of z, each on the view z[i] (and y[i:i + 1]): the puzzle's own kernel, given
one row at a time. Stores through views of the returned output are stores into it, so every element counts as
written."""

import torch
import triton
import triton.language as tl


@triton.jit
def outer_add_kernel(x_ptr, y_ptr, z_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr):
    cols = tl.program_id(0) * B0 + tl.arange(0, B0)
    rows = tl.program_id(1) * B1 + tl.arange(0, B1)
    x = tl.load(x_ptr + cols, mask=cols < N0)
    y = tl.load(y_ptr + rows, mask=rows < N1)
    mask = (rows[:, None] < N1) & (cols[None, :] < N0)
    tl.store(z_ptr + rows[:, None] * N0 + cols[None, :], y[:, None] + x[None, :], mask=mask)


def outer_add(x: torch.Tensor, y: torch.Tensor, B0: int = 64, B1: int = 64) -> torch.Tensor:
    n0, n1 = x.numel(), y.numel()
    z = torch.empty((n1, n0), dtype=x.dtype, device=x.device)
    for i in range(n1):  # a row is a block of one row: B1 = 1
        outer_add_kernel[(triton.cdiv(n0, B0), 1)](x, y[i:i + 1], z[i], n0, 1, B0=B0, B1=1)
    return z
