"""Put a submission's kernels under the puzzle's own launcher: the module kernel-only grading runs.

The judge sends two texts (``grader.judge.submission``): the submission's kernels (its @triton.jit functions,
literal constants and triton imports, on the lines the file has them, every other line blank) and the puzzle's
given code (its stub, with the learner's kernels blanked). ``build`` writes each to a file of its own, so that
Triton reads the kernels' source and messages quote the learner's lines, and imports them as two modules:

- the puzzle's module first: its imports, constants, helpers, given kernels and launcher;
- then the kernels' module, which starts with the puzzle's constants, imports and given kernels, so the learner's
  kernels can read them; the submission's own constants replace the puzzle's where both have one.

The learner's kernels then take their place in the puzzle's module, where the launcher finds them.

A submission's literal constants (``ROWS = 64``, ``ROWS: tl.constexpr = 64``) are plain numbers once imported, and
Triton's compiler reads a global only when it is a ``tl.constexpr``: where Triton compiles the kernels (natively),
``build`` wraps each (``"constants"`` in the job), and the GPU compile check does the same for the interpreter's
kernels (``LITERAL_CONSTANTS``). The interpreter keeps them plain: it runs `ROWS * x` as Python, where a constexpr on
the left of a block fails.

A kernel may declare a persistent variant: a last parameter ``NUM_PROGRAMS: tl.constexpr`` (the launcher does not
pass it). The launcher's grid is then run on min(NUM_PROGRAMS, the grid's programs) programs along axis 0, with
NUM_PROGRAMS the GPU's multiprocessor count (``PROGRAMS_BY_CASE`` in the interpreter, so that the cases make
every program loop). Program p does the launcher's programs p, p + NUM_PROGRAMS, ..., numbered along axis 0 first:
its loop finds their ids from its own arguments.
"""

from __future__ import annotations

import importlib.util
import math
import os
import sys
from collections.abc import Callable

from grader import env

PERSISTENT = "NUM_PROGRAMS"
GIVEN_FOLDERS: set[str] = set()  # where build() put puzzles' code: a frame there is the puzzle's, not the learner's
INTERPRETER_PROGRAMS = 4  # multiprocessors a persistent kernel gets in the interpreter, in a puzzle's first case
# and in each case after it in turn (``interpreter_programs``): small counts, so that the cases make every program
# loop, and the counts of common GPUs (an H100 or H200's 132, an A100's 108), so that a kernel that tests the count
# (NUM_PROGRAMS == 4, true only in the interpreter) cannot be one kernel here and another on a GPU
PROGRAMS_BY_CASE = (INTERPRETER_PROGRAMS, 3, 132, 5, 108, 2, 7)
_programs = INTERPRETER_PROGRAMS


def interpreter_programs(case_index: int) -> None:
    """NUM_PROGRAMS in the interpreter for the case at this index of its puzzle's cases."""
    global _programs
    _programs = PROGRAMS_BY_CASE[case_index % len(PROGRAMS_BY_CASE)]
LITERAL_CONSTANTS: dict[str, frozenset] = {}  # kernels' module -> its literal constants (module docstring)


class Persistent:
    """A learner's kernel with a NUM_PROGRAMS parameter, as the launcher sees it: `kernel[grid](...)` launches it
    on at most NUM_PROGRAMS programs (module docstring)."""

    def __init__(self, kernel, programs: Callable[[], int]):
        self.kernel, self.programs = kernel, programs
        self.__name__ = getattr(kernel, "__name__", "kernel")

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            shape = grid(kwargs) if callable(grid) else grid
            shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
            programs = self.programs()
            return self.kernel[(max(1, min(programs, math.prod(shape))),)](*args, **kwargs, NUM_PROGRAMS=programs)
        return launch


def multiprocessors(device: str) -> int:
    """NUM_PROGRAMS for a persistent kernel: the GPU's multiprocessors, or this case's count on the CPU."""
    if device == "cpu":
        return _programs
    import torch

    return torch.cuda.get_device_properties(torch.device(device)).multi_processor_count


def _import(path: str, name: str, namespace: dict | None = None):
    """Import the file at `path` as module `name`, its namespace started with `namespace`."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(namespace or {})
    sys.modules[name] = module  # triton's jit reads a kernel's source through its module
    spec.loader.exec_module(module)
    return module


def _as_constexpr(module, names) -> None:
    """Wrap the module's literal numbers among `names` as tl.constexpr, which the GPU compiler reads."""
    import triton.language as tl

    for name in names:
        value = module.__dict__.get(name)
        if isinstance(value, (bool, int, float)):
            setattr(module, name, tl.constexpr(value))


def build(job: dict, folder: str, device: str):
    """The puzzle's module with the submission's kernels in it (module docstring). `job` holds "name" (the
    submission's file name), "text" (its kernels), "given" (the puzzle's code), "module" (the puzzle's module
    name), "kernels" (the learner's kernels' names), "shared" (the puzzle's names the kernels may read) and
    "constants" (the submission's literal constants).
    Exceptions from the kernels' module (a kernel Triton refuses at definition) are the caller's to report."""
    os.makedirs(os.path.join(folder, "puzzle"), exist_ok=True)
    GIVEN_FOLDERS.add(os.path.join(os.path.abspath(folder), "puzzle") + os.sep)
    given_path = os.path.join(folder, "puzzle", f"{job['module']}.py")
    kernels_path = os.path.join(folder, job["name"])
    for path, text in ((given_path, job["given"]), (kernels_path, job["text"])):
        with open(path, "w", encoding="utf-8") as file:
            file.write(text)
    puzzle = _import(given_path, f"puzzle_{job['module']}")
    shared = {name: getattr(puzzle, name) for name in job["shared"] if hasattr(puzzle, name)}
    kernels = _import(kernels_path, f"kernels_{job['module']}", shared)
    constants = frozenset(job.get("constants", ()))
    LITERAL_CONSTANTS[kernels.__name__] = constants
    if not env.interpreter_forced():  # Triton compiles them (natively, or tests/compile_for_gpu.py)
        _as_constexpr(kernels, constants)
    for name in job["kernels"]:
        kernel = getattr(kernels, name)
        if PERSISTENT in getattr(kernel, "arg_names", ()):
            kernel = Persistent(kernel, lambda: multiprocessors(device))
        setattr(puzzle, name, kernel)
    return puzzle
