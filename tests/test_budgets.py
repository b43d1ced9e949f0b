"""Budgets count all traffic: copies of an input, idle programs and duplicate lanes cannot hide reads,
and persistent or clamped kernels are not punished (grader/course/budgets.py's docstring says how).

A copy made by a launch of its own, or programs the grid has to spare, need a launcher of the learner's: those
tests grade on the practice path (`own_launcher=True`), the only one where such a launcher runs."""

import pytest
import torch
import triton
import triton.language as tl
from helpers import (
    KERNELS,
    failed_case,
    grade_file,
    grade_text,
    report,
    requires_interpreter,
    solution_text,
)

from grader.course import registry
from grader.course.budgets import Loads, Reads, Scratch
from grader.worker import instrument

pytestmark = requires_interpreter


def _budget_failure(result, clue: str):
    case = failed_case(result)
    assert case.reason == "budget", report(result)
    assert clue in case.message, report(result)
    return case


# -- copies of an input --------------------------------------------------------------------------------

COPY_KERNEL = '''

@triton.jit
def copy_kernel(src_ptr, dst_ptr, N, B: tl.constexpr):
    offsets = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=offsets < N), mask=offsets < N)
'''

SOFTMAX_ON_A_COPY = COPY_KERNEL + '''

def softmax_online(x, B0=1, B1=4096):
    """Copy x once, then run the three-pass kernel on the copy: x itself is loaded only once."""
    scratch = torch.empty_like(x)
    copy_kernel[(triton.cdiv(x.numel(), B1),)](x, scratch, x.numel(), B=B1)
    return softmax_three_loop(scratch, B0, B1)
'''


@pytest.mark.puzzle5
def test_reading_a_kernel_made_copy_of_x_counts_as_reading_x(tmp_path):
    text = solution_text(registry.find(4)) + SOFTMAX_ON_A_COPY
    case = _budget_failure(grade_text(5, text, tmp_path, own_launcher=True), "x read ")  # stopped once over budget
    assert "including loads of tensors that are not inputs" in case.message and "budget is 2x" in case.message


GATHER_ON_A_COPY = COPY_KERNEL + '''

def csc_gather(v_scaled, score, col_ptr, edge_id, BLOCK_E=8, NODES_PER_PROGRAM=1):
    """Gather through a kernel-made copy of edge_id: every slot's edge id is loaded twice."""
    copied = torch.empty_like(edge_id)
    if edge_id.numel():
        copy_kernel[(triton.cdiv(edge_id.numel(), 256),)](edge_id, copied, edge_id.numel(), B=256)
    num_nodes = col_ptr.numel() - 1
    _, heads, feats = v_scaled.shape
    out = torch.empty((num_nodes, heads, feats), dtype=v_scaled.dtype, device=v_scaled.device)
    csc_gather_kernel[(num_nodes,)](v_scaled, score, col_ptr, copied, out, num_nodes, heads, feats,
                                    BLOCK_E=BLOCK_E, NODES_PER_PROGRAM=1, H_PAD=triton.next_power_of_2(heads),
                                    D_PAD=triton.next_power_of_2(feats))
    return out
'''


@pytest.mark.puzzle8
@pytest.mark.slow
def test_the_index_budget_counts_every_integer_load(tmp_path):
    """A copy of edge_id is not a named index array, but its loads are integer loads all the same."""
    result = grade_text(8, solution_text(registry.find(8)) + GATHER_ON_A_COPY, tmp_path, own_launcher=True)
    case = _budget_failure(result, "elements of col_ptr, edge_id loaded (counting the tensor passed as dst_ptr, "
                                   "edge_id_ptr (")
    assert "the budget is E + 3*N" in case.message


@triton.jit
def _sum_rows_kernel(x_ptr, z_ptr, T, PASSES: tl.constexpr, B: tl.constexpr):
    """z[row] = PASSES * sum(x[row]), reading the row PASSES times."""
    cols = tl.arange(0, B)
    total = tl.zeros([B], dtype=tl.float32)
    for _ in tl.static_range(PASSES):
        total += tl.load(x_ptr + tl.program_id(0) * T + cols, mask=cols < T, other=0.0)
    tl.store(z_ptr + tl.program_id(0), tl.sum(total, axis=0))


