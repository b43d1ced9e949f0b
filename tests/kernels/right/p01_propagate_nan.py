"""Correct: tl.maximum and tl.minimum with propagate_nan=tl.PropagateNan.ALL, a documented argument (the fifteenth
review: the allowlist refused tl.PropagateNan.ALL as a path into triton's internals). max + min of x and y is x + y."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    big = tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL)
    small = tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL)
    tl.store(z_ptr + offsets, big + small, mask=mask)
