"""Puzzle 11 on CUDA cores (broadcast multiplies and sums), with tl.dot's full work added in as (d - d)
(issue 26, class 2): the dots run and their results reach c's store, but cancel. Perturbing the tl.dot's result
leaves c as it was, so the work is dead, however the cancellation is written."""

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for start in tl.range(0, K, BK):
        steps = start + tl.arange(0, BK)
        a = tl.load(a_ptr + rows[:, None] * K + steps[None, :], mask=(rows[:, None] < M) & (steps[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + steps[:, None] * N + cols[None, :], mask=(steps[:, None] < K) & (cols[None, :] < N),
                    other=0.0)
        acc += tl.sum(a.to(tl.float32)[:, :, None] * b.to(tl.float32)[None, :, :], axis=1)
        d = tl.dot(a, b)
        acc += d - d  # the cheat: tensor-core work that cancels itself
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a: torch.Tensor, b: torch.Tensor, BM: int = 128, BN: int = 128, BK: int = 64) -> torch.Tensor:
    (m, k), n = a.shape, b.shape[1]
    c = torch.empty((m, n), dtype=torch.float32, device=a.device)
    bm, bn, bk = min(BM, 32), min(BN, 32), min(BK, 16)  # small tiles: the broadcast product is M x N x K lanes
    matmul_kernel[(triton.cdiv(m, bm), triton.cdiv(n, bn))](a, b, c, m, n, k, BM=bm, BN=bn, BK=bk)
    return c
