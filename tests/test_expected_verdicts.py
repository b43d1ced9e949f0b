"""Each kernel file of tests/expected_verdicts.py fails by its kernels alone, in the interpreter, with its reason
and a clue in the default report (tests/test_gpu_verdicts.py grades the same files on a GPU)."""

from pathlib import Path

import pytest
from expected_verdicts import EXPECTED
from helpers import failed_case, grade_file, kernel_file, report, requires_interpreter

pytestmark = requires_interpreter


@pytest.mark.parametrize("path", sorted(EXPECTED))
def test_a_known_cheating_or_wrong_kernel_file_fails_for_its_reason(path):
    reason, clue = EXPECTED[path]
    # a case's time limit well above the grader's 30 s: no file here is to time out, and a big one compiles slowly
    # (p15_whole_row_in_one_tile's 131,072-wide block: 33 s of CPU, within 30 s and gpu_compile.COMPILE_GRACE, but
    # not on a machine a third slower)
    result = grade_file(int(Path(path).name[1:3]), kernel_file(path), timeout=120, first_failure=True)
    assert result.status != "passed", f"{path} passed"
    failed = failed_case(result)
    assert failed.reason == reason, report(result)
    assert clue in f"{failed.message}\n{failed.hint or ''}", report(result)


def test_every_entry_names_a_file():
    paths = list(EXPECTED)
    assert all(kernel_file(path).is_file() for path in paths), [p for p in paths if not kernel_file(p).is_file()]

