"""Cheat: one `return` in a helper's source, inside a tl.static_range of 2, so the compiler sees two returns (65536,
then 1) that differ: triton 3.9 makes the result an int32 tensor (and 3.6 every returned number), so `big() * 65536`
wraps to 0 on a GPU and the kernel adds y twice; the grader's interpreter once decided from the source's one return
(the eighth attacker's review; it now makes every returned number a tensor, as 3.6 does)."""

import triton
import triton.language as tl


@triton.jit
def big():
    for i in tl.static_range(2):
        return 65536 >> (16 * i)


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    tl.store(z_ptr + offsets, tl.where(big() * 65536 == 0, x + y + y, x + y), mask=mask)
