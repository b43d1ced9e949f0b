"""Known-wrong and known-cheating kernel files that must fail with a given reason and clue, in the interpreter and
natively: {path under tests/kernels/: (reason, a clue the default report must hold)}. tests/test_expected_verdicts.py
grades each in the interpreter; tests/test_gpu_verdicts.py grades each on a GPU (scripts/gpu_check.sh's quick set)."""

EXPECTED: dict[str, tuple[str, str]] = {
    # issue 27: sums kept in 16 bits pass every value check; the interpreter's hook and a GPU run's TTIR name them
    "wrong/p17_dkdv_summed_in_float16.py": ("error",
                                            "a running sum of tl.dot results is kept in float16. Sum in float32"),
    "wrong/p18_dq_accumulated_in_float16.py": ("error", "tl.dot sums its products in float16"),
}
