"""Chapter 1, warm-ups (notebooks/01_warmup.ipynb): puzzles 1-3, add, outer_add and row_sum."""

from __future__ import annotations

import torch

from grader.course import specs
from grader.course.cases import Case, normal
from grader.course.mistakes import matches, padding
from grader.course.puzzle import Hint, Puzzle, Tolerance, magnitude_scale

NOTEBOOK = "01_warmup"

# -- puzzle 1: add ----------------------------------------------------------------------------------

ADD_CASES = (
    Case("spec", dict(N0=200), dict(B0=32), about="the spec's own size"),
    Case("ragged", dict(N0=1000), dict(B0=128), about="N0 is not a multiple of B0"),
    Case("small blocks", dict(N0=97), dict(B0=16)),
    Case("exact multiple", dict(N0=256), dict(B0=64)),
    Case("single element", dict(N0=1), dict(B0=32)),
    Case("large", dict(N0=100_003), dict(B0=1024)),
    Case("large magnitudes", dict(N0=300), dict(B0=64), fill=normal(1e6)),
)

ADD = Puzzle(1, "add", "Vector add: programs, blocks and masks", NOTEBOOK, specs.add, ADD_CASES,
             Tolerance(1e-6, magnitude_scale(specs.add), "|x| + |y|"))

# -- puzzle 2: outer_add ----------------------------------------------------------------------------

OUTER_ADD_CASES = (
    Case("spec", dict(N0=50, N1=40), dict(B0=16, B1=16), about="the spec's own size"),
    Case("ragged", dict(N0=301, N1=37), dict(B0=64, B1=8), about="neither size a multiple of its block"),
    Case("square", dict(N0=64, N1=64), dict(B0=32, B1=16)),
    Case("single row", dict(N0=100, N1=1), dict(B0=32, B1=16)),
    Case("single column", dict(N0=1, N1=70), dict(B0=16, B1=32)),
    Case("single element", dict(N0=1, N1=1), dict(B0=16, B1=16)),
    Case("large", dict(N0=1000, N1=700), dict(B0=128, B1=64)),
)


def _right_where(inputs, yours) -> torch.Tensor:
    """Per element of z, whether it holds x[i] + y[j] (an unwritten element holds the grader's poison)."""
    expected = specs.outer_add(inputs["x"], inputs["y"])
    return (yours - expected).abs() <= 1e-5 * (expected.abs() + 1)


def _only_first_rows(inputs, yours, blocks) -> bool:
    """Check whether only z's first B1 rows are right: every program along axis 1 did rows 0..B1-1."""
    right = _right_where(inputs, yours)
    return right.shape[0] > blocks["B1"] and bool(right[: blocks["B1"]].all()) and not right[blocks["B1"]:].any()


def _only_first_columns(inputs, yours, blocks) -> bool:
    """Check whether only z's first B0 columns are right: every program along axis 0 did columns 0..B0-1."""
    right = _right_where(inputs, yours)
    return right.shape[1] > blocks["B0"] and bool(right[:, : blocks["B0"]].all()) and not right[:, blocks["B0"]:].any()


OUTER_ADD_HINTS = (
    Hint("rows ignore program_id(1)", _only_first_rows,
         "only z's first B1 rows are right: the rows of program (i, j) start at tl.program_id(1) * B1 (axis 1 of the "
         "grid walks y and the rows of z)"),
    Hint("columns ignore program_id(0)", _only_first_columns,
         "only z's first B0 columns are right: the columns of program (i, j) start at tl.program_id(0) * B0 (axis 0 "
         "of the grid walks x and the columns of z)"),
)

OUTER_ADD = Puzzle(2, "outer_add", "Outer add: 2-D blocks", NOTEBOOK, specs.outer_add, OUTER_ADD_CASES,
                   Tolerance(1e-6, magnitude_scale(specs.outer_add), "|x[i]| + |y[j]|"), hints=OUTER_ADD_HINTS)

# -- puzzle 3: row_sum ------------------------------------------------------------------------------

ROW_SUM_CASES = (
    Case("spec", dict(N0=4, T=200), dict(B0=2, B1=32), about="the spec's own size"),
    Case("ragged", dict(N0=37, T=301), dict(B0=4, B1=64), about="T is not a multiple of B1"),
    Case("long rows", dict(N0=3, T=5000), dict(B0=2, B1=256)),
    Case("row shorter than a block", dict(N0=10, T=5), dict(B0=4, B1=64)),
    Case("single row", dict(N0=1, T=1000), dict(B0=1, B1=128)),
    Case("single element", dict(N0=1, T=1), dict(B0=1, B1=16)),
    Case("large", dict(N0=300, T=700), dict(B0=16, B1=128)),
    Case("cancelling magnitudes 1e4", dict(N0=8, T=333), dict(B0=8, B1=64), fill=normal(1e4),
         about="sums near zero from large terms; the tolerance scales with the sum of |x|"),
)


def _first_block_only(inputs, yours, blocks) -> bool:
    """Check whether each row's sum is the sum of its first block of B1 columns alone."""
    x = inputs["x"]
    return x.shape[1] > blocks["B1"] and matches(yours, x[:, : blocks["B1"]].sum(dim=1))


def _padding_loaded_as_1(inputs, yours, blocks) -> bool:
    """Check whether each row's sum is off by one per padded lane of its last block (other=1.0)."""
    x = inputs["x"]
    lanes = padding(x.shape[1], blocks["B1"])
    return lanes > 0 and matches(yours, x.sum(dim=1) + lanes)


def _rows_overlap(inputs, yours, blocks) -> bool:
    """Check whether row r summed x's flat elements r .. r+T-1 (an offset of `rows + cols` without `* T`)."""
    x = inputs["x"]
    flat, length = x.reshape(-1), x.shape[1]
    return x.shape[0] > 1 and matches(yours, torch.stack([flat[r:r + length].sum() for r in range(x.shape[0])]))


ROW_SUM_HINTS = (
    Hint("first block only", _first_block_only,
         "you summed only the first block of each row: loop over the whole row with tl.range"),
    Hint("padding loaded as 1", _padding_loaded_as_1,
         "each row is off by the number of padded lanes in its last block: load them with other=0.0, so they add "
         "nothing"),
    Hint("rows overlap", _rows_overlap,
         "row r must start at r * T in memory: the offsets are rows[:, None] * T + cols[None, :]; without * T the "
         "rows overlap"),
)

ROW_SUM = Puzzle(3, "row_sum", "Row sum: a loop over a long row", NOTEBOOK, specs.row_sum, ROW_SUM_CASES,
                 Tolerance(1e-5, magnitude_scale(specs.row_sum), "the row's sum of |x|"), hints=ROW_SUM_HINTS,
                 lesson_blocks=("B1",))

PUZZLES = (ADD, OUTER_ADD, ROW_SUM)
