"""Known-wrong and known-cheating kernel files that must fail with a given reason and clue, in the interpreter and
natively: {path under tests/kernels/: (reason, a clue the default report must hold)}. tests/test_expected_verdicts.py
grades each in the interpreter; tests/test_gpu_verdicts.py grades each on a GPU (scripts/gpu_check.sh's quick set)."""

EXPECTED: dict[str, tuple[str, str]] = {
    # issue 26, class 2: tensor-core work that cancels is dead, however the cancellation is written
    "cheating/p11_dot_minus_itself.py": ("budget", "cancelled (d - d: what is stored does not move"),
    "cheating/p11_two_dots_cancel.py": ("budget", "tl.dot did 0% of the multiply-adds"),
    "cheating/p12_pv_on_cuda_cores_dot_cancelled.py": ("budget", "cancelled (d - d: what is stored does not move"),
    # issue 26, class 3: a row held in a dozen tiles is too short for 65 blocks per row
    "cheating/p05_row_in_a_dozen_tiles.py": ("mismatch", "never written (missing tl.store or mask?): first at "
                                                         "[0, 192]"),
    # issue 26, class 4: a plain store beside other programs' atomics races
    "cheating/p07_clears_while_others_add.py": ("race", "one with a plain tl.store and the other with an atomic"),
    # issue 26, class 10: paired programs read the keys twice before one store
    "cheating/p06_paired_query_blocks.py": ("budget", "before one store into z"),
}
