"""The interpreter hook: out-of-bounds lanes are blocked before they run, counts and coverage are exact,
and an unknown triton falls back to checking values only.

CI runs this file on the newest triton and again on triton 3.6.
"""

import subprocess
import sys

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from helpers import KERNELS, ROOT, grade_file, requires_interpreter

from grader.worker import instrument

pytestmark = requires_interpreter


@triton.jit
def copy_kernel(src_ptr, dst_ptr, N, SHIFT, B: tl.constexpr, MASKED: tl.constexpr):
    offsets = tl.program_id(0) * B + tl.arange(0, B)
    mask = offsets < N if MASKED else offsets >= 0
    values = tl.load(src_ptr + offsets + SHIFT, mask=mask)
    tl.store(dst_ptr + offsets, values, mask=mask)


@triton.jit
def atomic_kernel(src_ptr, dst_ptr, index_ptr, N, B: tl.constexpr):
    offsets = tl.program_id(0) * B + tl.arange(0, B)
    mask = offsets < N
    index = tl.load(index_ptr + offsets, mask=mask, other=0)
    tl.atomic_add(dst_ptr + index, tl.load(src_ptr + offsets, mask=mask), mask=mask)


def _record(kernel, grid, *args, **kwargs):
    with instrument.recording() as recorder:
        for name, value in kwargs.pop("watch", {}).items():
            recorder.watch(name, value)
        try:
            kernel[grid](*args, **kwargs)
        except Exception:
            assert recorder.violation is not None, "only a recorded violation may stop the kernel"
    return recorder


def test_counts_and_coverage_of_a_masked_copy():
    src, dst = torch.randn(100), torch.zeros(100)
    recorder = _record(copy_kernel, (4,), src, dst, 100, 0, B=32, MASKED=True, watch={"src": src})
    assert recorder.violation is None
    regions = {r.label: r for r in recorder.regions}
    assert regions["src"].loads == 100 and regions["src"].params == ["src_ptr"]
    assert regions["dst"].stores == 100 and regions["dst"].written.all()
    assert recorder.programs == 4 and [launch.name for launch in recorder.launches] == ["copy_kernel"]
    assert torch.equal(src, dst)


def test_out_of_bounds_store_is_blocked_before_it_runs():
    """Without a mask the last program would write 28 floats past dst; none may land."""
    memory = torch.zeros(300)
    src, dst, guard = torch.randn(100), memory[100:200], memory[200:]
    recorder = _record(copy_kernel, (4,), src, dst, 100, 0, B=32, MASKED=False)
    violation = recorder.violation
    assert violation is not None and violation.kind in ("load", "store")
    assert torch.count_nonzero(guard) == 0 and torch.count_nonzero(memory[:100]) == 0
    assert violation.program == (3, 0, 0)
    assert "offsets 100, 101, 102, 103" in violation.message()
    assert "test_instrument.py:" in violation.where and "tl.load(src_ptr" in violation.code


def test_out_of_bounds_into_a_neighbouring_tensor_is_still_caught():
    """x and y share one buffer: lanes past the end of x land inside y, and must still count as outside x."""
    buffer = torch.randn(200)
    x, y = buffer[:100], buffer[100:]
    out = torch.empty(128)
    recorder = _record(copy_kernel, (4,), x, out, 128, 0, B=32, MASKED=True, watch={"x": x, "y": y})
    assert recorder.violation is not None
    assert recorder.violation.region.label == "x"
    assert recorder.violation.lanes == 28


def test_a_whole_block_past_the_end_is_attributed_to_its_tensor():
    """Every lane of program 1 reads x[100:132], which is y's memory: the pointer's origin decides."""
    buffer = torch.randn(200)
    x, y = buffer[:100], buffer[100:]
    out = torch.empty(32)
    recorder = _record(copy_kernel, (1,), x, out, 32, 100, B=32, MASKED=True, watch={"x": x, "y": y})
    assert recorder.violation is not None and recorder.violation.region.label == "x"
    assert recorder.violation.lanes == 32


def test_negative_offsets_are_out_of_bounds():
    src, dst = torch.randn(64), torch.zeros(32)
    recorder = _record(copy_kernel, (1,), src, dst, 32, -5, B=32, MASKED=True, watch={"src": src})
    assert recorder.violation is not None and -5 in recorder.violation.offsets


