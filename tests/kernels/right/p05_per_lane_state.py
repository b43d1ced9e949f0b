"""Puzzle 5 keeping a running max and sum per lane ([B0, B1] each), merged once after the loop.

Lanes that have only seen padding hold m = -inf; their rescale factor is forced to 0 rather than
computed as exp(-inf - (-inf)) = exp(nan).
"""

import triton
import triton.language as tl


@triton.jit
def softmax_online_kernel(x_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    lane_max = tl.full([B0, B1], float("-inf"), dtype=tl.float32)
    lane_sum = tl.zeros([B0, B1], dtype=tl.float32)
    for start in tl.range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = (rows < N0)[:, None] & (cols < T)[None, :]
        x = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=float("-inf"))
        new_max = tl.maximum(lane_max, x)
        seen = new_max > float("-inf")
        lane_sum = tl.where(seen, lane_sum * tl.exp(lane_max - new_max) + tl.exp(x - new_max), 0.0)
        lane_max = new_max
    row_max = tl.max(lane_max, axis=1)
    weights = tl.where(lane_max > float("-inf"), tl.exp(lane_max - row_max[:, None]), 0.0)
    total = tl.sum(lane_sum * weights, axis=1)
    for start in tl.range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = (rows < N0)[:, None] & (cols < T)[None, :]
        x = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=0.0)
        tl.store(z_ptr + rows[:, None] * T + cols[None, :], tl.exp(x - row_max[:, None]) / total[:, None], mask=mask)
