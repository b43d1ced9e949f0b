"""Puzzle 11 on CUDA cores, with a tl.dot whose result is never used to meet the tensor-core budget.

The values come from broadcast multiplies and sums; the extra tl.dot does the right amount of work in the
interpreter, but the GPU compiler removes it (nothing reads its result), so the Dots budget, which counts
only dots left in the compiled kernel, must reject it.
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
                    other=0.0)
        b = tl.load(b_ptr + steps[:, None] * N + cols[None, :], mask=(steps[:, None] < K) & (cols[None, :] < N),
                    other=0.0)
        acc += tl.sum(a.to(tl.float32)[:, :, None] * b.to(tl.float32)[None, :, :], axis=1)  # summed over K
        unused = tl.dot(a, b)  # noqa: F841  (the GPU compiler drops it)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))
