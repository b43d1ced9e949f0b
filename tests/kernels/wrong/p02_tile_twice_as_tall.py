"""Puzzle 2 with each program's tile twice as tall as its block of rows: program (i, j) stores rows j*B1 ..
j*B1 + 2*B1 - 1, so every row but the first block's is stored by two programs, with the same values. The values
are right, yet it fails as a race: each output element is written by one program (here z was written 1.9 times
over, work done twice)."""

import torch
import triton
import triton.language as tl


@triton.jit
def outer_add_kernel(x_ptr, y_ptr, z_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr):
    cols = tl.program_id(0) * B0 + tl.arange(0, B0)
    rows = tl.program_id(1) * B1 + tl.arange(0, 2 * B1)  # the bug: two blocks of rows
    x = tl.load(x_ptr + cols, mask=cols < N0)
    y = tl.load(y_ptr + rows, mask=rows < N1)
    mask = (rows[:, None] < N1) & (cols[None, :] < N0)
    tl.store(z_ptr + rows[:, None] * N0 + cols[None, :], y[:, None] + x[None, :], mask=mask)


def outer_add(x: torch.Tensor, y: torch.Tensor, B0: int = 64, B1: int = 64) -> torch.Tensor:
    n0, n1 = x.numel(), y.numel()
    z = torch.empty((n1, n0), dtype=x.dtype, device=x.device)
    outer_add_kernel[(triton.cdiv(n0, B0), triton.cdiv(n1, B1))](x, y, z, n0, n1, B0=B0, B1=B1)
    return z
