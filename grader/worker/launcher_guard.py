"""The launcher is not a loophole: it may allocate, reshape and launch kernels, not compute the answer.

Two checks, both around the learner's launcher (``grader.worker.execute.execute``):

- ``guard`` runs the launcher under a torch dispatch mode. PyTorch calls that only allocate (``empty``,
  ``zeros``, ``full``, ...), make views (``view``, ``reshape``, ``transpose``, ``[1:]``, ...) or ask for
  metadata go through; any other aten op (``add``, ``amax``, ``_softmax``, ``index``, ``repeat_interleave``,
  ``clone``, ``item`` ...) raises ``Refused``, as do ``.numpy()`` and ``.tolist()``, which would move the work
  out of PyTorch's sight. A puzzle whose launcher legitimately needs more lists the aten ops in
  ``Puzzle.launcher_ops``. Calls made by Triton's own code (the interpreter copying arguments to the host
  and back, the autotuner timing configs) are told apart by the calling frame, so they are never refused
  and nothing in Triton has to be patched for it; a lambda the learner hands to Triton is the learner's
  frame, and checked.
- ``check_launches`` holds each launch to the case's block sizes where the block is the lesson
  (``Puzzle.lesson_blocks``): a launcher that sets ``B1 = next_power_of_2(T)`` needs no loop and no
  rescale. It reads the launch's parameters, so it runs on a GPU only, where ``guard`` records the launches
  by wrapping ``JITFunction.run``; in the interpreter the hook reads every block's width as it runs
  (``grader.course.budgets.wide_tile``), which also sees tiles built inside the kernel.

``guard`` also makes ``@triton.autotune`` kernels run in the interpreter, which has no benchmarker: it
runs the first config only, and ``take_notices`` says so.

Tested on triton 3.6 and 3.9. This is a speed bump, not a sandbox: a launcher that pops the mode off
torch's stack, or reads tensor memory through ctypes, gets past it (the first is detected at exit).
"""

from __future__ import annotations

import contextlib
import inspect
import os
import sys

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from grader.worker import guards, instrument


class Refused(BaseException):
    """The launcher did work that belongs in the kernel; the message says which.

    A BaseException, so that neither a learner's `except Exception` nor the interpreter's wrapping of
    kernel errors turns it into an ordinary error."""


# aten ops (by overload packet) a launcher may call: they allocate, view, or read metadata, and compute nothing.
ALLOCATING = frozenset(f"aten.{name}" for name in (
    "empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided",
    "zeros", "zeros_like", "new_zeros", "ones", "ones_like", "new_ones", "full", "full_like", "new_full",
    "zero_", "scalar_tensor", "lift_fresh", "arange",
))
VIEWING = frozenset(f"aten.{name}" for name in (
    "view", "_unsafe_view", "_reshape_alias", "reshape", "as_strided", "alias", "detach", "t", "transpose",
    "permute", "expand", "squeeze", "unsqueeze", "select", "slice", "narrow", "split", "split_with_sizes",
    "unbind", "unfold", "diagonal", "view_as_real", "view_as_complex",
    "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "is_contiguous", "is_same_size",
))
# fill_ is an allocation when it fills with a number; fill_.Tensor could spread a computed value.
SCALAR_FILLS = frozenset({"aten.fill_.Scalar"})
# Tensor methods that hand a tensor's values to Python or numpy, where no dispatch mode sees the work.
EXPORTS = frozenset({"numpy", "tolist", "__array__", "__dlpack__"})

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_HERE = os.path.abspath(__file__)


def _triton_dir() -> str | None:
    triton = sys.modules.get("triton")
    return os.path.dirname(os.path.abspath(triton.__file__)) + os.sep if triton is not None else None


def _caller():
    """The innermost frame outside torch and this module: the code that asked for the op."""
    frame = sys._getframe(2)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(_TORCH_DIR) and filename != _HERE:
            return frame
        frame = frame.f_back
    return None


def _from_triton(frame) -> bool:
    """Triton's own machinery (argument copies, autotuning), which the learner did not write."""
    triton_dir = _triton_dir()
    return frame is not None and triton_dir is not None and \
        os.path.abspath(frame.f_code.co_filename).startswith(triton_dir)


def _where(frame) -> str:
    if frame is None:
        return ""
    where, code = instrument.learner_line(frame, (_TORCH_DIR, _HERE))
    return f"\n  at {where}: {code}" if where != "?" else ""


