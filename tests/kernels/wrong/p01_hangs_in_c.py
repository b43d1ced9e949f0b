"""Puzzle 1 that hangs where the in-process alarm cannot reach it: a loop inside C code, which never returns
to the interpreter loop that would run the alarm's handler."""

import collections
import itertools

import torch


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    collections.deque(itertools.count(), maxlen=0)  # consumes an endless iterator without leaving C
