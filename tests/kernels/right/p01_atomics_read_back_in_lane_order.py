"""Puzzle 1 built in z with atomics: an exchange puts x's bits in (an int32 view: the interpreter exchanges no
floats), an atomic add adds y, and each lane reads back with a plain load the element it updated itself, in the
same lane order: a thread reads what it wrote itself, so no barrier is needed and no lane races."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.atomic_xchg(z_ptr.to(tl.pointer_type(tl.int32)) + offsets, x.to(tl.int32, bitcast=True), mask=mask)
    tl.atomic_add(z_ptr + offsets, tl.load(y_ptr + offsets, mask=mask), mask=mask)
    total = tl.load(z_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets, total, mask=mask)
