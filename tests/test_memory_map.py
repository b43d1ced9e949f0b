"""Access maps (recorded by grader/worker/recording.py, sent as grader/map_transfer.py, drawn by
grader/show/memory_map.py): each picture of a small known kernel is compared as arrays with the picture worked out by
hand; the text, the heat map and the PNG are produced; ``--map`` shows what a stub, a failing
launcher, a crash and an out-of-bounds kernel did up to the failure, without a traceback.

CI runs this file on the newest triton and again on triton 3.6.
"""

import dataclasses
from collections import Counter

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from helpers import KERNELS, ROOT, kernel_only_launcher, requires_interpreter, run_cli, stub_text

from grader.course import graphs, registry
from grader.map_transfer import NEEDS_INTERPRETER, Maps
from grader.show import memory_map
from grader.show.memory_map import render_heat, render_text
from grader.worker import execute, instrument, loader, recording
from grader.worker.recording import maps_of

pytestmark = requires_interpreter

MAPS = KERNELS / "maps"


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N, B: tl.constexpr):
    offsets = tl.program_id(0) * B + tl.arange(0, B)
    mask = offsets < N
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def store_first_kernel(z_ptr, FIRST, B: tl.constexpr):
    offsets = tl.arange(0, B)
    tl.store(z_ptr + offsets, offsets.to(tl.float32), mask=offsets < FIRST)


@triton.jit
def both_store_kernel(z_ptr, B: tl.constexpr):
    """Every program stores its own id into the same B elements: a race."""
    offsets = tl.arange(0, B)
    tl.store(z_ptr + offsets, tl.zeros([B], tl.float32) + tl.program_id(0))


def _maps(kernel, grid, inputs: dict, *args, **kwargs) -> Maps:
    """The maps of one launch, the tensors in `inputs` named as the grader names its inputs."""
    with instrument.recording(maps=True) as recorder:
        for name, value in inputs.items():
            recorder.watch(name, value)
        kernel[grid](*args, **kwargs)
    return maps_of(recorder)


def _pictures(maps: Maps) -> dict:
    return {picture.label: picture for picture in maps.pictures}


def test_two_programs_of_four_lanes_over_six_elements():
    x, y, z = torch.arange(6.0), torch.ones(6), torch.empty(6)
    maps = _maps(add_kernel, (2,), {"x": x, "y": y}, x, y, z, 6, B=4)
    pictures = _pictures(maps)
    assert maps.programs == ["(0,0,0)", "(1,0,0)"]
    for name in "xyz":
        picture = pictures[name]
        np.testing.assert_array_equal(picture.owner, [[0, 0, 0, 0, 1, 1]])
        assert picture.cell == (1, 1) and picture.present.all()
        assert not picture.masked.any()  # the two masked-off lanes point past the end: counted, not drawn
        assert not picture.unwritten.any() and not picture.raced.any()
    np.testing.assert_array_equal(pictures["x"].reads, [[1] * 6])
    np.testing.assert_array_equal(pictures["z"].writes, [[1] * 6])
    assert (pictures["x"].role, pictures["z"].role) == ("input", "output")
    assert pictures["x"].summary == ("x: program (0,0,0) read x[0..3]; program (1,0,0) read x[4..5]; 2 masked-off "
                                     "lanes in program (1,0,0)")
    assert pictures["z"].summary.startswith("z: program (0,0,0) wrote z[0..3]; program (1,0,0) wrote z[4..5]")
    text = render_text(maps)
    assert "|aaaabb|" in text and "b program (1,0,0)" in text and "\x1b[" not in text
    assert "\x1b[" in render_text(maps, colour=True)


def test_an_output_stored_in_part_shows_the_elements_never_written():
    z = torch.empty(8)
    picture = _pictures(_maps(store_first_kernel, (1,), {}, z, 5, B=8))["z"]
    np.testing.assert_array_equal(picture.unwritten, [[False] * 5 + [True] * 3])
    np.testing.assert_array_equal(picture.owner, [[0] * 5 + [-1] * 3])
    assert "z[5..7] never written" in picture.summary
    assert "".join(memory_map.cell_chars(picture)[0]) == "aaaaa???"


