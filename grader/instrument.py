"""The one hook into Triton's interpreter: bounds checks, access counts and store coverage.

Everything version-specific lives here. We wrap a handful of methods of the interpreter's
builder object (``triton.runtime.interpreter.interpreter_builder``) and the kernel launch
(``InterpretedFunction.run``). Every wrapper takes ``*args`` and passes them through unchanged,
so a new argument in a later triton release does not break us; we only read the positions
that have been stable from 3.6 to 3.9 (the pointer, and the mask where there is one).

What the wrappers do while a ``Recorder`` is active:
- map every pointer to the tensor argument it came from (a tag carried through the builder's
  ops, or the tensor that holds most of its lanes);
- before a load, store or atomic runs, check each unmasked lane lies inside that tensor; an
  out-of-bounds lane stops the kernel *before* the access, so nothing is read or corrupted;
- count the unmasked lanes per tensor, and mark which elements were stored;
- give masked-off lanes of a load without ``other=`` a poison value (NaN, or the largest integer),
  as undefined as they are on a GPU, where the interpreter would quietly give 0;
- hand loads and stores boolean masks (the interpreter can build an int32 one that it then rejects);
- count ``tl.dot`` calls and their multiply-adds, hold them to the GPU's smallest size (every dimension at
  least 16), and give bfloat16 operands to numpy as the numbers they are (the interpreter multiplies their
  raw bits).

On a triton version we have not tested, ``status()`` says so and the grader falls back to
checking values only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import linecache
import os
import re
import sys
from dataclasses import dataclass, field

import numpy as np

_TAG = "_grader_region"
_MEMORY_OPS = {  # method -> (kind, position of the pointer, position of the mask or None)
    "create_masked_load": ("load", 0, 1),
    "create_masked_store": ("store", 0, 2),
    "create_atomic_rmw": ("atomic", 1, 3),
    "create_atomic_cas": ("atomic", 0, None),
}


class AccessViolation(Exception):
    """Raised inside the interpreter to stop a kernel before an out-of-bounds access runs."""


class DotTooSmall(Exception):
    """A ``tl.dot`` the interpreter could run but the GPU compiler rejects."""


MIN_DOT = 16  # the GPU's smallest tl.dot dimension for 16-bit operands (we hold every dtype to it)


@dataclass(eq=False)
class Region:
    """One tensor a kernel may touch: its bytes, and what kernels did to them."""
    label: str
    start: int
    numel: int
    itemsize: int
    params: list[str] = field(default_factory=list)  # kernel parameter names it was passed as
    loads: int = 0
    stores: int = 0
    atomics: int = 0
    written: np.ndarray = None  # one flag per element: stored to (or atomically updated) at least once

    def __post_init__(self):
        self.written = np.zeros(self.numel, dtype=bool)

    @property
    def end(self) -> int:
        return self.start + self.numel * self.itemsize

    def describe(self) -> str:
        passed = [p for p in self.params if p != self.label]
        return f"{self.label} (passed as {', '.join(passed)})" if passed else self.label


@dataclass
class Launch:
    """One kernel launch as the launcher made it: the @triton.jit function, every parameter's value by name
    (tensors, scalars and constexprs, defaults filled in), the launch options (num_warps, ...) and the grid."""
    fn: object  # the kernel's Python function (what @triton.jit wrapped)
    bound: dict
    options: dict
    grid: object

    @property
    def name(self) -> str:
        return getattr(self.fn, "__name__", "kernel")


@dataclass
class Violation:
    kind: str          # load / store / atomic
    region: Region | None
    lanes: int         # unmasked lanes outside the tensor
    active: int        # unmasked lanes in the access
    offsets: list[int]  # first few offending element offsets
    program: tuple
    where: str         # file:line of the kernel code
    code: str          # that line's source
    shape: tuple = ()  # the shape of the block of pointers

    def message(self) -> str:
        if self.region is None:
            target = f"out-of-bounds {self.kind}: the pointer does not point into any tensor argument"
        else:
            offs = ", ".join(str(o) for o in self.offsets)
            target = (f"out-of-bounds {self.kind} on {self.region.describe()}: {self.lanes} of {self.active} "
                      f"unmasked lanes outside it (offsets {offs}; valid 0..{self.region.numel - 1})")
        return (f"{target}\n  in program {self.program} at {self.where}: {self.code}\n"
                "  (the kernel was stopped before this access ran; later loads and stores were not checked)")


class Recorder:
    """What kernels did during one case. Use through ``recording()``."""

    def __init__(self):
        self.regions: list[Region] = []
        self.violation: Violation | None = None
        self.program = (0, 0, 0)
        self.programs = 0
        self.dots = 0  # tl.dot calls, summed over programs
        self.dot_work = 0  # multiply-adds those calls did (M * N * K each, padding included)
        self.launches: list[Launch] = []

    # -- regions ----------------------------------------------------------------------
    def watch(self, label: str, tensor) -> Region:
        """Name a tensor before the launcher runs, so counts and reports use the spec's names."""
        region = self.region_of(tensor)
        if region is None:
            region = Region(label, tensor.data_ptr(), tensor.numel(), tensor.element_size())
            self.regions.append(region)
        return region

    def region_of(self, tensor) -> Region | None:
        """The region of exactly this tensor (same start, size and element size), if it was seen."""
        start, numel = tensor.data_ptr(), tensor.numel()
        for region in self.regions:
            if region.start == start and region.numel == numel and region.itemsize == tensor.element_size():
                return region
        return None

    def _launch(self, fn, arg_names, args, kwargs, grid):
        bound = dict(zip(arg_names, args))
        bound.update({k: v for k, v in kwargs.items() if k in arg_names})
        defaults = {p.name: p.default for p in inspect.signature(fn).parameters.values()
                    if p.name not in bound and p.default is not inspect.Parameter.empty}
        options = {k: v for k, v in kwargs.items() if k not in arg_names}
        self.launches.append(Launch(fn, {**defaults, **bound}, options, grid))
        for name, value in bound.items():
            base = getattr(value, "base", None) if type(value).__name__ == "TensorDescriptor" else value
            if hasattr(base, "data_ptr") and hasattr(base, "numel"):
                region = self.watch(name.removesuffix("_ptr"), base)  # a tensor the grader did not name
                if name not in region.params:
                    region.params.append(name)

    def _classify(self, handle, active=None) -> Region | None:
        """The region most of this pointer's lanes fall in (for a scalar pointer: the one holding it).
        With `active`, only those lanes vote: masked lanes may point anywhere (a descriptor's padding)."""
        addrs = np.asarray(handle.data, dtype=np.uint64)
        addrs = (addrs[active] if active is not None and active.any() else addrs).ravel()
        if not self.regions or addrs.size == 0:
            return None
        best, best_count = None, 0
        for region in self.regions:
            inside = int(np.count_nonzero((addrs >= region.start) & (addrs < region.end)))
            if addrs.size == 1 and inside:
                return region
            if inside > best_count:
                best, best_count = region, inside
        return best

    def _region_for(self, handle, active=None) -> Region | None:
        tagged = getattr(handle, "attr", {}).get(_TAG)
        if tagged is not None and tagged[0] is self:
            return tagged[1]
        return self._classify(handle, active)

    # -- accesses ---------------------------------------------------------------------
    def _access(self, kind: str, ptrs, mask):
        data = np.asarray(ptrs.data)
        active = np.ones(data.shape, dtype=bool) if mask is None else np.broadcast_to(
            np.asarray(mask.data, dtype=bool), data.shape)
        addrs = data[active].astype(np.uint64)
        region = self._region_for(ptrs, active)
        if region is None:
            if addrs.size:
                self._stop(kind, None, addrs.size, addrs.size, [], data.shape)
            return
        offsets = addrs.astype(np.int64) - np.int64(region.start)
        bad = (offsets < 0) | (offsets >= region.numel * region.itemsize) | (offsets % region.itemsize != 0)
        if bad.any():
            first = sorted(set((offsets[bad] // region.itemsize).tolist()))[:4]
            self._stop(kind, region, int(bad.sum()), addrs.size, first, data.shape)
        elements = offsets // region.itemsize
        if kind == "load":
            region.loads += elements.size
        elif kind == "store":
            region.stores += elements.size
            region.written[elements] = True
        else:
            region.atomics += elements.size
            region.written[elements] = True

    def _stop(self, kind, region, lanes, active, offsets, shape):
        where, code = _kernel_line()
        self.violation = Violation(kind, region, lanes, active, offsets, self.program, where, code, tuple(shape))
        raise AccessViolation(self.violation.message())

    def _tag(self, result, args):
        if not _is_pointer(result) or _TAG in result.attr:
            return
        for arg in args:
            if _is_pointer(arg):
                region = self._region_for(arg)
                if region is not None:
                    result.attr[_TAG] = (self, region)
                return


def _is_pointer(handle) -> bool:
    dtype = getattr(handle, "dtype", None)
    return isinstance(getattr(handle, "attr", None), dict) and getattr(dtype, "is_ptr", lambda: False)()


_TRITON_DIR = None
_HERE = os.path.abspath(__file__)


def location(filename: str, lineno: int) -> str:
    """'p04_softmax.py:42', or 'your notebook cell, line 42' for code typed into Jupyter."""
    if re.search(r"ipykernel_\d+", filename):
        return f"your notebook cell, line {lineno}"
    return f"{os.path.basename(filename)}:{lineno}"


def learner_line(frame, library: tuple[str, ...]) -> tuple[str, str]:
    """Where and what: the innermost frame from `frame` outwards whose file is in none of the `library`
    folders (nor generated code), with its source line; ("?", "") if there is none."""
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(library) and not frame.f_code.co_filename.startswith("<"):
            line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
            return location(filename, frame.f_lineno), line
        frame = frame.f_back
    return "?", ""


def _kernel_line() -> tuple[str, str]:
    return learner_line(sys._getframe(1), (_HERE, _TRITON_DIR))


# -- installing the hook ------------------------------------------------------------------
_active: Recorder | None = None
_installed = False
_unavailable_reason: str | None = None


def _hook_points():
    from triton.runtime import interpreter

    builder = getattr(interpreter, "interpreter_builder", None)
    executor = getattr(interpreter, "InterpretedFunction", None)
    missing = [name for name in (*_MEMORY_OPS, "set_grid_idx", "set_grid_dim", "create_addptr", "create_dot")
               if not callable(getattr(builder, name, None))]
    if executor is None or "run" not in vars(executor):
        missing.append("InterpretedFunction.run")
    handle_fields = [f.name for f in dataclasses.fields(getattr(interpreter, "TensorHandle", object))] \
        if dataclasses.is_dataclass(getattr(interpreter, "TensorHandle", None)) else []
    if "attr" not in handle_fields:
        missing.append("TensorHandle.attr")
    return interpreter, builder, executor, missing


def status() -> tuple[bool, str]:
    """(True, "") when the hook can be used; else (False, the one-line reason)."""
    global _unavailable_reason
    if _installed:
        return True, ""
    if _unavailable_reason is not None:
        return False, _unavailable_reason
    from . import env

    if not env.interpreter_forced():
        _unavailable_reason = "the interpreter is not in use"
    elif not env.triton_is_tested():
        _unavailable_reason = (f"triton {env.versions()['triton']} is untested with the grader's interpreter hook: "
                               "grading correctness only (no out-of-bounds, coverage or budget checks)")
    else:
        try:
            missing = _hook_points()[3]
        except Exception as exc:  # a reorganised interpreter module
            missing = [repr(exc)]
        if missing:
            _unavailable_reason = (f"triton's interpreter lacks {', '.join(missing)}: "
                                   "grading correctness only (no out-of-bounds, coverage or budget checks)")
    return _unavailable_reason is None, _unavailable_reason or ""


_OTHER_AT = 2  # create_masked_load(ptrs, mask, other, ...) from 3.6 to 3.9


def _poisoned_other(ptrs):
    """A block like the loaded one, full of a value no honest kernel relies on; None if unsure."""
    from triton.runtime import interpreter

    to_numpy = getattr(interpreter, "_get_np_dtype", None)
    element = ptrs.get_element_ty() if hasattr(ptrs, "get_element_ty") else None
    try:
        dtype = to_numpy(element)
    except Exception:  # a dtype the interpreter does not map, or a reorganised interpreter
        return None
    if dtype.kind == "f":
        fill = np.nan
    elif dtype.kind in "iu":
        # bfloat16 lives in uint16 here: 0x7FC0 is its NaN; any other integer gets its largest value
        fill = 0x7FC0 if getattr(element, "name", "") == "bf16" else np.iinfo(dtype).max
    else:
        return None
    return interpreter.TensorHandle(np.full(np.shape(ptrs.data), fill, dtype=dtype), element)


def _bool_mask(mask):
    """The interpreter sometimes stores a combined mask (`block_mask & (node < N)`) as int32 data,
    which its own load and store then reject; the GPU takes it. Hand them booleans."""
    from triton.runtime import interpreter

    if mask is None or np.asarray(mask.data).dtype == np.bool_:
        return mask
    return interpreter.TensorHandle(np.asarray(mask.data) != 0, mask.dtype)


def _wrap_memory_op(original, kind, ptr_at, mask_at):
    def wrapper(*args, **kwargs):
        mask = args[mask_at] if mask_at is not None and len(args) > mask_at else None
        if mask is not None and np.asarray(mask.data).dtype != np.bool_:  # also outside a recording
            mask = _bool_mask(mask)
            args = (*args[:mask_at], mask, *args[mask_at + 1:])
        if _active is not None:
            _active._access(kind, args[ptr_at], mask)
            if kind == "load" and len(args) > _OTHER_AT and args[_OTHER_AT] is None:
                poison = _poisoned_other(args[ptr_at])
                if poison is not None:
                    args = (*args[:_OTHER_AT], poison, *args[_OTHER_AT + 1:])
        return original(*args, **kwargs)
    return wrapper


def _wrap_tagging(original):
    def wrapper(*args, **kwargs):
        result = original(*args, **kwargs)
        if _active is not None:
            _active._tag(result, args)
        return result
    return wrapper


def _as_float32(handle):
    """A bfloat16 block (stored as uint16 bits) as the float32 numbers it holds; other blocks unchanged."""
    from triton import language as tl
    from triton.runtime import interpreter

    if getattr(handle.dtype, "name", "") != "bf16":
        return handle
    bits = np.asarray(handle.data).astype(np.uint32) << 16
    return interpreter.TensorHandle(bits.view(np.float32), tl.float32)


def _wrap_dot(original):
    def wrapper(*args, **kwargs):
        a, b = args[0], args[1]
        (m, k), n = np.shape(a.data)[-2:], np.shape(b.data)[-1]
        if min(m, n, k) < MIN_DOT:
            where, code = _kernel_line()
            raise DotTooSmall(f"tl.dot of a {m}x{k} block by a {k}x{n} block: on the GPU every dimension of tl.dot "
                              f"must be at least {MIN_DOT} (M={m}, N={n}, K={k}); use blocks of 16 or more "
                              f"(the interpreter would run it, the GPU compiler would not)\n  at {where}: {code}")
        if _active is not None:
            _active.dots += 1
            _active.dot_work += int(np.prod(np.shape(a.data)[:-2], dtype=np.int64)) * m * n * k
        return original(_as_float32(a), _as_float32(b), *args[2:], **kwargs)
    return wrapper


def _install():
    global _installed, _TRITON_DIR
    import triton

    _TRITON_DIR = os.path.dirname(os.path.abspath(triton.__file__))
    interpreter, builder, executor, _ = _hook_points()
    for name in dir(builder):
        if name.startswith("create_") and name not in _MEMORY_OPS and callable(getattr(builder, name)):
            setattr(builder, name, _wrap_tagging(getattr(builder, name)))
    for name, (kind, ptr_at, mask_at) in _MEMORY_OPS.items():
        setattr(builder, name, _wrap_memory_op(getattr(builder, name), kind, ptr_at, mask_at))
    builder.create_dot = _wrap_dot(builder.create_dot)

    set_grid_idx, set_grid_dim = builder.set_grid_idx, builder.set_grid_dim

    def grid_idx(*args, **kwargs):
        if _active is not None:
            _active.program = tuple(args[:3])
        return set_grid_idx(*args, **kwargs)

    def grid_dim(*args, **kwargs):
        if _active is not None:
            _active.programs += int(np.prod(args[:3]))
        return set_grid_dim(*args, **kwargs)

    builder.set_grid_idx, builder.set_grid_dim = grid_idx, grid_dim

    launch = executor.run

    def run(self, *args, grid, warmup, **kwargs):
        if _active is not None and not warmup:
            _active._launch(self.fn, self.arg_names, args, kwargs, grid)
        return launch(self, *args, grid=grid, warmup=warmup, **kwargs)

    executor.run = run
    _installed = True


def install() -> bool:
    """Put the hook in place now (it is otherwise installed by the first recording); False if unavailable.
    Notebooks do this at import, so kernels called directly get the interpreter fixes too."""
    ok, _ = status()
    if ok and not _installed:
        _install()
    return ok


@contextlib.contextmanager
def recording():
    """Record every kernel launched inside the block. Yields None when the hook is unavailable."""
    global _active
    ok, _ = status()
    if not ok:
        yield None
        return
    if not _installed:
        _install()
    recorder = Recorder()
    _active = recorder
    try:
        yield recorder
    finally:
        _active = None
