"""`python -m grader` as documented: selection, --file, --json, exit codes, and no tracebacks."""

import json

import pytest
from helpers import KERNELS, ROOT, requires_interpreter, run_cli, stub_text

from grader.course import registry

pytestmark = requires_interpreter


def test_bare_command_prints_the_progress_table():
    run = run_cli()
    assert run.returncode == 0, run.stderr
    for puzzle in registry.PUZZLES:
        assert puzzle.slug in run.stdout
    assert "Traceback" not in run.stdout + run.stderr


@pytest.mark.slow
def test_grading_a_solution_by_number_and_by_slug():
    by_number = run_cli("1", "--impl", "solutions")
    by_slug = run_cli("add", "--impl", "solutions")
    for run in (by_number, by_slug):
        assert run.returncode == 0, run.stdout + run.stderr
        assert "Solved" in run.stdout
    assert "interpreter mode" in by_number.stderr and "interpreter mode" not in by_number.stdout


def test_a_stub_is_not_started_with_exit_1_and_no_traceback(tmp_path):
    stub = tmp_path / "stub.py"
    stub.write_text(stub_text(registry.find(4)))
    run = run_cli("4", "--file", str(stub))
    assert run.returncode == 1
    assert "not started" in run.stdout and "not implemented yet" in run.stdout
    assert "Traceback" not in run.stdout + run.stderr


@pytest.mark.slow
def test_file_grades_a_submission_by_its_kernels(tmp_path):
    run = run_cli("6", "--file", str(KERNELS / "wrong" / "p06_two_pass.py"))
    assert run.returncode == 1
    assert "runs the code in" not in run.stderr and "practice" not in run.stdout  # nothing of the file runs
    assert "over budget: k read 2.00x per program" in run.stdout


@pytest.mark.slow
def test_own_launcher_grades_the_files_launcher_and_warns_once(tmp_path):
    run = run_cli("1", "--file", str(KERNELS / "right_own_launcher" / "p01_returns_a_slice.py"), "--own-launcher")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stderr.count("runs the code in") == 1 and "grade untrusted submissions by their kernels" in run.stderr
    assert "practice: your own launcher was graded" in run.stdout and "Solved" in run.stdout


@pytest.mark.slow
def test_json_output_follows_the_documented_schema():
    run = run_cli("2", "3", "--impl", "solutions", "--json", "--seed", "99")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["schema"] == "triton-attention-puzzles/grade/1" and data["seed"] == 99
    assert [r["puzzle"] for r in data["results"]] == [2, 3]
    for result in data["results"]:
        assert result["status"] == "passed" and result["seed"] == 99
        for case in result["cases"]:
            assert {"name", "passed", "reason", "errors", "message", "accesses"} <= set(case)


@pytest.mark.slow
def test_json_reports_failures_with_errors(tmp_path):
    wrong = tmp_path / "wrong.py"
    text = (ROOT / "solutions" / "p02_outer_add.py").read_text()
    wrong.write_text(text.replace("z = y[:, None] + x[None, :]", "z = y[:, None] - x[None, :]"))
    run = run_cli("2", "--file", str(wrong), "--json")
    assert run.returncode == 1
    case = json.loads(run.stdout)["results"][0]["cases"][0]
    assert case["passed"] is False and case["reason"] == "mismatch"
    assert {"index", "yours", "expected", "allowed"} <= set(case["errors"][0])


@pytest.mark.slow
def test_seed_replays_the_same_cases():
    first = json.loads(run_cli("3", "--impl", "solutions", "--json", "--seed", "4").stdout)
    second = json.loads(run_cli("3", "--impl", "solutions", "--json", "--seed", "4").stdout)
    strip = [[(c["name"], c["accesses"]) for c in r["cases"]] for r in (first["results"] + second["results"])]
    assert strip[0] == strip[1]


@pytest.mark.parametrize("args, complaint", [
    (["99"], "no puzzle '99'"),
    (["--all", "3"], "not both"),
    (["--file", "x.py"], "--file needs a puzzle"),
    (["1", "--timeout", "0"], "--timeout must be positive"),
    (["1", "--file", "missing.py"], "no such file"),
    (["1", "--file", "puzzles"], "is a directory"),
    (["--gradescope", "results.json"], "--gradescope needs a puzzle"),
    (["1", "--gradescope", "no/such/folder/results.json"], "its folder does not exist"),
])
def test_usage_errors_exit_2(args, complaint):
    run = run_cli(*args)
    assert run.returncode == 2
    assert complaint in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize("typed, meant", [("sofmax", "softmax_online"), ("flash", "flash_attention"),
                                          ("scater_add", "scatter_add"), ("Add", "add")])
def test_a_misspelt_puzzle_gets_a_suggestion(typed, meant):
    run = run_cli(typed)
    assert run.returncode == 2 and f"no puzzle {typed!r}. Did you mean {meant}? Choose one of: 1 (add)" in run.stderr


def test_help_shows_three_examples():
    run = run_cli("--help")
    examples = run.stdout.split("examples:")[1].split("exit status")[0]
    commands = [line.split()[:4] for line in examples.splitlines() if line.strip()]
    assert run.returncode == 0 and len(commands) == 3 and all(c[:3] == ["python", "-m", "grader"] for c in commands)


@pytest.mark.slow
@pytest.mark.heavy  # every solution graded through the CLI: minutes of one core
def test_all_solutions_pass_and_grading_is_recorded_for_the_table(tmp_path):
    results = tmp_path / "results.json"
    run = run_cli("--all", "--impl", "solutions", results=results)
    assert run.returncode == 0, run.stdout[-3000:]
    assert run.stdout.count("Solved") == len(registry.PUZZLES)
    assert f"{len(registry.PUZZLES)} of {len(registry.PUZZLES)} puzzles passed." in run.stdout
    table = run_cli("--impl", "solutions", results=results)
    assert table.stdout.count(" passed") >= len(registry.PUZZLES)


@pytest.mark.slow
def test_table_says_when_a_file_changed_since_its_grade(tmp_path):
    results = tmp_path / "results.json"
    run_cli("1", "--impl", "solutions", results=results)
    data = json.loads(results.read_text())
    data["solutions"]["1"]["sha256"] = "edited since"
    results.write_text(json.dumps(data))
    table = run_cli("--impl", "solutions", results=results)
    assert "changed since graded (was passed)" in " ".join(table.stdout.split())  # the status column may wrap


@pytest.mark.slow
def test_a_puzzle_named_twice_is_graded_once():
    run = run_cli("1", "add", "--impl", "solutions")
    assert run.returncode == 0 and run.stdout.count("Puzzle 1:") == 1
