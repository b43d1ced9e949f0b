"""Correct kernels that differ from the solutions pass: other strategies, and other block sizes."""

import dataclasses
import sys

import pytest
from helpers import KERNELS, by_puzzle, grade_file, requires_interpreter

from grader import grading, loader, registry

pytestmark = requires_interpreter

ALTERNATIVES = sorted(p.name for p in (KERNELS / "right").glob("p*.py"))


@pytest.mark.parametrize("name", ALTERNATIVES)
def test_alternative_strategy_passes(name):
    puzzle = registry.find(int(name[1:3]))
    result = grade_file(puzzle, KERNELS / "right" / name, seed=3)
    assert result.status == "passed", "\n".join(f"{c.name}: {c.reason}: {c.message}" for c in result.cases)


OTHER_BLOCKS = ({"B0": 1, "B1": 16, "BM": 16, "BN": 32, "BK": 32, "BQ": 16},
                {"B0": 16, "B1": 128, "BM": 64, "BN": 16, "BK": 16, "BQ": 32})


@pytest.mark.parametrize("puzzle", by_puzzle())
@pytest.mark.parametrize("blocks", OTHER_BLOCKS, ids=lambda b: "-".join(f"{k}{v}" for k, v in b.items()))
def test_solution_passes_with_other_block_sizes(puzzle, blocks):
    launcher = loader.load_launcher(puzzle, "solutions")
    for case in puzzle.cases[:3]:
        case = dataclasses.replace(case, blocks={k: v for k, v in blocks.items() if k in case.blocks})
        result = grading.run_case(puzzle, launcher, case, seed=5, device="cpu")
        assert result.passed, f"{case.name} {case.blocks}: {result.reason}: {result.message}"



@pytest.mark.puzzle7
def test_the_coo_scan_in_the_puzzle_7_solution_is_correct():
    """The deterministic O(N * E) approach the solution file shows beside the atomic one."""
    puzzle = registry.find(7)
    launcher = loader.load_launcher(puzzle, "solutions")
    scan = vars(sys.modules[launcher.__module__])["scatter_add_coo_scan"]
    for case in puzzle.cases[:3]:
        result = grading.run_case(puzzle, scan, dataclasses.replace(case, blocks={"BLOCK_E": 256}), 7, "cpu")
        assert result.passed, f"{case.name}: {result.reason}: {result.message}"
