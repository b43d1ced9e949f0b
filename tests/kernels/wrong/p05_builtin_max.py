"""Puzzle 5 one row at a time, and the builtin max for the running max.

On scalars the interpreter's Python max happens to agree, so the values pass; on blocks it returns one
argument whole (any block counts as true). The AST check refuses the builtin on run-time values and
points to tl.maximum.
"""

import triton
import triton.language as tl


@triton.jit
def softmax_online_kernel(x_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    for i in tl.static_range(B0):
        row = tl.program_id(0) * B0 + i
        if row < N0:
            m = -float("inf")
            d = 0.0
            for start in tl.range(0, T, B1):
                cols = start + tl.arange(0, B1)
                x = tl.load(x_ptr + row * T + cols, mask=cols < T, other=float("-inf"))
                new_m = max(m, tl.max(x, axis=0))
                d = d * tl.exp(m - new_m) + tl.sum(tl.exp(x - new_m), axis=0)
                m = new_m
            for start in tl.range(0, T, B1):
                cols = start + tl.arange(0, B1)
                x = tl.load(x_ptr + row * T + cols, mask=cols < T)
                tl.store(z_ptr + row * T + cols, tl.exp(x - m) / d, mask=cols < T)
