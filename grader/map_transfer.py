"""Access maps on the wire: one case's pictures (``Maps``, one ``Picture`` per tensor) as the worker sends them and
the grader's process reads them back, checked field by field, since the worker runs the submission.

The worker draws them (``grader.worker.recording``), ``grader.judge.runner.map_case`` carries them as JSON, and
``grader.show.memory_map`` renders them; this module is all the three share, as ``transfer.py`` is for a grading.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from grader.safe_output import clean_text

ROWS, COLUMNS = 24, 64  # cells per tensor at most: fits a terminal, and a beginner can still count
ROWS_1D = 4  # a 1-D tensor longer than COLUMNS wraps into at most this many rows of cells
MAX_PICTURES = 64  # tensors one case may draw: far more than any puzzle passes (a worker sending more is refused)
MAX_PROGRAMS = 1 << 22  # programs one case may name: a puzzle's largest case launches a few thousand
NEEDS_INTERPRETER = ("maps need the interpreter, which records every load and store: "
                     "python -m grader {number} --map --interpret")


@dataclass(eq=False)
class Picture:
    """One tensor, downsampled to a grid of cells; each array has one entry per cell (rows x columns).

    The tensor is laid out as a 2-D grid of elements first: N-D as (all but the last dimension) x the last one,
    1-D as one row (or ROWS_1D rows of consecutive chunks when long). A cell summarises a block of `cell`
    elements (rows x columns of that grid; for a wrapped 1-D tensor, (1, chunk) consecutive elements)."""
    label: str
    shape: tuple
    role: str  # "input" (the grader passed it), "output" (made by the launcher and stored to), "other"
    cell: tuple  # elements per cell: (rows, columns)
    present: np.ndarray  # bool: the cell holds at least one element (the last row of a wrapped 1-D may not)
    owner: np.ndarray  # int32: the most common program of the cell (its writer, else its first reader), or -1
    reads: np.ndarray  # int32: the most times one element of the cell was loaded
    writes: np.ndarray  # int32: the most times one element of the cell was stored
    masked: np.ndarray  # bool: a masked-off lane pointed at an element of the cell
    raced: np.ndarray  # bool: an element of the cell raced (grader.worker.instrument.Race)
    unwritten: np.ndarray  # bool: an output element of the cell was never stored
    summary: str = ""  # one line in words: who read or wrote what, masked lanes, races, gaps

    def to_json(self) -> dict:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in data.items()}

    @classmethod
    def from_json(cls, data) -> Picture:
        """A picture as a worker sent it, checked field by field (the worker runs the submission); ValueError
        for anything a picture this module draws could not hold."""
        _expect(isinstance(data, dict) and set(data) == {f.name for f in dataclasses.fields(cls)}, "its fields")
        present = _cells(data["present"], bool)
        _expect(1 <= present.shape[0] <= ROWS and 1 <= present.shape[1] <= COLUMNS, "its size")
        arrays = {"present": present, **{k: _cells(data[k], bool, present.shape)
                                         for k in ("masked", "raced", "unwritten")},
                  **{k: _cells(data[k], np.int32, present.shape) for k in ("owner", "reads", "writes")}}
        _expect(arrays["owner"].min() >= -1 and arrays["reads"].min() >= 0 and arrays["writes"].min() >= 0,
                "its counts")
        shape, cell = data["shape"], data["cell"]
        _expect(isinstance(shape, list) and len(shape) <= 8 and all(_count(d) for d in shape), "its shape")
        _expect(isinstance(cell, list) and len(cell) == 2 and all(_count(d) and d > 0 for d in cell), "its cells")
        _expect(data["role"] in ("input", "output", "other"), "its role")
        _expect(isinstance(data["label"], str) and isinstance(data["summary"], str), "its text")
        return cls(clean_text(data["label"], 60), tuple(shape), data["role"], tuple(cell), **arrays,
                   summary=clean_text(data["summary"], 600))


def _expect(condition: bool, what: str) -> None:
    if not condition:
        raise ValueError(f"a picture with a malformed part: {what}")


def _count(value) -> bool:
    """A whole number a tensor's size or cell can be (JSON gives ints; not bools, floats or huge numbers)."""
    return type(value) is int and 0 <= value < 1 << 48


def _cells(value, dtype, shape: tuple | None = None) -> np.ndarray:
    """A grid of cells from JSON: a list of equal rows of booleans (dtype bool) or of int32 integers."""
    _expect(isinstance(value, list) and all(isinstance(row, list) for row in value), "a grid")
    kind = bool if dtype is bool else int
    _expect(all(type(item) is kind for row in value for item in row), "a grid's values")
    if dtype is not bool:
        _expect(all(-(1 << 31) <= item < 1 << 31 for row in value for item in row), "a grid's values")
    grid = np.array(value, dtype=dtype)
    _expect(grid.ndim == 2 and (shape is None or grid.shape == shape), "a grid's shape")
    return grid


NOTE_LIMIT = 1000  # characters of how a case ended: a race's message whole (300 cut off its advice)


@dataclass
class Maps:
    """The pictures of one case, the names of the programs that ran (by ordinal) and what happened."""
    programs: list[str]  # "(0,0,0)", or "(0,0,0) of launch 2" when the case launched several kernels
    pictures: list[Picture] = field(default_factory=list)
    title: str = ""  # which puzzle, case and code
    note: str = ""  # how the case ended, when it did not end well (one line)

    def to_json(self) -> dict:
        return {"programs": self.programs, "pictures": [p.to_json() for p in self.pictures], "title": self.title,
                "note": self.note}

    @classmethod
    def from_json(cls, data) -> Maps:
        """Maps as a worker sent them, checked (ValueError): the programs are names, every picture is one of a
        tensor of the case, and each owner names a program."""
        _expect(isinstance(data, dict) and set(data) == {"programs", "pictures", "title", "note"}, "the fields")
        programs, pictures = data["programs"], data["pictures"]
        _expect(isinstance(programs, list) and len(programs) <= MAX_PROGRAMS
                and all(isinstance(p, str) for p in programs), "the programs")
        _expect(isinstance(pictures, list) and len(pictures) <= MAX_PICTURES, "the pictures")
        _expect(isinstance(data["title"], str) and isinstance(data["note"], str), "the text")
        maps = cls([clean_text(p, 60) for p in programs], [Picture.from_json(p) for p in pictures],
                   clean_text(data["title"], 300), clean_text(data["note"], NOTE_LIMIT))
        _expect(all(p.owner.max(initial=-1) < len(maps.programs) for p in maps.pictures), "an owner")
        return maps
