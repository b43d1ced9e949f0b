"""Puzzle 1 with @triton.autotune choosing the block size and warps.

The launcher ignores B0: the autotuner picks among its configs (the interpreter runs only the first).
"""

import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": 256}, num_warps=4), triton.Config({"BLOCK": 1024}, num_warps=8),
             triton.Config({"BLOCK": 64}, num_warps=2)],
    key=["N0"],
)
@triton.jit
def autotuned_add_kernel(x_ptr, y_ptr, z_ptr, N0, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < N0
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    """The grid follows the block the autotuner chose."""
    z = torch.empty_like(x)
    autotuned_add_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, z, x.numel())
    return z
