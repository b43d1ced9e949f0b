"""Every solution passes every case on triton's stock interpreter: TRITON_INTERPRET=1 and nothing else.

The grader patches the interpreter while it grades (grader/worker/instrument.py: bounds checks, boolean
masks, a bfloat16 tl.dot fix). A learner practising on the CPU runs kernels without that hook, so
the reference solutions must not depend on it. One child process runs every case of every
solution with the hook never installed (it checks so at the end), and each case is one test here.
The verdict is the grader's own: `checker.compare` against the float64 spec, within the puzzle's
tolerance, so "passes here" means what "passes in the grader" means, minus the hook.

    pytest tests/test_stock_interpreter.py -q          (about 15 s)
    python tests/test_stock_interpreter.py OUT.json     the child on its own: one verdict per case
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from grader import env
from grader.course import registry
from grader.course.cases import as_list, make_inputs, reference, spec_args
from grader.judge import checker
from grader.worker import instrument, loader

ROOT = Path(__file__).resolve().parent.parent
SEED = 0
PASSED = "passed"
BF16_SKIP = ("triton's interpreter multiplies bfloat16 blocks wrongly in tl.dot; only the grader's hook "
             "fixes that, so a GPU grades this case")

_PROBLEMS = env.version_problems(env.Mode(True, ""))
# slow: its fixture runs every solution's cases in a child process on the stock interpreter (two minutes of CPU).
# xdist_group: every test here on one worker, so the fixture's child runs once (tests/conftest.py).
pytestmark = [pytest.mark.skipif(bool(_PROBLEMS), reason="; ".join(_PROBLEMS) or "interpreter usable"),
              pytest.mark.slow, pytest.mark.heavy, pytest.mark.xdist_group("stock_interpreter")]


def _key(puzzle, case) -> str:
    return f"{puzzle.number}/{case.name}"


def _runs_on_the_stock_interpreter(case) -> bool:
    return case.half != torch.bfloat16


# -- the child: runs in its own process, where nothing installs the grader's hook -----------------

def _verdict(puzzle, launcher, case) -> str:
    """PASSED, or what went wrong, in a few lines."""
    inputs, _ = make_inputs(puzzle.spec, case, SEED)
    expected = reference(puzzle.spec, inputs)
    inputs64 = {k: v.to(torch.float64) if isinstance(v, torch.Tensor) and v.is_floating_point() else v
                for k, v in inputs.items()}
    args = [inputs[a.name].clone() if a.dtype is not None else inputs[a.name] for a in spec_args(puzzle.spec)]
    try:
        with np.errstate(all="ignore"):  # inf - inf = nan is intended (a row with no key yet), as on a GPU
            outs = as_list(launcher(*args, **case.blocks))
    except Exception as exc:  # the case's verdict, not the child's end
        lines = str(exc).strip().splitlines() or [""]
        return f"{type(exc).__name__}: {lines[-1][:300]}"
    if len(outs) != len(expected):
        return f"{len(outs)} outputs; the spec has {len(expected)}"
    for name, out, exp, tolerance in zip(puzzle.outputs, outs, expected, puzzle.tolerances):
        if tuple(out.shape) != tuple(exp.shape):
            return f"{name} has shape {tuple(out.shape)}; the spec's is {tuple(exp.shape)}"
        diagnosis = checker.compare(name, out, exp, tolerance.allowed(inputs64, exp), tolerance=tolerance)
        if diagnosis is not None:
            return "\n".join(diagnosis.lines[:4])
    return PASSED


def main(out_path: str) -> int:
    """Write {"hook_installed": bool, "verdicts": {"N/case": verdict}} to `out_path`."""
    verdicts = {}
    for puzzle in registry.PUZZLES:
        launcher = loader.load_launcher(puzzle, "solutions")
        for case in filter(_runs_on_the_stock_interpreter, puzzle.cases):
            verdicts[_key(puzzle, case)] = _verdict(puzzle, launcher, case)
    Path(out_path).write_text(json.dumps({"hook_installed": instrument._installed, "verdicts": verdicts}))
    return 0


# -- the tests ------------------------------------------------------------------------------------

def _every_case():
    for puzzle in registry.PUZZLES:
        for case in puzzle.cases:
            marks = [getattr(pytest.mark, f"puzzle{puzzle.number}")]
            if not _runs_on_the_stock_interpreter(case):
                marks.append(pytest.mark.skip(reason=BF16_SKIP))
            yield pytest.param(_key(puzzle, case), marks=marks,
                               id=f"{puzzle.module}-{re.sub(r'[^0-9A-Za-z]+', '_', case.name).strip('_')}")


@pytest.fixture(scope="session")
def stock_run(tmp_path_factory) -> dict:
    """One child process for all solutions: TRITON_INTERPRET=1 from the start, no hook. Session-scoped: under
    xdist, another module's tests can run between this module's on the worker, and pytest ends a module-scoped
    fixture at each switch, so the child ran twice (two minutes of CPU each time)."""
    out = tmp_path_factory.mktemp("stock") / "verdicts.json"
    environment = {**os.environ, "TRITON_INTERPRET": "1",
                   "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    child = subprocess.run([sys.executable, __file__, str(out)], cwd=ROOT, env=environment,
                           capture_output=True, text=True, timeout=600)
    assert child.returncode == 0, child.stderr[-3000:]
    return json.loads(out.read_text())


def test_the_child_ran_without_the_graders_hook(stock_run):
    assert stock_run["hook_installed"] is False, "the child installed grader/worker/instrument.py's hook"


@pytest.mark.parametrize("key", list(_every_case()))
def test_solution_passes_on_the_stock_interpreter(stock_run, key):
    assert stock_run["verdicts"][key] == PASSED, f"case {key}: {stock_run['verdicts'][key]}"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
