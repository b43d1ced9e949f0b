"""Recording a case's access maps, in the worker: run the case under the interpreter hook
(``instrument.recording(maps=True)`` keeps, per tensor, who read and wrote each element) and turn that record into
``grader.map_transfer.Maps``, plain numpy arrays of at most ROWS x COLUMNS cells per tensor, with a line in words
per tensor. ``grader.show.memory_map`` draws them.
"""

from __future__ import annotations

import numpy as np

from grader.map_transfer import COLUMNS, NEEDS_INTERPRETER, ROWS, ROWS_1D, Maps, Picture

# -- from a record to pictures ------------------------------------------------------------------------------

def maps_of(recorder, outputs: tuple[str, ...] = ("z",)) -> Maps:
    """The pictures of every tensor a recorder (kept with maps=True) saw; `outputs` names the puzzle's outputs,
    whose elements must all be stored."""
    launches = {launch for launch, _ in recorder.program_names}
    programs = [_program_name(pid) + (f" of launch {launch}" if len(launches) > 1 else "")
                for launch, pid in recorder.program_names]
    pictures = [picture_of(region, programs, outputs) for region in recorder.regions if region.map is not None]
    return Maps(programs, pictures)


def _program_name(pid: tuple) -> str:
    return "(" + ",".join(str(int(i)) for i in pid) + ")"


def _role(region, outputs) -> str:
    if region.given:
        return "input"
    if region.label in outputs or region.map.writes.any():
        return "output"
    return "other"


def picture_of(region, programs: list[str], outputs: tuple[str, ...] = ("z",)) -> Picture:
    """One tensor's picture (grader.worker.instrument.Region with a map)."""
    record = region.map
    role = _role(region, outputs)
    owner = np.where(record.writer >= 0, record.writer, record.reader)
    unwritten = record.writes == 0 if role == "output" else np.zeros(region.numel, bool)
    rows, cols, cell = _layout(region.shape, region.numel)

    def blocks(values, fill):
        return _blocks(values, rows, cols, cell, fill)

    present = blocks(np.ones(region.numel, bool), False).any(axis=1)
    grid = _grid(region.numel, rows, cols, cell)
    owners = _mode(blocks(owner, -1))
    picture = Picture(
        region.label, tuple(region.shape), role, cell, present.reshape(grid), owners.reshape(grid),
        blocks(record.reads, 0).max(axis=1).reshape(grid), blocks(record.writes, 0).max(axis=1).reshape(grid),
        blocks(record.masked, False).any(axis=1).reshape(grid), blocks(record.raced, False).any(axis=1).reshape(grid),
        blocks(unwritten, False).any(axis=1).reshape(grid))
    picture.summary = _summary(region, role, owner, unwritten, programs)
    return picture


