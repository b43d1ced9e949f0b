"""Compile every kernel that the given launchers launch for an H100/H200 (sm_90), on a machine with no GPU.

The interpreter accepts things the GPU compiler rejects (a global that is not a constexpr, a compiler
assertion in one version of triton, ...). This runs each launcher on the CPU with triton's launch
replaced by `triton.compile` for sm_90, so such kernels fail here instead of on the GPU.

    python tests/compile_for_gpu.py            every solution and every correct alternative kernel
    python tests/compile_for_gpu.py 2/4        the second of four interleaved parts of them (the tests run
                                               the parts side by side: the whole is minutes of one core)
Prints one line per launcher and exits 1 if any kernel failed to compile. The alternatives in
tests/kernels/right/ run under the puzzle's own launcher, as kernel-only grading runs them; those in
tests/kernels/right_own_launcher/ under their own.
"""

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import grader  # noqa: E402, F401  (importing it sets TRITON_INTERPRET=1 on a CPU machine; undone next)

os.environ.pop("TRITON_INTERPRET", None)  # triton reads it when @triton.jit runs: kernels below are compiled

import torch  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402
from triton.runtime.autotuner import Autotuner  # noqa: E402
from triton.runtime.jit import JITFunction  # noqa: E402

from grader.course import registry  # noqa: E402
from grader.course.cases import make_inputs, spec_args  # noqa: E402
from grader.judge import runner  # noqa: E402
from grader.worker import loader  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)
_TYPES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16", torch.float64: "fp64",
          torch.int32: "i32", torch.int64: "i64", torch.int8: "i8", torch.uint8: "u8", torch.bool: "i1"}
_done: set = set()


def _type(value) -> str:
    if isinstance(value, torch.Tensor):
        return "*" + _TYPES[value.dtype]
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        return "i32" if -2**31 <= value < 2**31 else "i64"
    if isinstance(value, float):
        return "fp32"
    raise TypeError(f"cannot pass {type(value).__name__} to a kernel")


def compile_instead_of_launching(self, *args, grid, warmup, **kwargs):
    bound = dict(zip(self.arg_names, args))
    bound.update({k: v for k, v in kwargs.items() if k in self.arg_names})
    signature, constexprs = {}, {}
    for param in self.params:
        value = bound[param.name] if param.name in bound else param.default
        if param.is_constexpr:
            signature[param.name], constexprs[param.name] = "constexpr", value
        else:
            signature[param.name] = _type(value)
    options = {k: kwargs[k] for k in ("num_warps", "num_stages") if k in kwargs}
    key = (self.fn.__qualname__, self.fn.__code__.co_filename, tuple(signature.items()),
           tuple(constexprs.items()), tuple(options.items()))
    if key not in _done:
        triton.compile(ASTSource(self, signature, constexprs), target=TARGET, options=options)
        _done.add(key)


JITFunction.run = compile_instead_of_launching


def every_config(self, *args, **kwargs):
    """An @triton.autotune kernel: compile it with each of its configs (there is no GPU to time them on)."""
    for config in self.configs:
        self.fn.run(*args, **{**kwargs, **config.all_kwargs()})


Autotuner.run = every_config


def check(puzzle, launcher) -> str | None:
    """None if every kernel of every case compiles; else the first error, in short."""
    for case in puzzle.cases:
        inputs, _ = make_inputs(puzzle.spec, case, 0)
        try:
            launcher(*[inputs[a.name] for a in spec_args(puzzle.spec)], **case.blocks)
        except Exception as exc:  # report the compiler's verdict, not a traceback
            text = str(exc).strip().splitlines()
            return f"{case.name}: {type(exc).__name__}: {' | '.join(text[-3:])[:400]}"
    return None


def kernels_under_the_puzzles_launcher(puzzle, file: str):
    """The puzzle's own launcher running the kernels of `file`, as kernel-only grading builds it."""
    job, refused, _ = runner.read_submission(puzzle, "puzzles", file)
    if job is None:
        raise loader.LoadError(refused[0].message)
    return loader.load_kernels(puzzle, job, "cpu", folder=tempfile.mkdtemp(prefix="compile-for-gpu-"))


def main(part: str | None = None) -> int:
    failures = 0
    kernels = ROOT / "tests" / "kernels"
    jobs = [(p, "solutions", None) for p in registry.PUZZLES]
    jobs += [(registry.find(int(path.name[1:3])), "kernels", str(path))
             for path in sorted((kernels / "right").glob("p*.py"))]
    jobs += [(registry.find(int(path.name[1:3])), "puzzles", str(path))
             for path in sorted((kernels / "right_own_launcher").glob("p*.py"))]
    if part:  # "K/N": every Nth job from the Kth, so that each part gets some of the big puzzles
        k, n = map(int, part.split("/"))
        jobs = jobs[k - 1::n]
    for puzzle, impl, file in jobs:
        source = file or f"solutions/{puzzle.module}.py"
        try:
            launcher = kernels_under_the_puzzles_launcher(puzzle, file) if impl == "kernels" else \
                loader.load_launcher(puzzle, impl, file)
            problem = check(puzzle, launcher)
        except loader.LoadError as exc:
            problem = f"not loaded: {exc}"
        failures += problem is not None
        print(f"{'FAIL' if problem else 'ok  '} {Path(source).name}" + (f": {problem}" if problem else ""), flush=True)
    print(f"{len(_done)} kernel specialisations compiled for sm_90 with triton {triton.__version__}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else None))
