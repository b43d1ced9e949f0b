"""The performance coach (grader.coach): its figures for solutions against hand counts, its lines in the report
and in --json, and the parent's refusal of figures a worker forged."""

import dataclasses
import json

import pytest
from helpers import KERNELS, ROOT, kernel_only_launcher, requires_interpreter, run_cli

from grader import coach, inprocess, transfer
from grader.course import graphs, registry
from grader.course.cases import make_inputs
from grader.judge import verdict
from grader.show import report
from grader.worker import loader

pytestmark = requires_interpreter


def _figures(number: int, case, launcher=None, puzzle=None, seed: int = 3, kernel_only=False) -> coach.Figures:
    """The coach's figures for one case (a Case, or a case's name) of a puzzle, graded in this process (the
    reference solution by default; `kernel_only`: the launcher is the puzzle's, running a file's kernels)."""
    puzzle = puzzle or registry.find(number)
    launcher = launcher or loader.load_launcher(puzzle, "solutions")
    case = next(c for c in puzzle.cases if c.name == case) if isinstance(case, str) else case
    result = inprocess.run_case(puzzle, launcher, case, seed, "cpu", timeout=3600,  # no test depends on speed
                                trusted_launcher=kernel_only)
    assert result.passed, f"{result.reason}: {result.message}"
    return coach.Figures(**result.coach)


@pytest.mark.puzzle1
def test_vector_add_spec_case_matches_a_hand_count():
    """N0=200, B0=32: 7 programs, each loading x and y and storing z through 32 lanes; the last has 8 in range."""
    f = _figures(1, "spec")
    assert (f.load_lanes, f.load_active) == (7 * 2 * 32, 2 * 200)
    assert (f.store_lanes, f.store_active) == (7 * 32, 200)
    assert (f.wide_loads, f.contiguous_loads) == (14, 14)
    assert f.bytes_moved == 3 * 200 * 4 == f.compulsory_bytes  # x and y read once, z written once, 4 bytes each
    assert (f.input_loads, f.input_elements) == (400, 400)
    assert (f.atomics, f.output_elements) == (0, 200)
    assert (f.programs, f.program_loads, f.busiest_program) == (7, 400, 64)
    lanes, traffic, coalescing = coach.advice(f, registry.find(1))
    assert "89.3%" in lanes and "72 of 672 masked off" in lanes  # 600 of 672 lanes did work
    assert "2,400 bytes moved, 1.00x the compulsory 2,400" in traffic and "1.00 loads per input element" in traffic
    assert "100.0%" in coalescing and "(14 of 14)" in coalescing
    assert "waits on memory" in traffic


@pytest.mark.puzzle11
def test_on_tensor_cores_the_coach_says_reloaded_tiles_are_the_design():
    f = _figures(11, registry.find(11).cases[0].name)
    traffic = coach.advice(f, registry.find(11))[1]
    assert "Tensor cores multiply far faster" in traffic and "waits on memory" not in traffic


@pytest.mark.puzzle4
@pytest.mark.puzzle5
@pytest.mark.parametrize("number, passes", [(4, 3), (5, 2)], ids=["three_loop", "online"])
def test_softmax_rereads_x_once_per_pass(number, passes):
    """N0=4, T=200: the three-loop softmax loads each x element three times, the online one twice."""
    f = _figures(number, "spec")
    assert f.input_elements == 4 * 200 and f.input_loads == passes * 4 * 200
    assert f"{passes}.00 loads per input element" in coach.advice(f, registry.find(number))[1]


@pytest.mark.puzzle7
def test_the_scatter_add_solution_shows_its_atomics():
    """molecules, H=4 heads of D=32: one atomic add per edge into num (H*D lanes) and into den (H lanes)."""
    puzzle = registry.find(7)
    case = puzzle.cases[0]
    f = _figures(7, case.name, seed=5)
    edges = make_inputs(puzzle.spec, case, 5)[1]["E"]
    assert edges and f.atomics == edges * (4 * 32 + 4)
    lines = coach.advice(f, puzzle)
    assert len(lines) == 5 and lines[3].startswith(f"atomics: {f.atomics:,}")
    assert lines[4].startswith("imbalance")


