"""A recorded launch runs its programs in a drawn order, never in id order (grader.worker.program_order): on a GPU
programs run in any order, so a kernel that relies on the stock interpreter's id order (tickets from tl.atomic_add
taken to be the program ids, sums read through atomics assuming the lower ids are done) fails here too."""

import pytest
import torch
import triton
import triton.language as tl
from helpers import cheat_file, failed_case, grade_file, report, requires_interpreter

from grader.worker import instrument, program_order

pytestmark = requires_interpreter


@triton.jit
def _ticket_kernel(counter_ptr, tickets_ptr):
    """Each program takes a ticket and stores it at its flat id (x outermost, z innermost)."""
    flat = (tl.program_id(0) * tl.num_programs(1) + tl.program_id(1)) * tl.num_programs(2) + tl.program_id(2)
    tl.store(tickets_ptr + flat, tl.atomic_add(counter_ptr, 1))


def _tickets(grid: tuple, record: bool = True) -> tuple[list[int], object]:
    counter = torch.zeros(1, dtype=torch.int32)
    tickets = torch.full((grid[0] * grid[1] * grid[2],), -1, dtype=torch.int32)
    if not record:
        _ticket_kernel[grid](counter, tickets)
        return tickets.tolist(), None
    with instrument.recording() as recorder:
        _ticket_kernel[grid](counter, tickets)
    return tickets.tolist(), recorder


@pytest.mark.parametrize("grid", [(2, 1, 1), (3, 1, 1), (64, 1, 1), (2, 3, 4), (1, 1, 5)])
def test_tickets_never_follow_the_program_ids_and_each_program_runs_once(grid):
    tickets, recorder = _tickets(grid)
    programs = grid[0] * grid[1] * grid[2]
    assert sorted(tickets) == list(range(programs)), tickets  # each program ran once, under its own ids
    assert tickets != list(range(programs)), "the programs ran in id order"
    assert _tickets(grid)[0] == tickets, "the order drawn changed from one recording to the next"
    # reports and maps name programs by their ids, in id order, whatever order ran them
    assert recorder.program_names == [(1, (x, y, z)) for x in range(grid[0]) for y in range(grid[1])
                                      for z in range(grid[2])]
    assert "a ticket is no program id" in recorder.order_note()


@triton.jit
def _sum_kernel(x_ptr, total_ptr, B: tl.constexpr):
    """Each program adds its block into total[0], and reads nothing back."""
    tl.atomic_add(total_ptr, tl.sum(tl.load(x_ptr + tl.program_id(0) * B + tl.arange(0, B)), axis=0))


def test_atomics_whose_values_are_not_used_bring_no_note():
    x, total = torch.ones(64), torch.zeros(1)
    with instrument.recording() as recorder:
        _sum_kernel[(4,)](x, total, B=16)
    assert total.item() == 64.0 and recorder.order_note() == ""


def test_a_lone_program_takes_the_first_ticket():
    tickets, recorder = _tickets((1, 1, 1))
    assert tickets == [0] and recorder.order_note() == ""  # nothing to order


def test_the_order_is_drawn_from_the_grading_seed():
    orders = set()
    try:
        for seed in range(4):
            program_order.reseed(seed)
            orders.add(tuple(_tickets((16, 1, 1))[0]))
    finally:
        program_order.reseed(0)
    assert len(orders) > 1, orders


def test_outside_a_recording_programs_run_in_id_order():
    """The dry run and native runs are left alone: only a recording draws the order."""
    assert _tickets((8, 1, 1), record=False)[0] == list(range(8))


@pytest.mark.puzzle7
@pytest.mark.parametrize("name", ["p07_tickets_follow_ids.py", "p07_lower_ids_are_done.py"])
def test_a_kernel_that_assumes_id_order_is_refused_with_the_order_named(name):
    """Both passed when the grader ran programs in id order; now their values are wrong, and the report says why."""
    result = grade_file(7, cheat_file(name), first_failure=True)
    case = failed_case(result)
    assert case.reason == "mismatch" and "elements of out wrong" in case.message, report(result)
    assert "runs a launch's programs in an order it draws, not in id order" in case.message, report(result)
