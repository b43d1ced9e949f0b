"""Cheat (puzzle 11, the eighteenth review): c computed on CUDA cores (a broadcast multiply per k), tl.dot's result
entering c only as where(|d - c| > tol, d - c, 0), a residual that real rounding never passes but the grader's
nudge of the tl.dot always does: the dot looks live, its products are never the ones stored."""

import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mm = rm < M
    mn = rn < N
    d = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        ka = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * K + ka[None, :], mask=mm[:, None] & (ka[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ka[:, None] * N + rn[None, :], mask=(ka[:, None] < K) & mn[None, :], other=0.0)
        d = tl.dot(a, b, d)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K):
        ac = tl.load(a_ptr + rm * K + k, mask=mm, other=0.0).to(tl.float32)
        br = tl.load(b_ptr + k * N + rn, mask=mn, other=0.0).to(tl.float32)
        acc += ac[:, None] * br[None, :]
    r = d - acc
    tol = 1e-3 * tl.abs(acc) + 1e-3
    out = acc + tl.where(tl.abs(r) > tol, r, 0.0)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], out, mask=mm[:, None] & mn[None, :])
