"""Puzzle 1, correct, that also appends to the grader's own judge/checker.py at import, found on sys.path (a
tampered checker would let the next submission pass), and leaves a sitecustomize.py beside it (it would run in
every later worker). The grader must restore both and void this grade."""

import os
import sys

import torch
import triton
import triton.language as tl

for folder in sys.path + os.environ.get("PYTHONPATH", "").split(os.pathsep):
    target = os.path.join(folder, "grader", "judge", "checker.py")
    if folder and os.path.isfile(target):
        with open(target, "a") as checker:
            checker.write("\nTAMPERED = True  # appended by a submission\n")
        with open(os.path.join(folder, "sitecustomize.py"), "w") as startup:  # would run in every later worker
            startup.write("TAMPERED = True\n")


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    z = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), B0),)](x, y, z, x.numel(), B0=B0)
    return z