def test_programs_storing_one_element_race_and_are_drawn_apart():
    z = torch.empty(4)
    maps = _maps(both_store_kernel, (2,), {}, z, B=4)
    picture = _pictures(maps)["z"]
    np.testing.assert_array_equal(picture.raced, [[True] * 4])
    np.testing.assert_array_equal(picture.writes, [[2] * 4])
    np.testing.assert_array_equal(picture.owner, [[1] * 4])  # the last writer
    assert "z[0..3] raced" in picture.summary
    assert "|!!!!|" in render_text(maps) and "! race" in render_text(maps)


def test_a_long_tensor_is_cut_into_consecutive_chunks():
    """1000 elements at 4 per cell: 250 cells in rows of 64; each cell of 4 elements lies in one 128-lane program."""
    x, y, z = torch.zeros(1000), torch.zeros(1000), torch.empty(1000)
    picture = _pictures(_maps(add_kernel, (8,), {"x": x, "y": y}, x, y, z, 1000, B=128))["x"]
    assert picture.cell == (1, 4) and picture.owner.shape == (4, 64)
    expected = np.full(4 * 64, -1)
    expected[:250] = np.arange(250) * 4 // 128
    np.testing.assert_array_equal(picture.owner.ravel(), expected)
    np.testing.assert_array_equal(picture.present.ravel(), np.arange(256) < 250)


