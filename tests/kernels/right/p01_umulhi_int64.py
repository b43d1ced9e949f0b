"""Correct: tl.umulhi of int64 values, -1 among them, as mul.hi.u64 computes them (the high half of the unsigned
product); triton 3.6's interpreter refused -1 (OverflowError)."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    # a correct kernel: umulhi(2**64 - 1, 2) is 1 (mul.hi.u64), so the scale is 1.0
    hi = tl.umulhi(tl.full([B0], -1, tl.int64), tl.full([B0], 2, tl.int64))
    tl.store(z_ptr + offsets, (x + y) * hi.to(tl.float32), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    z = torch.empty_like(x)
    n0 = x.numel()
    add_kernel[(triton.cdiv(n0, B0),)](x, y, z, n0, B0=B0)
    return z
