"""The command line: ``python -m grader [PUZZLE ...] [options]`` and ``python -m grader bench ...``."""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import signal
import sys
import time
from pathlib import Path

from grader import env
from grader.paths import IMPLS, course_missing, shown
from grader.safe_output import clean_text, one_line

EXAMPLES = """\
examples:
  python -m grader            your progress: every puzzle and whether it is solved
  python -m grader 4          grade puzzle 4 (or by name: python -m grader softmax_three_loop)
  python -m grader 1 --map    draw who loaded and stored each element, in the first failing case

exit status: 0 every selected puzzle passed (or the table was shown), 1 one failed,
2 usage or environment error, 3 the grader itself could not grade (nothing was scored).
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m grader", epilog=EXAMPLES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     description="Grade Triton Attention Puzzles. Installed with pip, "
                                                 "triton-puzzles is the same command.")
    parser.add_argument("puzzles", nargs="*", metavar="PUZZLE", help="puzzle numbers or slugs to grade")
    parser.add_argument("--all", action="store_true", help="grade every puzzle")
    parser.add_argument("--impl", choices=IMPLS, default="puzzles",
                        help="grade your files in puzzles/ (default) or the reference solutions/")
    parser.add_argument("--file", metavar="PATH", help="grade the kernels in this Python file (instructors)")
    parser.add_argument("--own-launcher", action="store_true",
                        help="practice: grade the file's own launcher too; its checks run in the file's process, "
                             "so a classroom should not trust them")
    parser.add_argument("--json", action="store_true", help="print machine-readable results (docs/json.md)")
    parser.add_argument("--gradescope", metavar="FILE",
                        help="also write a Gradescope results.json: one test per puzzle, its report as output")
    parser.add_argument("--seed", type=int, help="replay the random cases of an earlier run")
    parser.add_argument("--interpret", action="store_true", help="use the interpreter even on a GPU")
    parser.add_argument("--coach", action="store_true",
                        help="show the performance coach for a failing puzzle too (it follows every solved one)")
    parser.add_argument("-v", "--verbose", action="store_true", help="show every failing case in full")
    parser.add_argument("--timeout", type=float, default=env.DEFAULT_TIMEOUT, metavar="SECONDS",
                        help=f"time limit per case (default {env.DEFAULT_TIMEOUT:g})")
    parser.add_argument("--map", action="append", nargs="?", const="", metavar="CASE|FILE.png",
                        help="draw which program loaded and stored each element of one case (a name or number; the "
                             "first failing case by default) instead of grading; --map FILE.png writes a PNG too")
    parser.add_argument("--heat", action="store_true", help="with --map: how often each element was read")
    parser.add_argument("--watch", action="store_true",
                        help="grade again each time the puzzle's file is saved (Ctrl-C to stop)")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["bench"]:
        if course_missing():
            print(f"error: {course_missing()}", file=sys.stderr)
            return 2
        from grader import bench

        return bench.main(argv[1:])
    for stream in (sys.stdout, sys.stderr):  # a character the terminal cannot show prints as '?', not a crash
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    parser = _parser()
    args = parser.parse_args(argv)
    if args.all and args.puzzles:
        parser.error("give puzzle numbers or --all, not both")
    if args.file and not (args.puzzles or args.all):
        parser.error("--file needs a puzzle: python -m grader 4 --file student.py")
    if args.file and args.impl != "puzzles":
        parser.error("--file and --impl are alternatives")
    if args.own_launcher and args.impl == "solutions":
        parser.error("--own-launcher is for your files; the solutions are always graded with their launchers")
    if args.gradescope and not (args.puzzles or args.all):
        parser.error("--gradescope needs a puzzle: python -m grader 4 --file student.py --gradescope results.json")
    if args.gradescope and not os.path.isdir(os.path.dirname(os.path.abspath(args.gradescope))):
        parser.error(f"--gradescope {args.gradescope}: its folder does not exist")
    if args.timeout <= 0:
        parser.error("--timeout must be positive")
    if args.heat and args.map is None:
        parser.error("--heat goes with --map: python -m grader 4 --map --heat")
    if args.map is not None and (args.json or args.gradescope):
        parser.error("--map draws a picture and grades nothing: leave out --json and --gradescope")
    if args.watch and (args.json or args.gradescope or args.map is not None):
        parser.error("--watch grades again on every save, for a learner at a terminal: leave out --json, "
                     "--gradescope and --map")
    if args.watch and not (args.puzzles or args.all):
        parser.error("--watch needs a puzzle: python -m grader 1 --watch")
    if course_missing():
        parser.error(course_missing())
    from grader.judge import processes  # no torch: the handlers are in place before the imports that take long

    # SIGTERM ends grading as Ctrl-C does; SIGINT keeps being ignored where it was (a background job)
    handled = [signal.SIGTERM] + ([signal.SIGINT] if signal.getsignal(signal.SIGINT) is signal.default_int_handler
                                  else [])
    previous = {number: signal.signal(number, processes.on_signal) for number in handled}
    try:
        processes.raise_if_signalled()
        return _grade(parser, args)
    except KeyboardInterrupt as exc:  # a signal before grading began (or while it ended): nothing was scored
        return _interrupted(exc.args[0] if exc.args else "SIGINT", [], args)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _grade(parser, args) -> int:
    shown_file = clean_text(one_line(args.file or ""), 300)  # a file name can hold terminal escapes

    from grader.course import index

    try:
        chosen = index.entries() if args.all else [index.find(p) for p in args.puzzles]
        numbers = list(dict.fromkeys(p.number for p in chosen))  # each once, in the order given
    except KeyError as exc:
        parser.error(exc.args[0])
    if args.file and not os.path.isfile(args.file):
        parser.error(f"--file {shown_file}: no such file" if not os.path.exists(args.file) else
                     f"--file {shown_file} is a directory; give the Python file that holds your kernels"
                     if os.path.isdir(args.file) else
                     f"--file {shown_file} is not a regular file (a device or a pipe); give the Python file that "
                     "holds your kernels")

    if not numbers:
        return _table(args)

    # The first worker imports torch and triton while this process imports torch: two seconds each, side by side.
    # Natively, a second one for the interpreter's checks, which run beside the GPU's run.
    interpreted = args.interpret or args.map is not None or env.interpreter_forced() or not _may_have_a_gpu()
    _prestart(interpreted, len(numbers))
    from grader.course import registry

    selected = [registry.find(n) for n in numbers]
    mode = env.choose_mode(args.interpret)
    env.notice(mode.reason)
    problems = env.version_problems(mode)
    if problems:
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        return 2
    if args.file and args.own_launcher:
        env.notice(f"note: --own-launcher runs the code in {shown_file} with your permissions; "
                   "grade untrusted submissions by their kernels alone (without --own-launcher).")

    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    if args.map is not None:
        from grader.show import memory_map

        return memory_map.command(selected, args.map, args.heat, args.impl, args.file, seed, args.timeout,
                                  mode.interpret, args.own_launcher)
    if args.watch:
        return _watch(selected, args, mode)
    return _grade_and_report(selected, args, mode, seed)


def _grade_and_report(selected: list, args, mode: env.Mode, seed: int) -> int:
    """Grade the puzzles, print each report as soon as its puzzle is judged (or the JSON, or a Gradescope file),
    and record the progress table's line; the exit status."""
    from grader import safe_output
    from grader.judge import runner
    from grader.show import gradescope, progress, report

    texts: dict[int, str] = {}  # reports by puzzle, each printed as soon as its puzzle is judged

    def text_of(result) -> str:
        if result.puzzle not in texts:
            texts[result.puzzle] = report.format_result(result, *_rerun_and_replay(result.puzzle, args, seed),
                                                        args.verbose, coach=args.coach)
        return texts[result.puzzle]

    streaming = not (args.json or args.gradescope)
    printed: set[int] = set()
    try:
        with _case_progress(streaming) as shown_cases:
            def print_report(result) -> None:
                shown_cases.clear()
                sys.stderr.flush()  # the notices (and the submission's prints) come before the report
                print(text_of(result) + "\n", flush=True)
                printed.add(result.puzzle)

            results = runner.grade_isolated(selected, args.impl, args.file, seed, mode.interpret, args.timeout,
                                            mode.name, own_launcher=args.own_launcher, progress=shown_cases.show,
                                            on_result=print_report if streaming else None)
    except runner.Broken as exc:  # the grader could not grade: no score, and no result file
        print(f"error: the grader could not grade: {exc}", file=sys.stderr)
        return 3
    except runner.Interrupted as stop:  # every worker has ended; nothing is scored
        return _interrupted(stop.signal, stop.results, args, mode.name, seed)
    if not args.file:
        progress.record(results, args.impl)
    if args.gradescope:
        gradescope.write(args.gradescope, gradescope.from_results(results, [text_of(r) for r in results]))
    sys.stderr.flush()  # the notices (and the submission's prints) come before the report, also when piped
    if args.json:
        print(safe_output.dumps({"schema": "triton-attention-puzzles/grade/1", "mode": mode.name,
                                 "versions": env.versions(), "seed": seed,
                                 "results": [r.to_json() for r in results]}, indent=1))
    else:
        for result in results:
            if result.puzzle not in printed:
                print(text_of(result) + "\n")
        if len(results) > 1:
            print(report.format_summary(results))
    sys.stdout.flush()
    return 0 if all(r.status == "passed" for r in results) else 1


