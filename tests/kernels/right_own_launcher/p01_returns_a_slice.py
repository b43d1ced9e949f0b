"""Puzzle 1 writing into a buffer padded to whole blocks (so the kernel needs no mask on its store) and
returning the slice that holds the answer. Judged by storage: every returned element was stored."""

import torch
import triton
import triton.language as tl


@triton.jit
def padded_add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    tl.store(z_ptr + offsets, x + y)  # the buffer has room for the whole last block


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    blocks = triton.cdiv(x.numel(), B0)
    padded = torch.empty(blocks * B0, dtype=x.dtype, device=x.device)
    padded_add_kernel[(blocks,)](x, y, padded, x.numel(), B0=B0)
    return padded[:x.numel()]
