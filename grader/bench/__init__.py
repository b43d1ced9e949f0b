"""GPU benchmarks: ``python -m grader bench N [N ...]``.

For every size in the puzzle's ``Bench`` entry this times, with ``triton.testing.do_bench``
medians (the L2 cache is flushed before each run):
- the graded implementation (the solution by default) as a user calls it, with no block-size arguments, so at
  the launcher's own defaults; the note says what the launcher chose (each kernel's grid, block sizes, warps and
  stages). With ``--sweep``, also every candidate setting of the puzzle's ``Bench.sweep``: the fastest is the
  peers table's "best swept" column. Where the solution goes beyond its lesson, its lesson form (what a learner's
  own solved puzzle runs) too;
- the spec in eager PyTorch, the spec under ``torch.compile``, and the library call a
  practitioner would use instead.

It reports microseconds, speed-up over eager, and GB/s of compulsory traffic (every input read
once, every output written once) against a device-to-device copy measured in the same run. The
floor is the traffic the puzzle's algorithm must move (compulsory plus its re-reads) over that
copy bandwidth; "of floor" is floor time / measured time. For the tensor-core puzzles (a Bench
with ``flops``) it also reports TFLOP/s against torch.matmul's float16 rate, measured in the same
run, and the floor is the larger of the memory floor and the FLOPs at that rate. The Markdown opens with
the peers table (``peers_table``): per puzzle and size, the solution at its defaults against its fastest correct
peer.

    python -m grader bench 11 12 13 --sweep --markdown bench.md --json bench.json
    python -m grader bench --recorded                  # the table recorded on an H200 (docs/bench/peers.json)
    python -m grader bench --recorded --plot docs/benchmarks.png --markdown docs/benchmarks.md
    ncu --profile-from-start off python -m grader bench 12 --once --sizes "N=16384, T=16384, D=128"
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import platform
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from grader import env
from grader.course.cases import as_list

OURS = "triton (ours)"  # the graded launcher at its defaults; its variants are "triton (launcher name)"
SWEPT = "triton (ours), swept"  # the graded launcher at one of its Bench.sweep settings (--sweep)
LESSON = "triton (lesson form)"  # the solution without its "beyond the lesson" sections, at its defaults
OURS_AT = "defaults: the launcher called with no block-size arguments"  # the header's "ours", what OURS means
CUDA_GRAPH = ", CUDA graph"  # the suffix of a row replayed from a CUDA graph
COPY_BYTES = 2 << 30  # large enough to defeat the 60 MB L2
MATMUL_SIZE = 8192  # a float16 matmul this large runs at the tensor cores' sustained rate
RECORDED = "docs/bench/peers.json"  # every puzzle's bench, one run on a GPU (docs/benchmarks.md says which)
TABLE_BEGIN, TABLE_END = "<!-- peers table: begin -->", "<!-- peers table: end -->"  # --recorded --markdown FILE
PLOTTED = "plotted data"  # the PNG text chunk that holds the numbers a --recorded --plot figure draws


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


class GraderCheck:
    """A result is correct at a bench size when the grader would pass it there: every element within the puzzle's
    own tolerance of the spec run in float64 (grader.judge.checker.within, on the GPU). The record of 2026-12-01
    used a flat (rtol, share of the largest |value|) instead, which called the backward passes of puzzles 14 and 17
    wrong, PyTorch's own and FlashAttention-2's among them: their gradients are sums that cancel."""

    def __init__(self, puzzle, inputs: dict):
        import torch

        wide = {k: v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v
                for k, v in inputs.items()}
        self.expected = as_list(puzzle.spec(**wide))
        self.allowed = [t.allowed(wide, e) for t, e in zip(puzzle.tolerances, self.expected)]

    def accepts(self, result) -> bool:
        from grader.judge.checker import within

        results = as_list(result)
        return len(results) == len(self.expected) and all(
            mine.shape == exp.shape and bool(within(mine.double(), exp, ok + self._rounding(mine, exp)).all())
            for mine, exp, ok in zip(results, self.expected, self.allowed))

    @staticmethod
    def _rounding(mine, expected):
        """A library peer that returns float16 where the puzzle returns float32 (torch.matmul on float16) is also
        allowed the rounding of its dtype: half a unit in the last place of the exact answer."""
        import torch

        if not mine.is_floating_point() or mine.element_size() >= 4:
            return 0.0
        return expected.abs() * torch.finfo(mine.dtype).eps / 2


def _close(ours, reference) -> bool:
    """Whether `ours` is correct: GraderCheck's verdict."""
    return reference.accepts(ours)


