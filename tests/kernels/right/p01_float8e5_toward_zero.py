"""Correct: casts to float8e5 rounding toward zero, as sm_90 compiles them (to float16 toward zero, then its high
byte): 3 is exact, 1e6 and -70000 lie past float16's range and give the largest finite float8e5, 57344, with their
sign (the eleventh attacker's review: the interpreter gave NaN and -inf)."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    zero = offsets.to(tl.float32) * 0.0
    big = (zero + 1e6).to(tl.float8e5, fp_downcast_rounding="rtz").to(tl.float32)
    exact = (zero + 3.0).to(tl.float8e5, fp_downcast_rounding="rtz").to(tl.float32)
    low = (zero - 70000.0).to(tl.float8e5, fp_downcast_rounding="rtz").to(tl.float32)
    right = (big == 57344.0) & (exact == 3.0) & (low == -57344.0)
    tl.store(z_ptr + offsets, tl.where(right, x + y, x - y), mask=mask)
