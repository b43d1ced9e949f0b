"""Known-wrong and known-cheating kernel files that must fail with a given reason and clue, in the interpreter and
natively: {path under tests/kernels/: (reason, a clue the default report must hold)}. tests/test_expected_verdicts.py
grades each in the interpreter; tests/test_gpu_verdicts.py grades each on a GPU (scripts/gpu_check.sh's quick set)."""

EXPECTED: dict[str, tuple[str, str]] = {
}
