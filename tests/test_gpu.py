"""Native runs on a CUDA GPU: every solution passes, and the grader's poisoned outputs expose stubs and
never-written elements. Skipped (with the reason) where there is no GPU; scripts/gpu_check.sh runs them."""

import json
import re

import pytest
import torch
from helpers import ROOT, run_cli, stub_text

from grader.course import registry

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


@pytest.mark.gpu_quick
def test_every_solution_passes_natively():
    run = run_cli("--all", "--impl", "solutions", "--json", interpret=False)
    data = json.loads(run.stdout)
    assert data["mode"] == "native"
    failures = [(r["puzzle"], c["name"], c["message"]) for r in data["results"] for c in r["cases"] if not c["passed"]]
    assert run.returncode == 0 and not failures, failures


@pytest.mark.gpu_quick
def test_a_stub_is_not_started_natively(tmp_path):
    stub = tmp_path / "stub.py"
    stub.write_text(stub_text(registry.find(5)))
    run = run_cli("5", "--file", str(stub), interpret=False)
    assert run.returncode == 1 and "not started" in run.stdout, run.stdout + run.stderr


def test_elements_a_kernel_never_stores_are_found_natively(tmp_path):
    text = (ROOT / "solutions" / "p01_add.py").read_text()
    partial = tmp_path / "partial.py"
    partial.write_text(text.replace("pid = tl.program_id(0)\n", "pid = tl.program_id(0) * 0\n"))
    run = run_cli("1", "--file", str(partial), "--json", interpret=False)
    cases = json.loads(run.stdout)["results"][0]["cases"]
    # the interpreter's checks beside the run name the cause (a race: every program stored one block), and the
    # GPU's own finding is beside it
    assert any("never written" in c["message"] and "(on the GPU: " in c["message"] for c in cases), cases
    assert any(re.search(r"on the GPU: \d+ of \d+ elements of z never written", c["message"]) for c in cases), cases


@pytest.mark.gpu_quick
def test_bench_runs_and_reports_the_copy_bandwidth():
    run = run_cli("bench", "1", "--no-compile", interpret=False)
    assert run.returncode == 0, run.stderr
    assert "Copy bandwidth" in run.stdout and "triton (ours)" in run.stdout


def _native_cases(puzzle: int, path, *options) -> list[dict]:
    run = run_cli(str(puzzle), "--file", str(path), "--json", *options, interpret=False)
    return json.loads(run.stdout)["results"][0]["cases"]


@pytest.mark.parametrize("name, clue", [
    ("p01_torch_add.py", "`aten.add`"),
    ("p04_host_row_max.py", "`aten.amax`"),
    ("p06_host_key_max.py", "`aten.max`"),
    ("p08_host_dst.py", "`aten.sub`"),
    ("p05_one_block_per_row.py", "your launch of whole_row_softmax_kernel used B1="),
])
def test_a_cheating_launcher_is_refused_natively(name, clue):
    """On the practice path, where the file's launcher runs (kernel-only grading runs the puzzle's)."""
    cases = _native_cases(int(name[1:3]), ROOT / "tests" / "kernels" / "cheating" / name, "--own-launcher")
    refused = [c for c in cases if c["reason"] == "launcher"]
    assert refused and clue in refused[0]["message"], cases[0]


@pytest.mark.parametrize("path", ["right_own_launcher/p01_autotuned.py", "right/p06_persistent.py",
                                  "right/p01_grid_stride.py", "right_own_launcher/p01_returns_a_slice.py",
                                  "right_on_triton_3_6/p11_block_pointers.py"])
def test_correct_alternatives_pass_natively(path):
    """Kernel-only (a persistent kernel gets the GPU's multiprocessor count), or on the practice path where the
    alternative's idea is its launcher."""
    import triton

    if path.startswith("right_on_triton_3_6") and not triton.__version__.startswith("3.6"):
        pytest.skip("block pointers exist on triton 3.6 only")
    name = path.split("/")[1]
    options = ("--own-launcher",) if path.startswith("right_own_launcher") else ()
    cases = _native_cases(int(name[1:3]), ROOT / "tests" / "kernels" / path, *options)
    assert all(c["passed"] or c["reason"] == "skipped" for c in cases), [c for c in cases if not c["passed"]][:1]


def test_float32_dot_operands_are_refused_natively(tmp_path):
    """The 16-bit rule, natively: the interpreter's checks beside the GPU's run refuse the float32 operands, and
    the report is theirs."""
    text = (ROOT / "solutions" / "p11_matmul.py").read_text()
    wide = tmp_path / "p11_wide.py"
    wide.write_text(text.replace("acc = tl.dot(a, b, acc)", "acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc)"))
    cases = _native_cases(11, wide)
    assert any(c["reason"] == "error" and "must stay 16-bit" in c["message"] for c in cases), cases[0]
