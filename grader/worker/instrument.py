"""The one hook into Triton's interpreter: bounds checks, access counts and store coverage.

Everything version-specific lives here. We wrap a handful of methods of the interpreter's
builder object (``triton.runtime.interpreter.interpreter_builder``), the kernel launch
(``InterpretedFunction.run``), its reductions (``ReduceScanOpInterface.apply``) and its patch of
``tl.range`` (``_patch_lang_core``). Every wrapper takes ``*args`` and passes them through unchanged,
so a new argument in a later triton release does not break us; we only read the positions
that have been stable from 3.6 to 3.9 (the pointer, and the mask where there is one). Tested on
triton 3.6.0 and 3.9.0.

What the wrappers do while a ``Recorder`` is active:
- map every pointer to the tensor argument(s) it came from (a tag carried through the builder's
  ops, or the tensor that holds most of its lanes); ``tl.where`` between pointers into two
  tensors carries both, and each lane is then judged against the one it falls in;
- before a load, store or atomic runs, check every byte of each unmasked lane lies inside its tensor
  (a lane moves its pointer's element width: an int64 lane over float32 data is 8 bytes); an
  out-of-bounds lane stops the kernel *before* the access, so nothing is read or corrupted;
- count the bytes each load or store moves per tensor, for its distinct lanes (a GPU coalesces
  duplicate lanes into one access), in all and per program, and mark which elements were stored; an
  atomic lane reads and writes its bytes; per program, what it loaded between two of its stores into a tensor
  (``StoreSegment``: per-program budgets that pairing programs cannot game);
- record, per launch, which program stored each element: two programs storing one element (even the
  same bytes), or a program loading what another stored, is a race on a GPU. Atomics that combine (add,
  max, ...) are exempt among themselves; an exchange, and a compare-and-swap outside a retry loop, overwrite and
  race; a plain store of an element another program adds into atomically, and a plain load of an element another
  program updated atomically (outside a compare-and-swap retry loop), race too (``_check_atomic_race``);
- give masked-off lanes of a load without ``other=`` a poison value (a NaN whose payload the judge
  recognises, ``transfer.UNDEFINED_NAN32``, or the largest integer), as undefined as they are on a GPU,
  where the interpreter would quietly give 0;
- hand loads and stores boolean masks (the interpreter can build an int32 one that it then rejects),
  and note where, so the learner can write a mask that runs without the grader;
- count ``tl.dot`` calls and their multiply-adds, hold them to the GPU's smallest size (every dimension at
  least 16), and give bfloat16 operands to numpy as the numbers they are (the interpreter multiplies their
  raw bits); every block carries the dots it was computed from, so that a dot whose result never reaches a
  store (multiplied by a constant zero, overwritten) is known as dead work; where the tl.dot budget applies, each
  dot's result is also perturbed in shadows carried beside the real values (``DotShadows``), and a dot whose
  perturbation moves no store (d - d, however written) is dead work too;
- where blocks are the lesson (``Recorder.tile_limit``), note the first block shape wider than the case
  allows, whatever made it (a local constexpr, a ``@triton.jit`` helper).
Outside a recording too, ``tl.range``'s loop variable is a tensor, as on the GPU (``i.to(tl.int64)``).

On a triton version we have not tested, ``status()`` says so and the grader falls back to
checking values only.
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import dataclasses
import functools
import inspect
import linecache
import math
import os
import sys
import zlib
from dataclasses import dataclass, field

import numpy as np

from grader.paths import location  # noqa: F401 (the name this module's callers use: instrument.location)

_TAG = "_grader_region"
_DOTS = "_grader_dots"  # on a block: the ids of the tl.dot calls it was computed from (Recorder.dot_calls)
_SPLAT = "_grader_splat"  # on a block: made by splatting one value (tl.zeros, tl.full, a scalar broadcast)
_SHADOW = "_grader_shadow"  # on a block: {perturbation: the block's values had that tl.dot result moved} (DotShadows)
_MEMORY_OPS = {  # method -> (kind, position of the pointer, position of the mask or None)
    "create_masked_load": ("load", 0, 1),
    "create_masked_store": ("store", 0, 2),
    "create_atomic_rmw": ("atomic", 1, 3),
    "create_atomic_cas": ("atomic", 0, None),
}


class AccessViolation(Exception):
    """Raised inside the interpreter to stop a kernel before an out-of-bounds access runs."""


class OverBudget(Exception):
    """Raised inside the interpreter to stop a kernel as soon as the recorded traffic exceeds a budget."""


class DotTooSmall(Exception):
    """A ``tl.dot`` the interpreter could run but the GPU compiler rejects."""


class DotNot16Bit(Exception):
    """A ``tl.dot`` with an operand that is not 16-bit, in a puzzle whose lesson is 16-bit tensor-core products."""


DOT_16BIT_RULE = ("tl.dot operands must stay 16-bit (float16 or bfloat16) in this puzzle, so that the GPU multiplies "
                  "on tensor cores: {found}. Leave the loaded blocks as they are (no .to(tl.float32)); a block you "
                  "computed in float32 (attention's p) is cast to the other operand's dtype: tl.dot(p.to(v.dtype), v)")


# -- sums in 16 bits: every lesson sums in float32 (see _sum_in_16_bits) --------------------------------------------

class SumIn16Bit(Exception):
    """A sum kept in float16 or bfloat16: a tl.dot accumulating in 16 bits, a running sum of tl.dot results in a
    16-bit block, or a tl.sum of a 16-bit block. Every puzzle sums in float32; on inputs as short as a case's, a
    16-bit sum may still pass every tolerance, so only a rule sees it (and natively, execute._sums_in_16_bits)."""


SUM_16BIT_ADVICE = ("Sum in float32: a 16-bit sum rounds at every step (float16 keeps 11 bits, bfloat16 8), so a "
                    "long sum drifts far past the tolerance, and the docstring asks for every product to be summed in "
                    "float32. Keep accumulators float32 (tl.zeros([...], dtype=tl.float32), then tl.dot(a, b, acc) or "
                    "acc += tl.dot(a, b)), sum 16-bit blocks as x.to(tl.float32), and convert to 16 bits only an "
                    "operand of tl.dot")
_SIXTEEN_BITS = {"fp16": "float16", "bf16": "bfloat16"}


def _sixteen_bit(handle) -> str:
    """'float16' or 'bfloat16' for a block (or tensor) of that float type, else ''."""
    dtype = getattr(handle, "dtype", None)
    return _SIXTEEN_BITS.get(getattr(getattr(dtype, "scalar", dtype), "name", ""), "")


def _sum_in_16_bits(kind: str, args) -> str:
    """What sums in 16 bits, or '': kind "dot" (a tl.dot's accumulator, args[2]), "add" (an add of two blocks made
    from different tl.dot calls: a running sum of their results), "sum" (a tl.sum's input, args[0])."""
    if kind == "dot":
        dtype = _sixteen_bit(args[2]) if len(args) > 2 else ""
        return f"tl.dot sums its products in {dtype} (out_dtype={dtype}, or a {dtype} acc)" if dtype else ""
    if kind == "sum":
        dtype = _sixteen_bit(args[0])
        return f"tl.sum of a {dtype} block adds in {dtype}" if dtype else ""
    dtype = _sixteen_bit(args[0]) and _sixteen_bit(args[1])
    dots = [getattr(a, "attr", {}).get(_DOTS) if isinstance(getattr(a, "attr", None), dict) else None
            for a in args[:2]]
    if dtype and all(dots) and not (dots[0] <= dots[1] or dots[1] <= dots[0]):
        return f"a running sum of tl.dot results is kept in {dtype}"
    return ""


def _refuse_16_bit_sum(kind: str, args) -> None:
    what = _sum_in_16_bits(kind, args)
    if what:  # the learner's line is added by the grader's report of the exception
        raise SumIn16Bit(f"{what}. {SUM_16BIT_ADVICE}")


WATCH_EVERY = 256  # accesses between two budget checks while a program runs (a check costs about one access)
MIN_DOT = 16  # the GPU's smallest tl.dot dimension for 16-bit operands (we hold every dtype to it)


@dataclass(eq=False)
class Region:
    """One tensor a kernel may touch: its bytes, and what kernels did to them."""
    label: str
    start: int
    numel: int
    itemsize: int
    shape: tuple = ()
    floating: bool = True  # a floating-point tensor (else an integer or boolean one: indices, pointers)
    given: bool = False  # an input the grader passed (watched by name), not a tensor the launcher made
    params: list[str] = field(default_factory=list)  # kernel parameter names it was passed as
    # Bytes, as the hardware moves them: each load or store counts its distinct lanes times the lane's width (an
    # int64 view of a float32 tensor reads 8 bytes a lane), and each atomic lane reads and writes its width.
    load_bytes: int = 0
    store_bytes: int = 0
    atomics: int = 0  # atomic lanes (each one updates)
    written: np.ndarray = None  # one flag per element: stored to (or atomically updated) at least once
    map: RegionMap | None = None  # per element, who read and wrote it (only when the recorder keeps maps)

    def __post_init__(self):
        self.written = np.zeros(self.numel, dtype=bool)

    @property
    def end(self) -> int:
        return self.start + self.numel * self.itemsize

    @property
    def loads(self) -> int | float:
        """Bytes loaded, in elements of this tensor (a whole number unless a narrower view read part of one)."""
        return _in_elements(self.load_bytes, self.itemsize)

    @property
    def stores(self) -> int | float:
        """Bytes stored, in elements of this tensor."""
        return _in_elements(self.store_bytes, self.itemsize)

    def describe(self) -> str:
        passed = [p for p in self.params if p != self.label]
        return f"{self.label} (passed as {', '.join(passed)})" if passed else self.label

    def element(self, index: int) -> str:
        """'out[3, 1, 7]': an element by its index in the tensor's own shape."""
        if self.shape and int(np.prod(self.shape)) == self.numel:
            index = ", ".join(str(int(i)) for i in np.unravel_index(index, self.shape))
        return f"{self.label}[{index}]"


@dataclass(eq=False)
class RegionMap:
    """Per element of one tensor, what the kernels of a case did to it; kept only when ``Recorder.maps`` is set
    (grader.show.memory_map draws it). Programs are numbered in the order they ran (``Recorder.program_names``)."""
    reads: np.ndarray  # int32: loads that touched it (a load's duplicate lanes count once)
    writes: np.ndarray  # int32: stores and atomic updates
    reader: np.ndarray  # int32: the first program that loaded it, or -1
    writer: np.ndarray  # int32: the last program that stored it, or -1
    masked: np.ndarray  # bool: a masked-off lane pointed at it
    raced: np.ndarray  # bool: two programs of one launch stored it, or one loaded what another stored
    masked_lanes: int = 0  # masked-off lanes of accesses through a pointer into this tensor (past its end too)
    masking: set = field(default_factory=set)  # the programs those masked-off lanes belonged to
    readers: set = field(default_factory=set)  # every program that loaded from it
    writers: set = field(default_factory=set)  # every program that stored into it
    # The first FIRST_PROGRAMS programs to load from it (and to store into it): every element each one touched,
    # so that a summary says exactly what they did, also where programs overlap.
    first_reads: dict = field(default_factory=dict)
    first_writes: dict = field(default_factory=dict)

    FIRST_PROGRAMS = 2

    @classmethod
    def empty(cls, numel: int) -> RegionMap:
        return cls(np.zeros(numel, np.int32), np.zeros(numel, np.int32), np.full(numel, -1, np.int32),
                   np.full(numel, -1, np.int32), np.zeros(numel, bool), np.zeros(numel, bool))

    def touch(self, kind: str, ordinal: int, elements: np.ndarray) -> None:
        """Note that program `ordinal` loaded (kind "load") or stored these elements (distinct indices)."""
        if kind == "load":
            self.reads[elements] += 1
            unread = elements[self.reader[elements] < 0]
            self.reader[unread] = ordinal
            programs, first = self.readers, self.first_reads
        else:
            np.add.at(self.writes, elements, 1)  # an atomic's lanes may repeat an element: each updates it
            self.writer[elements] = ordinal
            programs, first = self.writers, self.first_writes
        programs.add(ordinal)
        if ordinal in first or len(first) < self.FIRST_PROGRAMS:
            first.setdefault(ordinal, np.zeros(self.reads.size, bool))[elements] = True


@dataclass
class StoreSegment:
    """One store of a program: into which tensor, how many of its elements no kernel had stored before, and what
    the program loaded since its previous store into that tensor (per tensor, in elements of that tensor)."""
    region: Region
    new: int
    loads: dict


@dataclass
class Traffic:
    """What the performance coach reads (grader.coach); cheap, so always counted."""
    load_lanes: int = 0  # lanes of every load, masked-off ones included
    load_active: int = 0  # unmasked lanes of loads
    store_lanes: int = 0  # the same for stores and atomics
    store_active: int = 0
    wide_loads: int = 0  # loads with at least two unmasked lanes
    contiguous_loads: int = 0  # those whose unmasked lanes, along some axis of the block, address consecutive elements


def _contiguous(addresses: np.ndarray, active: np.ndarray, itemsize: int) -> bool:
    """Whether neighbouring unmasked lanes along some axis of the block address neighbouring elements: the
    access a GPU coalesces (triton's compiler finds that axis and makes it the fast one)."""
    for axis in range(addresses.ndim):
        if addresses.shape[axis] < 2:
            continue
        step = np.diff(addresses, axis=axis)
        both = np.diff(active.astype(np.int8), axis=axis) == 0
        both &= np.delete(active, -1, axis=axis)
        if both.any() and bool((step[both] == itemsize).all()):
            return True
    return False


@dataclass
class Launch:
    """One kernel launch as the launcher made it: the @triton.jit function, every parameter's value by name
    (tensors, scalars and constexprs, defaults filled in), the launch options (num_warps, ...) and the grid."""
    fn: object  # the kernel's Python function (what @triton.jit wrapped)
    bound: dict
    options: dict
    grid: object
    compiled: object = None  # on a GPU: the CompiledKernel triton ran (its asm holds the TTIR)

    @property
    def name(self) -> str:
        return getattr(self.fn, "__name__", "kernel")

    @classmethod
    def of(cls, fn, arg_names, args, kwargs, grid, compiled=None) -> Launch:
        """A launch as triton's run() receives it: positional and keyword arguments bound by name, defaults not
        given filled in, and the keywords that are no parameter kept as options."""
        bound = dict(zip(arg_names, args))
        bound.update({k: v for k, v in kwargs.items() if k in arg_names})
        defaults = {p.name: p.default for p in inspect.signature(fn).parameters.values()
                    if p.name not in bound and p.default is not inspect.Parameter.empty}
        options = {k: v for k, v in kwargs.items() if k not in arg_names}
        return cls(fn, {**defaults, **bound}, options, grid, compiled)


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
    others: tuple = ()  # further tensors the pointer may point into (tl.where between pointers)
    width: int = 0  # bytes each lane moves (its pointer's element type)
    steps: tuple = ()  # per axis of the block of pointers: bytes between neighbouring lanes (most common; 0: none)

    @property
    def wider(self) -> bool:
        """Whether each lane moves more bytes than an element of the tensor holds (a view of another dtype)."""
        return self.region is not None and self.width > self.region.itemsize

    def message(self) -> str:
        if self.region is None:
            target = f"out-of-bounds {self.kind}: the pointer does not point into any tensor argument"
        else:
            offs = ", ".join(str(o) for o in self.offsets)
            either = "".join(f" or {r.describe()}" for r in self.others)
            target = (f"out-of-bounds {self.kind} on {self.region.describe()}{either}: {self.lanes} of {self.active} "
                      f"unmasked lanes outside it (offsets {offs}; valid 0..{self.region.numel - 1})")
            if self.wider:
                target += (f"; each lane moves {self.width} bytes, and an element of {self.region.label} holds "
                           f"{self.region.itemsize}: a lane's last byte must lie inside too")
        return (f"{target}\n  in program {self.program} at {self.where}: {self.code}\n"
                "  (the kernel was stopped before this access ran; later loads and stores were not checked)")


@dataclass
class Race:
    """Two programs of one launch touched one element without atomics, and one of them stored it."""
    kind: str  # "write": both stored it; "read": the later program loaded what the earlier one stored
    region: Region
    element: int
    first: tuple  # the program that stored it first
    second: tuple  # the program that stored or loaded it after
    where: str
    code: str
    via: str = ""  # an atomic that overwrites, for a write ("tl.atomic_cas outside a retry loop")
    same: bool = False  # a write of the very bytes the first program stored
    whole: bool = False  # the second program stored exactly the elements of the first's block, and nothing else
    atomic: bool = False  # one side is an atomic (that adds), the other a plain store or load

    def message(self) -> str:
        name = self.region.element(self.element)
        passed = [p for p in self.region.params if p not in (self.region.label, f"{self.region.label}_ptr")]
        name += f" (passed as {', '.join(passed)})" if passed else ""
        if self.atomic:
            return self._atomic_message(name)
        if self.kind == "write" and self.whole:
            return (f"programs {self.first} and {self.second} stored the very same elements of {self.region.label} "
                    f"(from {name} on): every program works on the same block, so the rest is never written. Start "
                    "each program's block from its own index: offsets = tl.program_id(0) * B0 + tl.arange(0, B0) "
                    f"(with the puzzle's block sizes and axes)\n  at {self.where}: {self.code}")
        if self.kind == "write" and self.same:
            what = (f"programs {self.first} and {self.second} both wrote {name}, the same value: each output element "
                    "is written by one program. Blocks that overlap do the work twice, and on a GPU two programs "
                    "that write one element race. Check where each program's block starts (every program on the "
                    "same block? a block wider than its step?); for the last, partial block, mask the lanes past "
                    "the end instead of shifting the block back")
        elif self.kind == "write" and self.via:
            what = (f"programs {self.first} and {self.second} both wrote {name} with {self.via}; on a GPU they "
                    "run at the same time, so one update can be lost (a compare-and-swap only updates safely in a "
                    "loop that retries until the value it compared is the value it found)")
        elif self.kind == "write":
            what = (f"programs {self.first} and {self.second} both wrote {name}; on a GPU they run at the same "
                    "time, so one update can be lost")
        else:
            what = (f"program {self.second} read {name}, which program {self.first} wrote in the same launch; on a "
                    "GPU they run at the same time, so it may read the value from before that store")
        return (f"{what}: if programs add into shared elements, use tl.atomic_add; otherwise give each element to "
                f"one program (check the offsets each program stores to)\n  at {self.where}: {self.code}")


    def _atomic_message(self, name: str) -> str:
        if self.kind == "write":
            what = (f"programs {self.first} and {self.second} both wrote {name} in the same launch, one with a plain "
                    "tl.store and the other with an atomic: on a GPU they run at the same time, so the store may land "
                    "after some of the atomic updates and wipe them. Atomics are safe only among atomics: start the "
                    "sums from zeros made before the launch (torch.zeros in the launcher, or an earlier kernel), "
                    "not from a store in the launch that adds")
        elif self.via:
            what = (f"program {self.first} read {name} with a plain load, and program {self.second} updated it with "
                    "an atomic in the same launch: on a GPU they run at the same time, so the load may see the sum "
                    "before or after that update. Read atomically built sums in a later launch")
        else:
            what = (f"program {self.second} read {name} with a plain load, which program {self.first} updated with "
                    "an atomic in the same launch: on a GPU they run at the same time, so the load may see a sum "
                    "with only some of the updates. Read atomically built sums in a later launch")
        return f"{what}\n  at {self.where}: {self.code}"


class DotShadows:
    """Dot liveness by perturbation (issue 26, class 2): is a tl.dot's result used, however a kernel cancels it?

    Each tl.dot result is perturbed, and the perturbed values are carried beside the real ones ("shadows") through
    every builder op and reduction computed from them: for each kernel line of tl.dot (only that line's results
    perturbed), and for ALL (every tl.dot's result perturbed), two shadows, one nudged up and one down by BACK times
    as much. A store (or atomic) whose value, pointer or mask moves in its shadows, on the lanes it writes, shows
    that the perturbation reached memory: that line's products are live. `d - d`, `d * 0`, `acc += d; acc -= d`,
    `tl.dot(a, b) - tl.dot(a, b)` on one line, a condition that never holds, or all of a kernel's tl.dot lines
    cancelling together, leave every stored value as it was, so their work is dead whatever the expression.

    A store moves when its two shadows move it in opposite directions and in proportion, as a used value does for a
    small nudge (summed over its lanes, |up + down / BACK| is under LINEAR of |up - down / BACK|); rounding noise,
    such as (acc + d) - d differing from acc in its last bits, or 16-bit rounding of a value that moved less than an
    ulp, follows neither, so a cancellation cannot pass for use however large its terms. (BACK is irrational-like:
    with -1 or 1/2, rounding a value on the float grid is itself odd or proportional, and would pass.)

    The nudge is a function of the product's values and shape only (the same for two calls with the same operands):
    NUDGE of |x| plus an absolute NUDGE_ABS (a product of zeros moves too), random in sign per element (the softmax's
    shift by a row's max does not absorb it), and small enough for exp(s - lse) to stay near its linear part.

    A shadow equal to the real values is dropped, and ops on blocks without shadows cost nothing: the extra work is
    one recomputation of each op on tl.dot-derived blocks per shadow it carries. Loads through a perturbed pointer
    are not followed (their values are not known): a pointer or mask that moved counts as reaching memory."""

    ALL = "every tl.dot"
    NUDGE, NUDGE_ABS = 2.0 ** -10, 0.25
    LINEAR = 0.5
    BACK = 0.6180339887  # the down nudge, as a share of the up one
    # Builder ops that reach memory through create_masked_load or create_masked_store, where the memory hook sees
    # their pointer, value and mask (reaches); and ops whose effect a shadow cannot follow (a device print, an
    # assert, inline assembly, a descriptor's gather or scatter of slices): a perturbation reaching one counts.
    THROUGH_MEMORY = ("create_store", "create_load", "create_atomic_store", "create_atomic_load",
                      "create_descriptor_store", "create_descriptor_load")
    OPAQUE = ("create_print", "create_assert", "create_inline_asm", "create_descriptor_gather",
              "create_descriptor_scatter", "create_barrier", "create_atomic_poll")

    def __init__(self):
        self.moved: set = set()  # perturbations (kernel lines of tl.dot, or ALL) that moved a stored value
        self._patterns: dict[tuple, np.ndarray] = {}

    def moved_a_store(self, line) -> bool:
        return line in self.moved and self.ALL in self.moved

    def _pattern(self, shape: tuple) -> np.ndarray:
        """Per element, a sign and size in [-1, 1], fixed for each shape (so equal products move equally)."""
        if shape not in self._patterns:
            seed = zlib.crc32(repr(shape).encode())
            self._patterns[shape] = np.random.default_rng(seed).uniform(-1.0, 1.0, shape)
        return self._patterns[shape]

    @staticmethod
    def of(handle) -> dict:
        attr = getattr(handle, "attr", None)
        return attr.get(_SHADOW, {}) if isinstance(attr, dict) else {}

    def _keep(self, result, shadows: dict):
        """Attach the shadows that differ from the result's real values."""
        attr = getattr(result, "attr", None)
        if not isinstance(attr, dict):
            return
        real = np.asarray(result.data)
        kept = {key: data for key, data in shadows.items() if not _same_bits(data, real)}
        if kept:
            attr[_SHADOW] = kept
        else:
            attr.pop(_SHADOW, None)

    def op(self, original, name: str, result, args, kwargs):
        """The shadows of a builder op's result: the op again, on each shadow of its operands."""
        keys = {key for arg in args for key in self.of(arg)}
        if not keys or name in self.THROUGH_MEMORY:
            return
        if name in self.OPAQUE or not hasattr(result, "data"):  # (create_split gives a tuple of blocks)
            self._lost(keys)
            return
        from triton.runtime import interpreter

        shadows = {}
        try:
            for key in keys:
                swapped = [interpreter.TensorHandle(self.of(arg)[key], arg.dtype) if key in self.of(arg) else arg
                           for arg in args]
                shadows[key] = np.asarray(original(*swapped, **kwargs).data)
        except Exception:  # an op that will not run again on its shadows: the kernel's own run goes on
            self._lost(keys)
            return
        self._keep(result, shadows)

    def _lost(self, keys):
        """Shadows that cannot be followed further count as reaching memory (never a false "dead")."""
        self.moved |= {key[0] for key in keys}

    def dot(self, original, line, result, operands, rest, kwargs, own: bool):
        """The shadows of a tl.dot's result: those its operands carry, and (`own`: it did counted work) its own
        line's and ALL's, with its product perturbed."""
        from triton.runtime import interpreter

        a, b = operands
        accumulator = rest[0] if rest and isinstance(rest[0], interpreter.TensorHandle) else None
        inputs = (a, b, accumulator)
        keys = {key for handle in inputs for key in self.of(handle)}
        if own:
            keys |= {(base, sign) for base in (line, self.ALL) for sign in (1, -self.BACK)}
        try:
            shadows = self._dot_shadows(original, line, result, inputs, rest, kwargs, own, keys)
        except Exception:  # see op
            self._lost(keys)
            return
        self._keep(result, shadows)

    def _dot_shadows(self, original, line, result, inputs, rest, kwargs, own, keys) -> dict:
        from triton.runtime import interpreter

        accumulator = inputs[2]
        shadows = {}
        for key in keys:
            swapped = [interpreter.TensorHandle(self.of(h)[key], h.dtype) if key in self.of(h) else h
                       for h in inputs]
            if any(key in self.of(h) for h in inputs):
                data = np.asarray(original(_as_float32(swapped[0]), _as_float32(swapped[1]),
                                           *(swapped[2:] if accumulator is not None else rest[:1]), *rest[1:],
                                           **kwargs).data)
            else:
                data = np.asarray(result.data)
            if own and key[0] in (line, self.ALL):
                base = np.zeros_like(data) if accumulator is None else np.asarray(swapped[2].data, dtype=np.float64)
                product = data.astype(np.float64) - base
                nudge = key[1] * self._pattern(product.shape) * (self.NUDGE * np.abs(product) + self.NUDGE_ABS)
                data = (data.astype(np.float64) + nudge).astype(data.dtype)
            shadows[key] = data
        return shadows

    def reduce(self, apply, reducer, inputs, results, args, kwargs):
        """The shadows of a reduction's or scan's results (tl.sum, tl.max, ...): it again, on each shadow."""
        from triton import language as tl
        from triton.runtime import interpreter

        handles = [getattr(value, "handle", None) for value in inputs]
        keys = {key for handle in handles for key in self.of(handle)}
        if not keys:
            return
        results = results if isinstance(results, (tuple, list)) else (results,)
        shadows = [{} for _ in results]
        try:
            for key in keys:
                swapped = tuple(tl.core.tensor(interpreter.TensorHandle(self.of(h)[key], h.dtype), value.type)
                                if key in self.of(h) else value for value, h in zip(inputs, handles))
                again = apply(reducer, swapped if len(swapped) > 1 else swapped[0], *args, **kwargs)
                again = again if isinstance(again, (tuple, list)) else (again,)
                for found, value in zip(shadows, again):
                    found[key] = np.asarray(value.handle.data)
        except Exception:  # see op
            self._lost(keys)
            return
        for value, found in zip(results, shadows):
            self._keep(getattr(value, "handle", None), found)

    def reaches(self, args, mask):
        """A store or atomic (or a load): note the perturbations that move what it writes (its value, pointer or
        mask, on the lanes it writes), or where it reads (a load through a moved pointer: its values are not
        followed, so the perturbation counts as reaching memory)."""
        active = None if mask is None else np.asarray(mask.data, dtype=bool)
        for arg in args:
            shadows = self.of(arg)
            if not shadows:
                continue
            real = np.asarray(arg.data)
            lanes = None
            if not (arg is mask or active is None or real.shape == ()):
                lanes = np.broadcast_to(active, np.broadcast_shapes(real.shape, active.shape))
            for base in {key[0] for key in shadows} - self.moved:
                up, down = (shadows.get((base, sign), real) for sign in (1, -self.BACK))
                if lanes is not None:
                    up, down, written = (np.broadcast_to(v, lanes.shape)[lanes] for v in (up, down, real))
                else:
                    written = real
                if self._moves(up, down, written, arg.dtype):
                    self.moved.add(base)

    def _moves(self, up, down, real, dtype) -> bool:
        """Whether a stored block moved with the nudge: integers (pointers, masks) by any bit; floats (bfloat16 read
        as the numbers it holds) in opposite directions for the two nudges, on the lanes where all are finite."""
        up, down, real = (_numbers(v, dtype) for v in (up, down, real))
        if real.dtype.kind != "f":
            return not (_same_bits(up, real) and _same_bits(down, real))
        finite = np.isfinite(up) & np.isfinite(down) & np.isfinite(real)
        rise, fall = up[finite] - real[finite], (down[finite] - real[finite]) / self.BACK
        spread = float(np.abs(rise - fall).sum())
        return spread > 0 and float(np.abs(rise + fall).sum()) < self.LINEAR * spread


def _numbers(data, dtype) -> np.ndarray:
    """A block's values as numbers: bfloat16 (held as uint16 bits) as float64, other floats as float64."""
    data = np.asarray(data)
    if getattr(dtype, "name", "") == "bf16":
        return (data.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return data.astype(np.float64) if data.dtype.kind == "f" else data


def _same_bits(one, other) -> bool:
    """Whether two arrays hold exactly the same bytes (NaNs with the same payload are the same)."""
    one, other = np.asarray(one), np.asarray(other)
    return one.shape == other.shape and one.dtype == other.dtype and \
        np.ascontiguousarray(one).tobytes() == np.ascontiguousarray(other).tobytes()


MASK_FIX_ADVICE = (
    "the stock interpreter of triton 3.9 (without the grader) rejects this mask with \"mask has unsupported "
    "dtype\": a scalar condition (like `node < N`) combined with a block by `&` becomes int32 there. Make the "
    "condition a block first, e.g. `tl.where(node < N, block_mask, False)`, or compare a block: "
    "`tl.full([B], node, tl.int32) < N`, or skip the work with `if node < N:`. The GPU runs every form.")


class Recorder:
    """What kernels did during one case. Use through ``recording()``."""

    def __init__(self):
        self.regions: list[Region] = []
        self.violation: Violation | None = None
        self.race: Race | None = None  # the first race seen (a double store wins over a read)
        self.program = (0, 0, 0)
        self.programs = 0
        self.dots = 0  # tl.dot calls, summed over programs
        self.dot_work = 0  # multiply-adds those calls did (M * N * K each, padding included)
        self.dot_lines: dict[tuple[str, int], tuple[int, int]] = {}  # (file, line) -> (calls, multiply-adds)
        self.launches: list[Launch] = []
        # per (launch number, program): {region: distinct elements loaded} and {region: elements first stored}
        self.program_loads: dict[tuple, dict[Region, int]] = {}
        self.program_stores: dict[tuple, dict[Region, int]] = {}
        # per (launch number, program): each of its stores, in order, with the loads it made since its previous store
        # into the same tensor (see _note_store_segment)
        self.program_segments: dict[tuple, list[StoreSegment]] = {}
        self._loads_at_last_store: dict[tuple, dict[Region, dict[Region, float]]] = {}
        self.mask_fixes: dict[str, str] = {}  # kernel line -> its code, where an int32 mask was made boolean
        self._grid_launches = 0
        self._programs_of_launch: list[tuple] = []  # this launch's programs, in the order they ran
        self._stored_by: dict[Region, np.ndarray] = {}  # this launch: per element, the program that stored it
        # this launch: per element, the first and the last program that updated it with an atomic, and that loaded
        # it with a plain load (see _check_atomic_race)
        self._atomic_by: dict[Region, np.ndarray] = {}
        self._loaded_by: dict[Region, np.ndarray] = {}
        # Set by the grader: the budget already exceeded, or None. Asked at each program's start and every
        # WATCH_EVERY accesses, so a kernel far over budget stops early instead of running into the time limit.
        self.watchdog = None
        self.over_budget: str | None = None
        # Set by the grader where the lesson is tensor cores: tl.dot operands must be 16-bit. A float32 operand
        # runs as TF32 on the GPU, and float16 converts to TF32 exactly, so no tolerance could see it.
        self.dots_16bit = False
        self.kept_dots = None  # the (file, line) of each tl.dot the GPU compiler kept, once execute asks
        # Every counted tl.dot call: (its kernel line, multiply-adds, M, N); its index is the id the blocks computed
        # from it carry (_DOTS), and live_dots holds the ids whose results reached a store: the others did dead work.
        self.dot_calls: list[tuple[tuple[str, int], int, int, int]] = []
        self.live_dots: set[int] = set()
        # Set by the grader where the tl.dot budget applies: DotShadows, which perturbs each tl.dot's result and
        # keeps the perturbations that moved a stored value (see DotShadows).
        self.shadows: DotShadows | None = None
        # Set by the grader where blocks are the lesson (Puzzle.lesson_blocks): (the widest block the case gives,
        # sizes of the case a block may equal). Every block shape that runs is held to it; the first wider one is
        # kept in wide_tile as (its width, where, code).
        self.tile_limit: tuple[int, frozenset] | None = None
        self.wide_tile: tuple[int | tuple, str, str] | None = None  # a width, or (shape, most elements)
        self._accesses_since_watch = 0
        self.traffic = Traffic()
        # Set before the launcher runs, to keep a RegionMap per tensor (grader.show.memory_map): about 20 bytes per
        # element, and numpy work per access proportional to its lanes.
        self.maps = False
        self.program_names: list[tuple] = []  # (launch number, program id) of each program, in the order they ran

    # -- regions ----------------------------------------------------------------------
    def watch(self, label: str, tensor) -> Region:
        """Name an input before the launcher runs, so counts and reports use the spec's names."""
        region = self._region_for_tensor(label, tensor)
        region.given = True
        return region

    def _region_for_tensor(self, label: str, tensor) -> Region:
        """The region of this tensor: one already seen that holds all of its memory (a view of it: y[i:i + 1] of
        an input, an int64 view of a float32 one), or a new one of exactly its memory."""
        region = self.region_of(tensor)
        if region is not None:
            return region
        start, size = tensor.data_ptr(), tensor.numel() * tensor.element_size()
        for region in self.regions:
            if region.start <= start and start + size <= region.end:
                return region
        region = Region(label, start, tensor.numel(), tensor.element_size(), tuple(tensor.shape),
                        tensor.is_floating_point())
        if self.maps:
            region.map = RegionMap.empty(region.numel)
        self.regions.append(region)
        return region

    def region_of(self, tensor) -> Region | None:
        """The region of exactly this tensor (same start, size and element size), if it was seen."""
        start, numel = tensor.data_ptr(), tensor.numel()
        for region in self.regions:
            if region.start == start and region.numel == numel and region.itemsize == tensor.element_size():
                return region
        return None

    def stored_view(self, tensor) -> tuple[Region, np.ndarray] | None:
        """The region a kernel stored into that holds every element of `tensor` (the tensor itself, or a slice
        or view of it), with one written flag per element of `tensor` in its order; None if there is none.
        Judged by storage: a launcher may return `buf[:n]` of a bigger buffer its kernel wrote. Where no one
        region holds it, the regions within it that kernels stored into together (launches on views of it,
        z[0], z[1], ...): the first of them, with the flags of all."""
        exact = self.region_of(tensor)
        for region in ([exact] if exact is not None else []) + [r for r in self.regions if r is not exact]:
            if (region.stores or region.atomics) and region.itemsize == tensor.element_size():
                elements = _elements_in(tensor, region)
                if elements is not None:
                    return region, region.written[elements]
        parts = self.parts_of(tensor)
        if not parts:
            return None
        addresses = _addresses_of(tensor)
        written = np.zeros(addresses.size, dtype=bool)
        for part in parts:
            inside = (addresses >= part.start) & (addresses < part.end)
            written[inside] |= part.written[(addresses[inside] - part.start) // part.itemsize]
        return parts[0], written

    def parts_of(self, tensor) -> list[Region]:
        """The regions kernels stored into that lie within `tensor`'s memory, of its element size, where it is no
        region of its own: views of an output (z[i]) that kernels were launched on."""
        if self.region_of(tensor) is not None:
            return []
        low = tensor.data_ptr()
        high = low + (_addresses_of(tensor).max() - low + tensor.element_size() if tensor.numel() else 0)
        return [r for r in self.regions if (r.stores or r.atomics) and r.itemsize == tensor.element_size()
                and low <= r.start and r.end <= high]

    def _launch(self, fn, arg_names, args, kwargs, grid):
        launch = Launch.of(fn, arg_names, args, kwargs, grid)
        self.launches.append(launch)
        for name, value in launch.bound.items():  # defaults are never tensors
            base = getattr(value, "base", None) if type(value).__name__ == "TensorDescriptor" else value
            if hasattr(base, "data_ptr") and hasattr(base, "numel"):
                region = self._region_for_tensor(name.removesuffix("_ptr"), base)  # a tensor the grader did not name
                if name not in region.params:
                    region.params.append(name)

    def _start_grid(self):
        """A launch begins: programs of earlier launches cannot race with its programs."""
        self._grid_launches += 1
        self._programs_of_launch = []
        self._stored_by = {}
        self._atomic_by = {}
        self._loaded_by = {}

    def _start_program(self, program: tuple):
        self.program = program
        self._programs_of_launch.append(program)
        self.program_names.append((self._grid_launches, program))
        self._watch()

    def _watch(self):
        """Stop the kernel (OverBudget) if the watchdog finds a budget exceeded by the counts so far."""
        self._accesses_since_watch = 0
        if self.watchdog is not None and self.over_budget is None:
            problem = self.watchdog()
            if problem:
                self.over_budget = problem
                raise OverBudget(problem)

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

    def _regions_for(self, handle, active=None) -> tuple[Region, ...]:
        """The tensors this pointer was built from: one, or several where tl.where chose between pointers."""
        tagged = getattr(handle, "attr", {}).get(_TAG)
        if tagged is not None and tagged[0] is self:
            return tagged[1]
        region = self._classify(handle, active)
        return () if region is None else (region,)

    # -- accesses ---------------------------------------------------------------------
    def _access(self, kind: str, ptrs, mask, value=None, racy: str = ""):
        """Check and count one load, store (of `value`) or atomic, before it runs. Each lane moves the bytes of
        the pointer's element type, and all of them must lie inside its tensor. `racy` names an atomic the race
        detector treats as a store (an exchange, or a compare-and-swap outside a retry loop)."""
        self._accesses_since_watch += 1
        if self._accesses_since_watch >= WATCH_EVERY:
            self._watch()
        data = np.asarray(ptrs.data)
        active = np.ones(data.shape, dtype=bool) if mask is None else np.broadcast_to(
            np.asarray(mask.data, dtype=bool), data.shape)
        addrs = data[active].astype(np.int64)
        width = _lane_bytes(ptrs)
        values = None if value is None else np.broadcast_to(np.asarray(value.data), data.shape)[active]
        regions = self._regions_for(ptrs, active)
        self._count_lanes(kind, data, active, regions)
        if not regions:
            if addrs.size:
                self._stop(kind, None, addrs.size, addrs.size, [], data, width=width)
            return
        owner = np.full(addrs.size, -1, dtype=np.int64)  # per lane: the index in `regions` of the tensor it is in
        for index, region in enumerate(regions):
            offsets = addrs - np.int64(region.start)
            inside = (owner < 0) & (offsets >= 0) & (offsets + width <= region.numel * region.itemsize)
            owner[inside] = index
        bad = owner < 0
        if bad.any():
            for index, region in enumerate(regions):  # on the map, the lanes of the failing access that were inside
                if region.map is not None and (owner == index).any():
                    elements = _spanned(addrs[owner == index] - np.int64(region.start), width, region.itemsize)
                    region.map.touch(kind, len(self.program_names) - 1, np.unique(elements))
            region = min(regions, key=lambda r: _distance(r, int(addrs[bad][0])))  # the one its first bad lane missed
            offsets = addrs[bad] - np.int64(region.start)
            size = region.numel * region.itemsize
            outside = np.where((offsets >= 0) & (offsets < size), size, offsets)  # each lane's first byte outside
            first = sorted(set((outside // region.itemsize).tolist()))[:4]
            self._stop(kind, region, int(bad.sum()), addrs.size, first, data,
                       [r for r in regions if r is not region], width)
        for index, region in enumerate(regions):
            lanes = owner == index if len(regions) > 1 else slice(None)
            mine = addrs[lanes]
            if mine.size:
                self._count(kind, region, mine - np.int64(region.start), width,
                            None if values is None else values[lanes], racy)

    def _count_lanes(self, kind: str, data: np.ndarray, active: np.ndarray, regions: tuple[Region, ...]):
        """The coach's lane counts, and (with maps) the in-bounds elements that masked-off lanes pointed at."""
        traffic, lanes, on = self.traffic, active.size, int(np.count_nonzero(active))
        if kind == "load":
            traffic.load_lanes += lanes
            traffic.load_active += on
            if on >= 2 and regions:
                traffic.wide_loads += 1
                traffic.contiguous_loads += _contiguous(data.astype(np.int64), active, regions[0].itemsize)
        else:
            traffic.store_lanes += lanes
            traffic.store_active += on
        if self.maps and on < lanes:
            off = data[~active].astype(np.int64)
            for region in regions:
                if region.map is not None:
                    region.map.masked_lanes += off.size
                    region.map.masking.add(len(self.program_names) - 1)
                    offsets = off - np.int64(region.start)
                    inside = (offsets >= 0) & (offsets < region.numel * region.itemsize) \
                        & (offsets % region.itemsize == 0)
                    region.map.masked[offsets[inside] // region.itemsize] = True

    def _count(self, kind: str, region: Region, offsets: np.ndarray, width: int, values=None, racy: str = ""):
        """Count one access's lanes in `region` (byte offsets of lanes `width` bytes wide; a store's `values` beside
        them), in all and for this program, in bytes."""
        ordinal = len(self.program_names) - 1
        program = (self._grid_launches, self.program)
        if kind == "atomic":  # every lane reads and writes, duplicates included: the hardware applies each one
            elements = _spanned(offsets, width, region.itemsize)
            moved = offsets.size * width
            region.atomics += offsets.size
            region.load_bytes += moved
            region.store_bytes += moved
            _add(self.program_loads, program, region, moved / region.itemsize)
            touched = np.unique(elements)
            new = int(np.count_nonzero(~region.written[touched]))
            _add(self.program_stores, program, region, new)
            self._note_store_segment(program, region, new)
            region.written[elements] = True
            if region.map is not None:
                region.map.touch(kind, ordinal, elements)
            if racy:  # no race among atomics that add: the hardware orders them; these overwrite
                self._check_write_race(region, touched, racy)
            self._check_atomic_race(region, touched, "atomic")
            return
        lanes, first = np.unique(offsets, return_index=True)  # a GPU coalesces lanes with one address
        moved = lanes.size * width
        distinct = _spanned(lanes, width, region.itemsize)  # sorted, and distinct where a lane is an element
        if width != region.itemsize:
            distinct = np.unique(distinct)
        if region.map is not None:
            region.map.touch(kind, ordinal, distinct)
        if kind == "load":
            region.load_bytes += moved
            _add(self.program_loads, program, region, moved / region.itemsize)
            self._check_read_race(region, distinct)
            self._check_atomic_race(region, distinct, "load")
            return
        region.store_bytes += moved
        new = int(np.count_nonzero(~region.written[distinct]))
        _add(self.program_stores, program, region, new)
        self._note_store_segment(program, region, new)
        region.written[distinct] = True
        self._check_write_race(region, distinct, "", None if values is None or distinct.size != lanes.size
                               else values[first])
        self._check_atomic_race(region, distinct, "store")

    # -- store segments: per-program budgets that pairing programs cannot game (issue 26, class 10) -----------------
    def _note_store_segment(self, program: tuple, region: Region, new: int):
        """Note a store (or atomic) into `region` (`new`: elements no kernel had stored before), with the loads
        this program made since its previous store into `region`. A program that reads the keys twice and then
        stores two query blocks, at once or one after the other, read them twice before its first store: pairing
        programs cannot halve what a pass costs (budgets.Reads, per program)."""
        loads = self.program_loads.get(program, {})
        before = self._loads_at_last_store.setdefault(program, {}).get(region, {})
        since = {r: amount - before.get(r, 0) for r, amount in loads.items() if amount - before.get(r, 0)}
        self._loads_at_last_store[program][region] = dict(loads)
        self.program_segments.setdefault(program, []).append(StoreSegment(region, new, since))

    def _check_write_race(self, region: Region, elements: np.ndarray, via: str, values=None):
        """A store over another program's store in this launch races: each element is written by one program.
        Two programs storing the same bytes race too (the GPU would do that work twice, and the interpreter's
        order is no GPU's); the report says so. `via` names an atomic that overwrites (see _access)."""
        owners = self._stored_by.get(region)
        if owners is None:
            owners = self._stored_by[region] = np.full(region.numel, -1, dtype=np.int64)
        me = len(self._programs_of_launch) - 1
        if self.race is None or self.race.kind == "read" or region.map is not None:
            before = owners[elements]
            clash = np.flatnonzero((before >= 0) & (before != me))
            if clash.size and region.map is not None:
                region.map.raced[elements[clash]] = True
            if clash.size and (self.race is None or self.race.kind == "read"):
                same = values is not None and bool(_holds(region, elements[clash[:1]], values[clash[:1]])[0])
                whole = same and not via and clash.size == elements.size and bool((before == before[0]).all()) and \
                    int(np.count_nonzero(owners == before[0])) == elements.size
                self._race("write", region, int(elements[clash[0]]), int(before[clash[0]]), via, same, whole)
        owners[elements] = me

    # -- races between atomics and plain accesses (issue 26, class 4) -----------------------------------------------
    def _check_atomic_race(self, region: Region, elements: np.ndarray, kind: str):
        """Atomics that add race with nothing but plain accesses: a plain store of an element another program of
        the launch updates atomically (before or after it: the store may land between the updates and wipe them),
        and a plain load of an element another program updates atomically (before it: the load may see any partial
        sum; or after it, in the interpreter's order: the GPU may run the update first), unless it is part of a
        compare-and-swap retry loop (its guess is checked by the swap). `kind`: this access, "load", "store" or
        "atomic". Plain loads are noted only where they can meet an atomic: in tensors that are no input, and in
        inputs an atomic has updated."""
        me = len(self._programs_of_launch) - 1
        updated = self._atomic_by.get(region)
        if kind == "atomic":
            if updated is None:
                updated = self._atomic_by[region] = np.full((2, region.numel), -1, dtype=np.int64)
            owners = self._stored_by.get(region)
            if owners is not None and (self.race is None or self.race.kind == "read" or region.map is not None):
                before = owners[elements]
                clash = np.flatnonzero((before >= 0) & (before != me))
                self._atomic_clash(region, elements, clash, before, "write")
            loaded = self._loaded_by.get(region)
            if loaded is not None and (self.race is None or region.map is not None):
                other = np.where(loaded[0, elements] != me, loaded[0, elements], loaded[1, elements])
                clash = np.flatnonzero((other >= 0) & (other != me))
                if clash.size and not _in_while_loop():
                    self._atomic_clash(region, elements, clash, other, "read", via="a later atomic")
            _note_first_and_last(updated, elements, me)
            return
        if kind == "load" and (region.atomics or not region.given):
            loaded = self._loaded_by.get(region)
            if loaded is None:
                loaded = self._loaded_by[region] = np.full((2, region.numel), -1, dtype=np.int64)
            _note_first_and_last(loaded, elements, me)
        if updated is None or (self.race is not None and region.map is None and
                               (kind == "load" or self.race.kind == "write")):
            return
        first, last = updated[0, elements], updated[1, elements]
        other = np.where(first != me, first, last)
        clash = np.flatnonzero((other >= 0) & (other != me))
        if clash.size and kind == "load" and _in_while_loop():
            return
        self._atomic_clash(region, elements, clash, other, "read" if kind == "load" else "write")

    def _atomic_clash(self, region, elements, clash, other, kind, via=""):
        if not clash.size:
            return
        if region.map is not None:
            region.map.raced[elements[clash]] = True
        if self.race is None or (kind == "write" and self.race.kind == "read"):
            self._race(kind, region, int(elements[clash[0]]), int(other[clash[0]]), via=via, atomic=True)

    def _check_read_race(self, region: Region, elements: np.ndarray):
        owners = self._stored_by.get(region)
        if owners is None or (self.race is not None and region.map is None):
            return
        before = owners[elements]
        clash = np.flatnonzero((before >= 0) & (before != len(self._programs_of_launch) - 1))
        if clash.size and region.map is not None:
            region.map.raced[elements[clash]] = True
        if clash.size and self.race is None:
            self._race("read", region, int(elements[clash[0]]), int(before[clash[0]]))

    def _race(self, kind, region, element, first, via="", same=False, whole=False, atomic=False):
        where, code = _kernel_line()
        self.race = Race(kind, region, element, self._programs_of_launch[first], self.program, where, code, via,
                         same, whole, atomic)

    def _note_mask_fix(self):
        where, code = _kernel_line()
        self.mask_fixes.setdefault(where, code)

    def mask_fix_note(self) -> str:
        """What to write instead of the masks the hook had to make boolean; '' if none."""
        if not self.mask_fixes:
            return ""
        lines = "".join(f"\n  at {where}: {code}" for where, code in self.mask_fixes.items())
        return f"note: {MASK_FIX_ADVICE}{lines}"

    def _stop(self, kind, region, lanes, active, offsets, data, others=(), width=0):
        where, code = _kernel_line()
        self.violation = Violation(kind, region, lanes, active, offsets, self.program, where, code, tuple(data.shape),
                                   tuple(others), width, _steps(data))
        raise AccessViolation(self.violation.message())

    def _tag(self, result, args):
        if not _is_pointer(result) or _TAG in result.attr:
            return
        regions = []
        for arg in args:
            if _is_pointer(arg):
                regions += [r for r in self._regions_for(arg) if r not in regions]
        if regions:
            result.attr[_TAG] = (self, tuple(regions))


    def _carry_dots(self, result, handles, multiply: bool):
        """Let `result` carry the ids of the tl.dot calls its operands came from; none through a product with a
        block of constant zeros (x * 0.0: nothing of x reaches the result)."""
        attr = getattr(result, "attr", None)
        if not isinstance(attr, dict):
            return
        handles = [h for h in handles if isinstance(getattr(h, "attr", None), dict)]
        if multiply and any(h.attr.get(_SPLAT) and not np.any(h.data) for h in handles):
            return
        found = [h.attr[_DOTS] for h in handles if _DOTS in h.attr]
        if found:
            attr[_DOTS] = frozenset().union(*found)

    def _mark_live(self, handles):
        """The tl.dot calls whose results reach this store (through its value, pointer or mask) did real work."""
        for handle in handles:
            dots = getattr(handle, "attr", {}).get(_DOTS) if isinstance(getattr(handle, "attr", None), dict) else None
            if dots:
                self.live_dots |= dots

    def _check_tile(self, result):
        """Note the first block wider than tile_limit allows (a whole-row tile where the lesson is a loop)."""
        widest, sizes, most = self.tile_limit
        shape = getattr(getattr(result, "data", None), "shape", ())
        if not shape or self.wide_tile is not None:
            return
        wider = [size for size in shape if size > widest and size not in sizes]
        if wider:
            where, code = _kernel_line()
            self.wide_tile = (max(wider), where, code)
        # [B0, B1, B1] or [B1, B1]: B1 x B1 columns of a row in one block, with no axis wider than B1
        elif most is not None and (sum(size > 1 for size in shape) > 2 or math.prod(shape) > most):
            where, code = _kernel_line()
            self.wide_tile = ((tuple(int(size) for size in shape), most), where, code)

    def dot_is_live(self, index: int) -> bool:
        """Whether tl.dot call `index` did work that reached a store: its result (not multiplied by a constant
        zero, nor overwritten) reached one, and, where DotShadows watched, perturbing its result moved one."""
        if index not in self.live_dots:
            return False
        return self.shadows is None or self.shadows.moved_a_store(self.dot_calls[index][0])

    def dead_dot_work(self) -> int:
        """Multiply-adds of tl.dot calls whose results never reached a store."""
        return sum(work for index, (_, work, _, _) in enumerate(self.dot_calls) if not self.dot_is_live(index))


def _note_first_and_last(programs: np.ndarray, elements: np.ndarray, me: int):
    """Per element, the first program (row 0) and the last (row 1) to touch it: `me` now."""
    fresh = programs[0, elements] < 0
    programs[0, elements[fresh]] = me
    programs[1, elements] = me


def _add(counts: dict, program: tuple, region: Region, amount: int):
    per_region = counts.setdefault(program, {})
    per_region[region] = per_region.get(region, 0) + amount


def _steps(data: np.ndarray) -> tuple[int, ...]:
    """Per axis of a block of pointers, the most common difference in bytes between neighbouring lanes (0 where
    the axis has one lane, or every lane of it points at one address)."""
    steps = []
    for axis in range(data.ndim):
        if data.shape[axis] < 2:
            steps.append(0)
            continue
        values, counts = np.unique(np.diff(data.astype(np.int64), axis=axis), return_counts=True)
        steps.append(int(values[np.argmax(counts)]))
    return tuple(steps)


def _in_elements(size: int, itemsize: int) -> int | float:
    """Bytes as elements of `itemsize` bytes: an int when they divide evenly."""
    return size // itemsize if size % itemsize == 0 else size / itemsize


def _lane_bytes(ptrs) -> int:
    """The bytes one lane of this pointer block moves: its element type's width (1 for a boolean)."""
    element = getattr(getattr(ptrs, "dtype", None), "element_ty", None)
    return max(getattr(element, "primitive_bitwidth", 8) // 8, 1)


def _spanned(offsets: np.ndarray, width: int, itemsize: int) -> np.ndarray:
    """The elements (of `itemsize` bytes) that lanes `width` bytes wide at these byte offsets touch, lane by lane
    (duplicates kept): one each, unless a lane is wider than an element (an int64 view of a float32 tensor)."""
    first = offsets // itemsize
    if width <= itemsize:
        return first
    last = (offsets + width - 1) // itemsize
    grid = first[:, None] + np.arange(int((last - first).max()) + 1)
    return grid[grid <= last[:, None]]


def _distance(region: Region, address: int) -> int:
    """Bytes from `address` to the nearest byte of the region (0 inside it)."""
    return max(region.start - address, address - (region.end - 1), 0)


def _holds(region: Region, elements: np.ndarray, values) -> np.ndarray:
    """Per element: does memory already hold exactly the bytes of `values` there? (The hook runs before the
    store, and its bounds check has passed, so the elements are inside the tensor's host memory.)"""
    values = None if values is None else np.ascontiguousarray(values)
    if values is None or values.itemsize != region.itemsize:
        return np.zeros(elements.size, dtype=bool)
    memory = (ctypes.c_uint8 * (region.numel * region.itemsize)).from_address(region.start)
    held = np.frombuffer(memory, dtype=np.uint8).reshape(region.numel, region.itemsize)[elements]
    return (held == values.view(np.uint8).reshape(-1, region.itemsize)).all(axis=1)


def _addresses_of(tensor) -> np.ndarray:
    """The address of each of `tensor`'s elements, in its order."""
    addresses = np.full((), tensor.data_ptr(), dtype=np.int64)
    for size, stride in zip(tensor.shape, tensor.stride()):
        addresses = addresses[..., None] + np.arange(size, dtype=np.int64) * stride * tensor.element_size()
    return addresses.ravel()


def _elements_in(tensor, region: Region) -> np.ndarray | None:
    """The indices in `region` of `tensor`'s elements, in the tensor's order; None if any lies outside it."""
    gap = tensor.data_ptr() - region.start
    if gap < 0 or gap % region.itemsize:
        return None
    elements = np.full((), gap // region.itemsize, dtype=np.int64)
    for size, stride in zip(tensor.shape, tensor.stride()):
        elements = elements[..., None] + np.arange(size, dtype=np.int64) * stride
    elements = elements.ravel()
    if elements.size and (elements.min() < 0 or elements.max() >= region.numel):
        return None
    return elements


def _is_pointer(handle) -> bool:
    dtype = getattr(handle, "dtype", None)
    return isinstance(getattr(handle, "attr", None), dict) and getattr(dtype, "is_ptr", lambda: False)()


_TRITON_DIR = None
_HERE = os.path.abspath(__file__)


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
_dry: list | None = None  # while dry_run() is on: the launches noted
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
    if "apply" not in vars(getattr(interpreter, "ReduceScanOpInterface", object)):
        missing.append("ReduceScanOpInterface.apply")
    for name in ("_patch_lang_core", "_patch_lang", "_LangPatchScope", "_get_np_dtype"):
        if not callable(getattr(interpreter, name, None)):
            missing.append(name)
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
    from grader import env

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
_VALUE_AT = 1  # create_masked_store(ptrs, value, mask, ...) from 3.6 to 3.9


def _poisoned_other(ptrs):
    """A block like the loaded one, full of a value no honest kernel relies on; None if unsure."""
    from triton.runtime import interpreter

    to_numpy = getattr(interpreter, "_get_np_dtype", None)
    element = ptrs.get_element_ty() if hasattr(ptrs, "get_element_ty") else None
    try:
        dtype = to_numpy(element)
    except Exception:  # a dtype the interpreter does not map, or a reorganised interpreter
        return None
    from grader.transfer import UNDEFINED_NAN32

    nan32 = np.array([UNDEFINED_NAN32], dtype=np.uint32).view(np.float32)
    if dtype.kind == "f":  # a NaN with the grader's payload (transfer.UNDEFINED_NAN32), in this float's width
        fill = nan32.astype(dtype)[0]
    elif dtype.kind in "iu":
        # bfloat16 lives in uint16 here: the top half of the float32 NaN; any other integer gets its largest value
        fill = UNDEFINED_NAN32 >> 16 if getattr(element, "name", "") == "bf16" else np.iinfo(dtype).max
    else:
        return None
    return interpreter.TensorHandle(np.full(np.shape(ptrs.data), fill, dtype=dtype), element)


def _bool_mask(mask):
    """Triton 3.9's interpreter broadcasts a scalar condition (`node < N`) into a block as int32 data, so
    `block_mask & (node < N)` is an int32 mask, which its own load and store then reject; the GPU (and
    triton 3.6) take it. Hand them booleans; the recorder notes where, for MASK_FIX_ADVICE."""
    from triton.runtime import interpreter

    if mask is None or np.asarray(mask.data).dtype == np.bool_:
        return mask
    return interpreter.TensorHandle(np.asarray(mask.data) != 0, mask.dtype)


def _wrap_memory_op(original, name, kind, ptr_at, mask_at):
    def wrapper(*args, **kwargs):
        mask = args[mask_at] if mask_at is not None and len(args) > mask_at else None
        if mask is not None and np.asarray(mask.data).dtype != np.bool_:  # also outside a recording
            mask = _bool_mask(mask)
            args = (*args[:mask_at], mask, *args[mask_at + 1:])
            if _active is not None:
                _active._note_mask_fix()
        if _active is not None:
            if kind == "atomic":
                _active._access(kind, args[ptr_at], mask, racy=_overwriting_atomic(name, args))
            else:
                _active._access(kind, args[ptr_at], mask, args[_VALUE_AT] if kind == "store" else None)
            if kind != "load" and _active.dot_calls:
                _active._mark_live(args)
            if _active.shadows is not None and _active.dot_calls:
                _active.shadows.reaches(args, mask)
            if kind == "load" and len(args) > _OTHER_AT and args[_OTHER_AT] is None:
                poison = _poisoned_other(args[ptr_at])
                if poison is not None:
                    args = (*args[:_OTHER_AT], poison, *args[_OTHER_AT + 1:])
        return original(*args, **kwargs)
    return wrapper


def _overwriting_atomic(name: str, args) -> str:
    """'' for an atomic that only combines (add, max, ...); else what it is, for the race detector to treat it as
    a store. An exchange overwrites what it finds: a load, an add and an xchg is a read-modify-write that loses
    updates like a plain store. So does a compare-and-swap outside a `while` loop: when another program changed
    the element first, it fails, and nothing tries again."""
    if name == "create_atomic_rmw" and "XCHG" in str(args[0]).upper():
        return "tl.atomic_xchg"
    if name == "create_atomic_cas" and not _in_while_loop():
        return "tl.atomic_cas outside a retry loop"
    return ""


def _in_while_loop() -> bool:
    """Whether the learner's line running now is part of a retry loop: inside a `while` statement, or assigning
    a name that a `while` tests (`seen = tl.atomic_cas(...)` before `while seen != old:`)."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith((_HERE, _TRITON_DIR)):
        frame = frame.f_back
    if frame is None:
        return False
    return frame.f_lineno in _retry_lines("".join(linecache.getlines(frame.f_code.co_filename)))


@functools.lru_cache(maxsize=32)
def _retry_lines(source: str) -> frozenset[int]:
    """The lines of this source inside a `while` statement, and those of assignments to a name a `while` tests."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return frozenset()
    loops = [node for node in ast.walk(tree) if isinstance(node, ast.While)]
    tested = {name.id for loop in loops for name in ast.walk(loop.test) if isinstance(name, ast.Name)}
    lines = {line for loop in loops for line in range(loop.lineno, loop.end_lineno + 1)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in tested for t in node.targets):
            lines.update(range(node.lineno, node.end_lineno + 1))
    return frozenset(lines)


def _wrap_tagging(original, name):
    multiply = name in ("create_fmul", "create_mul")
    splat = name == "create_splat"
    adds = name in ("create_fadd", "create_fsub")

    def wrapper(*args, **kwargs):
        if adds and _active is not None and _active.dot_calls:
            _refuse_16_bit_sum("add", args)
        result = original(*args, **kwargs)
        if _active is not None:
            if _active.shadows is not None and _active.dot_calls and name != "create_dot":  # see _wrap_dot
                _active.shadows.op(original, name, result, args, kwargs)
            _active._tag(result, args)
            if splat and isinstance(getattr(result, "attr", None), dict):
                result.attr[_SPLAT] = True
            if _active.dot_calls:
                _active._carry_dots(result, args, multiply)
            if _active.tile_limit is not None:
                _active._check_tile(result)
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


# Float arithmetic on two blocks: triton's interpreter (3.6 to 3.9) keeps bfloat16 blocks as their uint16 bits and
# applies numpy's add, multiply, ... to those bits, so `o * do` on bfloat16 blocks is garbage (2.8e-33 for 4.24). Each
# is mended to compute in float32 and round to bfloat16, as the GPU's bfloat16 arithmetic does.
_BF16_ARITHMETIC = ("create_fadd", "create_fsub", "create_fmul", "create_fdiv", "create_frem", "create_precise_divf",
                    "create_minimumf", "create_maximumf", "create_minnumf", "create_maxnumf")


def _to_bfloat16(handle):
    """A float32 block as bfloat16 (uint16 bits, rounded to nearest even, NaN kept NaN)."""
    from triton import language as tl
    from triton.runtime import interpreter

    values = np.asarray(handle.data, dtype=np.float32)
    bits = values.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    rounded = np.where(np.isnan(values), ((bits >> 16) | 0x40).astype(np.uint16), rounded)
    return interpreter.TensorHandle(rounded, tl.bfloat16)


def _bfloat16_arithmetic(original):
    def wrapper(lhs, rhs, *args, **kwargs):
        if getattr(lhs.dtype, "name", "") != "bf16" or getattr(rhs.dtype, "name", "") != "bf16":
            return original(lhs, rhs, *args, **kwargs)
        return _to_bfloat16(original(_as_float32(lhs), _as_float32(rhs), *args, **kwargs))
    return wrapper


def _wrap_dot(original):
    def wrapper(*args, **kwargs):
        a, b = args[0], args[1]
        (m, k), n = np.shape(a.data)[-2:], np.shape(b.data)[-1]
        if min(m, n, k) < MIN_DOT:
            where, code = _kernel_line()
            raise DotTooSmall(f"tl.dot of a {m}x{k} block by a {k}x{n} block: on the GPU every dimension of tl.dot "
                              f"must be at least {MIN_DOT} (M={m}, N={n}, K={k}); use blocks of 16 or more "
                              f"(the interpreter would run it, the GPU compiler would not)\n  at {where}: {code}")
        if _active is not None and _active.dots_16bit:
            wide = [f"{side} is {handle.dtype}" for side, handle in (("the first operand", a), ("the second", b))
                    if getattr(handle.dtype, "name", "") not in ("fp16", "bf16")]
            if wide:  # the learner's line is added by the grader's report of the exception
                raise DotNot16Bit(DOT_16BIT_RULE.format(found=" and ".join(wide)))
        if _active is not None:
            _refuse_16_bit_sum("dot", args)
        result = original(_as_float32(a), _as_float32(b), *args[2:], **kwargs)
        if _active is None:
            return result
        counted, line = None, None
        if np.any(a.data) or np.any(b.data):  # zeros by zeros: no work (one zero block may be honest: queries
            # that are all 0)
            work = int(np.prod(np.shape(a.data)[:-2], dtype=np.int64)) * m * n * k
            _active.dots += 1
            _active.dot_work += work
            frame = sys._getframe(1)  # the kernel's line, found again in the compiled TTIR (gpu_compile)
            while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith((_HERE, _TRITON_DIR)):
                frame = frame.f_back
            line = (frame.f_code.co_filename, frame.f_lineno) if frame is not None else ("?", 0)
            if frame is not None:
                calls, total = _active.dot_lines.get(line, (0, 0))
                _active.dot_lines[line] = (calls + 1, total + work)
            counted = len(_active.dot_calls)
            _active.dot_calls.append((line, work, m, n))
        _active._carry_dots(result, args[:3], multiply=False)  # what the operands and the accumulator came from
        if counted is not None and isinstance(getattr(result, "attr", None), dict):
            result.attr[_DOTS] = result.attr.get(_DOTS, frozenset()) | {counted}
        if _active.shadows is not None:
            _active.shadows.dot(original, line, result, (a, b), args[2:], kwargs, own=counted is not None)
        return result
    return wrapper


def _wrap_reduce(apply):
    """Reductions and scans (tl.sum, tl.max, ...) build their blocks outside the builder: their results carry
    the tl.dot ids of their inputs too."""
    def wrapper(self, input, *args, **kwargs):
        combine = getattr(self, "combine_fn", None)
        if _active is not None and getattr(getattr(combine, "fn", combine), "__name__", "") == "_sum_combine":
            _refuse_16_bit_sum("sum", input if isinstance(input, (tuple, list)) else (input,))
        result = apply(self, input, *args, **kwargs)
        if _active is not None and _active.shadows is not None and _active.dot_calls:
            _active.shadows.reduce(apply, self, input if isinstance(input, (tuple, list)) else (input,), result,
                                   args, kwargs)
        if _active is not None and _active.dot_calls:
            inputs = input if isinstance(input, (tuple, list)) else (input,)
            handles = [getattr(value, "handle", None) for value in inputs]
            for value in result if isinstance(result, (tuple, list)) else (result,):
                _active._carry_dots(getattr(value, "handle", None), handles, multiply=False)
        return result
    return wrapper


def _tensor_range(original_range):
    """tl.range as the GPU runs it: its loop variable is a tensor (int32, or int64 where a bound is), so
    `i.to(tl.int64)` works; the interpreter's own gives Python ints. tl.static_range keeps ints (constexprs)."""
    from triton import language as tl
    from triton.runtime import interpreter

    def loop(arg1, arg2=None, step=None, **kwargs):
        bounds = [arg1, arg2, step]
        wide = any(getattr(getattr(v, "dtype", None), "name", "") in ("int64", "uint64")
                   or (isinstance(v, int) and not -2**31 <= v < 2**31) for v in bounds if v is not None)
        dtype, numpy_type = (tl.int64, np.int64) if wide else (tl.int32, np.int32)
        for value in original_range(arg1, arg2, step, **kwargs):
            yield tl.tensor(interpreter.TensorHandle(np.array([value], dtype=numpy_type), dtype), dtype)
    return loop


def _wrap_patch_lang_core(patch):
    def wrapper(lang, scope, *args, **kwargs):
        result = patch(lang, scope, *args, **kwargs)
        scope.set_attr(lang, "range", _tensor_range(lang.range))
        return result
    return wrapper


def _install():
    global _installed, _TRITON_DIR
    import triton

    _TRITON_DIR = os.path.dirname(os.path.abspath(triton.__file__))
    interpreter, builder, executor, _ = _hook_points()
    for name in _BF16_ARITHMETIC:
        if callable(getattr(builder, name, None)):
            setattr(builder, name, _bfloat16_arithmetic(getattr(builder, name)))
    for name in dir(builder):
        if name.startswith("create_") and name not in _MEMORY_OPS and callable(getattr(builder, name)):
            setattr(builder, name, _wrap_tagging(getattr(builder, name), name))
    for name, (kind, ptr_at, mask_at) in _MEMORY_OPS.items():
        setattr(builder, name, _wrap_memory_op(getattr(builder, name), name, kind, ptr_at, mask_at))
    builder.create_dot = _wrap_dot(builder.create_dot)
    interpreter.ReduceScanOpInterface.apply = _wrap_reduce(interpreter.ReduceScanOpInterface.apply)
    interpreter._patch_lang_core = _wrap_patch_lang_core(interpreter._patch_lang_core)

    set_grid_idx, set_grid_dim = builder.set_grid_idx, builder.set_grid_dim

    def grid_idx(*args, **kwargs):
        if _active is not None:
            _active._start_program(tuple(args[:3]))
        return set_grid_idx(*args, **kwargs)

    def grid_dim(*args, **kwargs):
        if _active is not None:
            _active.programs += int(np.prod(args[:3]))
            _active._start_grid()
        return set_grid_dim(*args, **kwargs)

    builder.set_grid_idx, builder.set_grid_dim = grid_idx, grid_dim

    launch = executor.run
    patched: set = set()  # the languages patched since this launch began (see patch_lang)

    def run(self, *args, grid, warmup, **kwargs):
        if _dry is not None and not warmup:  # dry_run(): note the launch, run nothing
            _dry.append(Launch.of(self.fn, self.arg_names, args, kwargs, grid))
            return None
        if _active is not None and not warmup:
            _active._launch(self.fn, self.arg_names, args, kwargs, grid)
        patched.clear()
        try:
            return launch(self, *args, grid=grid, warmup=warmup, **kwargs)
        finally:
            patched.clear()

    # Each call of a @jit function inside a kernel (tl.sum, tl.zeros, a learner's helper) patches triton.language
    # again (_patch_lang: inspect.getmembers of every module it reaches), though the launch patched it already: a
    # quarter of puzzle 10's grading time. Within one launch, a language patched once stays patched (the launch
    # restores it at its end), so a second patch of the same languages is skipped.
    patch_lang = interpreter._patch_lang

    languages: dict = {}  # function -> the triton.language modules its globals hold (what _patch_lang patches)

    def patch_once(fn):
        key = languages.get(fn)
        if key is None:
            key = languages[fn] = tuple(sorted(id(value) for value in fn.__globals__.values() if inspect.ismodule(value)
                                               and getattr(value, "__name__", "").startswith("triton.language")))
        if key in patched:
            return interpreter._LangPatchScope()
        patched.add(key)
        return patch_lang(fn)

    # The interpreter maps a triton dtype to numpy's by building a table on every call (a few seconds of a graph
    # puzzle's grading); the mapping never changes, so each answer is kept.
    np_dtype, np_dtypes = interpreter._get_np_dtype, {}

    def np_dtype_once(tt_dtype):
        try:
            return np_dtypes[tt_dtype]
        except KeyError:
            found = np_dtypes[tt_dtype] = np_dtype(tt_dtype)
            return found
        except TypeError:  # unhashable: ask every time
            return np_dtype(tt_dtype)

    # With debug off (as a GPU build has it), the overflow check of every integer + and * builds an assert it then
    # drops (semantic.device_assert returns at once): a third of a graph puzzle's grading time, for nothing. The GPU
    # wraps around silently; so does the interpreter without it, and the bounds check sees the wrapped offsets.
    options = getattr(builder, "options", None)
    if dataclasses.is_dataclass(options) and not getattr(options, "debug", True) and \
            hasattr(options, "sanitize_overflow"):
        builder.options = dataclasses.replace(options, sanitize_overflow=False)

    executor.run = run
    interpreter._patch_lang = patch_once
    interpreter._get_np_dtype = np_dtype_once
    _installed = True


def install() -> bool:
    """Put the hook in place now (it is otherwise installed by the first recording); False if unavailable.
    Notebooks do this at import, so kernels called directly get the interpreter fixes too."""
    ok, _ = status()
    if ok and not _installed:
        _install()
    return ok


@contextlib.contextmanager
def dry_run():
    """Note every kernel launch inside the block, with its arguments, and run none of them: kernel-only grading
    compiles a case's kernels for the GPU before the interpreter runs them (grader.worker.execute). Yields the list
    of Launches, or None when the hook is unavailable."""
    global _dry
    ok, _ = status()
    if not ok:
        yield None
        return
    if not _installed:
        _install()
    _dry = []
    try:
        yield _dry
    finally:
        _dry = None


@contextlib.contextmanager
def recording(maps: bool = False):
    """Record every kernel launched inside the block. Yields None when the hook is unavailable.
    With maps, keep a RegionMap per tensor (what grader.show.memory_map draws)."""
    global _active
    ok, _ = status()
    if not ok:
        yield None
        return
    if not _installed:
        _install()
    recorder = Recorder()
    recorder.maps = maps
    _active = recorder
    try:
        yield recorder
    finally:
        _active = None
