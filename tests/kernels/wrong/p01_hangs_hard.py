"""Puzzle 1 that hangs where the in-process alarm cannot reach it (the signal is blocked)."""

import signal

import torch


def add(x: torch.Tensor, y: torch.Tensor, B0: int = 1024) -> torch.Tensor:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    while True:
        pass
