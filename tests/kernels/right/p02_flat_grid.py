"""Puzzle 2 on a 1-D grid: each program finds its tile by dividing its id into (row block, column block)."""

import torch
import triton
import triton.language as tl


@triton.jit
def flat_outer_add_kernel(x_ptr, y_ptr, z_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr):
    column_blocks = tl.cdiv(N0, B0)
    pid = tl.program_id(0)
    cols = (pid % column_blocks) * B0 + tl.arange(0, B0)
    rows = (pid // column_blocks) * B1 + tl.arange(0, B1)
    x = tl.load(x_ptr + cols, mask=cols < N0)
    y = tl.load(y_ptr + rows, mask=rows < N1)
    mask = (rows < N1)[:, None] & (cols < N0)[None, :]
    tl.store(z_ptr + rows[:, None] * N0 + cols[None, :], x[None, :] + y[:, None], mask=mask)


def outer_add(x: torch.Tensor, y: torch.Tensor, B0: int = 64, B1: int = 64) -> torch.Tensor:
    z = torch.empty((y.numel(), x.numel()), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(x.numel(), B0) * triton.cdiv(y.numel(), B1),)
    flat_outer_add_kernel[grid](x, y, z, x.numel(), y.numel(), B0=B0, B1=B1)
    return z
