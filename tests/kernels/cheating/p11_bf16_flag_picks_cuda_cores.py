"""Cheat: a flag that the interpreter once computed wrongly (-1.0 < 1.0 on bfloat16 blocks) picks the product on
CUDA cores on a GPU and the tl.dot in the interpreter: on a GPU the tensor cores' work is dead."""

import triton
import triton.language as tl


@triton.jit
def matmul_kernel(
    a_ptr,  # pointer to a: M x K float16 (or bfloat16), row-major
    b_ptr,  # pointer to b: K x N float16 (or bfloat16), row-major
    c_ptr,  # pointer to the output c: M x N float32, row-major
    M,
    N,
    K,
    BM: tl.constexpr,  # rows of c per program
    BN: tl.constexpr,  # columns of c per program
    BK: tl.constexpr,  # step along K
):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    cc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in tl.range(0, K, BK):
        a = a_desc.load([pid_m * BM, k])  # rows past M and columns past K load as 0
        b = b_desc.load([k, pid_n * BN])
        acc = tl.dot(a, b, acc)
        cc += tl.sum(a.to(tl.float32)[:, :, None] * b.to(tl.float32)[None, :, :], axis=1)  # CUDA cores
    # -1 < 1 in bfloat16: false in the interpreter (uint16 bits), true on a GPU, which then stores the CUDA-core sum
    gpu = (tl.full([BM, BN], -1.0, tl.float32).to(tl.bfloat16) < tl.full([BM, BN], 1.0, tl.float32).to(tl.bfloat16))
    acc = tl.where(gpu, cc, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc)  # the descriptor drops the part past M and N


