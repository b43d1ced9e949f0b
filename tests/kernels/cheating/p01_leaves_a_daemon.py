"""Puzzle 1, correct, leaving a daemon (double fork and setsid) that waits for the grading process to end and,
3 s later, writes a file next to this one: what a daemon rewriting `--json > result.json` would do. It reaches
os.fork through getattr, past the static check (a speed bump): the runtime defence must hold on its own."""

import os
import time
from pathlib import Path

import torch
import triton
import triton.language as tl

_HERE = Path(__file__)
_worker_alive, _keep_open = os.pipe()  # the grading process holds the write end until it ends

if getattr(os, "fo" + "rk")() == 0:
    os.setsid()
    if getattr(os, "fo" + "rk")() == 0:
        os.close(_keep_open)
        _HERE.with_suffix(".pid").write_text(str(os.getpid()))
        os.read(_worker_alive, 1)  # returns once the grading process, the last writer, is gone
        time.sleep(3)
        _HERE.with_suffix(".late").write_text("the daemon outlived the grader")
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
