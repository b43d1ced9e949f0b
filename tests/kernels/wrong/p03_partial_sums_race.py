"""Puzzle 3 split along the row too: a 2-D grid where program (r, c) sums block c of row r and adds it
into z[r] with a load and a store. The interpreter runs programs one after another, so the sums come out
right; on a GPU the programs of one row run at the same time and lose each other's updates."""

import torch
import triton
import triton.language as tl


@triton.jit
def split_row_sum_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * B1 + tl.arange(0, B1)
    partial = tl.sum(tl.load(x_ptr + row * T + cols, mask=cols < T, other=0.0), axis=0)
    tl.store(z_ptr + row, tl.load(z_ptr + row) + partial)  # a read-modify-write shared by the row's programs


def row_sum(x: torch.Tensor, B0: int = 1, B1: int = 1024) -> torch.Tensor:
    n0, t = x.shape
    z = torch.zeros(n0, dtype=x.dtype, device=x.device)
    split_row_sum_kernel[(n0, triton.cdiv(t, B1))](x, z, n0, t, B1=B1)
    return z