def test_a_clone_made_by_the_launcher_counts_as_the_input():
    """The launcher guard refuses torch.clone; without it (natively) the budget still sees the copy."""
    x = torch.randn(4, 100)
    with instrument.recording() as recorder:
        recorder.watch("x", x)
        copy = x.clone()
        _sum_rows_kernel[(4,)](x, torch.empty(4), 100, PASSES=1, B=128)
        _sum_rows_kernel[(4,)](copy, torch.empty(4), 100, PASSES=2, B=128)
    problem = Reads("x", 2).check(recorder, {"x": x.numel()}, {})
    assert problem is not None and "x read 3.00x" in problem and "the tensor passed as x_ptr (800 loads)" in problem


# -- per program: per block of output stored -------------------------------------------------------------

@pytest.mark.puzzle6
def test_idle_programs_do_not_dilute_the_per_program_budget():
    result = grade_file(6, KERNELS / "wrong" / "p06_two_pass_idle_programs.py", first_failure=True, own_launcher=True)
    _budget_failure(result, "k read 2.00x per program, the budget is 1x for each block of z (B0 = ")


TWICE_THE_PROGRAMS = '''

def flash_attention(q, k, v, B0=64, B1=256):
    """Twice the programs the queries need: the second half reads every key and stores nothing."""
    z = torch.empty_like(q)
    flash_attention_kernel[(2 * triton.cdiv(q.numel(), B0),)](q, k, v, z, q.numel(), k.numel(), B0=B0, B1=B1)
    return z
'''


@pytest.mark.puzzle6
def test_an_idle_program_that_still_reads_the_keys_is_over_budget(tmp_path):
    text = (KERNELS / "wrong" / "p06_two_pass.py").read_text()
    text = text.replace("import triton\n", "import torch\nimport triton\n")
    result = grade_text(6, text + TWICE_THE_PROGRAMS, tmp_path, own_launcher=True)
    _budget_failure(result, "but stored no element of z")


@pytest.mark.puzzle6
def test_storing_rows_one_at_a_time_does_not_multiply_the_allowance(tmp_path):
    """Two passes, then B0 one-row stores: still one block of z, so k is read 2x for it."""
    text = (KERNELS / "wrong" / "p06_two_pass.py").read_text()
    old = "    tl.store(z_ptr + queries, weighted / total, mask=queries < N0)\n"
    assert old in text
    text = text.replace(old, "    result = weighted / total\n    for row in tl.static_range(B0):\n"
                             "        one = tl.arange(0, B0) == row\n"
                             "        tl.store(z_ptr + queries, result, mask=one & (queries < N0))\n")
    _budget_failure(grade_text(6, text, tmp_path), "k read 2.00x per program")


# -- duplicate lanes --------------------------------------------------------------------------------------

@triton.jit
def _clamped_copy_kernel(src_ptr, dst_ptr, N, B: tl.constexpr):
    offsets = tl.minimum(tl.arange(0, B), N - 1)  # lanes past N all read (and write) element N-1
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets))


def test_duplicate_lanes_of_one_access_count_once():
    src, dst = torch.randn(5), torch.zeros(5)
    with instrument.recording() as recorder:
        recorder.watch("src", src)
        _clamped_copy_kernel[(1,)](src, dst, 5, B=64)
    regions = {r.label: r for r in recorder.regions}
    assert regions["src"].loads == 5 and regions["dst"].stores == 5
    assert recorder.race is None and torch.equal(src, dst)


def test_an_index_budget_on_floats_ignores_integer_loads():
    """Loads on float tensors (puzzle 13's k and v) count copies of floats, not the integer indices."""
    x, index = torch.randn(64), torch.arange(64, dtype=torch.int32)
    with instrument.recording() as recorder:
        recorder.watch("x", x)
        recorder.watch("index", index)
        _sum_rows_kernel[(1,)](index, torch.empty(1, dtype=torch.int32), 64, PASSES=3, B=64)
        _sum_rows_kernel[(1,)](x, torch.empty(1), 64, PASSES=1, B=64)
    assert Loads(("x",), "64").check(recorder, {}, {}) is None
    assert "192 elements of index loaded" in Loads(("index",), "64").check(recorder, {}, {})


