"""Puzzle 11 with plain pointers and masks instead of tensor descriptors.

Each program walks K with two blocks of pointers that it advances by BK columns of a (BK rows of b) per
step; masks on the rows past M, the columns past N and the K positions past K load zeros, which is what
a descriptor's padding gives. The kernel takes any K and N; the puzzle's launcher still asks for
multiples of 8, which its descriptors need.
"""

import triton
import triton.language as tl


@triton.jit
def matmul_kernel(
    a_ptr,  # pointer to a: M x K float16 (or bfloat16), row-major
    b_ptr,  # pointer to b: K x N, same dtype, row-major
    c_ptr,  # pointer to the output c: M x N float32, row-major
    M,
    N,
    K,
    BM: tl.constexpr,  # rows of c per program
    BN: tl.constexpr,  # columns of c per program
    BK: tl.constexpr,  # step along K
):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    steps = tl.arange(0, BK)
    a_block = a_ptr + rows[:, None] * K + steps[None, :]  # advanced by BK columns per step
    b_block = b_ptr + steps[:, None] * N + cols[None, :]  # advanced by BK rows per step
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for start in tl.range(0, K, BK):
        inside = start + steps < K
        a = tl.load(a_block, mask=(rows[:, None] < M) & inside[None, :], other=0.0)
        b = tl.load(b_block, mask=inside[:, None] & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_block += BK
        b_block += BK * N
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))
