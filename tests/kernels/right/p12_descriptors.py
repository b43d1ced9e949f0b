"""Puzzle 12 with tensor descriptors for q, k, v and o, natural exp, and keys in steps of half the case's key
block (at least 16, the GPU's smallest tl.dot size): a kernel may step in smaller tiles than its launcher gives.

The descriptors pad the keys past T with zeros, which would score 0: the scores of those keys are
still set to -inf before the max. The store through o's descriptor drops the rows past N.
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
    BK: tl.constexpr,  # keys per loop step, as the launcher gives it (this kernel takes half)
):
    KEYS: tl.constexpr = max(16, BK // 2)
    first = tl.program_id(0) * BQ
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[N, D], strides=[D, 1], block_shape=[BQ, D])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[T, D], strides=[D, 1], block_shape=[KEYS, D])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[T, D], strides=[D, 1], block_shape=[KEYS, D])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[N, D], strides=[D, 1], block_shape=[BQ, D])
    q = q_desc.load([first, 0])
    row_max = tl.full([BQ], float("-inf"), dtype=tl.float32)
    row_sum = tl.zeros([BQ], dtype=tl.float32)
    acc = tl.zeros([BQ, D], dtype=tl.float32)
    for start in tl.range(0, T, KEYS):
        k = k_desc.load([start, 0])
        v = v_desc.load([start, 0])
        scores = tl.dot(q, tl.trans(k)) * scale
        scores = tl.where((start + tl.arange(0, KEYS) < T)[None, :], scores, float("-inf"))
        new_max = tl.maximum(row_max, tl.max(scores, axis=1))
        shrink = tl.exp(row_max - new_max)
        p = tl.exp(scores - new_max[:, None])
        row_sum = row_sum * shrink + tl.sum(p, axis=1)
        acc = acc * shrink[:, None] + tl.dot(p.to(v.dtype), v)
        row_max = new_max
    o_desc.store([first, 0], acc / row_sum[:, None])
