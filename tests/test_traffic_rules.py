"""Checks that count what the hardware does (issue 18): each rule has a kernel that breaks it and is rejected,
here, and a correct alternative that passes, in tests/kernels/right (tests/test_alternatives.py grades those).

- Budgets count bytes: a lane moves its pointer's element width (right: every solution).
- Bounds hold each lane's last byte.
- Atomics read and write (right: puzzle 7's solution, atomics into its output).
- tl.dot work must reach a store, and move it when perturbed; the floor is computed from the blocks the dots used
  (right: p11_small_tiles, and every solution of 11, 12, 13, 17 and 18).
- Tile widths are read as blocks run, not from the kernel's parameters (right: p05_persistent_num_sms).
- Each element is written by one program (right_own_launcher: p02_row_block_views, stores through views of the output).
"""

import pytest
import torch
import triton
import triton.language as tl
from helpers import KERNELS, failed_case, grade_file, kernel_file, report, requires_interpreter

from grader.worker import instrument

pytestmark = requires_interpreter

BROKEN = [
    (1, "wrong/p01_int64_pairs.py", "out_of_bounds",
     "each lane moves 8 bytes, and an element of x holds 4: a lane's last byte must lie inside too"),
    (2, "wrong/p02_tile_twice_as_tall.py", "race", "the same value: each output element is written by one program"),
    (5, "cheating/p05_reads_through_atomic_add_zero.py", "budget", "x read 3.00x"),
    (5, "cheating/p05_reads_pairs_as_int64.py", "budget", "x read 3.00x"),
    (5, "cheating/p05_whole_row_local_constexpr.py", "budget", "your kernel made a block 4096 wide"),
    (5, "cheating/p05_whole_row_in_a_helper.py", "budget", "your kernel made a block 2048 wide"),
    (11, "cheating/p11_dot_times_zero.py", "budget", "never reached a stored value: a product multiplied by"),
    (11, "cheating/p11_dot_overwritten.py", "budget", "tl.dot did 0% of the multiply-adds"),
    (11, "cheating/p11_dot_minus_itself.py", "budget", "cancelled (d - d: what is stored does not move"),
    (11, "cheating/p11_two_dots_cancel.py", "budget", "tl.dot did 0% of the multiply-adds"),
    (12, "cheating/p12_pv_on_cuda_cores_dot_cancelled.py", "budget",
     "multiply-adds of tl.dot never reached a stored value"),
    (5, "cheating/p05_row_in_a_dozen_tiles.py", "mismatch", "first at [0, 48]"),
]


@pytest.mark.slow
@pytest.mark.parametrize("puzzle, name, reason, clue", [
    pytest.param(*row, marks=getattr(pytest.mark, f"puzzle{row[0]}"), id=row[1]) for row in BROKEN])
def test_a_kernel_that_breaks_a_traffic_rule_is_rejected(puzzle, name, reason, clue):
    result = grade_file(puzzle, kernel_file(name), first_failure=True)
    case = failed_case(result)
    assert case.reason == reason, report(result)
    assert clue in f"{case.message}\n{case.hint or ''}", report(result)


@pytest.mark.slow
@pytest.mark.parametrize("puzzle, name", [
    pytest.param(2, "right_own_launcher/p02_row_block_views.py", marks=pytest.mark.puzzle2,
                 id="stores through views of the output"),
    pytest.param(11, "right/p11_small_tiles.py", marks=pytest.mark.puzzle11, id="tiles smaller than the case's"),
    pytest.param(5, "right/p05_persistent_num_sms.py", marks=pytest.mark.puzzle5, id="a persistent kernel's NUM_SMS"),
])
def test_a_correct_alternative_passes_with_its_own_launcher(puzzle, name):
    """These alternatives differ from the puzzle in their launchers: graded with them (--own-launcher), as well as
    under the puzzle's where their launcher is not their idea (tests/test_alternatives.py)."""
    result = grade_file(puzzle, KERNELS / name, seed=3, own_launcher=True)
    assert result.status == "passed", report(result)


@triton.jit
def _pairs_kernel(src_ptr, dst_ptr, PAIRS: tl.constexpr):
    """Copies PAIRS int64 lanes, each two float32 elements of src, into dst."""
    lanes = tl.arange(0, PAIRS)
    tl.store(dst_ptr + lanes, tl.load(src_ptr.to(tl.pointer_type(tl.int64)) + lanes))


def test_a_lane_wider_than_an_element_counts_its_bytes():
    src, dst = torch.randn(16), torch.zeros(8, dtype=torch.int64)
    with instrument.recording() as recorder:
        _pairs_kernel[(1,)](src, dst, PAIRS=8)
    regions = {r.label: r for r in recorder.regions}
    assert regions["src"].loads == 16 and regions["src"].load_bytes == 64  # 8 lanes of 8 bytes: all of src
    assert regions["dst"].stores == 8 and torch.equal(dst.view(torch.float32), src)


def test_a_lane_whose_last_byte_is_past_the_end_is_out_of_bounds():
    src, dst = torch.randn(15), torch.zeros(8, dtype=torch.int64)  # 15 floats: the 8th pair's second half is outside
    with instrument.recording() as recorder, pytest.raises(Exception, match="out-of-bounds load on src"):
        _pairs_kernel[(1,)](src, dst, PAIRS=8)
    violation = recorder.violation
    assert violation is not None and violation.lanes == 1 and violation.offsets == [15], violation
    assert "a lane's last byte must lie inside too" in violation.message()


@triton.jit
def _persistent_kernel(src_ptr, dst_ptr, N, B: tl.constexpr, PROGRAMS: tl.constexpr):
    for block in tl.range(tl.program_id(0), tl.cdiv(N, B), PROGRAMS):
        offsets = block.to(tl.int64) * B + tl.arange(0, B)  # a tensor, as on the GPU
        tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=offsets < N), mask=offsets < N)


def test_a_tl_range_loop_variable_is_a_tensor_as_on_the_gpu():
    src, dst = torch.randn(100), torch.zeros(100)
    with instrument.recording():
        _persistent_kernel[(3,)](src, dst, 100, B=16, PROGRAMS=3)
    assert torch.equal(src, dst)


@triton.jit
def _dot_kernel(a_ptr, c_ptr, SCALE: tl.constexpr):
    rows = tl.arange(0, 16)
    a = tl.load(a_ptr + rows[:, None] * 16 + rows[None, :])
    tl.store(c_ptr + rows[:, None] * 16 + rows[None, :], tl.dot(a, a) * SCALE)


@pytest.mark.parametrize("scale, live", [(1.0, True), (0.0, False)])
def test_a_dot_multiplied_by_zero_is_dead_work(scale, live):
    a, c = torch.randn(16, 16).half(), torch.zeros(16, 16)
    with instrument.recording() as recorder:
        _dot_kernel[(1,)](a, c, SCALE=scale)
    assert recorder.dot_work == 16 ** 3
    assert recorder.dead_dot_work() == (0 if live else 16 ** 3)
