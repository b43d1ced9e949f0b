"""Puzzle 1: Vector add. Programs, blocks and masks.

You will learn
- how a launch splits work into programs, and how a program finds its block (`tl.program_id`);
- how `tl.arange` makes a block of offsets, and how pointers plus offsets address memory;
- why the last block needs a mask when N0 is not a multiple of B0.

The math
    z[i] = x[i] + y[i]   for i = 0 .. N0-1

Spec (the grader's copy is in grader/course/specs.py)
    def add(x: Float32[Tensor, "N0"], y: Float32[Tensor, "N0"]) -> Float32[Tensor, "N0"]:
        return x + y

What you write: the body of `add_kernel`. The launcher `add` is given.
Program `pid` handles elements pid*B0 .. pid*B0 + B0-1; some of the last program's lanes lie past N0.

Hints
- offsets: `pid * B0 + tl.arange(0, B0)`                        (1 line)
- mask:    `offsets < N0`, passed to every tl.load and tl.store  (1 line)
- load x and y, add, store z                                      (3 lines)

What your file may hold (it is graded by its kernels alone; the rest of it never runs)
- the puzzle's kernels, with their names and parameters in order, each annotated tl.constexpr or not at all; a
  parameter of your own goes after them, with a default (SCALE: tl.constexpr = 2), since the launcher passes only
  the puzzle's;
- more @triton.jit helpers (_add_block is a fine name; names starting with two underscores are not);
- module constants that are literals: ROWS = 16, ROWS: tl.constexpr = 16, EPS = tl.constexpr(1e-6);
- a print in a kernel, to debug (its lines go to stderr, not into the report), and @triton.jit's options such as
  do_not_specialize (with debug=True the grader checks tl.device_assert and int32 overflows, as a GPU would);
- calls of tl's functions, but never tl's functions as values (compared, passed or stored), identity tests only
  against None, and nothing through tl.core: the interpreter runs a stand-in for each of tl's functions, so such a
  test would make a kernel one thing on a CPU and another on a GPU. So would a pointer cast to a number (an address
  differs between the two). The grader refuses the file and names the line.

Grade it:  python -m grader 1
"""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(
    x_ptr,  # pointer to x: N0 float32 values
    y_ptr,  # pointer to y: N0 float32 values
    z_ptr,  # pointer to the output z: N0 float32 values
    N0,  # number of elements
    B0: tl.constexpr,  # elements per program, a power of two
):
    # Your code here: about 6 lines.
    pass


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    """One program per B0 elements. B0=1024 by default: on an H200 it adds 2^26 floats in 189.9 µs, the speed of a
    device-to-device copy (4096 was no faster)."""
    z = torch.empty_like(x)
    n0 = x.numel()
    add_kernel[(triton.cdiv(n0, B0),)](x, y, z, n0, B0=B0)
    return z