class _Watch:
    """What one launcher run did: the first refusal, and the launches seen natively."""

    def __init__(self, allowed: frozenset[str]):
        self.allowed = allowed
        self.refusal: str | None = None
        self.launches: list[instrument.Launch] = []

    def refuse(self, what: str, frame) -> None:
        """Raise Refused, saying what the launcher did ("computed `aten.amax` with PyTorch") and where."""
        message = f"the launcher {what}: the work belongs in the kernel{_where(frame)}"
        self.refusal = self.refusal or message  # kept, in case the learner's code swallows the exception
        raise Refused(message)


@guards.without_dynamo
class _RefuseCompute(TorchDispatchMode):
    """Refuse every aten op the watch does not allow, unless Triton's own code asked for it."""

    def __init__(self, watch: _Watch):
        super().__init__()
        self.watch = watch

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = str(func.overloadpacket)
        if name not in self.watch.allowed and str(func) not in SCALAR_FILLS:
            frame = _caller()
            if not _from_triton(frame):
                self.watch.refuse(f"computed `{name}` with PyTorch", frame)
        return func(*args, **(kwargs or {}))


class _RefuseExports(TorchFunctionMode):
    """Refuse taking a tensor's values to numpy or Python, where the dispatch mode cannot follow."""

    def __init__(self, watch: _Watch):
        super().__init__()
        self.watch = watch

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in EXPORTS:
            frame = _caller()
            if not _from_triton(frame):
                self.watch.refuse(f"took a tensor's values out of PyTorch (`Tensor.{name}`)", frame)
        return func(*args, **(kwargs or {}))


# -- launches on a GPU -----------------------------------------------------------------------------

@contextlib.contextmanager
def _recording_native_launches(watch: _Watch):
    """Record each compiled kernel's launch (JITFunction.run, stable from 3.6 to 3.9) for the block check."""
    from triton.runtime.jit import JITFunction

    launch = JITFunction.run

    def run(self, *args, grid, warmup, **kwargs):
        compiled = launch(self, *args, grid=grid, warmup=warmup, **kwargs)
        if not warmup:
            watch.launches.append(instrument.Launch.of(self.fn, self.arg_names, args, kwargs, grid, compiled))
        return compiled

    JITFunction.run = run
    try:
        yield
    finally:
        JITFunction.run = launch


# -- autotune in the interpreter -------------------------------------------------------------------

_notices: list[str] = []


def take_notices() -> list[str]:
    """Notes for the report gathered since the last call (e.g. which autotune config the interpreter ran)."""
    notes = list(dict.fromkeys(_notices))
    _notices.clear()
    return notes


@contextlib.contextmanager
def _first_config_only():
    """The interpreter has no benchmarker to choose among autotune configs ("0 active drivers"):
    run the first config, as triton does for a kernel with one config."""
    from triton.runtime.autotuner import Autotuner

    tune = Autotuner.run

    def run(self, *args, **kwargs):
        configs = self.configs
        if len(configs) <= 1:
            return tune(self, *args, **kwargs)
        _notices.append(f"autotune: the interpreter ran {self.base_fn.__name__} with config 1 of {len(configs)} "
                        f"({configs[0]}); on a GPU triton picks the fastest")
        self.configs = configs[:1]
        try:
            return tune(self, *args, **kwargs)
        finally:
            self.configs = configs

    Autotuner.run = run
    try:
        yield
    finally:
        Autotuner.run = tune


# -- the guard -------------------------------------------------------------------------------------

@contextlib.contextmanager
def _refusing_compute(watch: _Watch):
    """Both modes on torch's stacks while the block runs; Refused if the block took either off."""
    from torch import overrides
    from torch.utils import _python_dispatch as dispatch

    compute, exports = _RefuseCompute(watch), _RefuseExports(watch)
    with exports, compute:
        try:
            yield
        finally:
            # Put back what the launcher popped, so that leaving the modes pops what entering pushed.
            dispatch_gone = dispatch._get_current_dispatch_mode() is not compute
            function_gone = overrides._get_current_function_mode() is not exports
            if dispatch_gone:
                dispatch._push_mode(compute)
            if function_gone:
                overrides._push_mode(exports)
        if dispatch_gone or function_gone:
            raise Refused("the launcher switched off the grader's check of PyTorch calls")


@contextlib.contextmanager
def _no_threads(watch: _Watch):
    """Refuse threads started by the launcher: the PyTorch check holds in the launcher's own thread only, so
    work done on another would escape it."""
    import threading

    start = threading.Thread.start

    def refuse(thread, *args, **kwargs):
        frame = _caller()
        if frame is not None and not _from_triton(frame):
            watch.refuse("started a thread (threading.Thread.start), out of reach of the check of PyTorch calls", frame)
        return start(thread, *args, **kwargs)

    threading.Thread.start = refuse
    try:
        yield
    finally:
        threading.Thread.start = start


