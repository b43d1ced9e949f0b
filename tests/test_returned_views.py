"""A returned output is judged by storage: a slice or view of a buffer a kernel stored into passes when
every element it shows was stored, and fails as never written when some were not; stores through views of it
(launches on z[i]) are stores into it."""

import pytest
import torch
import triton
import triton.language as tl
from helpers import failed_case, grade_text, requires_interpreter, solution_text

from grader.course import registry
from grader.worker import instrument

pytestmark = requires_interpreter


@pytest.mark.puzzle1
def test_a_slice_of_a_buffer_whose_other_half_the_kernel_wrote_is_never_written(tmp_path):
    text = solution_text(registry.find(1))
    old = "    z = torch.empty_like(x)\n"
    assert old in text and "    return z\n" in text
    # the kernel is given the whole buffer and fills its first half; the launcher returns the second
    text = text.replace(old, "    z = torch.empty(2 * x.numel(), dtype=x.dtype, device=x.device)\n")
    text = text.replace("    return z\n", "    return z[x.numel():]\n")
    case = failed_case(grade_text(1, text, tmp_path))
    assert case.reason == "never_written", case.message
    assert "never written" in case.message


@pytest.mark.puzzle1
def test_a_result_written_into_an_input_keeps_the_inputs_name(tmp_path):
    """The launcher (graded as its own) passes x as z_ptr and returns x: the counts say x, not z."""
    text = solution_text(registry.find(1))
    old = "add_kernel[(triton.cdiv(n0, B0),)](x, y, z, n0, B0=B0)\n    return z\n"
    assert old in text
    text = text.replace(old, "add_kernel[(triton.cdiv(n0, B0),)](x, y, x, n0, B0=B0)\n    return x\n")
    case = failed_case(grade_text(1, text, tmp_path, own_launcher=True))
    assert case.reason == "input_modified" and "changed the input x" in case.message, case.message
    names = [row["name"] for row in case.accesses]
    assert "z" not in names and "x" in names, case.accesses


@triton.jit
def _row_kernel(src_ptr, dst_ptr, N, B: tl.constexpr):
    offsets = tl.arange(0, B)
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=offsets < N), mask=offsets < N)


def test_stores_through_views_of_a_tensor_count_as_stores_into_it():
    """One launch per row, each on z[i]: the rows together cover z, so every element of z counts as written."""
    src, z = torch.randn(5), torch.empty(3, 5)
    with instrument.recording() as recorder:
        for i in range(2):  # rows 0 and 1; row 2 is left unwritten
            _row_kernel[(1,)](src, z[i], 5, B=8)
    region, written = recorder.stored_view(z)
    assert written.tolist() == [True] * 10 + [False] * 5
    assert [r.label for r in recorder.parts_of(z)] == ["dst", "dst"]
