"""Puzzle 12 with each row's sum of weights on tensor cores too: a second running block, l = p @ ones, beside
acc = p @ v, so that the output is acc / l elementwise. The product with a block of ones is honest work the budget
does not count (no input's values fill that operand), and it must not hide that p @ v is live: dividing two
products of p cancels their common scale, but not the values in v.
"""

import triton
import triton.language as tl


@triton.jit
def attention_kernel(
    q_ptr,  # pointer to q: N x D float16 (or bfloat16)
    k_ptr,  # pointer to k: T x D, same dtype
    v_ptr,  # pointer to v: T x D, same dtype
    o_ptr,  # pointer to the output o: N x D float32
    N,  # queries
    T,  # keys and values
    scale,  # 1 / sqrt(D)
    D: tl.constexpr,  # features, a power of two
    BQ: tl.constexpr,  # queries per program
    BK: tl.constexpr,  # keys per loop step
):
    LOG2E: tl.constexpr = 1.4426950408889634
    queries = tl.program_id(0) * BQ + tl.arange(0, BQ)
    feats = tl.arange(0, D)
    query_ok = queries < N
    q = tl.load(q_ptr + queries[:, None] * D + feats[None, :], mask=query_ok[:, None], other=0.0)
    running_max = tl.full([BQ], float("-inf"), dtype=tl.float32)
    acc = tl.zeros([BQ, D], dtype=tl.float32)
    sums = tl.zeros([BQ, D], dtype=tl.float32)  # every column the same: the row's sum of weights
    ones = tl.full([BK, D], 1.0, dtype=tl.float32).to(q.dtype)  # (a bfloat16 constant is not built in triton
    # 3.6's interpreter: the ones are cast)
    for start in tl.range(0, T, BK):
        keys = start + tl.arange(0, BK)
        key_ok = keys < T
        k = tl.load(k_ptr + keys[:, None] * D + feats[None, :], mask=key_ok[:, None], other=0.0)
        v = tl.load(v_ptr + keys[:, None] * D + feats[None, :], mask=key_ok[:, None], other=0.0)
        scores = tl.dot(q, tl.trans(k)) * (scale * LOG2E)
        scores = tl.where(key_ok[None, :], scores, float("-inf"))
        new_max = tl.maximum(running_max, tl.max(scores, axis=1))
        alpha = tl.exp2(running_max - new_max)
        p = tl.exp2(scores - new_max[:, None]).to(v.dtype)
        acc = tl.dot(p, v, acc * alpha[:, None])
        sums = tl.dot(p, ones, sums * alpha[:, None])
        running_max = new_max
    tl.store(o_ptr + queries[:, None] * D + feats[None, :], acc / sums, mask=query_ok[:, None])
