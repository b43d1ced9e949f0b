"""How long a learner waits for a verdict: a benchmark, never a test (a loaded machine moves wall time).

Times, through the CLI as a learner runs it, from the command to its exit:
- a stub's "not started" (python -m grader 5, where puzzles/p05_softmax_online.py is still the stub);
- each puzzle's solution, graded as a learner's file is (kernel-only: python -m grader N --file COPY), one at a
  time, with where the time went (from GRADER_TRACE: the worker ready, the first case started, the GPU's run and
  the interpreter's checks done);
- every puzzle at once (--all --impl solutions);
- natively (--native), puzzle 1 on a cold Triton cache too;
- a re-grade under --watch: from the save to the report.

Each line gives the wall time and the CPU time of the grader and all its processes (user + system, from
getrusage of the children). On a loaded machine the wall time grows and the CPU time does not, so the CPU time is
the number to compare between runs. The goals (issue 25), on 2 idle cores: puzzle 1 in 2 s, any puzzle in 6 s,
--all in 30 s, a --watch re-grade of puzzle 1 in 1 s; natively on the H200 (16 cores, warm Triton cache): any
puzzle in 6 s (12 s cold), --all in 60 s.

    python scripts/latency.py                      # everything, as a Markdown table on stdout
    python scripts/latency.py --puzzles 1 5 14     # some puzzles, and the stub
    python scripts/latency.py --native --markdown docs/latency_native.md
"""

import argparse
import datetime
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _environment(native: bool, **extra) -> dict:
    environment = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    if not native:
        environment["TRITON_INTERPRET"] = "1"
    environment.update(extra)
    return environment


def _timed(args: list[str], native: bool, **extra) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds of the children, exit status, where the time went) of `python -m grader ARGS`."""
    trace = Path(tempfile.mkdtemp()) / "trace"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.time()
    run = subprocess.run([sys.executable, "-m", "grader", *args], cwd=ROOT, capture_output=True, text=True,
                         env=_environment(native, GRADER_TRACE=str(trace), **extra))
    wall = time.time() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, run.returncode, _breakdown(trace, start)


def _breakdown(trace: Path, start: float) -> str:
    """'worker ready 1.3, first case 1.4, native done 4.0, checks done 3.1' (seconds from the command's start)."""
    try:
        lines = [line.split() for line in trace.read_text().splitlines()]
    except OSError:
        return ""
    shutil.rmtree(trace.parent, ignore_errors=True)
    marks = {}
    for fields in lines:
        when, mode, what = float(fields[0]) - start, fields[1], fields[2] if len(fields) > 2 else ""
        key = {"ready": f"{mode} ready", "start": f"{mode} first case", "done": f"{mode} done"}.get(what)
        if key and (what == "done" or key not in marks):
            marks[key] = when
    return ", ".join(f"{k} {v:.1f}" for k, v in marks.items())


def _watch_regrade(file: Path, native: bool) -> tuple[float, str]:
    """Seconds from a save to the re-grade's report under --watch (puzzle 1), and the exit status's text."""
    command = [sys.executable, "-m", "grader", "1", "--file", str(file), "--watch"]
    watch = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=_environment(native))

    def until(stream, mark):
        for line in stream:
            if mark in line:
                return True
        return False

    try:
        if not (until(watch.stdout, "★ Solved") and until(watch.stderr, "save to grade again")):
            return float("nan"), "no first report"
        time.sleep(1.0)  # the next worker has started its imports; a learner takes longer than this to edit
        file.write_text(file.read_text() + "\n")
        saved = time.time()
        if not until(watch.stdout, "★ Solved"):
            return float("nan"), "no second report"
        return time.time() - saved, "ok"
    finally:
        watch.kill()
        watch.wait()


def main(argv=None) -> int:
    from grader.course import registry, stubs

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--puzzles", type=int, nargs="*", help="these puzzles only (default: every one, and --all)")
    parser.add_argument("--native", action="store_true", help="grade on the GPU (default: the interpreter)")
    parser.add_argument("--all", action="store_true", help="with --puzzles, time --all too")
    parser.add_argument("--markdown", help="also write the table to this file")
    args = parser.parse_args(argv)
    numbers = args.puzzles or [p.number for p in registry.PUZZLES]
    native = args.native
    one, every, everything = (6.0, 6.0, 60.0) if native else (2.0, 6.0, 30.0)

    rows = []
    puzzle = registry.find(5)
    stub = stubs.make_stub((ROOT / "solutions" / f"{puzzle.module}.py").read_text(), 5)
    if (ROOT / "puzzles" / f"{puzzle.module}.py").read_text() == stub:  # the learner's path: puzzles/, untouched
        rows.append(("puzzle 5's stub (not started)", 1.5, *_timed(["5"], native)))
    else:
        print(f"puzzles/{puzzle.module}.py is not the stub: its row is left out", file=sys.stderr)
    copies = Path(tempfile.mkdtemp(prefix="latency-"))
    for number in numbers:
        module = registry.find(number).module
        copy = copies / f"{module}.py"
        shutil.copy(ROOT / "solutions" / f"{module}.py", copy)
        if native and number == numbers[0]:
            cold = Path(tempfile.mkdtemp(prefix="triton-cache-"))
            rows.append((f"puzzle {number}, a learner's file, cold Triton cache", 12.0,
                         *_timed([str(number), "--file", str(copy)], native, TRITON_CACHE_DIR=str(cold))))
            shutil.rmtree(cold, ignore_errors=True)
        rows.append((f"puzzle {number}, a learner's file", one if number == 1 else every,
                     *_timed([str(number), "--file", str(copy)], native)))
    if not args.puzzles or args.all:
        rows.append(("--all, solutions", everything, *_timed(["--all", "--impl", "solutions"], native)))
    if 1 in numbers:
        seconds, status = _watch_regrade(copies / f"{registry.find(1).module}.py", native)
        rows.append(("--watch: puzzle 1 graded again after a save", 1.0, seconds, float("nan"),
                     0 if status == "ok" else 1, status))
    shutil.rmtree(copies, ignore_errors=True)

    load = os.getloadavg()[0]
    versions = _versions()
    busy = ": above the core count, wall times are the machine's, not the grader's" if load > os.cpu_count() else ""
    lines = [f"Measured {datetime.date.today().isoformat()} on {platform.machine()}, {os.cpu_count()} cores "
             f"({'native, ' + versions if native else 'the interpreter, ' + versions}; load average {load:.1f} at "
             f"the end{busy}), Python {platform.python_version()}:", "",
             "| what | goal (s) | wall s | CPU s | exit | where the time went (s from the start) |",
             "|---|---:|---:|---:|---:|---|"]
    lines += [f"| {what} | {goal:g} | {wall:.1f} | {'' if cpu != cpu else f'{cpu:.1f}'} | {code} | {where} |"
              for what, goal, wall, cpu, code, where in rows]
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    return 0 if all(code in (0, 1) and (what.startswith("puzzle 5's stub") or code == 0)
                    for what, _, _, _, code, _ in rows) else 1


def _versions() -> str:
    import torch
    import triton

    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU"
    return f"{gpu}, torch {torch.__version__}, triton {triton.__version__}"


if __name__ == "__main__":
    sys.exit(main())
