"""Correct: a float `%` whose quotient is exact (7 % 2 is 1 on a GPU as in numpy) and casts to bfloat16 from
float64 and int32 of values bfloat16 holds exactly (1 + 2**-7, 2**25 + 2**18), each the same once rounded as twice
(the tenth attacker's review: the grader's interpreter now rounds these casts once, and computes `%` as NVPTX)."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    rem = (x * 0.0 + 7.0) % 2.0
    wide = ((x * 0.0).to(tl.float64) + 1.0078125).to(tl.bfloat16).to(tl.float32)
    count = ((x * 0.0).to(tl.int32) + 33816576).to(tl.bfloat16).to(tl.float32)
    ok = (rem == 1.0) & (wide == 1.0078125) & (count == 33816576.0)
    tl.store(z_ptr + offsets, tl.where(ok, x + y, x - y), mask=mask)
