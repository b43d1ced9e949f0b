"""Puzzle 17 with dk and dv summed in float16: each step's tl.dot result is rounded to float16 and added into a
float16 accumulator. On the cases' lengths the values still pass every tolerance (bfloat16 and "dO x 100"
included), so the grader must name the 16-bit running sum itself ("sum in float32"): the interpreter's hook sees
the add of two tl.dot results in float16, and a GPU run reads it from the compiled kernel's TTIR."""

import torch
import triton
import triton.language as tl


@triton.jit
def attention_backward_delta_kernel(
    o_ptr,  # pointer to o: N x D float16 (or bfloat16), the forward's output (saved)
    do_ptr,  # pointer to dO: N x D, same dtype, the loss's gradient with respect to o
    delta_ptr,  # pointer to Δ: N float32, written here for the other two kernels
    N,  # queries
    D: tl.constexpr,  # features, a power of two
    BQ: tl.constexpr,  # queries per program
):
    queries = tl.program_id(0) * BQ + tl.arange(0, BQ)
    feats = tl.arange(0, D)
    query_ok = queries < N
    o = tl.load(o_ptr + queries[:, None] * D + feats[None, :], mask=query_ok[:, None], other=0.0)
    do = tl.load(do_ptr + queries[:, None] * D + feats[None, :], mask=query_ok[:, None], other=0.0)
    tl.store(delta_ptr + queries, tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=1), mask=query_ok)


@triton.jit
def attention_backward_dkdv_kernel(
    q_ptr,  # pointer to q: N x D float16 (or bfloat16)
    k_ptr,  # pointer to k: T x D, same dtype
    v_ptr,  # pointer to v: T x D, same dtype
    do_ptr,  # pointer to dO: N x D, same dtype
    lse_ptr,  # pointer to lse: N float32, log sum_j exp(s_ij) of each query (saved; -inf where it sees no key)
    delta_ptr,  # pointer to Δ: N float32, from the delta kernel
    dk_ptr,  # pointer to the output dk: T x D float32
    dv_ptr,  # pointer to the output dv: T x D float32
    N,  # queries
    T,  # keys and values
    scale,  # c: s = c q . k
    D: tl.constexpr,  # features, a power of two
    BQ: tl.constexpr,  # queries per loop step
    BK: tl.constexpr,  # keys per program
    CAUSAL: tl.constexpr,  # query i sees key j only when j <= i + T - N
):
    LOG2E: tl.constexpr = 1.4426950408889634
    keys = tl.program_id(0) * BK + tl.arange(0, BK)
    feats = tl.arange(0, D)
    key_ok = keys < T
    k = tl.load(k_ptr + keys[:, None] * D + feats[None, :], mask=key_ok[:, None], other=0.0)
    v = tl.load(v_ptr + keys[:, None] * D + feats[None, :], mask=key_ok[:, None], other=0.0)
    dk = tl.zeros([BK, D], dtype=tl.float16)
    dv = tl.zeros([BK, D], dtype=tl.float16)
    first = 0
    if CAUSAL:  # the first query that sees this block's first key, down to a whole query block
        first = tl.maximum(tl.program_id(0) * BK - (T - N), 0) // BQ * BQ
    for start in tl.range(first, N, BQ):
        queries = start + tl.arange(0, BQ)
        query_ok = queries < N
        q = tl.load(q_ptr + queries[:, None] * D + feats[None, :], mask=query_ok[:, None], other=0.0)
        do = tl.load(do_ptr + queries[:, None] * D + feats[None, :], mask=query_ok[:, None], other=0.0)
        lse = tl.load(lse_ptr + queries, mask=query_ok, other=0.0)
        delta = tl.load(delta_ptr + queries, mask=query_ok, other=0.0)
        scores = tl.dot(q, tl.trans(k)) * (scale * LOG2E)  # [BQ, BK] in log2 units
        seen = query_ok[:, None] & key_ok[None, :]
        if CAUSAL:
            seen = seen & (keys[None, :] <= queries[:, None] + (T - N))
        # exp2 of +inf where lse = -inf, but such a row sees no key: tl.where drops it, never inf - inf
        p = tl.where(seen, tl.exp2(scores - lse[:, None] * LOG2E), 0.0)
        dv += tl.dot(tl.trans(p.to(do.dtype)), do).to(tl.float16)
        dp = tl.dot(do, tl.trans(v))  # [BQ, BK]
        ds = p * (dp - delta[:, None])
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q).to(tl.float16)
    tl.store(dk_ptr + keys[:, None] * D + feats[None, :], dk * scale, mask=key_ok[:, None])
    tl.store(dv_ptr + keys[:, None] * D + feats[None, :], dv, mask=key_ok[:, None])


