"""A load the GPU compiler makes asynchronous must not read what its launch stored before it (grader.worker.pipelining):
the sm_90 TTGIR's asynchronous loads (grader.worker.ttir.async_load_lines), the statement a load's line belongs to,
and the report. The kernels themselves: cheating/p03_running_sum_in_z_pipelined.py (tests/expected_verdicts.py) is
refused; right/p03_running_sum_pipelined.py (test_alternatives.py) passes."""

import linecache

import numpy as np

from grader.worker import pipelining, ttir
from grader.worker.regions import Region

# Cut from the sm_90 TTGIR of a running sum loaded back from z in a loop with num_stages=3 (triton 3.9; 3.6 writes
# the same ops), of a descriptor load in a loop (TMA: no result), and a load inside an inlined @triton.jit helper.
TTGIR = """
    tt.store %1, %cst, %row_ok_11 : tensor<32x!tt.ptr<f32>, #blocked> loc(#loc6)
    %tile_28 = ttg.async_copy_global_to_local %tile_26, %tile_27 mask %4 other %cst_0 : tensor<32x32x!tt.ptr<f32>, \
#blocked1> -> <32x32xf32, #shared, #smem, mutable> loc(#loc31)
    %tile_29 = ttg.async_commit_group tokens %tile_28 loc(#loc31)
    %12:6 = scf.for %arg4 = %c0_i32 to %T step %c32_i32 iter_args(%arg5 = %c1_i32) -> (i32)  : i32 {
      %tile_49 = ttg.async_wait %tile_45, %acc_47 {num = 2 : i32} loc(#loc31)
      %acc_50 = ttg.local_load %acc_48 : !ttg.memdesc<32xf32, #shared1, #smem, mutable> -> tensor<32xf32> loc(#loc32)
      tt.store %1, %21, %row_ok_11 : tensor<32x!tt.ptr<f32>, #blocked> loc(#loc19)
      %acc_66 = ttg.async_copy_global_to_local %1, %acc_65 mask %29 other %cst : tensor<32x!tt.ptr<f32>, #blocked> \
-> <32xf32, #shared1, #smem, mutable> loc(#loc32)
      ttng.async_tma_copy_global_to_local %k_desc_24[%acc_80, %c0_i32] %k_79, %acc_78, %acc_43 : \
!tt.tensordesc<64x64xf16, #shared>, !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, \
#smem, mutable> loc(#loc63)
      %h = ttg.async_copy_global_to_local %p, %b : tensor<32x!tt.ptr<f32>, #blocked> -> <32xf32, #shared1> loc(#loc70)
      %plain = tt.load %q : tensor<32x!tt.ptr<f32>, #blocked> loc(#loc9)
    } loc(#loc13)
#loc6 = loc("k.py":13:27)
#loc9 = loc("k.py":30:10)
#loc11 = loc("k.py":17:23)
#loc12 = loc("k.py":18:22)
#loc15 = loc("k.py":86:12)
#loc20 = loc("k.py":5:11)
#loc21 = loc("k.py":40:8)
#loc31 = loc("tile"(#loc11))
#loc32 = loc("acc"(#loc12))
#loc63 = loc("k"(#loc15))
#loc70 = loc(callsite(#loc20 at #loc21))
""".replace("\\\n", "")


def test_async_loads_are_read_from_ttgir():
    # cp.async (a pipelined loop's loads), TMA, and a helper's load at the helper's line; not the plain tt.load, nor
    # the wait, the commit or the local_load of a pipelined load
    assert ttir.async_load_lines(TTGIR) == [("k.py", 5), ("k.py", 17), ("k.py", 18), ("k.py", 86)]


SOURCE = """@triton.jit
def kernel(x_ptr, z_ptr, T):
    for start in tl.range(0, T, 16, num_stages=3):
        so_far = tl.load(
            z_ptr + start,
            mask=start < T)
        tl.store(z_ptr, so_far)
"""


def _cached(name: str, source: str) -> str:
    lines = source.splitlines(keepends=True)
    linecache.cache[name] = (len(source), None, lines, name)
    return name


def test_a_load_written_over_several_lines_is_one_statement():
    file = _cached("<grader pipelining test 1>", SOURCE)
    assert pipelining._statement(file, 4) == (4, 6)
    assert pipelining._statement(file, 5) == (4, 6)
    assert pipelining._statement(file, 3) == (3, 3)  # a loop's header alone, not its body
    assert pipelining._statement(file, 7) == (7, 7)


class _Launch:
    name = "kernel"


class _Recorder:
    def __init__(self, file: str):
        self.launches = [_Launch()]
        region = Region("z", 0, 4, 4, (4,))
        self.reloads = {0: {(file, 4): (region, 2, (0, 0, 0), (0, 0, 0), "so_far = tl.load(")}}


def test_a_load_the_compiler_makes_asynchronous_of_what_its_launch_stored_is_refused():
    file = _cached("<grader pipelining test 2>", SOURCE)
    recorder = _Recorder(file)
    report = pipelining.stale_load(recorder, lambda launch: {(file, 5)})  # the compiler's line: the pointer's
    assert report and "kernel loads z[2], which it stored in the same launch before this load" in report
    assert "drop num_stages" in report
    assert pipelining.stale_load(recorder, lambda launch: {(file, 7)}) is None  # another statement
    assert pipelining.stale_load(recorder, lambda launch: {("other.py", 4)}) is None
    assert pipelining.stale_load(recorder, lambda launch: None) is None  # not compiled here: the check's to say


class _Loads:
    """What note_load reads of a Recorder: this launch's stores and atomics per element."""

    def __init__(self):
        self.launches = [_Launch()]
        self.reloads = {}
        self.program = (1, 0, 0)
        self._programs_of_launch = [(0, 0, 0), (1, 0, 0)]
        self._stored_by, self._atomic_by = {}, {}


def test_only_a_load_of_what_the_launch_wrote_before_is_noted():
    recorder, region = _Loads(), Region("z", 0, 4, 4, (4,))
    pipelining.note_load(recorder, region, np.arange(4))  # nothing stored yet
    assert recorder.reloads == {}
    recorder._stored_by[region] = np.array([-1, -1, 1, -1])
    pipelining.note_load(recorder, region, np.array([0, 1]))  # not the stored element
    assert recorder.reloads == {}
    pipelining.note_load(recorder, region, np.array([1, 2, 3]))
    (line, note), = recorder.reloads[0].items()
    assert line[0] == __file__ and note[:3] == (region, 2, (1, 0, 0))
    other = Region("den", 64, 4, 4, (4,))
    recorder._atomic_by[other] = np.array([[-1, 0, -1, -1], [-1, 0, -1, -1]])
    recorder.reloads.clear()
    pipelining.note_load(recorder, other, np.array([1]))  # updated by an atomic before
    assert [note[:3] for note in recorder.reloads[0].values()] == [(other, 1, (0, 0, 0))]
