"""On the practice path (`--own-launcher`, a notebook's grader.check), the learner's launcher is not a loophole:
PyTorch compute in it, tiles wider than the case's blocks, and the reference left in the grader's frame are all
refused; allocations, views, smaller blocks and autotune are not. (Kernel-only grading runs the puzzle's launcher,
so none of these launchers run there: tests/test_cheats_kernel_only.py.)

The cheating launchers live in tests/kernels/cheating/, or are a solution with one edit (helpers.COPIED_CHEATS;
helpers.cheat_file finds either); correct ones that must keep passing in tests/kernels/right_own_launcher/.
"""

import dataclasses
import importlib.util
import inspect
from dataclasses import dataclass

import pytest
import torch
import triton.language as tl
from helpers import KERNELS, cheat_file, failed_case, grade_file, requires_interpreter

from grader import inprocess
from grader.course import registry
from grader.course.cases import Case
from grader.worker import instrument, launcher_guard

pytestmark = requires_interpreter



@dataclass(frozen=True)
class Cheat:
    file: str
    clue: str  # what the launcher report must name: the op, or the block

    @property
    def puzzle(self) -> int:
        return int(self.file[1:3])


TORCH_COMPUTE = [
    Cheat("p01_torch_add.py", "computed `aten.add` with PyTorch: the work belongs in the kernel"),
    Cheat("p01_atomic_add_zero.py", "`aten.add`"),
    Cheat("p01_numpy_add.py", "`Tensor.numpy`"),
    Cheat("p01_add_in_grid.py", "`aten.add`"),
    Cheat("p01_swallows_refusal.py", "`aten.add`"),
    Cheat("p01_clones_x.py", "`aten.clone`"),
    Cheat("p01_pops_the_mode.py", "switched off the grader's check of PyTorch calls"),
    Cheat("p04_host_row_max.py", "`aten.amax`"),
    Cheat("p05_host_row_max.py", "`aten.max`"),
    Cheat("p06_host_key_max.py", "`aten.max`"),
    Cheat("p08_host_dst.py", "`aten.sub`"),  # col_ptr.diff(), on the way to repeat_interleave
    Cheat("p08_host_dst_searchsorted.py", "`aten.searchsorted`"),
    Cheat("p14_host_delta.py", "`aten.mul`"),
    Cheat("p15_host_softmax.py", "`aten.sub`"),  # x - lse[:, None]: the launcher may count rows (ne, sum), no more
    Cheat("p16_host_delta.py", "`aten.mul`"),
    Cheat("p17_host_delta.py", "`aten._to_copy`"),  # o.float(), on the way to the product
    Cheat("p18_host_delta.py", "`aten._to_copy`"),
]
# A whole row in one block: the trace-time tile check (issue 18) stops it before the launcher guard looks, with the
# block size the case asked for and the width the kernel made
WIDE_BLOCKS = [
    Cheat("p05_one_block_global.py", "this case asks for B1=32; your kernel made a block 2048 wide"),
    Cheat("p05_one_block_per_row.py", "this case asks for B1=32; your kernel made a block 256 wide"),
    Cheat("p05_one_block_renamed.py", "this case asks for B1=32; your kernel made a block 256 wide"),
    Cheat("p06_one_block_of_keys.py", "this case asks for B1=32; your kernel made a block 256 wide"),
    Cheat("p14_one_block_per_row.py", "this case asks for B1=32; your kernel made a block 256 wide"),
]


@pytest.mark.parametrize("cheat", TORCH_COMPUTE, ids=lambda c: c.file)
def test_cheating_launcher_is_refused(cheat):
    case = failed_case(grade_file(cheat.puzzle, cheat_file(cheat.file), first_failure=True, own_launcher=True))
    assert case.reason == "launcher", f"{case.name}: {case.reason}: {case.message}"
    assert cheat.clue in case.message


@pytest.mark.parametrize("cheat", WIDE_BLOCKS, ids=lambda c: c.file)
def test_a_launcher_that_widens_the_blocks_is_refused(cheat):
    case = failed_case(grade_file(cheat.puzzle, cheat_file(cheat.file), first_failure=True, own_launcher=True))
    assert case.reason == "budget", f"{case.name}: {case.reason}: {case.message}"
    assert cheat.clue in case.message, case.message


