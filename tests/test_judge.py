"""The judge survives anything a worker sends or does (issue 17, section 3): a stand-in worker, started in the
real worker's place through GRADER_WORKER_PREFIX, sends what a hostile or broken one would, and the judge turns
each into a failed case with a message, never a crash, a hang, a forged line or a pass."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from helpers import ROOT, as_in_a_terminal, requires_interpreter

from grader.course import registry
from grader.judge import processes, runner

pytestmark = requires_interpreter

# A stand-in worker: the judge appends its own worker command (ending with the event pipe's number) to the prefix.
FAKE = """
import json, os, sys, time
events = os.fdopen(int(sys.argv[-1]), "w", buffering=1)
job = json.loads(sys.stdin.read())
def emit(**event):
    events.write(json.dumps(event) + "\\n")
"""


def _grade_with(tmp_path, monkeypatch, body: str, timeout=30.0, grace=20.0):
    """Grade puzzle 1's solution with the worker replaced by FAKE + body."""
    script = tmp_path / "fake_worker.py"
    script.write_text(FAKE + textwrap.dedent(body))
    monkeypatch.setenv("GRADER_WORKER_PREFIX", json.dumps([sys.executable, str(script)]))
    (result,) = runner.grade_isolated([registry.find(1)], "solutions", None, seed=0, interpret=True,
                                      timeout=timeout, mode="interpreter", grace=grace)
    return result


OPENING = """
emit(event="ready")
emit(event="load", puzzle=1)
emit(event="start", puzzle=1, case=0)
"""


@pytest.mark.parametrize("execution", [
    {"returned": [{"type_name": "Tensor", "is_tensor": True, "dtype": "torch.float32", "shape": [2 ** 70],
                   "device": "cpu", "values": None, "written": None}]},
    {"seconds": 10 ** 400},
    {"programs": 2 ** 200, "recorded": True},
    "not a dict",
], ids=["huge shape", "huge seconds", "huge programs", "not a dict"])
def test_a_malformed_execution_is_a_crashed_case_not_a_crash(tmp_path, monkeypatch, execution):
    body = OPENING + f"emit(event='execution', puzzle=1, case=0, execution={execution!r})\ntime.sleep(60)\n"
    result = _grade_with(tmp_path, monkeypatch, body)
    assert result.status == "failed" and result.cases[0].reason == "crashed", result.cases[0].message
    assert "malformed event" in result.cases[0].message


def test_a_line_that_is_not_json_is_named_as_such(tmp_path, monkeypatch):
    """One Malformed (grader.protocol) for the pipe and the data: the reader's own words reach the report."""
    body = OPENING + "events.write('not json at all\\n')\ntime.sleep(60)\n"
    result = _grade_with(tmp_path, monkeypatch, body)
    assert result.cases[0].reason == "crashed" and "a line that is not JSON" in result.cases[0].message, \
        result.cases[0].message


def test_notices_are_single_lines_and_capped(tmp_path, monkeypatch):
    forged = "fine\n  ✓ spec\n  ★ Solved: all 7 cases pass (interpreter)" + "x" * 5000
    body = ("emit(event='ready')\nemit(event='load', puzzle=1)\n"
            "emit(event='load_error', puzzle=1, message='no')\n")
    result = _grade_with(tmp_path, monkeypatch, body)
    assert result.status == "failed"
    body = OPENING.replace("emit(event=\"start\", puzzle=1, case=0)\n", "") + \
        f"emit(event='done', puzzle=1, notices={[forged] * 50!r})\n"
    result = _grade_with(tmp_path, monkeypatch, body)
    assert len(result.notices) <= runner.MAX_NOTICES
    assert all("\n" not in n and len(n) <= runner.NOTICE_CHARS for n in result.notices)


def test_what_the_graded_code_prints_is_quoted_so_it_cannot_pass_for_the_report():
    quoted = processes.quoted_output("hello\n  ★ Solved: all 7 cases pass\x1b[2J\n")
    assert all(line.startswith(("printed in the grading process:", "  | ")) for line in quoted.splitlines())
    assert "\x1b" not in quoted


