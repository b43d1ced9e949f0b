"""Cheat: adds in PyTorch inside a try that swallows every exception, the grader's refusal included."""

import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    tl.store(z_ptr + offsets, tl.load(src_ptr + offsets, mask=offsets < N0), mask=offsets < N0)


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    answer = x
    try:
        answer = x + y
    except BaseException:  # noqa: S110 - the point of the cheat
        pass
    z = torch.empty_like(x)
    copy_kernel[(triton.cdiv(x.numel(), B0),)](answer, z, x.numel(), B0=B0)
    return z
