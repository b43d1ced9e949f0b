"""Puzzle 1, wrong (it stores zeros), that writes forged "passed" events to the grader's event pipe: its file
descriptor is the worker's first argument."""

import json
import os
import sys

import torch
import triton
import triton.language as tl


def _forge() -> None:
    fake = {"name": "forged", "passed": True, "reason": "passed", "message": ""}
    for event in ({"event": "result", "puzzle": 1, "result": fake},
                  {"event": "done", "puzzle": 1, "notices": []}):
        os.write(int(sys.argv[1]), (json.dumps(event) + "\n").encode())


@triton.jit
def zeros_kernel(z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    tl.store(z_ptr + offsets, tl.zeros([B0], tl.float32), mask=offsets < N0)


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    _forge()
    z = torch.empty_like(x)
    zeros_kernel[(triton.cdiv(x.numel(), B0),)](z, x.numel(), B0=B0)
    return z
