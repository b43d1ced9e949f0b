import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    # The previous program's first tile of x used as scratch: saved in registers, overwritten, and put back after
    # this program's loop. The interpreter runs the previous program first, so it has read its tile by then; on a
    # GPU the programs run at the same time and it may read the scratch values instead (a write after another
    # program's read)
    pid = tl.program_id(0)
    rows = pid * B0 + tl.arange(0, B0)
    row_ok = rows < N0
    cols = tl.arange(0, B1)
    prev = rows - B0
    prev_mask = (prev[:, None] >= 0) & (cols[None, :] < T)
    prev_ptrs = x_ptr + prev[:, None] * T + cols[None, :]
    saved = tl.load(prev_ptrs, mask=prev_mask, other=0.0)
    tl.store(prev_ptrs, tl.zeros([B0, B1], dtype=tl.float32), mask=prev_mask)
    acc = tl.zeros([B0], dtype=tl.float32)
    for start in tl.range(0, T, B1):
        c = start + cols
        tile = tl.load(x_ptr + rows[:, None] * T + c[None, :], mask=row_ok[:, None] & (c[None, :] < T), other=0.0)
        acc += tl.sum(tile, axis=1)
    tl.store(prev_ptrs, saved, mask=prev_mask)
    tl.store(z_ptr + rows, acc, mask=row_ok)