def _layout(shape: tuple, numel: int) -> tuple[int, int, tuple[int, int]]:
    """(rows, columns) of the element grid, and the elements per cell: a 1-D tensor longer than COLUMNS is one
    long row cut into consecutive chunks, wrapped into up to ROWS_1D rows of COLUMNS cells."""
    if len(shape) >= 2:
        cols = int(shape[-1])
        rows = numel // cols if cols else 0
        return rows, cols, (max(1, -(-rows // ROWS)), max(1, -(-cols // COLUMNS)))
    if numel <= COLUMNS:
        return 1, numel, (1, 1)
    return 1, numel, (1, -(-numel // (COLUMNS * ROWS_1D)))


def _grid(numel: int, rows: int, cols: int, cell: tuple[int, int]) -> tuple[int, int]:
    """Cells down and across."""
    if rows == 1 and cols > COLUMNS:  # a wrapped 1-D tensor
        chunks = -(-numel // cell[1])
        return -(-chunks // COLUMNS), COLUMNS
    return max(1, -(-rows // cell[0])), max(1, -(-cols // cell[1]))


def _blocks(values: np.ndarray, rows: int, cols: int, cell: tuple[int, int], fill) -> np.ndarray:
    """`values` (one per element) as (cells, elements per cell), cells in reading order; padding is `fill`."""
    down, across = _grid(values.size, rows, cols, cell)
    if rows == 1 and cols > COLUMNS:  # consecutive chunks, row after row
        padded = np.full(down * across * cell[1], fill, dtype=values.dtype)
        padded[:values.size] = values
        return padded.reshape(down * across, cell[1])
    padded = np.full((down * cell[0], across * cell[1]), fill, dtype=values.dtype)
    if values.size:
        padded[:rows, :cols] = values.reshape(rows, cols)
    return padded.reshape(down, cell[0], across, cell[1]).transpose(0, 2, 1, 3).reshape(down * across, -1)


def _mode(owners: np.ndarray) -> np.ndarray:
    """Per row, the most common value other than -1 (the smallest on a tie), or -1: sorted, without a loop."""
    result = np.full(owners.shape[0], -1, dtype=np.int32)
    rows, values = np.nonzero(owners >= 0)[0], owners[owners >= 0].astype(np.int64)
    if rows.size == 0:
        return result
    span = int(values.max()) + 1
    keys, counts = np.unique(rows.astype(np.int64) * span + values, return_counts=True)
    key_rows, key_values = keys // span, keys % span
    order = np.lexsort((key_values, -counts, key_rows))  # per row: the largest count first, then the smallest value
    first = np.r_[True, np.diff(key_rows[order]) != 0]
    result[key_rows[order][first]] = key_values[order][first]
    return result


# -- the summary line -------------------------------------------------------------------------------------

def _span(region, indices: np.ndarray) -> str:
    """'x[96..127]' or 'z[0..15, 16..31]': the box that holds these elements (sorted flat indices), with their
    count when they do not fill it."""
    shape = region.shape if len(region.shape) > 1 and int(np.prod(region.shape)) == region.numel else (region.numel,)
    coordinates = np.unravel_index(indices, shape)
    sides = [(int(c.min()), int(c.max())) for c in coordinates]
    box = ", ".join(str(low) if low == high else f"{low}..{high}" for low, high in sides)
    filled = indices.size == int(np.prod([high - low + 1 for low, high in sides]))
    return f"{region.label}[{box}]" if filled else f"{indices.size} elements in {region.label}[{box}]"


def _runs(flags: np.ndarray) -> list[np.ndarray]:
    """The runs of consecutive True indices."""
    where = np.flatnonzero(flags)
    return np.split(where, np.flatnonzero(np.diff(where) != 1) + 1) if where.size else []


def _summary(region, role: str, owner: np.ndarray, unwritten: np.ndarray, programs: list[str]) -> str:
    """One line in words: what the first programs read or wrote (all of it, also where programs overlap), how many
    did, the most reads and writes of one element, masked-off lanes, races and elements never written."""
    record = region.map
    writes = bool(record.writers)
    verb, first, touched = ("wrote", record.first_writes, record.writers) if writes else \
        ("read", record.first_reads, record.readers)
    parts = [f"program {programs[p]} {verb} {_span(region, np.flatnonzero(first[p]))}" for p in sorted(first)]
    if len(touched) > len(first):
        parts.append(f"... ({len(touched)} programs in all)")
    if not touched:
        parts.append("no program read or wrote it")
    for counts, what in ((record.reads, "read"), (record.writes, "written")):
        most = int(counts.max()) if counts.size else 0
        if most > 1:
            parts.append(f"an element {what} up to {most} times")
    if record.masked_lanes:
        who = (f"in program {programs[next(iter(record.masking))]}" if len(record.masking) == 1 else
               f"in {len(record.masking)} programs")
        parts.append(f"{record.masked_lanes} masked-off lane{'s' * (record.masked_lanes != 1)} {who}")
    for flags, what in ((record.raced, "raced"), (unwritten, "never written")):
        runs = _runs(flags)
        if runs:
            more = int(flags.sum()) - sum(r.size for r in runs[:2])
            parts.append(", ".join(_span(region, r) for r in runs[:2]) + (f" and {more} more" if more else "")
                         + f" {what}")
    return f"{region.label}: " + "; ".join(parts)


# -- running a case ---------------------------------------------------------------------------------------------

def record_case(puzzle, launcher, case, seed: int, timeout: float | None) -> Maps:
    """Run one case in this process under the interpreter hook and draw what its kernels did, up to the failure
    if it failed (``Maps.note`` says how it ended)."""
    from grader import env
    from grader.worker import execute, instrument

    if not env.interpreter_forced():
        return Maps([], note=NEEDS_INTERPRETER.format(number=puzzle.number))
    ok, why = instrument.status()
    if not ok:
        return Maps([], note=f"no map: {why}")
    keep = []
    execution = execute.execute(puzzle, launcher, case, seed, "cpu", timeout, keep=keep)
    if not keep:
        return Maps([], note=_ending(execution) or "no map: nothing was recorded")
    maps = maps_of(keep[0], puzzle.outputs)
    maps.note = _ending(execution)
    return maps


def _ending(execution) -> str:
    """How a case ended, in a line ('' when nothing went wrong that the worker can see: values are judged
    elsewhere)."""
    outcome = execution.early or execution.deferred or execution.late
    if outcome is None:
        return ""
    lines = [line.strip() for line in outcome.message.strip().splitlines()] or [""]
    where = [line for line in lines[1:2] if line.startswith(("in program", "at ", "it was running"))]
    said = "; ".join([lines[0], *where])
    if outcome.reason == "budget":  # a map lets the kernel run to its end, where grading stops it when over
        return f"over budget (counted over the whole run): {said}"
    return outcome.reason.replace("_", " ") + (f": {said}" if said else "")
