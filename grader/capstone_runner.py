"""The capstone's runner (chapter 5, notebooks/05_backward.ipynb): which launchers the model of
``grader.course.capstone`` trains with, yours or the solutions', and the command that trains it both ways.

It sits at the package's face, beside ``inprocess``, because it loads learners' files (``grader.worker.loader``) and
reads the progress table (``grader.show.progress``); the model and its data stay in ``grader/course/``.

    python -m grader.capstone_runner           a short run both ways, and the two loss curves side by side
    python -m grader.capstone_runner --time    on a GPU: a training step's time, kernels against eager and compiled
"""

from __future__ import annotations

import torch

from grader.course import registry
from grader.course.capstone import (
    CURVE_RTOL,
    Kernels,
    curves_agree,
    load_molecules,
    make_batches,
    new_model,
    step_seconds,
    train,
)
from grader.show import progress
from grader.worker import loader

KERNEL_PUZZLES = (10, 13, 16, 18)


def solution_kernels() -> Kernels:
    """The reference solutions' launchers of puzzles 10, 13, 16 and 18."""
    launchers = [loader.load_launcher(registry.find(n), "solutions") for n in KERNEL_PUZZLES]
    return Kernels(*launchers, sources=("solutions/",) * 4)


def course_kernels(yours: dict | None = None) -> Kernels:
    """Puzzles 10, 13, 16 and 18's launchers: yours where given (a notebook's, by puzzle number), else your file in
    puzzles/ where `python -m grader` last found it solved (and it has not changed since), else the reference
    solution's; Kernels.describe says which."""
    yours = yours or {}
    wrong = [f"{key!r}: {value!r}" for key, value in yours.items() if key not in KERNEL_PUZZLES or not callable(value)]
    if wrong:
        raise ValueError(f"MY_KERNELS maps puzzle numbers {KERNEL_PUZZLES} to their launchers (the functions, "
                         f"such as {{10: graph_attention}}); these entries are not that: {', '.join(wrong)}")
    statuses = {number: status for number, _, _, status in progress.rows("puzzles")}
    launchers, sources = [], []
    for number in KERNEL_PUZZLES:
        puzzle = registry.find(number)
        status = statuses.get(number, "ungraded")
        if number in yours:
            launchers.append(yours[number])
            sources.append("yours, from this notebook")
        elif status == "passed":
            launchers.append(loader.load_launcher(puzzle, "puzzles"))
            sources.append(f"yours, puzzles/{puzzle.module}.py (solved)")
        else:
            launchers.append(loader.load_launcher(puzzle, "solutions"))
            why = (f"puzzles/{puzzle.module}.py changed since it was solved: grade it again"
                   if status == "changed:passed" else f"puzzle {number} is not solved in puzzles/ yet")
            sources.append(f"the reference solution ({why})")
    return Kernels(*launchers, sources=tuple(sources))


def main(argv=None) -> int:
    import argparse

    from grader import env

    parser = argparse.ArgumentParser(prog="python -m grader.capstone_runner",
                                     description="chapter 5's capstone: the graph transformer trained with the "
                                                 "solutions' kernels and in plain PyTorch")
    parser.add_argument("--time", action="store_true", help="on a GPU: a training step's time, kernels against "
                                                            "eager PyTorch and torch.compile (batches of 32)")
    parser.add_argument("--no-compile", action="store_true", help="with --time: leave torch.compile out")
    args = parser.parse_args(argv)
    mode = env.choose_mode()  # before any kernel is defined: the interpreter where there is no GPU
    print(mode.reason)
    if args.time:
        return time_steps(mode, not args.no_compile)
    molecules, source = load_molecules(24, seed=0)
    print(f"data: {source}")
    batches = [batch.to(mode.device) for batch in make_batches(molecules, 8)]
    mean = float(torch.cat([b.labels for b in batches]).mean())
    kernels = solution_kernels()
    ours = train(new_model(0, mean, mode.device), batches, 6, kernels)
    theirs = train(new_model(0, mean, mode.device), batches, 6)
    for step, (a, b) in enumerate(zip(ours, theirs)):
        print(f"step {step}: kernels {a:.5f}, PyTorch {b:.5f}")
    print(f"largest relative difference: {curves_agree(ours, theirs, CURVE_RTOL):.2e}")
    return 0


def time_steps(mode, with_compile: bool) -> int:
    """Print a training step's median time with the solutions' kernels, eager PyTorch and compiled PyTorch."""
    if mode.interpret:
        print("no GPU: a step's time means something only for native kernels")
        return 1
    molecules, source = load_molecules(256, seed=0)
    batches = [batch.to(mode.device) for batch in make_batches(molecules, 32)]
    mean = float(torch.cat([b.labels for b in batches]).mean())
    print(f"data: {source}; {len(batches)} batches of 32 molecules, about "
          f"{sum(b.atoms.numel() for b in batches) // len(batches)} atoms each")
    rows = [("kernels (solutions/)", step_seconds(new_model(0, mean, mode.device), batches, solution_kernels())),
            ("eager PyTorch (gathers)", step_seconds(new_model(0, mean, mode.device), batches, None))]
    if with_compile:
        rows.append(("torch.compile, PyTorch (gathers)",
                     step_seconds(new_model(0, mean, mode.device), batches, None, compiled=True)))
    for name, seconds in rows:
        print(f"{name}: {seconds * 1e3:.2f} ms per training step")
    return 0


if __name__ == "__main__":  # importing grader chose the interpreter if there is no GPU
    raise SystemExit(main())