def test_atomics_are_counted_and_cover_their_targets():
    src, index = torch.ones(50), torch.arange(50, dtype=torch.int32) % 5
    dst = torch.zeros(5)
    recorder = _record(atomic_kernel, (2,), src, dst, index, 50, B=32, watch={"src": src})
    regions = {r.label: r for r in recorder.regions}
    assert regions["dst"].atomics == 50 and regions["dst"].written.all()
    assert torch.equal(dst, torch.full((5,), 10.0))


def test_nothing_is_recorded_outside_a_recording_block():
    """Once a recording block ends, its recorder is let go: a later launch neither adds to its counts nor is
    checked (an out-of-bounds read outside any block runs, as it would without the grader)."""
    src, dst = torch.randn(10), torch.zeros(10)
    recorder = _record(copy_kernel, (1,), src, dst, 10, 0, B=16, MASKED=True, watch={"src": src})
    assert instrument._active is None
    before = [(r.label, r.loads, r.stores, r.atomics) for r in recorder.regions], recorder.programs, \
        len(recorder.launches)
    padded, wide = torch.randn(16), torch.zeros(16)
    copy_kernel[(1,)](padded[:10], wide, 16, 0, B=16, MASKED=True)  # reads padded[10:16], past the 10 it was given
    assert torch.equal(wide, padded), "the launch outside the block must still run"
    assert instrument._active is None and recorder.violation is None
    after = [(r.label, r.loads, r.stores, r.atomics) for r in recorder.regions], recorder.programs, \
        len(recorder.launches)
    assert after == before


FALLBACK = """
import importlib.metadata, os, sys
os.environ["TRITON_INTERPRET"] = "1"
real = importlib.metadata.version
importlib.metadata.version = lambda name: {version!r} if name == "triton" else real(name)
sys.path.insert(0, {root!r})
from grader import inprocess
from grader.worker import instrument, loader
from grader.course import registry
{breakage}
puzzle = registry.find(1)
launcher = loader.load_launcher(puzzle, "solutions")
result = inprocess.grade(puzzle, launcher, 0, "cpu", "solutions", "interpreter")
print(result.status, "|", result.notices[0] if result.notices else "no notice")
"""


@pytest.mark.parametrize("version, breakage, expected", [
    ("3.99.0", "", "untested with the grader's interpreter hook"),
    (None, "import triton.runtime.interpreter as i; del type(i.interpreter_builder).create_atomic_cas",
     "lacks create_atomic_cas"),
])
@pytest.mark.slow
def test_unknown_or_reorganised_triton_falls_back_to_values_only(version, breakage, expected):
    script = FALLBACK.format(version=version or triton.__version__, root=str(ROOT), breakage=breakage)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    status, notice = run.stdout.strip().splitlines()[-1].split(" | ")
    assert status == "passed"
    assert expected in notice and "correctness only" in notice


@pytest.mark.slow
def test_bfloat16_cases_are_skipped_with_the_reason_when_the_hook_is_off():
    """Without the hook's fix, the interpreter's bfloat16 tl.dot is wrong: those cases wait for a GPU."""
    script = FALLBACK.format(version="3.99.0", root=str(ROOT), breakage="").replace("registry.find(1)",
                                                                                  "registry.find(11)")
    script += "print([(c.name, c.reason, c.message) for c in result.cases if not c.passed])\n"
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    status_line, skipped = run.stdout.strip().splitlines()[-2:]
    assert status_line.startswith("passed")
    assert "'bfloat16', 'skipped'" in skipped and "a GPU grades this case" in skipped


def test_hook_wraps_only_what_it_names():
    """The hook passes *args through: a builder method keeps working with its own signature."""
    from triton.runtime.interpreter import interpreter_builder

    with instrument.recording():
        handle = interpreter_builder.get_int32(7)
    assert int(np.asarray(handle.data).reshape(-1)[0]) == 7


# -- tl.dot: the GPU's smallest size, bfloat16 numbers, counts ------------------------------------------

@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, K: tl.constexpr, N: tl.constexpr, REPEAT: tl.constexpr):
    """c = a @ b for one [M, K] by [K, N] block, computed REPEAT times (each a tl.dot call)."""
    rows, inner, cols = tl.arange(0, M), tl.arange(0, K), tl.arange(0, N)
    a = tl.load(a_ptr + rows[:, None] * K + inner[None, :])
    b = tl.load(b_ptr + inner[:, None] * N + cols[None, :])
    c = tl.zeros([M, N], dtype=tl.float32)
    for _ in tl.static_range(REPEAT):
        c = tl.dot(a, b)
    tl.store(c_ptr + tl.program_id(0) * M * N + rows[:, None] * N + cols[None, :], c)