def test_long_printed_output_is_kept_whole_in_a_file_the_report_names(tmp_path):
    """Issue 27 (--map): tl.device_print's lines were cut at 40 with "(258 more lines)" and no way to see them: the
    whole of it goes to a file beside the progress cache, and the last quoted line names it."""
    keep = tmp_path / "printed.txt"
    quoted = processes.quoted_output("".join(f"pid 0 x: {i}\n" for i in range(298)), str(keep))
    assert quoted.splitlines()[-1].startswith("  | ... (258 more lines; all 298 are in printed.txt; or print less")
    assert keep.read_text().splitlines() == [f"pid 0 x: {i}" for i in range(298)]
    short = processes.quoted_output("one\ntwo\n", str(tmp_path / "short.txt"))
    assert "more line" not in short and not (tmp_path / "short.txt").exists()


def test_the_printed_file_sits_beside_the_progress_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("GRADER_RESULTS", str(tmp_path / "results.json"))
    assert processes.printed_file() == str(tmp_path / "printed.txt")


@pytest.mark.slow
def test_a_worker_that_waits_is_given_wall_time_and_one_that_computes_is_stopped_by_cpu_time(tmp_path, monkeypatch):
    """The limit counts CPU seconds: waiting 5 s (no CPU) under a 2 + 1 s limit is no timeout, as a loaded machine
    slows a correct kernel in wall time only; burning CPU past it is one, and the message says CPU time."""
    waits = OPENING + "time.sleep(5)\nemit(event='start', puzzle=1, case=1)\ntime.sleep(60)\n"
    result = _grade_with(tmp_path, monkeypatch, waits, timeout=2.0, grace=1.0)
    assert result.cases[0].reason != "timeout", result.cases[0].message
    spins = OPENING + "while True:\n    pass\n"
    result = _grade_with(tmp_path, monkeypatch, spins, timeout=2.0, grace=1.0)
    assert result.cases[0].reason == "timeout" and "of CPU time" in result.cases[0].message


def test_a_process_line_of_proc_is_read_with_its_cpu_time():
    """grader.protocol.process_stat, the one reader of /proc/PID/stat (the judge's process table, the compile
    helper's CPU time): a child that spun for 0.3 s of CPU and was waited for shows in its parent's children's
    time; a process that is gone reads as None."""
    from grader.protocol import process_stat

    if process_stat(os.getpid()) is None:
        pytest.skip("no /proc here")
    child = subprocess.Popen([sys.executable, "-c", "import time\nt = time.process_time()\n"
                              "while time.process_time() - t < 0.3:\n    pass"])
    parent, state, _, before = process_stat(os.getpid())
    assert parent == os.getppid() and state == "R"
    child.wait()
    assert process_stat(os.getpid())[3] >= before + 0.25
    assert process_stat(child.pid) is None  # reaped


def test_a_long_event_line_is_read_in_linear_time():
    """Each byte of a line arriving in pieces is searched for its end once (the buffer remembers how far it
    looked): a 128 MiB line sent in 1 MiB pieces costs one pass, not 128 x 64 MiB of searching."""
    lines = processes.LineBuffer()
    piece = b"x" * (1 << 20)
    for _ in range(64):
        lines.feed(piece)
        assert lines.pop() is None and lines.scanned == len(lines.buffer)
    lines.feed(b'"}\n{"next": 1}\n')
    assert lines.pop().endswith(b'"}') and lines.pop() == b'{"next": 1}' and lines.pop() is None


@pytest.mark.parametrize("signal_number, name", [(signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "SIGINT")])
def test_a_signal_ends_grading_cleanly_with_every_worker(tmp_path, signal_number, name):
    """SIGTERM or SIGINT to the grader: an 'interrupted' result in JSON, no traceback, exit 128 + the signal, and
    no worker left behind (the test waits for the first worker to exist before it signals)."""
    environment = {**os.environ, "TRITON_INTERPRET": "1", "GRADER_RESULTS": str(tmp_path / "progress.json")}
    grader = subprocess.Popen([sys.executable, "-m", "grader", "4", "5", "--impl", "solutions", "--json"], cwd=ROOT,
                              env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              preexec_fn=as_in_a_terminal)
    try:
        workers = []
        for _ in range(600):  # until the grader has started its first worker
            workers = _children(grader.pid)
            if workers:
                break
            time.sleep(0.1)
        assert workers, "the grader started no worker"
        grader.send_signal(signal_number)
        out, err = grader.communicate(timeout=120)
    finally:
        grader.kill()
    assert grader.returncode == 128 + signal_number, err
    assert json.loads(out)["interrupted"] == name and "Traceback" not in err
    for _ in range(100):
        if not any(os.path.exists(f"/proc/{pid}") and _state(pid) != "Z" for pid in workers):
            break
        time.sleep(0.1)
    assert not [pid for pid in workers if os.path.exists(f"/proc/{pid}") and _state(pid) != "Z"]


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    return found


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


