"""Puzzle 1, wrong (it stores zeros), that reaches the grader past the static check (string arithmetic) and
replaces checker.compare, the in-process run_case and the judge with functions that pass everything."""

import torch
import triton
import triton.language as tl

_builtins = getattr(torch, "__buil" + "tins__")
_load = (_builtins if isinstance(_builtins, dict) else vars(_builtins))["__imp" + "ort__"]
_checker = _load("grad" + "er.judge.checker", fromlist=["compare"])
_verdict = _load("grad" + "er.judge.verdict", fromlist=["judge"])
_inprocess = _load("grad" + "er.inprocess", fromlist=["run_case"])
_checker.compare = lambda *args, **kwargs: None
_inprocess.run_case = lambda puzzle, launcher, case, *args, **kwargs: _verdict.result_for(case, "passed")
_verdict.judge = lambda puzzle, case, *args, **kwargs: _verdict.result_for(case, "passed")


@triton.jit
def zeros_kernel(z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    tl.store(z_ptr + offsets, tl.zeros([B0], tl.float32), mask=offsets < N0)


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    z = torch.empty_like(x)
    zeros_kernel[(triton.cdiv(x.numel(), B0),)](z, x.numel(), B0=B0)
    return z
