"""The child process that runs the learner's code for ``grader.judge.runner`` and streams one JSON line per event.

Run as ``python -m grader.worker FD`` with the job as JSON on stdin (read once its imports are done, so the
parent may start it early, ``grader.judge.processes.prestart``); events go to file descriptor FD, so that
anything the learner's code prints (sent to stderr) cannot garble them. The events and the job are described in
``grader/judge/runner.py``. The worker sends what the launcher did
(``execute.execute``), never a verdict: the parent judges. A job with "map" runs one case for its access maps
(``grader.worker.recording``) instead.
"""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    events = os.fdopen(int(sys.argv[1]), "w", buffering=1)
    os.dup2(2, 1)  # the learner's prints go to stderr; stdout may carry the parent's --json

    def emit(**event):
        events.write(json.dumps(event) + "\n")

    from grader import env

    # The mode comes with the process (the parent may start it before it has a job): chosen before anything
    # imports triton, which reads TRITON_INTERPRET.
    mode = env.choose_mode(os.environ.get("GRADER_WORKER_INTERPRET") == "1")
    from grader.worker import gpu_compile

    if mode.interpret:
        gpu_compile.prestart()  # the compile helper imports triton while this process imports the rest
    from grader.worker import execute

    execute.INTERACTIVE = False  # no terminal reaches this process: a KeyboardInterrupt is the graded code's

    emit(event="ready")  # nothing of a submission has run yet: a worker that ends before this is the grader's trouble
    job = json.loads(sys.stdin.read())
    if job["interpret"] != mode.interpret:
        raise SystemExit(f"a job for the {'interpreter' if job['interpret'] else 'GPU'} given to a worker of the other")
    if job.get("map") is not None:  # one case, for its access maps (grader.worker.recording), not for a grade
        from grader.worker import recording

        puzzle, launcher = _load(job, job["puzzles"][0], mode, emit)
        if launcher is not None:
            maps = recording.record_case(puzzle, launcher, puzzle.cases[job["map"]], job["seed"], job["timeout"])
            emit(event="map", puzzle=puzzle.number, maps=maps.to_json())
        return
    for item in job["puzzles"]:
        puzzle, launcher = _load(job, item, mode, emit)
        if launcher is not None:
            # natively the next case's inputs meanwhile; kernel-only in the interpreter, also its GPU compile
            ahead = _Ahead(job["seed"]) if not mode.interpret else \
                _CompiledAhead(job, launcher) if item.get("kernels") is not None else None
            _run_cases(job, item, puzzle, launcher, mode, emit, ahead)


def _load(job: dict, item: dict, mode, emit):
    """The puzzle and its launcher, after a load event; None for the launcher when the import failed (said).
    With the item's kernels, the submission's kernels under the puzzle's own launcher (kernel-only grading)."""
    from grader.course import registry
    from grader.worker import loader

    puzzle = registry.find(item["puzzle"])
    emit(event="load", puzzle=puzzle.number)
    try:
        if item.get("kernels") is not None:
            return puzzle, loader.load_kernels(puzzle, item["kernels"], mode.device)
        return puzzle, loader.load_launcher(puzzle, job["impl"], job["file"])
    except loader.LoadError as exc:
        emit(event="load_error", puzzle=puzzle.number, message=str(exc))
        return puzzle, None


def _run_cases(job: dict, item: dict, puzzle, launcher, mode, emit, ahead) -> None:
    """The item's cases, a start and an execution event each, then done (the protocol: grader/judge/runner.py)."""
    from grader import protocol, transfer
    from grader.worker import execute

    for position, index in enumerate(item["cases"]):
        emit(event="start", puzzle=puzzle.number, case=index)
        made = ahead.take(puzzle, index, item["cases"][position + 1:position + 2]) if ahead else None
        execution = execute.execute(puzzle, launcher, puzzle.cases[index], job["seed"], mode.device,
                                    job["timeout"], trusted_launcher=item.get("kernels") is not None, made=made)
        try:
            sent = transfer.execution_to_json(execution)
        except Exception as exc:  # a returned value the grader cannot read (a meta-device tensor, say)
            execution = transfer.Execution(early=transfer.Outcome(
                "bad_output", f"the launcher returned something the grader cannot read back: "
                              f"{execute.explain_exception(exc)}"))
            sent = transfer.execution_to_json(execution)
        emit(event="execution", puzzle=puzzle.number, case=index, execution=sent)
        if execute.CONTEXT_LOST:  # the GPU is unusable in this process: a fresh worker runs the next case
            # At once (the event pipe is line-buffered: the execution is sent): tearing down a lost CUDA context at
            # exit can abort, which the judge would read as a crash before the next case.
            os._exit(0)
        if execution.early is not None and protocol.ends_puzzle(execution.early.reason, index):
            break
    emit(event="done", puzzle=puzzle.number, notices=execute.mode_notices(mode.device))


class _Ahead:
    """Natively, a case's inputs built on a thread while the GPU runs the case before it: a backward's inputs come
    from its forward, computed on the CPU (puzzle 17's take most of a second), while the GPU's run is short."""

    def __init__(self, seed: int):
        from concurrent.futures import ThreadPoolExecutor

        self.seed, self.pool, self.pending = seed, ThreadPoolExecutor(max_workers=1), {}

    def take(self, puzzle, index: int, following: list[int]):
        """The inputs of case `index` (built now if they were not ahead), after starting those of `following`."""
        from grader.course.cases import make_inputs

        made = self.pending.pop((puzzle.number, index), None)
        for after in following:
            self.pending[puzzle.number, after] = self.pool.submit(make_inputs, puzzle.spec, puzzle.cases[after],
                                                                  self.seed)
        try:
            return made.result() if made is not None else None
        except Exception:
            return None  # execute builds them itself, and reports what goes wrong


class _CompiledAhead:
    """Kernel-only grading in the interpreter: the next case's inputs, and its kernels' GPU compile started in the
    compile helper (another process), while the interpreter runs this case (``execute.compiled_ahead``)."""

    def __init__(self, job: dict, launcher):
        self.job, self.launcher, self.pending = job, launcher, {}

    def take(self, puzzle, index: int, following: list[int]):
        """The inputs of case `index` (None: execute builds them), after starting those of `following`."""
        made = self.pending.pop((puzzle.number, index), None) or self._started(puzzle, index)
        for after in following:
            self.pending[puzzle.number, after] = self._started(puzzle, after)
        return made

    def _started(self, puzzle, index: int):
        from grader.worker import execute

        return execute.compiled_ahead(puzzle, self.launcher, puzzle.cases[index], self.job["seed"],
                                      self.job["timeout"])


if __name__ == "__main__":
    try:
        main()
    except BaseException as exc:  # never the worker's own traceback on the learner's terminal: one line, and the
        # judge reports the case (its stream ended early)
        if not isinstance(exc, SystemExit):
            print(f"grader worker: {type(exc).__name__}: {str(exc)[:300]}", file=sys.stderr)
        os._exit(70)
