"""Known-wrong and known-cheating kernel files that must fail with a given reason and clue, in the interpreter and
natively: {path under tests/kernels/: (reason, a clue the default report must hold)}. tests/test_expected_verdicts.py
grades each in the interpreter; tests/test_gpu_verdicts.py grades each on a GPU (scripts/gpu_check.sh's quick set)."""

EXPECTED: dict[str, tuple[str, str]] = {
    # issue 26, class 1: one kernel in the interpreter and another on the GPU, chosen by a test on tl's functions
    "cheating/p01_load_is_core_load.py": ("error", "`tl.load is tl.core.load`: a kernel tests identity against None "
                                                   "only"),
    "cheating/p01_load_equals_core_load.py": ("error", "tl.core.load used as a value: a kernel calls tl's functions"),
    "cheating/p01_block_is_a_small_int.py": ("error", "`B0 is 1024`: a kernel tests identity against None only"),
    "cheating/p01_dtype_identity.py": ("error", "`x_ptr.dtype.element_ty is tl.float32`: a kernel tests identity "
                                                "against None only"),
    # (the reason's wording depends on whether the judge's process patched tl.load for an interpreter run first)
    "cheating/p01_through_tl_core.py": ("error", "p01_through_tl_core.py:13: tl.core.load: "),
    "cheating/p01_partial_and_double_star.py": ("error", "**options: pass each keyword by its name"),
    "cheating/p01_describes_a_block.py": ("error", "'%s': a string in a kernel is a call's argument"),
    # issue 26, class 5: a file that crashed the judge
    "cheating/p01_huge_integer.py": ("error", "p01_huge_integer.py:16: an integer literal of 20,000 bits"),
    # issue 26, class 8: a parameter the puzzle's launcher does not pass
    "wrong/p01_extra_stride.py": ("error", "the parameters of add_kernel differ from the puzzle's kernel's (stride is "
                                           "not the puzzle's)"),
    # issue 26, class 2: tensor-core work that cancels is dead, however the cancellation is written
    "cheating/p11_dot_minus_itself.py": ("budget", "cancelled (d - d: what is stored does not move"),
    "cheating/p11_two_dots_cancel.py": ("budget", "tl.dot did 0% of the multiply-adds"),
    "cheating/p12_pv_on_cuda_cores_dot_cancelled.py": ("budget", "cancelled (d - d: what is stored does not move"),
    # the eighteenth review: products on CUDA cores, each tl.dot kept live by a residual gated above rounding
    "cheating/p11_dot_residual_above_threshold.py": ("budget", "float operations ran outside tl.dot against"),
    "cheating/p12_both_products_on_cuda_cores.py": ("budget", "float operations ran outside tl.dot against"),
    "cheating/p17_dv_on_cuda_cores_dot_gated.py": ("budget", "float operations ran outside tl.dot against"),
    # issue 26, class 3: a row held in a dozen tiles is too short for 65 blocks per row
    "cheating/p05_row_in_a_dozen_tiles.py": ("mismatch", "never written (missing tl.store or mask?): first at [0, 48]"),
    # issue 26, class 4: a plain store beside other programs' atomics races
    "cheating/p07_clears_while_others_add.py": ("race", "one with a plain tl.store and the other with an atomic"),
    # issue 26, class 10: paired programs read the keys twice before one store
    "cheating/p06_paired_query_blocks.py": ("budget", "before one store into z"),
    # from the fresh attacker's review: a compare-and-swap in a `while` that runs once retries nothing
    "cheating/p07_cas_in_a_loop_that_runs_once.py": ("mismatch", "failed once here, as they may on a GPU"),
    # a whole row of puzzle 15 in one block the launcher never gave (an extra parameter's default)
    "cheating/p15_whole_row_in_one_tile.py": ("budget", "your kernel made a block 131072 wide"),
    # a row held in separate tiles of [16, B1]: at 65 blocks of 4 no tile may be wider than 4 (tests/test_chapters.py)
    "cheating/p05_row_in_eight_tiles.py": ("mismatch", "never written (missing tl.store or mask?): first at [0, 128]"),
    "cheating/p06_keys_in_five_tiles.py": ("mismatch", "4 of 4 elements of z wrong"),
    "cheating/p14_row_in_five_tiles.py": ("mismatch", "never written (missing tl.store or mask?): first at [0, 80]"),
    # two tl.dots whose difference is 0 (d1 - d2 / 2, d2 = tl.dot(a, 2 b)) beside a product on CUDA cores
    "cheating/p11_cuda_cores_beside_a_scaled_pair.py": ("budget", "tl.dot did 0% of the multiply-adds"),
    # a float-to-int32 cast past the range: numpy gave INT_MIN where the GPU saturates, so a test on it took one
    # branch in the interpreter and the other on the GPU (gpu_semantics._saturating casts as the GPU does)
    "cheating/p11_float_to_int_overflow_branch.py": ("mismatch", "every element was stored, and every one is 0"),
    "cheating/p01_float_to_int_overflow_sign.py": ("mismatch", "200 of 200 elements of z wrong"),
    # a tl.dot whose result is only control: it gates the store's mask (d == floor(d) holds for the real integer
    # counts, not for dot_shadows' nudged copies), shifts a pointer, picks a value, moves a load, or is printed,
    # while every product runs on CUDA cores: only a stored value counts as the product put to use
    "cheating/p11_dot_only_gates_the_store.py": ("budget", "used only in a mask, a pointer or a condition"),
    "cheating/p12_dots_only_gate_the_store.py": ("budget", "tl.dot did 0% of the multiply-adds"),
    "cheating/p11_dot_only_shifts_the_pointer.py": ("budget", "tl.dot did 0% of the multiply-adds"),
    "cheating/p11_dot_only_picks_the_value.py": ("budget", "tl.dot did 0% of the multiply-adds"),
    "cheating/p11_dot_only_moves_a_load.py": ("budget", "tl.dot did 0% of the multiply-adds"),
    "cheating/p11_dot_only_printed.py": ("budget", "tl.dot did 0% of the multiply-adds"),
    # an integer // or % by zero: numpy gives 0, a GPU another value (undefined), so the interpreter's kernel was
    # not the GPU's (issue 26, class 1: the attacker's review of 2026-12-03)
    "cheating/p01_integer_division_by_zero.py": ("error", "IntegerDivisionByZero: an integer // by zero on 1 of 1"),
    "cheating/p01_integer_remainder_by_zero.py": ("error", "an integer % by zero on 24 of 32 lanes"),
    # races between the lanes of one program, which the interpreter runs one after another (the attacker's review
    # of 2026-12-03): a load of what another lane stored with no barrier between, and one store whose two lanes
    # write one element with different values
    "cheating/p01_reads_another_lanes_store.py": ("race", "which another lane of the same program stored"),
    # (which program's lanes is the drawn order's first program with two: grader.worker.program_order)
    "cheating/p01_two_lanes_store_one_element.py": ("race", "with different values, in one tl.store or in two with no "
                                                            "tl.debug_barrier() between"),
    # a kernel that tests for the grader's NaN poison (x != x) and swaps in what it wants: masked lanes loaded with
    # no other= taken as the softmax's padding, and an output read before it is written with the NaN cleaned away
    # (a GPU's memory holds whatever it held): every other case's poison is a number (guards.poison_finite)
    # (natively the first case fails, its masked lanes 0 as compiled; in the interpreter the second: the clues leave
    # out the count of wrong elements, which is each case's own)
    "cheating/p04_padding_from_the_poison.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_cleans_the_poison_of_its_output.py": ("mismatch", "elements of z wrong"),
    # a persistent kernel that tested NUM_PROGRAMS == 4 (the interpreter's count, never a GPU's): each case now
    # has its own count, an H200's 132 among them (compose.interpreter_programs); natively it is the GPU's count in
    # every case, so there the first case fails and in the interpreter the second
    "cheating/p01_persistent_knows_the_interpreter.py": ("mismatch", "elements of z wrong"),
    # a tl.dot of blocks of ones ((a == a)), whose constant result is subtracted and scaled into the store, beside
    # products on CUDA cores: its operands do not move with the inputs' values (DotShadows.INPUT)
    "cheating/p11_ones_dot.py": ("budget", "a product of blocks that no input's values fill (a tl.dot of ones)"),
    "cheating/p12_ones_dots.py": ("budget", "tl.dot did 0% of the multiply-adds"),
    # what leaves an order or a promise to the GPU that the interpreter cannot hold (the second attacker's review of
    # 2026-12-03): a false compiler hint vectorised a mask past the end; a tie broken by the GPU's threads; a
    # reshape whose order is the compiler's layout
    "cheating/p01_false_constancy_hint.py": ("error", "max_constancy is a promise the GPU compiler trusts"),
    "cheating/p01_argmax_fast_tie.py": ("error", "tie_break_left=False returns whichever tied index"),
    "cheating/p01_reshape_can_reorder.py": ("error", "can_reorder=True lets the compiler put the elements"),
    # the grader's undefined value tested by its bits (a fully masked load): 0 in every other case, as compiled
    # (natively 0 in every case: the first case fails there, the second in the interpreter)
    "cheating/p01_poison_oracle.py": ("mismatch", "elements of z wrong"),
    # lane races through a wider pointer, and across two stores
    "cheating/p01_lane_read_through_int64.py": ("race", "which another lane of the same program stored"),
    "cheating/p01_lane_write_after_write.py": ("race", "in one tl.store or in two with no tl.debug_barrier() between"),
    # a write after a read between lanes (review 19): a lane stores over an element that another lane of its program
    # loaded, with no barrier between the load and the store
    "cheating/p01_lane_reads_then_another_overwrites.py": ("race", "which another lane of the same program loaded "
                                                                   "since the last tl.debug_barrier()"),
    # tickets from tl.atomic_add's old values, read in lane order: the interpreter applies an atomic's lanes in an
    # order drawn for each call, as a GPU's threads land in any order
    "cheating/p01_atomic_tickets.py": ("mismatch", "elements of z wrong"),
    # bfloat16 blocks computed with as their uint16 bits in the interpreter (the third attacker's review of
    # 2026-12-04): comparisons and integer casts now compute on the numbers (gpu_semantics._bfloat16_as_floats)
    "cheating/p01_bf16_compare.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_int_to_bf16.py": ("mismatch", "elements of z wrong"),
    # float8 casts past the range (the GPU saturates) and tl.gather counting from the end (numpy wraps, a GPU does not)
    "cheating/p01_fp8_past_its_range.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_gather_from_the_end.py": ("error", "tl.gather with an index outside 0..31"),
    # the fourth attacker's review: Python's range (an int32 loop variable on a GPU), a float cast to int8 past its
    # range (undefined there), and a tl.reduce whose combine is not associative (a GPU folds in a tree)
    "cheating/p01_range_loop_integer_wraps.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_int8_past_its_range.py": ("error", "a float cast to int8 of 1 of 1 lanes outside -128..127"),
    "cheating/p03_reduce_combine_not_associative.py": ("error", "tl.reduce with your combine function gives another"),
    # the fifth attacker's review: more of what a GPU leaves undefined or computes otherwise than numpy
    "cheating/p01_loop_step_negative_at_run_time.py": ("error", "a loop's step known only at run time is -1"),
    "cheating/p01_signed_zero_maximum.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_shift_by_the_width.py": ("error", "a shift by 40 of a 32-bit integer"),
    "cheating/p01_int_min_divided_by_minus_one.py": ("error", "the smallest 32-bit integer divided by -1"),
    "cheating/p01_argmax_over_nan.py": ("error", "tl.argmax / tl.argmin over a block with NaN"),
    "cheating/p01_float32_dot_at_tf32.py": ("mismatch", "elements of z wrong"),
    # the sixth review: assignments other than `x = v` (augmented, annotated, a tuple's) kept Python integers
    "cheating/p01_annotated_and_augmented_int.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_tuple_assignment_divides.py": ("mismatch", "elements of z wrong"),
    "cheating/p11_bf16_flag_picks_cuda_cores.py": ("budget", "tl.dot did 0% of the multiply-adds"),
    # the same orders asked for another way: a view, a tie-break by position or under return_indices's keyword
    "cheating/p01_view_reorders.py": ("error", "x.view(...) is a reshape with can_reorder=True"),
    "cheating/p01_argmax_tie_by_position.py": ("error", "argmax: pass what comes after the axis by its name"),
    "cheating/p01_max_indices_tie.py": ("error", "tie_break_left=False returns whichever tied index"),
    # the seventh review: Python kept numbers, or took a block whole, where the compiler makes tensors or works
    # element by element (as_compiled._source_as_compiled): a conditional expression on a run-time test, a tuple's
    # elements, a helper's returns, an annotation judged by its name, `and` / `or` in a helper whose parameters say
    # tl.constexpr
    "cheating/p01_conditional_expression_int.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_tuple_element_int.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_helper_returns_a_pair.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_helper_returns_differ.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_annotation_named_constexpr.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_constexpr_helper_and.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_constexpr_helper_or_masks.py": ("out_of_bounds", "out-of-bounds load on x"),
    # the eighth review: the JIT's constexpr 1, a uint32 loop variable, a return the compiler visits twice
    "cheating/p01_n0_one_is_a_constexpr.py": ("mismatch", "1 of 1 elements of z wrong"),
    "cheating/p01_range_of_uint32_bounds.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_return_in_a_static_range.py": ("mismatch", "elements of z wrong"),
    # the ninth review: numpy's fast paths (signed zeros in tl.max, bfloat16 bits in tl.argmax and tl.cumprod), a
    # float16 cast toward zero past its range, a histogram of its top edge
    "cheating/p01_reduce_max_of_signed_zeros.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_bfloat16_argmax_of_bits.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_bfloat16_cumprod_of_bits.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_float16_toward_zero_past_its_range.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_histogram_of_its_top_edge.py": ("error", "tl.histogram of a value outside 0..31"),
    # the tenth review: a float % as NVPTX's frem computes it, casts to bfloat16 from float64 and int32 rounded once
    "cheating/p01_float_remainder_of_a_rounded_quotient.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_float64_to_bfloat16_rounded_twice.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_int32_to_bfloat16_rounded_twice.py": ("mismatch", "elements of z wrong"),
    # the eleventh review: the compile check goes on to the LLVM dialect for sm_90 (float8 arithmetic fails there,
    # shared memory is allocated there); tl.clamp with min above max; a cast to float8e5 toward zero past its range
    "cheating/p01_float8_arithmetic.py": ("gpu_compile", "float8 values cannot be computed with on a GPU"),
    "cheating/p01_shared_memory_past_the_limit.py": ("gpu_compile", "it needs 262,144 bytes of shared memory per "
                                                                    "program, past the 232,448"),
    "cheating/p01_clamp_min_above_max.py": ("error", "tl.clamp with its min above its max"),
    "cheating/p01_float8e5_toward_zero_past_its_range.py": ("mismatch", "elements of z wrong"),
    # the twelfth review: a launch that needs an allocator no launcher set; single ops as sm_90 computes them
    # (gpu_ops: fma, umulhi, maximum past NaN, booleans, 3xTF32, the value of a tied argmax); orders a GPU leaves
    # open (a compare-and-swap's lanes, a combine folded as a tree)
    "cheating/p01_descriptor_without_an_allocator.py": ("gpu_compile", "bytes of global scratch memory"),
    "cheating/p01_max_value_of_tied_zeros.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_reduce_not_associative_on_equal_values.py": ("error", "(the reverse, or a tree of pairs)"),
    "cheating/p01_tf32x3_dot_as_exact.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_bf16x3_dot_as_exact.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_umulhi_of_negatives.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_fma_rounded_twice.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_maximum_with_nan.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_booleans_added.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_cas_lane_zero_wins.py": ("mismatch", "elements of z wrong"),
    # the thirteenth review: boolean sums in one bit; scalar arguments as a GPU's launch passes them
    "cheating/p01_boolean_sum_in_one_bit.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_boolean_cumsum_in_one_bit.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_float_argument_in_float32.py": ("mismatch", "elements of z wrong"),
    "cheating/p01_int_argument_past_int32.py": ("mismatch", "elements of z wrong"),
    # the fourteenth review: puzzle 12's row held in eight tiles, wrong at 65 key blocks
    "cheating/p12_rows_in_eight_tiles.py": ("mismatch", "elements of o wrong"),
    # the sixteenth review: compare-and-swap loops that give up, an exchange beside a retry loop, an atomic over
    # another lane's store
    "cheating/p07_cas_loop_gives_up.py": ("mismatch", "failed once here, as they may on a GPU"),
    "cheating/p07_cas_gives_up_after_one_failure.py": ("mismatch", "failed once here, as they may on a GPU"),
    # (the load may run before the other programs' atomics or after them, by the drawn order; either races)
    "cheating/p07_last_program_normalizes.py": ("race", "Read atomically built sums in a later launch"),
    # (an exchange over den a program loads: the exchange after the load, or the load after it, by the drawn order)
    "cheating/p07_borrows_den_by_exchange.py": ("race", "read den["),
    # review 18: a read-modify-write made of two atomics that combine (read with atomic_or(p, 0), write with
    # atomic_xor): the interpreter never interleaves programs, a GPU loses updates between the two
    "cheating/p07_rmw_by_or_and_xor.py": ("race", "with tl.atomic_xor of a value made from what an atomic read there"),
    "cheating/p01_atomic_reads_another_lanes_store.py": ("race", "with an atomic, over what another lane"),
    "cheating/p11_k_walk_capped.py": ("mismatch", "elements of c wrong"),
    # the fifteenth review: walks capped just past the longest list the cases held, and a window as one tile
    "cheating/p13_eight_tcbs_as_one_tile.py": ("mismatch", "elements of o wrong"),
    "cheating/p13_tcb_walk_capped.py": ("mismatch", "elements of o wrong"),
    "cheating/p18_query_walk_capped.py": ("mismatch", "elements of dq wrong"),
    "cheating/p18_key_walk_capped.py": ("mismatch", "elements of dv wrong"),
    "cheating/p16_incoming_walk_capped.py": ("mismatch", "elements of dq wrong"),
    "cheating/p16_outgoing_walk_capped.py": ("mismatch", "elements of dk wrong"),
    # a write after another program's read: a program overwrites the previous program's tile of x (loaded by then,
    # in id order; in the drawn order it may read the scratch values instead: a read race) and puts it back after its
    # loop; and an input borrowed as scratch, put back before the kernel ends (its digest unchanged, no budget
    # counting it): every store into an input is refused
    "cheating/p03_borrows_a_neighbours_tile.py": ("race", "on a GPU they run at the same time, so"),
    # a running sum kept in the output, loaded back in a loop with num_stages: on sm_90 the pipeliner issues the load
    # (cp.async) steps ahead, before the store it should see (grader.worker.pipelining)
    "cheating/p03_running_sum_in_z_pipelined.py": ("race", "which it stored in the same launch before this load, "
                                                           "and the GPU compiler makes this load asynchronous"),
    "cheating/p17_borrows_o_as_scratch.py": ("input_modified", "an input is no scratch space, even where the kernel "
                                                               "puts its values back"),
    # a row written with an atomic exchange and read back by other lanes of the program, with no barrier: an
    # atomic's elements are stores of unknown values to the lane check
    "cheating/p02_reads_back_an_atomic_exchange.py": ("race", "which another lane of the same program stored (with "
                                                              "tl.store or an atomic)"),
    # kernels that relied on the interpreter running a launch's programs in id order (issue 26, trust): tickets from
    # tl.atomic_add taken to follow the program ids, and sums read through atomics assuming the lower ids are done.
    # The grader runs them in a drawn order, never the ids' (grader.worker.program_order)
    "cheating/p07_tickets_follow_ids.py": ("mismatch", "elements of out wrong"),
    "cheating/p07_lower_ids_are_done.py": ("mismatch", "elements of out wrong"),
    # the nineteenth review: what the GPU build differs in from the interpreter's run. A parameter's dtype
    # annotation (the launcher passes N0 as int8; y read as float16 halves), a debug build's checks (a failing
    # tl.device_assert or int32 overflow stops a GPU kernel), and a tensor's address read as a number
    "cheating/p01_length_as_int8.py": ("error", "the annotation `N0: tl.int8`: a parameter is annotated tl.constexpr "
                                                "or not at all"),
    "cheating/p01_y_read_as_halves.py": ("error", "the annotation `y_ptr: tl.pointer_type(tl.float16)`"),
    "cheating/p01_debug_build_overflows.py": ("error", "int32 overflow detected for operation mul: a check of the "
                                                       "kernel's debug build failed"),
    "wrong/p01_debug_assert_that_fails.py": ("error", "only the first block may run: a check of the kernel's debug "
                                                      "build failed"),
    "cheating/p01_address_tells_the_device.py": ("error", "a pointer cast to an integer (or an integer to a pointer)"),
    # the twentieth review: a combine function's Python numbers (the interpreter ran a tl.reduce / tl.associative_scan
    # combine as raw Python: 65536 * 65536 was 2**32, an int32 0 on a GPU), and an 8-byte load at a 4-byte offset
    "cheating/p03_combine_wraps_on_the_gpu.py": ("error", "tl.reduce with your combine function gives another result"),
    "cheating/p03_scan_combine_wraps_on_the_gpu.py": ("mismatch", "4 of 4 elements of z wrong"),
    "cheating/p01_reads_x_as_unaligned_int64.py": ("error", "a load of 8-byte values at byte offsets into x (passed as "
                                                            "x_ptr) that are not multiples of 8"),
}