def _failure(exc: Exception) -> str:
    """A note for something that raised: its type and the first line of its message, table-safe; a peer whose
    package is missing (PyTorch Geometric off the GPU machine) says which."""
    if isinstance(exc, ImportError) and exc.name:
        return f"not installed: {exc.name}"
    lines = str(exc).strip().splitlines()
    message = f": {lines[0][:120]}" if lines else ""
    return f"failed: {type(exc).__name__}{message}".replace("|", "/")


def _fastest(launcher, args, candidates, reference):
    """((median µs, setting, correct) of the fastest setting that runs, or None; the failures, as notes)."""
    best, failures = None, []
    for setting in candidates:
        us, note, correct = _time_setting(launcher, args, setting, reference)
        if us is None:
            failures.append(note)
        elif best is None or us < best[0]:
            best = (us, setting, correct)
    return best, failures


def _time_setting(launcher, args, setting, reference) -> tuple[float | None, str, bool]:
    """(median µs or None, a failure note or '', correct) of ``launcher(*args, **setting)``. Keys of `setting` the
    launcher does not take (num_warps, num_stages, a constexpr such as GROUP_M) override its kernels' launches:
    the launches are recorded, then replayed with them (so the output's allocation is not timed)."""
    import torch

    keywords, overrides = _split_setting(launcher, setting)
    try:
        if overrides:
            result, launches = _recorded_call(launcher, *args, **keywords)  # result: the output the replays write
            run = functools.partial(_replay, launches, overrides)
            run()
        else:
            run = functools.partial(launcher, *args, **keywords)
            result = run()
        torch.cuda.synchronize()
        correct = _close(result, reference)  # before the timing: replays write into `result` again
        us = _median_us(run)
    except Exception as exc:  # a setting this GPU cannot run (too many registers, ...): try the next
        print(f"  {setting}: {type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr)
        return None, _failure(exc), True
    return us, "", correct


def _settings_note(blocks) -> str:
    return ", ".join(f"{k}={v}" for k, v in blocks.items())


# -- what a launcher launches --------------------------------------------------------------------------------

class Launch(NamedTuple):
    """One kernel launch a launcher made: the kernel, its grid, and its arguments."""
    kernel: object  # the @triton.jit function
    grid: tuple
    args: tuple
    kwargs: dict

    def describe(self) -> str:
        """'name[grid](B0=1, B1=16384, num_warps=32)': the launch's keyword settings (block sizes, warps, stages)."""
        name = getattr(getattr(self.kernel, "fn", None), "__name__", type(self.kernel).__name__)
        grid = "x".join(map(str, self.grid)) if isinstance(self.grid, tuple) else "grid()"
        settings = ", ".join(f"{k}={v}" for k, v in self.kwargs.items() if isinstance(v, (bool, int, str)))
        return f"{name}[{grid}]({settings})"


class _Recorder:
    """Stands in for a kernel while a launcher runs: `kernel[grid](...)` is recorded, not run."""

    def __init__(self, kernel, launches: list):
        self.kernel, self.launches = kernel, launches

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.launches.append(Launch(self.kernel, grid, args, kwargs))


def launches_of(launcher, *args, **kwargs) -> list[Launch]:
    """The kernel launches ``launcher(*args, **kwargs)`` makes, recorded and not run. Needs no GPU."""
    return _recorded_call(launcher, *args, **kwargs)[1]


def _recorded_call(launcher, *args, **kwargs) -> tuple[object, list[Launch]]:
    """(what the launcher returned, its launches): while it runs, every kernel of its module stands in as a
    recorder (the launcher finds its kernels among the module's globals), so nothing is launched and the output
    it returns is not written."""
    import triton

    module = sys.modules[launcher.__module__]
    kernels = {name: value for name, value in vars(module).items() if isinstance(value, triton.KernelInterface)}
    launches: list[Launch] = []
    try:
        for name, kernel in kernels.items():
            setattr(module, name, _Recorder(kernel, launches))
        result = launcher(*args, **kwargs)
    finally:
        for name, kernel in kernels.items():
            setattr(module, name, kernel)
    return result, launches


def launches_note(launches: list[Launch]) -> str:
    """What the launcher chose, one kernel after another; table-safe."""
    return "; ".join(launch.describe() for launch in launches).replace("|", "/")


def _replay(launches: list[Launch], overrides: dict):
    """Launch the recorded launches again, each with `overrides` in its keyword arguments."""
    for launch in launches:
        launch.kernel[launch.grid](*launch.args, **{**launch.kwargs, **overrides})


def _split_setting(launcher, setting) -> tuple[dict, dict]:
    """(the keywords `launcher` takes, the rest: launch overrides)."""
    import inspect

    parameters = inspect.signature(launcher).parameters
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return dict(setting), {}
    keywords = {k: v for k, v in setting.items() if k in parameters}
    return keywords, {k: v for k, v in setting.items() if k not in parameters}


def lesson_launcher(puzzle, launcher):
    """The launcher of `launcher`'s file without its "beyond the lesson" sections, which is what a learner's solved
    puzzle runs; None where the file has no such section."""
    from grader.course.stubs import lesson_form
    from grader.worker import loader

    path = Path(sys.modules[launcher.__module__].__file__)
    text = path.read_text()
    if "# >>> beyond the lesson:" not in text:
        return None
    lesson = lesson_form(text, puzzle.number)
    copy = Path(tempfile.mkdtemp(prefix="bench-lesson-")) / path.name  # kept: triton reads the kernels' source
    copy.write_text(lesson)
    return loader.load_launcher(puzzle, "solutions", str(copy))


def _time_baseline(name, baseline, inputs, reference, bench, use_compile) -> list[tuple]:
    """(implementation, µs or None, note, correct) rows for one baseline: its fastest setting, then
    inside a CUDA graph and compiled where the puzzle and the baseline ask for it."""
    import torch

    if baseline.compiles and not use_compile:
        return []  # --no-compile: FlexAttention and torch.compile peers compile as they prepare
    try:
        prepared = baseline.prepare(inputs)
    except Exception as exc:  # e.g. out of memory for a dense N x N mask
        return [(name, None, _failure(exc), True)]
    run = functools.partial(baseline.run, **prepared)
    best, failures = _fastest(run, [], baseline.settings, reference)
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


def _label(size, dims=None) -> str:
    """A size's name in the tables: its dims ('N0=4096, T=32768'), after its Case's name where it has one."""
    if dims is None:  # before the inputs are made: a Case's name, or a dict's dims
        return getattr(size, "name", None) or ", ".join(f"{k}={v}" for k, v in size.items())
    label = ", ".join(f"{k}={v}" for k, v in dims.items())
    return f"{size.name} ({label})" if getattr(size, "name", None) else label


def _chosen(launcher, args, setting=None) -> str:
    """What `launcher` launches with `setting` (launch overrides applied), as a note."""
    keywords, overrides = _split_setting(launcher, setting or {})
    try:
        launches = launches_of(launcher, *args, **keywords)
    except Exception as exc:  # the launcher refuses the setting: _time_setting reports it
        return f"not recorded ({_failure(exc)})"
    return launches_note([launch._replace(kwargs={**launch.kwargs, **overrides}) for launch in launches])


def _ours(launcher, args, reference, bench, sweep: bool, lesson=None) -> list[tuple]:
    """(implementation, µs or None, note, correct) rows of the graded launcher: at its defaults (the note says what
    it chose), replayed from a CUDA graph where the bench asks for it, the lesson form at its defaults where there is
    one, and with `sweep`, at every setting of bench.sweep (a setting that launches what the defaults launch is not
    timed again)."""
    timed = []
    for impl, run in ((OURS, launcher), (LESSON, lesson)):
        if run is None:
            continue
        us, failure, correct = _time_setting(run, args, {}, reference)
        chosen = _chosen(run, args)
        timed.append((impl, us, f"defaults: {chosen}" if us is not None else failure, correct))
        if bench.cuda_graph and us is not None:
            timed.append((impl + CUDA_GRAPH, _graph_us(functools.partial(run, *args)), "", correct))
        if impl == OURS:
            defaults = (us, chosen, correct)
    for setting in bench.sweep if sweep else ():
        chosen = _chosen(launcher, args, setting)
        if defaults[0] is not None and chosen == defaults[1]:
            timed.append((SWEPT, defaults[0], f"{_settings_note(setting)} (the defaults)", defaults[2]))
            continue
        us, failure, correct = _time_setting(launcher, args, setting, reference)
        timed.append((SWEPT, us, _settings_note(setting) if us is not None else f"{_settings_note(setting)}: {failure}",
                      correct))
    return timed


def bench_size(puzzle, launcher, size, bandwidth: float, exp_rate: float, use_compile: bool,
               flop_rate: float | None = None, settings=None, sweep: bool = False, lesson=None) -> list[dict]:
    """The rows of one size: every implementation timed. settings: the Bench to use instead of the puzzle's;
    sweep: also time bench.sweep; lesson: the lesson form's launcher (``lesson_launcher``), to time beside ours."""
    import torch

    bench = settings or settings_of(puzzle)
    inputs, dims = _inputs(puzzle, size)
    args = list(inputs.values())
    reference = GraderCheck(puzzle, inputs)
    compulsory, moved = _traffic(inputs, as_list(puzzle.spec(**inputs)), bench.extra_reads)
    label = _label(size, dims)
    timed = _ours(launcher, args, reference, bench, sweep, lesson)  # (implementation, µs or None, note, correct)
    module = sys.modules[launcher.__module__]
    for name, wanted in bench.variants.items():
        if wanted(dims):
            variant = getattr(module, name)
            try:
                timed.append((f"triton ({name})", _median_us(functools.partial(variant, *args)), "",
                              _close(variant(*args), reference)))
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
                          _close(fn(**inputs), reference)))
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
                 flop_rate: float | None = None, sweep: bool = False, sizes: str | None = None) -> Iterator[dict]:
    """The rows of every size (those whose name contains `sizes`, if given), yielded size by size."""
    import torch

    lesson = lesson_launcher(puzzle, launcher)
    for size in settings_of(puzzle).sizes:
        if sizes is None or sizes in _label(size):
            yield from bench_size(puzzle, launcher, size, bandwidth, exp_rate, use_compile, flop_rate, sweep=sweep,
                                  lesson=lesson)
            torch.cuda.empty_cache()