@pytest.mark.puzzle8
@pytest.mark.slow
def test_a_coo_scan_against_csc_on_a_hub():
    """A hub with 90% of the edges, H=4 heads of D=32, one node per program. CSC: the hub's program loads its slots,
    their features and scores, far above the mean. A COO scan (it fails the index budget: graded here without
    budgets) still loads the hub's features in the hub's program, and on top every program loads all E slots of
    edge_id through mostly masked-off lanes: a flatter ratio, bought with N * E useless loads."""
    puzzle = registry.find(8)
    case = next(c for c in puzzle.cases if c.name == "hub with 90% of the edges")
    # the case's graph at half its nodes (30, about 900 edges): the scan's N * E loads dominate this test's time
    case = dataclasses.replace(case, blocks=dict(case.blocks, NODES_PER_PROGRAM=1),
                               graph=lambda g: graphs.with_hub(graphs.random_graph(30, 3, g), 0.9, g, hub=0))
    inputs, dims = make_inputs(puzzle.spec, case, 3)
    nodes, edges, row = dims["N"], dims["E"], 4 * 32 + 4  # a slot's features and scores
    hub = int(inputs["col_ptr"].diff().max())
    csc = _figures(8, case, seed=3, puzzle=puzzle)
    scan = kernel_only_launcher(puzzle, KERNELS / "wrong" / "p08_coo_scan.py")
    coo = _figures(8, case, launcher=scan, puzzle=dataclasses.replace(puzzle, budgets=()), seed=3, kernel_only=True)
    # per program: its 2 col_ptr bounds (the scan also col_ptr[N] = E, where it ends), then its slots (CSC) or all E
    # of them (the scan), and its slots' rows
    assert csc.program_loads == 2 * nodes + edges * (1 + row) and csc.busiest_program == 2 + hub * (1 + row)
    assert coo.program_loads == nodes * (3 + edges) + edges * row and coo.busiest_program == 3 + edges + hub * row

    def imbalance(f):
        return f.busiest_program / (f.program_loads / f.programs)

    assert csc.programs == coo.programs == nodes and imbalance(csc) > imbalance(coo) > 10
    assert coo.load_active / coo.load_lanes < 0.05 < 0.8 < csc.load_active / csc.load_lanes


def _solved(number: int) -> verdict.PuzzleResult:
    puzzle = registry.find(number)
    return inprocess.grade(puzzle, loader.load_launcher(puzzle, "solutions"), 0, "cpu", "solutions", "interpreter",
                         timeout=3600)


@pytest.mark.puzzle2
def test_the_report_of_a_solved_puzzle_shows_the_coach_on_its_largest_case():
    result = _solved(2)
    text = report.format_result(result, "rerun", "replay")
    assert "coach, on case 'large' (N0=1000, N1=700; B0=128, B1=64):" in text
    for topic in ("lanes:", "traffic:", "coalescing:"):
        assert f"    - {topic}" in text
    assert "imbalance" not in text and "atomics" not in text  # not a graph puzzle; no atomics
    data = result.to_json()["coach"]
    assert data["case"] == "large" and data["passed"] and len(data["lines"]) == 3
    assert data["figures"]["output_elements"] == 1000 * 700


@pytest.mark.puzzle2
def test_natively_the_coach_says_it_needs_the_interpreter():
    result = _solved(2)
    native = dataclasses.replace(result, mode="native",
                                 cases=[dataclasses.replace(c, coach=None) for c in result.cases])
    assert coach.NEEDS_INTERPRETER in report.format_result(native, "rerun", "replay")
    assert native.to_json()["coach"] is None


@pytest.mark.slow
def test_a_failed_puzzle_shows_the_coach_only_when_asked(tmp_path):
    wrong = tmp_path / "wrong.py"
    text = (ROOT / "solutions" / "p02_outer_add.py").read_text()
    wrong.write_text(text.replace("z = y[:, None] + x[None, :]", "z = y[:, None] - x[None, :]"))
    plain = run_cli("2", "--file", str(wrong), "--seed", "1")
    asked = run_cli("2", "--file", str(wrong), "--seed", "1", "--coach")
    assert plain.returncode == asked.returncode == 1
    assert "coach, on case" not in plain.stdout
    # the first failing case, the one --map draws (not the largest: a failing puzzle is coached where it fails)
    assert "coach, on case 'spec' (N0=50, N1=40; B0=16, B1=16, which failed):" in asked.stdout, asked.stdout


@pytest.mark.puzzle1
@pytest.mark.slow
def test_json_carries_the_coach():
    run = run_cli("1", "--impl", "solutions", "--json", "--seed", "2")
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)["results"][0]
    assert result["coach"]["case"] == "large" and result["coach"]["lines"][0].startswith("lanes: ")
    assert all(case["coach"]["input_elements"] == 2 * case["dims"]["N0"] for case in result["cases"])


def _execution_with(figures) -> dict:
    data = json.loads(json.dumps(transfer.execution_to_json(transfer.Execution())))
    data["coach"] = figures
    return data


def _honest() -> dict:
    return dict.fromkeys(coach.FIELDS, 1)


@pytest.mark.parametrize("change", [
    {"load_lanes": -1}, {"bytes_moved": 1.5}, {"atomics": True}, {"programs": "7"}, {"atomics": 1 << 60},
    {"load_active": 2},  # more active lanes than lanes
    {"contiguous_loads": 2},  # more coalesced loads than loads of several lanes
    {"busiest_program": 2},  # one program loading more than all of them
    {"verdict": 1},
], ids=["negative", "float", "bool", "text", "huge", "active_over_lanes", "contiguous_over_wide",
        "busiest_over_all", "unknown_field"])
def test_a_malformed_coach_payload_is_refused(change):
    assert transfer.execution_from_json(_execution_with(_honest())).coach == _honest()  # the control passes
    with pytest.raises(transfer.Malformed):
        transfer.execution_from_json(_execution_with({**_honest(), **change}))


def test_a_coach_payload_missing_a_field_is_refused():
    figures = _honest()
    del figures["atomics"]
    with pytest.raises(transfer.Malformed):
        transfer.execution_from_json(_execution_with(figures))
    with pytest.raises(transfer.Malformed):
        transfer.execution_from_json(_execution_with([1, 2, 3]))
