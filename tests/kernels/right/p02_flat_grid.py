"""Puzzle 2 as a persistent kernel on a 1-D grid: each program finds its tiles by dividing their number into
(row block, column block).

The parameter NUM_PROGRAMS declares the persistent variant (grader/worker/compose.py): the launcher's 2-D grid
of tiles is run on NUM_PROGRAMS programs along axis 0, tiles numbered along axis 0 (the column blocks) first,
and program p does tiles p, p + NUM_PROGRAMS, ...
"""

import triton
import triton.language as tl


@triton.jit
def outer_add_kernel(x_ptr, y_ptr, z_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr, NUM_PROGRAMS: tl.constexpr):
    column_blocks = tl.cdiv(N0, B0)
    for tile in tl.range(tl.program_id(0), column_blocks * tl.cdiv(N1, B1), NUM_PROGRAMS):
        cols = (tile % column_blocks) * B0 + tl.arange(0, B0)
        rows = (tile // column_blocks) * B1 + tl.arange(0, B1)
        x = tl.load(x_ptr + cols, mask=cols < N0)
        y = tl.load(y_ptr + rows, mask=rows < N1)
        mask = (rows < N1)[:, None] & (cols < N0)[None, :]
        tl.store(z_ptr + rows[:, None] * N0 + cols[None, :], x[None, :] + y[:, None], mask=mask)
