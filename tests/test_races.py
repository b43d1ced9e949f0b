"""Races: programs of one launch run at the same time on a GPU, though the interpreter runs them one after
another. Two programs storing one element (even the same bytes: each element is written by one program), or one
loading what another stored, fails with reason "race"; atomics that combine, and one program storing twice, do
not. An exchange, and a compare-and-swap outside a retry loop, overwrite: they race like stores."""

import contextlib
import re

import pytest
import torch
import triton
import triton.language as tl
from helpers import (
    KERNELS,
    cheat_file,
    failed_case,
    grade_file,
    grade_text,
    programs_in_id_order,
    report,
    requires_interpreter,
    solution_text,
)

from grader.course import registry
from grader.worker import instrument

pytestmark = requires_interpreter


def _race(result):
    case = failed_case(result)
    assert case.reason == "race", report(result)
    assert "use tl.atomic_add" in case.message, report(result)
    return case


@pytest.mark.puzzle7
def test_a_scatter_with_load_add_store_instead_of_an_atomic_is_a_race(tmp_path):
    old = "tl.atomic_add(out_ptr + target, values, mask=tile_mask, sem=\"relaxed\")"
    text = solution_text(registry.find(7))
    assert old in text
    text = text.replace(old, "tl.store(out_ptr + target, tl.load(out_ptr + target, mask=tile_mask) + values, "
                             "mask=tile_mask)")
    case = _race(grade_text(7, text, tmp_path))
    # named by the spec's output, at an index in its own shape: two lanes of the first program to run (in the drawn
    # order) already add into one element (a node with two edges in one tile), before any other program does
    assert re.search(r"two lanes of program \(\d+, 0, 0\) wrote out\[\d+, \d+, \d+\]", case.message) and \
        "If lanes add into shared elements (a scatter), use tl.atomic_add" in case.message, case.message
    assert "p07_scatter_add_under_test.py:" in case.message and "tl.store(out_ptr + target" in case.message


@pytest.mark.puzzle3
def test_programs_of_one_row_adding_into_one_element_race():
    result = grade_file(3, KERNELS / "wrong" / "p03_partial_sums_race.py", first_failure=True,
                        own_launcher=True)  # its own launcher splits each row between programs
    case = _race(result)
    # two programs of one row (whichever the drawn order ran first), at that row's element
    assert re.search(r"programs \((\d+), (\d+), 0\) and \(\1, (?!\2\b)\d+, 0\) both wrote z\[\1\]", case.message), \
        case.message


@triton.jit
def _shift_kernel(src_ptr, dst_ptr, B: tl.constexpr, READ_NEIGHBOUR: tl.constexpr):
    """Each program stores its block; with READ_NEIGHBOUR, it first loads the previous program's block."""
    offsets = tl.program_id(0) * B + tl.arange(0, B)
    values = tl.load(src_ptr + offsets)
    if READ_NEIGHBOUR:
        values += tl.load(dst_ptr + offsets - B, mask=offsets >= B, other=0.0)
    tl.store(dst_ptr + offsets, values)


def _record_shift(in_id_order: bool):
    src, dst = torch.randn(64), torch.zeros(64)
    with contextlib.ExitStack() as stack:
        if in_id_order:
            stack.enter_context(programs_in_id_order())
        recorder = stack.enter_context(instrument.recording())
        _shift_kernel[(4,)](src, dst, B=16, READ_NEIGHBOUR=True)
    return recorder.race


def test_loading_what_another_program_of_the_launch_stored_is_a_race():
    race = _record_shift(in_id_order=True)
    assert race is not None and race.kind == "read"
    assert race.first == (0, 0, 0) and race.second == (1, 0, 0) and race.region.element(race.element) == "dst[0]"
    assert "program (1, 0, 0) read dst[0], which program (0, 0, 0) wrote in the same launch" in race.message()
    # in the order the grader draws, a neighbour's block is read before it is stored, or after: a race either way
    race = _record_shift(in_id_order=False)
    assert race is not None and race.kind in ("read", "overwrite"), race
    assert abs(race.first[0] - race.second[0]) == 1, race


