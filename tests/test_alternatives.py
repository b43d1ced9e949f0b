"""Correct kernels that differ from the solutions pass: other strategies, and other block sizes.

tests/kernels/right/ holds kernels alone, graded as a submission is (kernel-only, under the puzzle's launcher);
tests/kernels/right_own_launcher/ holds alternatives whose idea is the launcher (a padded buffer returned as a
slice or a view, blocks of its own naming, autotuning), which pass on the practice path, `--own-launcher`.
"""

import contextlib
import dataclasses
import inspect
import sys

import pytest
from helpers import KERNELS, by_puzzle, grade_file, requires_interpreter

from grader import inprocess
from grader.course import registry
from grader.worker import instrument, loader

pytestmark = requires_interpreter

ALTERNATIVES = sorted(p.name for p in (KERNELS / "right").glob("p*.py"))
# Their launchers are part of their idea (a persistent grid of NUM_SMS programs; tiles smaller than the case's):
# graded kernel-only under the puzzle's launcher here, with theirs in tests/test_traffic_rules.py
OWN_IDEA_IN_THE_LAUNCHER = {"p05_persistent_num_sms.py", "p11_small_tiles.py"}
OWN_LAUNCHERS = sorted(p.name for p in (KERNELS / "right_own_launcher").glob("p*.py"))


@pytest.mark.parametrize("name", ALTERNATIVES)
def test_alternative_strategy_passes(name):
    puzzle = registry.find(int(name[1:3]))
    result = grade_file(puzzle, KERNELS / "right" / name, seed=3)
    assert result.status == "passed", "\n".join(f"{c.name}: {c.reason}: {c.message}" for c in result.cases)
    left_out = ("not run",) if name in OWN_IDEA_IN_THE_LAUNCHER else ("not run", "your launcher")
    assert result.trusted and not [n for n in result.notices if n.startswith(left_out)], \
        result.notices  # the file is kernels only: nothing of it is left out


@pytest.mark.parametrize("name", OWN_LAUNCHERS)
def test_alternative_launcher_passes_on_the_practice_path(name):
    puzzle = registry.find(int(name[1:3]))
    result = grade_file(puzzle, KERNELS / "right_own_launcher" / name, seed=3, own_launcher=True)
    assert result.status == "passed", "\n".join(f"{c.name}: {c.reason}: {c.message}" for c in result.cases)
    assert not result.trusted


def test_an_autotuned_kernel_is_refused_kernel_only():
    """The puzzle's launcher passes the block sizes, so autotune has nothing to choose; the refusal says so, and
    where to go instead."""
    result = grade_file(1, KERNELS / "right_own_launcher" / "p01_autotuned.py")
    (case,) = result.cases
    assert case.reason == "error" and "@autotune on autotuned_add_kernel: the puzzle's launcher passes the block " \
        "sizes" in case.message and "`--own-launcher` grades your own launcher, for practice" in case.message, \
        case.message


# Block sizes none of the cases use, for every launcher argument that sets one. Graph launchers take BLOCK_E and,
# from puzzle 8 on, NODES_PER_PROGRAM: 3 nodes per program, where N is rarely a multiple of 3.
OTHER_BLOCKS = ({"B0": 1, "B1": 16, "BM": 16, "BN": 32, "BK": 32, "BQ": 16, "BLOCK_E": 4, "NODES_PER_PROGRAM": 3,
                 "BLOCK_V": 512},
                {"B0": 16, "B1": 128, "BM": 64, "BN": 16, "BK": 16, "BQ": 32, "BLOCK_E": 64, "NODES_PER_PROGRAM": 1,
                 "BLOCK_V": 2048})
WITH_BLOCK_SIZES = [p for p in registry.PUZZLES if any(c.blocks for c in p.cases)]  # not 13: a TCB is 16 x 16


@contextlib.contextmanager
def _launches_kept(kept: list):
    """Grading as usual, with every kernel launch it records also appended to `kept`."""
    recording = instrument.recording

    @contextlib.contextmanager
    def keeping(maps=False):
        with recording(maps) as recorder:
            yield recorder
            if recorder is not None:
                kept.extend(recorder.launches)

    instrument.recording = keeping
    try:
        yield
    finally:
        instrument.recording = recording


@pytest.mark.parametrize("puzzle", by_puzzle(WITH_BLOCK_SIZES))
@pytest.mark.parametrize("blocks", OTHER_BLOCKS, ids=lambda b: "-".join(f"{k}{v}" for k, v in b.items()))
@pytest.mark.slow
def test_solution_passes_with_other_block_sizes(puzzle, blocks):
    launcher = loader.load_launcher(puzzle, "solutions")
    takes = {k: v for k, v in blocks.items() if k in inspect.signature(launcher).parameters}
    assert takes, f"the launcher of puzzle {puzzle.number} takes none of {sorted(blocks)}"
    for case in puzzle.cases[:3]:
        case, launches = dataclasses.replace(case, blocks=takes), []
        with _launches_kept(launches):
            result = inprocess.run_case(puzzle, launcher, case, seed=5, device="cpu")
        assert result.passed, f"{case.name} {case.blocks}: {result.reason}: {result.message}"
        # each size reached a kernel under its own name: none was left at the kernel's default
        reached = {name: {launch.bound[name] for launch in launches if name in launch.bound} for name in takes}
        assert reached == {name: {value} for name, value in takes.items()}, \
            f"{case.name}: the launcher was given {takes}, its kernels got {reached}"


@pytest.mark.puzzle7
@pytest.mark.slow
def test_the_coo_scan_in_the_puzzle_7_solution_is_correct():
    """The deterministic O(N * E) approach the solution file shows beside the atomic one."""
    puzzle = registry.find(7)
    launcher = loader.load_launcher(puzzle, "solutions")
    scan = vars(sys.modules[launcher.__module__])["scatter_add_coo_scan"]
    for case in puzzle.cases[:3]:
        result = inprocess.run_case(puzzle, scan, dataclasses.replace(case, blocks={"BLOCK_E": 256}), 7, "cpu")
        assert result.passed, f"{case.name}: {result.reason}: {result.message}"


@pytest.mark.parametrize("header, encoding", [
    ("\ufeff", "utf-8"),  # the byte-order mark a Windows editor writes ("UTF-8 with BOM")
    ("# -*- coding: latin-1 -*-\n# café\n", "latin-1"),  # a coding line (PEP 263) and a character in its encoding
])
def test_a_file_python_reads_is_read(tmp_path, header, encoding):
    """The judge reads a file's text as Python does (the attacker's review of 2026-12-03 found both refused)."""
    solution = next((KERNELS.parent.parent / "solutions").glob("p01_*.py")).read_text(encoding="utf-8")
    path = tmp_path / "p01_add.py"
    path.write_bytes((header + solution).encode(encoding))
    result = grade_file(1, path)
    assert result.status == "passed", "\n".join(f"{c.name}: {c.reason}: {c.message}" for c in result.cases)


def test_bytes_a_coding_line_cannot_read_are_refused_by_name(tmp_path):
    path = tmp_path / "p01_add.py"
    path.write_bytes(b"# -*- coding: nonsense -*-\nx = 1\n")
    (case,) = grade_file(1, path).cases
    assert (case.name, case.reason) == ("import", "error")
    assert "unknown encoding: nonsense: save it as UTF-8" in case.message, case.message