def _dot(m, k, n, dtype=torch.float16, programs=1, repeat=1):
    gen = torch.Generator().manual_seed(m * k * n)
    a, b = torch.randn(m, k, generator=gen).to(dtype), torch.randn(k, n, generator=gen).to(dtype)
    c = torch.zeros(programs, m, n)
    with instrument.recording() as recorder:
        dot_kernel[(programs,)](a, b, c, M=m, K=k, N=n, REPEAT=repeat)
    return a, b, c, recorder


def _root(exc: BaseException) -> BaseException:
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return exc


@pytest.mark.parametrize("m, k, n", [(8, 16, 16), (16, 16, 8), (16, 8, 16)], ids=["M=8", "N=8", "K=8"])
def test_a_dot_smaller_than_16_is_refused_naming_its_sizes(m, k, n):
    """The interpreter would multiply an 8-wide block; the GPU compiler would not, so the hook refuses it."""
    with pytest.raises(Exception) as raised:
        _dot(m, k, n)
    root = _root(raised.value)
    assert isinstance(root, instrument.DotTooSmall), repr(root)
    message = str(root)
    assert f"tl.dot of a {m}x{k} block by a {k}x{n} block" in message
    assert f"at least 16 (M={m}, N={n}, K={k})" in message
    assert "test_instrument.py:" in message and "tl.dot(a, b)" in message


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bfloat16", "float16"])
def test_a_16_bit_dot_gives_the_products_of_the_numbers_it_holds(dtype):
    """The interpreter keeps bfloat16 as raw uint16 bits; without the hook tl.dot would multiply those bits."""
    a, b, c, _ = _dot(32, 64, 16, dtype)
    expected = a.double() @ b.double()  # exact products of the 16-bit inputs, summed in float64
    assert torch.allclose(c[0].double(), expected, rtol=1e-5, atol=1e-5), float((c[0].double() - expected).abs().max())


@triton.jit
def bfloat16_arithmetic_kernel(a_ptr, b_ptr, out_ptr, B: tl.constexpr):
    """out[0] = a * b, out[1] = a + b, out[2] = a - b, out[3] = maximum(a, b), each in a's dtype, stored as float32."""
    lanes = tl.arange(0, B)
    a = tl.load(a_ptr + lanes)
    b = tl.load(b_ptr + lanes)
    tl.store(out_ptr + lanes, (a * b).to(tl.float32))
    tl.store(out_ptr + B + lanes, (a + b).to(tl.float32))
    tl.store(out_ptr + 2 * B + lanes, (a - b).to(tl.float32))
    tl.store(out_ptr + 3 * B + lanes, tl.maximum(a, b).to(tl.float32))


def test_bfloat16_arithmetic_gives_the_gpus_rounded_results():
    """Issue 27: the interpreter adds and multiplies bfloat16 blocks as their uint16 bits (o * do came out 1e37); under
    the hook each op computes in float32 and rounds to bfloat16, as the GPU does (and as torch's bfloat16 ops do)."""
    gen = torch.Generator().manual_seed(27)
    a, b = (torch.randn(64, generator=gen).to(torch.bfloat16) for _ in range(2))
    out = torch.empty(4, 64)
    _record(bfloat16_arithmetic_kernel, (1,), a, b, out, B=64)
    expected = torch.stack([a * b, a + b, a - b, torch.maximum(a, b)]).float()
    assert torch.equal(out, expected), (out - expected).abs().max()


@triton.jit
def sum_kernel(a_ptr, out_ptr, STEPS, B: tl.constexpr, HOW: tl.constexpr):
    """out = a summed over STEPS steps of a B x B tile, each step's product a a^T: HOW says how the sum is kept
    ("float32" right; "add16": a float16 acc += dot.to(float16); "acc16": a float16 acc passed to tl.dot; "sum16":
    tl.sum of a float16 block)."""
    rows = tl.arange(0, B)
    a = tl.load(a_ptr + rows[:, None] * B + rows[None, :])
    if HOW == "sum16":
        tl.store(out_ptr + rows[:, None] * B + rows[None, :], tl.sum(a, axis=1)[:, None].to(tl.float32))
    elif HOW == "float32":
        acc = tl.zeros([B, B], dtype=tl.float32)
        for _ in tl.range(0, STEPS):
            acc = tl.dot(a, a, acc)
        tl.store(out_ptr + rows[:, None] * B + rows[None, :], acc)
    else:
        acc16 = tl.zeros([B, B], dtype=tl.float16)
        for _ in tl.range(0, STEPS):
            if HOW == "add16":
                acc16 += tl.dot(a, a).to(tl.float16)
            else:
                acc16 = tl.dot(a, a, acc16)
        tl.store(out_ptr + rows[:, None] * B + rows[None, :], acc16.to(tl.float32))


