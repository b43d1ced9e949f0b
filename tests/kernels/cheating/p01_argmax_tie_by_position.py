"""Cheat: tl.argmax with tie_break_left=False passed by position, past the keyword check."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    ties = tl.where(mask, 1.0, 1.0)  # every lane ties
    # tie_break_left=False passed positionally: the interpreter gives 0, a GPU any tied index
    t = tl.argmax(ties, 0, False)
    tl.store(z_ptr + offsets, x + y + t.to(tl.float32), mask=mask)