@triton.jit
def _add_then_exchange_kernel(out_ptr):
    """Program 0 adds 1 into out[0] atomically; program 1 exchanges 5 into it, wiping any add that landed first."""
    if tl.program_id(0) == 0:
        tl.atomic_add(out_ptr, 1)
    else:
        tl.atomic_xchg(out_ptr, 5)


@pytest.mark.parametrize("in_id_order", [True, False], ids=["id order", "drawn order"])
def test_an_exchange_over_another_programs_atomic_add_races_whichever_runs_first(in_id_order):
    """An exchange overwrites: run after another program's add (id order) or before it (the drawn order, which
    reverses two programs), on a GPU it may wipe the add, so it races either way."""
    out = torch.zeros(1, dtype=torch.int32)
    with contextlib.ExitStack() as stack:
        if in_id_order:
            stack.enter_context(programs_in_id_order())
        recorder = stack.enter_context(instrument.recording())
        _add_then_exchange_kernel[(2,)](out)
    race = recorder.race
    assert race is not None and race.kind == "write", race
    assert "with tl.atomic_xchg" in race.message(), race.message()


def test_a_later_launch_may_load_what_an_earlier_one_stored():
    """Launches run one after another on a GPU too: only programs of one launch race."""
    src, middle, dst = torch.randn(64), torch.zeros(64), torch.zeros(64)
    with instrument.recording() as recorder:
        _shift_kernel[(4,)](src, middle, B=16, READ_NEIGHBOUR=False)
        _shift_kernel[(4,)](middle, dst, B=16, READ_NEIGHBOUR=False)
        _shift_kernel[(4,)](middle, dst, B=16, READ_NEIGHBOUR=False)  # stores dst again: not in the same launch
    assert recorder.race is None


