"""Output that a submission cannot corrupt: strict JSON, cleaned learner strings, reported (never raised)
BaseExceptions, Gradescope's results.json, and notices printed before the report."""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT, grade_text, requires_interpreter, run_cli, solution_text

from grader import safe_output
from grader.course import registry
from grader.show import gradescope, report
from grader.worker.execute import explain_exception

ANSI_SURROGATE_FLOOD = '"\\x1b[31mred\\x1b[0m" + "\\ud800" + "x" * 100000'


def _refuse(token):
    raise AssertionError(f"not strict JSON: {token}")


def strict_loads(text):
    """json.loads that fails on NaN, Infinity and -Infinity tokens."""
    return json.loads(text, parse_constant=_refuse)


def launcher_raising(expression: str, prelude: str = "") -> str:
    """Puzzle 1's solution whose launcher raises `expression` before launching anything (a launcher of the learner's
    runs on the practice path only: `--own-launcher`)."""
    text = solution_text(registry.find(1))
    body = "    z = torch.empty_like(x)\n"
    assert body in text, "puzzle 1's launcher's first line changed: update this helper"
    return prelude + text.replace(body, f"    raise {expression}\n" + body)


def nan_output_kernel() -> str:
    """Puzzle 1 storing NaN in even lanes and +-Infinity in odd ones."""
    text = solution_text(registry.find(1))
    store = "tl.store(z_ptr + offsets, x + y, mask=mask)"
    assert store in text, "puzzle 1's store line changed: update this mutation"
    return text.replace(store, "tl.store(z_ptr + offsets, tl.where(offsets % 2 == 0, x * float('nan'), "
                                "(x + y) * float('inf')), mask=mask)")


def assert_clean(text: str, limit: int):
    assert "\x1b" not in text and "\ud800" not in text and "\r" not in text
    text.encode("utf-8")  # would raise on a lone surrogate
    assert len(text) < limit


# -- the cleaning and the JSON encoding, unit by unit ---------------------------------------------------

@pytest.mark.parametrize("raw, clean", [
    ("\x1b[31mred\x1b[0m", "red"),
    ("title\x1b]0;owned\x07 rest", "title rest"),
    ("line one\r\nline two\tcolumn", "line one\nline two\tcolumn"),
    ("bell\x07 null\x00 delete\x7f c1\x9b", "bell null delete c1"),
    ("abc\u202edcba", "abcdcba"),  # a right-to-left override would show the text reversed
    ("lone \ud800 surrogate", "lone \ufffd surrogate"),
    ("ünïcödé ✓ stays", "ünïcödé ✓ stays"),
])
def test_clean_text_removes_escapes_controls_and_surrogates(raw, clean):
    assert safe_output.clean_text(raw) == clean


def test_clean_text_caps_the_length():
    capped = safe_output.clean_text("x" * 100000)
    assert capped == "x" * safe_output.MESSAGE_LIMIT + safe_output.CUT
    assert safe_output.clean_text("x" * 100000, limit=None) == "x" * 100000


def test_dumps_spells_non_finite_numbers_as_documented_strings():
    document = {"errors": [{"yours": float("nan"), "expected": float("inf"), "allowed": -float("inf")}],
                "numpy": [np.float32("nan"), np.int64(3), np.float64(0.5)], "flag": True, "none": None}
    data = strict_loads(safe_output.dumps(document))
    assert data["errors"] == [{"yours": "NaN", "expected": "Infinity", "allowed": "-Infinity"}]
    assert data["numpy"] == ["NaN", 3, 0.5] and data["flag"] is True and data["none"] is None
    assert float(data["errors"][0]["allowed"]) == -float("inf")  # the strings read back with float()


class Unprintable(ValueError):
    def __str__(self):
        raise RuntimeError("no string for you")

    def __repr__(self):
        raise RuntimeError("no repr either")


def test_explain_exception_survives_a_raising_str():
    assert explain_exception(Unprintable()).startswith("Unprintable: <unprintable Unprintable>")


# -- a submission's exceptions, graded in this process --------------------------------------------------

@requires_interpreter
@pytest.mark.puzzle1
@pytest.mark.parametrize("prelude, expression, clue", [
    ("class Boom(BaseException):\n    pass\n\n\n", "Boom('kaboom')", "Boom: kaboom"),
    ("", "SystemExit(3)", "sys.exit()"),
    ("class Unprintable(ValueError):\n    def __str__(self):\n        raise RuntimeError('no')\n\n\n",
     "Unprintable()", "<unprintable Unprintable>"),
], ids=["base_exception_subclass", "system_exit", "raising_str"])
def test_exceptions_outside_exception_are_reported_as_a_failed_case(tmp_path, prelude, expression, clue):
    result = grade_text(1, launcher_raising(expression, prelude), tmp_path, own_launcher=True)
    case = result.cases[0]
    assert case.reason == "error" and clue in case.message
    text = report.format_result(result, "rerun", "replay")
    assert clue in text and "Traceback" not in text


@requires_interpreter
@pytest.mark.puzzle1
def test_an_ansi_surrogate_flood_gives_a_short_clean_report_and_strict_json(tmp_path):
    result = grade_text(1, launcher_raising(f"ValueError({ANSI_SURROGATE_FLOOD})"), tmp_path, own_launcher=True)
    case = result.cases[0]
    assert case.reason == "error"
    text = report.format_result(result, "rerun", "replay", verbose=True)
    assert_clean(text, limit=4 * safe_output.MESSAGE_LIMIT)
    assert "ValueError: red\ufffdxxx" in text and safe_output.CUT in text
    data = strict_loads(safe_output.dumps(result.to_json()))
    message = data["cases"][0]["message"]
    assert_clean(message, limit=safe_output.MESSAGE_LIMIT + len(safe_output.CUT) + 1)


