"""Every reference solution passes every case, and its stub is reported as not started."""

import ast
import inspect
import textwrap

import pytest
from helpers import ROOT, by_puzzle, grade_file, grade_text, requires_interpreter, stub_text

from grader import registry

pytestmark = requires_interpreter


@pytest.mark.parametrize("puzzle", by_puzzle())
@pytest.mark.parametrize("seed", [0, 12345])
def test_solution_passes_every_case(puzzle, seed):
    result = grade_file(puzzle, ROOT / "solutions" / f"{puzzle.module}.py", seed=seed)
    failures = [f"{c.name}: {c.reason}: {c.message}" for c in result.cases if not c.passed]
    assert result.status == "passed", "\n".join(failures)
    assert len(result.cases) == len(puzzle.cases)


@pytest.mark.parametrize("puzzle", by_puzzle())
def test_stub_is_not_started(puzzle, tmp_path):
    result = grade_text(puzzle, stub_text(puzzle), tmp_path)
    assert result.status == "not_started"
    assert result.cases[-1].message.startswith("not implemented yet")
    assert len(result.cases) == 1  # grading stops at the first case


EXPECTED_READS = {"add": {"x": 1.0, "y": 1.0}, "row_sum": {"x": 1.0}, "softmax_three_loop": {"x": 3.0},
                  "softmax_online": {"x": 2.0}, "csc_gather": {"v_scaled": 1.0, "score": 1.0, "edge_id": 1.0},
                  "graph_attention": {"q": 1.0, "e": 1.0, "edge_id": 1.0}}


@pytest.mark.parametrize("puzzle", by_puzzle())
def test_access_counts_match_the_algorithm(puzzle):
    """The solutions move exactly the traffic their docstrings promise."""
    result = grade_file(puzzle, ROOT / "solutions" / f"{puzzle.module}.py")
    counts = {row["name"]: row for row in result.cases[0].accesses}
    for output in puzzle.outputs:
        assert counts[output]["written"] == 1.0
    for name, times in EXPECTED_READS.get(puzzle.slug, {}).items():
        assert counts[name]["read"] == times


def test_registry_is_consistent():
    numbers = [p.number for p in registry.PUZZLES]
    assert numbers == list(range(1, len(numbers) + 1))
    for puzzle in registry.PUZZLES:
        names = [c.name for c in puzzle.cases]
        assert len(set(names)) == len(names), f"duplicate case names in puzzle {puzzle.number}"
        if any("B0" in c.blocks for c in puzzle.cases):
            assert any(c.blocks["B0"] > 1 for c in puzzle.cases), "some case must use B0 > 1"
        if any(c.blocks for c in puzzle.cases):  # puzzle 13's launcher has no block size: a TCB is 16 x 16
            assert len({tuple(sorted(c.blocks.items())) for c in puzzle.cases}) >= 2, "two block settings at least"
        for path in (ROOT / "solutions" / f"{puzzle.module}.py", ROOT / "puzzles" / f"{puzzle.module}.py"):
            assert path.is_file(), path


@pytest.mark.parametrize("puzzle", by_puzzle())
def test_docstring_shows_the_graders_own_spec(puzzle):
    """The spec a learner reads is, to the character, the one the grader runs."""
    spec = textwrap.indent(inspect.getsource(puzzle.spec), "    ")
    for where in ("solutions", "puzzles"):
        docstring = ast.get_docstring(ast.parse((ROOT / where / f"{puzzle.module}.py").read_text()), clean=False)
        assert spec in docstring, f"{where}/{puzzle.module}.py shows a spec that differs from grader/specs.py"