def run_once(puzzle, launcher, size, use_compile: bool) -> list[str]:
    """Run the solution at its defaults and each peer once, after a first call that compiles and warms them, between
    cudaProfilerStart and cudaProfilerStop (under NVTX ranges named after each), untimed: for
    ``ncu --profile-from-start off``, which then profiles only these. Returns the implementations run, in order."""
    import torch

    bench = settings_of(puzzle)
    inputs, _ = _inputs(puzzle, size)
    runs = {OURS: functools.partial(launcher, *inputs.values())}
    if use_compile and bench.compile_spec:
        runs["torch.compile (spec)"] = functools.partial(torch.compile(puzzle.spec, dynamic=False), **inputs)
    runs.update({name: functools.partial(fn, **inputs) for name, fn in bench.library.items()})
    for name, baseline in bench.baselines.items():  # at its first setting, prepared untimed
        runs[name] = functools.partial(baseline.run, **baseline.prepare(inputs), **baseline.settings[0])
    for run in runs.values():
        run()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for name, run in runs.items():
        torch.cuda.nvtx.range_push(name)
        run()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
    torch.cuda.profiler.stop()
    return list(runs)


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
    """One row per puzzle and size: our solution as a user calls it (no block-size arguments: the launcher's
    defaults), the fastest correct peer (eager, torch.compile, library call or baseline), peer µs / our µs (1 or
    more: ours is faster), and the share of the floor ours reaches; where the rows hold a sweep (``--sweep``), also
    the fastest correct setting swept, which the ratio does not use. Our variants are not peers. A launch is compared
    with a launch, except where the bench also replayed ours and a peer from CUDA graphs (puzzles 9 and 13): there
    the replays are compared. `comparisons`: ``_comparisons(rows)``, where the caller has them already."""
    swept = any(r["impl"] == SWEPT for r in rows)
    lines = ["| puzzle | size | solution µs | best peer | peer µs | peer / ours | ours of floor |"
             + " best swept µs |" * swept, "|---|---|---:|---|---:|---:|---:|" + "---:|" * swept]
    wrong = {(r["puzzle"], r["size"]) for r in rows if r["impl"] == OURS and not r["correct"]}  # checked on launch
    for number, size, ours, peer, replayed in _comparisons(rows) if comparisons is None else comparisons:
        ours_cells = ["—", "—"] if ours is None else [
            f"{ours['us']:.1f}" + " (CUDA graph)" * replayed + " WRONG RESULT" * ((number, size) in wrong),
            f"{ours['floor_us'] / ours['us']:.0%}"]
        peer_cells = ["—", "—"] if peer is None else [peer["impl"], f"{peer['us']:.1f}"]
        ratio = "—" if ours is None or peer is None else f"{peer['us'] / ours['us']:.2f}x"
        cells = [str(number), size, ours_cells[0], *peer_cells, ratio, ours_cells[1]]
        if swept:
            best = min((r for r in rows if (r["puzzle"], r["size"]) == (number, size) and r["impl"] == SWEPT
                        and r["us"] is not None and r["correct"]), key=lambda r: r["us"], default=None)
            cells.append("—" if best is None else f"{best['us']:.1f} ({best['note']})")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def recorded_rows(path=None) -> tuple[dict, list[dict]]:
    """(header, rows) of the recorded bench (default: the repository's RECORDED file)."""
    from grader.paths import ROOT

    recorded = json.loads((ROOT / RECORDED if path is None else Path(path)).read_text())
    return recorded["header"], recorded["rows"]


