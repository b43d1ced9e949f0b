import triton
import triton.language as tl

IGNORE_INDEX = tl.constexpr(-100)


@triton.jit
def cross_entropy_backward_kernel(x_ptr, target_ptr, lse_ptr, dloss_ptr, counted_ptr, dx_ptr, V,
                                  BLOCK_V: tl.constexpr, WIDE: tl.constexpr = 131072):
    row = tl.program_id(0)
    if tl.program_id(1) == 0:
        cols = tl.arange(0, WIDE)
        col_ok = cols < V
        offsets = row.to(tl.int64) * V + cols
        target = tl.load(target_ptr + row)
        counted = tl.load(counted_ptr)
        factor = tl.load(dloss_ptr) / tl.maximum(counted, 1).to(tl.float32)
        factor = tl.where(target == IGNORE_INDEX, 0.0, factor)
        x = tl.load(x_ptr + offsets, mask=col_ok, other=float("-inf"))
        m = tl.max(x)
        e = tl.exp(x - m)
        p = e / tl.sum(e)
        dx = factor * (p - tl.where(cols == target, 1.0, 0.0))
        tl.store(dx_ptr + offsets, dx, mask=col_ok)
