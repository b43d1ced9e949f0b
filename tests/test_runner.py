"""Grading in a child process survives a crash and a hang that the in-process alarm cannot stop."""

from helpers import KERNELS, requires_interpreter

from grader.course import registry
from grader.judge import runner

pytestmark = requires_interpreter


def _grade(name, timeout=30.0, grace=20.0):
    (result,) = runner.grade_isolated([registry.find(1)], "puzzles", str(KERNELS / "wrong" / name), seed=0,
                                      interpret=True, timeout=timeout, mode="interpreter", grace=grace)
    return result


def test_a_crash_fails_its_case_and_grading_goes_on():
    result = _grade("p01_crashes.py")
    reasons = {c.name: c.reason for c in result.cases}
    assert reasons["single element"] == "crashed"
    crashed = next(c.message for c in result.cases if c.reason == "crashed")
    assert "killed by SIGABRT" in crashed
    assert "--interpret" not in crashed and "os._exit" in crashed  # already interpreting: other advice
    assert [r for name, r in reasons.items() if name != "single element"] == ["passed"] * (len(reasons) - 1)
    assert len(result.cases) == len(registry.find(1).cases)


def test_a_hang_the_alarm_cannot_stop_is_killed():
    result = _grade("p01_hangs_in_c.py", timeout=1.0, grace=20.0)
    assert result.status == "failed"
    assert result.cases[0].reason == "timeout" and "stopped after 21 s" in result.cases[0].message
    assert {c.reason for c in result.cases[1:]} == {"skipped"}
