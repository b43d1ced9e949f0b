"""Puzzle 13 with the edge mask applied to the weights after the exp, and the bitmap tested bit by bit.

Masking after the exp is right here because the max is taken over the real edges only; the weights of
non-edges are then set to 0 whatever exp gave for them (even inf, in a row with no edge yet). The
weights go to the second tl.dot cast to q's 16-bit type, and a row with no neighbour is 0 by a where.
"""

import triton
import triton.language as tl


@triton.jit
def sparse_attention_kernel(
    q_ptr,  # pointer to q: N x D float16 (or bfloat16)
    k_ptr,  # pointer to k: N x D, same dtype
    v_ptr,  # pointer to v: N x D, same dtype
    window_ptr_ptr,  # pointer to window_ptr: R+1 int32
    tcb_col_ptr,  # pointer to tcb_col: num_tcb x 16 int32
    tcb_mask_ptr,  # pointer to tcb_mask: num_tcb x 16 int32
    window_order_ptr,  # pointer to window_order: R int32
    o_ptr,  # pointer to the output o: N x D float32
    N,  # rows (nodes)
    scale,  # 1 / sqrt(D)
    D: tl.constexpr,  # features, a power of two
):
    window = tl.load(window_order_ptr + tl.program_id(0))
    rows = window * 16 + tl.arange(0, 16)
    slots = tl.arange(0, 16)
    feats = tl.arange(0, D)
    q = tl.load(q_ptr + rows[:, None] * D + feats[None, :], mask=(rows < N)[:, None], other=0.0)
    row_max = tl.full([16], float("-inf"), dtype=tl.float32)
    row_sum = tl.zeros([16], dtype=tl.float32)
    acc = tl.zeros([16, D], dtype=tl.float32)
    for tcb in tl.range(tl.load(window_ptr_ptr + window), tl.load(window_ptr_ptr + window + 1)):
        cols = tl.load(tcb_col_ptr + tcb * 16 + slots)
        row_bits = tl.load(tcb_mask_ptr + tcb * 16 + slots)
        edge = (row_bits[:, None] & (1 << slots)[None, :]) != 0
        k = tl.load(k_ptr + cols[:, None] * D + feats[None, :])
        v = tl.load(v_ptr + cols[:, None] * D + feats[None, :])
        scores = tl.dot(q, tl.trans(k)) * scale
        new_max = tl.maximum(row_max, tl.max(tl.where(edge, scores, float("-inf")), axis=1))
        shrink = tl.where(row_max == float("-inf"), 0.0, tl.exp(row_max - new_max))
        p = tl.where(edge, tl.exp(scores - new_max[:, None]), 0.0)
        row_sum = row_sum * shrink + tl.sum(p, axis=1)
        acc = acc * shrink[:, None] + tl.dot(p.to(q.dtype), v)
        row_max = new_max
    out = tl.where((row_sum > 0)[:, None], acc / row_sum[:, None], 0.0)
    tl.store(o_ptr + rows[:, None] * D + feats[None, :], out, mask=(rows < N)[:, None])
