"""scripts/grade_submission.sh: its arguments, and (as root, without docker) real runs: kernel-only grading into
results.json; the graded code as another user, which cannot see the reference solutions, write the grader, reach
the network or signal the judge (probed with --own-launcher, where a file's Python runs); a part planted before
grading is not taken; the grader failing writes no score."""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest
from helpers import ROOT, requires_interpreter, solution_text

from grader.course import registry

SCRIPT = ROOT / "scripts" / "grade_submission.sh"


def run_script(*args, timeout=900):
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("args, complaint", [
    (["/no/such/folder"], "no submission folder /no/such/folder"),
    (["--bogus"], "unknown option --bogus"),
    (["--puzzles"], "--puzzles needs a list"),
    (["SUBMISSION", "/no/such/folder/results.json"], "the folder of /no/such/folder/results.json does not exist"),
    (["--limit", "0", "SUBMISSION", "RESULTS"], "--limit takes a whole number of seconds"),
    (["--puzzles", "1 x", "SUBMISSION", "RESULTS"], "--puzzles takes numbers, not x"),
    (["a", "b", "c"], "give at most SUBMISSION_DIR and RESULTS_JSON"),
])
def test_bad_arguments_exit_2_with_the_reason(tmp_path, args, complaint):
    args = [str(tmp_path) if a == "SUBMISSION" else str(tmp_path / "results.json") if a == "RESULTS" else a
            for a in args]
    run = run_script(*args)
    assert run.returncode == 2 and f"error: {complaint}" in run.stderr
    assert "SUBMISSION_DIR" in run.stderr  # the usage comes with it


def test_docker_mode_says_when_docker_cannot_run(tmp_path):
    if shutil.which("docker") and subprocess.run(["docker", "info"], capture_output=True).returncode == 0:
        pytest.skip("docker works here; this checks the message when it does not")
    run = run_script("--docker", "some/image", str(tmp_path), str(tmp_path / "results.json"))
    assert run.returncode == 2 and "docker is not usable here" in run.stderr


@pytest.fixture
def python_others_can_run():
    """A virtual environment whose interpreter the user `nobody` can execute, seeing this environment's
    packages (this machine's Python may live under /root, which nobody can enter). Outside tmp_path,
    which only root may enter."""
    system = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    if not system.is_file():
        pytest.skip("no system Python of this version for the unprivileged user")
    packages = Path(sysconfig.get_paths()["purelib"])
    hidden = [p for p in (packages, *packages.parents) if not os.stat(p).st_mode & 0o001]  # others may not enter
    if hidden:
        pytest.skip(f"this environment's packages are out of the unprivileged user's reach ({hidden[-1]} is "
                    "closed to others; CI's virtual environment lives in such a folder)")
    folder = Path(tempfile.mkdtemp(prefix="grade-submission-python."))
    folder.chmod(0o755)
    subprocess.run([str(system), "-m", "venv", "--without-pip", str(folder / "venv")], check=True)
    site = folder / "venv" / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    (site / "this_environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    yield folder / "venv" / "bin" / "python"
    shutil.rmtree(folder)


# Puzzle 3's launcher, before it launches anything, tries what a cheating submission would try and
# raises what it found: the report (the test's output) carries it. Graded with --own-launcher (the practice path,
# where a file's Python runs), as kernel-only grading would never run it.
PROBE = '''
    import os, socket
    found = [f"uid {{os.getuid()}}"]
    signal_pid = getattr(os, "ki" + "ll")  # past the static check of --own-launcher, as a cheat would go
    def parent(pid):
        return int(open(f"/pr" + f"oc/{{pid}}/stat").read().rsplit(")", 1)[1].split()[1])
    # not counted: this process and its own children (the worker's GPU-compile helper)
    others = [int(p) for p in os.listdir("/pr" + "oc") if p.isdigit() and int(p) != os.getpid()
              and parent(int(p)) != os.getpid()]
    reached = []
    for pid in others:
        try:
            signal_pid(pid, 0)
            reached.append(pid)
        except OSError:
            pass
    found.append(f"signals {{len(reached)}} of {{len(others)}} other processes")
    try:
        open(os.path.join({root!r}, "solutions", "{module}.py")).read()
        found.append("solutions READABLE")
    except OSError as exc:
        found.append(f"solutions hidden ({{type(exc).__name__}})")
    try:
        open(os.path.join({root!r}, "grader", "registry.py"), "a").close()
        found.append("grader WRITABLE")
    except OSError as exc:
        found.append(f"grader read-only ({{type(exc).__name__}})")
    try:
        socket.create_connection(("1.1.1.1", 80), timeout=3).close()
        found.append("network REACHABLE")
    except OSError as exc:
        found.append(f"network none ({{type(exc).__name__}})")
    raise RuntimeError("probe: " + "; ".join(found))
'''


@requires_interpreter
@pytest.mark.puzzle1
@pytest.mark.skipif(os.geteuid() != 0, reason="the isolated run needs root (a dedicated user and namespaces)")
@pytest.mark.slow
def test_a_submission_is_graded_into_results_json_and_cannot_cheat(tmp_path, python_others_can_run):
    python = python_others_can_run
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "p01_mine.py").write_text(solution_text(registry.find(1)))
    third = registry.find(3)
    body = solution_text(third)
    launcher = f"def {third.launcher}("
    head, _, tail = body.rpartition(launcher)  # the last: the docstring quotes the spec's signature first
    signature, _, rest = tail.partition(":\n")
    probe = PROBE.format(root=str(ROOT), module=third.module)
    (submission / "p03_probe.py").write_text(head + launcher + signature + ":\n" + probe + rest)
    (submission / "notes.txt").write_text("ignored")
    results = tmp_path / "results.json"
    run = run_script("--python", str(python), "--own-launcher", "--puzzles", "1 2 3", str(submission), str(results))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    data = json.loads(results.read_text())
    tests = {t["number"]: t for t in data["tests"]}
    assert data["score"] == 1 and tests["1"]["status"] == "passed" and "Solved" in tests["1"]["output"]
    assert "no file p02_*.py in the submission" in tests["2"]["output"]
    assert tests["3"]["status"] == "failed"
    output = tests["3"]["output"]
    assert "solutions hidden" in output, output
    assert "grader read-only" in output and "network none" in output
    assert f"uid {os.getuid()}" not in output and "signals 0 of" in output  # another user, alone in its namespace
    assert (ROOT / "solutions" / f"{third.module}.py").is_file()  # hidden from the submission only
    assert "grade-submission." not in json.dumps(data)  # no scratch path in what the student reads


