"""``python -m grader bench``: its arguments, the recorded table (``--recorded``), and a run on the GPU whose rows are
printed and written (Markdown, JSON, a figure) even when the run dies part way."""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import signal
import sys

from grader import env
from grader.bench.measure import copy_bandwidth, exp2_rate, matmul_rate
from grader.bench.plots import plot, plot_speedups
from grader.bench.tables import (
    OURS_AT,
    RECORDED,
    TABLE_BEGIN,
    TABLE_END,
    markdown,
    recorded_peers,
    recorded_rows,
    write_table,
)
from grader.bench.timing import bench_puzzle, run_once, settings_of, size_label


def _parser():
    parser = argparse.ArgumentParser(prog="python -m grader bench", description="Time puzzles on the GPU.")
    parser.add_argument("puzzles", nargs="*", metavar="PUZZLE", help="which puzzles (with --recorded: all if none)")
    parser.add_argument("--impl", choices=("puzzles", "solutions"), default="solutions")
    parser.add_argument("--file", metavar="PATH", help="time the launcher defined in this file")
    parser.add_argument("--plot", metavar="FILE.png",
                        help="draw the times over sizes; with --recorded, the speed-up over the best peer "
                             "(needs matplotlib)")
    parser.add_argument("--json", metavar="FILE", help="also write every measurement as JSON")
    parser.add_argument("--markdown", metavar="FILE",
                        help="also write the tables as Markdown; with --recorded, the peers table into FILE "
                             f"between the lines {TABLE_BEGIN} and {TABLE_END}")
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile (it takes a while)")
    parser.add_argument("--sweep", action="store_true",
                        help="also time the solution at every setting of its Bench.sweep (the best-swept column)")
    parser.add_argument("--sizes", metavar="TEXT", help="only the sizes whose name contains TEXT")
    parser.add_argument("--once", action="store_true",
                        help="run the solution and each peer once per size, untimed, between cudaProfilerStart and "
                             "cudaProfilerStop: for `ncu --profile-from-start off`")
    parser.add_argument("--recorded", action="store_true",
                        help=f"print the peers table recorded on a GPU ({RECORDED}); needs no GPU")
    return parser


def _recorded(args, parser) -> int:
    """--recorded: the recorded peers table, printed; with --plot, its figure; with --markdown, put into a file."""
    from grader.course import registry

    try:
        numbers = [registry.find(p).number for p in args.puzzles] or None
    except KeyError as exc:
        parser.error(exc.args[0])
    text = recorded_peers(numbers)
    print(text)
    if args.markdown:
        write_table(args.markdown, text)
    if args.plot:
        rows = [r for r in recorded_rows()[1] if numbers is None or r["puzzle"] in numbers]
        print(f"\n{args.plot}: {len(plot_speedups(rows, args.plot))} bars")
    return 0


def main(argv: list[str]) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.recorded:
        return _recorded(args, parser)
    if not args.puzzles:
        parser.error("name the puzzles to time (or --recorded for the table recorded on an H200)")
    mode = env.choose_mode()
    if mode.interpret:
        print("error: bench needs a CUDA GPU (timings in the interpreter mean nothing); the times recorded on an "
              f"H200: python -m grader bench --recorded {' '.join(args.puzzles)}", file=sys.stderr)
        return 2
    import torch
    import triton

    from grader.course import registry
    from grader.worker import loader

    puzzles = [registry.find(p) for p in args.puzzles]
    if args.once:
        for puzzle in puzzles:
            launcher = loader.load_launcher(puzzle, args.impl, args.file)
            for size in settings_of(puzzle).sizes:
                if args.sizes is None or args.sizes in size_label(size):
                    ran = run_once(puzzle, launcher, size, not args.no_compile)
                    print(f"puzzle {puzzle.number}, {size_label(size)}: ran once {', '.join(ran)}")
        return 0
    bandwidth, exp_rate = copy_bandwidth(), exp2_rate()
    header = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
              "numpy": env.versions()["numpy"], "python": platform.python_version(),
              "date": datetime.date.today().isoformat(), "copy_bps": bandwidth, "copy_gbps": bandwidth / 1e9,
              "exp2_rate": exp_rate, "ours": OURS_AT, "swept": args.sweep, "command": " ".join(["bench", *argv])}
    flop_rate = None
    if any(getattr(settings_of(p), "flops", None) for p in puzzles):
        flop_rate = header["matmul_flops"] = matmul_rate()
    rows = []
    # `timeout` and schedulers stop a long run with SIGTERM: exit through the `finally` below, which writes the rows
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        for puzzle in puzzles:
            if settings_of(puzzle) is None:
                print(f"puzzle {puzzle.number} has no benchmark", file=sys.stderr)
                continue
            launcher = loader.load_launcher(puzzle, args.impl, args.file)
            for row in bench_puzzle(puzzle, launcher, bandwidth, exp_rate, not args.no_compile, flop_rate,
                                    sweep=args.sweep, sizes=args.sizes):
                rows.append(row)
                print(f"  {row['puzzle']} {row['size']} {row['impl']}: "
                      + (f"{row['us']:.1f} µs" if row["us"] else row["note"]), file=sys.stderr, flush=True)
    finally:  # a run that dies part way (a CUDA fault is fatal to the process) still writes the sizes it finished
        _write(rows, header, args)
    return 0


def _write(rows: list[dict], header: dict, args) -> None:
    text = markdown(rows, header)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": header, "rows": rows}, f, indent=1)
    if args.plot and rows:
        plot(rows, args.plot)
