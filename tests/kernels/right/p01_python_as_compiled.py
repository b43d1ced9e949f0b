"""Correct: the Python a kernel may hold, as the GPU compiler reads it and the grader's interpreter now runs it:
a conditional expression on a run-time test, tuples, helpers with several returns (a pair, a block), and / or / not
on constexprs, min / max of constexprs, names imported from triton.language, an annotated module constant, a while
loop with an int counter and a static_range (the eighth attacker's review, which found none of it refused)."""

import triton
import triton.language as tl
from triton.language import constexpr, load

SCALE: tl.constexpr = 1


@triton.jit
def pick(a, B0: tl.constexpr):
    if B0 >= 16:
        return a
    return a * 1.0


@triton.jit
def two(p):
    if p >= 0:
        return 1, 0.0
    return 1, 0.0


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr, EXTRA: constexpr = 2):
    pid = tl.program_id(0)
    start = pid * B0 if pid >= 0 else 0
    offsets = start + tl.arange(0, B0)
    mask = offsets < N0
    ok = (B0 > 0 and EXTRA == 2) or not SCALE
    x = load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    t = (x, y)
    one, zero = two(pid)
    steps = min(B0, 4) - max(3, 2)   # 1
    acc = tl.zeros((B0,), tl.float32)
    i = 0
    while i < steps:
        acc += pick(t[0], B0) + t[1] * one + zero
        i += 1
    for j in tl.static_range(1):
        acc = acc * 1.0 + j * 0.0
    if ok and pid >= 0:
        tl.store(z_ptr + offsets, acc, mask=mask)
    else:
        tl.store(z_ptr + offsets, x + y, mask=mask)