@triton.jit
def _overlap_kernel(dst_ptr, B: tl.constexpr, SAME: tl.constexpr):
    """Blocks overlap by half; with SAME, the overlapping elements get the same value from both programs."""
    offsets = tl.program_id(0) * (B // 2) + tl.arange(0, B)
    values = offsets.to(tl.float32) if SAME else (offsets + tl.program_id(0)).to(tl.float32)
    tl.store(dst_ptr + offsets, values)


@pytest.mark.parametrize("same", [True, False], ids=["same bytes", "different values"])
def test_two_programs_storing_one_element_race_even_with_the_same_bytes(same):
    dst = torch.zeros(48)
    with instrument.recording() as recorder:
        _overlap_kernel[(2,)](dst, B=32, SAME=same)
    race = recorder.race
    assert race is not None and race.kind == "write" and race.region.element(race.element) == "dst[16]"
    assert race.same == same
    assert ("both wrote dst[16], the same value: each output element is written by one program" in race.message()) \
        == same, race.message()


@pytest.mark.puzzle1
def test_a_last_tile_shifted_back_over_its_neighbour_is_a_race():
    """Two programs storing the same values into the overlap: the work is done twice; the message says why, where
    the blocks start, and no atomic (an atomic_add of the same values would add them twice)."""
    case = failed_case(grade_file(1, KERNELS / "wrong" / "p01_overlapping_last_tile.py", first_failure=True))
    assert case.reason == "race", case.message
    assert "the same value: each output element is written by one program" in case.message, case.message
    assert "block starts at z[168], 8 elements after program (5, 0, 0)'s (at z[160])" in case.message, case.message
    assert "mask the lanes past the end instead of shifting the block back" in case.message, case.message
    assert "atomic" not in case.message, case.message


def test_atomics_are_exempt():
    src, index, dst = torch.ones(64), torch.arange(64, dtype=torch.int32) % 3, torch.zeros(3)
    with instrument.recording() as recorder:
        _atomic_kernel[(4,)](src, index, dst, B=16)
    assert recorder.race is None and torch.equal(dst, torch.tensor([22.0, 21.0, 21.0]))


@triton.jit
def _atomic_kernel(src_ptr, index_ptr, dst_ptr, B: tl.constexpr):
    offsets = tl.program_id(0) * B + tl.arange(0, B)
    tl.atomic_add(dst_ptr + tl.load(index_ptr + offsets), tl.load(src_ptr + offsets))


@pytest.mark.puzzle7
def test_a_read_modify_write_through_atomic_xchg_is_a_race():
    """An exchange is atomic, but a load, an add and an exchange loses updates all the same."""
    from helpers import KERNELS, grade_file

    case = failed_case(grade_file(7, KERNELS / "wrong" / "p07_rmw_with_atomic_xchg.py", first_failure=True))
    assert case.reason == "race" and "tl.atomic_add" in case.message, case.message


@triton.jit
def _cas_kernel(counter_ptr, RETRY: tl.constexpr):
    """Each program adds 1 to counter[0] by compare-and-swap: once, or in a loop until the swap took."""
    old = tl.load(counter_ptr)
    if RETRY:
        seen = tl.atomic_cas(counter_ptr, old, old + 1.0)
        while seen != old:
            old = seen
            seen = tl.atomic_cas(counter_ptr, old, old + 1.0)
    else:
        tl.atomic_cas(counter_ptr, old, old + 1.0)


@pytest.mark.parametrize("retry", [True, False], ids=["retry loop", "one try"])
def test_a_compare_and_swap_outside_a_retry_loop_races_like_a_store(retry):
    counter = torch.zeros(1)
    with instrument.recording() as recorder:
        _cas_kernel[(3,)](counter, RETRY=retry)
    assert counter.item() == 3.0  # the interpreter runs programs one after another: no update is lost here
    if retry:
        assert recorder.race is None, recorder.race.message()
        # programs 1 and 2 find the counter updated by another program: their first swap fails once, as on a GPU
        # (Recorder.contended_swaps), and the loop swaps again
        assert recorder.swaps_failed == 2 and "2 lane(s) of tl.atomic_cas failed once" in recorder.swap_note()
    else:
        assert recorder.race is not None and recorder.race.kind == "write", "a lone atomic_cas must race"
        assert "with tl.atomic_cas outside a retry loop" in recorder.race.message()


@triton.jit
def _add_zero_kernel(src_ptr, dst_ptr, B: tl.constexpr):
    offsets = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(dst_ptr + offsets, tl.atomic_add(src_ptr + offsets, 0.0))


def test_an_atomic_reads_and_writes_its_elements():
    """tl.atomic_add(x, 0) reads x (and writes it back): both budgets count it."""
    src, dst = torch.randn(32), torch.zeros(32)
    with instrument.recording() as recorder:
        _add_zero_kernel[(2,)](src, dst, B=16)
    regions = {r.label: r for r in recorder.regions}
    assert (regions["src"].loads, regions["src"].stores, regions["src"].atomics) == (32, 32, 32)
    assert torch.equal(dst, src)


# -- issue 26, class 4: atomics race with plain accesses of other programs -----------------------------------------

@triton.jit
def _atomics_beside_plain_kernel(sums_ptr, out_ptr, B: tl.constexpr, MODE: tl.constexpr):
    """Every program adds its block into sums with an atomic. MODE "clear": program 0 first zeros sums with a plain
    store; "read": the last program then loads sums (plain) into out; "peek": program 0 loads sums into out before
    anyone adds; "own": each program stores and loads only what it alone adds into (its own slot): no race."""
    pid = tl.program_id(0)
    offsets = tl.arange(0, B)
    if MODE == "own":
        offsets += pid * B
    if MODE == "clear":
        if pid == 0:
            tl.store(sums_ptr + offsets, tl.zeros([B], dtype=tl.float32))
    if MODE == "peek":
        if pid == 0:
            tl.store(out_ptr + offsets, tl.load(sums_ptr + offsets))
    tl.atomic_add(sums_ptr + offsets, tl.full([B], 1.0, tl.float32))
    if MODE == "read":
        if pid == tl.num_programs(0) - 1:
            tl.store(out_ptr + offsets, tl.load(sums_ptr + offsets))
    if MODE == "own":
        tl.store(sums_ptr + offsets, tl.load(sums_ptr + offsets) * 2)
        tl.store(out_ptr + offsets, tl.load(sums_ptr + offsets))


def _record_atomics_beside(mode: str, in_id_order: bool = True):
    """The record of one launch (in id order: the tests name the programs of that interleaving)."""
    sums, out = torch.zeros(64), torch.zeros(64)
    with contextlib.ExitStack() as stack:
        if in_id_order:
            stack.enter_context(programs_in_id_order())
        recorder = stack.enter_context(instrument.recording())  # neither is an input: the launcher's own tensors,
        _atomics_beside_plain_kernel[(4,)](sums, out, B=16, MODE=mode)  # as outputs are
    return recorder


@pytest.mark.parametrize("mode, kind", [("clear", "write"), ("read", "read"), ("peek", "read")])
def test_a_plain_access_beside_other_programs_atomics_races_in_the_drawn_order_too(mode, kind):
    race = _record_atomics_beside(mode, in_id_order=False).race
    assert race is not None and race.kind == kind and race.atomic, race
    assert (0, 0, 0) in (race.first, race.second) or mode == "read", race  # program 0's plain access
    assert (3, 0, 0) in (race.first, race.second) or mode != "read", race  # the last program's


def test_a_plain_store_beside_another_programs_atomics_is_a_race():
    race = _record_atomics_beside("clear").race
    assert race is not None and race.kind == "write" and race.atomic
    assert race.first == (0, 0, 0) and race.second == (1, 0, 0), race
    assert "one with a plain tl.store and the other with an atomic" in race.message()
    assert "tl.atomic_add(sums_ptr + offsets" in race.message()


def test_a_plain_load_of_what_other_programs_add_atomically_is_a_race():
    race = _record_atomics_beside("read").race
    assert race is not None and race.kind == "read" and race.atomic
    assert race.second == (3, 0, 0) and race.first == (0, 0, 0), race
    assert "read sums[0] with a plain load, which program (0, 0, 0) updated with an atomic" in race.message()


def test_a_plain_load_before_other_programs_add_atomically_is_a_race():
    """The interpreter runs program 0's load before the others' atomics; a GPU may run them in either order."""
    race = _record_atomics_beside("peek").race
    assert race is not None and race.kind == "read" and race.atomic
    assert race.first == (0, 0, 0) and race.second == (1, 0, 0), race
    assert "program (0, 0, 0) read sums[0] with a plain load, and program (1, 0, 0) updated it with an atomic" \
        in race.message()


def test_a_program_may_load_and_store_what_only_it_adds_into():
    assert _record_atomics_beside("own").race is None


@pytest.mark.puzzle7
def test_clearing_an_output_that_other_programs_add_into_is_a_race():
    case = failed_case(grade_file(7, cheat_file("p07_clears_while_others_add.py"), first_failure=True))
    assert case.reason == "race", case.message
    assert "one with a plain tl.store and the other with an atomic" in case.message


# -- a store over what another program of the launch loaded (a write after its read) --------------------------------

@triton.jit
def _borrow_kernel(src_ptr, dst_ptr, B: tl.constexpr, MODE: tl.constexpr):
    """Each program copies its block of src into dst. MODE "next": it first loads the next program's block of dst
    (which that program stores later); "previous": it saves the previous program's block of src, overwrites it and
    puts it back; "own": it does that to its own block (no other program reads it)."""
    pid = tl.program_id(0)
    offsets = pid * B + tl.arange(0, B)
    values = tl.load(src_ptr + offsets)
    if MODE == "next":
        values += tl.load(dst_ptr + offsets + B, mask=offsets + B < tl.num_programs(0) * B, other=0.0) * 0
    if MODE == "previous":
        if pid > 0:
            saved = tl.load(src_ptr + offsets - B)
            tl.store(src_ptr + offsets - B, saved * 0)
            tl.store(src_ptr + offsets - B, saved)
    if MODE == "own":
        tl.store(src_ptr + offsets, values * 0)
        tl.store(src_ptr + offsets, values)
    tl.store(dst_ptr + offsets, values)


def _record_borrow(mode: str, watched: bool = False, in_id_order: bool = True):
    """The record of one launch (in id order: the tests name the programs of that interleaving)."""
    src, dst = torch.randn(64), torch.zeros(64)
    kept = src.clone()
    with contextlib.ExitStack() as stack:
        if in_id_order:
            stack.enter_context(programs_in_id_order())
        recorder = stack.enter_context(instrument.recording())
        if watched:
            recorder.watch("src", src)  # an input, as the grader names one
        _borrow_kernel[(4,)](src, dst, B=16, MODE=mode)
    assert torch.equal(src, kept) and torch.equal(dst, kept)  # the interpreter's order hides every race here
    return recorder


@pytest.mark.parametrize("watched", [False, True], ids=["a tensor of the launcher", "an input"])
def test_a_store_over_what_an_earlier_program_loaded_is_a_race(watched):
    """Program 1 overwrites (and puts back) the block program 0 loaded: on a GPU program 0 may load it meanwhile."""
    race = _record_borrow("previous", watched).race
    assert race is not None and race.kind == "overwrite", race
    assert race.first == (0, 0, 0) and race.second == (1, 0, 0) and race.region.element(race.element) == "src[0]"
    assert "program (1, 0, 0) stored into src[0], which program (0, 0, 0) read with a plain load in the same " \
        "launch" in race.message(), race.message()


def test_a_store_of_what_a_later_program_loaded_first_is_a_race():
    """Program 0 loads program 1's block of dst before program 1 stores it (the interpreter's order; the GPU's may
    be the other)."""
    race = _record_borrow("next").race
    assert race is not None and race.kind == "overwrite", race
    assert race.first == (0, 0, 0) and race.second == (1, 0, 0) and race.region.element(race.element) == "dst[16]"


@pytest.mark.parametrize("mode", ["previous", "next"])
def test_a_neighbours_block_borrowed_or_read_ahead_races_in_the_drawn_order_too(mode):
    """Whichever of the two programs runs first, one's plain load and the other's store of one element race."""
    race = _record_borrow(mode, in_id_order=False).race
    assert race is not None and race.kind in ("overwrite", "read"), race
    assert abs(race.first[0] - race.second[0]) == 1, race


def test_a_program_may_overwrite_what_only_it_loaded():
    assert _record_borrow("own").race is None


def test_a_store_into_an_input_is_noted_though_it_is_put_back():
    """Memory borrowed in an input escapes the budgets, and the digest taken at the end sees nothing: the recorder
    notes the first store into a watched input (execute refuses it as input_modified)."""
    assert _record_borrow("own", in_id_order=False).input_store is None  # src is no input here
    recorder = _record_borrow("own", watched=True, in_id_order=False)
    assert recorder.race is None and recorder.input_store is not None
    message = recorder.input_store_message()
    # the first program to run (in the drawn order) stores first, at the start of its own block
    stored = re.search(r"your kernel changed the input src: program \((\d+), 0, 0\) stored into src\[(\d+)\]", message)
    assert stored and int(stored[2]) == 16 * int(stored[1]), message
    assert "tl.store(src_ptr + offsets, values * 0)" in message, message


# -- atomics in the lane check: a load of what another lane of the program updated atomically -------------------------

@triton.jit
def _atomic_lanes_kernel(dst_ptr, out_ptr, B: tl.constexpr, MODE: tl.constexpr):
    """Each program's lanes add 1 into dst with an atomic, then load dst back: MODE "reversed" in the reverse lane
    order; "barrier" the same, after a tl.debug_barrier(); "same" in the same lane order; "shared": every lane adds
    into the program's first element, and every lane loads it."""
    lanes = tl.arange(0, B)
    offsets = tl.program_id(0) * B + lanes
    if MODE == "shared":
        tl.atomic_add(dst_ptr + tl.program_id(0) * B + lanes * 0, tl.full([B], 1.0, tl.float32))
        tl.store(out_ptr + offsets, tl.load(dst_ptr + tl.program_id(0) * B + lanes * 0))
    else:
        tl.atomic_add(dst_ptr + offsets, tl.full([B], 1.0, tl.float32))
        back = offsets
        if MODE == "reversed" or MODE == "barrier":
            back = tl.program_id(0) * B + (B - 1 - lanes)
        if MODE == "barrier":
            tl.debug_barrier()
        tl.store(out_ptr + back, tl.load(dst_ptr + back))


def _record_atomic_lanes(mode: str):
    dst, out = torch.zeros(32), torch.zeros(32)
    with instrument.recording() as recorder:
        _atomic_lanes_kernel[(2,)](dst, out, B=16, MODE=mode)
    return recorder


@pytest.mark.parametrize("mode", ["reversed", "shared"])
def test_a_load_of_what_another_lane_updated_atomically_is_a_lane_race(mode):
    race = _record_atomic_lanes(mode).race
    assert race is not None and race.kind == "lane read", race
    assert "which another lane of the same program stored (with tl.store or an atomic)" in race.message()


@pytest.mark.parametrize("mode", ["same", "barrier"])
def test_a_lane_may_load_what_it_updated_itself_or_after_a_barrier(mode):
    recorder = _record_atomic_lanes(mode)
    assert recorder.race is None, recorder.race.message()


# -- a write after a read between lanes: a store over what another lane of the program loaded ------------------------

@triton.jit
def _lane_reads_kernel(z_ptr, B: tl.constexpr, MODE: tl.constexpr):
    """z holds 1.0 in each program's block; each lane loads elements of it, then stores 2.0 (or adds 1.0) over its
    own element: MODE "neighbour" loads its own and its right-hand neighbour's; "barrier" the same, with a
    tl.debug_barrier() before the store; "own" only its own; "masked" the neighbour's, where only the odd lanes
    load and store (an even lane, masked off, points at the odd element its neighbour stores); "same bits" the
    neighbour's, and stores 1.0, what is there; "broadcast" the program's first element, by every lane; "int64" its
    own and its neighbour's through an int64 view (a lane reads two floats); "uint8" its own bytes through a uint8
    view, and stores them back plus one; "atomic" the neighbour's, then adds 1.0 into its own element with
    tl.atomic_add."""
    lanes = tl.arange(0, B)
    offsets = tl.program_id(0) * B + lanes
    if MODE == "int64":
        pairs = z_ptr.to(tl.pointer_type(tl.int64)) + tl.program_id(0) * (B // 2) + lanes // 2
        seen = tl.load(pairs).to(tl.float32)
    elif MODE == "uint8":
        bytes_ = z_ptr.to(tl.pointer_type(tl.uint8)) + tl.program_id(0) * B * 4 + tl.arange(0, 4 * B)
        tl.store(bytes_, tl.load(bytes_) + 1)
        seen = tl.zeros([B], tl.float32)
    elif MODE == "broadcast":
        seen = tl.load(z_ptr + tl.program_id(0) * B + lanes * 0)
    elif MODE == "own":
        seen = tl.load(z_ptr + offsets)
    else:
        right = tl.program_id(0) * B + (lanes + 1) % B
        seen = tl.load(z_ptr + right, mask=(MODE != "masked") | (lanes % 2 == 1), other=0.0)
    if MODE == "barrier":
        tl.debug_barrier()
    if MODE == "atomic":
        tl.atomic_add(z_ptr + offsets, tl.full([B], 1.0, tl.float32))
    elif MODE == "same bits":
        tl.store(z_ptr + offsets, tl.full([B], 1.0, tl.float32) + seen * 0)
    elif MODE != "uint8":
        tl.store(z_ptr + offsets, tl.full([B], 2.0, tl.float32) + seen * 0, mask=(MODE != "masked") | (lanes % 2 == 1))


def _record_lane_reads(mode: str):
    z = torch.ones(32)
    with instrument.recording() as recorder:
        _lane_reads_kernel[(2,)](z, B=16, MODE=mode)
    return recorder


@pytest.mark.parametrize("mode", ["neighbour", "broadcast", "int64", "atomic"])
def test_a_store_over_what_another_lane_loaded_is_a_lane_race(mode):
    race = _record_lane_reads(mode).race
    assert race is not None and race.kind == "lane overwrite", race
    message = race.message()
    wrote = "updated" if mode == "atomic" else "stored into"
    assert re.search(rf"program \(\d, 0, 0\) {wrote} z\[\d+\], which another lane of the same program loaded since "
                     r"the last tl\.debug_barrier\(\) \(a write after a read\)", message), message
    assert "Put tl.debug_barrier() between the loads and the store, or have each lane read only" in message


@pytest.mark.parametrize("mode", ["barrier", "own", "masked", "same bits", "uint8"])
def test_a_lane_may_store_over_what_it_loaded_itself_or_after_a_barrier(mode):
    recorder = _record_lane_reads(mode)
    assert recorder.race is None, recorder.race.message()


def test_a_cheat_whose_lane_stores_over_what_another_lane_loaded_fails_and_its_barrier_passes():
    case = failed_case(grade_file(1, cheat_file("p01_lane_reads_then_another_overwrites.py")))
    assert case.reason == "race" and "(a write after a read)" in case.message, case.message
    assert grade_file(1, KERNELS / "right" / "p01_neighbour_read_behind_a_barrier.py").status == "passed"
