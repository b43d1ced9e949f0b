"""Cheat: a tensor descriptor made in puzzle 1's kernel. On a GPU its launch needs global scratch memory, which
triton asks of the allocator set by triton.set_allocator; puzzle 1's launcher sets none, so it cannot launch (the
twelfth review). The interpreter needs no allocator."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    # device-side tensor descriptors need global scratch memory: triton.set_allocator, which this launcher never calls
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[N0], strides=[1], block_shape=[B0])
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = x_desc.load([pid * B0])
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets, x + y, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    z = torch.empty_like(x)
    n0 = x.numel()
    add_kernel[(triton.cdiv(n0, B0),)](x, y, z, n0, B0=B0)
    return z
