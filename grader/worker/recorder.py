"""The access record of one grading (grader.worker.instrument fills it from the interpreter's hook): bounds, traffic,
store coverage, races, tl.dot work and tile widths, per tensor and per program."""

from __future__ import annotations

import math

import numpy as np

from grader.worker.dot_shadows import DotShadows
from grader.worker.frames import _HERE, _in_while_loop, _kernel_line, _triton_dir, learner_line  # noqa: F401
from grader.worker.pipelining import note_load
from grader.worker.program_order import ProgramOrder
from grader.worker.races import RaceChecks
from grader.worker.regions import (
    _ATOMIC_OLD,
    _DOTS,
    _OFFSET_BITS,
    _SPLAT,
    _TAG,
    _WRITTEN_AT,
    WATCH_EVERY,
    AccessViolation,
    Launch,
    OverBudget,
    Race,
    Region,
    RegionMap,
    StoreSegment,
    Traffic,
    Violation,
    _add,
    _addresses_of,
    _contiguous,
    _distance,
    _elements_in,
    _is_pointer,
    _lane_bytes,
    _spanned,
    _steps,
    wrong_pitch,
)


class Misaligned(Exception):
    """A lane moving a value of N bytes at an offset into its tensor that is not a multiple of N (review 20)."""


_READ_BACK = "_grader_atomic_read"  # on a block: made from what an atomic returned; the tensors it read

MASK_FIX_ADVICE = (
    "the stock interpreter of triton 3.9 (without the grader) rejects this mask with \"mask has unsupported "
    "dtype\": a scalar condition (like `node < N`) combined with a block by `&` becomes int32 there. Make the "
    "condition a block first, e.g. `tl.where(node < N, block_mask, False)`, or compare a block: "
    "`tl.full([B], node, tl.int32) < N`, or skip the work with `if node < N:`. The GPU runs every form.")


