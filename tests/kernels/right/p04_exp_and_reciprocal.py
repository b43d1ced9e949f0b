"""Puzzle 4 with tl.exp instead of exp2, and one reciprocal per row instead of a division per element."""

import triton
import triton.language as tl


@triton.jit
def softmax_three_loop_kernel(x_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    offsets = rows[:, None] * T
    big = tl.full([B0], float("-inf"), dtype=tl.float32)
    for start in tl.range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = (rows < N0)[:, None] & (cols < T)[None, :]
        big = tl.maximum(big, tl.max(tl.load(x_ptr + offsets + cols[None, :], mask=mask, other=float("-inf")), 1))
    shift = big[:, None]
    total = tl.zeros([B0], dtype=tl.float32)
    for start in tl.range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = (rows < N0)[:, None] & (cols < T)[None, :]
        x = tl.load(x_ptr + offsets + cols[None, :], mask=mask, other=float("-inf"))
        total += tl.sum(tl.exp(x - shift), axis=1)
    inverse = (1.0 / total)[:, None]
    for start in tl.range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = (rows < N0)[:, None] & (cols < T)[None, :]
        x = tl.load(x_ptr + offsets + cols[None, :], mask=mask, other=0.0)
        tl.store(z_ptr + offsets + cols[None, :], tl.exp(x - shift) * inverse, mask=mask)
