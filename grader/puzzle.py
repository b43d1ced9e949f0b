"""What a puzzle is: the ``Puzzle`` entry that each chapter module (``grader/chapters/``) fills in.

It lives apart from ``registry.py``, the index, because the chapter modules import this type and the
index imports the chapter modules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .cases import Case
from .checker import Hint, Tolerance


@dataclass(frozen=True)
class Puzzle:
    number: int
    slug: str
    title: str
    notebook: str
    spec: Callable
    cases: tuple[Case, ...]
    tolerance: Tolerance | tuple[Tolerance, ...]  # one per output, or one for all
    budgets: tuple = ()  # budgets.Reads, Writes, Loads, NoAtomics, Dots
    hints: tuple[Hint, ...] = ()
    outputs: tuple[str, ...] = ("z",)
    # Blocks that are the lesson (a loop over blocks, a rescale): a launch may not use a wider tile than the case's.
    lesson_blocks: tuple[str, ...] = ()
    # aten ops ("aten.clone") the launcher may call besides allocations and views (launcher_guard).
    launcher_ops: tuple[str, ...] = ()

    @property
    def tolerances(self) -> tuple[Tolerance, ...]:
        return self.tolerance if isinstance(self.tolerance, tuple) else (self.tolerance,) * len(self.outputs)

    @property
    def module(self) -> str:
        return f"p{self.number:02d}_{self.slug}"

    @property
    def launcher(self) -> str:
        return self.slug

    @property
    def gpu_archs(self) -> tuple[int, ...]:
        """CUDA compute capabilities its kernels must compile for (grader.gpu_compile): the H200's sm_90, and for
        chapters 1-3, which learners also run natively on an A100 or Colab, sm_80."""
        return (90,) if self.notebook == "04_tensor_cores" else (90, 80)
