"""Puzzle 1 reading x and y two floats at a time through int64 pointers: lane j loads the 8 bytes of elements 2j
and 2j + 1. The mask holds each lane's first element below N0, so for an odd N0 the last lane's first 4 bytes
are inside x and its last 4 bytes past the end: out of bounds (a lane's last byte must lie inside too)."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    pairs = tl.program_id(0) * B0 + tl.arange(0, B0)
    ok = pairs * 2 < N0  # the bug: the pair's second element may be past the end
    x = tl.load(x_ptr.to(tl.pointer_type(tl.int64)) + pairs, mask=ok)
    y = tl.load(y_ptr.to(tl.pointer_type(tl.int64)) + pairs, mask=ok)
    for half in tl.static_range(2):
        a = ((x >> (32 * half)) & 0xFFFFFFFF).to(tl.uint32).to(tl.float32, bitcast=True)
        b = ((y >> (32 * half)) & 0xFFFFFFFF).to(tl.uint32).to(tl.float32, bitcast=True)
        tl.store(z_ptr + pairs * 2 + half, a + b, mask=pairs * 2 + half < N0)


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    z = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), 2 * B0),)](x, y, z, x.numel(), B0=B0)
    return z
