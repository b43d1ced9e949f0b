"""Dot liveness by perturbation (grader.worker.instrument): each tl.dot's result is nudged in shadows carried beside
the real values through every op, and its work counts only where a store moves with the nudge."""

from __future__ import annotations

import itertools
import zlib

import numpy as np

from grader.worker.regions import _SHADOW


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


def _as_float32(handle):
    """A bfloat16 block (stored as uint16 bits) as the float32 numbers it holds; other blocks unchanged."""
    from triton import language as tl
    from triton.runtime import interpreter

    if getattr(handle.dtype, "name", "") != "bf16":
        return handle
    bits = np.asarray(handle.data).astype(np.uint32) << 16
    return interpreter.TensorHandle(bits.view(np.float32), tl.float32)


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
    one recomputation of each op on tl.dot-derived blocks per shadow it carries. Only a stored value counts: a
    pointer or a mask that moved, a load through a moved pointer, or a device print, is control, not a product put
    to use (`mask=d == tl.floor(d)` on tensor cores counting nonzeros, beside products on CUDA cores, is dead)."""

    ALL = "every tl.dot"
    # A third perturbation of every tl.dot's result, in proportion to it (so that products that are multiples of
    # one another, d1 - d2 / 2 with d2 = tl.dot(a, 2 b), cancel in it as in the values: ``_proportional``), which a
    # store must show beyond rounding, by SHOWN of its largest value (a cancellation leaves an ulp or so).
    PROPORTIONAL = "every tl.dot, in proportion"
    NUDGE_PROPORTIONAL, SHOWN = 2.0 ** -6, 2.0 ** -14
    # And one per kernel line of tl.dot, (PROPORTIONAL, line): a group of lines whose proportional nudges cancel
    # at every store (a pair `tl.dot(p, v) - tl.dot(p, 2 v) / 2` beside a live q k^T, on one line or on two) is
    # dead, though ALL and PROPORTIONAL move with the live line. Each store's moves per line are summed over every
    # group of lines (a linear nudge: a group's move is the sum of its lines'); a group is shown where its sum is
    # over SHOWN of the largest stored value and over GROUP_SHOWN of its largest line's move (16-bit rounding of
    # two separately nudged stores leaves about 2^-5 of a move; a live line's is all of it).
    GROUP_SHOWN = 0.125
    ALL_GROUPS_UP_TO = 8  # lines; beyond, groups of at most GROUP_SIZE lines
    GROUP_SIZE = 4
    # 2^-8, not 2^-10: a nudge under half a float16 ulp (2^-11) of a value cast to 16 bits before the next tl.dot
    # (puzzle 17's ds) is lost to rounding, and 2 seeds in 24 found puzzle 17's own solution's dq product "dead"
    # (case "dO x 100"); at 2^-8, 100 seeds of 100 pass, and exp(s - lse) stays well within LINEAR
    NUDGE, NUDGE_ABS = 2.0 ** -8, 0.25
    LINEAR = 0.5
    BACK = 0.6180339887  # the down nudge, as a share of the up one
    # Builder ops that reach memory through create_masked_load or create_masked_store, where the memory hook sees
    # the value stored (reaches); ops that write nothing (a device print, an assert: shadows end there); and ops
    # whose effect a shadow cannot follow (inline assembly, a descriptor's gather or scatter of slices): a
    # perturbation reaching one counts, never a false "dead".
    THROUGH_MEMORY = ("create_store", "create_load", "create_atomic_store", "create_atomic_load",
                      "create_descriptor_store", "create_descriptor_load")
    WRITES_NOTHING = ("create_print", "create_assert")
    OPAQUE = ("create_inline_asm", "create_descriptor_gather", "create_descriptor_scatter", "create_barrier",
              "create_atomic_poll")

    # The inputs' values, nudged where they are loaded (in proportion, so a zero stays zero): a tl.dot whose operands
    # do not move with them multiplies blocks that no input fills (a tl.dot of ones, (a == a), beside products on
    # CUDA cores, minus the constant it yields), and its work counts for nothing however its result is used. (An
    # operand computed from another tl.dot's result may hold still: a softmax over one key is 1 whatever the
    # scores; instrument._wrap_dot lets it pass where that tl.dot was fed.)
    INPUT = ("the inputs' values", 1)
    NUDGE_INPUT = 2.0 ** -5

    def __init__(self):
        self.moved: set = set()  # perturbations (kernel lines of tl.dot, or ALL) that moved a stored value
        self._patterns: dict[tuple, np.ndarray] = {}
        self.lines: list = []  # the kernel lines of tl.dot seen, in order
        self.shown: set[frozenset] = set()  # groups of those lines whose proportional nudges moved a store

    def moved_a_store(self, line) -> bool:
        return line in self.moved and self.ALL in self.moved and self.PROPORTIONAL in self.moved and \
            all(group in self.shown for group in self._groups() if line in group)

    def _groups(self):
        """The groups of tl.dot lines checked: every one, or those of up to GROUP_SIZE lines for many lines."""
        largest = len(self.lines) if len(self.lines) <= self.ALL_GROUPS_UP_TO else self.GROUP_SIZE
        for size in range(1, largest + 1):
            for group in itertools.combinations(self.lines, size):
                yield frozenset(group)

    def _new_line(self, line) -> None:
        """A tl.dot line seen for the first time: its nudge moved nothing before, so a group with it moved every
        store that the group without it moved."""
        if line in self.lines:
            return
        self.lines.append(line)
        self.shown |= {group | {line} for group in self.shown}

    def load(self, result, mask) -> None:
        """A load: its float lanes get the INPUT shadow (each nudged by NUDGE_INPUT of itself, up or down)."""
        real = _numbers(result.data, result.dtype)
        if real.dtype.kind != "f" or not real.size:
            return
        pattern = self._pattern(real.shape)
        nudged = real * (1.0 + self.NUDGE_INPUT * np.where(pattern < 0, -1.0, 1.0) * (0.5 + 0.5 * np.abs(pattern)))
        if mask is not None:
            nudged = np.where(np.broadcast_to(np.asarray(mask.data, dtype=bool), real.shape), nudged, real)
        if getattr(result.dtype, "name", "") == "bf16":  # back to bfloat16's bits, rounded to nearest even
            bits = nudged.astype(np.float32).view(np.uint32).astype(np.uint64)
            nudged = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        else:
            nudged = nudged.astype(np.asarray(result.data).dtype)
        self._keep(result, {**self.of(result), self.INPUT: nudged})

    def fed(self, operand) -> bool:
        """Whether a tl.dot's operand moves with the inputs' values (an operand of zeros is no work, and passes)."""
        return self.INPUT in self.of(operand) or not np.any(operand.data)

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
        if not keys or name in self.THROUGH_MEMORY or name in self.WRITES_NOTHING:
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
        for line in {key[0][1] for key in keys if self._per_line(key[0])}:
            self.shown |= {group for group in self._groups() if line in group}

    def dot(self, original, line, result, operands, rest, kwargs, own: bool):
        """The shadows of a tl.dot's result: those its operands carry, and (`own`: it did counted work) its own
        line's and ALL's, with its product perturbed."""
        from triton.runtime import interpreter

        a, b = operands
        accumulator = rest[0] if rest and isinstance(rest[0], interpreter.TensorHandle) else None
        inputs = (a, b, accumulator)
        keys = {key for handle in inputs for key in self.of(handle)}
        if own:
            self._new_line(line)
            keys |= {(base, sign) for base in (line, self.ALL) for sign in (1, -self.BACK)}
            keys |= {(self.PROPORTIONAL, 1), ((self.PROPORTIONAL, line), 1)}
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
            if own and key[0] in (self.PROPORTIONAL, (self.PROPORTIONAL, line)):
                base = np.zeros_like(data) if accumulator is None else np.asarray(swapped[2].data, dtype=np.float64)
                product = data.astype(np.float64) - base
                data = (data.astype(np.float64) + self._proportional(product)).astype(data.dtype)
            elif own and key[0] in (line, self.ALL):
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

    def _proportional(self, product: np.ndarray) -> np.ndarray:
        """The PROPORTIONAL nudge of a product: NUDGE_PROPORTIONAL of its magnitude and of its mean magnitude (for
        elements near 0), random in sign per element; the absolute NUDGE_ABS only for a product of zeros."""
        size = np.abs(product)
        level = float(size.mean()) if size.size else 0.0
        scale = self.NUDGE_PROPORTIONAL * (size + level) if level > 0 else self.NUDGE_ABS
        return self._pattern(product.shape) * scale

    def reaches(self, value, mask):
        """A store or atomic: note the perturbations that move the value it writes, on the lanes it writes."""
        shadows = self.of(value)
        if not shadows:
            return
        real = np.asarray(value.data)
        active = None if mask is None else np.asarray(mask.data, dtype=bool)
        lanes = None
        if not (active is None or real.shape == ()):
            lanes = np.broadcast_to(active, np.broadcast_shapes(real.shape, active.shape))
        self._group_moves(shadows, real, lanes, value.dtype)
        for base in {key[0] for key in shadows if not self._per_line(key[0])} - self.moved - {self.INPUT[0]}:
            up, down = (shadows.get((base, sign), real) for sign in (1, -self.BACK))
            if lanes is not None:
                up, down, written = (np.broadcast_to(v, lanes.shape)[lanes] for v in (up, down, real))
            else:
                written = real
            moves = self._shown(up, written, value.dtype) if base == self.PROPORTIONAL else \
                self._moves(up, down, written, value.dtype)
            if moves:
                self.moved.add(base)

    def _per_line(self, base) -> bool:
        return isinstance(base, tuple) and base[0] == self.PROPORTIONAL

    def _group_moves(self, shadows: dict, real, lanes, dtype) -> None:
        """Note the groups of tl.dot lines whose summed proportional moves show in this store (see GROUP_SHOWN)."""
        lines = {key[0][1] for key in shadows if self._per_line(key[0])}
        if not lines:
            return
        written = _numbers(real if lanes is None else np.broadcast_to(real, lanes.shape)[lanes], dtype)
        moves = {}
        for line in lines:
            moved = shadows[((self.PROPORTIONAL, line), 1)]
            moved = _numbers(moved if lanes is None else np.broadcast_to(moved, lanes.shape)[lanes], dtype)
            if written.dtype.kind != "f":  # an integer value stored moved: the line reaches memory, in any group
                if not _same_bits(moved, written):
                    self.shown |= {group for group in self._groups() if line in group}
                continue
            finite = np.isfinite(moved) & np.isfinite(written)
            moves[line] = np.where(finite, moved - np.where(finite, written, 0.0), 0.0)
        if not moves or not written.size:
            return
        largest = float(np.abs(written[np.isfinite(written)]).max(initial=0.0))
        for group in self._groups():
            present = [moves[line] for line in group if line in moves]
            if group in self.shown or not present:
                continue
            total = float(np.abs(np.sum(present, axis=0)).max())
            biggest = max(float(np.abs(move).max()) for move in present)
            if total > self.SHOWN * largest and total > self.GROUP_SHOWN * biggest:
                self.shown.add(group)

    def _shown(self, moved, real, dtype) -> bool:
        """Whether a stored block moved beyond rounding: integers by any bit, floats by SHOWN of the largest."""
        moved, real = _numbers(moved, dtype), _numbers(real, dtype)
        if real.dtype.kind != "f":
            return not _same_bits(moved, real)
        finite = np.isfinite(moved) & np.isfinite(real)
        if not finite.any():
            return not _same_bits(moved, real)
        largest = float(np.abs(real[finite]).max())
        return float(np.abs(moved[finite] - real[finite]).max()) > self.SHOWN * largest

    def _moves(self, up, down, real, dtype) -> bool:
        """Whether a stored block moved with the nudge: integers by any bit; floats (bfloat16 read
        as the numbers it holds) in opposite directions for the two nudges, on the lanes where all are finite."""
        up, down, real = (_numbers(v, dtype) for v in (up, down, real))
        if real.dtype.kind != "f":
            return not (_same_bits(up, real) and _same_bits(down, real))
        finite = np.isfinite(up) & np.isfinite(down) & np.isfinite(real)
        rise, fall = up[finite] - real[finite], (down[finite] - real[finite]) / self.BACK
        spread = float(np.abs(rise - fall).sum())
        return spread > 0 and float(np.abs(rise + fall).sum()) < self.LINEAR * spread
