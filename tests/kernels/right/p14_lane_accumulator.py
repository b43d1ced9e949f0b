"""Right: Δ kept per lane as a [B0, B1] tile through the first loop and reduced once after it; dx as y dy - y Δ."""

import triton
import triton.language as tl


@triton.jit
def softmax_backward_kernel(y_ptr, dy_ptr, dx_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    row_start = tl.cast(rows, tl.int64) * T
    partial = tl.zeros([B0, B1], dtype=tl.float32)
    for start in tl.range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = (rows < N0)[:, None] & (cols < T)[None, :]
        y = tl.load(y_ptr + row_start[:, None] + cols[None, :], mask=mask, other=0.0)
        dy = tl.load(dy_ptr + row_start[:, None] + cols[None, :], mask=mask, other=0.0)
        partial += y * dy
    delta = tl.sum(partial, axis=1)[:, None]
    for start in tl.range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = (rows < N0)[:, None] & (cols < T)[None, :]
        y = tl.load(y_ptr + row_start[:, None] + cols[None, :], mask=mask, other=0.0)
        dy = tl.load(dy_ptr + row_start[:, None] + cols[None, :], mask=mask, other=0.0)
        tl.store(dx_ptr + row_start[:, None] + cols[None, :], y * dy - y * delta, mask=mask)
