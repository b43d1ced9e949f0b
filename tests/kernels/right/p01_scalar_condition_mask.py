"""Puzzle 1 with a mask that combines a block condition with a scalar one (`block_ok & (start < N0)`).
The GPU and the grader run it; triton 3.9's stock interpreter rejects it, so the grader adds a note
saying what to write instead."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    start = tl.program_id(0) * B0
    offsets = start + tl.arange(0, B0)
    mask = (offsets < N0) & (start < N0)
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
