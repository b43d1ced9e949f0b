"""Puzzle 1, correct, that sends the grader a forged access-map event under `--map` before its kernel runs: the
event's text is in a file beside this one, with the suffix .forge (the test writes it). The worker's event pipe
is its first argument. A forged map must be refused with a message, never crash or mislead the grader."""

import os
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    os.write(int(sys.argv[1]), Path(__file__).with_suffix(".forge").read_bytes())
    z = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), B0),)](x, y, z, x.numel(), B0=B0)
    return z
