"""Puzzle 11 with block pointers (`tl.make_block_ptr`), the API that tensor descriptors replaced.

A block pointer describes the matrix (base, shape, strides) and one block of it (offsets, block shape);
`tl.advance` moves it BK columns of a (BK rows of b) per step. `boundary_check` on both axes loads zeros
past the edges, as a descriptor's padding does, and keeps the store inside c. Triton 3.6 has block
pointers; triton 3.9 keeps the name `tl.make_block_ptr` only to raise "Block pointers have been removed
in favor of the tensor descriptor API", so this kernel passes on 3.6 and is refused on 3.9.
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
    row0, col0 = tl.program_id(0) * BM, tl.program_id(1) * BN
    # order=(1, 0): the last axis is the contiguous one (row-major).
    a_block = tl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(row0, 0), block_shape=(BM, BK),
                                order=(1, 0))
    b_block = tl.make_block_ptr(b_ptr, shape=(K, N), strides=(N, 1), offsets=(0, col0), block_shape=(BK, BN),
                                order=(1, 0))
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for _ in tl.range(0, K, BK):
        a = tl.load(a_block, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_block, boundary_check=(0, 1), padding_option="zero")
        acc = tl.dot(a, b, acc)
        a_block = tl.advance(a_block, (0, BK))
        b_block = tl.advance(b_block, (BK, 0))
    c_block = tl.make_block_ptr(c_ptr, shape=(M, N), strides=(N, 1), offsets=(row0, col0), block_shape=(BM, BN),
                                order=(1, 0))
    tl.store(c_block, acc, boundary_check=(0, 1))