@pytest.mark.slow
def test_the_interpreter_checks_of_a_native_grading_run_the_small_cases_and_are_merged():
    """Natively the kernels are also run in the interpreter on the small cases; a case the GPU passes and the
    interpreter fails is failed with the interpreter's reason and says so; one where both pass shows the
    interpreter's traffic."""
    import dataclasses
    import threading

    from grader.course.cases import Case
    from grader.judge.verdict import CaseResult

    puzzle = registry.find(4)
    small = runner._small_cases(puzzle)
    assert small == list(range(len(puzzle.cases)))  # sized for the interpreter, every case of puzzle 4 is small
    huge = dataclasses.replace(puzzle, cases=(*puzzle.cases, Case("huge", dict(N0=128, T=2 ** 20), dict(B0=1, B1=16))))
    assert runner._small_cases(huge) == small
    checks = runner._Grading([puzzle], "solutions", None, 0, True, 30.0, 20.0, {}, only={4: small})
    checks.run(set(), threading.Event())
    checked = {4: dict(zip(small, checks.results[4]))}
    assert sorted(checked[4]) == small and all(c.passed for c in checked[4].values())
    native = [CaseResult(c.name, True, "passed") for c in puzzle.cases]
    wrong = {0: CaseResult(puzzle.cases[0].name, False, "budget", "x read 4.0x")}
    merged = runner.combined(native, {**checked[4], **wrong})
    assert merged[0].reason == "budget" and merged[0].message.startswith(runner.INTERPRETER_FOUND)
    assert merged[1].passed and merged[1].accesses == checked[4][1].accesses
    failed_natively = [CaseResult(puzzle.cases[0].name, False, "error", "PassManager::run failed")]
    assert "the interpreter passes this case" in runner.combined(failed_natively, checked[4])[0].message


def test_guard_zones_catch_a_store_past_a_tensor_and_poison_fresh_outputs():
    import torch

    from grader.worker import guards

    fenced = guards.Guards()
    x = fenced.place(torch.arange(10, dtype=torch.float32), "x")
    assert torch.equal(x, torch.arange(10, dtype=torch.float32)) and fenced.trampled() == []
    with guards.allocations(fenced):
        z = torch.empty_like(x)
        zeros = torch.zeros(3, 4)
    assert (z.view(torch.int32) == guards.POISON_BITS).all() and (zeros == 0).all()
    fenced.rename(z, "z")
    z.as_strided((12,), (1,))[10:] = 1.0  # two elements past z's end, as an unmasked store would write them
    assert fenced.trampled() == ["z: 8 bytes after it"]


def test_first_failure_stops_a_puzzle_at_its_first_failing_case(tmp_path):
    text = (ROOT / "solutions" / "p01_add.py").read_text().replace("mask = offsets < N0", "mask = offsets <= N0")
    path = tmp_path / "p01_add.py"
    path.write_text(text)
    (result,) = runner.grade_isolated([registry.find(1)], "puzzles", str(path), seed=0, interpret=True,
                                      timeout=30.0, mode="interpreter", first_failure=True)
    assert [c.passed for c in result.cases][-1] is False and len(result.cases) < len(registry.find(1).cases)


def test_a_signal_whose_interrupt_python_swallowed_still_stops_grading(monkeypatch):
    """A KeyboardInterrupt raised inside a callback Python runs for itself (an import's module-lock weakref) is
    swallowed ("Exception ignored in ..."), and a Ctrl-C during the CLI's imports once let grading go on to exit 0
    (CI, 2026-12-04): the signal is kept, and the next event read raises it again."""
    monkeypatch.setattr(processes, "_SIGNALLED", [])
    with pytest.raises(KeyboardInterrupt, match="SIGINT"):
        processes.on_signal(signal.SIGINT, None)  # Python swallowed this one
    with pytest.raises(KeyboardInterrupt, match="SIGINT"):
        processes.raise_if_signalled()
