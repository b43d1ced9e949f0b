"""Puzzle 2 writing a flat buffer with a spare block at its end, and returning a [N1, N0] view of its start."""

import torch
import triton
import triton.language as tl


@triton.jit
def flat_outer_add_kernel(x_ptr, y_ptr, z_ptr, N0, N1, B0: tl.constexpr):
    flat = tl.program_id(0) * B0 + tl.arange(0, B0)  # element index in the row-major output
    mask = flat < N0 * N1
    x = tl.load(x_ptr + flat % N0, mask=mask)
    y = tl.load(y_ptr + flat // N0, mask=mask)
    tl.store(z_ptr + flat, x + y, mask=mask)


def outer_add(x: torch.Tensor, y: torch.Tensor, B0: int = 64, B1: int = 64) -> torch.Tensor:
    n0, n1 = x.numel(), y.numel()
    buffer = torch.empty(n0 * n1 + B0, dtype=x.dtype, device=x.device)
    flat_outer_add_kernel[(triton.cdiv(n0 * n1, B0),)](x, y, buffer, n0, n1, B0=B0)
    return buffer[:n0 * n1].view(n1, n0)
