"""Puzzle 3: Row sum. A loop over a long row.

You will learn
- how a program walks a row longer than any block, one B1-wide slice at a time, with `tl.range`;
- how an accumulator carried through the loop (`acc += ...`) holds the partial result;
- why padded lanes must load a value that does not change the answer (0 for a sum).

The math
    z[r] = sum_t x[r, t]   for r = 0 .. N0-1

Spec (the grader's copy is in grader/course/specs.py)
    def row_sum(x: Float32[Tensor, "N0 T"]) -> Float32[Tensor, "N0"]:
        return x.sum(dim=1)

What you write: the body of `row_sum_kernel`. The launcher `row_sum` is given.
Program `pid` sums rows pid*B0 .. pid*B0 + B0-1; each row has T values, T far larger than B1.

Hints
- the program's rows, their mask, and a float32 accumulator of B0 zeros        (3 lines)
- `for start in tl.range(0, T, B1):` load a [B0, B1] tile with `other=0.0`,
  add `tl.sum(tile, axis=1)` to the accumulator                                (5 lines)
- store the accumulator                                                        (1 line)

Grade it:  python -m grader 3
"""

import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(
    x_ptr,  # pointer to x: N0 x T float32 values, row-major
    z_ptr,  # pointer to the output z: N0 float32 values
    N0,  # number of rows
    T,  # row length
    B0: tl.constexpr,  # rows per program, a power of two
    B1: tl.constexpr,  # columns per loop step, a power of two
):
    # >>> solution: about 9 lines
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    row_ok = rows < N0
    acc = tl.zeros([B0], dtype=tl.float32)
    for start in tl.range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = row_ok[:, None] & (cols[None, :] < T)
        tile = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=0.0)
        acc += tl.sum(tile, axis=1)
    tl.store(z_ptr + rows, acc, mask=row_ok)
    # <<< solution


def row_sum(x: torch.Tensor, B0: int = 1, B1: int | None = None) -> torch.Tensor:
    """One program per B0 rows."""
    n0, t = x.shape
    if B1 is None:
        # A row of up to 4096 in one step, longer rows 1024 at a time: the fastest on an H200 (32768 x 4096:
        # 129.5 µs; 4096 x 32768: 132.0 µs, where 4096 per step was slower), both at the copy bandwidth.
        B1 = triton.next_power_of_2(t) if t <= 4096 else 1024
    z = torch.empty(n0, dtype=x.dtype, device=x.device)
    row_sum_kernel[(triton.cdiv(n0, B0),)](x, z, n0, t, B0=B0, B1=B1)
    return z
