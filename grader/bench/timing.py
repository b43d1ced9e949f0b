"""The rows of a bench: for each size of a puzzle's ``Bench`` (grader/bench/settings.py), the graded launcher at its
defaults (and its lesson form, and with ``--sweep`` every swept setting), the spec eager and compiled, the library
calls and the baselines, each timed and checked (``bench_size``); ``run_once`` runs them once for a profiler."""

from __future__ import annotations

import functools
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from grader.bench.launches import launches_note, launches_of, recorded_call, replay, split_setting
from grader.bench.measure import GraderCheck, failure_note, graph_us, median_us
from grader.course.cases import as_list

OURS = "triton (ours)"  # the graded launcher at its defaults; its variants are "triton (launcher name)"

SWEPT = "triton (ours), swept"  # the graded launcher at one of its Bench.sweep settings (--sweep)

LESSON = "triton (lesson form)"  # the solution without its "beyond the lesson" sections, at its defaults

CUDA_GRAPH = ", CUDA graph"  # the suffix of a row replayed from a CUDA graph



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


def _close(ours, reference) -> bool:
    """Whether `ours` is correct: GraderCheck's verdict."""
    return reference.accepts(ours)


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

    keywords, overrides = split_setting(launcher, setting)
    try:
        if overrides:
            result, launches = recorded_call(launcher, *args, **keywords)  # result: the output the replays write
            run = functools.partial(replay, launches, overrides)
            run()
        else:
            run = functools.partial(launcher, *args, **keywords)
            result = run()
        torch.cuda.synchronize()
        correct = _close(result, reference)  # before the timing: replays write into `result` again
        us = median_us(run)
    except Exception as exc:  # a setting this GPU cannot run (too many registers, ...): try the next
        print(f"  {setting}: {type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr)
        return None, failure_note(exc), True
    return us, "", correct


def _settings_note(blocks) -> str:
    return ", ".join(f"{k}={v}" for k, v in blocks.items())


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
        return [(name, None, failure_note(exc), True)]
    run = functools.partial(baseline.run, **prepared)
    best, failures = _fastest(run, [], baseline.settings, reference)
    if best is None:
        return [(name, None, failures[0], True)]
    us, settings, correct = best
    note = "; ".join(filter(None, [_settings_note(settings), baseline.note(prepared) if baseline.note else ""]))
    timed = [(name, us, note, correct)]
    if bench.cuda_graph:
        timed.append((name + CUDA_GRAPH, graph_us(functools.partial(run, **settings)), "", True))
    if use_compile and baseline.compile:
        try:
            compiled_run = torch.compile(baseline.run, dynamic=False)
            compiled_run(**prepared, **settings)
            timed.append((f"{name}, torch.compile",
                          median_us(functools.partial(compiled_run, **prepared, **settings)), "", True))
        except Exception as exc:
            timed.append((f"{name}, torch.compile", None, failure_note(exc), True))
    return timed


def settings_of(puzzle):
    """The puzzle's Bench from grader/bench/settings.py, or None. Imported when called, not at the top: those
    settings import triton, and `python -m grader bench` chooses the mode before triton is imported."""
    from grader.bench.settings import BENCHES

    return BENCHES.get(puzzle.slug)


def size_label(size, dims=None) -> str:
    """A size's name in the tables: its dims ('N0=4096, T=32768'), after its Case's name where it has one."""
    if dims is None:  # before the inputs are made: a Case's name, or a dict's dims
        return getattr(size, "name", None) or ", ".join(f"{k}={v}" for k, v in size.items())
    label = ", ".join(f"{k}={v}" for k, v in dims.items())
    return f"{size.name} ({label})" if getattr(size, "name", None) else label


def _chosen(launcher, args, setting=None) -> str:
    """What `launcher` launches with `setting` (launch overrides applied), as a note."""
    keywords, overrides = split_setting(launcher, setting or {})
    try:
        launches = launches_of(launcher, *args, **keywords)
    except Exception as exc:  # the launcher refuses the setting: _time_setting reports it
        return f"not recorded ({failure_note(exc)})"
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
            timed.append((impl + CUDA_GRAPH, graph_us(functools.partial(run, *args)), "", correct))
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
    label = size_label(size, dims)
    timed = _ours(launcher, args, reference, bench, sweep, lesson)  # (implementation, µs or None, note, correct)
    module = sys.modules[launcher.__module__]
    for name, wanted in bench.variants.items():
        if wanted(dims):
            variant = getattr(module, name)
            try:
                timed.append((f"triton ({name})", median_us(functools.partial(variant, *args)), "",
                              _close(variant(*args), reference)))
            except Exception as exc:
                timed.append((f"triton ({name})", None, failure_note(exc), True))
    if bench.eager_spec:
        timed.append(("eager PyTorch (spec)", median_us(lambda: puzzle.spec(**inputs)), "", True))
    if bench.eager_spec and bench.cuda_graph:
        timed.append(("eager PyTorch (spec)" + CUDA_GRAPH, graph_us(lambda: puzzle.spec(**inputs)), "", True))
    if use_compile and bench.compile_spec:
        try:
            compiled = torch.compile(puzzle.spec, dynamic=False)
            compiled(**inputs)
            timed.append(("torch.compile (spec)", median_us(lambda: compiled(**inputs)), "", True))
        except Exception as exc:
            timed.append(("torch.compile (spec)", None, failure_note(exc), True))
    for name, baseline in bench.baselines.items():
        timed += _time_baseline(name, baseline, inputs, reference, bench, use_compile)
    for name, fn in bench.library.items():
        try:
            timed.append((name, median_us(functools.partial(fn, **inputs)), "",
                          _close(fn(**inputs), reference)))
        except Exception as exc:
            timed.append((name, None, failure_note(exc), True))

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
        if sizes is None or sizes in size_label(size):
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
