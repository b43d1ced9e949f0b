"""Puzzle 11 with a persistent, L2-grouped schedule: the solution's kernel, then the schedule that brings it near
cuBLAS on an H200 (issue 11).

It lives here, not in solutions/p11_matmul.py, because the learner's stub is made from the solution file: every
line outside the `# >>> solution` region reaches puzzles/ and the notebook, and this kernel's loop over K is the
puzzle's answer. Grade and time it as a submission:

    python -m grader 11 --file scripts/p11_matmul_persistent.py
    python -m grader bench 11 --file scripts/p11_matmul_persistent.py

`matmul` defaults to the persistent schedule (GROUP_M=8); GROUP_M=0 runs the lesson's one-program-per-tile grid.
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


def _scratch(size: int, alignment: int, stream):
    """Global memory for descriptors made inside a kernel (triton asks for it on the GPU)."""
    return torch.empty(size, dtype=torch.int8, device="cuda")


def matmul(a: torch.Tensor, b: torch.Tensor, BM: int = 128, BN: int = 128, BK: int = 64,
           GROUP_M: int = 8) -> torch.Tensor:
    """One program per [BM, BN] block of c; with GROUP_M > 0, the persistent schedule below instead."""
    (m, k), n = a.shape, b.shape[1]
    if k % 8 or n % 8:
        raise ValueError(f"K={k} and N={n} must be multiples of 8: tensor descriptors need 16-byte row strides")
    c = torch.empty((m, n), dtype=torch.float32, device=a.device)
    if a.is_cuda:
        triton.set_allocator(_scratch)
    if GROUP_M:
        return matmul_persistent(a, b, c, BM, BN, BK, GROUP_M)
    grid = (triton.cdiv(m, BM), triton.cdiv(n, BN))
    # 4 warps, 4 pipeline stages: fastest for 128x128x64 blocks on an H200 (scripts/explore_tensor_core_kernels.py)
    matmul_kernel[grid](a, b, c, m, n, k, BM=BM, BN=BN, BK=BK, num_warps=4, num_stages=4)
    return c


# -- Beyond the lesson: a persistent, L2-grouped schedule -------------------------------------------------------
# Measured on an H200 (scripts/bench_peers_4_5_11.py, 128x256x64 blocks, the best GROUP_M of 4, 8, 16) against
# the lesson's kernel above (128x128x64 blocks, 2-D grid): 4096^3 261 -> 213 µs, 8192^3 2108 -> 1704 µs,
# 4000 x 4096 x 4040 304 -> 227 µs (cuBLAS: 201, 1665, 211 µs); scripts/bench_peers_4_5_11.py times each step.

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
        rows = pid_m * BM + tl.arange(0, BM)
        cols = pid_n * BN + tl.arange(0, BN)
        tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul_persistent(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, BM: int, BN: int, BK: int,
                      GROUP_M: int) -> torch.Tensor:
    """One program per multiprocessor, each walking tiles of c."""
    (m, k), n = a.shape, b.shape[1]
    programs = torch.cuda.get_device_properties(a.device).multi_processor_count if a.is_cuda else 4
    tiles = triton.cdiv(m, BM) * triton.cdiv(n, BN)
    # 128x256 blocks need two warp groups (8 warps) and leave shared memory for 3 stages; on an H200 they beat
    # 128x128 blocks with 4 warps and 4 stages (4096^3: 233 -> 215 µs, 8192^3: 2087 -> 1790 µs with GROUP_M=8).
    wide = BM * BN >= 128 * 256
    matmul_persistent_kernel[(min(tiles, programs),)](a, b, c, m, n, k, BM=BM, BN=BN, BK=BK, GROUP_M=GROUP_M,
                                                      num_warps=8 if wide else 4, num_stages=3 if wide else 4)
    return c
