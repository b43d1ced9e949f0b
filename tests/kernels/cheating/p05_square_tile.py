"""Puzzle 5 as one block per row in disguise: a [B0, B1, B1] tile holds B1 x B1 columns, so no axis is wider
than the launcher's B1 and the whole row fits in one block (found by an attacker's review). Three axes of blocks
are refused where the lesson is a loop over two-axis tiles."""

import triton
import triton.language as tl


@triton.jit
def softmax_online_kernel(x_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    # the whole row at once, folded into a B1 x B1 square: no dimension is wider than B1
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    cols = tl.arange(0, B1)[:, None] * B1 + tl.arange(0, B1)[None, :]
    mask = (rows < N0)[:, None, None] & (cols < T)[None, :, :]
    offs = rows[:, None, None] * T + cols[None, :, :]
    x = tl.load(x_ptr + offs, mask=mask, other=float("-inf"))
    m = tl.max(tl.max(x, axis=2), axis=1)
    p = tl.exp(x - m[:, None, None])
    s = tl.sum(tl.sum(p, axis=2), axis=1)
    tl.store(z_ptr + offs, p / s[:, None, None], mask=mask)