@pytest.mark.parametrize("how, what", [
    ("add16", "a running sum of tl.dot results is kept in float16"),
    ("acc16", "tl.dot sums its products in float16"),
    ("sum16", "tl.sum of a float16 block adds in float16"),
    ("float32", None),
])
def test_a_sum_kept_in_16_bits_is_refused_where_it_runs(how, what):
    """Issue 27: a 16-bit running sum of tl.dot results, a 16-bit tl.dot accumulator and a tl.sum of a 16-bit block
    stop the kernel with SumIn16Bit (at their line, through the report); a float32 accumulator runs."""
    a = torch.randn(16, 16).to(torch.float16)
    out = torch.empty(16, 16)
    if what is None:
        _record(sum_kernel, (1,), a, out, 3, B=16, HOW=how)
        assert torch.allclose(out, 3 * (a.float() @ a.float()), rtol=1e-2, atol=1e-2)
        return
    with pytest.raises(Exception) as raised:
        _record(sum_kernel, (1,), a, out, 3, B=16, HOW=how)
    root = raised.value
    while root.__cause__ is not None or root.__context__ is not None:
        root = root.__cause__ or root.__context__
    if how == "acc16" and isinstance(root, AssertionError) and triton.__version__.startswith("3.6."):
        return  # triton 3.6's own tl.dot refuses a float16 accumulator (an assertion) before the hook sees the call
    assert isinstance(root, instrument.SumIn16Bit), repr(root)
    assert str(root).startswith(what) and "Sum in float32" in str(root), str(root)


def test_dots_and_their_multiply_adds_are_counted_over_programs():
    _, _, c, recorder = _dot(16, 32, 64, programs=3, repeat=2)
    assert recorder.dots == 6
    assert recorder.dot_work == 6 * 16 * 32 * 64
    assert recorder.programs == 3 and bool((c != 0).any())


@triton.jit
def descriptor_rows_kernel(a_ptr, b_ptr, out_ptr, M, K: tl.constexpr, FIRST: tl.constexpr, BM: tl.constexpr):
    """out = rows FIRST .. FIRST+BM-1 of a, through a tensor descriptor (rows past M come back as 0).
    b is passed but not read: it is only there to be a's neighbour in memory."""
    block = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, K]).load([FIRST, 0])
    tl.store(out_ptr + tl.arange(0, BM)[:, None] * K + tl.arange(0, K)[None, :], block)


def test_descriptor_padding_past_the_end_is_not_out_of_bounds_even_over_a_neighbour():
    """a's last 4 rows and 28 rows of padding: the padded lanes' addresses fall in b, the next argument in
    memory. Only the unmasked lanes decide which tensor the load reads, so it is a load of a, in bounds."""
    memory = torch.randn(64 * 16).to(torch.float16)
    a, b = memory[:20 * 16].view(20, 16), memory[20 * 16:]
    out = torch.full((32, 16), float("nan"), dtype=torch.float16)
    with instrument.recording() as recorder:
        descriptor_rows_kernel[(1,)](a, b, out, 20, K=16, FIRST=16, BM=32)
    assert recorder.violation is None, recorder.violation.message()
    regions = {r.label: r for r in recorder.regions}
    assert regions["a"].loads == 4 * 16 and regions["b"].loads == 0
    assert torch.equal(out[:4], a[16:]) and bool((out[4:] == 0).all())


# -- tl.where between pointers into two tensors ---------------------------------------------------------

@triton.jit
def where_pointers_kernel(x_ptr, y_ptr, out_ptr, N, SHIFT, B: tl.constexpr):
    """out[i] = x[i] for even i, y[i + SHIFT] for odd i: one load through pointers into two tensors."""
    offsets = tl.arange(0, B)
    pointers = tl.where(offsets % 2 == 0, x_ptr + offsets, y_ptr + offsets + SHIFT)
    tl.store(out_ptr + offsets, tl.load(pointers, mask=offsets < N), mask=offsets < N)


