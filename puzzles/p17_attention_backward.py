"""Puzzle 17: FlashAttention backward on tensor cores (the FlashAttention-2 algorithm).

You will learn
- the backward of puzzle 12 without any N x T matrix in memory: the forward saved one number per
  query, its log-sum-exp, and the probabilities are recomputed block by block, p = exp(s - lse);
- Δ_i = dO_i . O_i, puzzle 14's row reduction for attention, computed once in a pre-pass;
- two walks over the same tiles: one program per key block holds K_j and V_j and streams the query
  blocks, summing dK_j and dV_j; one program per query block holds Q_i and streams the key blocks,
  summing dQ_i. Each program owns what it writes, so there are no atomics and the result is the
  same bits on every run;
- the causal mask: blocks wholly above the diagonal are skipped in both walks, not computed and
  masked.

The math, with scale c, s_ij = c q_i . k_j, p_ij = exp(s_ij - lse_i) (0 where query i does not see
key j), o_i = sum_j p_ij v_j, and dO the loss's gradient with respect to o
    Δ_i    = dO_i . o_i                                     the pre-pass, one number per query
    dv_j   = sum_i p_ij dO_i                                 dV += P^T dO
    dp_ij  = dO_i . v_j                                     dP = dO V^T
    ds_ij  = p_ij (dp_ij - Δ_i)                             dS = P * (dP - Δ): the softmax's backward
    dk_j   = c sum_i ds_ij q_i                              dK += dS^T Q, times c at the end
    dq_i   = c sum_j ds_ij k_j                              dQ += dS K, times c at the end
About 3.5 times the forward's multiply-adds: seven products against its two (the key walk's q k^T, p^T dO,
dO v^T and ds^T q; the query walk's q k^T, dO v^T and ds k). FlashAttention-2's 2.5 counts five: it adds dq
from the key walk with atomics, which the lesson does not.
The causal mask here is aligned to the last query and key (query i sees key j when j <= i + T - N),
as FlashAttention-2 has it: with N > T, the first N - T queries see no key, their lse is -inf and
every gradient they touch is 0. (Triton's own tutorial backward handles only the causal case with
N = T, a multiple of 128, and keeps its lse in base 2, so a copy of it fails here.)

Spec (the grader's copy is in grader/course/specs.py; @saves marks what the grader computes from
the forward and hands you: o, in the inputs' 16-bit type, and lse, float32, natural log)
    @saves(o=lambda q, k, v, causal, scale: masked_attention(q, k, v, causal, scale)[0],
           lse=lambda q, k, v, causal, scale: masked_attention(q, k, v, causal, scale)[1])
    def attention_backward(
        q: Float16[Tensor, "N D"], k: Float16[Tensor, "T D"], v: Float16[Tensor, "T D"], o: Float16[Tensor, "N D"],
        lse: Float32[Tensor, "N"], do: Float16[Tensor, "N D"], causal: bool, scale: float,
    ) -> tuple[Float32[Tensor, "N D"], Float32[Tensor, "T D"], Float32[Tensor, "T D"]]:
        with torch.enable_grad():
            leaves = [t.detach().requires_grad_() for t in (q, k, v)]
            return torch.autograd.grad(masked_attention(*leaves, causal, scale)[0], leaves, do)  # (dq, dk, dv)

What you write: the bodies of `attention_backward_delta_kernel` (Δ, one program per BQ queries),
`attention_backward_dkdv_kernel` (one program per BK keys) and `attention_backward_dq_kernel` (one
program per BQ queries). The launcher is given; it runs them in that order. D is a power of two from
16 to 256. Every product is a `tl.dot` of 16-bit operands into float32: cast p and ds to the inputs'
dtype first (`p.to(do.dtype)`), as in puzzle 12.
Budget: no atomics; Q, dO, lse and Δ read at most once per key block's walk (and once in the other
two kernels); K and V at most once per query block's walk; dq, dk, dv written once; nothing but Δ
(N floats) written besides them, never an N x T matrix; the products on tensor cores.

Hints
- Δ: rows, their mask, o and dO as float32 [BQ, D] blocks, store the row sums of their product (6 lines)
- dK/dV: this program's keys, their k and v [BK, D] blocks, two float32 accumulators; with
  CAUSAL, the first query block that sees any of these keys (query i sees key j when
  j <= i + T - N), rounded down to a multiple of BQ; the queries past it in blocks of BQ      (9 lines)
- per query block: q and dO [BQ, D], lse and Δ [BQ]; s = tl.dot(q, tl.trans(k)) times
  scale * log2(e); which (query, key) pairs count: both in range and, with CAUSAL, seen; p =
  exp2(s - lse * log2(e)) there and 0 elsewhere, by `tl.where` (a row with lse = -inf sees no
  key: it must come out 0, never inf - inf); dv, dp, ds, dk as in the math                    (14 lines)
- store dk * scale and dv                                                                   (2 lines)
- dQ: the mirror image. Hold q, dO, lse and Δ of this program's queries; with CAUSAL, stop the
  key loop after the last key the last of these queries sees; ds as above; dq += tl.dot(ds, k);
  store dq * scale                                                                          (25 lines)

Grade it:  python -m grader 17
"""

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
    # Your code here: about 6 lines.
    pass


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
    # Your code here: about 25 lines.
    pass


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
    # Your code here: about 23 lines.
    pass


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
