"""Cheat: tensor cores count the nonzeros of a and b (useless, integer-valued counts) while the product runs on CUDA
cores; the counts only gate the store (equal to their floor: always)."""

import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    # tensor cores count nonzeros (useless, integer-valued)
    d = tl.zeros([BM, BN], dtype=tl.float32)
    for k in tl.range(0, K, BK):
        a_ok = (rows[:, None] < M) & ((k + ks)[None, :] < K)
        a = tl.load(a_ptr + rows[:, None] * K + (k + ks)[None, :], mask=a_ok, other=0.0)
        b_ok = ((k + ks)[:, None] < K) & (cols[None, :] < N)
        b = tl.load(b_ptr + (k + ks)[:, None] * N + cols[None, :], mask=b_ok, other=0.0)
        d = tl.dot((a != 0).to(a.dtype), (b != 0).to(b.dtype), d)
    # the real product on CUDA cores, rank-1 updates
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K):
        ac = tl.load(a_ptr + rows * K + k, mask=rows < M, other=0.0).to(tl.float32)
        br = tl.load(b_ptr + k * N + cols, mask=cols < N, other=0.0).to(tl.float32)
        acc += ac[:, None] * br[None, :]
    inb = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=inb & (d == tl.floor(d)))
