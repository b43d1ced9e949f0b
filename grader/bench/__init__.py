"""GPU benchmarks: ``python -m grader bench N [N ...]``.

For every size in the puzzle's ``Bench`` entry this times, with ``triton.testing.do_bench``
medians (the L2 cache is flushed before each run):
- the graded implementation (the solution by default), at each candidate block setting, keeping
  the fastest;
- the spec in eager PyTorch, the spec under ``torch.compile``, and the library call a
  practitioner would use instead.

It reports microseconds, speed-up over eager, and GB/s of compulsory traffic (every input read
once, every output written once) against a device-to-device copy measured in the same run. The
floor is the traffic the puzzle's algorithm must move (compulsory plus its re-reads) over that
copy bandwidth; "of floor" is floor time / measured time. For the tensor-core puzzles (a Bench
with ``flops``) it also reports TFLOP/s against torch.matmul's float16 rate, measured in the same
run, and the floor is the larger of the memory floor and the FLOPs at that rate. The Markdown opens with
the peers table (``peers_table``): per puzzle and size, the solution against its fastest correct peer.

    python -m grader bench 11 12 13 --markdown bench.md --json bench.json --plot bench.png
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import platform
import signal
import sys
from collections.abc import Iterator

from grader import env
from grader.course.cases import as_list

OURS = "triton (ours)"  # the graded launcher's row; its variants are "triton (launcher name)"
CUDA_GRAPH = ", CUDA graph"  # the suffix of a row replayed from a CUDA graph
COPY_BYTES = 2 << 30  # large enough to defeat the 60 MB L2
MATMUL_SIZE = 8192  # a float16 matmul this large runs at the tensor cores' sustained rate
RECORDED = "docs/bench/peers.json"  # every puzzle's bench, one run on a GPU (docs/benchmarks.md says which)


def _parser():
    parser = argparse.ArgumentParser(prog="python -m grader bench", description="Time puzzles on the GPU.")
    parser.add_argument("puzzles", nargs="+", metavar="PUZZLE")
    parser.add_argument("--impl", choices=("puzzles", "solutions"), default="solutions")
    parser.add_argument("--file", metavar="PATH", help="time the launcher defined in this file")
    parser.add_argument("--plot", metavar="FILE.png", help="draw the times over sizes (needs matplotlib)")
    parser.add_argument("--json", metavar="FILE", help="also write every measurement as JSON")
    parser.add_argument("--markdown", metavar="FILE", help="also write the tables as Markdown")
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile (it takes a while)")
    parser.add_argument("--recorded", action="store_true",
                        help=f"print the peers table recorded on a GPU ({RECORDED}); needs no GPU")
    return parser


def _median_us(fn) -> float:
    import triton.testing

    return 1000.0 * triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")


def copy_bandwidth() -> float:
    """Bytes per second of a device-to-device copy, counting bytes read plus bytes written."""
    import torch

    src = torch.empty(COPY_BYTES // 4, dtype=torch.float32, device="cuda").uniform_()
    dst = torch.empty_like(src)
    seconds = _median_us(lambda: dst.copy_(src)) * 1e-6
    return 2 * COPY_BYTES / seconds


def exp2_rate() -> float:
    """exp2 evaluations per second when the chip does nothing else: the ceiling for puzzle 6."""
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def exp2_chain(x_ptr, REPEAT: tl.constexpr, B: tl.constexpr):
        offsets = tl.program_id(0) * B + tl.arange(0, B)
        x = tl.load(x_ptr + offsets)
        for _ in tl.static_range(REPEAT):
            x = tl.exp2(-x)  # stays in (0, 1], one exp2 and one negation per step
        tl.store(x_ptr + offsets, x)

    repeat, block = 256, 1024
    x = torch.rand(block * 132 * 64, device="cuda")
    seconds = _median_us(lambda: exp2_chain[(x.numel() // block,)](x, REPEAT=repeat, B=block)) * 1e-6
    return x.numel() * repeat / seconds


def matmul_rate() -> float:
    """FLOP/s of torch.matmul on two 8192 x 8192 float16 matrices: the ceiling for the tensor-core puzzles."""
    import torch

    a, b = (torch.randn(MATMUL_SIZE, MATMUL_SIZE, dtype=torch.float16, device="cuda") for _ in range(2))
    seconds = _median_us(lambda: torch.matmul(a, b)) * 1e-6
    return 2 * MATMUL_SIZE**3 / seconds


def _inputs(puzzle, size):
    """(inputs on the GPU, dims). `size` is a dict of dims, or a Case whose graph gives N and E.
    Values are uniform in [0, 1): positive, so a normaliser never sits near zero."""
    import torch

    from grader.course.cases import Case, case_dims, spec_args, with_saved
    from grader.course.graphs import graph_arrays

    case = size if isinstance(size, Case) else Case("bench", size)
    graph = case.graph(torch.Generator().manual_seed(0)) if case.graph is not None else None
    arrays = graph_arrays(graph) if graph is not None else {}
    dims = case_dims(case, graph)
    gen = torch.Generator(device="cuda").manual_seed(0)
    draw = settings_of(puzzle).draw
    inputs = {}
    for arg in spec_args(puzzle.spec):
        if arg.name in arrays:
            value = arrays[arg.name]
            inputs[arg.name] = value.cuda() if isinstance(value, torch.Tensor) else value
        elif arg.dtype is None:
            inputs[arg.name] = dims[arg.name]
        elif arg.name in draw:
            inputs[arg.name] = draw[arg.name](arg.shape(dims), dims, gen)
        else:
            inputs[arg.name] = torch.rand(arg.shape(dims), generator=gen, device="cuda", dtype=arg.dtype)
    return with_saved(puzzle.spec, inputs), dims  # a backward's saved tensors: its forward's, as in grading


def _traffic(inputs, outputs, extra_reads) -> tuple[int, int]:
    """(compulsory bytes, bytes the puzzle's algorithm moves): inputs once, outputs once, plus re-reads."""
    compulsory = sum(v.numel() * v.element_size() for v in inputs.values() if hasattr(v, "numel"))
    compulsory += sum(o.numel() * o.element_size() for o in outputs)
    extra = sum(times * inputs[name].numel() * inputs[name].element_size() for name, times in extra_reads.items())
    return compulsory, compulsory + int(extra)


def _close(ours, reference, tolerance=(1e-3, 1e-5)) -> bool:
    """Every output within rtol, and atol = a share of the reference's largest |value|: tolerance is
    (rtol, atol share), the puzzle's Bench.close. A 16-bit result is compared in the reference's dtype."""
    import torch

    rtol, atol_share = tolerance
    for mine, theirs in zip(as_list(ours), as_list(reference)):
        scale = theirs.abs().max().clamp_min(1e-30) if theirs.numel() else 1.0
        if mine.shape != theirs.shape or not torch.allclose(mine.to(theirs.dtype), theirs, rtol=rtol,
                                                            atol=atol_share * float(scale)):
            return False
    return True


def _failure(exc: Exception) -> str:
    """A note for something that raised: its type and the first line of its message, table-safe; a peer whose
    package is missing (PyTorch Geometric off the GPU machine) says which."""
    if isinstance(exc, ImportError) and exc.name:
        return f"not installed: {exc.name}"
    lines = str(exc).strip().splitlines()
    message = f": {lines[0][:120]}" if lines else ""
    return f"failed: {type(exc).__name__}{message}".replace("|", "/")


def _fastest(launcher, args, candidates, reference, tolerance=(1e-3, 1e-5)):
    """((median µs, blocks, correct) of the fastest setting that runs, or None; the failures, as notes)."""
    import torch

    best, failures = None, []
    for blocks in candidates:
        try:
            out = launcher(*args, **blocks)
            torch.cuda.synchronize()
            us = _median_us(functools.partial(launcher, *args, **blocks))
        except Exception as exc:  # a setting this GPU cannot run (too many registers, ...): try the next
            print(f"  {blocks}: {type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr)
            failures.append(_failure(exc))
            continue
        if best is None or us < best[0]:
            best = (us, blocks, _close(out, reference, tolerance))
    return best, failures


def _settings_note(blocks) -> str:
    return ", ".join(f"{k}={v}" for k, v in blocks.items())


def _time_baseline(name, baseline, inputs, reference, bench, use_compile) -> list[tuple]:
    """(implementation, µs or None, note, correct) rows for one baseline: its fastest setting, then
    inside a CUDA graph and compiled where the puzzle and the baseline ask for it."""
    import torch

    try:
        prepared = baseline.prepare(inputs)
    except Exception as exc:  # e.g. out of memory for a dense N x N mask
        return [(name, None, _failure(exc), True)]
    run = functools.partial(baseline.run, **prepared)
    best, failures = _fastest(run, [], baseline.settings, reference, bench.close)
    if best is None:
        return [(name, None, failures[0], True)]
    us, settings, correct = best
    note = "; ".join(filter(None, [_settings_note(settings), baseline.note(prepared) if baseline.note else ""]))
    timed = [(name, us, note, correct)]
    if bench.cuda_graph:
        timed.append((name + CUDA_GRAPH, _graph_us(functools.partial(run, **settings)), "", True))
    if use_compile and baseline.compile:
        try:
            compiled_run = torch.compile(baseline.run, dynamic=False)
            compiled_run(**prepared, **settings)
            timed.append((f"{name}, torch.compile",
                          _median_us(functools.partial(compiled_run, **prepared, **settings)), "", True))
        except Exception as exc:
            timed.append((f"{name}, torch.compile", None, _failure(exc), True))
    return timed


def _graph_us(fn) -> float | None:
    """Median µs of `fn` replayed from a CUDA graph, or None where it cannot be captured."""
    import triton.testing

    try:
        return 1000.0 * triton.testing.do_bench_cudagraph(fn, rep=200, return_mode="median")
    except Exception as exc:  # e.g. an op that synchronises with the host (a data-dependent size)
        print(f"  CUDA graph capture failed: {type(exc).__name__}: {str(exc)[:120]}", file=sys.stderr)
        return None


def settings_of(puzzle):
    """The puzzle's Bench from grader/bench/settings.py, or None. Imported when called, not at the top: those
    settings import triton, and `python -m grader bench` chooses the mode before triton is imported."""
    from grader.bench.settings import BENCHES

    return BENCHES.get(puzzle.slug)


def bench_size(puzzle, launcher, size, bandwidth: float, exp_rate: float, use_compile: bool,
               flop_rate: float | None = None, settings=None) -> list[dict]:
    """The rows of one size: every implementation timed. settings: the Bench to use instead of the puzzle's."""
    import torch

    bench = settings or settings_of(puzzle)
    inputs, dims = _inputs(puzzle, size)
    args = list(inputs.values())
    reference = puzzle.spec(**inputs)
    compulsory, moved = _traffic(inputs, as_list(reference), bench.extra_reads)
    label = ", ".join(f"{k}={v}" for k, v in dims.items())
    if getattr(size, "name", None):  # a named Case, such as a batch of graphs
        label = f"{size.name} ({label})"
    timed = []  # (implementation, µs or None, note, correct)
    best, _ = _fastest(launcher, args, bench.blocks, reference, bench.close)
    if best is not None:
        blocks = best[1]
        timed.append((OURS, best[0], _settings_note(blocks), best[2]))
        if bench.cuda_graph:
            timed.append((OURS + CUDA_GRAPH, _graph_us(functools.partial(launcher, *args, **blocks)),
                          "", best[2]))
    module = sys.modules[launcher.__module__]
    for name, wanted in bench.variants.items():
        if wanted(dims):
            variant = getattr(module, name)
            try:
                timed.append((f"triton ({name})", _median_us(functools.partial(variant, *args)), "",
                              _close(variant(*args), reference, bench.close)))
            except Exception as exc:
                timed.append((f"triton ({name})", None, _failure(exc), True))
    if bench.eager_spec:
        timed.append(("eager PyTorch (spec)", _median_us(lambda: puzzle.spec(**inputs)), "", True))
    if bench.eager_spec and bench.cuda_graph:
        timed.append(("eager PyTorch (spec)" + CUDA_GRAPH, _graph_us(lambda: puzzle.spec(**inputs)), "", True))
    if use_compile and bench.compile_spec:
        try:
            compiled = torch.compile(puzzle.spec, dynamic=False)
            compiled(**inputs)
            timed.append(("torch.compile (spec)", _median_us(lambda: compiled(**inputs)), "", True))
        except Exception as exc:
            timed.append(("torch.compile (spec)", None, _failure(exc), True))
    for name, baseline in bench.baselines.items():
        timed += _time_baseline(name, baseline, inputs, reference, bench, use_compile)
    for name, fn in bench.library.items():
        try:
            timed.append((name, _median_us(functools.partial(fn, **inputs)), "",
                          _close(fn(**inputs), reference, bench.close)))
        except Exception as exc:
            timed.append((name, None, _failure(exc), True))

    size_note = bench.size_note(inputs) if bench.size_note else None
    return [_row(puzzle, bench, label, size_note, dims, timing, compulsory, moved, bandwidth, exp_rate, flop_rate)
            for timing in timed]


def _row(puzzle, bench, label, size_note, dims, timing, compulsory, moved, bandwidth, exp_rate, flop_rate) -> dict:
    impl, us, note, correct = timing
    row = {"puzzle": puzzle.number, "size": label, "impl": impl, "us": us, "note": note, "correct": correct,
           "gbps": compulsory / (us * 1e-6) / 1e9 if us else None,
           "floor_us": moved / bandwidth * 1e6, "compulsory_us": compulsory / bandwidth * 1e6}
    if size_note is not None:
        row["size_note"] = size_note
    if bench.exps:  # compute-bound: the floor is the exponentials at the measured exp2 rate
        row["floor_us"] = bench.exps(dims) / exp_rate * 1e6
        row["gexp_per_s"] = bench.exps(dims) / (us * 1e-6) / 1e9 if us else None
    if bench.flops:  # tensor cores: the floor is the FLOPs at torch.matmul's rate, or the traffic if longer
        flops = bench.flops(dims)
        row["flop_floor_us"] = flops / flop_rate * 1e6
        row["floor_us"] = max(row["floor_us"], row["flop_floor_us"])
        row["tflops"] = flops / (us * 1e-6) / 1e12 if us else None
    return row


def bench_puzzle(puzzle, launcher, bandwidth: float, exp_rate: float, use_compile: bool,
                 flop_rate: float | None = None) -> Iterator[dict]:
    """The rows of every size, yielded size by size."""
    import torch

    for dims in settings_of(puzzle).sizes:
        yield from bench_size(puzzle, launcher, dims, bandwidth, exp_rate, use_compile, flop_rate)
        torch.cuda.empty_cache()


def _is_peer(row: dict, replayed: bool) -> bool:
    """A correct result of something other than our solution, timed as launched or replayed from a CUDA graph."""
    return (row["us"] is not None and row["correct"] and not row["impl"].startswith("triton (")
            and row["impl"].endswith(CUDA_GRAPH) == replayed)


def _ours_and_peer(group: list[dict]) -> tuple[dict | None, dict | None, bool]:
    """Our row and the fastest peer's, both launched, or both replayed from CUDA graphs where the bench replays
    them (kernels as short as their launch, where a launch's median is the host's time); whether replayed."""
    for replayed in (True, False):
        ours = next((r for r in group if r["impl"] == OURS + CUDA_GRAPH * replayed and r["us"] is not None), None)
        peer = min((r for r in group if _is_peer(r, replayed)), key=lambda r: r["us"], default=None)
        if replayed and ours is not None and peer is not None:
            return ours, peer, True
    return ours, peer, False


def _comparisons(rows: list[dict]) -> list[tuple]:
    """(puzzle, size, ours, peer, replayed) per puzzle and size, in the rows' order: ``_ours_and_peer`` of each."""
    keys = dict.fromkeys((r["puzzle"], r["size"]) for r in rows)
    return [(number, size, *_ours_and_peer([r for r in rows if (r["puzzle"], r["size"]) == (number, size)]))
            for number, size in keys]


def peers_table(rows: list[dict], comparisons: list[tuple] | None = None) -> str:
    """One row per puzzle and size: our solution (at its fastest block setting), the fastest correct peer (eager,
    torch.compile, library call or baseline), peer µs / our µs (1 or more: ours is faster), and the share of
    the floor ours reaches. Our variants are not peers. A launch is compared with a launch, except where the
    bench also replayed ours and a peer from CUDA graphs (puzzles 9 and 13): there the replays are compared.
    `comparisons`: ``_comparisons(rows)``, where the caller has them already."""
    lines = ["| puzzle | size | solution µs | best peer | peer µs | peer / ours | ours of floor |",
             "|---|---|---:|---|---:|---:|---:|"]
    wrong = {(r["puzzle"], r["size"]) for r in rows if r["impl"] == OURS and not r["correct"]}  # checked on launch
    for number, size, ours, peer, replayed in _comparisons(rows) if comparisons is None else comparisons:
        ours_cells = ["—", "—"] if ours is None else [
            f"{ours['us']:.1f}" + " (CUDA graph)" * replayed + " WRONG RESULT" * ((number, size) in wrong),
            f"{ours['floor_us'] / ours['us']:.0%}"]
        peer_cells = ["—", "—"] if peer is None else [peer["impl"], f"{peer['us']:.1f}"]
        ratio = "—" if ours is None or peer is None else f"{peer['us'] / ours['us']:.2f}x"
        lines.append("| " + " | ".join([str(number), size, ours_cells[0], *peer_cells, ratio, ours_cells[1]]) + " |")
    return "\n".join(lines)


def recorded_peers(numbers, path=None) -> str:
    """The peers table of the puzzles `numbers` as recorded in `path` (default: the repository's RECORDED file),
    under a line saying where and when: what the notebooks show where there is no GPU."""
    from grader.paths import ROOT

    path = ROOT / RECORDED if path is None else path
    try:
        recorded = json.loads(path.read_text())
        header = recorded["header"]
        rows = [r for r in recorded["rows"] if r["puzzle"] in set(numbers)]
        if not rows:
            return f"{path.name} holds no results for puzzle(s) {', '.join(map(str, numbers))}"
        comparisons = _comparisons(rows)
        table = peers_table(rows, comparisons)
        beyond = any(ours and ours["floor_us"] > ours["us"] for _, _, ours, _, _ in comparisons)
        where = (f"Recorded on {header['device']}, {header['date']} (torch {header['torch']}, triton "
                 f"{header['triton']})")
    except (OSError, ValueError, KeyError, TypeError, AttributeError, ZeroDivisionError) as exc:  # a damaged file
        return f"no recorded results to show ({path.name}: {type(exc).__name__})"
    return (f"{where}; median µs, peer / ours of 1 or more means the solution is faster:\n\n" + table
            + ("\n\nOf floor above 100%: faster than the floor's model, which counts re-reads at DRAM speed that came "
               "from L2 (puzzles 4 and 5), writes at a copy's read-and-write speed (2), or flops at the float16 rate "
               "torch.matmul reached at 8192^3 (11)." if beyond else ""))


def markdown(rows: list[dict], header: dict) -> str:
    rates = f"exp2 rate: {header['exp2_rate'] / 1e9:.0f} G/s."
    if "matmul_flops" in header:
        rates += (f" float16 matmul rate (torch.matmul, {MATMUL_SIZE}^3): "
                  f"{header['matmul_flops'] / 1e12:.0f} TFLOP/s.")
    lines = [f"Device: {header['device']}; torch {header['torch']}, triton {header['triton']}, "
             f"numpy {header['numpy']}, Python {header['python']}; {header['date']}.",
             f"Copy bandwidth (device-to-device, read + write): {header['copy_gbps']:.0f} GB/s. {rates}", ""]
    if rows:
        lines += ["### Peers", "", peers_table(rows), ""]
    for number in dict.fromkeys(r["puzzle"] for r in rows):
        group = [r for r in rows if r["puzzle"] == number]
        compute_bound = "gexp_per_s" in group[0]
        tensor_cores = "tflops" in group[0]
        columns = 10 if tensor_cores else 8 if compute_bound else 9
        lines += [f"### Puzzle {number}", ""]
        if tensor_cores:
            lines += ["| size | implementation | median µs | vs eager | TFLOP/s | of matmul rate | GB/s | floor µs "
                      "| of floor | note |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
        elif compute_bound:
            lines += ["| size | implementation | median µs | vs eager | G exp/s | floor µs (exp2) | of floor | note |",
                      "|---|---|---:|---:|---:|---:|---:|---|"]
        else:
            lines += ["| size | implementation | median µs | vs eager | GB/s | of copy BW | floor µs | of floor "
                      "| note |", "|---|---|---:|---:|---:|---:|---:|---:|---|"]
        sizes_seen = set()
        for r in group:
            # the first row of the size whose implementation is eager PyTorch: the spec, or a backward's autograd
            eager = next((e["us"] for e in group if e["size"] == r["size"] and e["impl"].startswith("eager")), None)
            speedup = f"{eager / r['us']:.2f}x" if eager and r["us"] else "—"
            note = r["note"] + ("" if r["correct"] else " WRONG RESULT")
            size = r["size"]
            if r.get("size_note") and size not in sizes_seen:  # said once, on the size's first row
                size = f"{size}; {r['size_note']}"
            sizes_seen.add(r["size"])
            if r["us"] is None:
                cells = ["—"] + [""] * (columns - 4)
            elif tensor_cores:
                cells = [f"{r['us']:.1f}", speedup, f"{r['tflops']:.0f}",
                         f"{r['tflops'] * 1e12 / header['matmul_flops']:.0%}", f"{r['gbps']:.0f}",
                         f"{r['floor_us']:.1f}", f"{r['floor_us'] / r['us']:.0%}"]
            elif compute_bound:
                cells = [f"{r['us']:.1f}", speedup, f"{r['gexp_per_s']:.0f}", f"{r['floor_us']:.1f}",
                         f"{r['floor_us'] / r['us']:.0%}"]
            else:
                cells = [f"{r['us']:.1f}", speedup, f"{r['gbps']:.0f}",
                         f"{r['gbps'] * 1e9 / header['copy_bps']:.0%}", f"{r['floor_us']:.1f}",
                         f"{r['floor_us'] / r['us']:.0%}"]
            lines.append("| " + " | ".join([size, r["impl"], *cells, note]) + " |")
        lines.append("")
    return "\n".join(lines)


def _dim(size: str, name: str) -> str:
    """'N=16384' out of a size label such as 'random (D=64, N=16384, E=524288)'; '' if it has none."""
    return next((part.strip(" ()") for part in size.split(",") if part.strip(" (").startswith(f"{name}=")), "")


def plot(rows: list[dict], path: str) -> None:
    """One panel per puzzle: bars of median µs per size, one bar per implementation."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    numbers = list(dict.fromkeys(r["puzzle"] for r in rows))
    columns = min(3, len(numbers))
    fig_rows = -(-len(numbers) // columns)
    fig, axes = plt.subplots(fig_rows, columns, figsize=(5.5 * columns, 4 * fig_rows), squeeze=False)
    for ax in axes.flat[len(numbers):]:
        ax.set_visible(False)
    for ax, number in zip(axes.flat, numbers):
        group = [r for r in rows if r["puzzle"] == number and r["us"]]
        sizes = list(dict.fromkeys(r["size"] for r in group))
        labels = [size.split(" (")[0] if " (" in size else "x".join(p.split("=")[1] for p in size.split(", "))
                  for size in sizes]
        if len(set(labels)) < len(labels):  # one graph at several sizes: its first word and N tell them apart
            labels = [f"{size.split(' (')[0].split(',')[0].split(' batch')[0]}\n{_dim(size, 'N')}" for size in sizes]
        impls = list(dict.fromkeys(r["impl"] for r in group))
        width = 0.8 / len(impls)
        for i, impl in enumerate(impls):
            points = [(sizes.index(r["size"]) + i * width, r["us"]) for r in group if r["impl"] == impl]
            ax.bar(*zip(*points), width=width, label=impl)
        ax.set_xticks([s + 0.4 - width / 2 for s in range(len(sizes))], labels, fontsize=8,
                      rotation=20 if len(sizes) > 3 else 0)
        times = [r["us"] for r in group]
        if max(times) > 20 * min(times):  # sizes far apart: only a log scale shows the small ones
            ax.set_yscale("log")
        if " (" not in sizes[0]:
            ax.set_xlabel(" x ".join(part.split("=")[0] for part in sizes[0].split(", ")))
        ax.set_ylabel("median µs (lower is better)")
        ax.set_title(f"puzzle {number}")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str]) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.recorded:
        from grader.course import registry

        try:
            numbers = [registry.find(p).number for p in args.puzzles]
        except KeyError as exc:
            parser.error(exc.args[0])
        print(recorded_peers(numbers))
        return 0
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
    bandwidth, exp_rate = copy_bandwidth(), exp2_rate()
    header = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
              "numpy": env.versions()["numpy"], "python": platform.python_version(),
              "date": datetime.date.today().isoformat(), "copy_bps": bandwidth, "copy_gbps": bandwidth / 1e9,
              "exp2_rate": exp_rate}
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
            for row in bench_puzzle(puzzle, launcher, bandwidth, exp_rate, not args.no_compile, flop_rate):
                rows.append(row)
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
