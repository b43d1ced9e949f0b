"""`python -m grader N --watch`: the learner's edit-save-read loop. A save grades the file again (from a worker
waiting with its imports done), and Ctrl-C ends the watch with no process left behind.

The deadlines below only keep a broken watch from hanging the suite; nothing here is timed."""

import os
import queue
import secrets
import signal
import subprocess
import sys
import threading
import time

from helpers import ROOT, as_in_a_terminal, lesson_text, requires_interpreter

from grader.course import registry

pytestmark = requires_interpreter

HANG = 600  # seconds: a watch that says nothing for this long is broken (an honest grading takes a few)


class _Lines:
    """A stream's lines, read on a thread of their own, so the test can wait for one with a deadline."""

    def __init__(self, stream):
        self.lines: queue.Queue = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream):
        for line in stream:
            self.lines.put(line)
        self.lines.put(None)

    def until(self, *marks: str) -> str:
        """Read up to the first line that holds one of `marks`; that line."""
        deadline = time.monotonic() + HANG
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                continue
            assert line is not None, "the watch ended early:\n" + "".join(self.seen)
            self.seen.append(line)
            if any(mark in line for mark in marks):
                return line
        raise AssertionError(f"no line with {marks} within {HANG} s:\n" + "".join(self.seen))


def _processes_with(marker: str) -> list[int]:
    """Living processes whose environment holds `marker` (the watch's workers inherit it)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/environ", "rb") as environ:
                    if marker.encode() in environ.read():
                        with open(f"/proc/{entry}/stat") as stat:
                            if stat.read().rsplit(")", 1)[1].split()[0] != "Z":
                                found.append(int(entry))
            except OSError:
                continue
    return found


def test_a_save_grades_again_and_ctrl_c_leaves_no_process(tmp_path):
    puzzle = registry.find(1)
    path = tmp_path / f"{puzzle.module}.py"
    right = lesson_text(puzzle)
    path.write_text(right)
    marker = f"GRADER_WATCH_TEST_{secrets.token_hex(6)}"
    environment = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    environment.update({marker: "1", "TRITON_INTERPRET": "1", "GRADER_RESULTS": str(tmp_path / "results.json")})
    watch = subprocess.Popen([sys.executable, "-m", "grader", "1", "--file", str(path), "--watch"], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment,
                             preexec_fn=as_in_a_terminal)
    out, err = _Lines(watch.stdout), _Lines(watch.stderr)
    try:
        assert "★ Solved" in out.until("★ Solved", "✗")
        err.until("save to grade again")
        time.sleep(0.05)  # a file system whose clock ticks coarsely still sees a new modification time
        path.write_text(right.replace("x + y", "x - y"))  # the learner saves a mistake
        out.until("changed: grading again")
        assert "✗" in out.until("✗", "★ Solved")
        err.until("save to grade again")
        assert len(_processes_with(marker)) >= 2, "no worker waits with its imports done for the next save"
        watch.send_signal(signal.SIGINT)
        assert watch.wait(timeout=HANG) == 0
        err.until("stopped watching")
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.wait()
    deadline = time.monotonic() + 30
    while _processes_with(marker) and time.monotonic() < deadline:  # the kernel reaps a dying worker at once
        time.sleep(0.1)
    assert _processes_with(marker) == [], "the watch left processes behind"


def test_watch_refuses_what_it_cannot_show():
    run = subprocess.run([sys.executable, "-m", "grader", "1", "--watch", "--json"], cwd=ROOT, capture_output=True,
                         text=True, timeout=HANG)
    assert run.returncode == 2 and "--watch grades again on every save" in run.stderr