@triton.jit
def _copy_kernel(src_ptr, dst_ptr, N, B: tl.constexpr):
    offsets = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=offsets < N), mask=offsets < N)


def test_a_scratch_budget_counts_stores_into_tensors_that_are_not_outputs():
    """Puzzle 17's budget: only Δ may go from one kernel to the next, never an N x T matrix. The output and the
    inputs are not counted."""
    x, scratch, out = torch.randn(100), torch.empty(100), torch.empty(100)
    with instrument.recording() as recorder:
        recorder.watch("x", x)
        _copy_kernel[(2,)](x, scratch, 100, B=64)
        _copy_kernel[(2,)](scratch, out, 100, B=64)
    recorder.region_of(out).label = "out"  # as the grader labels the tensor returned as an output
    assert Scratch(("out",), "100").check(recorder, {}, {}) is None
    problem = Scratch(("out",), "N - 1", lesson="Only Δ.").check(recorder, {}, {"N": 100})
    assert problem == ("over budget: 100 elements stored besides out (the tensor passed as dst_ptr, src_ptr "
                       "(100 stores)), the budget is N - 1 = 99. Only Δ.")


# -- the tl.dot floor takes the compiled kernels' facts as values -------------------------------------------------

def _dot_recorder(**facts):
    """A recorder's dot facts alone: one live tl.dot of 4096 multiply-adds at kernel.py:12."""
    from types import SimpleNamespace

    return SimpleNamespace(dot_calls=[(("/any/where/kernel.py", 12), 4096, 16, 16)], dot_is_live=lambda index: True,
                           dead_dot_work=lambda: 0, launches=[], **facts)


def test_the_dot_budget_counts_only_dots_the_worker_says_were_compiled():
    """The worker puts the (file, line) of every tl.dot its GPU compile kept on the recorder (kept_dots); the
    budget reads that value and never asks the worker itself."""
    from grader.course.budgets import Dots

    budget = Dots(work="4096")
    assert budget.check(_dot_recorder(kept_dots={("/any/where/kernel.py", 12)}), {}, {}) is None
    assert budget.check(_dot_recorder(kept_dots=None), {}, {}) is None  # not known: every dot counts
    dropped = budget.check(_dot_recorder(kept_dots=set()), {}, {})
    assert dropped.startswith("over budget: tl.dot did 0% of the multiply-adds"), dropped
    assert "The tl.dot at kernel.py:12 is not in the compiled kernel" in dropped, dropped


