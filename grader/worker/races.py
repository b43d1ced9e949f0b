"""Races, one concern of the access record (grader.worker.recorder.Recorder inherits these checks): two programs of
one launch that touch one element without atomics (a store over another's store, a load of another's store, a store
over what another loaded), a plain access beside other programs' atomics, and two lanes of one program (threads on
a GPU, one after another in the interpreter) that store one element, read what the other stored or updated
atomically, or store over what the other loaded, with no barrier between."""

from __future__ import annotations

import numpy as np

from grader.worker.frames import _in_while_loop, _kernel_line
from grader.worker.regions import Race, Region, _holds, _note_first_and_last, _steps, wrong_pitch


class RaceChecks:
    """The race checks of a Recorder (it holds the state they read: _stored_by, _atomic_by, _loaded_by, _lane_of,
    _programs_of_launch, race, program, _pointers, launches)."""

    def _check_lanes(self, kind: str, region: Region, elements: np.ndarray, lanes: np.ndarray, values):
        """Races inside one program, between its lanes (threads on a GPU, one after another here), with no
        tl.debug_barrier between: two lanes of one tl.store, or of two, writing one element with different values
        (which lands last is undefined), and a load of an element that another lane of this program stored or
        updated with an atomic (the load may run first). Lanes that all store the same bits (a broadcast) leave the
        element to every lane (-2). An atomic (`kind` "atomic") stores values unknown here: its element is its
        lane's (ATOMIC - lane), or, where several lanes updated it or it went over another lane's store, no lane's
        (SEVERAL): a later load of it by any lane races (an atomic of another lane may not have landed yet). An
        atomic reads too: over another lane's plain store (or a broadcast one) it races as a load would (the store
        may land after it and wipe the update, or before); atomics of several lanes on one element are the
        hardware's to order."""
        if self.race is not None and region.map is None:
            return
        known, by = self._lane_of.get(region, (np.empty(0, np.int64), np.empty(0, np.int64)))  # sorted elements
        me = len(self._programs_of_launch) - 1
        at = np.minimum(np.searchsorted(known, elements), max(known.size - 1, 0))
        hit = (known[at] == elements) if known.size else np.zeros(elements.size, dtype=bool)
        owner = by[at] if known.size else np.full(elements.size, -1, dtype=np.int64)
        plain = hit & (owner >= 0) & (owner != lanes)  # another lane of this program stored it, alone
        by_atomic = hit & (owner <= ATOMIC) & (ATOMIC - owner != lanes)  # another lane updated it atomically, alone
        earlier = plain | by_atomic | (hit & (owner == SEVERAL))
        if kind == "atomic":
            clash = np.flatnonzero(plain | (hit & (owner == -2)))
            if clash.size and self.race is None:
                self._race("lane atomic", region, int(elements[clash[0]]), me)
            self._lane_of[region] = _owners_after_atomic(known, by, elements, lanes, earlier | (hit & (owner == -2)))
            return
        if kind == "load":
            clash = np.flatnonzero(earlier)
            if clash.size and self.race is None:
                self._race("lane read", region, int(elements[clash[0]]), me)
            return
        lanes = lanes.copy()
        if values is not None and np.unique(elements).size < elements.size:
            order = np.argsort(elements, kind="stable")
            ordered, bits = elements[order], _bits(np.asarray(values)[order])
            clash = np.flatnonzero((ordered[1:] == ordered[:-1]) & (bits[1:] != bits[:-1]))
            if clash.size and self.race is None:
                self._race("lane write", region, int(ordered[clash[0]]), me)
            lanes[np.isin(elements, ordered[1:][ordered[1:] == ordered[:-1]])] = -2
        if values is not None and earlier.any() and self.race is None:  # over another lane's earlier store
            other = np.flatnonzero(earlier)
            other = other[~_holds(region, elements[other], np.asarray(values)[other])]
            if other.size:
                self._race("lane write", region, int(elements[other[0]]), me)
        # the last store of each element names its lane: newest first, np.unique keeps the first of each
        elements, first = np.unique(np.concatenate([elements[::-1], known]), return_index=True)
        self._lane_of[region] = (elements, np.concatenate([lanes[::-1], by])[first])

    def _lanes_in(self, kind: str, region: Region, offsets: np.ndarray, width: int, lanes: np.ndarray, values,
                  swap: bool = False):
        """_check_lanes and _check_lane_reads on the elements these lanes touch, lanes of any width (an int64 or a
        uint8 view of a float32 tensor too; their values are then not compared). For _check_lane_reads the lanes
        narrower than an element that share one are one lane (the first of them): each reads and writes its own
        bytes. `swap`: the access is a compare-and-swap (see _check_lane_reads)."""
        if width == region.itemsize:
            self._check_lanes(kind, region, offsets // width, lanes, values)
            self._check_lane_reads(kind, region, offsets // width, lanes, values, swap)
            return
        per = max(1, -(-width // region.itemsize))
        elements = (offsets // region.itemsize)[:, None] + np.arange(per)
        inside = elements < region.numel
        elements, lanes = elements[inside], np.repeat(lanes, per).reshape(elements.shape)[inside]
        self._check_lanes(kind, region, elements, lanes, None)
        self._check_lane_reads(kind, region, elements, _first_lanes(elements, lanes) if width < region.itemsize
                               else lanes, None, swap)

    def _check_lane_reads(self, kind: str, region: Region, elements: np.ndarray, lanes: np.ndarray, values,
                          swap: bool):
        """A write after a read inside one program: a store (or an atomic) by one lane into an element that another
        lane of this program loaded since the last tl.debug_barrier races (on a GPU the lanes are threads, and
        the store may land before the other thread's load, which then reads the new value; the interpreter runs
        every lane of a load before the store). A store of the bits the element holds changes nothing the load
        could see, and a compare-and-swap in a retry loop checks its guess (as between programs,
        _check_atomic_race). Loads are noted per element, in tensors the kernel may store into (a store into an
        input is refused anyway): the lane that loaded it, or SEVERAL; the notes of an earlier program or before
        a barrier are stale (Recorder._lane_reads_now)."""
        if region.given or self.race is not None:
            return
        if kind == "load":
            _note_lane_reads(self._lane_reads, region, elements, lanes, self._lane_reads_now)
            return
        noted = self._lane_reads.get(region)
        if noted is None:
            return
        now, by = noted
        clash = np.flatnonzero((now[elements] == self._lane_reads_now) & (by[elements] != lanes))
        if clash.size and values is not None:
            clash = clash[~_holds(region, elements[clash], np.asarray(values)[clash])]
        if clash.size and not (kind == "atomic" and swap and _in_while_loop()):
            self._race("lane overwrite", region, int(elements[clash[0]]), len(self._programs_of_launch) - 1,
                       via="an atomic" if kind == "atomic" else "")

    def _check_write_race(self, region: Region, elements: np.ndarray, via: str, values=None):
        """A store over another program's store in this launch races: each element is written by one program.
        Two programs storing the same bytes race too (the GPU would do that work twice, and the interpreter's
        order is no GPU's); the report says so. `via` names an atomic that overwrites (see _access)."""
        owners = self._stored_by.get(region)
        if owners is None:
            owners = self._stored_by[region] = np.full(region.numel, -1, dtype=np.int64)
        me = len(self._programs_of_launch) - 1
        if self._yields() or region.map is not None:
            before = owners[elements]
            clash = np.flatnonzero((before >= 0) & (before != me))
            if clash.size and region.map is not None:
                region.map.raced[elements[clash]] = True
            if clash.size and self._yields():
                same = values is not None and bool(_holds(region, elements[clash[:1]], values[clash[:1]])[0])
                whole = same and not via and clash.size == elements.size and bool((before == before[0]).all()) and \
                    int(np.count_nonzero(owners == before[0])) == elements.size
                overlap = _overlap(region, owners, int(before[clash[0]]), elements) if same and not whole else ()
                self._race("write", region, int(elements[clash[0]]), int(before[clash[0]]), via, same, whole,
                           overlap=overlap)
        owners[elements] = me

    # -- races between atomics and plain accesses (issue 26, class 4) -----------------------------------------------
    def _check_atomic_race(self, region: Region, elements: np.ndarray, kind: str, swap: bool = False,
                           racy: str = ""):
        """Atomics that add race with nothing but plain accesses: a plain store of an element another program of
        the launch updates atomically (before or after it: the store may land between the updates and wipe them),
        and a plain load of an element another program updates atomically (before it: the load may see any partial
        sum; or after it, in the interpreter's order: the GPU may run the update first), unless it is part of a
        compare-and-swap retry loop (its guess is checked by the swap). `kind`: this access, "load", "store" or
        "atomic" (`swap`: a compare-and-swap; no other atomic is spared by a retry loop; `racy`: an atomic that
        overwrites, see Recorder.overwriting_atomic, which races with other programs' atomics too, whichever ran
        first). Plain loads are noted in every tensor, inputs too (see _note_load)."""
        me = len(self._programs_of_launch) - 1
        updated = self._atomic_by.get(region)
        if kind == "atomic":
            if updated is None:
                updated = self._atomic_by[region] = np.full((2, region.numel), -1, dtype=np.int64)
            owners = self._stored_by.get(region)
            if owners is not None and (self._yields() or region.map is not None):
                before = owners[elements]
                clash = np.flatnonzero((before >= 0) & (before != me))
                self._atomic_clash(region, elements, clash, before, "write", self._overwritten_with.get(region, ""))
            if racy and (self._yields() or region.map is not None):  # over other programs' updates, done before it
                other = np.where(updated[0, elements] != me, updated[0, elements], updated[1, elements])
                self._atomic_clash(region, elements, np.flatnonzero((other >= 0) & (other != me)), other, "write", racy)
            loaded = self._loaded_by.get(region)
            if loaded is not None and (self.race is None or region.map is not None):
                other = np.where(loaded[0, elements] != me, loaded[0, elements], loaded[1, elements])
                clash = np.flatnonzero((other >= 0) & (other != me))
                if clash.size and not (swap and _in_while_loop()):
                    self._atomic_clash(region, elements, clash, other, "read", via="a later atomic")
            _note_first_and_last(updated, elements, me)
            return
        if kind == "load":
            self._note_load(region, elements, me)
        if updated is None or (self.race is not None and region.map is None and
                               (kind == "load" or not self._yields())):
            return
        first, last = updated[0, elements], updated[1, elements]
        other = np.where(first != me, first, last)
        clash = np.flatnonzero((other >= 0) & (other != me))
        if clash.size and kind == "load" and _in_while_loop(guess=True):
            return
        self._atomic_clash(region, elements, clash, other, "read" if kind == "load" else "write")

    def contended_swaps(self, ptrs) -> np.ndarray | None:
        """The lanes of a compare-and-swap (in a retry loop) that fail once, or None: those whose element another
        program of the launch updated with an atomic, the first time this program swaps it. On a GPU that program
        may update it between this one's load and its swap; the interpreter runs programs one after another, so
        no swap would ever fail there, and a loop that gives up after a failure would pass (gpu_ops.swap_failing)."""
        region = self._classify(ptrs)
        updated = None if region is None else self._atomic_by.get(region)
        if updated is None:
            return None
        offsets = np.asarray(ptrs.data).astype(np.int64) - np.int64(region.start)
        inside = (offsets >= 0) & (offsets < region.numel * region.itemsize)
        elements = np.where(inside, offsets // region.itemsize, 0)
        me = len(self._programs_of_launch) - 1
        other = np.where(updated[0, elements] != me, updated[0, elements], updated[1, elements])
        failed = self._swaps_failed.setdefault(region, set())
        fresh = np.vectorize(lambda e: e not in failed, otypes=[bool])(elements) if failed else True
        lanes = inside & (other >= 0) & (other != me) & fresh
        failed.update(elements[lanes].tolist())
        self.swaps_failed += int(np.count_nonzero(lanes))
        return lanes if lanes.any() else None

    def _note_load(self, region: Region, elements: np.ndarray, me: int):
        """Note a plain load's elements (the first and the last program of the launch that loaded each), in every
        tensor, inputs too: a later atomic (_check_atomic_race) or plain store (_check_overwrite_race) of another
        program races with it. Once a race is found and no map is kept, nothing more is noted."""
        if self.race is not None and region.map is None:
            return
        loaded = self._loaded_by.get(region)
        if loaded is None:
            loaded = self._loaded_by[region] = np.full((2, region.numel), -1, dtype=np.int32)  # 8 bytes an element
        _note_first_and_last(loaded, elements, me)

    def _check_overwrite_race(self, region: Region, elements: np.ndarray):
        """A plain store of an element another program of the launch loaded races (a write after another program's
        read): on a GPU the programs run at the same time, so the load may see this store, whichever ran first in
        the interpreter. A tile saved in registers, overwritten and put back later is no exception: the other
        program may read it in between. (A load after another program's store is _check_read_race's.)"""
        loaded = self._loaded_by.get(region)
        if loaded is None or (self.race is not None and region.map is None):
            return
        me = len(self._programs_of_launch) - 1
        first, last = loaded[0, elements], loaded[1, elements]
        other = np.where(first != me, first, last)
        clash = np.flatnonzero((other >= 0) & (other != me))
        if clash.size and region.map is not None:
            region.map.raced[elements[clash]] = True
        if clash.size and self.race is None:
            self._race("overwrite", region, int(elements[clash[0]]), int(other[clash[0]]))

    def _yields(self) -> bool:
        """Whether a write race found now replaces the race found so far (none, or one of a read)."""
        return self.race is None or self.race.kind in ("read", "overwrite", "lane atomic", "lane overwrite")

    def _atomic_clash(self, region, elements, clash, other, kind, via=""):
        if not clash.size:
            return
        if region.map is not None:
            region.map.raced[elements[clash]] = True
        if self.race is None or (kind == "write" and self._yields()):
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

    def _race(self, kind, region, element, first, via="", same=False, whole=False, atomic=False, overlap=()):
        where, code = _kernel_line()
        pitch = "" if atomic or self._pointers is None else \
            wrong_pitch(region, _steps(self._pointers), self._launch_sizes())
        self.race = Race(kind, region, element, self._programs_of_launch[first], self.program, where, code, via,
                         same, whole, atomic, pitch, overlap)

    def _launch_sizes(self) -> dict:
        """The integer arguments of the running launch by name (N0, T, B1, ...), which name a distance in a report."""
        bound = self.launches[-1].bound if self.launches else {}
        return {name: int(value) for name, value in bound.items()
                if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value > 0}


# in Recorder._lane_of: an element several lanes of the program updated with atomics (see _check_lanes); in
# Recorder._lane_reads: one several lanes loaded (see _check_lane_reads)
SEVERAL = -3
ATOMIC = -4  # in Recorder._lane_of, ATOMIC - lane: an element that one lane alone updated with an atomic


def _owners_after_atomic(known, by, elements, lanes, shared) -> tuple[np.ndarray, np.ndarray]:
    """_lane_of's (elements, lanes) once an atomic's lanes updated `elements`: each ATOMIC - its lane, or SEVERAL
    where it is `shared` (another lane stored or updated it before) or two lanes of this atomic update it."""
    order = np.argsort(elements, kind="stable")
    ordered, lane = elements[order], lanes[order]
    twice = ordered[1:][(ordered[1:] == ordered[:-1]) & (lane[1:] != lane[:-1])]
    lanes = np.where(shared | np.isin(elements, twice), SEVERAL, ATOMIC - lanes)
    elements, first = np.unique(np.concatenate([elements[::-1], known]), return_index=True)
    return elements, np.concatenate([lanes[::-1], by])[first]


def _note_lane_reads(notes: dict, region: Region, elements: np.ndarray, lanes: np.ndarray, now: int):
    """Note a plain load's elements in `notes` (Recorder._lane_reads): per element of `region`, the pass it was
    loaded in (`now`) and the lane that loaded it, or SEVERAL where lanes of this pass differ (this load's too)."""
    noted = notes.get(region)
    if noted is None:
        noted = notes[region] = (np.full(region.numel, -1, dtype=np.int32), np.zeros(region.numel, dtype=np.int64))
    when, by = noted
    lanes = np.where((when[elements] != now) | (by[elements] == lanes), lanes, SEVERAL)
    when[elements], by[elements] = now, lanes
    by[elements[by[elements] != lanes]] = SEVERAL  # an element two lanes of this load read: one kept the other's


def _first_lanes(elements: np.ndarray, lanes: np.ndarray) -> np.ndarray:
    """Each lane's name as the first (lowest) lane of this access that touches its element."""
    unique, index = np.unique(elements, return_inverse=True)
    first = np.full(unique.size, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, index.ravel(), lanes)
    return first[index.ravel()]


def _bits(values: np.ndarray) -> np.ndarray:
    """Each value's bit pattern as an unsigned integer (NaNs with one payload are equal, 0.0 and -0.0 are not)."""
    values = np.ascontiguousarray(values)
    return values.view(f"u{values.itemsize}") if values.itemsize in (1, 2, 4, 8) else values


def _overlap(region, owners: np.ndarray, first: int, elements: np.ndarray) -> tuple:
    """For a 1-D tensor whose elements this store writes again with the bytes program `first` stored: (where that
    program's block starts, where this store's block starts, its width), in elements, where both blocks are runs of
    consecutive elements and this one starts inside the other; else ()."""
    if len(region.shape) > 1 or not elements.size:
        return ()
    theirs = np.flatnonzero(owners == first)
    mine, width = int(elements.min()), int(elements.max()) - int(elements.min()) + 1
    if not theirs.size or width != elements.size or int(theirs[-1]) - int(theirs[0]) + 1 != theirs.size:
        return ()
    start = int(theirs[0])
    return (start, mine, width) if start < mine <= int(theirs[-1]) else ()
