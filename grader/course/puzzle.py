"""What a puzzle is: the ``Puzzle`` entry that each chapter module (``grader/course/chapters/``) fills in.

It lives apart from ``registry.py``, the index, because the chapter modules import this type and the
index imports the chapter modules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import torch

from grader import env
from grader.course.cases import Case


@dataclass(frozen=True)
class Tolerance:
    """|yours - expected| <= rtol * scale(inputs, expected), element by element."""
    rtol: float
    scale: Callable[[Mapping[str, torch.Tensor], torch.Tensor], torch.Tensor]
    explain: str  # the scale in words, shown on failure

    def allowed(self, inputs: Mapping[str, torch.Tensor], expected: torch.Tensor) -> torch.Tensor:
        return self.rtol * self.scale(inputs, expected).broadcast_to(expected.shape)


def magnitude_scale(spec: Callable, *only: str) -> Callable:
    """The spec applied to |inputs|, the natural rounding bound of a sum; with names, to the magnitudes of
    those inputs only (for a softmax-weighted sum of v, "v": sum_j p_j |v_j|). The first output."""
    def scale(inputs, expected):
        out = spec(**{k: v.abs() if isinstance(v, torch.Tensor) and (not only or k in only) else v
                      for k, v in inputs.items()})
        return out[0] if isinstance(out, tuple) else out
    return scale


@dataclass(frozen=True)
class Hint:
    """A puzzle's hint: the line `text` is shown when check(inputs64, yours64, blocks) is true, that is when a
    wrong output has the pattern of the mistake `name` (each check is a named function whose docstring says
    what it checks). The chapter modules (grader/course/chapters/) hold every puzzle's hints."""
    name: str
    check: Callable[[Mapping[str, torch.Tensor], torch.Tensor, Mapping[str, int]], bool]
    text: str


# The oldest GPU (compute capability) with tensor-core bfloat16: sm_80, the A100. Below it, ptxas refuses bf16.
BF16_CAPABILITY = (8, 0)
# The oldest with TMA, the copy engine tensor descriptors use: sm_90, the H100. Below it, triton's compiler turns
# descriptor loads and stores into ordinary ones (RewriteTensorDescriptorToPointer), so they work, without TMA.
TMA_CAPABILITY = (9, 0)


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
    # Whether the lesson is tensor descriptors, which use TMA on sm_90 and become ordinary loads below it.
    descriptors: bool = False
    # Whether the puzzle's launcher sets triton's allocator on a GPU (triton.set_allocator), which a kernel that makes
    # tensor descriptors needs for its global scratch memory (grader.worker.gpu_compile refuses them elsewhere).
    allocator: bool = False
    # Whether the docstring's large problems pass 2**31 elements, so that offsets must be int64: an int32 offset
    # times a size (`rows * T`) gets a warning line, though no case here is large enough to wrap it around.
    int64_offsets: bool = False
    # Counts the budgets' formulas may name besides the case's sizes and blocks, computed from those at grading time
    # (puzzle 17's rows per walk, which depend on the block sizes of the launch)
    budget_sizes: Callable[[Mapping], Mapping] | None = None

    def sizes_for_budgets(self, blocks: Mapping, dims: Mapping) -> dict:
        """What a budget's formula may name: the case's sizes, its block sizes, and the puzzle's budget_sizes."""
        sizes = {**blocks, **dims}
        return {**sizes, **self.budget_sizes(sizes)} if self.budget_sizes is not None else sizes

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
        """CUDA compute capabilities its kernels must compile for (grader.worker.gpu_compile): the H200's sm_90, and
        sm_80, the A100 that learners also run natively: "Solved" must hold there too."""
        return (90, 80)

    def unsupported_on(self, capability: tuple[int, int]) -> str | None:
        """Why a GPU of this compute capability cannot grade this puzzle natively, or None when it can."""
        if capability < BF16_CAPABILITY and any(case.half == torch.bfloat16 for case in self.cases):
            return (f"its bfloat16 cases need tensor-core bfloat16, which GPUs have from compute capability "
                    f"{BF16_CAPABILITY[0]}.{BF16_CAPABILITY[1]} (sm_80, the A100) on")
        return None

    def gpu_notes(self, capability: tuple[int, int]) -> list[str]:
        """What differs for this puzzle on a GPU of this compute capability, though it grades natively there."""
        if self.descriptors and capability < TMA_CAPABILITY:
            return [f"this GPU (sm_{capability[0]}{capability[1]}) has no TMA, which needs sm_90: triton turns your "
                    "tensor descriptors into ordinary loads and stores. They are graded all the same; the speed "
                    "TMA brings is an H100/H200 lesson"]
        return []


def skip_reason(case: Case, device: str, number: int) -> str | None:
    """Why this case is not run in this mode, or None. The judge asks it for itself: a worker cannot skip."""
    # The interpreter hook mends bfloat16 dots on the versions it is tested with (grader.worker.instrument.status).
    if device == "cpu" and case.half == torch.bfloat16 and not env.triton_is_tested():
        return ("not run: triton's interpreter multiplies bfloat16 blocks wrongly in tl.dot, and the grader's fix "
                "needs its hook (see the notice above); a GPU grades this case")
    if device == "cuda" and case.half == torch.bfloat16 and env.gpu_capability() < BF16_CAPABILITY:
        return (f"not run: bfloat16 tensor-core dots need a GPU of sm_80 or newer, and this one is {env.gpu_label()}. "
                f"`python -m grader {number}` grades the puzzle in the interpreter instead")
    return None
