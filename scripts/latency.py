"""How long a learner waits for a verdict: a benchmark, never a test (a loaded machine moves wall time).

Times, through the CLI as a learner runs it, from the command to its exit:
- a stub's "not started" (python -m grader 5, where puzzles/p05_softmax_online.py is still the stub);
- each puzzle's solution (python -m grader N --impl solutions), one at a time;
- every puzzle at once (--all --impl solutions).

Each line gives the wall time and the CPU time of the grader and all its processes (user + system, from
getrusage of the children). On a loaded machine the wall time grows and the CPU time does not, so the CPU time is
the number to compare between runs; on 2 idle cores the wall time is about the CPU time, less what the worker and
the judge overlap. The goals (issue "a course that installs, shows and answers fast"): a stub under 1.5 s, puzzle
1 under 3 s, any puzzle under 10 s, all of them under 45 s, on 2 idle cores.

    python scripts/latency.py                      # everything, as a Markdown table on stdout
    python scripts/latency.py --puzzles 1 5 14     # some puzzles, and the stub
    python scripts/latency.py --markdown docs/latency.md
"""

import argparse
import datetime
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _timed(args: list[str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the children, exit status) of `python -m grader ARGS`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "grader", *args], cwd=ROOT, capture_output=True, text=True,
                         env={k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, run.returncode


def main(argv=None) -> int:
    from grader.course import registry, stubs

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--puzzles", type=int, nargs="*", help="these puzzles only (default: every one, and --all)")
    parser.add_argument("--markdown", help="also write the table to this file")
    args = parser.parse_args(argv)
    numbers = args.puzzles or [p.number for p in registry.PUZZLES]

    rows = []
    puzzle = registry.find(5)
    stub = stubs.make_stub((ROOT / "solutions" / f"{puzzle.module}.py").read_text(), 5)
    if (ROOT / "puzzles" / f"{puzzle.module}.py").read_text() == stub:  # the learner's path: puzzles/, untouched
        rows.append(("puzzle 5's stub (not started)", 1.5, *_timed(["5"])))
    else:
        print(f"puzzles/{puzzle.module}.py is not the stub: its row is left out", file=sys.stderr)
    for number in numbers:
        rows.append((f"puzzle {number}, solution", 3.0 if number == 1 else 10.0,
                     *_timed([str(number), "--impl", "solutions"])))
    if not args.puzzles:
        rows.append(("--all, solutions", 45.0, *_timed(["--all", "--impl", "solutions"])))

    load = os.getloadavg()[0]
    lines = [f"Measured {datetime.date.today().isoformat()} on {platform.machine()}, {os.cpu_count()} cores "
             f"(load average {load:.1f} at the end: above the core count, wall times are the machine's, not the "
             f"grader's), Python {platform.python_version()}:", "",
             "| what | goal (s, 2 idle cores) | wall s | CPU s | exit |", "|---|---:|---:|---:|---:|"]
    lines += [f"| {what} | {goal:g} | {wall:.1f} | {cpu:.1f} | {code} |" for what, goal, wall, cpu, code in rows]
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    return 0 if all(code in (0, 1) and (what.startswith("puzzle 5's stub") or code == 0)
                    for what, _, _, _, code in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
