"""Puzzle 5 with a whole row held in a dozen separate [B0, B1] tiles (issue 26, class 3): x is read once, and
every tile is as wide as the launcher's, so neither the budget nor the tile-width check sees it. It is right on
every row of at most 12 blocks, and wrong on a longer one: the case of 65 blocks per row leaves columns from
12 * B1 on never written."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_online_kernel(x_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    cols = tl.arange(0, B1)
    ok = (rows < N0)[:, None]
    base = x_ptr + rows[:, None] * T + cols[None, :]
    out = z_ptr + rows[:, None] * T + cols[None, :]
    x0 = tl.load(base + 0 * B1, mask=ok & (cols[None, :] < T - 0 * B1), other=float("-inf"))
    x1 = tl.load(base + 1 * B1, mask=ok & (cols[None, :] < T - 1 * B1), other=float("-inf"))
    x2 = tl.load(base + 2 * B1, mask=ok & (cols[None, :] < T - 2 * B1), other=float("-inf"))
    x3 = tl.load(base + 3 * B1, mask=ok & (cols[None, :] < T - 3 * B1), other=float("-inf"))
    x4 = tl.load(base + 4 * B1, mask=ok & (cols[None, :] < T - 4 * B1), other=float("-inf"))
    x5 = tl.load(base + 5 * B1, mask=ok & (cols[None, :] < T - 5 * B1), other=float("-inf"))
    x6 = tl.load(base + 6 * B1, mask=ok & (cols[None, :] < T - 6 * B1), other=float("-inf"))
    x7 = tl.load(base + 7 * B1, mask=ok & (cols[None, :] < T - 7 * B1), other=float("-inf"))
    x8 = tl.load(base + 8 * B1, mask=ok & (cols[None, :] < T - 8 * B1), other=float("-inf"))
    x9 = tl.load(base + 9 * B1, mask=ok & (cols[None, :] < T - 9 * B1), other=float("-inf"))
    x10 = tl.load(base + 10 * B1, mask=ok & (cols[None, :] < T - 10 * B1), other=float("-inf"))
    x11 = tl.load(base + 11 * B1, mask=ok & (cols[None, :] < T - 11 * B1), other=float("-inf"))
    m = tl.max(x0, axis=1)
    m = tl.maximum(m, tl.max(x1, axis=1))
    m = tl.maximum(m, tl.max(x2, axis=1))
    m = tl.maximum(m, tl.max(x3, axis=1))
    m = tl.maximum(m, tl.max(x4, axis=1))
    m = tl.maximum(m, tl.max(x5, axis=1))
    m = tl.maximum(m, tl.max(x6, axis=1))
    m = tl.maximum(m, tl.max(x7, axis=1))
    m = tl.maximum(m, tl.max(x8, axis=1))
    m = tl.maximum(m, tl.max(x9, axis=1))
    m = tl.maximum(m, tl.max(x10, axis=1))
    m = tl.maximum(m, tl.max(x11, axis=1))
    d = tl.sum(tl.exp(x0 - m[:, None]), axis=1)
    d += tl.sum(tl.exp(x1 - m[:, None]), axis=1)
    d += tl.sum(tl.exp(x2 - m[:, None]), axis=1)
    d += tl.sum(tl.exp(x3 - m[:, None]), axis=1)
    d += tl.sum(tl.exp(x4 - m[:, None]), axis=1)
    d += tl.sum(tl.exp(x5 - m[:, None]), axis=1)
    d += tl.sum(tl.exp(x6 - m[:, None]), axis=1)
    d += tl.sum(tl.exp(x7 - m[:, None]), axis=1)
    d += tl.sum(tl.exp(x8 - m[:, None]), axis=1)
    d += tl.sum(tl.exp(x9 - m[:, None]), axis=1)
    d += tl.sum(tl.exp(x10 - m[:, None]), axis=1)
    d += tl.sum(tl.exp(x11 - m[:, None]), axis=1)
    tl.store(out + 0 * B1, tl.exp(x0 - m[:, None]) / d[:, None], mask=ok & (cols[None, :] < T - 0 * B1))
    tl.store(out + 1 * B1, tl.exp(x1 - m[:, None]) / d[:, None], mask=ok & (cols[None, :] < T - 1 * B1))
    tl.store(out + 2 * B1, tl.exp(x2 - m[:, None]) / d[:, None], mask=ok & (cols[None, :] < T - 2 * B1))
    tl.store(out + 3 * B1, tl.exp(x3 - m[:, None]) / d[:, None], mask=ok & (cols[None, :] < T - 3 * B1))
    tl.store(out + 4 * B1, tl.exp(x4 - m[:, None]) / d[:, None], mask=ok & (cols[None, :] < T - 4 * B1))
    tl.store(out + 5 * B1, tl.exp(x5 - m[:, None]) / d[:, None], mask=ok & (cols[None, :] < T - 5 * B1))
    tl.store(out + 6 * B1, tl.exp(x6 - m[:, None]) / d[:, None], mask=ok & (cols[None, :] < T - 6 * B1))
    tl.store(out + 7 * B1, tl.exp(x7 - m[:, None]) / d[:, None], mask=ok & (cols[None, :] < T - 7 * B1))
    tl.store(out + 8 * B1, tl.exp(x8 - m[:, None]) / d[:, None], mask=ok & (cols[None, :] < T - 8 * B1))
    tl.store(out + 9 * B1, tl.exp(x9 - m[:, None]) / d[:, None], mask=ok & (cols[None, :] < T - 9 * B1))
    tl.store(out + 10 * B1, tl.exp(x10 - m[:, None]) / d[:, None], mask=ok & (cols[None, :] < T - 10 * B1))
    tl.store(out + 11 * B1, tl.exp(x11 - m[:, None]) / d[:, None], mask=ok & (cols[None, :] < T - 11 * B1))


def softmax_online(x: torch.Tensor, B0: int = 1, B1: int = 64) -> torch.Tensor:
    n0, t = x.shape
    z = torch.empty_like(x)
    softmax_online_kernel[(triton.cdiv(n0, B0),)](x, z, n0, t, B0=B0, B1=B1)
    return z
