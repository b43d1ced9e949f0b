"""Puzzle 18: Sparse attention backward on tensor cores, over the BSB and its transpose.

You will learn
- puzzle 17's backward on puzzle 13's sparse pattern: p = exp(s - lse) recomputed tile by tile,
  ds = p * (dp - Δ), with the bitmap masking both p and ds;
- the transposed BSB: dq sums over each query's neighbours, which the forward's BSB lists window
  by window; dk and dv sum over each key's *queries*, which the BSB of the transposed pattern lists:
  16-key windows whose TCBs hold the ids of the queries that attend to those keys. Walking it, each
  program owns its 16 keys' dk and dv, and no atomics are needed;
- Δ handed from one kernel to the next: the dq kernel, which loads each window's o and dO anyway,
  stores Δ = rowsum(dO * o) for the dk/dv kernel, which gathers it by query id.

The BSB of the transposed pattern (`grader.course.graphs.transpose_bsb`; R = ceil(N / 16) windows)
    key window w holds keys 16w .. 16w+15 and TCBs t = key_window_ptr[w] .. key_window_ptr[w+1]-1
    key_tcb_query[t, c]  the query id in slot c of TCB t (a padding slot repeats the first, bit off)
    key_tcb_mask[t, r]   bit c is set when query key_tcb_query[t, c] attends to key 16w + r
    key_window_order     every key window, the most TCBs first
It holds the same (query, key) pairs as puzzle 13's BSB, each once.

The math, for the pairs (i, j) of the pattern, s_ij = q_i . k_j / sqrt(D), p_ij = exp(s_ij - lse_i)
    Δ_i   = dO_i . o_i
    dq_i  = sum_{j: i attends to j} ds_ij k_j / sqrt(D)        walk the BSB, window by window of queries
    dk_j  = sum_{i: i attends to j} ds_ij q_i / sqrt(D)        walk the transposed BSB, window by window of keys
    dv_j  = sum_{i: i attends to j} p_ij dO_i
    ds_ij = p_ij (dO_i . v_j - Δ_i)
A query with no neighbour has lse = -inf and dq = 0; a key that no query attends to has dk = dv = 0,
and those zeros must be written too.

Spec (the grader's copy is in grader/course/specs.py; @saves marks what the grader computes from
puzzle 13's forward and hands you: o, in the inputs' 16-bit type, and lse, float32)
    @saves(o=sparse_attention, lse=sparse_attention_lse)
    def sparse_attention_backward(
        q: Float16[Tensor, "N D"], k: Float16[Tensor, "N D"], v: Float16[Tensor, "N D"], o: Float16[Tensor, "N D"],
        lse: Float32[Tensor, "N"], do: Float16[Tensor, "N D"],
        window_ptr: Int32[Tensor, "R+1"], tcb_col: Int32[Tensor, "num_tcb 16"], tcb_mask: Int32[Tensor, "num_tcb 16"],
        window_order: Int32[Tensor, "R"], key_window_ptr: Int32[Tensor, "R+1"],
        key_tcb_query: Int32[Tensor, "num_key_tcb 16"], key_tcb_mask: Int32[Tensor, "num_key_tcb 16"],
        key_window_order: Int32[Tensor, "R"],
    ) -> tuple[Float32[Tensor, "N D"], Float32[Tensor, "N D"], Float32[Tensor, "N D"]]:
        with torch.enable_grad():  # the key_* arrays (the transposed BSB) are the kernel's; the math needs only these
            leaves = [t.detach().requires_grad_() for t in (q, k, v)]
            out = sparse_attention(*leaves, window_ptr, tcb_col, tcb_mask, window_order)
            return torch.autograd.grad(out, leaves, do)  # (dq, dk, dv)

What you write: the bodies of `sparse_attention_backward_dq_kernel` (one program per query window:
Δ and dq) and `sparse_attention_backward_dkdv_kernel` (one program per key window: dk and dv). The
launcher is given; it runs them in that order. D is a power of two from 16 to 256.
Budget: no atomics; each window's q, dO, o and lse loaded once in the dq pass, and each TCB gathers
its 16 rows of k and v there; each key window's k and v loaded once in the dk/dv pass, and each of
its TCBs gathers its 16 rows of q and dO (and lse and Δ); nothing but Δ written besides dq, dk, dv;
three tl.dot calls per TCB in the dq pass, four per TCB in the dk/dv pass.

Hints
- dq kernel: the window from window_order, its rows and their mask; q, dO, o as [16, D] blocks,
  lse [16]; store Δ = the row sums of o * dO in float32; a float32 dq                         (10 lines)
- per TCB, as in puzzle 13: columns, row masks, the [16, 16] bitmap; gather k and v; s in log2
  units; p = exp2(s - lse * log2(e)) on the bitmap, 0 elsewhere (tl.where: a row with lse = -inf
  has no bit set, and must not make inf - inf); ds = p * (tl.dot(dO, v^T) - Δ);
  dq += tl.dot(ds, k); after the loop, store dq * scale                                       (10 lines)
- dk/dv kernel: the mirror image, for a key window: its 16 keys' k and v; per TCB, the 16 query
  ids and the [16 keys, 16 slots] bitmap; gather q, dO, lse and Δ by query id; the tiles come out
  transposed, s^T = tl.dot(k, q^T); dv += tl.dot(p^T, dO), dk += tl.dot(ds^T, q); store dk *
  scale and dv, zeros included                                                                (24 lines)

Grade it:  python -m grader 18
"""