@triton.jit
def attention_backward_dq_kernel(
    q_ptr,  # pointer to q: N x D float16 (or bfloat16)
    k_ptr,  # pointer to k: T x D, same dtype
    v_ptr,  # pointer to v: T x D, same dtype
    do_ptr,  # pointer to dO: N x D, same dtype
    lse_ptr,  # pointer to lse: N float32 (saved; -inf where a query sees no key)
    delta_ptr,  # pointer to Δ: N float32, from the delta kernel
    dq_ptr,  # pointer to the output dq: N x D float32
    N,  # queries
    T,  # keys and values
    scale,  # c: s = c q . k
    D: tl.constexpr,  # features, a power of two
    BQ: tl.constexpr,  # queries per program
    BK: tl.constexpr,  # keys per loop step
    CAUSAL: tl.constexpr,  # query i sees key j only when j <= i + T - N
):
    LOG2E: tl.constexpr = 1.4426950408889634
    queries = tl.program_id(0) * BQ + tl.arange(0, BQ)
    feats = tl.arange(0, D)
    query_ok = queries < N
    q = tl.load(q_ptr + queries[:, None] * D + feats[None, :], mask=query_ok[:, None], other=0.0)
    do = tl.load(do_ptr + queries[:, None] * D + feats[None, :], mask=query_ok[:, None], other=0.0)
    lse = tl.load(lse_ptr + queries, mask=query_ok, other=0.0)
    delta = tl.load(delta_ptr + queries, mask=query_ok, other=0.0)
    dq = tl.zeros([BQ, D], dtype=tl.float32)
    end = T
    if CAUSAL:  # one past the last key that this block's last query sees (at most 0: the loop never runs)
        end = tl.minimum((tl.program_id(0) + 1) * BQ + (T - N), T)
    for start in tl.range(0, end, BK):
        keys = start + tl.arange(0, BK)
        key_ok = keys < T
        k = tl.load(k_ptr + keys[:, None] * D + feats[None, :], mask=key_ok[:, None], other=0.0)
        v = tl.load(v_ptr + keys[:, None] * D + feats[None, :], mask=key_ok[:, None], other=0.0)
        scores = tl.dot(q, tl.trans(k)) * (scale * LOG2E)
        seen = query_ok[:, None] & key_ok[None, :]
        if CAUSAL:
            seen = seen & (keys[None, :] <= queries[:, None] + (T - N))
        p = tl.where(seen, tl.exp2(scores - lse[:, None] * LOG2E), 0.0)
        ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])
        dq = tl.dot(ds.to(k.dtype), k, dq)
    tl.store(dq_ptr + queries[:, None] * D + feats[None, :], dq * scale, mask=query_ok[:, None])


def attention_backward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor, lse: torch.Tensor,
                       do: torch.Tensor, causal: bool = False, scale: float | None = None, BQ: int | None = None,
                       BK: int | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dq, dk, dv), float32: the Δ pre-pass, one program per BK keys, then one per BQ queries. Scale 1 / sqrt(D)
    unless given."""
    (n, d), t = q.shape, k.shape[0]
    if d < 16 or d > 256 or d & (d - 1):
        raise ValueError(f"D={d}: this kernel takes D a power of two from 16 to 256")
    assert k.shape == v.shape == (t, d) and o.shape == do.shape == (n, d) and lse.shape == (n,), "shapes disagree"
    assert q.dtype == k.dtype == v.dtype == o.dtype == do.dtype and lse.dtype == torch.float32, "dtypes disagree"
    assert all(x.is_contiguous() for x in (q, k, v, o, lse, do)), "the kernels take row-major tensors"
    scale = d ** -0.5 if scale is None else scale
    dq = torch.empty((n, d), dtype=torch.float32, device=q.device)
    dk = torch.empty((t, d), dtype=torch.float32, device=q.device)
    dv = torch.empty((t, d), dtype=torch.float32, device=q.device)
    delta = torch.empty(n, dtype=torch.float32, device=q.device)
    # Untuned defaults (no GPU run of this puzzle yet; scripts/gpu_ch5_part2.sh sweeps them): 64 x 64 tiles in both
    # walks; 8 warps at D = 128, where the key walk's two [64, 128] float32 accumulators alone would take 128
    # registers a thread each with 4 warps.
    BQ, BK = BQ or 64, BK or 64
    settings = dict(D=d, BQ=BQ, BK=BK, CAUSAL=bool(causal), num_warps=4 if d <= 64 else 8, num_stages=2)
    attention_backward_delta_kernel[(triton.cdiv(n, BQ),)](o, do, delta, n, D=d, BQ=BQ)
    attention_backward_dkdv_kernel[(triton.cdiv(t, BK),)](q, k, v, do, lse, delta, dk, dv, n, t, scale, **settings)
    attention_backward_dq_kernel[(triton.cdiv(n, BQ),)](q, k, v, do, lse, delta, dq, n, t, scale, **settings)
    return dq, dk, dv
