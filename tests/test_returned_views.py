"""A returned output is judged by storage: a slice or view of a buffer a kernel stored into passes when
every element it shows was stored, and fails as never written when some were not. A launcher returns the
output, so this is the practice path's (`own_launcher`); the passing slices are tests/kernels/right_own_launcher/."""

import pytest
from helpers import failed_case, grade_text, requires_interpreter, solution_text

from grader.course import registry

pytestmark = requires_interpreter


@pytest.mark.puzzle1
def test_a_slice_of_a_buffer_whose_other_half_the_kernel_wrote_is_never_written(tmp_path):
    text = solution_text(registry.find(1))
    old = "    z = torch.empty_like(x)\n"
    assert old in text and "    return z\n" in text
    # the kernel is given the whole buffer and fills its first half; the launcher returns the second
    text = text.replace(old, "    z = torch.empty(2 * x.numel(), dtype=x.dtype, device=x.device)\n")
    text = text.replace("    return z\n", "    return z[x.numel():]\n")
    case = failed_case(grade_text(1, text, tmp_path, own_launcher=True))
    assert case.reason == "never_written", case.message
    assert "never written" in case.message
