"""Puzzle 5 with a whole row in one [B1, B1] tile (row * T + i * B1 + j): two axes, neither wider than B1, and no loop
over column blocks (found by an attacker's review). A block may hold what a tile of the launcher's blocks holds."""

import triton
import triton.language as tl


@triton.jit
def softmax_online_kernel(
    x_ptr,
    z_ptr,
    N0,
    T,
    B0: tl.constexpr,
    B1: tl.constexpr,
):
    # a whole row in one [B1, B1] tile: no loop over column blocks, one pass
    cols = tl.arange(0, B1)[:, None] * B1 + tl.arange(0, B1)[None, :]
    for r in tl.static_range(B0):
        row = tl.program_id(0) * B0 + r
        mask = (cols < T) & (row < N0)
        x = tl.load(x_ptr + row * T + cols, mask=mask, other=float("-inf"))
        m = tl.max(tl.max(x, axis=1), axis=0)
        e = tl.exp(x - m)
        e = tl.where(mask, e, 0.0)
        s = tl.sum(tl.sum(e, axis=1), axis=0)
        tl.store(z_ptr + row * T + cols, e / s, mask=mask)
