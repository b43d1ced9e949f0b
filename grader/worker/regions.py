"""The recorder's vocabulary (grader.worker.instrument): the tags a block carries, what stops a kernel (an access out
of bounds, a budget passed, a tl.dot the GPU cannot run or a sum kept in 16 bits), a tensor's region and map, the
traffic counts, a launch, a violation and a race."""

from __future__ import annotations

import ctypes
import inspect
from dataclasses import dataclass, field

import numpy as np

_TAG = "_grader_region"
_DOTS = "_grader_dots"  # on a block: the ids of the tl.dot calls it was computed from (Recorder.dot_calls)
_SPLAT = "_grader_splat"  # on a block: made by splatting one value (tl.zeros, tl.full, a scalar broadcast)
_ATOMIC_OLD = "_grader_atomic_old"  # on a block: the old values an atomic (add, max, xchg, ...) returned
_OFFSET_BITS = "_grader_offset_bits"  # on a pointer: the narrowest integer (8 or 16 bits) added to it on its way
_SHADOW = "_grader_shadow"  # on a block: {perturbation: the block's values had that tl.dot result moved} (DotShadows)
_MEMORY_OPS = {  # method -> (kind, position of the pointer, position of the mask or None)
    "create_masked_load": ("load", 0, 1),
    "create_masked_store": ("store", 0, 2),
    "create_atomic_rmw": ("atomic", 1, 3),
    "create_atomic_cas": ("atomic", 0, None),
}
_WRITTEN_AT = {"create_masked_store": 1, "create_atomic_rmw": 2, "create_atomic_cas": 2}  # the value written


class AccessViolation(Exception):
    """Raised inside the interpreter to stop a kernel before an out-of-bounds access runs."""


class OverBudget(Exception):
    """Raised inside the interpreter to stop a kernel as soon as the recorded traffic exceeds a budget."""


class DotTooSmall(Exception):
    """A ``tl.dot`` the interpreter could run but the GPU compiler rejects."""


class IntegerDivisionByZero(Exception):
    """An integer // or % by zero on some lane: numpy gives 0, a GPU another value (LLVM leaves it undefined), so a
    kernel would compute one thing in the interpreter and another on the GPU; refused, never guessed."""


class GatherOutOfRange(Exception):
    """A tl.gather index outside its block on some lane: numpy counts a negative one from the end, a GPU reads an
    undefined value; refused, never guessed."""


class IntegerDivisionOverflow(Exception):
    """The smallest signed integer divided by -1 on some lane: numpy gives the smallest integer, a GPU's result is
    undefined (LLVM's sdiv overflows); refused."""


class ShiftPastWidth(Exception):
    """An integer shift by its width or more (or a negative amount) on some lane: numpy gives 0, LLVM leaves it
    undefined; refused."""


class StepNotPositive(Exception):
    """A loop whose step, known only at run time, is not positive: the GPU compiler's loop counts up."""


class ArgReduceOverNaN(Exception):
    """tl.argmax or tl.argmin over a block holding NaN: numpy skips it, a GPU's comparisons do not order it."""


class NarrowCastOutOfRange(Exception):
    """A float cast to an 8- or 16-bit integer of a value past that type's range: undefined on a GPU; refused."""


class HistogramOutOfRange(Exception):
    """A tl.histogram of a value outside 0..bins-1: dropped by triton 3.9's interpreter, counted in the last bin by
    3.6's, and left to its lowering on a GPU; refused."""


class ClampBoundsCrossed(Exception):
    """A tl.clamp whose min is above its max on a lane: undefined (tl.clamp's docstring), and a GPU computes it one
    way or another by how the call compiled (min.xorsign.abs where min is -max); refused."""


class CombineOrderMatters(Exception):
    """A tl.reduce whose combine function gives another result in another order: a GPU's tree order differs."""


class DebugCheckFailed(Exception):
    """A tl.device_assert, or an int32 overflow check, of a kernel built with @triton.jit(debug=True) failed."""


