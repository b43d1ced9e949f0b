"""Correct: bfloat16 reductions and scans, a bfloat16 constant and a cast rounding toward zero, each of which gives
the GPU's answer in the grader's interpreter (the ninth attacker's review): tl.argmax and tl.max of a bfloat16 block
compare numbers (its fast path compared the bits), tl.cumprod of ones is ones, tl.full(..., tl.bfloat16) runs on
triton 3.6's interpreter, and 3 cast to float16 toward zero stays 3; x + y is stored only if all of it holds."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    lane = tl.arange(0, B0)
    s = tl.where(lane == 0, -1.0, 2.0).to(tl.bfloat16)
    top = (tl.argmax(s, axis=0) == 1) & (tl.max(s, axis=0).to(tl.float32) == 2.0)
    ones = tl.cumprod(tl.full([B0], 1.0, tl.bfloat16), axis=0).to(tl.float32)
    three = (tl.zeros([B0], tl.float32) + 3.0).to(tl.float16, fp_downcast_rounding="rtz").to(tl.float32)
    ok = top & (tl.min(ones, axis=0) == 1.0) & (tl.max(three, axis=0) == 3.0)
    tl.store(z_ptr + offsets, tl.where(ok, x + y, x - y), mask=mask)
