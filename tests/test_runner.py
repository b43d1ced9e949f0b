"""Grading in a child process survives a crash and a hang that the in-process alarm cannot stop.

The crash and the hang are in the launcher, so these grade the file's own launcher (the practice path); graded
kernel-only, the same files run no launcher of theirs.
"""

from helpers import KERNELS, requires_interpreter

from grader.course import registry
from grader.judge import runner
from grader.judge.verdict import CaseResult

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


def test_each_puzzles_report_comes_as_soon_as_it_is_judged():
    """`on_result` gets puzzle 1's result before puzzle 2's first case is judged: `--all` prints as it goes."""
    events = []
    results = runner.grade_isolated([registry.find(1), registry.find(2)], "solutions", None, seed=0, interpret=True,
                                    timeout=60.0, mode="interpreter",
                                    progress=lambda puzzle, index, case: events.append(("case", puzzle.number)),
                                    on_result=lambda result: events.append(("result", result.puzzle)))
    assert [r.status for r in results] == ["passed", "passed"]
    assert events.index(("result", 1)) < events.index(("case", 2)) and events[-1] == ("result", 2)


def test_natively_the_interpreters_finding_is_the_report():
    """Where the interpreter's checks beside a native run find a bug, their reason, message and hint are shown,
    with what the GPU said; where only the GPU fails a case, its report says the interpreter passes it."""
    native = [CaseResult("a", False, "never_written", "12 of 32 elements never written"),
              CaseResult("b", True, "passed"), CaseResult("c", False, "mismatch", "z[3]: yours 1, expected 2"),
              CaseResult("d", False, "mismatch", "z[0]: yours 1, expected 2")]
    checked = {0: CaseResult("a", False, "race", "two programs stored z[4]", hint="give each element one program"),
               1: CaseResult("b", False, "out_of_bounds", "x[200..231] read"), 2: CaseResult("c", True, "passed"),
               3: CaseResult("d", False, "timeout", "stopped after 30 s")}
    combined = runner.combined(native, checked)
    assert [c.reason for c in combined] == ["race", "out_of_bounds", "mismatch", "mismatch"]
    assert combined[0].hint == "give each element one program" and "(on the GPU: 12 of 32" in combined[0].message
    assert combined[1].message.startswith(runner.INTERPRETER_FOUND)
    assert "the interpreter passes this case" in combined[2].message
    assert combined[3].message == "z[0]: yours 1, expected 2"  # the interpreter found nothing: it ran out of time


def test_gradings_side_by_side_give_what_one_gives():
    """Puzzles dealt to two workers at once (as natively, `workers`), and the interpreter's checks dealt likewise:
    the same results, in the order asked, each reported once."""
    puzzles = [registry.find(n) for n in (2, 1, 3)]
    one = runner.grade_isolated(puzzles, "solutions", None, seed=3, interpret=True, timeout=60.0, mode="interpreter")
    reported = []
    two = runner.grade_isolated(puzzles, "solutions", None, seed=3, interpret=True, timeout=60.0, mode="interpreter",
                                workers=2, on_result=lambda result: reported.append(result.puzzle))
    assert [r.puzzle for r in two] == reported == [2, 1, 3]
    assert [[(c.name, c.reason) for c in r.cases] for r in two] == [[(c.name, c.reason) for c in r.cases] for r in one]


def test_a_native_workers_inputs_built_ahead_are_the_cases_own():
    """Natively the worker builds the next case's inputs while the GPU runs this one (grader.worker.__main__)."""
    import torch

    from grader.course.cases import make_inputs
    from grader.worker.__main__ import _Ahead

    puzzle = registry.find(17)
    ahead = _Ahead(seed=5)
    assert ahead.take(puzzle, 0, [1]) is None  # nothing was ahead of the first case: execute builds its own
    inputs, dims = ahead.take(puzzle, 1, [])
    expected, expected_dims = make_inputs(puzzle.spec, puzzle.cases[1], 5)
    assert dims == expected_dims and inputs.keys() == expected.keys()
    for name, value in expected.items():
        assert torch.equal(inputs[name], value) if isinstance(value, torch.Tensor) else inputs[name] == value
