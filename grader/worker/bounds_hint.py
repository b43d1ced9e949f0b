"""The hint beside an out-of-bounds access (``grader.worker.execute``): its likeliest cause, read from what the
interpreter's hook saw (the violation's tensor, offsets, lanes' widths and steps, the line's code) and the puzzle's
spec (each tensor's dimension names). A descriptor that reaches outside its tensor, a lane wider than an element, an
offset that wrapped around, a negative one, a row stride the tensor does not have, a tile masked in one dimension, a
mask on another tensor's size, `<=` where `<` belongs: the first that fits is said.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import torch

from grader.course.cases import spec_args, spec_outputs
from grader.course.registry import Puzzle


def _dims_of(puzzle: Puzzle, label: str) -> tuple[str, ...]:
    """The spec's dimension names of the tensor called `label` (an input or an output), or ()."""
    args = spec_args(puzzle.spec) + [replace(a, name=n) for a, n in
                                     zip(spec_outputs(puzzle.spec), puzzle.outputs)]
    return next((tuple(a.dims) for a in args if a.name == label and a.dims), ())


def bounds_hint(violation, puzzle: Puzzle, sizes: dict) -> str:
    """The likeliest cause of an out-of-bounds access, from what the hook saw (`sizes`: the case's dimensions)."""
    region, offsets = violation.region, violation.offsets
    descriptor = bool(re.search(r"\w\.(load|store)\(\s*\[", violation.code)) and "tl.load" not in violation.code
    # a descriptor named for another tensor than the one its lanes landed nearest (a_desc's rows, at a wrong
    # stride, run past a into b: which tensor lies beside a is the allocator's choice)
    named = re.search(r"(\w+?)_desc\w*\.(load|store)\(", violation.code)
    if descriptor and (region is None or (named and not region.label.startswith(named[1]))):
        return ("this tensor descriptor reaches outside its tensor: check the strides this tensor descriptor was made "
                "with (strides=[row length, 1], in elements; shape=[rows, row length]) and the offsets of its load")
    if region is None:
        return "a pointer was built from something other than a kernel argument plus offsets"
    if violation.wider:
        return (f"each lane moves {violation.width} bytes through its pointer, and {region.label} holds "
                f"{region.itemsize}-byte elements: a lane past the end by part of its width is out of bounds. Mask "
                f"by the lane's last element, or load through a pointer of {region.label}'s own type")
    bits = violation.offset_bits  # an int8 or int16 offset: it wraps into [-2^(bits-1), 0), in whichever program
    wrapped = bits if bits and offsets and -2 ** (bits - 1) <= min(offsets) < 0 else \
        next((bits for bits in (8, 16, 32) if offsets and min(offsets) == -2 ** (bits - 1)), None)
    if wrapped and region.numel > 2 ** (wrapped - 1):
        return (f"the offsets wrapped around at {2 ** (wrapped - 1)}: an int{wrapped} offset overflowed, and "
                f"{region.label} has {region.numel} elements. Keep offsets int32 (int64 past 2^31 elements), not "
                f".to(tl.int{wrapped})")
    if offsets and min(offsets) < 0:
        return "a negative offset: check where the block starts"
    dims = _dims_of(puzzle, region.label)
    stride = _wrong_stride(violation, dims, sizes, descriptor)
    if stride:
        return stride
    if len(violation.shape) >= 2:
        rows, cols = dims[-2:] if len(dims) >= 2 else ("the number of rows", "the row length")
        gather = any(a.dtype in (torch.int32, torch.int64) for a in spec_args(puzzle.spec))
        return (f"a lane of this tile lies outside {region.label}: mask every dimension, e.g. "
                f"(rows[:, None] < {rows}) & (cols[None, :] < {cols}) for its [{rows}, {cols}] layout; a column "
                "past the end of a row must be masked even where it would land inside the next row"
                + ("; and where the rows come from an index array (a gather), check that you index by the loaded "
                   "index (node_feat at col_idx[s]), not by the slot s itself" if gather else ""))
    named = set(re.findall(r"<=?\s*(\w+)", violation.code))
    others = sorted(n for n in named if n in _all_dims(puzzle) and n not in dims)
    if others and dims and dims[0] not in named:
        return (f"this mask compares with {others[0]}, but {region.label} holds {dims[0]} elements "
                f"([{', '.join(dims)}]): mask each tensor by its own size, {dims[0]}")
    if offsets and offsets[0] == region.numel and "mask" in violation.code:
        return (f"the mask lets offset {region.numel} through, one past the end of "
                f"{region.label} ({region.numel} elements: 0..{region.numel - 1}): "
                "compare with `<`, not `<=`")
    return (f"lanes past the end of {region.label} were not masked off: give this {violation.kind} a mask "
            "that is False for them (e.g. offsets < size)")


def _all_dims(puzzle: Puzzle) -> set[str]:
    """Every dimension name of the puzzle's spec (N0, T, ...)."""
    return {d for a in spec_args(puzzle.spec) + spec_outputs(puzzle.spec) for d in (a.dims or ()) if d.isidentifier()}


def _wrong_stride(violation, dims: tuple[str, ...], sizes: dict, descriptor: bool) -> str | None:
    """Where neighbouring lanes along an axis of the block lie a distance apart that is no multiple of the tensor's
    stride at that scale (row r at r * (T + 1) where it starts at r * T): the mask can be right and the offsets
    still run past the end. None when every step fits the tensor's layout."""
    region = violation.region
    shape = region.shape if len(region.shape) >= 2 and int(np.prod(region.shape)) == region.numel else ()
    if not shape:
        return None
    strides = [int(np.prod(shape[axis + 1:])) for axis in range(len(shape))]  # in elements, largest first
    for step in violation.steps:
        step = abs(step) // region.itemsize
        fits = [s for s in strides if s <= step]
        if step and fits and step % fits[0]:
            names = [str(sizes.get(d, d)) for d in dims] if len(dims) == len(shape) else [str(n) for n in shape]
            layout = f"[{', '.join(dims)}] = [{', '.join(names)}]" if len(dims) == len(shape) else str(list(shape))
            fix = ("check the strides this tensor descriptor was made with: strides=[row length, 1], in elements"
                   if descriptor else "check the stride you multiply the row index by (the mask can be right and "
                   "the offsets still run past the end)")
            return (f"neighbouring lanes of this block are {step} elements apart, but {region.label} ({layout}, "
                    f"row-major) has its rows {fits[0]} apart: {fix}")
    # a distance that is a multiple of the row length, but not the row length (j * N1 where the rows are N0 = 1 long)
    return f"{violation.pitch} (the mask can be right and the offsets still run past the end)" if violation.pitch \
        else None
