"""Review 20: x read as 8-byte integers at 4-byte steps, each lane keeping the low half: numpy reads any address,
while a GPU's 8-byte load at an address that is not a multiple of 8 stops the kernel ("misaligned address")."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    pair_ok = offsets + 1 < N0
    wide = tl.load((x_ptr + offsets).to(tl.pointer_type(tl.int64)), mask=pair_ok, other=0)
    low = (wide & 0xFFFFFFFF).to(tl.uint32).to(tl.float32, bitcast=True)
    x = tl.where(pair_ok, low, tl.load(x_ptr + offsets, mask=mask))
    tl.store(z_ptr + offsets, x + tl.load(y_ptr + offsets, mask=mask), mask=mask)
