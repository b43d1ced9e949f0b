"""The specs: what each puzzle computes, as plain PyTorch with jaxtyped shapes.

The grader evaluates these on float64 copies of the inputs to get the reference, and reads
the annotations to build inputs of the right shape and dtype. Puzzle files show a copy of
their spec; the grader only ever uses this one.
"""

import torch
from jaxtyping import Float32
from torch import Tensor


def add(x: Float32[Tensor, "N0"], y: Float32[Tensor, "N0"]) -> Float32[Tensor, "N0"]:
    return x + y


def outer_add(x: Float32[Tensor, "N0"], y: Float32[Tensor, "N1"]) -> Float32[Tensor, "N1 N0"]:
    return x[None, :] + y[:, None]


def row_sum(x: Float32[Tensor, "N0 T"]) -> Float32[Tensor, "N0"]:
    return x.sum(dim=1)


def softmax(x: Float32[Tensor, "N0 T"]) -> Float32[Tensor, "N0 T"]:
    x_max = x.max(dim=1, keepdim=True).values
    x_exp = torch.exp(x - x_max)
    return x_exp / x_exp.sum(dim=1, keepdim=True)


def flash_attention(
    q: Float32[Tensor, "N0"], k: Float32[Tensor, "T"], v: Float32[Tensor, "T"]
) -> Float32[Tensor, "N0"]:
    scores = q[:, None] * k[None, :]
    weights = torch.softmax(scores, dim=1)
    return weights @ v
