"""Cheat: puzzle 12 without a key loop: a query block's whole row of scores in eight unrolled [BQ, BK] tiles, the
exact max first, no running max, and every key past 8 * BK dropped. Each program reads k and v once and no tile is
wider than BK, so no budget fires; the case of 65 key blocks (T = 1029, BK = 16) makes it wrong (the fourteenth
review)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _scores(q, k_ptr, T, j, qk_scale, D: tl.constexpr, BK: tl.constexpr):
    """Block j of a query block's row of scores, in log2 units (-inf past T)."""
    keys = j * BK + tl.arange(0, BK)
    key_ok = keys < T
    k = tl.load(k_ptr + keys[:, None] * D + tl.arange(0, D)[None, :], mask=key_ok[:, None], other=0.0)
    s = tl.dot(q, tl.trans(k)) * qk_scale
    return tl.where(key_ok[None, :], s, float("-inf"))


@triton.jit
def _weighted(s, m, v_ptr, T, j, acc, D: tl.constexpr, BK: tl.constexpr):
    keys = j * BK + tl.arange(0, BK)
    key_ok = keys < T
    v = tl.load(v_ptr + keys[:, None] * D + tl.arange(0, D)[None, :], mask=key_ok[:, None], other=0.0)
    p = tl.exp2(s - m[:, None])
    return tl.dot(p.to(v.dtype), v, acc), tl.sum(p, axis=1)


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, T, scale, D: tl.constexpr, BQ: tl.constexpr,
                     BK: tl.constexpr):
    # The whole row of scores, held at once in eight [BQ, BK] tiles: an exact max first, no running max and no
    # rescaling. Keys past 8 * BK are never looked at.
    LOG2E: tl.constexpr = 1.4426950408889634
    queries = tl.program_id(0) * BQ + tl.arange(0, BQ)
    feats = tl.arange(0, D)
    query_ok = queries < N
    q = tl.load(q_ptr + queries[:, None] * D + feats[None, :], mask=query_ok[:, None], other=0.0)
    c = scale * LOG2E
    s0 = _scores(q, k_ptr, T, 0, c, D, BK)
    s1 = _scores(q, k_ptr, T, 1, c, D, BK)
    s2 = _scores(q, k_ptr, T, 2, c, D, BK)
    s3 = _scores(q, k_ptr, T, 3, c, D, BK)
    s4 = _scores(q, k_ptr, T, 4, c, D, BK)
    s5 = _scores(q, k_ptr, T, 5, c, D, BK)
    s6 = _scores(q, k_ptr, T, 6, c, D, BK)
    s7 = _scores(q, k_ptr, T, 7, c, D, BK)
    m = tl.maximum(tl.maximum(tl.maximum(tl.max(s0, axis=1), tl.max(s1, axis=1)),
                              tl.maximum(tl.max(s2, axis=1), tl.max(s3, axis=1))),
                   tl.maximum(tl.maximum(tl.max(s4, axis=1), tl.max(s5, axis=1)),
                              tl.maximum(tl.max(s6, axis=1), tl.max(s7, axis=1))))
    acc = tl.zeros([BQ, D], dtype=tl.float32)
    acc, l0 = _weighted(s0, m, v_ptr, T, 0, acc, D, BK)
    acc, l1 = _weighted(s1, m, v_ptr, T, 1, acc, D, BK)
    acc, l2 = _weighted(s2, m, v_ptr, T, 2, acc, D, BK)
    acc, l3 = _weighted(s3, m, v_ptr, T, 3, acc, D, BK)
    acc, l4 = _weighted(s4, m, v_ptr, T, 4, acc, D, BK)
    acc, l5 = _weighted(s5, m, v_ptr, T, 5, acc, D, BK)
    acc, l6 = _weighted(s6, m, v_ptr, T, 6, acc, D, BK)
    acc, l7 = _weighted(s7, m, v_ptr, T, 7, acc, D, BK)
    total = l0 + l1 + l2 + l3 + l4 + l5 + l6 + l7
    tl.store(o_ptr + queries[:, None] * D + feats[None, :], acc / total[:, None], mask=query_ok[:, None])


def _scratch(size: int, alignment: int, stream):
    """Global memory for descriptors made inside a kernel (triton asks for it on the GPU)."""
    return torch.empty(size, dtype=torch.int8, device="cuda")


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, BQ: int | None = None,
              BK: int = 128) -> torch.Tensor:
    """One program per BQ queries."""
    (n, d), t = q.shape, k.shape[0]
    if d < 16 or d > 256 or d & (d - 1):
        raise ValueError(f"D={d}: this kernel takes D a power of two from 16 to 256")
    o = torch.empty((n, d), dtype=torch.float32, device=q.device)
    if q.is_cuda:
        triton.set_allocator(_scratch)
    if BQ is None:
        # 128 queries per program where D >= 128 and they still make 128 programs (N >= 16384), else 64: on an H200
        # at N=16384, D=128, 270.3 µs against 314 with 64; at N=8192, D=128, 64 programs of 128 leave half the
        # multiprocessors idle, and 64 per program took 80.8 µs. BK=128 beat 64 at every size.
        BQ = 128 if d >= 128 and n >= 16384 else 64
    # 16 query rows per warp: BQ=128 with 8 warps took 282 µs at N=16384, D=128 on an H200 (BQ=64, 4 warps: 314);
    # 3 stages: 2 were slower everywhere, 4 do not fit in shared memory at D=128 (docs/performance-notes.md)
    settings = dict(D=d, BQ=BQ, BK=BK, num_warps=BQ // 16, num_stages=3)
    attention_kernel[(triton.cdiv(n, BQ),)](q, k, v, o, n, t, d ** -0.5, **settings)
    return o