@pytest.mark.puzzle17
def test_a_key_walk_over_every_query_at_once_is_a_tile_wider_than_the_case_gives():
    """The launcher passes BQ = 128 to the key walk where the case asks for 32: the tile check at trace time stops the
    kernel at its first block of 128 queries, before the launcher guard reads the launch."""
    case = failed_case(grade_file(17, cheat_file("p17_every_query_at_once.py"), first_failure=True, own_launcher=True))
    assert case.reason == "budget", f"{case.name}: {case.reason}: {case.message}"
    assert "this case asks for BQ=32, BK=32; your kernel made a block 128 wide" in case.message


def test_the_refusal_names_the_learners_line():
    case = failed_case(grade_file(4, cheat_file("p04_host_row_max.py"), first_failure=True, own_launcher=True))
    assert "at p04_host_row_max.py:" in case.message and "x.amax(dim=1)" in case.message


def test_a_puzzle_that_lists_an_op_lets_the_launcher_use_it():
    puzzle = dataclasses.replace(registry.find(1), launcher_ops=("aten.clone",))
    result = grade_file(puzzle, cheat_file("p01_clones_x.py"), own_launcher=True)
    assert result.status == "passed", [(c.name, c.reason, c.message) for c in result.cases]


def test_torch_works_again_after_a_refusal():
    """The modes come off torch's stacks with the launcher: the grader's own code is not refused."""
    grade_file(1, cheat_file("p01_pops_the_mode.py"), first_failure=True, own_launcher=True)
    grade_file(1, cheat_file("p01_torch_add.py"), first_failure=True, own_launcher=True)
    assert torch.equal(torch.arange(3.0).amax() + 1, torch.tensor(3.0))


# -- the reference in the grader's frame ----------------------------------------------------------

