"""Gradescope's ``results.json``: one test per puzzle, its points when it passes, the puzzle's report as its output.

The format is Gradescope's autograder specification ("Output format"): a top-level ``score``,
``output``, ``output_format`` and ``visibility``, and ``tests``, each with ``name``, ``number``,
``score``, ``max_score``, ``status`` (``passed`` or ``failed``), ``output``, ``output_format`` and
``visibility``. A part also carries each puzzle's case counts (``extra_data``), so the join can give
per-case partial credit (``--partial``): a puzzle then scores its weight times the share of its cases
that passed. Reports are plain text with aligned columns: ``output_format`` is "text".

``python -m grader N --file F --gradescope part.json`` writes the file for the puzzles of one
run; ``scripts/grade_submission.sh`` grades each file of a submission that way and joins the parts:

    python -m grader.show.gradescope --out results.json --expect 1,2,3 --why "3=no file p03_*.py" p1.json p2.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile

from grader import safe_output
from grader.course.registry import BY_NUMBER
from grader.judge.verdict import PuzzleResult

POINTS = 1.0  # per puzzle by default: a puzzle passes whole or not at all, as in the learner's progress table
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
OUTPUT_FORMAT = "text"


def test_entry(number: int, passed: bool, output: str, cases: tuple[int, int] = (0, 0), weight: float = POINTS,
               partial: bool = False, visibility: str = "visible") -> dict:
    """One Gradescope test: a puzzle, its points (all or nothing, or with `partial` the share of its `cases`
    (passed, total) that passed), the text the student reads, and the case counts."""
    passed_cases, total = cases
    # a passed puzzle scores in full (a case skipped in this mode, a bfloat16 one in the interpreter, is no loss)
    share = 1.0 if passed else passed_cases / total if partial and total else 0.0
    return {"name": f"Puzzle {number}: {BY_NUMBER[number].title}", "number": str(number),
            "score": round(weight * share, 6), "max_score": weight, "status": "passed" if passed else "failed",
            "output": output, "output_format": OUTPUT_FORMAT, "visibility": visibility,
            "extra_data": {"cases_passed": passed_cases, "cases": total}}


def document(tests: list[dict], visibility: str = "visible") -> dict:
    """The whole results.json: the tests in puzzle order, the total score and a one-line summary."""
    tests = sorted(tests, key=lambda test: int(test["number"]))
    passed = sum(test["status"] == "passed" for test in tests)
    return {"score": round(sum(test["score"] for test in tests), 6),
            "output": f"{passed} of {len(tests)} puzzles passed.", "output_format": OUTPUT_FORMAT,
            "visibility": visibility, "tests": tests}


def from_results(results: list[PuzzleResult], reports: list[str]) -> dict:
    """results.json for a grading run: `reports` are the text reports of `results`, in the same order."""
    return document([test_entry(r.puzzle, r.status == "passed", text,
                                (sum(c.passed for c in r.cases), len(BY_NUMBER[r.puzzle].cases)))
                     for r, text in zip(results, reports)])


def write(path: str, data: dict) -> None:
    """Write strict JSON to `path` at once (a reader never sees half a file)."""
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".results-", suffix=".json")
    with os.fdopen(handle, "w") as file:
        file.write(safe_output.dumps(data, indent=1) + "\n")
    os.chmod(temporary, 0o644)  # mkstemp's 0600 would hide the results from the harness that uploads them
    os.replace(temporary, path)


def _cases_of(test: dict, number: int) -> tuple[int, int]:
    """A test's (cases passed, cases), held to the puzzle's own number of cases."""
    extra = test.get("extra_data")
    total = len(BY_NUMBER[number].cases)
    passed = extra.get("cases_passed") if isinstance(extra, dict) else None
    return (passed, total) if isinstance(passed, int) and not isinstance(passed, bool) and 0 <= passed <= total \
        else (0, total)


def _tests_of(part: dict, weights: dict[int, float], partial: bool, visibility: str) -> dict[int, dict]:
    """The tests of a part, rebuilt from their number, status, case counts and output (so a score is always what
    the weights and the counts give)."""
    tests = {}
    for test in part.get("tests", []) if isinstance(part.get("tests"), list) else []:
        number = str(test.get("number", "")) if isinstance(test, dict) else ""
        if number.isdigit() and int(number) in BY_NUMBER:
            n = int(number)
            tests[n] = test_entry(n, test.get("status") == "passed", str(test.get("output", "")), _cases_of(test, n),
                                  weights.get(n, POINTS), partial, visibility)
    return tests


def merge(parts: dict[int, dict], expected: list[int], why: dict[int, str], weights: dict[int, float] | None = None,
          partial: bool = False, visibility: str = "visible") -> dict:
    """Join per-puzzle results: from the part of puzzle N, only puzzle N's test (a part cannot speak for another
    puzzle), and only the expected puzzles', when given; each expected puzzle that no part graded fails with its
    reason from `why`. `weights`: points per puzzle (POINTS by default); `partial`: per-case partial credit."""
    weights = weights or {}
    tests = {number: test for number, part in parts.items()
             for found, test in _tests_of(part, weights, partial, visibility).items()
             if found == number and (not expected or number in expected)}
    for number in expected:
        if number not in tests:
            reason = why.get(number, f"no file p{number:02d}_*.py in the submission")
            tests[number] = test_entry(number, False, f"Puzzle {number} was not graded: {reason}",
                                       (0, len(BY_NUMBER[number].cases)), weights.get(number, POINTS), partial,
                                       visibility)
    return document(list(tests.values()), visibility)


def _read_part(path: str) -> dict:
    """A part written by `--gradescope`; an unreadable one counts as no result (its puzzle fails)."""
    try:
        with open(path) as file:
            data = json.load(file)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _puzzle_of(path: str) -> int | None:
    """The puzzle a part is for, from its name as grade_submission.sh writes it: pN.json."""
    found = re.fullmatch(r"p(\d+)\.json", os.path.basename(path))
    return int(found[1]) if found else None


def _numbers(text: str) -> list[int]:
    try:
        return [int(n) for n in text.replace(",", " ").split()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--expect takes puzzle numbers such as 1,2,3, not {text!r}") from None


def _weights(text: str) -> dict[int, float]:
    weights = {}
    for item in text.replace(",", " ").split():
        number, _, points = item.partition("=")
        try:
            weights[int(number)] = float(points)
        except ValueError:
            raise argparse.ArgumentTypeError(f"--weights takes NUMBER=POINTS such as 4=2, not {item!r}") from None
        if not (weights[int(number)] >= 0 and weights[int(number)] < 1e6):
            raise argparse.ArgumentTypeError(f"--weights: {item!r} is not a number of points")
    return weights


def _reason(text: str) -> tuple[int, str]:
    number, _, reason = text.partition("=")
    if not number.isdigit() or not reason:
        raise argparse.ArgumentTypeError(f"--why takes NUMBER=REASON, not {text!r}")
    return int(number), reason


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.show.gradescope",
                                     description="Join per-file Gradescope results into one results.json.")
    parser.add_argument("parts", nargs="*", help="files pN.json written by python -m grader N ... --gradescope")
    parser.add_argument("--out", required=True, help="the results.json to write")
    parser.add_argument("--expect", type=_numbers, default=[], metavar="N,N,...",
                        help="puzzles of the assignment (comma-separated); one that no part graded scores 0")
    parser.add_argument("--why", type=_reason, action="append", default=[], metavar="N=REASON",
                        help="why puzzle N has no part (shown to the student)")
    parser.add_argument("--weights", type=_weights, default={}, metavar="N=POINTS ...",
                        help=f"points per puzzle (default {POINTS:g} each), e.g. '4=2 5=2'")
    parser.add_argument("--partial", action="store_true",
                        help="per-case partial credit: a puzzle scores its points times the share of its cases passed")
    parser.add_argument("--visibility", choices=VISIBILITIES, default="visible", help="Gradescope's test visibility")
    args = parser.parse_args(argv)
    unknown = [n for n in [*args.expect, *args.weights] if n not in BY_NUMBER]
    if unknown:
        parser.error(f"no puzzle {unknown[0]}")
    parts = {_puzzle_of(p): _read_part(p) for p in args.parts if _puzzle_of(p) is not None}
    write(args.out, merge(parts, args.expect, dict(args.why), args.weights, args.partial, args.visibility))
    return 0


if __name__ == "__main__":
    sys.exit(main())