def recorded_peers(numbers=None, path=None) -> str:
    """The peers table of the puzzles `numbers` (default: all) as recorded in `path` (default: the repository's
    RECORDED file), under a line saying where and when: what the notebooks show where there is no GPU."""
    from grader.paths import ROOT

    path = ROOT / RECORDED if path is None else Path(path)
    try:
        header, rows = recorded_rows(path)
        rows = [r for r in rows if numbers is None or r["puzzle"] in set(numbers)]
        if not rows:
            return f"{path.name} holds no results for puzzle(s) {', '.join(map(str, numbers))}"
        comparisons = _comparisons(rows)
        table = peers_table(rows, comparisons)
        beyond = any(ours and ours["floor_us"] > ours["us"] for _, _, ours, _, _ in comparisons)
        where = (f"Recorded on {header['device']}, {header['date']} (torch {header['torch']}, triton "
                 f"{header['triton']}); the solution {_ours_at(header)}")
    except (OSError, ValueError, KeyError, TypeError, AttributeError, ZeroDivisionError) as exc:  # a damaged file
        return f"no recorded results to show ({path.name}: {type(exc).__name__})"
    return (f"{where}; median µs, peer / ours of 1 or more means the solution is faster:\n\n" + table
            + ("\n\nOf floor above 100%: faster than the floor's model, which counts re-reads at DRAM speed that came "
               "from L2 (puzzles 4 and 5), writes at a copy's read-and-write speed (2), or flops at the float16 rate "
               "torch.matmul reached at 8192^3 (11)." if beyond else ""))