import torch
import triton
import triton.language as tl


@triton.jit
def sparse_attention_backward_dq_kernel(
    q_ptr,  # pointer to q: N x D float16 (or bfloat16)
    k_ptr,  # pointer to k: N x D, same dtype
    v_ptr,  # pointer to v: N x D, same dtype
    o_ptr,  # pointer to o: N x D, same dtype, puzzle 13's output (saved)
    lse_ptr,  # pointer to lse: N float32, log sum over each row's neighbours of exp(s) (saved; -inf with none)
    do_ptr,  # pointer to dO: N x D, same dtype, the loss's gradient with respect to o
    window_ptr_ptr,  # pointer to window_ptr: R+1 int32, the forward BSB
    tcb_col_ptr,  # pointer to tcb_col: num_tcb x 16 int32, each slot's column (key)
    tcb_mask_ptr,  # pointer to tcb_mask: num_tcb x 16 int32, one 16-bit mask per row of the window
    window_order_ptr,  # pointer to window_order: R int32
    delta_ptr,  # pointer to Δ: N float32, written here for the dk/dv kernel
    dq_ptr,  # pointer to the output dq: N x D float32
    N,  # rows (nodes)
    scale,  # 1 / sqrt(D)
    D: tl.constexpr,  # features, a power of two
):
    # >>> solution: about 28 lines
    LOG2E: tl.constexpr = 1.4426950408889634
    window = tl.load(window_order_ptr + tl.program_id(0))
    rows = window * 16 + tl.arange(0, 16)
    slots = tl.arange(0, 16)
    feats = tl.arange(0, D)
    row_ok = rows < N
    q = tl.load(q_ptr + rows[:, None] * D + feats[None, :], mask=row_ok[:, None], other=0.0)
    do = tl.load(do_ptr + rows[:, None] * D + feats[None, :], mask=row_ok[:, None], other=0.0)
    o = tl.load(o_ptr + rows[:, None] * D + feats[None, :], mask=row_ok[:, None], other=0.0)
    lse = tl.load(lse_ptr + rows, mask=row_ok, other=0.0)
    delta = tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=1)
    tl.store(delta_ptr + rows, delta, mask=row_ok)
    dq = tl.zeros([16, D], dtype=tl.float32)
    first = tl.load(window_ptr_ptr + window)
    last = tl.load(window_ptr_ptr + window + 1)
    for tcb in tl.range(first, last):
        cols = tl.load(tcb_col_ptr + tcb * 16 + slots)
        bits = tl.load(tcb_mask_ptr + tcb * 16 + slots)
        edge = ((bits[:, None] >> slots[None, :]) & 1) != 0  # [16 rows, 16 slots]
        k = tl.load(k_ptr + cols[:, None] * D + feats[None, :])  # padding slots repeat a real column
        v = tl.load(v_ptr + cols[:, None] * D + feats[None, :])
        scores = tl.dot(q, tl.trans(k)) * (scale * LOG2E)
        # p = 0 off the bitmap, before anything multiplies it: a row with no neighbour has lse = -inf there
        p = tl.where(edge, tl.exp2(scores - lse[:, None] * LOG2E), 0.0)
        ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])
        dq = tl.dot(ds.to(k.dtype), k, dq).to(tl.float16).to(tl.float32)
    tl.store(dq_ptr + rows[:, None] * D + feats[None, :], dq * scale, mask=row_ok[:, None])
    # <<< solution


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
    # >>> solution: about 29 lines
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
        dv = tl.dot(p.to(do.dtype), do, dv).to(tl.float16).to(tl.float32)
        ds = p * (tl.dot(v, tl.trans(do)) - delta[None, :])
        dk = tl.dot(ds.to(q.dtype), q, dk).to(tl.float16).to(tl.float32)
    # Written even for keys that no query attends to: their dk and dv are 0.
    tl.store(dk_ptr + keys[:, None] * D + feats[None, :], dk * scale, mask=key_ok[:, None])
    tl.store(dv_ptr + keys[:, None] * D + feats[None, :], dv, mask=key_ok[:, None])
    # <<< solution


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