class _CaseLine:
    """On a terminal, a line on stderr that shows each case as it is judged ("puzzle 4 (3 of 13): ✓ ragged"),
    rewritten in place, and cleared before a report is printed and when grading ends."""

    def __init__(self, wanted: bool):
        self.wanted = wanted and sys.stderr.isatty()
        self.width = 0
        self.show = self._show if self.wanted else None

    def _show(self, puzzle, index, case):
        mark = ("✓" if case.passed else "✗") if "utf" in (sys.stderr.encoding or "").lower() else \
            ("ok" if case.passed else "XX")
        line = f"puzzle {puzzle.number} ({index + 1} of {len(puzzle.cases)}): {mark} {one_line(case.name)[:40]}"
        sys.stderr.write("\r" + line.ljust(self.width))
        sys.stderr.flush()
        self.width = len(line)

    def clear(self):
        if self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()
            self.width = 0


@contextlib.contextmanager
def _case_progress(wanted: bool):
    """The case line (nothing with --json, --gradescope, or output to a pipe), cleared when grading ends."""
    line = _CaseLine(wanted)
    try:
        yield line
    finally:
        line.clear()


def _prestart(interpreted: bool, puzzles: int) -> None:
    """Start the workers a grading of this many puzzles will take (grader.judge.runner): one in the interpreter;
    natively up to processes.workers_for's count of each kind, the GPU's and the interpreter's checks beside it."""
    from grader.judge import processes

    if interpreted:
        processes.prestart(interpret=True)
        return
    processes.prestart(interpret=False, count=min(puzzles, processes.workers_for(False)))
    if not env.version_problems(env.Mode(True, "")):
        processes.prestart(interpret=True, count=processes.workers_for(False))