def _ours_at(header: dict) -> str:
    """How the recorded file timed the solution: at its defaults, or (files before that rule) its best setting."""
    if header.get("ours") == OURS_AT:
        return "as a user calls it (its launcher's defaults)"
    return "at the fastest of its bench's block settings"


# -- the figure of the recorded peers table --------------------------------------------------------------------

def speedup_data(rows: list[dict]) -> list[dict]:
    """What the --recorded figure draws, per puzzle and size: our time, the best peer's (both rounded to 0.1 µs, as
    the table shows them), and the peer's name."""
    return [{"puzzle": number, "size": size, "ours_us": round(ours["us"], 1), "peer_us": round(peer["us"], 1),
             "peer": peer["impl"]}
            for number, size, ours, peer, _ in _comparisons(rows) if ours is not None and peer is not None]


def _short_sizes(sizes: list[str]) -> list[str]:
    """Labels for one puzzle's sizes: a named size's name ('batch 512'), with its N where two names repeat; plain
    dims as they are."""
    names = [size.split(" (")[0] for size in sizes]
    return [f"{name}, {_dim(size, 'N')}" if names.count(name) > 1 else name for name, size in zip(names, sizes)]


def plot_speedups(rows: list[dict], path: str) -> list[dict]:
    """Bars of peer µs / our µs per puzzle and size (log scale, 1 = as fast as the best peer), each labelled with
    its ratio and its peer. The numbers drawn are stored in the PNG's text chunk PLOTTED as JSON, so that a test can
    check the figure is current without comparing pixels. Returns them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from grader.course import registry

    data = speedup_data(rows)
    labels = []
    for number in dict.fromkeys(d["puzzle"] for d in data):
        sizes = [d["size"] for d in data if d["puzzle"] == number]
        labels += [f"{number} {registry.find(number).slug}: {short}" for short in _short_sizes(sizes)]
    ratios = [d["peer_us"] / d["ours_us"] for d in data]
    fig, ax = plt.subplots(figsize=(12, 0.26 * len(data) + 1.2))
    positions = range(len(data))[::-1]  # the first puzzle on top
    for y, d in zip(positions, data):  # every other puzzle on a grey band
        if d["puzzle"] % 2 == 0:
            ax.axhspan(y - 0.5, y + 0.5, color="#f0f0f0", zorder=0)
    ax.barh(positions, ratios, color=["#2e7d32" if r >= 1 else "#c62828" for r in ratios], height=0.7, zorder=2)
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8, zorder=3)
    ticks = [t for t in (0.25, 0.5, 1, 2, 4, 8, 16, 32) if min(ratios + [1]) / 1.3 <= t <= max(ratios + [1]) * 1.3]
    ax.set_xticks(ticks, [f"{t:g}x" for t in ticks])
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_yticks(list(positions), labels, fontsize=8)
    ax.set_ylim(-0.6, len(data) - 0.4)
    for y, ratio, d in zip(positions, ratios, data):
        ax.text(ratio * 1.04, y, f"{ratio:.2f}x  vs {d['peer']}", va="center", fontsize=7, zorder=4)
    ax.set_xlim(min(ratios + [1.0]) / 1.3, max(ratios + [1.0]) * 7)
    ax.set_xlabel("best peer's median time / the solution's (log scale): right of 1x, the solution is faster")
    ax.set_title("Each solution against the fastest peer at each size", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={PLOTTED: json.dumps(data, ensure_ascii=True), "Software": None})
    plt.close(fig)
    return data


def plotted_data(path) -> list[dict] | None:
    """The numbers a --recorded figure drew (its PNG text chunk PLOTTED), or None if it has none. Reads the PNG's
    chunks itself: no image library needed."""
    import zlib

    data = Path(path).read_bytes()
    at = 8  # past the signature
    while at + 8 <= len(data):
        length = int.from_bytes(data[at:at + 4], "big")
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + length]
        if kind in (b"tEXt", b"zTXt"):
            key, _, text = body.partition(b"\0")
            if kind == b"zTXt":
                text = zlib.decompress(text[1:])  # past the compression-method byte
            if key.decode("latin-1") == PLOTTED:
                return json.loads(text.decode("latin-1"))
        at += 12 + length
    return None


def write_table(path: str, table: str) -> None:
    """Put `table` into the Markdown file `path` between the lines TABLE_BEGIN and TABLE_END (a new file holds just
    the table between them)."""
    file = Path(path)
    text = file.read_text() if file.exists() else f"{TABLE_BEGIN}\n{TABLE_END}\n"
    before, begin, rest = text.partition(TABLE_BEGIN + "\n")
    _, end, after = rest.partition(TABLE_END)
    if not begin or not end:
        raise ValueError(f"{path} has no {TABLE_BEGIN} ... {TABLE_END} lines to put the table between")
    file.write_text(f"{before}{TABLE_BEGIN}\n{table}\n{TABLE_END}{after}")


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
                      rotation=30 if len(sizes) > 2 else 0, ha="right" if len(sizes) > 2 else "center")
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
                if args.sizes is None or args.sizes in _label(size):
                    ran = run_once(puzzle, launcher, size, not args.no_compile)
                    print(f"puzzle {puzzle.number}, {_label(size)}: ran once {', '.join(ran)}")
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