@requires_interpreter
@pytest.mark.puzzle1
@pytest.mark.skipif(os.geteuid() != 0, reason="the isolated run needs root (a dedicated user and namespaces)")
@pytest.mark.slow
def test_kernel_only_classroom_run_scores_the_kernels_and_per_case_credit(tmp_path, python_others_can_run):
    """The default: each file's kernels under the puzzle's launcher. A correct kernel with a launcher that would
    cheat scores; a stub scores 0 with per-case credit; weights apply."""
    submission = tmp_path / "submission"
    submission.mkdir()
    first = solution_text(registry.find(1))
    cheat = first.replace("    return z\n", "    return x + y  # a launcher computing the answer\n")
    (submission / "p01_mine.py").write_text(cheat)
    (submission / "p02_stub.py").write_text((ROOT / "puzzles" / f"{registry.find(2).module}.py").read_text())
    results = tmp_path / "results.json"
    run = run_script("--python", str(python_others_can_run), "--puzzles", "1 2", "--partial", "--weights", "1=3",
                     "--visibility", "after_due_date", str(submission), str(results))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    data = json.loads(results.read_text())
    tests = {t["number"]: t for t in data["tests"]}
    assert tests["1"]["score"] == 3 and tests["1"]["max_score"] == 3 and "your launcher differs" in tests["1"]["output"]
    assert tests["2"]["score"] == 0 and "not started" in tests["2"]["output"]
    assert data["visibility"] == "after_due_date" and tests["1"]["output_format"] == "text"


@requires_interpreter
@pytest.mark.skipif(os.geteuid() != 0, reason="the isolated run needs root (a dedicated user and namespaces)")
def test_the_grader_failing_writes_no_score(tmp_path):
    """A Python the graded user cannot run is the grader's trouble: exit 2 with the reason, and no results.json,
    rather than every student scoring 0. (tmp_path is root's alone, so nobody cannot run a Python kept there.)"""
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "p01_mine.py").write_text(solution_text(registry.find(1)))
    results = tmp_path / "results.json"
    run = run_script("--python", str(python), "--puzzles", "1", str(submission), str(results))
    assert run.returncode == 2 and not results.exists(), run.stdout[-2000:] + run.stderr[-2000:]
    assert "cannot be run by nobody" in run.stderr


@pytest.mark.parametrize("prefix, said", [('["sh", "-c", "exit 127"]', "before it was ready (126/127"),
                                          ('["/no/such/program"]', "could not be started")])
