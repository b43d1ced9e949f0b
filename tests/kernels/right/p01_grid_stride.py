"""Puzzle 1 as a persistent kernel: NUM_PROGRAMS programs, each striding over the vector (a grid-stride loop).

The parameter NUM_PROGRAMS declares the persistent variant (grader/worker/compose.py): the puzzle's launcher
then runs min(NUM_PROGRAMS, its grid) programs, NUM_PROGRAMS being the GPU's multiprocessor count (4 in the
interpreter, so that the cases make programs loop). Program p adds blocks p, p + NUM_PROGRAMS, ...
"""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr, NUM_PROGRAMS: tl.constexpr):
    for start in tl.range(tl.program_id(0) * B0, N0, NUM_PROGRAMS * B0):
        offsets = start + tl.arange(0, B0)
        mask = offsets < N0
        tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