class AddressAsNumber(Exception):
    """A pointer made a number, or a number a pointer: addresses differ between the interpreter and a GPU."""


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
                    "long sum drifts far past the tolerance. Sum 16-bit blocks as x.to(tl.float32) and keep "
                    "accumulators float32 (tl.zeros([...], dtype=tl.float32); for products, tl.dot(a, b, acc) or "
                    "acc += tl.dot(a, b)), and convert to 16 bits only an operand of tl.dot")
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
    (grader.show.memory_map draws it). Programs are numbered launch after launch, each launch's in id order
    (``Recorder.program_names``), whatever order they ran in (grader.worker.program_order)."""
    reads: np.ndarray  # int32: loads that touched it (a load's duplicate lanes count once)
    writes: np.ndarray  # int32: stores and atomic updates
    reader: np.ndarray  # int32: the first program (by number) that loaded it, or -1
    writer: np.ndarray  # int32: the last program (by number: of the last launch) that stored it, or -1
    masked: np.ndarray  # bool: a masked-off lane pointed at it
    raced: np.ndarray  # bool: two programs of one launch stored it, or one loaded what another stored
    masked_lanes: int = 0  # masked-off lanes of accesses through a pointer into this tensor (past its end too)
    masking: set = field(default_factory=set)  # the programs those masked-off lanes belonged to
    readers: set = field(default_factory=set)  # every program that loaded from it
    writers: set = field(default_factory=set)  # every program that stored into it
    # The first FIRST_PROGRAMS programs (by number) to load from it (and to store into it): every element each one
    # touched, so that a summary says exactly what they did, also where programs overlap.
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
            readers = self.reader[elements]
            self.reader[elements] = np.where((readers < 0) | (readers > ordinal), ordinal, readers)
            programs, first = self.readers, self.first_reads
        else:
            np.add.at(self.writes, elements, 1)  # an atomic's lanes may repeat an element: each updates it
            self.writer[elements] = np.maximum(self.writer[elements], ordinal)
            programs, first = self.writers, self.first_writes
        programs.add(ordinal)
        if ordinal not in first and len(first) >= self.FIRST_PROGRAMS and ordinal < max(first):
            del first[max(first)]  # a program numbered after it: every one of its accesses ran while it was kept
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
    unspecialized: frozenset = frozenset()  # the parameters of @triton.jit(do_not_specialize=[...])

    @property
    def name(self) -> str:
        return getattr(self.fn, "__name__", "kernel")

    @property
    def ones(self) -> set[str]:
        """The parameters a GPU's JIT makes constexprs because they are the integer 1 (triton's specialize_impl):
        plain, unannotated, not in do_not_specialize. There `K * 65536 * 65536` is Python's 2**32, not an int32's
        0, and `N0.to(tl.int64)` does not compile."""
        try:
            params = inspect.signature(self.fn).parameters
        except (TypeError, ValueError):
            return set()
        return {name for name, value in self.bound.items() if type(value) is int and value == 1 and name in params
                and params[name].annotation is inspect.Parameter.empty and name not in self.unspecialized}

    @classmethod
    def of(cls, fn, arg_names, args, kwargs, grid, compiled=None, unspecialized=frozenset()) -> Launch:
        """A launch as triton's run() receives it: positional and keyword arguments bound by name, defaults not
        given filled in, and the keywords that are no parameter kept as options."""
        bound = dict(zip(arg_names, args))
        bound.update({k: v for k, v in kwargs.items() if k in arg_names})
        defaults = {p.name: p.default for p in inspect.signature(fn).parameters.values()
                    if p.name not in bound and p.default is not inspect.Parameter.empty}
        options = {k: v for k, v in kwargs.items() if k not in arg_names}
        return cls(fn, {**defaults, **bound}, options, grid, compiled, frozenset(unspecialized))


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
    pitch: str = ""  # where the block's rows lie a distance apart that is not the tensor's row length (wrong_pitch)
    offset_bits: int = 0  # the narrowest integer (8 or 16 bits) added to the pointer on its way, or 0

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
    kind: str  # "write": both stored it; "read": the later program loaded what the earlier one stored; "overwrite":
    # the later program stored what the earlier one loaded; "lane write", "lane read": the same, between two lanes
    # of one program (first is second); "lane atomic": an atomic over another lane's plain store; "lane overwrite":
    # a store (or an atomic, via "an atomic") into what another lane of the program loaded since the last barrier
    region: Region
    element: int
    first: tuple  # the program that stored it first (loaded it, for an overwrite)
    second: tuple  # the program that stored or loaded it after
    where: str
    code: str
    via: str = ""  # an atomic that overwrites, for a write ("tl.atomic_cas outside a retry loop")
    same: bool = False  # a write of the very bytes the first program stored
    whole: bool = False  # the second program stored exactly the elements of the first's block, and nothing else
    atomic: bool = False  # one side is an atomic (that adds), the other a plain store or load
    pitch: str = ""  # the block's rows lie a distance apart that is not the tensor's row length (wrong_pitch)
    # A 1-D tensor's write of the same bytes: (where the first program's block starts, where this program's block
    # starts, its width), in elements, where the two blocks overlap; else ()
    overlap: tuple = ()

    def message(self) -> str:
        name = self.region.element(self.element)
        passed = [p for p in self.region.params if p not in (self.region.label, f"{self.region.label}_ptr")]
        name += f" (passed as {', '.join(passed)})" if passed else ""
        if self.atomic:
            return self._atomic_message(name)
        if self.kind.startswith("lane "):
            return self._lane_message(name)
        if self.kind == "overwrite":
            return (f"program {self.second} stored into {name}, which program {self.first} read with a plain load in "
                    "the same launch: on a GPU they run at the same time, so that load may see this store (a value "
                    "saved first and stored back later too: the other program may read in between). Never store "
                    "into an element another program reads; leave the inputs as they are\n"
                    f"  at {self.where}: {self.code}")
        if self.kind == "write" and self.whole:
            return (f"programs {self.first} and {self.second} stored the very same elements of {self.region.label} "
                    f"(from {name} on): every program works on the same block, so the rest is never written. Start "
                    "each program's block from its own index: offsets = tl.program_id(0) * B0 + tl.arange(0, B0) "
                    f"(with the puzzle's block sizes and axes)\n  at {self.where}: {self.code}")
        if self.pitch and not self.via:
            who = (f"programs {self.first} and {self.second} both wrote {name}" if self.kind == "write" else
                   f"program {self.second} read {name}, which program {self.first} wrote in the same launch")
            return (f"{who}: {self.pitch}. Rows at the wrong distance run into the next program's rows\n"
                    f"  at {self.where}: {self.code}")
        if self.kind == "write" and self.same:
            return (f"programs {self.first} and {self.second} both wrote {name}, the same value: each output element "
                    f"is written by one program. {self._overlap_text()}; for the last, partial block, mask the lanes "
                    f"past the end instead of shifting the block back\n  at {self.where}: {self.code}")
        if self.kind == "write" and self.via:
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

    def _overlap_text(self) -> str:
        """Why two programs wrote one element with the same value: their blocks overlap (where they start and how
        wide they are, for a 1-D tensor)."""
        if not self.overlap:
            return ("Blocks that overlap do the work twice, and on a GPU two programs that write one element race. "
                    "Check where each program's block starts (every program on the same block? a block wider than "
                    "its step?)")
        theirs, mine, width = self.overlap
        return (f"Program {self.second}'s block starts at {self.region.element(mine)}, {mine - theirs} element"
                f"{'s' * (mine - theirs != 1)} after program {self.first}'s (at {self.region.element(theirs)}), and "
                f"it is {width} elements wide: the blocks overlap, so the work is done twice, and on a GPU two "
                "programs that write one element race. Blocks of B0 elements start B0 apart: offsets = "
                "tl.program_id(0) * B0 + tl.arange(0, B0)")

    def _lane_message(self, name: str) -> str:
        """The message of a race between two lanes of one program (a kind "lane ...")."""
        if self.kind == "lane write" and self.pitch:
            return (f"two lanes of program {self.second} wrote {name}: {self.pitch}. Rows at the wrong "
                    f"distance run into each other\n  at {self.where}: {self.code}")
        if self.kind == "lane write":
            return (f"two lanes of program {self.second} wrote {name} with different values, in one tl.store or in "
                    "two with no tl.debug_barrier() between: on a GPU the lanes are threads, and which value lands "
                    "last is undefined (the interpreter keeps the last). If lanes add into shared elements (a "
                    "scatter), use tl.atomic_add; otherwise give each element one lane (check the offsets this store "
                    "computes)\n"
                    f"  at {self.where}: {self.code}")
        if self.kind == "lane atomic":
            return (f"program {self.second} updated {name} with an atomic, over what another lane of the same program "
                    "stored with a plain store: on a GPU the lanes are threads, and without a barrier the store may "
                    "land after the update and wipe it (or the atomic may read what was there before). Put "
                    f"tl.debug_barrier() between the store and the atomic\n  at {self.where}: {self.code}")
        if self.kind == "lane overwrite":
            wrote = "updated" if self.via else "stored into"
            return (f"program {self.second} {wrote} {name}, which another lane of the same program loaded since the "
                    "last tl.debug_barrier() (a write after a read): on a GPU the lanes are threads, and without a "
                    "barrier this store may land before the other thread's load, which then reads the new value. Put "
                    "tl.debug_barrier() between the loads and the store, or have each lane read only the elements it "
                    f"writes itself\n  at {self.where}: {self.code}")
        return (f"program {self.second} read {name}, which another lane of the same program stored (with "  # lane read
                "tl.store or an atomic): on a GPU the lanes are threads, and without a barrier the load may run "
                "before the other thread's store. Keep the value in a variable instead of reading it back (or put "
                f"tl.debug_barrier() between)\n  at {self.where}: {self.code}")

    def _atomic_message(self, name: str) -> str:
        if self.kind == "write" and self.via:
            what = (f"programs {self.first} and {self.second} both updated {name} in the same launch, one with "
                    f"{self.via}: on a GPU they run at the same time, so the other's update can land between what "
                    "it read and what it wrote, and be lost. For a sum, use one tl.atomic_add per element; a "
                    "compare-and-swap in a loop that retries until it succeeds is the only safe read-modify-write")
        elif self.kind == "write":
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


def wrong_pitch(region: Region, steps: tuple, sizes: dict) -> str:
    """What to say where a 2-D block of pointers into a 2-D row-major tensor steps one element along one axis and,
    along the other, a distance that is not the tensor's row length (rows * N1 where z's rows are N0 long); '' where
    it does not. `steps`: bytes between neighbouring lanes per axis of the block (_steps); `sizes`: the launch's
    integer arguments by name, which name the distances (N0, T, B1, ...)."""
    shape = tuple(int(n) for n in region.shape)
    if len(shape) != 2 or shape[0] * shape[1] != region.numel or len(steps) != 2 \
            or any(step % region.itemsize for step in steps):
        return ""
    lanes = [abs(step) // region.itemsize for step in steps]
    if 1 not in lanes:
        return ""
    pitch, row = lanes[1 - lanes.index(1)], shape[1]
    if pitch in (0, 1, row):
        return ""
    names = {value: name for name, value in reversed(list(sizes.items()))}  # the first name of each value

    def said(value: int) -> str:
        return f"{names[value]} = {value}" if value in names else str(value)

    unit = names.get(row, str(row))
    return (f"the rows of this block lie {said(pitch)} elements apart, but {region.label} ({list(shape)}, "
            f"row-major) has rows of {said(row)} element{'s' * (row != 1)}: row j starts at j * {unit}, so multiply "
            f"the row index by {unit}")


def _in_elements(size: int, itemsize: int) -> int | float:
    """Bytes as elements of `itemsize` bytes: an int when they divide evenly."""
    return size // itemsize if size % itemsize == 0 else size / itemsize


# -- lanes and addresses, for the recorder ------------------------------------------------------------------------

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