def test_products_on_cuda_cores_beside_live_dots_are_refused_and_the_report_says_how():
    """The eighteenth review: products computed on CUDA cores, each tl.dot kept live by a gated residual. The float
    operations outside tl.dot (grader.worker.cuda_cores) are held against one product's tl.dot multiply-adds."""
    from grader.course.budgets import CUDA_CORE_SHARE, Dots

    one = Dots(work="4096")
    assert one.check(_dot_recorder(kept_dots=None, float_ops=int(4096 * CUDA_CORE_SHARE) - 1), {}, {}) is None
    refused = one.check(_dot_recorder(kept_dots=None, float_ops=2 * 4096), {}, {})
    assert refused.startswith("over budget: 8192 float operations ran outside tl.dot against 4096 multiply-adds in "
                              "tl.dot (one product): the products must run through tl.dot, not as a broadcast "
                              "multiply and tl.sum"), refused
    two = Dots(work="4096", products=2)  # one of two products on CUDA cores: 2 x 2048 float operations
    refused = two.check(_dot_recorder(kept_dots=None, float_ops=2 * 2048), {}, {})
    assert "against 4096 multiply-adds in tl.dot (2048 for each of the puzzle's 2 products)" in refused, refused
    assert two.check(_dot_recorder(kept_dots=None, float_ops=2048 // 2), {}, {}) is None


# -- issue 26, class 10: a per-program budget holds between stores, so pairing programs cannot halve a pass --------

def test_paired_programs_reading_the_keys_twice_before_one_store_are_over_budget():
    """Even programs take their partner's query block too and read k twice, then store both blocks at once: 1x per
    block stored, but two passes before one store. The spec's case has an even number of query blocks."""
    result = grade_file(6, KERNELS / "cheating" / "p06_paired_query_blocks.py", first_failure=True)
    case = _budget_failure(result, "read k 2.00x (400 elements) before one store into z")
    assert case.name == "spec", report(result)
    assert "two passes, one before each store" in case.message


def test_a_persistent_program_reading_the_keys_once_before_each_block_passes():
    """The honest form of three blocks in one program: one pass, one store, three times."""
    result = grade_file(6, KERNELS / "right" / "p06_persistent.py")
    assert result.status == "passed", report(result)


def test_each_store_segment_holds_the_loads_since_the_previous_store_into_that_tensor():
    @triton.jit
    def two_blocks_kernel(x_ptr, z_ptr, B: tl.constexpr):
        offsets = tl.arange(0, B)
        first = tl.load(x_ptr + offsets)
        second = tl.load(x_ptr + offsets)
        tl.store(z_ptr + offsets, first + second)
        tl.store(z_ptr + B + offsets, tl.load(x_ptr + offsets))

    x, z = torch.ones(16), torch.empty(32)
    with instrument.recording() as recorder:
        recorder.watch("x", x)
        two_blocks_kernel[(1,)](x, z, B=16)
    (program, segments), = recorder.program_segments.items()
    region = recorder.region_of(x)
    assert [(s.new, s.loads.get(region)) for s in segments] == [(16, 32), (16, 16)]


# -- issue 26, class 2: a tl.dot is live when perturbing its result moves what is stored --------------------------

@triton.jit
def _cancelling_dots_kernel(a_ptr, b_ptr, c_ptr, MODE: tl.constexpr):
    """c = a @ b, 16 x 16: by tl.dot ("live", "softmax" of it), or on CUDA cores with tl.dot work beside it that
    cancels, written in several ways."""
    lanes = tl.arange(0, 16)
    tile = lanes[:, None] * 16 + lanes[None, :]
    a, b = tl.load(a_ptr + tile), tl.load(b_ptr + tile)
    cuda = tl.sum(a.to(tl.float32)[:, :, None] * b.to(tl.float32)[None, :, :], axis=1)
    if MODE == "live":
        c = tl.dot(a, b)
    elif MODE == "softmax":
        d = tl.dot(a, b)
        weights = tl.exp(d - tl.max(d, axis=1)[:, None])
        c = weights / tl.sum(weights, axis=1)[:, None]
    elif MODE == "minus itself":
        d = tl.dot(a, b)
        c = cuda + (d - d)
    elif MODE == "same line":
        c = cuda + (tl.dot(a, b) - tl.dot(a, b))
    elif MODE == "added, then taken away":
        c = cuda + tl.dot(a, b)
        c -= tl.dot(a, b)
    elif MODE == "in a condition that never holds":
        c = tl.where(tl.dot(a, b) > 1e30, 0.0, cuda)
    else:  # "scaled by a zero computed at run time"
        d = tl.dot(a, b)
        c = cuda + d * (tl.max(cuda) - tl.max(cuda))
    tl.store(c_ptr + tile, c)


def _live_dots(mode: str, a=None) -> list[bool]:
    a = torch.randn(16, 16).half() if a is None else a
    b, c = torch.randn(16, 16).half(), torch.zeros(16, 16)
    with instrument.recording() as recorder:
        recorder.shadows = instrument.DotShadows()
        _cancelling_dots_kernel[(1,)](a, b, c, MODE=mode)
    assert recorder.dot_calls, "no tl.dot counted"
    return [recorder.dot_is_live(index) for index in range(len(recorder.dot_calls))]


@pytest.mark.parametrize("mode", ["minus itself", "same line", "added, then taken away",
                                  "in a condition that never holds", "scaled by a zero computed at run time"])
def test_a_dot_whose_result_cancels_is_dead_however_it_is_written(mode):
    assert not any(_live_dots(mode)), mode


@pytest.mark.parametrize("mode", ["live", "softmax"])
def test_a_dot_whose_result_is_stored_is_live(mode):
    assert all(_live_dots(mode)), mode


def test_a_dot_of_zero_queries_is_live():
    """q = 0 gives scores of 0 and equal weights: the perturbation is partly absolute, so it still moves them."""
    assert all(_live_dots("softmax", a=torch.zeros(16, 16).half()))