def _frame_reader():
    """The cheat's launcher, imported directly: the loader's static check would refuse it first."""
    path = cheat_file("p01_reads_grader_frame.py")
    spec = importlib.util.spec_from_file_location("frame_reader_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.add


def test_the_frame_reading_cheat_works_where_a_frame_holds_the_reference():
    """Control: the cheat is real, so the next test shows the grader's frames no longer hold the values."""
    add = _frame_reader()
    x, y = torch.randn(100), torch.randn(100)
    expected = [x + y]  # noqa: F841 - read from this frame by the cheat
    with instrument.recording():
        assert torch.equal(add(x, y), x + y)


def test_run_case_frames_hold_no_reference_while_the_launcher_runs():
    puzzle = registry.find(1)
    result = inprocess.run_case(puzzle, _frame_reader(), puzzle.cases[0], seed=0, device="cpu")
    assert result.reason == "error" and "no reference in the grader's frames" in result.message, result.message


# -- autotune in the interpreter ------------------------------------------------------------------

def test_an_autotuned_kernel_runs_its_first_config_with_a_notice():
    launcher_guard.take_notices()
    result = grade_file(1, KERNELS / "right_own_launcher" / "p01_autotuned.py", own_launcher=True)
    assert result.status == "passed", [(c.name, c.reason, c.message) for c in result.cases]
    notices = result.notices  # the report shows them
    assert len(notices) == 1, notices  # one note per kernel, not one per case
    assert notices[0].startswith("autotune: the interpreter ran autotuned_add_kernel with config 1 of 3 (BLOCK: 256")
    assert notices[0].endswith("on a GPU triton picks the fastest")


# -- block sizes, on recorded launches ------------------------------------------------------------

def named_kernel(q_ptr, N, T, D: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr):
    """A stand-in for a @triton.jit function whose blocks have the case's names: only its signature is read."""


def renamed_kernel(q_ptr, N, T, HEAD_DIM: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_T: tl.constexpr = 16):
    """A stand-in whose blocks have names of its own (BLOCK_T is the key block, HEAD_DIM is D)."""


def _launch(kernel, **constexprs) -> instrument.Launch:
    names = list(inspect.signature(kernel).parameters)
    return instrument.Launch.of(kernel, names, (None, 100, 300), constexprs, (1,))


ATTENTION = registry.find(12)
CASE = Case("under test", dict(N=100, T=300, D=64), dict(BQ=32, BK=32))


@pytest.mark.parametrize("kernel, constexprs, clue", [
    (named_kernel, dict(D=64, BQ=32, BK=512), "this case asks for BK=32; your launch of named_kernel used BK=512"),
    (renamed_kernel, dict(HEAD_DIM=64, BLOCK_Q=32, BLOCK_T=512),
     "this case asks for BK=32; your launch of renamed_kernel used BLOCK_T=512"),
])
def test_a_tile_wider_than_the_lesson_block_is_reported(kernel, constexprs, clue):
    assert clue in (launcher_guard.check_launches(ATTENTION, CASE, [_launch(kernel, **constexprs)]) or "")


@pytest.mark.parametrize("kernel, constexprs", [
    (named_kernel, dict(D=64, BQ=32, BK=32)),  # the case's own blocks
    (named_kernel, dict(D=64, BQ=16, BK=16)),  # smaller is fine
    (named_kernel, dict(D=64, BQ=64, BK=32)),  # a wider query block: only the key loop is the lesson here
    (renamed_kernel, dict(HEAD_DIM=64, BLOCK_Q=32, BLOCK_T=32)),  # HEAD_DIM equals the case's D: a dimension
])
def test_blocks_within_the_case_pass(kernel, constexprs):
    assert launcher_guard.check_launches(ATTENTION, CASE, [_launch(kernel, **constexprs)]) is None


def test_a_puzzle_without_lesson_blocks_takes_any_tile():
    assert launcher_guard.check_launches(registry.find(11), CASE, [_launch(named_kernel, D=64, BQ=32, BK=512)]) is None


@pytest.mark.slow
def test_the_autotune_note_reaches_the_cli_report():
    from helpers import run_cli

    run = run_cli("1", "--file", str(KERNELS / "right_own_launcher" / "p01_autotuned.py"), "--own-launcher")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "note: autotune: the interpreter ran autotuned_add_kernel with config 1 of 3" in run.stdout


def test_a_thread_started_by_the_launcher_is_refused():
    """The static check of --file refuses `import threading`; a learner's own puzzles/ file is not vetted, so the
    guard refuses the thread itself (its PyTorch calls would escape the dispatch mode, which is per thread)."""
    spec = importlib.util.spec_from_file_location("adds_on_a_thread", cheat_file("p01_adds_on_a_thread.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    puzzle = registry.find(1)
    result = inprocess.run_case(puzzle, module.add, puzzle.cases[0], seed=0, device="cpu")
    assert result.reason == "launcher" and "started a thread" in result.message, result.message


_WIDE_DOT_SCRIPT = """
import os
os.environ.pop("TRITON_INTERPRET", None)
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

@triton.jit
def product(a_ptr, c_ptr, WIDE: tl.constexpr):
    rows = tl.arange(0, 16)
    a = tl.load(a_ptr + rows[:, None] * 16 + rows[None, :])
    b = a.to(tl.float32) if WIDE else a
    tl.store(c_ptr + rows[:, None] * 16 + rows[None, :], tl.dot(b, b))

from grader.worker.ttir import wide_dot_operands  # after the kernel: importing grader picks the interpreter

for wide in (0, 1):
    kernel = triton.compile(ASTSource(product, {"a_ptr": "*fp16", "c_ptr": "*fp32", "WIDE": "constexpr"},
                                      {"WIDE": wide}), target=GPUTarget("cuda", 90, 32))
    print(wide, sorted(set(wide_dot_operands(kernel.asm["ttir"]))))
"""


def test_the_16_bit_rule_reads_float32_dots_from_a_compiled_kernels_ttir(tmp_path):
    """On a GPU the rule reads the TTIR of the kernels triton compiled (the interpreter's hook is not there); the
    same parser, on kernels compiled here for sm_90."""
    import os
    import subprocess
    import sys

    from helpers import ROOT

    environment = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    script = tmp_path / "wide_dot.py"  # triton reads a kernel's source from its file
    script.write_text(_WIDE_DOT_SCRIPT)
    environment["PYTHONPATH"] = str(ROOT)
    run = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True,
                         env=environment, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split("\n")[:2] == ["0 []", "1 ['f32']"], run.stdout
