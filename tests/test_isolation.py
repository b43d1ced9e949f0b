"""The grader's verdict holds against a submission that games it: the learner's code runs in a worker that
sends data, the grader judges; nothing the worker starts outlives grading; a hanging import is a timeout;
and a --file submission that reaches into the grader is refused before it runs.

Each submission is copied to tmp_path and graded with `python -m grader ... --file` in a child process.
"""

import json
import shutil
import time
from pathlib import Path

import pytest
from helpers import KERNELS, ROOT, requires_interpreter, run_cli, run_in_scratch_repository

from grader import transfer
from grader.judge import submission

pytestmark = requires_interpreter

CHEATING = KERNELS / "cheating"


def _grade(name, tmp_path, *options):
    """Grade puzzle 1 with a copy of tests/kernels/cheating/NAME in tmp_path: (run, the copy, the JSON report)."""
    submission = tmp_path / name
    shutil.copy(CHEATING / name, submission)
    run = run_cli("1", "--file", str(submission), "--json", *options, timeout=300)
    report = json.loads(run.stdout) if run.stdout.strip() else None
    return run, submission, report


def _cases(report):
    return report["results"][0]["cases"]


def _alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.slow
def test_a_hanging_import_is_a_timeout_that_names_the_import(tmp_path):
    run, _, report = _grade("p01_hangs_at_import.py", tmp_path, "--timeout", "2")
    assert run.returncode == 1, run.stderr
    case, *rest = _cases(report)
    assert case["name"] == "import" and case["reason"] == "timeout"
    assert "while importing" in case["message"] and "module level" in case["message"]
    assert {c["reason"] for c in rest} <= {"skipped"}


