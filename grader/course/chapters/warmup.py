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



def _packed_as_float16(inputs, yours, blocks) -> bool:
    """Check whether z's first half holds the answer as float16 values, two to a float32 element: a float16 store
    through a pointer cast to float16."""
    expected = specs.add(inputs["x"], inputs["y"]).to(torch.float16)
    packed = yours.to(torch.float32).reshape(-1)[: (expected.numel() + 1) // 2]
    halves = packed.view(torch.float16)[: expected.numel()].to(torch.float64)
    return expected.numel() > 1 and matches(halves, expected.to(torch.float64))


def _rounded_to_float16(inputs, yours, blocks) -> bool:
    """Check whether z is the answer rounded to float16 (and back): the sum went through a float16 value."""
    rounded = specs.add(inputs["x"].float(), inputs["y"].float()).to(torch.float16).to(torch.float64)
    return matches(yours, rounded) and not matches(specs.add(inputs["x"], inputs["y"]), rounded)


ADD_HINTS = (
    Hint("packed as float16", _packed_as_float16,
         "z's first half holds your sums as float16, two to each float32 element, and its second half was never "
         "written: the result was stored through a float16 pointer. z is float32: store x + y through z_ptr as it "
         "is (tl.store converts a value to the pointer's type)"),
    Hint("rounded to float16", _rounded_to_float16,
         "z holds the sums rounded to float16 (errors near 1e-3 of each value): keep x + y float32, without "
         ".to(tl.float16)"),
)

ADD = Puzzle(1, "add", "Vector add: programs, blocks and masks", NOTEBOOK, specs.add, ADD_CASES,
             Tolerance(1e-6, magnitude_scale(specs.add), "|x| + |y|"), hints=ADD_HINTS)

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


def _right_only_below(inputs, yours, rows: int, cols: int) -> bool:
    """Whether z is right exactly in its first `rows` rows and `cols` columns (the rest never written or wrong),
    and that is not all of z."""
    right = _right_where(inputs, yours)
    inside = torch.zeros_like(right)
    inside[:rows, :cols] = True
    return not bool(inside.all()) and bool((right == inside).all())


def _blocks_swapped(inputs, yours, blocks) -> bool:
    """Check whether a program covered B0 rows (or B1 columns): the tile assumes B0 = B1, so the grid of
    cdiv(N1, B1) x cdiv(N0, B0) programs covers cdiv(N1, B1) * B0 rows (or cdiv(N0, B0) * B1 columns)."""
    (n1, n0), b0, b1 = yours.shape, blocks["B0"], blocks["B1"]
    return b0 != b1 and (_right_only_below(inputs, yours, -(-n1 // b1) * b0, n0)
                         or _right_only_below(inputs, yours, n1, -(-n0 // b0) * b1))


def _axes_crossed(inputs, yours, blocks) -> bool:
    """Check whether the grid's axes were crossed: program (i, j) took rows from i and columns from j, so the grid
    covered cdiv(N0, B0) * B1 rows and cdiv(N1, B1) * B0 columns."""
    (n1, n0), b0, b1 = yours.shape, blocks["B0"], blocks["B1"]
    return _right_only_below(inputs, yours, -(-n0 // b0) * b1, -(-n1 // b1) * b0)


OUTER_ADD_HINTS = (
    Hint("grid axes crossed", _axes_crossed,
         "the grid's axes are crossed: axis 0 of the grid (tl.program_id(0)) walks x and the columns of z, in blocks "
         "of B0; axis 1 walks y and the rows, in blocks of B1. cols = tl.program_id(0) * B0 + tl.arange(0, B0), "
         "rows = tl.program_id(1) * B1 + tl.arange(0, B1)"),
    Hint("tile assumes B0 = B1", _blocks_swapped,
         "the tile assumes B0 = B1: a program covers B1 rows (rows = tl.program_id(1) * B1 + tl.arange(0, B1)) and "
         "B0 columns; with B0 and B1 exchanged, the grid leaves rows or columns unwritten where they differ"),
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
    Case("65 blocks per row", dict(N0=3, T=1029), dict(B0=2, B1=16),
         about="65 blocks of 16 in a row: the loop must run over the whole row, however long (a row held in a few "
               "separate tiles is too short)"),
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


def _last_block_dropped(inputs, yours, blocks) -> bool:
    """Check whether each row's sum stops one block short: tl.range(0, T - B1, B1) leaves out the last block (all
    of a row no longer than one block)."""
    x, block = inputs["x"], blocks["B1"]
    covered = min(x.shape[1], -(-max(x.shape[1] - block, 0) // block) * block)
    return matches(yours, x[:, :covered].sum(dim=1)) and not matches(x.sum(dim=1), x[:, :covered].sum(dim=1))


def _last_block_only(inputs, yours, blocks) -> bool:
    """Check whether each row's sum is its last block's alone: `acc = tl.sum(...)` where `acc += ...` was meant."""
    x, block = inputs["x"], blocks["B1"]
    if x.shape[1] <= block:
        return False
    return matches(yours, x[:, (x.shape[1] - 1) // block * block:].sum(dim=1))


ROW_SUM_HINTS = (
    Hint("last block only", _last_block_only,
         "each row's sum is its last block's alone: each step replaced the sum instead of adding to it, so write "
         "acc += tl.sum(tile, axis=1), not acc = ..."),
    Hint("first block only", _first_block_only,
         "you summed only the first block of each row: loop over the whole row with tl.range"),
    Hint("last block dropped", _last_block_dropped,
         "each row's sum misses its last block (all of a row no longer than one block): the loop must run while "
         "start < T, tl.range(0, T, B1); its last block is partial, and the mask keeps it inside the row"),
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
