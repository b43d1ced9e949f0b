"""Cheat: as p05_one_block_per_row, with the tile under another name (BLOCK_T) than the case's B1."""

import torch
import triton
import triton.language as tl


@triton.jit
def whole_row_softmax_kernel(x_ptr, z_ptr, N0, T, ROWS: tl.constexpr, BLOCK_T: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_T)
    mask = (rows < N0)[:, None] & (cols < T)[None, :]
    x = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=float("-inf"))
    p = tl.exp(x - tl.max(x, axis=1)[:, None])
    tl.store(z_ptr + rows[:, None] * T + cols[None, :], p / tl.sum(p, axis=1)[:, None], mask=mask)


def softmax_online(x: torch.Tensor, B0: int = 1, B1: int = 4096) -> torch.Tensor:
    z = torch.empty_like(x)
    whole_row_softmax_kernel[(triton.cdiv(x.shape[0], B0),)](x, z, x.shape[0], x.shape[1], ROWS=B0,
                                                             BLOCK_T=triton.next_power_of_2(x.shape[1]))
    return z