# -- through the command line ---------------------------------------------------------------------------

def run_merged(*args):
    """`python -m grader ARGS` with stdout and stderr in one pipe, as `2>&1 | less` sees them."""
    environment = dict(os.environ, TRITON_INTERPRET="1",
                       GRADER_RESULTS=str(Path(tempfile.mkdtemp()) / "results.json"))
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, env=environment, timeout=600)


@requires_interpreter
@pytest.mark.puzzle1
@pytest.mark.slow
def test_nan_outputs_give_strict_json_and_a_failed_gradescope_test(tmp_path):
    kernel = tmp_path / "p01_nan.py"
    kernel.write_text(nan_output_kernel())
    results = tmp_path / "results.json"
    run = run_cli("1", "--file", str(kernel), "--json", "--gradescope", str(results))
    assert run.returncode == 1, run.stderr
    case = strict_loads(run.stdout)["results"][0]["cases"][0]
    assert case["reason"] == "mismatch"
    yours = {error["yours"] for error in case["errors"]}
    assert "NaN" in yours and yours & {"Infinity", "-Infinity"}
    graded = strict_loads(results.read_text())
    assert graded["score"] == 0 and len(graded["tests"]) == 1
    test = graded["tests"][0]
    assert test["status"] == "failed" and test["score"] == 0 and test["max_score"] == 1
    assert test["name"].startswith("Puzzle 1:") and re.search(r"\d+ of \d+ cases pass", test["output"])


@requires_interpreter
@pytest.mark.puzzle1
@pytest.mark.slow
def test_a_passing_puzzle_scores_its_point_and_notices_come_before_the_report(tmp_path):
    results = tmp_path / "results.json"
    run = run_merged("1", "--impl", "solutions", "--gradescope", str(results))
    assert run.returncode == 0, run.stdout
    assert run.stdout.index("interpreter mode") < run.stdout.index("Puzzle 1:")
    graded = strict_loads(results.read_text())
    assert graded["score"] == 1 and graded["output"] == "1 of 1 puzzles passed."
    assert graded["tests"][0]["status"] == "passed" and "Solved" in graded["tests"][0]["output"]
    assert oct(results.stat().st_mode & 0o777) == "0o644"


@requires_interpreter
@pytest.mark.puzzle1
@pytest.mark.slow
def test_the_text_report_of_a_hostile_file_is_clean(tmp_path):
    kernel = tmp_path / "p01_\x1b[2Jclear.py"
    kernel.write_text(launcher_raising(f"ValueError({ANSI_SURROGATE_FLOOD})  # \x1b[5mblink"))
    run = run_cli("1", "--file", str(kernel), "--own-launcher")
    assert run.returncode == 1 and "Traceback" not in run.stdout + run.stderr
    assert_clean(run.stdout, limit=4 * safe_output.MESSAGE_LIMIT)
    assert "ValueError: red" in run.stdout and "p01_?[2Jclear.py" in run.stdout  # the escape shown as ?


# -- joining Gradescope parts (scripts/grade_submission.sh) -----------------------------------------------

def test_merge_scores_missing_puzzles_zero_and_rebuilds_forged_tests(tmp_path):
    forged = {"tests": [{"number": "1", "status": "passed", "score": 100, "max_score": 1, "output": "\x1b[31mok"},
                        {"number": "9", "status": "passed", "output": "not in this assignment"},
                        {"number": "x"}, "junk"]}
    failed = {"tests": [gradescope.test_entry(2, False, "values differ")]}
    data = gradescope.merge({1: forged, 2: failed, 3: {}}, [1, 2, 3], {3: "no file p03_*.py in the submission"})
    assert [t["number"] for t in data["tests"]] == ["1", "2", "3"]
    assert [t["score"] for t in data["tests"]] == [1.0, 0.0, 0.0] and data["score"] == 1.0
    assert "no file p03_*.py" in data["tests"][2]["output"] and data["tests"][2]["status"] == "failed"
    out = tmp_path / "results.json"
    parts = []
    for number, part in ((1, forged), (2, failed)):
        parts.append(tmp_path / f"p{number}.json")
        parts[-1].write_text(json.dumps(part))
    (tmp_path / "p3.json").write_text("{not json")
    assert gradescope.main(["--out", str(out), "--expect", "1,2,3", "--why", "3=nothing",
                            *map(str, parts), str(tmp_path / "p3.json"), str(tmp_path / "absent.json")]) == 0
    written = strict_loads(out.read_text())
    assert written["tests"][0]["output"] == "ok" and written["tests"][2]["output"].endswith("nothing")


def test_a_part_speaks_only_for_its_own_puzzle(tmp_path):
    """A submission that writes a part of its own (pwned.json, or p2.json claiming puzzles 1 and 2) gains nothing."""
    claim = {"tests": [gradescope.test_entry(n, True, "forged") for n in (1, 2)]}
    honest = {"tests": [gradescope.test_entry(1, False, "values differ")]}
    for name, part in (("p1.json", honest), ("p2.json", claim), ("pwned.json", claim)):
        (tmp_path / name).write_text(json.dumps(part))
    out = tmp_path / "results.json"
    paths = [str(tmp_path / n) for n in ("p1.json", "p2.json", "pwned.json")]
    assert gradescope.main(["--out", str(out), "--expect", "1,2", *paths]) == 0
    tests = strict_loads(out.read_text())["tests"]
    assert [(t["number"], t["status"]) for t in tests] == [("1", "failed"), ("2", "passed")]
