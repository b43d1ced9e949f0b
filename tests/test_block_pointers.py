"""Block pointers: a correct puzzle 11 passes where triton has them, and is told to use descriptors where it does not.

Triton 3.6 (the H200's) has `tl.make_block_ptr` and `tl.advance`. Triton 3.9 keeps the name
`tl.make_block_ptr` only to raise "Block pointers have been removed in favor of the tensor descriptor
API", so the same kernel must fail there with a message that points to tensor descriptors. The kernel
lives outside tests/kernels/right/, whose kernels must pass on every supported triton.
"""

import pytest
import triton.language as tl
from helpers import KERNELS, grade_file, requires_interpreter

pytestmark = [requires_interpreter, pytest.mark.puzzle11]

BLOCK_POINTERS = KERNELS / "right_on_triton_3_6" / "p11_block_pointers.py"
REMOVED = "removed" in (tl.make_block_ptr.__doc__ or "")  # triton 3.9's stub says so in its docstring


@pytest.mark.skipif(REMOVED, reason="this triton removed block pointers")
def test_a_block_pointer_matmul_passes():
    result = grade_file(11, BLOCK_POINTERS, seed=3)
    assert result.status == "passed", "\n".join(f"{c.name}: {c.reason}: {c.message}" for c in result.cases)


@pytest.mark.skipif(not REMOVED, reason="this triton still has block pointers")
def test_a_block_pointer_matmul_is_pointed_to_tensor_descriptors():
    result = grade_file(11, BLOCK_POINTERS, seed=3)
    first = result.cases[0]
    assert (result.status, first.reason) == ("failed", "gpu_compile")  # the compile before the interpreter runs it
    assert "Block pointers have been removed" in first.message
    assert "tl.make_tensor_descriptor" in first.message + (first.hint or "")
