"""Grading in a child process survives a crash and a hang that the in-process alarm cannot stop.

The crash and the hang are in the launcher, so these grade the file's own launcher (the practice path); graded
kernel-only, the same files run no launcher of theirs.
"""

from helpers import KERNELS, requires_interpreter

from grader.course import registry
from grader.judge import runner

pytestmark = requires_interpreter


def _grade(name, timeout=30.0, grace=20.0, own_launcher=True):
    (result,) = runner.grade_isolated([registry.find(1)], "puzzles", str(KERNELS / "wrong" / name), seed=0,
                                      interpret=True, timeout=timeout, mode="interpreter", grace=grace,
                                      own_launcher=own_launcher)
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
    # 21 s of CPU time, or on a loaded machine the wall-clock backstop (5 x 1 + 20 s) first: either stops it
    assert result.cases[0].reason == "timeout", result.cases[0].message
    message = result.cases[0].message
    assert "stopped after 21 s of CPU time" in message or "stopped after 25 s" in message, message
    assert {c.reason for c in result.cases[1:]} == {"skipped"}


def test_kernel_only_the_crashing_launcher_never_runs():
    """p01_crashes.py's kernel is right and its launcher aborts on one case: kernel-only, every case passes and the
    report says the launcher was not the one graded."""
    result = _grade("p01_crashes.py", own_launcher=False)
    assert result.status == "passed" and result.trusted, [(c.name, c.reason) for c in result.cases]
    assert any(n.startswith("your launcher differs from the puzzle's") for n in result.notices), result.notices


def test_kernel_only_a_file_with_no_kernel_is_refused_without_running():
    """p01_hangs_in_c.py is a launcher and no kernel: refused in the judge, before any worker starts."""
    result = _grade("p01_hangs_in_c.py", timeout=1.0, own_launcher=False)
    (case,) = result.cases
    assert case.reason == "error" and "defines no @triton.jit function `add_kernel`" in case.message