@pytest.mark.slow
def test_a_worker_that_cannot_start_is_the_graders_failure_not_a_score(tmp_path, prefix, said):
    """The worker's command failing before it says it is ready (its Python not runnable, a missing program) exits
    3 and writes no Gradescope file: nothing of the submission had run, so nothing is scored."""
    part = tmp_path / "part.json"
    environment = {**os.environ, "GRADER_WORKER_PREFIX": prefix, "TRITON_INTERPRET": "1",
                   "GRADER_RESULTS": str(tmp_path / "progress.json")}
    run = subprocess.run([sys.executable, "-m", "grader", "1", "--file", str(ROOT / "solutions" / "p01_add.py"),
                          "--gradescope", str(part)], cwd=ROOT, capture_output=True, text=True, env=environment,
                         timeout=300)
    assert run.returncode == 3 and not part.exists(), run.stdout + run.stderr
    assert "the grader could not grade" in run.stderr and said in run.stderr



def _python_that_fails_on(request, name: str, status: int) -> Path:
    """A Python like this one, except that grading the file `name` ends at once with `status` and a traceback, as
    the judge did on a file that crashed it (issue 26: a 5,000-digit literal), without a Gradescope part. As root,
    the graded user runs it, so it lives beside a Python that user can run (python_others_can_run)."""
    if os.geteuid() == 0:
        real = request.getfixturevalue("python_others_can_run")
        folder = real.parent.parent.parent
    else:
        real, folder = Path(sys.executable), request.getfixturevalue("tmp_path")
    python = folder / f"python_failing_{status}"
    python.write_text(f"#!/bin/sh\ncase \"$*\" in */submission/{name}*) echo 'Traceback (most recent call last): ...' "
                      f">&2; exit {status} ;; esac\nexec {real} \"$@\"\n")
    python.chmod(0o755)
    return python


def _submission(tmp_path) -> Path:
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "p01_mine.py").write_text(solution_text(registry.find(1)))
    (submission / "p02_crashes.py").write_text("# the judge stops on this file\n")
    return submission


@requires_interpreter
@pytest.mark.puzzle1
@pytest.mark.slow
def test_a_file_that_stops_the_grader_scores_zero_and_the_others_are_graded(tmp_path, request):
    """One puzzle's file that ends the judge without a verdict costs that puzzle, with the reason; the correct file
    beside it is scored, and results.json is written."""
    results = tmp_path / "results.json"
    run = run_script("--python", str(_python_that_fails_on(request, "p02_crashes.py", 1)), "--interpret",
                     "--puzzles", "1 2", str(_submission(tmp_path)), str(results))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    tests = {t["number"]: t for t in json.loads(results.read_text())["tests"]}
    assert tests["1"]["score"] == tests["1"]["max_score"] == 1, tests["1"]
    assert tests["2"]["score"] == 0 and "the grader stopped on p02_crashes.py without a verdict (it exited with " \
        "status 1 without a result)" in tests["2"]["output"], tests["2"]
    assert "Puzzle 2 scores 0; the other puzzles are graded" in run.stderr


@requires_interpreter
@pytest.mark.puzzle1
def test_a_worker_that_cannot_start_is_still_the_setups_failure(tmp_path, request):
    """Exit 3 (no worker could start, before any of the file was read) voids the run: exit 2, no results.json."""
    results = tmp_path / "results.json"
    run = run_script("--python", str(_python_that_fails_on(request, "p01_mine.py", 3)), "--interpret",
                     "--puzzles", "1 2", str(_submission(tmp_path)), str(results))
    assert run.returncode == 2 and not results.exists(), run.stdout[-3000:] + run.stderr[-3000:]
    assert "could not start its worker" in run.stderr and "fix the setup" in run.stderr


@requires_interpreter
@pytest.mark.puzzle1
@pytest.mark.slow
def test_a_symbolic_link_is_not_followed(tmp_path):
    """A link in the submission (to a file only the caller can read) is not graded, and nothing of its target
    reaches results.json, which the student reads (the attacker's review of 2026-12-03)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0:the caller's secret\n")
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "p01_mine.py").symlink_to(secret)
    results = tmp_path / "results.json"
    run = run_script("--python", sys.executable, "--interpret", "--puzzles", "1", str(submission), str(results))
    assert "p01_mine.py is a symbolic link: not graded" in run.stderr, run.stdout[-3000:] + run.stderr[-3000:]
    assert "secret" not in (results.read_text() if results.exists() else "") + run.stdout
    assert "is a symbolic link: not graded" in results.read_text()  # the student is told why, not "no file"
