"""Puzzle 17 with the key walk's tiles transposed, natural exp, and Δ summed in float32 lane by lane.

The key walk computes s^T = k q^T, a [BK, BQ] tile, so p^T and ds^T come out in the shape that dv += p^T dO and
dk += ds^T q take, with no tl.trans of them; lse and Δ broadcast along its columns. The query walk uses tl.exp of
the scaled scores minus lse (no log2 units). The Δ kernel sums o * dO into a [BQ, D] float32 block and reduces it
once at the end.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def attention_backward_delta_kernel(o_ptr, do_ptr, delta_ptr, N, D: tl.constexpr, BQ: tl.constexpr):
    rows = tl.program_id(0) * BQ + tl.arange(0, BQ)
    offsets = rows[:, None] * D + tl.arange(0, D)[None, :]
    inside = (rows < N)[:, None]
    products = tl.load(o_ptr + offsets, mask=inside, other=0.0).to(tl.float32) * \
        tl.load(do_ptr + offsets, mask=inside, other=0.0).to(tl.float32)
    tl.store(delta_ptr + rows, tl.sum(products, axis=1), mask=rows < N)


@triton.jit
def attention_backward_dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, N, T, scale,
                                   D: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr, CAUSAL: tl.constexpr):
    key_ids = tl.program_id(0) * BK + tl.arange(0, BK)
    cols = tl.arange(0, D)
    key_in = key_ids < T
    k = tl.load(k_ptr + key_ids[:, None] * D + cols[None, :], mask=key_in[:, None], other=0.0)
    v = tl.load(v_ptr + key_ids[:, None] * D + cols[None, :], mask=key_in[:, None], other=0.0)
    dk = tl.zeros([BK, D], dtype=tl.float32)
    dv = tl.zeros([BK, D], dtype=tl.float32)
    lowest = 0
    if CAUSAL:
        lowest = tl.maximum(tl.program_id(0) * BK + N - T, 0)
        lowest = lowest - lowest % BQ
    for query_start in tl.range(lowest, N, BQ):
        query_ids = query_start + tl.arange(0, BQ)
        query_in = query_ids < N
        q = tl.load(q_ptr + query_ids[:, None] * D + cols[None, :], mask=query_in[:, None], other=0.0)
        do = tl.load(do_ptr + query_ids[:, None] * D + cols[None, :], mask=query_in[:, None], other=0.0)
        lse = tl.load(lse_ptr + query_ids, mask=query_in, other=0.0)
        delta = tl.load(delta_ptr + query_ids, mask=query_in, other=0.0)
        allowed = key_in[:, None] & query_in[None, :]
        if CAUSAL:
            allowed = allowed & (key_ids[:, None] + N - T <= query_ids[None, :])
        p_t = tl.where(allowed, tl.exp(tl.dot(k, tl.trans(q)) * scale - lse[None, :]), 0.0)  # [BK, BQ]
        dv = tl.dot(p_t.to(do.dtype), do, dv)
        ds_t = p_t * (tl.dot(v, tl.trans(do)) - delta[None, :])
        dk = tl.dot(ds_t.to(q.dtype), q, dk)
    tl.store(dk_ptr + key_ids[:, None] * D + cols[None, :], dk * scale, mask=key_in[:, None])
    tl.store(dv_ptr + key_ids[:, None] * D + cols[None, :], dv, mask=key_in[:, None])


@triton.jit
def attention_backward_dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, N, T, scale,
                                 D: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr, CAUSAL: tl.constexpr):
    query_ids = tl.program_id(0) * BQ + tl.arange(0, BQ)
    cols = tl.arange(0, D)
    query_in = query_ids < N
    q = tl.load(q_ptr + query_ids[:, None] * D + cols[None, :], mask=query_in[:, None], other=0.0)
    do = tl.load(do_ptr + query_ids[:, None] * D + cols[None, :], mask=query_in[:, None], other=0.0)
    lse = tl.load(lse_ptr + query_ids, mask=query_in, other=0.0)
    delta = tl.load(delta_ptr + query_ids, mask=query_in, other=0.0)
    dq = tl.zeros([BQ, D], dtype=tl.float32)
    last = T
    if CAUSAL:
        last = tl.minimum(tl.program_id(0) * BQ + BQ + T - N, T)
    for key_start in tl.range(0, last, BK):
        key_ids = key_start + tl.arange(0, BK)
        key_in = key_ids < T
        k = tl.load(k_ptr + key_ids[:, None] * D + cols[None, :], mask=key_in[:, None], other=0.0)
        v = tl.load(v_ptr + key_ids[:, None] * D + cols[None, :], mask=key_in[:, None], other=0.0)
        allowed = query_in[:, None] & key_in[None, :]
        if CAUSAL:
            allowed = allowed & (key_ids[None, :] + N - T <= query_ids[:, None])
        p = tl.where(allowed, tl.exp(tl.dot(q, tl.trans(k)) * scale - lse[:, None]), 0.0)
        ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])
        dq = tl.dot(ds.to(k.dtype), k, dq)
    tl.store(dq_ptr + query_ids[:, None] * D + cols[None, :], dq * scale, mask=query_in[:, None])


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
