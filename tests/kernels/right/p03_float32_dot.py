"""Puzzle 3 with the row sums as a float32 tl.dot of each tile with a block of ones: tl.dot on float32 operands
stays legal where a puzzle's spec is float32 (the 16-bit rule is for the tensor-core puzzles, 11-13).
input_precision="ieee" keeps the products exact float32 on the GPU (its default, TF32, rounds them). Rows go 16
to a program, the smallest tl.dot the GPU takes, whatever B0 the case asks for."""

import torch
import triton
import triton.language as tl

ROWS = 16  # rows per program: a tl.dot needs every dimension >= 16


@triton.jit
def row_sum_dot_kernel(x_ptr, z_ptr, N0, T, ROWS: tl.constexpr, B1: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < N0
    ones = tl.full([B1, 16], 1.0, dtype=tl.float32)
    acc = tl.zeros([ROWS, 16], dtype=tl.float32)
    for start in tl.range(0, T, B1):
        cols = start + tl.arange(0, B1)
        tile = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=row_ok[:, None] & (cols[None, :] < T),
                       other=0.0)
        acc = tl.dot(tile, ones, acc, input_precision="ieee")  # every column of acc holds the row sums
    tl.store(z_ptr + rows, tl.max(acc, axis=1), mask=row_ok)


def row_sum(x: torch.Tensor, B0: int = 1, B1: int = 1024) -> torch.Tensor:
    n0, t = x.shape
    z = torch.empty(n0, dtype=x.dtype, device=x.device)
    row_sum_dot_kernel[(triton.cdiv(n0, ROWS),)](x, z, n0, t, ROWS=ROWS, B1=max(B1, 16))
    return z
