"""Puzzle 1, correct, with a child forked at import that sleeps holding every inherited file descriptor,
the grader's event pipe included: the pipe never reaches its end while the child lives. It reaches os.fork
through getattr, past the static check (a speed bump): the runtime defence must hold on its own."""

import os
import time
from pathlib import Path

import torch
import triton
import triton.language as tl

if getattr(os, "fo" + "rk")() == 0:
    Path(__file__).with_suffix(".pid").write_text(str(os.getpid()))
    time.sleep(3600)
    os._exit(0)

@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    z = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), B0),)](x, y, z, x.numel(), B0=B0)
    return z