@contextlib.contextmanager
def guard(puzzle, case, device: str):
    """Run the launcher with PyTorch compute refused (raise Refused); on a GPU, also hold its launches
    to the case's block sizes. The grader's code outside this block is not affected."""
    watch = _Watch(ALLOCATING | VIEWING | frozenset(getattr(puzzle, "launcher_ops", ())))
    native = device != "cpu"
    with _recording_native_launches(watch) if native else _first_config_only(), _refusing_compute(watch), \
            _no_threads(watch):
        yield
    if watch.refusal is not None:  # raised inside, and swallowed by the learner's code
        raise Refused(watch.refusal)
    problem = check_launches(puzzle, case, watch.launches) or (native and _wide_dots(puzzle, watch.launches))
    if problem:
        raise Refused(problem)


def _wide_dots(puzzle, launches) -> str | None:
    """On a GPU, where the interpreter's tl.dot hook cannot look: a tl.dot with a float32 operand in a puzzle whose
    lesson is 16-bit tensor-core products (budgets.Dots), read from the TTIR of the kernels triton compiled."""
    from grader.course import budgets
    from grader.worker import ttir

    if not any(isinstance(b, budgets.Dots) for b in puzzle.budgets):
        return None
    for launch in launches:
        text = (getattr(launch.compiled, "asm", None) or {}).get("ttir", "")
        wide = ttir.wide_dot_operands(text) if isinstance(text, str) else []
        if wide:
            return instrument.DOT_16BIT_RULE.format(
                found=f"{launch.name} has a tl.dot on {', '.join(sorted(set(wide)))} operands")
    return None


# -- block sizes -----------------------------------------------------------------------------------

def _constexpr_ints(fn, bound: dict) -> dict[str, int]:
    """The kernel's integer tl.constexpr parameters and the values this launch gave them."""
    found = {}
    for param in inspect.signature(fn).parameters.values():
        annotation = param.annotation
        kind = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
        value = bound.get(param.name)
        value = getattr(value, "value", value)  # a tl.constexpr wrapping the number
        if kind.split(".")[-1] == "constexpr" and isinstance(value, int) and not isinstance(value, bool):
            found[param.name] = value
    return found


def _constexpr_globals(fn) -> dict[str, int]:
    """The integer tl.constexpr globals the kernel's code names (a tile size can hide there too)."""
    import triton.language as tl

    found = {}
    for name in getattr(getattr(fn, "__code__", None), "co_names", ()):
        value = getattr(fn, "__globals__", {}).get(name)
        if isinstance(value, tl.constexpr) and isinstance(value.value, int) and not isinstance(value.value, bool):
            found[name] = value.value
    return found


def _too_wide(launch, case, lesson_blocks) -> tuple[str, str, int] | None:
    """(the case's block, the kernel parameter, the value used) for a tile wider than the case allows.

    A kernel parameter named like the block (B1, BK) is held to it. A kernel that names its blocks
    otherwise (BLOCK_T) has every integer constexpr held to the case's largest block, except one equal
    to a size of the case (D=64 in puzzle 12 is a dimension, not a tile)."""
    constexprs = _constexpr_ints(launch.fn, launch.bound)
    widest = max(case.blocks.values(), default=0)
    sizes = set(case.dims.values())
    for name, used in _constexpr_globals(launch.fn).items():  # WIDE = tl.constexpr(2048) at module level
        if used > widest and used not in sizes and any(b in case.blocks for b in lesson_blocks):
            return next(b for b in lesson_blocks if b in case.blocks), name, used
    for block in (b for b in lesson_blocks if b in case.blocks):
        asked = case.blocks[block]
        if block in constexprs:
            if constexprs[block] > asked:
                return block, block, constexprs[block]
            continue
        for name, used in constexprs.items():
            if name not in case.blocks and name not in case.dims and used > widest and used not in sizes:
                return block, name, used
    return None


def check_launches(puzzle, case, launches) -> str | None:
    """None when every launch keeps to the case's lesson blocks (Puzzle.lesson_blocks); else the report."""
    lesson_blocks = getattr(puzzle, "lesson_blocks", ())
    for launch in launches:
        wide = _too_wide(launch, case, lesson_blocks)
        if wide is not None:
            block, name, used = wide
            return (f"this case asks for {block}={case.blocks[block]}; your launch of {launch.name} used "
                    f"{name}={used}: launch with the block sizes the launcher is given (smaller is fine), "
                    "so the kernel loops over blocks as the lesson asks")
    return None
