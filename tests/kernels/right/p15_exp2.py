"""Right: p through exp2 with log2(e) folded in, the one-hot as a comparison, and ignored rows zeroed at the end."""

import triton
import triton.language as tl

IGNORE_INDEX = tl.constexpr(-100)


@triton.jit
def cross_entropy_backward_kernel(x_ptr, target_ptr, lse_ptr, dloss_ptr, counted_ptr, dx_ptr, V,
                                  BLOCK_V: tl.constexpr):
    LOG2E: tl.constexpr = 1.4426950408889634
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_V + tl.arange(0, BLOCK_V)
    target = tl.load(target_ptr + row)
    x = tl.load(x_ptr + row * V + cols, mask=cols < V, other=float("-inf"))
    p = tl.exp2((x - tl.load(lse_ptr + row)) * LOG2E)
    grad = (p - (cols == target).to(tl.float32)) * tl.load(dloss_ptr)
    grad = grad / tl.maximum(tl.load(counted_ptr), 1).to(tl.float32)
    keep = (target != IGNORE_INDEX) & (cols >= 0)
    tl.store(dx_ptr + row * V + cols, tl.where(keep, grad, 0.0), mask=cols < V)