WATCH_POLL = 0.2  # seconds between looks at the watched files


def _watch(selected: list, args, mode: env.Mode) -> int:
    """Grade, then grade again each time a puzzle's file changes, until Ctrl-C. Between gradings a worker (two
    natively) waits with torch and triton imported (``processes.prestart``), so a re-grade starts at once."""
    from grader.judge import processes
    from grader.paths import source_path

    files = sorted({source_path(p, args.impl, args.file) for p in selected})
    names = ", ".join(shown(f) for f in files)
    try:
        while True:
            seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
            seen = [_stamp(f) for f in files]
            code = _grade_and_report(selected, args, mode, seed)
            if code >= 128:  # stopped by a signal while grading: the watch ends too
                return code
            _prestart(mode.interpret, len(selected))
            print(f"watching {names}: save to grade again, Ctrl-C to stop", file=sys.stderr, flush=True)
            while [_stamp(f) for f in files] == seen:
                time.sleep(WATCH_POLL)
            print(f"\n--- {names} changed: grading again ---\n", flush=True)
    except KeyboardInterrupt:
        print("\nstopped watching", file=sys.stderr)
        return 0
    finally:
        processes.discard_prestarted()


def _stamp(path) -> tuple:
    """What tells a saved file from before: its modification time, size and inode (an editor may replace it)."""
    try:
        found = os.stat(path)
    except OSError:
        return ()
    return found.st_mtime_ns, found.st_size, found.st_ino


def _may_have_a_gpu() -> bool:
    """Whether a CUDA GPU may be here, asked without importing torch: an NVIDIA device node or driver. A wrong
    guess costs only the worker started early (grader.judge.processes.prestart)."""
    return os.path.exists("/dev/nvidiactl") or os.path.exists("/proc/driver/nvidia")


def _interrupted(signal_name: str, results: list, args, mode: str = "", seed: int | None = None) -> int:
    """Grading was stopped by a signal: say so (in JSON with --json, with the puzzles graded before it), write no
    Gradescope file, and exit with 128 + the signal's number."""
    print(f"interrupted: grading was stopped by {signal_name}; nothing was scored", file=sys.stderr)
    if args.json:
        from grader import safe_output

        print(safe_output.dumps({"schema": "triton-attention-puzzles/grade/1", "mode": mode,
                                 "versions": env.versions(), "seed": seed, "interrupted": signal_name,
                                 "results": [r.to_json() for r in results]}, indent=1))
    sys.stdout.flush()
    return 128 + (signal.SIGTERM if signal_name == "SIGTERM" else signal.SIGINT)


def _rerun_and_replay(number: int, args, seed: int) -> tuple[str, str]:
    """The commands that grade this puzzle again: with fresh cases, and with the same seed."""
    replay = _replay(number, args, seed)
    return replay.split(" --seed")[0], replay


def _replay(number: int, args, seed: int) -> str:
    parts = ["python -m grader", str(number)]
    if args.impl != "puzzles":
        parts.append(f"--impl {args.impl}")
    if args.file:
        parts.append(f"--file {shown(Path(args.file))}")
    if args.own_launcher:
        parts.append("--own-launcher")
    if args.interpret:
        parts.append("--interpret")
    parts.append(f"--seed {seed}")
    return " ".join(parts)


def _table(args) -> int:
    from grader import safe_output
    from grader.show import progress, report

    rows = progress.rows(args.impl)
    if args.json:
        print(safe_output.dumps({"schema": "triton-attention-puzzles/progress/1", "impl": args.impl,
                                 "puzzles": [{"puzzle": n, "slug": s, "title": t, "status": st}
                                             for n, s, t, st in rows]}, indent=1))
    else:
        print(report.format_table(rows, args.impl))
    return 0
