"""Puzzle 11 on CUDA cores: each block product is a broadcast multiply and a sum over K, with no tl.dot.

The values are right (the products are summed in float32), but nothing runs on tensor cores, so the
Dots budget must reject it.
"""

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
                    other=0.0).to(tl.float32)
        b = tl.load(b_ptr + steps[:, None] * N + cols[None, :], mask=(steps[:, None] < K) & (cols[None, :] < N),
                    other=0.0).to(tl.float32)
        acc += tl.sum(a[:, :, None] * b[None, :, :], axis=1)  # [BM, BK, BN] products, summed over K
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))
