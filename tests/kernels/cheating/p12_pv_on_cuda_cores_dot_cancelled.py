"""Puzzle 12 with p v on CUDA cores (a broadcast multiply and tl.sum), and the tensor-core p v computed beside it
and cancelled as (pv - pv) (issue 26, class 2): the dot's result reaches o's store, but nothing of it is left in
o. Perturbing that tl.dot's result leaves o as it was, so its work is dead, and tl.dot falls short of 2*N*T*D."""

import torch
import triton
import triton.language as tl


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, T, scale, D: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr):
    queries = tl.program_id(0) * BQ + tl.arange(0, BQ)
    feats = tl.arange(0, D)
    query_ok = queries < N
    q = tl.load(q_ptr + queries[:, None] * D + feats[None, :], mask=query_ok[:, None], other=0.0)
    running_max = tl.full([BQ], float("-inf"), dtype=tl.float32)
    total = tl.zeros([BQ], dtype=tl.float32)
    acc = tl.zeros([BQ, D], dtype=tl.float32)
    for start in tl.range(0, T, BK):
        keys = start + tl.arange(0, BK)
        key_ok = keys < T
        k = tl.load(k_ptr + keys[:, None] * D + feats[None, :], mask=key_ok[:, None], other=0.0)
        v = tl.load(v_ptr + keys[:, None] * D + feats[None, :], mask=key_ok[:, None], other=0.0)
        scores = tl.where(key_ok[None, :], tl.dot(q, tl.trans(k)) * scale, float("-inf"))
        new_max = tl.maximum(running_max, tl.max(scores, axis=1))
        alpha = tl.exp(running_max - new_max)
        p = tl.exp(scores - new_max[:, None])
        total = total * alpha + tl.sum(p, axis=1)
        pv = tl.dot(p.to(v.dtype), v)
        acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * v.to(tl.float32)[None, :, :], axis=1) + (pv - pv)
        running_max = new_max
    tl.store(o_ptr + queries[:, None] * D + feats[None, :], acc / total[:, None], mask=query_ok[:, None])


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, BQ: int = 64, BK: int = 128) -> torch.Tensor:
    (n, d), t = q.shape, k.shape[0]
    o = torch.empty((n, d), dtype=torch.float32, device=q.device)
    attention_kernel[(triton.cdiv(n, BQ),)](q, k, v, o, n, t, d ** -0.5, D=d, BQ=BQ, BK=BK)
    return o
