"""`--map` runs the submission as grading does (grader.judge.runner.map_case): a worker in its own directory, under a
time limit, every process it leaves killed, the grader's files restored; and what the worker sends back is a
picture that is checked, so a forged one is refused with a message, never a crash.

Each submission is copied to tmp_path and mapped with `python -m grader 1 --file ... --map` in a child process.
"""

import json
import shutil
import time

import pytest
from helpers import KERNELS, ROOT, requires_interpreter, run_cli, run_in_scratch_repository

pytestmark = [requires_interpreter, pytest.mark.puzzle1]

CHEATING = KERNELS / "cheating"


def _map(name, tmp_path, *options):
    submission = tmp_path / name
    shutil.copy(CHEATING / name, submission)
    return run_cli("1", "--file", str(submission), "--map", "spec", *options, timeout=300), submission


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _picture(**changes) -> dict:
    """A well-formed picture of a 2-element input, with some fields changed."""
    picture = {"label": "x", "shape": [2], "role": "input", "cell": [1, 1], "present": [[True, True]],
               "owner": [[0, 0]], "reads": [[1, 1]], "writes": [[0, 0]], "masked": [[False, False]],
               "raced": [[False, False]], "unwritten": [[False, False]], "summary": "all is well"}
    return {**picture, **changes}


def _event(maps) -> str:
    return json.dumps({"event": "map", "puzzle": 1, "maps": maps}) + "\n"


FORGERIES = {
    "an empty cell size": _event({"programs": ["(0,0,0)"], "pictures": [_picture(cell=[])], "title": "", "note": ""}),
    "an infinite shape": _event({"programs": ["(0,0,0)"], "pictures": [_picture(shape=[float("inf")])],
                                 "title": "", "note": ""}),
    "an owner past int32": _event({"programs": ["(0,0,0)"], "pictures": [_picture(owner=[[2**40, 0]])],
                                   "title": "", "note": ""}),
    "an owner naming no program": _event({"programs": ["(0,0,0)"], "pictures": [_picture(owner=[[5, 0]])],
                                          "title": "", "note": ""}),
    "ragged rows": _event({"programs": ["(0,0,0)"], "pictures": [_picture(reads=[[1], [1, 1]])],
                           "title": "", "note": ""}),
    "three thousand pictures": _event({"programs": ["(0,0,0)"], "pictures": [_picture()] * 3000,
                                       "title": "", "note": ""}),
    "JSON nested 200,000 deep": "[" * 200_000 + "\n",
    "another puzzle's event": json.dumps({"event": "map", "puzzle": 2, "maps": {}}) + "\n",
}


@pytest.mark.parametrize("forgery", FORGERIES, ids=list(FORGERIES))
@pytest.mark.slow
def test_a_forged_map_is_refused_with_a_message(forgery, tmp_path):
    (tmp_path / "p01_forges_a_map.forge").write_text(FORGERIES[forgery])
    run, _ = _map("p01_forges_a_map.py", tmp_path)
    assert run.returncode == 1 and "Traceback" not in run.stdout + run.stderr, run.stdout + run.stderr
    assert "stopped:" in run.stdout and "nothing to draw" in run.stdout, run.stdout


@pytest.mark.slow
def test_a_well_formed_forged_map_is_drawn_as_the_picture_it_is_and_cleaned(tmp_path):
    """A map is the record of the process that ran the submission: a picture, not a verdict. Its text is cleaned."""
    maps = {"programs": ["(0,0,0)"], "pictures": [_picture(summary="\x1b[2Jall \x07clear")], "title": "",
            "note": ""}
    (tmp_path / "p01_forges_a_map.forge").write_text(_event(maps))
    run, _ = _map("p01_forges_a_map.py", tmp_path)
    assert run.returncode == 0 and "all clear" in run.stdout and "\x1b[2J" not in run.stdout, run.stdout


@pytest.mark.slow
def test_a_daemon_started_while_mapping_does_not_outlive_it(tmp_path):
    run, submission = _map("p01_leaves_a_daemon.py", tmp_path)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stdout + run.stderr
    assert not _alive(int(submission.with_suffix(".pid").read_text()))
    time.sleep(6)  # not a time limit: a surviving daemon would write its file 3 s after the grading process ended
    assert not submission.with_suffix(".late").exists()


def test_a_submission_that_edits_the_grader_while_mapped_is_undone_and_not_drawn(tmp_path):
    """In a scratch copy of the repository, so that a failure here cannot leave the real grader tampered with."""
    submission = tmp_path / "p01_edits_the_grader.py"
    shutil.copy(CHEATING / submission.name, submission)
    original = (ROOT / "grader" / "checker.py").read_bytes()
    run, scratch = run_in_scratch_repository(tmp_path, submission, "--map", "spec")
    assert run.returncode == 1, run.stdout + run.stderr
    assert (scratch / "grader" / "checker.py").read_bytes() == original
    assert not (scratch / "sitecustomize.py").exists()
    assert "changed the grader's own files" in run.stdout and "grader/judge/checker.py" in run.stdout, run.stdout


@pytest.mark.parametrize("options, clue", [
    (["--map", "--json"], "leave out --json"),
    (["--map", "/no/such/folder/map.png"], "does not exist"),
    (["--map", "no such case"], "has no case 'no such case'"),
])
@pytest.mark.slow
def test_map_usage_errors_are_refused_before_anything_runs(options, clue):
    run = run_cli("1", "--impl", "solutions", *options, timeout=300)
    assert run.returncode == 2 and clue in run.stderr and "Traceback" not in run.stderr, run.stderr


@pytest.mark.slow
def test_a_png_path_that_is_a_directory_is_refused(tmp_path):
    (tmp_path / "maps.png").mkdir()
    run = run_cli("1", "--impl", "solutions", "--map", str(tmp_path / "maps.png"), timeout=300)
    assert run.returncode == 2 and "is a directory" in run.stderr and "Traceback" not in run.stderr, run.stderr


@pytest.mark.slow
def test_a_file_name_with_escapes_and_a_newline_cannot_forge_the_report(tmp_path):
    submission = tmp_path / "evil\n\x1b[2Jname.py"
    shutil.copy(ROOT / "solutions" / "p01_add.py", submission)
    run = run_cli("1", "--file", str(submission), timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "\x1b" not in run.stdout + run.stderr
    header = next(line for line in run.stdout.splitlines() if line.startswith("Puzzle 1:"))
    assert "evil??[2Jname.py" in header or "evil?[2Jname.py" in header, header