@pytest.mark.slow
def test_a_forked_child_holding_the_event_pipe_does_not_hang_the_grader(tmp_path):
    run, submission, report = _grade("p01_fork_holds_pipe.py", tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert report["results"][0]["status"] == "passed"
    assert not _alive(int(submission.with_suffix(".pid").read_text()))


@pytest.mark.slow
def test_a_daemon_does_not_outlive_the_grader(tmp_path):
    run, submission, _ = _grade("p01_leaves_a_daemon.py", tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert not _alive(int(submission.with_suffix(".pid").read_text()))
    time.sleep(6)  # not a time limit: a surviving daemon would write its file 3 s after the grading process ended
    assert not submission.with_suffix(".late").exists()


@pytest.mark.slow
def test_the_worker_runs_in_a_fresh_directory_that_is_removed(tmp_path):
    run, submission, _ = _grade("p01_notes_its_directory.py", tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    where = Path(submission.with_suffix(".cwd").read_text())
    assert where != ROOT and where != Path.cwd() and not where.exists()


@pytest.mark.slow
def test_forged_events_are_a_crashed_case_never_a_pass(tmp_path):
    run, _, report = _grade("p01_forges_a_result.py", tmp_path)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert report["results"][0]["status"] == "failed"
    crashed = [c for c in _cases(report) if c["reason"] == "crashed"]
    assert crashed and all("malformed event" in c["message"] for c in crashed)
    assert not any(c["passed"] for c in _cases(report))


@pytest.mark.slow
def test_patching_the_checker_in_the_worker_does_not_change_the_verdict(tmp_path):
    assert submission.vet_submission(str(CHEATING / "p01_patches_the_judge.py")) is None  # it evades the static check
    run, _, report = _grade("p01_patches_the_judge.py", tmp_path)
    assert run.returncode == 1, run.stderr
    assert {c["reason"] for c in _cases(report)} == {"mismatch"}


@pytest.mark.parametrize("name, clue", [("p01_imports_the_grader.py", "from grader import instrument"),
                                        ("p01_reads_the_stack.py", "import inspect")])
@pytest.mark.slow
def test_a_submission_reaching_into_the_grader_is_refused_before_it_runs(tmp_path, name, clue):
    run, _, report = _grade(name, tmp_path)
    assert run.returncode == 1, run.stderr
    (case,) = _cases(report)
    assert case["name"] == "import" and "not graded" in case["message"] and clue in case["message"]


def test_the_static_check_passes_every_solution_and_correct_alternative():
    files = sorted((ROOT / "solutions").glob("p*.py")) + sorted((KERNELS / "right").glob("*.py"))
    assert files and [f.name for f in files if submission.vet_submission(str(f))] == []


@pytest.mark.parametrize("source, clue", [
    ("import sys\nframe = sys._getframe(1)\n", "sys._getframe"),
    ("import sys as s\ns.modules['grader']\n", "sys.modules"),
    ("import os\nos.kill(1, 9)\n", "os.kill"),
    ("from ctypes import CDLL\n", "from ctypes import CDLL"),
    ("import gc\n", "import gc"),
    ("open('/proc/self/fd/3', 'w')\n", "/proc/self/fd/3"),
    ("__import__('subprocess')\n", "__import__"),
    ("import os\nos.sys.modules['grader.judge.grading']\n", "os.sys"),  # a module reached through another
    ("import threading\n", "import threading"),  # a thread escapes the launcher guard's PyTorch check
    ("import os\nos.fork()\n", "os.fork"),
])
def test_the_static_check_names_what_it_refuses(tmp_path, source, clue):
    path = tmp_path / "submission.py"
    path.write_text(source)
    refusal = submission.vet_submission(str(path))
    assert refusal is not None and clue in refusal and "submission.py:" in refusal


def _execution(**changes):
    data = json.loads(json.dumps(transfer.execution_to_json(transfer.Execution())))
    data.update(changes)
    return data


@pytest.mark.parametrize("changes", [
    {"early": {"reason": "passed", "message": "", "hint": None, "accesses": []}},
    {"early": {"reason": "passed"}},
    {"returned": [{"type_name": "Tensor"}]},
    {"returned": [{"type_name": "Tensor", "is_tensor": True, "dtype": "torch.float32", "shape": [4],
                   "device": "cpu", "values": {"dtype": "torch.float32", "shape": [4], "data": "AAAA"},
                   "written": None}]},
    {"late": {"reason": "passed", "message": "", "hint": None, "accesses": []}},
    {"deferred": {"reason": "skipped", "message": "", "hint": None, "accesses": []}},
    {"recorded": "yes"},
    {"seconds": "fast"},
    {"verdict": "passed"},
    {"accesses": [{"name": "x", "params": [], "elements": 4, "read": "lots", "written": 0, "atomics": 0}]},
    {"accesses": [{"name": "x"}]},
])
def test_a_malformed_execution_is_refused(changes):
    with pytest.raises(transfer.Malformed):
        transfer.execution_from_json(_execution(**changes))


def test_a_submission_that_edits_the_grader_is_void_and_the_grader_restored(tmp_path):
    """In a scratch copy of the repository, so that a failure here cannot leave the real grader tampered with."""
    submission = tmp_path / "p01_edits_the_grader.py"
    shutil.copy(CHEATING / submission.name, submission)
    original = (ROOT / "grader" / "checker.py").read_bytes()
    run, scratch = run_in_scratch_repository(tmp_path, submission, "--json")
    assert run.returncode == 1, run.stdout + run.stderr
    assert (scratch / "grader" / "checker.py").read_bytes() == original
    void = [c for c in json.loads(run.stdout)["results"][0]["cases"] if c["name"] == "grader files"]
    assert void and "grader/judge/checker.py" in void[0]["message"] and "void" in void[0]["message"]
    assert "sitecustomize.py" in void[0]["message"] and not (scratch / "sitecustomize.py").exists()


@pytest.mark.slow
def test_a_tensor_subclass_that_lies_is_judged_by_its_bytes(tmp_path):
    run, _, report = _grade("p01_returns_a_lying_tensor.py", tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    case = _cases(report)[0]
    assert case["reason"] == "mismatch" and "expected" in case["message"], case


@pytest.mark.slow
def test_what_a_submission_prints_reaches_the_terminal_without_escapes(tmp_path):
    run, _, report = _grade("p01_prints_escapes.py", tmp_path)
    assert run.returncode == 1 and report["results"][0]["status"] == "failed"
    assert "Solved: all 7 cases pass" in run.stderr and "\x1b" not in run.stderr + run.stdout