class Recorder(RaceChecks):
    """What kernels did during one case. Use through ``recording()``."""

    def __init__(self):
        self.regions: list[Region] = []
        self.violation: Violation | None = None
        self.race: Race | None = None  # the first race seen (a double store wins over a read)
        self.input_store: tuple | None = None  # the first store or atomic into an input, refused (input_store_message)
        self.swaps_failed = 0  # lanes of a compare-and-swap in a retry loop that failed once (contended_swaps)
        self.atomic_old_used = self.atomic_reads = False  # old values of atomics used (order_note), noted (read_back)
        self.program, self.programs = (0, 0, 0), 0  # the running program; programs begun, over launches
        self.dots = 0  # tl.dot calls, summed over programs
        self.dot_work = 0  # multiply-adds those calls did (M * N * K each, padding included)
        self.dot_lines: dict[tuple[str, int], tuple[int, int]] = {}  # (file, line) -> (calls, multiply-adds)
        self.float_ops = 0  # where dots_16bit: float operations outside tl.dot, over programs (cuda_cores)
        self.launches: list[Launch] = []
        self.on_launch = None  # set by the grader: called with each launch before it runs (gpu_compile.compile_ahead)
        # per (launch number, program): {region: distinct elements loaded} and {region: elements first stored}
        self.program_loads: dict[tuple, dict[Region, int]] = {}
        self.program_stores: dict[tuple, dict[Region, int]] = {}
        # per (launch number, program): each of its stores, in order, with the loads it made since its previous store
        # into the same tensor (see _note_store_segment)
        self.program_segments: dict[tuple, list[StoreSegment]] = {}
        self._loads_at_last_store: dict[tuple, dict[Region, dict[Region, float]]] = {}
        self.mask_fixes: dict[str, str] = {}  # kernel line -> its code, where an int32 mask was made boolean
        self.reloads: dict[int, dict] = {}  # per launch (its index): loads of what it stored before (pipelining)
        self._grid_launches = 0
        self._programs_of_launch: list[tuple] = []  # this launch's programs, in the order they ran
        self._stored_by: dict[Region, np.ndarray] = {}  # this launch: per element, the program that stored it
        self._lane_of: dict[Region, tuple] = {}  # this program: (elements it stored, sorted; the lane of each)
        self._lane_reads, self._lane_reads_now = {}, 0  # this launch: what lane loaded each element (_check_lane_reads)
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
        self.unfed_dots: set[int] = set()  # tl.dot calls whose operands no input's values fill (DotShadows.fed)
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
        self.orders: list[ProgramOrder] = []  # each launch begun: its grid, and the order its programs run in
        self._pointers: np.ndarray | None = None  # the block of pointers of the access being checked

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

    def _launch(self, launch: Launch):
        self.launches.append(launch)
        if self.on_launch is not None:
            self.on_launch(launch)
        for name, value in launch.bound.items():  # defaults are never tensors
            base = getattr(value, "base", None) if type(value).__name__ == "TensorDescriptor" else value
            if hasattr(base, "data_ptr") and hasattr(base, "numel"):
                region = self._region_for_tensor(name.removesuffix("_ptr"), base)  # a tensor the grader did not name
                if name not in region.params:
                    region.params.append(name)

    def _start_grid(self, grid: tuple[int, int, int]):
        """A launch of `grid` begins: programs of earlier launches cannot race with its programs. They will run in
        an order drawn for it (program_order), not in id order."""
        self._grid_launches += 1
        self.orders.append(ProgramOrder(grid, self._grid_launches, first=self.programs))
        self.programs += math.prod(grid)
        self._programs_of_launch = []
        self._stored_by = {}
        self._overwritten_with = {}  # per region: the overwriting atomic that wrote it (_count's racy), for messages
        self._atomic_by = {}
        self._loaded_by = {}
        self._lane_reads, self._lane_reads_now = {}, 0

    def _start_program(self, given: tuple) -> tuple:
        """The interpreter starts its next program, `given` in id order: the one the drawn order runs there starts
        instead, and is returned (for the interpreter to run)."""
        program = self.orders[-1].program(len(self._programs_of_launch), given) if self.orders else given
        self.program = program
        self._programs_of_launch.append(program)
        self._lane_of = {}  # this program's stores: per region, each element's lane (see _check_lanes)
        self._lane_reads_now += 1  # and its loads (see _check_lane_reads)
        self._swaps_failed = {}  # this program's: per region, the elements a swap failed once on (contended_swaps)
        self._watch()
        return program

    @property
    def program_names(self) -> list[tuple]:
        """(launch number, program id) of each program of every launch begun, launch after launch, each launch's in
        id order (not the drawn order they ran in), so that a program's number (`ordinal`, what a RegionMap names
        it by) is the same whatever order ran it."""
        return [(launch, program) for launch, order in enumerate(self.orders, 1) for program in order.in_id_order()]

    @property
    def ordinal(self) -> int:
        """The running program's number in program_names (what a RegionMap names it by)."""
        return self.orders[-1].ordinal(self.program) if self.orders else 0

    def barrier(self):
        """tl.debug_barrier: every lane's stores before it are seen by every lane after it, and every lane's loads
        before it are done before any lane's store after it."""
        self._lane_of = {}
        self._lane_reads_now += 1

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
    def _access(self, kind: str, ptrs, mask, value=None, racy: str = "", swap: bool = False):
        """Check and count one load, store (of `value`) or atomic, before it runs. Each lane moves the bytes of
        the pointer's element type, and all of them must lie inside its tensor. `racy` names an atomic the race
        detector treats as a store (an exchange, or a compare-and-swap outside a retry loop); `swap`: the atomic is a
        compare-and-swap (in a retry loop, its guess is checked: _check_atomic_race)."""
        self._accesses_since_watch += 1
        if value is not None:
            self._note_old_used((value,))
        if self._accesses_since_watch >= WATCH_EVERY:
            self._watch()
        data = np.asarray(ptrs.data)
        self._pointers = data  # this access's block of pointers, for a race's report (_race)
        active = np.ones(data.shape, dtype=bool) if mask is None else np.broadcast_to(
            np.asarray(mask.data, dtype=bool), data.shape)
        addrs = data[active].astype(np.int64)
        width = _lane_bytes(ptrs)
        values = None if value is None else np.broadcast_to(np.asarray(value.data), data.shape)[active]
        regions = self._regions_for(ptrs, active)
        self._count_lanes(kind, data, active, regions)
        if not regions:
            if addrs.size:
                self._stop(kind, None, addrs.size, addrs.size, [], data, width=width, bits=_offset_bits(ptrs))
            return
        owner = np.full(addrs.size, -1, dtype=np.int64)  # per lane: the index in `regions` of the tensor it is in
        for index, region in enumerate(regions):
            offsets = addrs - np.int64(region.start)
            inside = (owner < 0) & (offsets >= 0) & (offsets + width <= region.numel * region.itemsize)
            owner[inside] = index
        bad = owner < 0
        if not bad.any() and width > 1:
            self._aligned(kind, regions, owner, addrs, width)
        if bad.any():
            for index, region in enumerate(regions):  # on the map, the lanes of the failing access that were inside
                if region.map is not None and (owner == index).any():
                    elements = _spanned(addrs[owner == index] - np.int64(region.start), width, region.itemsize)
                    region.map.touch(kind, self.ordinal, np.unique(elements))
            region = min(regions, key=lambda r: _distance(r, int(addrs[bad][0])))  # the one its first bad lane missed
            offsets = addrs[bad] - np.int64(region.start)
            size = region.numel * region.itemsize
            outside = np.where((offsets >= 0) & (offsets < size), size, offsets)  # each lane's first byte outside
            first = sorted(set((outside // region.itemsize).tolist()))[:4]
            self._stop(kind, region, int(bad.sum()), addrs.size, first, data,
                       [r for r in regions if r is not region], width, _offset_bits(ptrs))
        positions = np.flatnonzero(active) + (hash(data.shape) % (1 << 20) << 32)  # each lane: its shape and place
        for index, region in enumerate(regions):
            lanes = owner == index if len(regions) > 1 else slice(None)
            mine = addrs[lanes]
            if mine.size:  # an atomic's lanes store values the lane check cannot know (see _check_lanes)
                self._lanes_in(kind, region, mine - np.int64(region.start), width, positions[lanes],
                               None if values is None or kind == "atomic" else values[lanes], swap)
                self._count(kind, region, mine - np.int64(region.start), width,
                            None if values is None else values[lanes], racy, swap)

    @staticmethod
    def _aligned(kind: str, regions, owner: np.ndarray, addrs: np.ndarray, width: int) -> None:
        """Every lane's value at an offset into its tensor that is a multiple of its size, as a GPU requires (its
        tensors start at 256-byte boundaries): one that is not faults there ("misaligned address"); numpy reads on."""
        for index, region in enumerate(regions):
            offsets = addrs[owner == index] - np.int64(region.start)
            off = offsets[offsets % width != 0]
            if off.size:
                raise Misaligned(
                    f"a {kind} of {width}-byte values at byte offsets into {region.describe()} that are not multiples "
                    f"of {width} (on {off.size} lanes, e.g. byte {int(off[0])}): a GPU accesses an N-byte value "
                    "only at an address that is a multiple of N and stops the kernel with \"misaligned address\" "
                    "otherwise, while the interpreter reads on. Reinterpret a tensor (a pointer cast to a wider type) "
                    "only at offsets that are multiples of the new type's size")

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
                    region.map.masking.add(self.ordinal)
                    offsets = off - np.int64(region.start)
                    inside = (offsets >= 0) & (offsets < region.numel * region.itemsize) \
                        & (offsets % region.itemsize == 0)
                    region.map.masked[offsets[inside] // region.itemsize] = True

    def _count(self, kind: str, region: Region, offsets: np.ndarray, width: int, values=None, racy: str = "",
               swap: bool = False):
        """Count one access's lanes in `region` (byte offsets of lanes `width` bytes wide; a store's `values` beside
        them), in all and for this program, in bytes."""
        ordinal = self.ordinal
        program = (self._grid_launches, self.program)
        if kind != "load" and region.given and self.input_store is None:
            self.input_store = (region, int(offsets.min()) // region.itemsize, self.program, *_kernel_line())
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
                self._overwritten_with[region] = racy
                self._check_write_race(region, touched, racy)
            self._check_atomic_race(region, touched, "atomic", swap, racy)
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
            note_load(self, region, distinct)
            return
        region.store_bytes += moved
        new = int(np.count_nonzero(~region.written[distinct]))
        _add(self.program_stores, program, region, new)
        self._note_store_segment(program, region, new)
        region.written[distinct] = True
        self._check_write_race(region, distinct, "", None if values is None or distinct.size != lanes.size
                               else values[first])
        self._check_overwrite_race(region, distinct)
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

    def input_store_message(self) -> str:
        """Why a store into an input is refused, where one ran; '' if none did."""
        if self.input_store is None:
            return ""
        region, element, program, where, code = self.input_store
        return (f"your kernel changed the input {region.label}: program {program} stored into {region.element(element)}"
                ". Only store into the output: an input is no scratch space, even where the kernel puts its values "
                "back before it ends (other programs may read it meanwhile, and memory borrowed there escapes the "
                f"puzzle's budgets)\n  at {where}: {code}")

    def _note_mask_fix(self):
        where, code = _kernel_line()
        self.mask_fixes.setdefault(where, code)

    def swap_note(self) -> str:
        """Where a compare-and-swap's lanes were made to fail once, a note that says so; '' elsewhere."""
        if not self.swaps_failed:
            return ""
        return (f"note: {self.swaps_failed} lane(s) of tl.atomic_cas failed once here, as they may on a GPU, where "
                "another program can update the element between your load and your swap; a retry loop must swap "
                "again until the value it compared is the value it found")

    def order_note(self) -> str:
        """Where a launch of several programs used the old values an atomic returned, a note that the grader ran its
        programs in a drawn order, not in id order; '' elsewhere."""
        if not self.atomic_old_used:
            return ""
        return ("note: your kernel used the values an atomic returned, which depend on the order programs reach it. "
                "The grader runs a launch's programs in an order it draws, not in id order, as a GPU keeps none: a "
                "ticket is no program id, and a sum read before every program added into it is partial")

    def mask_fix_note(self) -> str:
        """What to write instead of the masks the hook had to make boolean; '' if none."""
        if not self.mask_fixes:
            return ""
        lines = "".join(f"\n  at {where}: {code}" for where, code in self.mask_fixes.items())
        return f"note: {MASK_FIX_ADVICE}{lines}"

    def _stop(self, kind, region, lanes, active, offsets, data, others=(), width=0, bits=0):
        where, code = _kernel_line()
        steps = _steps(data)
        pitch = "" if region is None else wrong_pitch(region, steps, self._launch_sizes())
        self.violation = Violation(kind, region, lanes, active, offsets, self.program, where, code, tuple(data.shape),
                                   tuple(others), width, steps, pitch, bits)
        raise AccessViolation(self.violation.message())

    def _note_old_used(self, handles):
        """Note a launch of several programs that computes with, or stores, an atomic's old values (order_note)."""
        if self._atomic_by and not self.atomic_old_used and math.prod(self.orders[-1].grid) > 1:
            self.atomic_old_used = any(_ATOMIC_OLD in (getattr(h, "attr", None) or {}) for h in handles)

    def _tag(self, result, args):
        self._note_old_used(args)
        if _is_pointer(result):
            _carry_offset_bits(result, args)
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

    # -- read-modify-writes made of separate atomics (review 18) --------------------------------------------------
    def note_atomic_result(self, result, ptrs):
        """What an atomic returns carries the tensors it read (_READ_BACK), through every op made from it
        (carry_reads): an atomic that writes a value made from it is a read-modify-write (see read_back)."""
        attr = getattr(result, "attr", None)
        regions = self._regions_for(ptrs) if isinstance(attr, dict) else ()
        if regions:
            attr[_READ_BACK] = frozenset(regions)
            self.atomic_reads = True

    def carry_reads(self, result, handles):
        attr = getattr(result, "attr", None)
        found = [h.attr[_READ_BACK] for h in handles if _READ_BACK in (getattr(h, "attr", None) or ())]
        if found and isinstance(attr, dict):
            attr[_READ_BACK] = frozenset().union(*found)

    def overwriting_atomic(self, name: str, args) -> str:
        """'' for an atomic that only combines (add, max, ...); else what it is, for the race detector to treat it as
        a store. An exchange overwrites what it finds: a load, an add and an xchg is a read-modify-write that loses
        updates like a plain store. So does a compare-and-swap outside a `while` loop (when another program changed
        the element first, it fails, and nothing tries again), and an atomic that writes a value made from what an
        atomic read there (read_back)."""
        if name == "create_atomic_rmw" and "XCHG" in str(args[0]).upper():
            return "tl.atomic_xchg"
        if name == "create_atomic_cas" and not _in_while_loop():
            return "tl.atomic_cas outside a retry loop"
        if name == "create_atomic_rmw" and self.read_back(args[_WRITTEN_AT[name]], args[1]):
            return f"tl.atomic_{str(args[0]).split('.')[-1].lower()} of a value made from what an atomic read there"
        return ""

    def read_back(self, value, ptrs) -> bool:
        """The atomic about to write `value` through `ptrs` writes what an atomic read from the same tensor, changed:
        two atomics, with room between them for another program's update, which the second one then overwrites.
        (Only a compare-and-swap, which checks that the element still holds what it read, updates so safely.)"""
        read = (getattr(value, "attr", None) or {}).get(_READ_BACK) if self.atomic_reads else None
        return bool(read) and any(region in read for region in self._regions_for(ptrs))

    def _mark_live(self, written):
        """The tl.dot calls whose results reach the value this store writes did real work (a pointer or a mask
        computed from them is control, not a product put to use)."""
        dots = getattr(written, "attr", {}).get(_DOTS) if isinstance(getattr(written, "attr", None), dict) else None
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
        if index not in self.live_dots or index in self.unfed_dots:
            return False
        return self.shadows is None or self.shadows.moved_a_store(self.dot_calls[index][0])

    def dead_dot_work(self) -> int:
        """Multiply-adds of tl.dot calls whose results never reached a store."""
        return sum(work for index, (_, work, _, _) in enumerate(self.dot_calls) if not self.dot_is_live(index))


def _offset_bits(handle) -> int:
    return (getattr(handle, "attr", None) or {}).get(_OFFSET_BITS, 0)


def _carry_offset_bits(result, args) -> None:
    """Let a pointer keep the narrowest integer (8 or 16 bits) added to it on its way: such offsets wrap around at
    128 or 32768 (bounds_hint names it, whichever program of the launch ran out of bounds first)."""
    bits = [_offset_bits(arg) for arg in args if _offset_bits(arg)]
    for arg in args:
        data = getattr(arg, "data", None)
        if isinstance(data, np.ndarray) and data.dtype.kind == "i" and data.itemsize < 4 and not _is_pointer(arg):
            bits.append(8 * data.itemsize)
    if bits:
        result.attr[_OFFSET_BITS] = min(bits)
