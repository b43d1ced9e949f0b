"""The quick answers (grader/show/quick.py): the progress table and a stub's "not started" without torch or a
worker, and the same words as the full grader."""

import os
import subprocess
import sys

import pytest
from helpers import ROOT, by_puzzle, run_cli, stub_text

from grader.course import index, registry
from grader.show import quick


def test_the_source_index_agrees_with_the_registry():
    assert [(e.number, e.slug, e.title, e.module) for e in index.entries()] == \
        [(p.number, p.slug, p.title, p.module) for p in registry.PUZZLES]
    assert index.find("softmax_online").number == 5 and index.find(" 4 ").slug == "softmax_three_loop"
    with pytest.raises(KeyError, match="Did you mean softmax_online\\? Choose one of: 1 \\(add\\)"):
        index.find("sofmax")


def _without_torch(tmp_path, *args):
    """`python -m grader ARGS` where importing torch fails: what answers without torch, answers."""
    fake = tmp_path / "no_torch"
    (fake / "torch").mkdir(parents=True, exist_ok=True)
    (fake / "torch" / "__init__.py").write_text("raise ImportError('torch was imported')\n")
    environment = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    environment.update(PYTHONPATH=f"{fake}{os.pathsep}{ROOT}", GRADER_RESULTS=str(tmp_path / "progress.json"))
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=ROOT, capture_output=True, text=True,
                          env=environment, timeout=300)


def test_the_progress_table_and_a_stub_answer_without_torch(tmp_path):
    table = _without_torch(tmp_path)
    assert table.returncode == 0 and "progress in puzzles/" in table.stdout, table.stderr
    if "Your code here" not in (ROOT / "puzzles" / "p01_add.py").read_text():
        pytest.skip("puzzles/p01_add.py is not a stub in this checkout")
    stub = _without_torch(tmp_path, "1")
    assert stub.returncode == 1 and "not started" in stub.stdout and "torch was imported" not in stub.stderr


@pytest.mark.parametrize("puzzle", by_puzzle())
@pytest.mark.slow
def test_a_stub_gets_the_same_report_quick_or_full(puzzle, tmp_path, monkeypatch, capsys):
    """The quick path and the full grader say the same of a stub: its title, and "not started" with the same
    words (the full one adds its mode line on stderr, and names the file it was given)."""
    (tmp_path / "puzzles").mkdir()
    path = tmp_path / "puzzles" / f"{puzzle.module}.py"
    path.write_text(stub_text(puzzle))
    monkeypatch.setattr(quick, "ROOT", tmp_path)
    assert quick.answer([str(puzzle.number)]) == 1
    fast = capsys.readouterr().out.splitlines()
    full = run_cli(str(puzzle.number), "--file", str(path)).stdout.splitlines()
    assert fast[0].split("   (")[0] == full[0].split("   (")[0] == f"Puzzle {puzzle.number}: {puzzle.title}"
    assert [line for line in fast if "not started:" in line] == [line for line in full if "not started:" in line]


@pytest.mark.slow
def test_a_terminal_sees_each_case_as_it_finishes_and_a_pipe_does_not(tmp_path):
    """Grading on a terminal shows a line per judged case on stderr (rewritten in place); piped, stderr holds none."""
    import pty

    environment = {**os.environ, "TRITON_INTERPRET": "1", "GRADER_RESULTS": str(tmp_path / "progress.json")}
    command = [sys.executable, "-m", "grader", "3", "--impl", "solutions"]
    leader, follower = pty.openpty()
    run = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=subprocess.DEVNULL, stderr=follower)
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed: the grader exited
            break
        if not chunk:
            break
        seen += chunk
    run.wait(timeout=600)
    os.close(leader)
    cases = len(registry.find(3).cases)
    assert f"puzzle 3 (1 of {cases})".encode() in seen and f"puzzle 3 ({cases} of {cases})".encode() in seen, \
        seen[-500:]
    piped = run_cli("3", "--impl", "solutions")
    assert f"(1 of {cases})" not in piped.stderr
