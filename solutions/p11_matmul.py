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
    # >>> solution: about 11 lines
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in tl.range(0, K, BK):
        a = a_desc.load([pid_m * BM, k])  # rows past M and columns past K load as 0
        b = b_desc.load([k, pid_n * BN])
        acc = tl.dot(a, b, acc)  # float32 accumulator, 16-bit operands: tensor cores
    c_desc.store([pid_m * BM, pid_n * BN], acc)  # the descriptor drops the part past M and N
    # <<< solution


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
    # >>> beyond the lesson: by default, or with more blocks than multiprocessors: the persistent schedule below
    # By default its 128x256x64 tiles, the fastest at every size measured (H200: 4096^3 197.7 µs, 8192^3 1648.9,
    # 4000 x 4096 x 4040 222.0; 128x128x64 tiles took 232.5, 1796.2 and 283.1).
    if None in (BM, BN, BK) or triton.cdiv(m, BM) * triton.cdiv(n, BN) > _multiprocessors(a.device):
        return matmul_persistent(a, b, c, BM or 128, BN or 256, BK or 64)
    # <<< beyond the lesson
    # 128x128x64: the fastest blocks for this one-program-per-block grid on an H200 (explored at 4096^3 and 8192^3)
    BM, BN, BK = BM or 128, BN or 128, BK or 64
    grid = (triton.cdiv(m, BM), triton.cdiv(n, BN))
    # 4 warps, 4 pipeline stages: the fastest for 128x128x64 blocks on an H200 (docs/performance-notes.md)
    matmul_kernel[grid](a, b, c, m, n, k, BM=BM, BN=BN, BK=BK, num_warps=4, num_stages=4)
    return c


# >>> beyond the lesson: a persistent schedule with tiles grouped for L2
# Not part of the puzzle: the stub leaves this section out. The loop over K is the lesson's; what changes is
# which tiles run when. Measured on an H200 (docs/performance-notes.md, puzzle 11): the lesson's grid
# at 128x128x64 took 259 µs at 4096^3, 2086 at 8192^3 and 308 at 4000 x 4096 x 4040; this section at 128x256x64
# took 198, 1649 and 222 (cuBLAS with float32 output: 192, 1625, 197). Different runs; runs differ by up to 10%.

def _multiprocessors(device: torch.device) -> int:
    """Programs that run at once, one per multiprocessor; in the interpreter 4 stand-ins, so that the grader's
    cases run both schedules."""
    return torch.cuda.get_device_properties(device).multi_processor_count if device.type == "cuda" else 4


@triton.jit
def grouped_tile(tile, M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP_M: tl.constexpr):
    """(row block, column block) of c's tile number `tile`, numbering tiles down bands of GROUP_M row blocks,
    one column of the band after another.

    Tiles computed at the same time then share GROUP_M row blocks of a and a few column blocks of b, which stay
    in L2, instead of sharing one column block of b and streaming all of a from DRAM for every column."""
    blocks_m, blocks_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    band = tile // (GROUP_M * blocks_n)
    first_row_block = band * GROUP_M
    band_height = tl.minimum(blocks_m - first_row_block, GROUP_M)  # the last band can be shorter
    within = tile % (GROUP_M * blocks_n)
    return first_row_block + within % band_height, within // band_height


@triton.jit
def matmul_persistent_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                             GROUP_M: tl.constexpr):
    """The lesson's loop over K for tiles pid, pid + P, pid + 2P, ... in grouped_tile's order, P programs in all."""
    # Descriptors made once per program, one program per multiprocessor rather than one per tile (GROUP_M=8,
    # 128x128x64 blocks, same tile order: 4096^3 251 -> 233 µs).
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    for tile in tl.range(tl.program_id(0), tl.cdiv(M, BM) * tl.cdiv(N, BN), tl.num_programs(0)):
        pid_m, pid_n = grouped_tile(tile, M, N, BM, BN, GROUP_M)
        acc = tl.zeros([BM, BN], dtype=tl.float32)
        for k in tl.range(0, K, BK):
            acc = tl.dot(a_desc.load([pid_m * BM, k]), b_desc.load([k, pid_n * BN]), acc)
        # Plain stores, not a descriptor: a float32 128x256 tile stored through one needs 128 KiB of shared
        # memory on top of 3 pipeline stages (272 KiB > 227 KiB); with 2 stages it fits but took 293 µs at
        # 4096^3 against 215 µs this way.
        rows = (pid_m * BM + tl.arange(0, BM)).to(tl.int64)  # int64: rows * N passes int32 once c is 8 GiB
        cols = pid_n * BN + tl.arange(0, BN)
        tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul_persistent(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, BM: int, BN: int, BK: int,
                      GROUP_M: int = 8) -> torch.Tensor:
    """One program per multiprocessor, each walking tiles of c."""
    (m, k), n = a.shape, b.shape[1]
    tiles = triton.cdiv(m, BM) * triton.cdiv(n, BN)
    # 128x256 blocks need two warp groups (8 warps) and leave shared memory for 3 stages; on an H200 they beat
    # 128x128 blocks with 4 warps and 4 stages (GROUP_M=8, one run: 4096^3 232.5 -> 214.8 µs, 4000 x 4096 x 4040
    # 283.1 -> 234.3; 8192^3 1796 -> 1790, inside the spread).
    wide = BM * BN >= 128 * 256
    matmul_persistent_kernel[(min(tiles, _multiprocessors(a.device)),)](
        a, b, c, m, n, k, BM=BM, BN=BN, BK=BK, GROUP_M=GROUP_M, num_warps=8 if wide else 4,
        num_stages=3 if wide else 4)
    return c
# <<< beyond the lesson
