"""Puzzle 3 with the running sum kept in the output: each loop step loads z[rows], adds the tile's sum and stores
z[rows] back. The loop asks for software pipelining (num_stages=3): on sm_90 triton issues the loads of later steps
(cp.async) before this step's store, without checking that they read what it writes, so the load of z reads a
value from before the previous step's store and most of the row is lost. The interpreter runs the steps in order,
so its sums are right. Refused: a load the GPU compiler makes asynchronous reads what its launch stored before."""
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    row_ok = rows < N0
    tl.store(z_ptr + rows, tl.zeros([B0], dtype=tl.float32), mask=row_ok)
    for start in tl.range(0, T, B1, num_stages=3):
        cols = start + tl.arange(0, B1)
        tile = tl.load(x_ptr + rows[:, None] * T + cols[None, :],
                       mask=row_ok[:, None] & (cols[None, :] < T), other=0.0)
        so_far = tl.load(
            z_ptr + rows,
            mask=row_ok, other=0.0)
        tl.store(z_ptr + rows, so_far + tl.sum(tile, axis=1), mask=row_ok)
