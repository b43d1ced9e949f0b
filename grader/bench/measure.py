"""What a bench measures with: medians of triton.testing.do_bench (launched, or replayed from a CUDA graph), the
GPU's ceilings measured in the same run (a device-to-device copy's bandwidth, the exp2 rate, torch.matmul's float16
rate), and the grader's own check of a result at a bench size (``GraderCheck``)."""

from __future__ import annotations

import sys

from grader.course.cases import as_list

COPY_BYTES = 2 << 30  # large enough to defeat the 60 MB L2

MATMUL_SIZE = 8192  # a float16 matmul this large runs at the tensor cores' sustained rate



def median_us(fn) -> float:
    import triton.testing

    return 1000.0 * triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")


def copy_bandwidth() -> float:
    """Bytes per second of a device-to-device copy, counting bytes read plus bytes written."""
    import torch

    src = torch.empty(COPY_BYTES // 4, dtype=torch.float32, device="cuda").uniform_()
    dst = torch.empty_like(src)
    seconds = median_us(lambda: dst.copy_(src)) * 1e-6
    return 2 * COPY_BYTES / seconds


def exp2_rate() -> float:
    """exp2 evaluations per second when the chip does nothing else: the ceiling for puzzle 6."""
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def exp2_chain(x_ptr, REPEAT: tl.constexpr, B: tl.constexpr):
        offsets = tl.program_id(0) * B + tl.arange(0, B)
        x = tl.load(x_ptr + offsets)
        for _ in tl.static_range(REPEAT):
            x = tl.exp2(-x)  # stays in (0, 1], one exp2 and one negation per step
        tl.store(x_ptr + offsets, x)

    repeat, block = 256, 1024
    x = torch.rand(block * 132 * 64, device="cuda")
    seconds = median_us(lambda: exp2_chain[(x.numel() // block,)](x, REPEAT=repeat, B=block)) * 1e-6
    return x.numel() * repeat / seconds


def matmul_rate() -> float:
    """FLOP/s of torch.matmul on two 8192 x 8192 float16 matrices: the ceiling for the tensor-core puzzles."""
    import torch

    a, b = (torch.randn(MATMUL_SIZE, MATMUL_SIZE, dtype=torch.float16, device="cuda") for _ in range(2))
    seconds = median_us(lambda: torch.matmul(a, b)) * 1e-6
    return 2 * MATMUL_SIZE**3 / seconds


class GraderCheck:
    """A result is correct at a bench size when the grader would pass it there: every element within the puzzle's
    own tolerance of the spec run in float64 (grader.judge.checker.within, on the GPU). The record of 2026-12-01
    used a flat (rtol, share of the largest |value|) instead, which called the backward passes of puzzles 14 and 17
    wrong, PyTorch's own and FlashAttention-2's among them: their gradients are sums that cancel."""

    def __init__(self, puzzle, inputs: dict):
        import torch

        wide = {k: v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v
                for k, v in inputs.items()}
        self.expected = as_list(puzzle.spec(**wide))
        self.allowed = [t.allowed(wide, e) for t, e in zip(puzzle.tolerances, self.expected)]

    def accepts(self, result) -> bool:
        from grader.judge.checker import within

        results = as_list(result)
        return len(results) == len(self.expected) and all(
            mine.shape == exp.shape and bool(within(mine.double(), exp, ok + self._rounding(mine, exp)).all())
            for mine, exp, ok in zip(results, self.expected, self.allowed))

    @staticmethod
    def _rounding(mine, expected):
        """A library peer that returns float16 where the puzzle returns float32 (torch.matmul on float16) is also
        allowed the rounding of its dtype: half a unit in the last place of the exact answer."""
        import torch

        if not mine.is_floating_point() or mine.element_size() >= 4:
            return 0.0
        return expected.abs() * torch.finfo(mine.dtype).eps / 2


def failure_note(exc: Exception) -> str:
    """A note for something that raised: its type and the first line of its message, table-safe; a peer whose
    package is missing (PyTorch Geometric off the GPU machine) says which."""
    if isinstance(exc, ImportError) and exc.name:
        return f"not installed: {exc.name}"
    lines = str(exc).strip().splitlines()
    message = f": {lines[0][:120]}" if lines else ""
    return f"failed: {type(exc).__name__}{message}".replace("|", "/")


def graph_us(fn) -> float | None:
    """Median µs of `fn` replayed from a CUDA graph, or None where it cannot be captured."""
    import triton.testing

    try:
        return 1000.0 * triton.testing.do_bench_cudagraph(fn, rep=200, return_mode="median")
    except Exception as exc:  # e.g. an op that synchronises with the host (a data-dependent size)
        print(f"  CUDA graph capture failed: {type(exc).__name__}: {str(exc)[:120]}", file=sys.stderr)
        return None
