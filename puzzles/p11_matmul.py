"""Puzzle 11: Matrix multiply on tensor cores, tensor descriptors.

You will learn
- `tl.dot`: a [BM, BK] block times a [BK, BN] block in one instruction stream that runs on the
  tensor cores; float16 (or bfloat16) operands, products summed in a float32 accumulator;
- tensor descriptors (`tl.make_tensor_descriptor`): you describe the whole matrix once (base,
  shape, strides, block shape) and then load blocks by their offsets. The compiler sees a
  rectangular, contiguous block instead of BM x BK unrelated pointers, so on Hopper it can
  use the TMA copy engine. Rows and columns past the edge come back as zeros, with no mask;
- why the accumulator stays float32: float16 has 11 bits of precision, so a long sum kept in
  float16 loses the small terms, and it overflows past 65504.

The math
    c[i, j] = sum_k a[i, k] * b[k, j]
Program (pid_m, pid_n) owns the block c[pid_m*BM : pid_m*BM+BM, pid_n*BN : pid_n*BN+BN] and walks
K in steps of BK: acc += a_block @ b_block.

Spec (the grader's copy is in grader/course/specs.py)
    def matmul(a: Float16[Tensor, "M K"], b: Float16[Tensor, "K N"]) -> Float32[Tensor, "M N"]:
        return wide(a) @ wide(b)
(wide(x) is x as float32.)

What you write: the body of `matmul_kernel`. The launcher is given.
Rules the GPU sets, which the grader also checks in the interpreter:
- every dimension of a `tl.dot` is at least 16 (so BM, BN, BK >= 16);
- a tensor descriptor's strides must be multiples of 16 bytes: here K and N are multiples of 8;
- a float32 `tl.dot` runs as TF32 on the GPU (10 bits of mantissa): keep the operands 16-bit.
A plain-pointer version with masks passes too; it just gives the compiler less to work with.
Budget: all M*N*K multiply-adds run through `tl.dot`, none on CUDA cores; c is written once.

Hints
- one descriptor per matrix: shape, strides (in elements) and the block shape it hands out   (3 lines)
- a float32 [BM, BN] accumulator, then a `tl.range` loop over K in steps of BK: load the two
  blocks at their offsets and `acc = tl.dot(a, b, acc)`; the last step is partly past K,
  and the descriptor pads it with zeros                                                      (6 lines)
- store acc through c's descriptor                                                          (1 line)

Grade it:  python -m grader 11
"""

import torch
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
    # Your code here: about 11 lines.
    pass


def _scratch(size: int, alignment: int, stream):
    """Global memory for descriptors made inside a kernel (triton asks for it on the GPU)."""
    return torch.empty(size, dtype=torch.int8, device="cuda")


def matmul(a: torch.Tensor, b: torch.Tensor, BM: int | None = None, BN: int | None = None,
           BK: int | None = None) -> torch.Tensor:
    """One program per [BM, BN] block of c; block sizes left out take the fastest measured (below)."""
    (m, k), n = a.shape, b.shape[1]
    if k % 8 or n % 8:
        raise ValueError(f"K={k} and N={n} must be multiples of 8: tensor descriptors need 16-byte row strides")
    c = torch.empty((m, n), dtype=torch.float32, device=a.device)
    if a.is_cuda:
        triton.set_allocator(_scratch)
    # 128x128x64: the fastest blocks for this one-program-per-block grid on an H200 (explored at 4096^3 and 8192^3)
    BM, BN, BK = BM or 128, BN or 128, BK or 64
    grid = (triton.cdiv(m, BM), triton.cdiv(n, BN))
    # 4 warps, 4 pipeline stages: the fastest for 128x128x64 blocks on an H200 (docs/performance-notes.md)
    matmul_kernel[grid](a, b, c, m, n, k, BM=BM, BN=BN, BK=BK, num_warps=4, num_stages=4)
    return c