def test_a_load_through_tl_where_of_two_tensors_is_judged_lane_by_lane():
    """Each lane lies in x or in y, so the load is in bounds, and each tensor is charged its own lanes."""
    x, y, out = torch.randn(32), torch.randn(32), torch.zeros(32)
    recorder = _record(where_pointers_kernel, (1,), x, y, out, 32, 0, B=32, watch={"x": x, "y": y})
    assert recorder.violation is None, recorder.violation.message()
    regions = {r.label: r for r in recorder.regions}
    assert regions["x"].loads == 16 and regions["y"].loads == 16
    assert torch.equal(out[0::2], x[0::2]) and torch.equal(out[1::2], y[1::2])


def test_a_lane_of_tl_where_outside_both_tensors_is_still_out_of_bounds():
    x, y, out = torch.randn(32), torch.randn(32), torch.zeros(32)
    recorder = _record(where_pointers_kernel, (1,), x, y, out, 32, 2, B=32, watch={"x": x, "y": y})
    violation = recorder.violation
    assert violation is not None and violation.kind == "load"
    assert "out-of-bounds load on y (passed as y_ptr) or x (passed as x_ptr): 1 of 32 unmasked lanes" \
        in violation.message()
    assert violation.offsets == [33]  # y[31 + 2], reported against the tensor the lane is nearest


# -- the int32 mask fix says what to write instead -------------------------------------------------------

def test_a_mask_the_stock_interpreter_rejects_passes_with_a_note_saying_what_to_write():
    """Triton 3.6's interpreter builds the same int32 mask but accepts it; 3.9's rejects it. The note is given
    on both, as a learner's kernel should run on either."""
    result = grade_file(1, KERNELS / "right" / "p01_scalar_condition_mask.py")
    assert result.status == "passed", [(c.reason, c.message) for c in result.cases]
    note = result.cases[0].message
    assert note.startswith("note: the stock interpreter of triton 3.9") and "tl.where(node < N, block_mask, False)" \
        in note
    assert "p01_scalar_condition_mask.py:" in note and "tl.load(x_ptr + offsets, mask=mask)" in note  # where it is used


@triton.jit
def _float8_round_trip(x_ptr, e4_ptr, e5_ptr, h4_ptr, N: tl.constexpr):
    offsets = tl.arange(0, N)
    x = tl.load(x_ptr + offsets)
    tl.store(e4_ptr + offsets, x.to(tl.float8e4nv).to(tl.float32))
    tl.store(e5_ptr + offsets, x.to(tl.float8e5).to(tl.float32))
    tl.store(h4_ptr + offsets, x.to(tl.float16).to(tl.float8e4nv).to(tl.float32))


def test_casts_to_float8_round_and_saturate_as_the_gpus():
    """PTX cvt.rn.satfinite (what sm_90 runs): round to nearest even, carrying into the exponent (500 -> 512 in
    float8e5), past the largest finite value that value with its sign (inf too), NaN kept NaN. The interpreter's own
    conversion gave 256 for 500, 1000 and inf as float8e4nv, and read NaN back as 480."""
    x = torch.tensor([1.0, 300.0, 464.0, 500.0, 1000.0, 60000.0, float("inf"), float("nan"), -500.0, -float("inf"),
                      1e-9, 0.1, -0.1, 3.0, 70000.0, -70000.0])
    e4, e5, h4 = (torch.empty(16) for _ in range(3))
    with instrument.recording():
        _float8_round_trip[(1,)](x, e4, e5, h4, N=16)
    assert torch.isnan(e4[7]) and e4[[0, 1, 2, 3, 4, 5, 6, 8, 9]].tolist() == [
        1.0, 288.0, 448.0, 448.0, 448.0, 448.0, 448.0, -448.0, -448.0]
    assert torch.isnan(e5[7]) and e5[[0, 1, 2, 3, 4, 5, 6, 8, 9, 14, 15]].tolist() == [
        1.0, 320.0, 448.0, 512.0, 1024.0, 57344.0, 57344.0, -512.0, -57344.0, 57344.0, -57344.0]
    assert torch.equal(h4.nan_to_num(), e4.nan_to_num())  # from float16 the same (70000 is inf in float16)
    assert e4[10] == 0.0 and e4[11] == 0.1015625 and e4[12] == -0.1015625 and e4[13] == 3.0
