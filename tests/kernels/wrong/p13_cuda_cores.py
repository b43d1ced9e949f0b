"""Puzzle 13 on CUDA cores: the scores and the weighted sum of values are broadcast multiplies and sums.

The values are right, but neither product runs on tensor cores, so the Dots budget (two tl.dot calls per
TCB) must reject it.
"""

import triton
import triton.language as tl


@triton.jit
def sparse_attention_kernel(q_ptr, k_ptr, v_ptr, window_ptr_ptr, tcb_col_ptr, tcb_mask_ptr, window_order_ptr, o_ptr,
                            N, scale, D: tl.constexpr):
    window = tl.load(window_order_ptr + tl.program_id(0))
    rows = window * 16 + tl.arange(0, 16)
    slots = tl.arange(0, 16)
    feats = tl.arange(0, D)
    q = tl.load(q_ptr + rows[:, None] * D + feats[None, :], mask=(rows < N)[:, None], other=0.0).to(tl.float32)
    row_max = tl.full([16], float("-inf"), dtype=tl.float32)
    row_sum = tl.zeros([16], dtype=tl.float32)
    acc = tl.zeros([16, D], dtype=tl.float32)
    for tcb in tl.range(tl.load(window_ptr_ptr + window), tl.load(window_ptr_ptr + window + 1)):
        cols = tl.load(tcb_col_ptr + tcb * 16 + slots)
        edge = ((tl.load(tcb_mask_ptr + tcb * 16 + slots)[:, None] >> slots[None, :]) & 1) != 0
        k = tl.load(k_ptr + cols[:, None] * D + feats[None, :]).to(tl.float32)
        v = tl.load(v_ptr + cols[:, None] * D + feats[None, :]).to(tl.float32)
        scores = tl.sum(q[:, None, :] * k[None, :, :], axis=2) * scale  # [16 rows, 16 slots], no tl.dot
        scores = tl.where(edge, scores, float("-inf"))
        new_max = tl.maximum(row_max, tl.max(scores, axis=1))
        base = tl.where(new_max == float("-inf"), 0.0, new_max)
        shrink = tl.exp(row_max - base)
        p = tl.exp(scores - base[:, None])
        row_sum = row_sum * shrink + tl.sum(p, axis=1)
        acc = acc * shrink[:, None] + tl.sum(p[:, :, None] * v[None, :, :], axis=1)  # [16, D], no tl.dot
        row_max = new_max
    out = acc / tl.where(row_sum > 0, row_sum, 1.0)[:, None]
    tl.store(o_ptr + rows[:, None] * D + feats[None, :], out, mask=(rows < N)[:, None])