def test_a_million_elements_fit_in_a_few_rows_of_cells():
    """The picture of a large tensor is built without a loop over elements; here from a synthetic record."""
    region = instrument.Region("x", 0, 1000 * 1000, 4, (1000, 1000))
    region.map = instrument.RegionMap.empty(region.numel)
    region.map.reader[:] = np.arange(region.numel) // 1000 // 100  # ten programs of 100 rows each
    region.map.reads[:] = 1
    region.map.reads[-1] = 7
    picture = recording.picture_of(region, [f"({p},0,0)" for p in range(10)])
    assert picture.cell == (42, 16) and picture.owner.shape == (24, 63)
    for cell_row in range(24):  # the program owning most of the cell's 42 rows (the smaller one on a tie)
        rows = range(42 * cell_row, min(42 * cell_row + 42, 1000))
        counts = Counter(row // 100 for row in rows)
        expected = min(counts, key=lambda program: (-counts[program], program))
        assert (picture.owner[cell_row] == expected).all(), cell_row
    assert picture.reads.max() == 7 and picture.reads[-1, -1] == 7


def _case_maps(number: int, case=0, impl="solutions", file=None) -> Maps:
    """The maps of a puzzle's case (its index, or a Case) graded as the CLI would run it (a file kernel-only)."""
    puzzle = registry.find(number)
    launcher = kernel_only_launcher(puzzle, file) if file else loader.load_launcher(puzzle, impl)
    keep = []
    execute.execute(puzzle, launcher, puzzle.cases[case] if isinstance(case, int) else case, 1, "cpu", keep=keep,
                    trusted_launcher=file is not None)
    return maps_of(keep[0], puzzle.outputs)


def _solution_maps(number: int, case: int = 0, impl="solutions", file=None) -> dict:
    return _pictures(_case_maps(number, case, impl, file))


@pytest.mark.puzzle4
@pytest.mark.puzzle5
def test_three_loop_softmax_reads_x_three_times_and_online_softmax_twice():
    three_loop, online = _solution_maps(4)["x"], _solution_maps(5)["x"]
    assert (three_loop.reads[three_loop.present] == 3).all()
    assert (online.reads[online.present] == 2).all()
    heat = render_heat(Maps(["(0,0,0)"], [three_loop]))
    assert "digit = times read" in heat and "|333" in heat


@pytest.mark.puzzle8
def test_csc_gathers_each_edge_id_once_where_a_scan_reads_it_once_per_program():
    """On a graph of 12 nodes (a scan on the puzzle's own graphs runs past the time limit in the interpreter)."""
    puzzle = registry.find(8)
    tiny = dataclasses.replace(puzzle.cases[0], name="tiny", graph=lambda g: graphs.banded(12, 3, g, width=4))
    csc = _case_maps(8, case=tiny)
    scan = _case_maps(8, case=tiny, impl="puzzles", file=str(KERNELS / "wrong" / "p08_coo_scan.py"))
    csc_reads, scan_reads = _pictures(csc)["edge_id"], _pictures(scan)["edge_id"]
    assert csc_reads.shape == (36,) and len(scan.programs) == 12
    np.testing.assert_array_equal(csc_reads.reads, np.ones((1, 36)))
    np.testing.assert_array_equal(scan_reads.reads, np.full((1, 36), 12))
    assert "an element read up to 12 times" in scan_reads.summary


def test_the_png_is_written(tmp_path):
    maps = _case_maps(1)
    for heat in (False, True):
        path = tmp_path / f"map{heat}.png"
        assert memory_map.save_png(maps, str(path), heat) == f"map written to {path}"
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_maps_need_the_interpreter(capsys):
    assert memory_map.command([registry.find(1)], [""], False, "solutions", None, 0, 10.0, interpret=False) == 2
    said = capsys.readouterr().err
    assert "maps need the interpreter" in said and "python -m grader 1 --map --interpret" in said


def _no_traceback(run):
    assert "Traceback" not in run.stdout + run.stderr, run.stdout + run.stderr


@pytest.mark.puzzle1
@pytest.mark.slow
def test_map_of_a_stub_shows_outputs_never_written(tmp_path):
    """On the practice path the stub's launcher runs and the map shows z unwritten; kernel-only, a stub's kernels
    are not run at all, and the map says why."""
    stub = tmp_path / "stub.py"
    stub.write_text(stub_text(registry.find(1)))
    run = run_cli("1", "--file", str(stub), "--map", "spec", "--own-launcher")
    _no_traceback(run)
    assert run.returncode == 1
    assert "stopped: not started" in run.stdout and "z[0..199] never written" in run.stdout
    assert "|" + "?" * 64 + "|" in run.stdout
    kernel_only = run_cli("1", "--file", str(stub), "--map", "spec")
    _no_traceback(kernel_only)
    assert kernel_only.returncode == 1
    assert "stopped: not run: not implemented yet: your kernels are the stub's" in kernel_only.stdout


@pytest.mark.puzzle1
@pytest.mark.slow
def test_map_of_a_failing_launcher_shows_the_half_it_did(tmp_path):
    """The launcher fails: its own launcher runs on the practice path only."""
    run = run_cli("1", "--file", str(MAPS / "p01_fails_after_its_kernel.py"), "--map", "1", "--map",
                  str(tmp_path / "map.png"), "--own-launcher")
    _no_traceback(run)
    assert "stopped: error: " in run.stdout and "the second half was never launched" in run.stdout
    assert "program (0,0,0) wrote z[0..31]" in run.stdout and "z[100..199] never written" in run.stdout
    assert f"map written to {tmp_path / 'map.png'}" in run.stdout
    assert (tmp_path / "map.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.puzzle1
@pytest.mark.slow
def test_map_of_a_process_that_dies_says_so_in_a_line():
    run = run_cli("1", "--file", str(KERNELS / "wrong" / "p01_crashes.py"), "--map", "single element", "--own-launcher")
    _no_traceback(run)
    assert run.returncode == 1
    assert "killed by SIGABRT before it sent its record back" in run.stdout


@pytest.mark.puzzle1
@pytest.mark.slow
def test_map_of_an_out_of_bounds_kernel_defaults_to_its_first_failing_case():
    run = run_cli("1", "--file", str(MAPS / "p01_out_of_bounds.py"), "--map", "--seed", "3")
    _no_traceback(run)
    assert run.returncode == 1
    assert 'mapping case "spec", the first that fails' in run.stderr
    assert "stopped: out of bounds: out-of-bounds load on x" in run.stdout
    # program (6,0,0)'s load that failed: its 8 lanes inside x are drawn, its 24 past the end are in the stop line
    assert "x: program (0,0,0) read x[0..31]; program (1,0,0) read x[32..63]; ... (7 programs in all)" in run.stdout
    assert "  192 |gggggggg  " in run.stdout
    assert "z[192..199] never written" in run.stdout


@pytest.mark.slow
def test_the_cli_rejects_an_unknown_case():
    run = run_cli("1", "--impl", "solutions", "--map", "no such case")
    _no_traceback(run)
    assert run.returncode == 2 and "choose one of: 1 (spec)" in run.stderr


@pytest.mark.slow
def test_the_readme_example_is_current():
    """The README pastes a real map; it must still be what the grader draws."""
    run = run_cli("1", "--file", str(MAPS / "p01_out_of_bounds.py"), "--map", "spec", "--seed", "1")
    readme = (ROOT / "README.md").read_text()
    assert run.stdout.strip() and run.stdout.strip() in readme


@pytest.mark.puzzle1
def test_show_draws_a_case_in_this_process():
    """grader.show returns the drawing: its text is the map a terminal shows, its PNG the picture Jupyter shows."""
    import grader

    launcher = loader.load_launcher(registry.find(1), "solutions")
    drawing = grader.show(1, launcher, case="ragged")
    said = repr(drawing)
    assert "z: program (0,0,0) wrote z[0..127]; program (1,0,0) wrote z[128..255]; ... (8 programs in all)" in said
    assert str(drawing) == said and drawing._repr_png_()[:8] == b"\x89PNG\r\n\x1a\n"
    heat = grader.show(1, launcher, case=2, heat=True)
    assert "x (input, 1000; 1 cell = 4 consecutive elements): reads per element" in str(heat)
    assert heat._repr_png_()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_drawing_with_nothing_to_draw_is_its_text():
    """A heat map of a kernel that read nothing (a stub), or a map outside the interpreter: no PNG, so Jupyter shows
    the text."""
    unread = memory_map.Drawing(_maps(store_first_kernel, (1,), {}, torch.empty(8), 5, B=8), heat=True)
    assert unread._repr_png_() is None and "z: not read" in repr(unread)
    outside = memory_map.Drawing(Maps([], note=NEEDS_INTERPRETER.format(number=1)))
    assert outside._repr_png_() is None and "maps need the interpreter" in repr(outside)


@triton.jit
def overlapping_add_kernel(x_ptr, y_ptr, z_ptr, N, B: tl.constexpr):
    """Each program adds 2B elements from pid * B on: neighbours overlap, and each writes what the next also writes."""
    offsets = tl.program_id(0) * B + tl.arange(0, 2 * B)
    mask = offsets < N
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def test_overlapping_programs_are_summarised_by_everything_each_touched():
    """The map's letters show one owner per element; the summary says what each program did, overlap included."""
    x, y, z = torch.arange(12.0), torch.ones(12), torch.empty(12)
    maps = _maps(overlapping_add_kernel, (3,), {"x": x, "y": y}, x, y, z, 12, B=4)
    pictures = _pictures(maps)
    assert pictures["x"].summary == ("x: program (0,0,0) read x[0..7]; program (1,0,0) read x[4..11]; ... (3 programs "
                                     "in all); an element read up to 2 times; 4 masked-off lanes in program (2,0,0)")
    assert "program (1,0,0) wrote z[4..11]" in pictures["z"].summary
    assert "an element written up to 2 times" in pictures["z"].summary


def test_a_long_ending_is_kept_whole_and_wrapped():
    """Issue 27: a race's message (puzzle 2 with a wrong row stride) was cut at 300 characters on the "stopped:" line;
    a note up to NOTE_LIMIT arrives whole, and the text map wraps it."""
    note = "race: " + "programs (0, 0, 0) and (1, 0, 0) both wrote z[3, 7] " * 12 + "THE END"
    maps = memory_map.Maps.from_json({"programs": [], "pictures": [], "title": "", "note": note})
    text = memory_map.render_text(maps)
    assert text.split()[-2:] == ["THE", "END"] and all(len(line) <= 110 for line in text.splitlines()), text
