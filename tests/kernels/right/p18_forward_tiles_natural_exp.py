"""Puzzle 18 with natural exp, the key kernel's tiles the forward way round, and lse made finite before it is used.

The dk/dv kernel computes s = q k^T, a [16 queries, 16 keys] tile like the dq kernel's, and transposes p and ds for
dv += p^T dO and dk += ds^T q; its bitmap is read transposed to match ((bits[None, :] >> slots[:, None]) & 1). A
row with no neighbour gets lse = 0 in place of -inf before the exponential (none of its slots is an edge anyway).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def sparse_attention_backward_dq_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, do_ptr, window_ptr_ptr, tcb_col_ptr,
                                        tcb_mask_ptr, window_order_ptr, delta_ptr, dq_ptr, N, scale,
                                        D: tl.constexpr):
    window = tl.load(window_order_ptr + tl.program_id(0))
    row_ids = window * 16 + tl.arange(0, 16)
    lane = tl.arange(0, 16)
    cols = tl.arange(0, D)
    inside = row_ids < N
    offsets = row_ids[:, None] * D + cols[None, :]
    q = tl.load(q_ptr + offsets, mask=inside[:, None], other=0.0)
    do = tl.load(do_ptr + offsets, mask=inside[:, None], other=0.0)
    delta = tl.sum(tl.load(o_ptr + offsets, mask=inside[:, None], other=0.0).to(tl.float32) * do.to(tl.float32),
                   axis=1)
    tl.store(delta_ptr + row_ids, delta, mask=inside)
    lse = tl.load(lse_ptr + row_ids, mask=inside, other=0.0)
    lse = tl.where(lse == float("-inf"), 0.0, lse)
    dq = tl.zeros([16, D], dtype=tl.float32)
    for block in tl.range(tl.load(window_ptr_ptr + window), tl.load(window_ptr_ptr + window + 1)):
        neighbours = tl.load(tcb_col_ptr + block * 16 + lane)
        is_edge = ((tl.load(tcb_mask_ptr + block * 16 + lane)[:, None] >> lane[None, :]) & 1) == 1
        k = tl.load(k_ptr + neighbours[:, None] * D + cols[None, :])
        v = tl.load(v_ptr + neighbours[:, None] * D + cols[None, :])
        p = tl.where(is_edge, tl.exp(tl.dot(q, tl.trans(k)) * scale - lse[:, None]), 0.0)
        ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])
        dq = tl.dot(ds.to(k.dtype), k, dq)
    tl.store(dq_ptr + offsets, dq * scale, mask=inside[:, None])


@triton.jit
def sparse_attention_backward_dkdv_kernel(q_ptr, k_ptr, v_ptr, lse_ptr, do_ptr, delta_ptr, key_window_ptr_ptr,
                                          key_tcb_query_ptr, key_tcb_mask_ptr, key_window_order_ptr, dk_ptr, dv_ptr,
                                          N, scale, D: tl.constexpr):
    window = tl.load(key_window_order_ptr + tl.program_id(0))
    key_ids = window * 16 + tl.arange(0, 16)
    lane = tl.arange(0, 16)
    cols = tl.arange(0, D)
    inside = key_ids < N
    offsets = key_ids[:, None] * D + cols[None, :]
    k = tl.load(k_ptr + offsets, mask=inside[:, None], other=0.0)
    v = tl.load(v_ptr + offsets, mask=inside[:, None], other=0.0)
    dk = tl.zeros([16, D], dtype=tl.float32)
    dv = tl.zeros([16, D], dtype=tl.float32)
    for block in tl.range(tl.load(key_window_ptr_ptr + window), tl.load(key_window_ptr_ptr + window + 1)):
        query_ids = tl.load(key_tcb_query_ptr + block * 16 + lane)
        masks = tl.load(key_tcb_mask_ptr + block * 16 + lane)  # per key
        is_edge = ((masks[None, :] >> lane[:, None]) & 1) == 1  # [16 query slots, 16 keys]
        q = tl.load(q_ptr + query_ids[:, None] * D + cols[None, :])
        do = tl.load(do_ptr + query_ids[:, None] * D + cols[None, :])
        lse = tl.load(lse_ptr + query_ids)
        lse = tl.where(lse == float("-inf"), 0.0, lse)
        delta = tl.load(delta_ptr + query_ids)
        p = tl.where(is_edge, tl.exp(tl.dot(q, tl.trans(k)) * scale - lse[:, None]), 0.0)  # [queries, keys]
        ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])
        dv = tl.dot(tl.trans(p.to(do.dtype)), do, dv)
        dk = tl.dot(tl.trans(ds.to(q.dtype)), q, dk)
    tl.store(dk_ptr + offsets, dk * scale, mask=inside[:, None])
    tl.store(dv_ptr + offsets, dv, mask=inside[:, None])


def sparse_attention_backward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor, lse: torch.Tensor,
                              do: torch.Tensor, window_ptr: torch.Tensor, tcb_col: torch.Tensor,
                              tcb_mask: torch.Tensor, window_order: torch.Tensor, key_window_ptr: torch.Tensor,
                              key_tcb_query: torch.Tensor, key_tcb_mask: torch.Tensor,
                              key_window_order: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dq, dk, dv), float32: one program per query window (Δ and dq), then one per key window (dk and dv)."""
    n, d = q.shape
    if d < 16 or d > 256 or d & (d - 1):
        raise ValueError(f"D={d}: this kernel takes D a power of two from 16 to 256")
    assert k.shape == v.shape == o.shape == do.shape == (n, d) and lse.shape == (n,), "shapes disagree"
    assert window_order.numel() == key_window_order.numel() == -(-n // 16), "a window per 16 rows, in both BSBs"
    dq, dk, dv = (torch.empty((n, d), dtype=torch.float32, device=q.device) for _ in range(3))
    delta = torch.empty(n, dtype=torch.float32, device=q.device)
    windows = window_order.numel()
    if windows:
        # Puzzle 13's launch settings (one warp per 16 x 16 tile, 3 stages; untimed here for the backward)
        settings = dict(D=d, num_warps=1 if d <= 64 else 2, num_stages=3)
        sparse_attention_backward_dq_kernel[(windows,)](q, k, v, o, lse, do, window_ptr, tcb_col, tcb_mask,
                                                        window_order, delta, dq, n, d ** -0.5, **settings)
        sparse_attention_backward_dkdv_kernel[(windows,)](q, k, v, lse, do, delta, key_window_ptr, key_tcb_query,
                                                          key_tcb_mask, key_window_order, dk, dv, n, d ** -0.5,
                                                          **settings)
    return dq, dk, dv
