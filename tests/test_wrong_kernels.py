"""Known-wrong kernels are rejected, each for the right reason.

Most wrong kernels are mutations of a reference solution: one classic mistake, written as a text
replacement on the solution's source. If a solution changes so that a mutation no longer applies,
the test fails loudly instead of silently testing nothing. Kernels that are not small edits of a
solution live in tests/kernels/wrong/.

A submission is graded kernel-only (its kernels under the puzzle's own launcher), so a mistake in the launcher,
or in a path only a changed launcher takes, is a practice-path test (`own_launcher=True`); graded kernel-only,
the same file passes on its kernels, with a note that its launcher was not the one graded.
"""

import pytest
from helpers import (
    KERNELS,
    Mutation,
    beyond_text,
    failed_case,
    grade_file,
    grade_text,
    lesson_text,
    rejected_case,
    report,
    requires_interpreter,
    solution_text,
)

from grader.course import registry
from grader.judge.submission import OWN_LAUNCHER_NOTE

pytestmark = requires_interpreter


MUTATIONS = [
    # puzzle 1
    Mutation(1, "a libdevice call the interpreter cannot run", "tl.store(z_ptr + offsets, x + y, mask=mask)",
             "tl.store(z_ptr + offsets, libdevice.fma(x, tl.full([B0], 1.0, tl.float32), y), mask=mask)", "error",
             "this tl.extra.libdevice function compiles for a GPU, but triton's interpreter cannot run it",
             also=(("import triton.language as tl\n", "import triton.language as tl\nfrom triton.language.extra import "
                    "libdevice\n"),)),
    Mutation(1, "missing mask", "mask = offsets < N0", "mask = offsets >= 0", "out_of_bounds",
             "out-of-bounds load on x"),
    Mutation(1, "off-by-one mask", "mask = offsets < N0", "mask = offsets <= N0", "out_of_bounds",
             "1 of 9 unmasked lanes outside it (offsets 200; valid 0..199)"),
    Mutation(1, "writes only the first block", "pid = tl.program_id(0)", "pid = tl.program_id(0) * 0",
             "race", "stored the very same elements of z (from z[0] on): every program works on the same block"),
    Mutation(1, "block size baked into the kernel", "offsets = pid * B0 + tl.arange(0, B0)",
             "offsets = pid * 32 + tl.arange(0, 32)", "never_written",
             "each program wrote 32 elements where its block is B0 = 128: a block size is written into the kernel"),
    Mutation(1, "block start without * B0", "offsets = pid * B0 + tl.arange(0, B0)", "offsets = pid + tl.arange(0, B0)",
             "race", "and it is 32 elements wide: the blocks overlap"),  # between whichever neighbours ran first
    Mutation(1, "stores into an input", "tl.store(z_ptr + offsets", "tl.store(x_ptr + offsets", "bad_output",
             "no kernel stored into z in this case (they stored into x only)"),
    Mutation(1, "writes into an input as well", "tl.store(z_ptr + offsets, x + y, mask=mask)",
             "tl.store(z_ptr + offsets, x + y, mask=mask)\n    tl.store(x_ptr + offsets, x * 0, mask=mask)",
             "input_modified", "changed the input x"),
    Mutation(1, "launcher computes in PyTorch", "    return z\n", "    return x + y\n", "launcher",
             "computed `aten.add` with PyTorch", own_launcher=True),
    Mutation(1, "float64 output", "z = torch.empty_like(x)", "z = torch.empty_like(x, dtype=torch.float64)",
             "bad_output", "dtype torch.float64", own_launcher=True),
    Mutation(1, "output of the wrong shape", "z = torch.empty_like(x)",
             "z = torch.empty(x.numel() + 1, device=x.device)", "bad_output", "shape", own_launcher=True),
    Mutation(1, "a Python error in the kernel", "x = tl.load(x_ptr + offsets, mask=mask)",
             "x = tl.load(x_ptr + offsets, mask=mask) + undefined_name", "error", "undefined_name"),
    Mutation(1, "float16 store through a float16 pointer", "tl.store(z_ptr + offsets, x + y, mask=mask)",
             "tl.store(z_ptr.to(tl.pointer_type(tl.float16)) + offsets, (x + y).to(tl.float16), mask=mask)",
             "mismatch", "stored through a float16 pointer"),
    Mutation(1, "sum rounded to float16", "tl.store(z_ptr + offsets, x + y, mask=mask)",
             "tl.store(z_ptr + offsets, (x + y).to(tl.float16), mask=mask)", "mismatch",
             "z holds the sums rounded to float16"),
    Mutation(1, "int16 offsets overflow", "offsets = pid * B0 + tl.arange(0, B0)",
             "offsets = (pid * B0 + tl.arange(0, B0)).to(tl.int16)", "out_of_bounds",
             "the offsets wrapped around at 32768: an int16 offset overflowed"),
    Mutation(1, "Python if on a block around a load", "    x = tl.load(x_ptr + offsets, mask=mask)\n",
             "    x = tl.zeros([B0], dtype=tl.float32)\n    if offsets < N0:\n        x = tl.load(x_ptr + offsets)\n",
             "gpu_compile", "To load or store only some lanes, give the condition as the access's mask="),
    # puzzle 2
    Mutation(2, "tile assumes B0 = B1", "rows = tl.program_id(1) * B1 + tl.arange(0, B1)",
             "rows = tl.program_id(1) * B0 + tl.arange(0, B0)", "never_written", "the tile assumes B0 = B1"),
    Mutation(2, "grid axes crossed", "cols = tl.program_id(0) * B0", "cols = tl.program_id(1) * B0",
             "never_written", "the grid's axes are crossed",
             also=(("rows = tl.program_id(1) * B1", "rows = tl.program_id(0) * B1"),)),
    Mutation(2, "tile mask on the wrong axes", "mask = (rows[:, None] < N1) & (cols[None, :] < N0)",
             "mask = (rows[:, None] < N0) & (cols[None, :] < N1)", "out_of_bounds",
             "mask every dimension, e.g. (rows[:, None] < N1) & (cols[None, :] < N0)"),
    Mutation(2, "y's mask on the wrong axis", "y = tl.load(y_ptr + rows, mask=rows < N1)",
             "y = tl.load(y_ptr + rows, mask=rows < N0)", "out_of_bounds",
             "this mask compares with N0, but y holds N1 elements"),
    Mutation(2, "masks combined with Python's and", "mask = (rows[:, None] < N1) & (cols[None, :] < N0)",
             "mask = (rows[:, None] < N1) and (cols[None, :] < N0)", "gpu_compile", "Use `&` on boolean blocks"),
    Mutation(2, "wrong row stride, right mask", "tl.store(z_ptr + rows[:, None] * N0 + cols[None, :]",
             "tl.store(z_ptr + rows[:, None] * (N0 + 1) + cols[None, :]", "out_of_bounds",
             "neighbouring lanes of this block are 51 elements apart, but z ([N1, N0] = [40, 50], row-major) has "
             "its rows 50 apart"),
    Mutation(2, "row stride N1 instead of N0", "tl.store(z_ptr + rows[:, None] * N0",
             "tl.store(z_ptr + rows[:, None] * N1",
             "race", "the rows of this block lie N1 = 40 elements apart, but z ([40, 50], row-major) has rows of N0 = "
             "50 elements: row j starts at j * N0"),
    Mutation(2, "transposed output indexing", "tl.store(z_ptr + rows[:, None] * N0 + cols[None, :]",
             "tl.store(z_ptr + cols[None, :] * N1 + rows[:, None]", "mismatch", "transposed"),
    Mutation(2, "missing row mask", "mask = (rows[:, None] < N1) & (cols[None, :] < N0)",
             "mask = cols[None, :] < N0", "out_of_bounds", "out-of-bounds store on z"),
    Mutation(2, "program ids swapped", "cols = tl.program_id(0) * B0", "cols = tl.program_id(1) * B0",
             "race", "stored the very same elements of z (from z["),  # whichever pair ran first
    # puzzle 3
    Mutation(3, "sums only the first block", "for start in tl.range(0, T, B1):", "for start in tl.range(0, B1, B1):",
             "mismatch", "only the first block"),
    Mutation(3, "padding loads 1 instead of 0", "other=0.0", "other=1.0", "mismatch", "load them with other=0.0"),
    Mutation(3, "masked load without other=", "mask=mask, other=0.0)", "mask=mask)", "mismatch",
             "a masked load without other="),
    Mutation(3, "the output read as the sum's start", "acc = tl.zeros([B0], dtype=tl.float32)",
             "acc = tl.load(z_ptr + rows, mask=row_ok)", "mismatch",
             "an output has no values until a kernel stores them"),
    Mutation(3, "sum along the wrong axis", "tl.sum(tile, axis=1)", "tl.sum(tile, axis=0)", "gpu_compile",
             "check the axis of tl.sum"),
    Mutation(3, "row offset forgets the row length", "rows[:, None] * T + cols[None, :]",
             "rows[:, None] + cols[None, :]", "mismatch", "must start at r * T"),
    Mutation(3, "wrong row stride, right mask", "rows[:, None] * T + cols[None, :]",
             "rows[:, None] * (T + 1) + cols[None, :]", "out_of_bounds",
             "check the stride you multiply the row index by"),
    Mutation(3, "loop stops one block short", "for start in tl.range(0, T, B1):",
             "for start in tl.range(0, T - B1, B1):", "mismatch", "each row's sum misses its last block"),
    Mutation(3, "one row per program, B0 ignored", "rows = tl.program_id(0) * B0 + tl.arange(0, B0)",
             "rows = tl.program_id(0) + tl.zeros([B0], dtype=tl.int32)", "never_written",
             "each program wrote one element: a program owns a block of B0"),
    Mutation(3, "= where += was meant", "acc += tl.sum(tile, axis=1)", "acc = tl.sum(tile, axis=1)", "mismatch",
             "each row's sum is its last block's alone"),
    Mutation(3, "a float16 accumulator", "acc = tl.zeros([B0], dtype=tl.float32)",
             "acc = tl.zeros([B0], dtype=tl.float16)", "gpu_compile",
             "`acc` starts as float16 and becomes float32 in the loop"),
    Mutation(3, "torch.zeros in a kernel", "acc = tl.zeros([B0], dtype=tl.float32)",
             "acc = torch.zeros([B0], dtype=torch.float32)", "error",
             "the name torch: torch runs on the host, not in a kernel: use triton.language's own, e.g. tl.zeros("),
    # puzzle 4
    Mutation(4, "tl.exp2 without log2(e)", "(x - m) * LOG2E", "(x - m)", "mismatch",
             "the weights are 2^(x - m): tl.exp2 takes its argument in log2 units", count=-1),
    Mutation(4, "no max subtraction", "(x - m) * LOG2E", "x * LOG2E", "mismatch",
             "exp(x) overflowed float32 (above x = 88): subtract the row's max", count=-1),
    Mutation(4, "max subtracted after the log2 scaling", "(x - m) * LOG2E", "x * LOG2E - m", "mismatch",
             "the max was subtracted in other units than x", count=-1),
    Mutation(5, "max subtracted after the log2 scaling", "tl.exp2((x - new_max[:, None]) * LOG2E)",
             "tl.exp2(x * LOG2E - new_max[:, None])", "mismatch",
             "the max was subtracted in other units than x",
             also=(("tl.exp2((x - row_max[:, None]) * LOG2E)", "tl.exp2(x * LOG2E - row_max[:, None])"),)),
    Mutation(4, "rows B1 apart", "rows[:, None] * T + cols[None, :]", "rows[:, None] * B1 + cols[None, :]", "race",
             "the rows of this block lie B1 = 32 elements apart, but z ([4, 200], row-major) has rows of T = 200 "
             "elements", count=-1),
    Mutation(4, "padded lanes counted in the sum",
             'other=float("-inf"),\n                    eviction_policy="evict_last")\n        denominator',
             'other=0.0,\n                    eviction_policy="evict_last")\n        denominator', "mismatch",
             "padded lanes of the last block count as zeros"),
    Mutation(5, "padded lanes load 0",
             'other=float("-inf"),\n                    eviction_policy="evict_last")\n        new_max',
             'other=0.0,\n                    eviction_policy="evict_last")\n        new_max',
             "mismatch", "padded lanes of the last block count as zeros"),
    Mutation(4, "running max started at 0", 'row_max = tl.full([B0], float("-inf"), dtype=tl.float32)',
             "row_max = tl.zeros([B0], dtype=tl.float32)", "mismatch", "Start the max at -inf"),
    Mutation(4, "missing column mask", "mask = row_ok[:, None] & (cols[None, :] < T)", "mask = row_ok[:, None]",
             "out_of_bounds", "out-of-bounds load on x", count=-1),
    Mutation(4, "writes only the first block of each row",
             "    for start in tl.range(0, T, B1):\n        cols = start + tl.arange(0, B1)\n"
             "        mask = row_ok[:, None] & (cols[None, :] < T)\n        x = tl.load(x_ptr + rows[:, None] * T + "
             'cols[None, :], mask=mask, eviction_policy="evict_first")\n',
             "    for start in tl.range(0, B1, B1):\n        cols = start + tl.arange(0, B1)\n"
             "        mask = row_ok[:, None] & (cols[None, :] < T)\n        x = tl.load(x_ptr + rows[:, None] * T + "
             'cols[None, :], mask=mask, eviction_policy="evict_first")\n', "never_written",
             "never written (missing tl.store or mask?)"),
    # puzzle 5
    Mutation(5, "running sum not rescaled", "denominator = denominator * tl.exp2((row_max - new_max) * LOG2E) \\",
             "denominator = denominator \\", "mismatch", "the running sum is not rescaled"),
    Mutation(5, "missing column mask", "mask = row_ok[:, None] & (cols[None, :] < T)", "mask = row_ok[:, None]",
             "out_of_bounds", "out-of-bounds load on x", count=-1),
    Mutation(5, "block terms against the old max", "tl.sum(tl.exp2((x - new_max[:, None]) * LOG2E), axis=1)",
             "tl.sum(tl.exp2((x - row_max[:, None]) * LOG2E), axis=1)", "mismatch",
             "this block's terms were taken against the old max"),
    Mutation(5, "tl.max where tl.maximum was meant", "new_max = tl.maximum(row_max,", "new_max = tl.max(row_max,",
             "gpu_compile", "use tl.maximum(a, b)"),
    Mutation(5, "a misspelt tl function", "new_max = tl.maximum(row_max,", "new_max = tl.maxmimum(row_max,",
             "gpu_compile", "did you mean tl.maximum?"),
    Mutation(5, "max of the block only", "new_max = tl.maximum(row_max, tl.max(x, axis=1))",
             "new_max = tl.max(x, axis=1)", "mismatch", "m_new = tl.maximum(m, tl.max(x, axis=1))"),
    Mutation(5, "rescale factor flipped", "tl.exp2((row_max - new_max) * LOG2E)",
             "tl.exp2((new_max - row_max) * LOG2E)", "mismatch", "the rescale factor is flipped"),
    Mutation(5, "if on a tile", "        new_max = tl.maximum(row_max, tl.max(x, axis=1))\n",
             "        new_max = tl.maximum(row_max, tl.max(x, axis=1))\n        if x > 0:\n"
             "            new_max = new_max + 0.0\n", "gpu_compile",
             "a Python `if`, `while`, `and`, `or` or `not` on a block asks for one truth value of many lanes"),
    # puzzle 6
    Mutation(6, "v loaded without other=", "v = tl.load(v_ptr + keys, mask=key_ok, other=0.0)",
             "v = tl.load(v_ptr + keys, mask=key_ok)", "mismatch",
             "NaN from an undefined lane: a masked load without other= fed this output"),
    Mutation(6, "rescale factor flipped", "alpha = tl.exp2(running_max - new_max)",
             "alpha = tl.exp2(new_max - running_max)", "mismatch", "the rescale factor is flipped"),
    Mutation(6, "sums not rescaled", "alpha = tl.exp2(running_max - new_max)", "alpha = 1.0", "mismatch",
             "the running sums are not rescaled"),
    Mutation(6, "padded keys not masked to -inf",
             'scores = tl.where(key_ok[:, None], k[:, None] * q[None, :], float("-inf"))',
             "scores = k[:, None] * q[None, :]", "mismatch", "padded keys count in the sums"),
    Mutation(6, "no running max", "new_max = tl.maximum(running_max, tl.max(scores, axis=0))",
             "new_max = running_max * 0.0", "mismatch", "NaN or inf"),
    Mutation(6, "only the denominator rescaled", "acc = acc * alpha +", "acc = acc +", "mismatch",
             "the denominator d is, acc is not"),
    Mutation(6, "weights normalised per tile", "        weights = tl.exp2(scores - new_max[None, :])\n",
             "        weights = tl.exp2(scores - new_max[None, :])\n"
             "        weights = weights / tl.sum(weights, axis=0)[None, :]\n", "mismatch",
             "each tile's weights were divided by that tile's own sum",
             also=(("tl.store(z_ptr + queries, acc / denominator",
                    "tl.store(z_ptr + queries, acc + 0 * denominator"),)),
    Mutation(6, "one query per program", "queries = tl.program_id(0) * B0 + tl.arange(0, B0)",
             "queries = tl.program_id(0) + tl.zeros([B0], dtype=tl.int32)", "never_written",
             "each program wrote one element: a program owns a block of B0"),
    # puzzle 7
    Mutation(7, "forgot the epsilon", "num / (den[:, :, None] + EPS)", "num / den[:, :, None]", "mismatch",
             "the denominator lacks its + 1e-6"),
    Mutation(7, "plain add instead of an atomic",
             'tl.atomic_add(out_ptr + target, values, mask=tile_mask, sem="relaxed")',
             "tl.store(out_ptr + target, tl.load(out_ptr + target, mask=tile_mask) + values, mask=tile_mask)",
             "race", "tl.atomic_add"),
    Mutation(7, "wrong row stride, right mask", "tile = edges[:, None, None] * (H * D) +",
             "tile = edges[:, None, None] * (H_PAD * D_PAD) +", "out_of_bounds",
             "v_scaled ([E, H, D] = [685, 3, 20], row-major) has its rows 60 apart"),
    Mutation(7, "COO rows taken by destination", "tile = edges[:, None, None] * (H * D) +",
             "tile = dst[:, None, None] * (H * D) +", "mismatch",
             "edge e's features were read at row dst[e], its destination"),
    # puzzle 8
    Mutation(8, "forgot the epsilon", "num / (den[:, None] + 1e-6)", "num / den[:, None]", "mismatch",
             "the denominator lacks its + 1e-6"),
    Mutation(8, "off by one at the column-pointer end", "end = tl.load(col_ptr_ptr + node + 1)",
             "end = tl.load(col_ptr_ptr + node + 1) + 1", "out_of_bounds",
             "out-of-bounds load on edge_id"),
    Mutation(8, "ignores edge_id", "edges = tl.load(edge_id_ptr + slots, mask=slot_ok, other=0)", "edges = slots",
             "mismatch", "edge features were read in slot order"),
    Mutation(8, "atomics", "            tl.store(out_ptr + node * (H * D) + row,",
             "            tl.store(out_ptr + node * (H * D) + row, num * 0.0, mask=feature_mask)  # zeroed, then\n"
             "            tl.atomic_add(out_ptr + node * (H * D) + row,", "budget", "atomics on out"),
    # puzzle 9
    Mutation(9, "weights read by neighbour, not by slot", "edge_weight_ptr + slots[:, None] * H",
             "edge_weight_ptr + neighbours[:, None] * H", "mismatch", "its rows are by slot"),
    # puzzle 10
    Mutation(10, "clip applied after the sum only", "e_out = tl.clamp(k * q[None, :, :], -5.0, 5.0) * e",
             "e_out = k * q[None, :, :] * e", "mismatch", "per-feature clip"),
    Mutation(10, "e_out stored before its clip (h right)",
             "tl.store(e_out_ptr + edges[:, None, None] * (H * D) + row[None, :, :], e_out, mask=tile_mask)",
             "tl.store(e_out_ptr + edges[:, None, None] * (H * D) + row[None, :, :], k * q[None, :, :] * e, "
             "mask=tile_mask)", "mismatch", "e_out is not clipped per feature"),
    Mutation(10, "no clip at all", "e_out = tl.clamp(k * q[None, :, :], -5.0, 5.0) * e",
             "e_out = k * q[None, :, :] * e", "mismatch", "shows in the case 'clip per feature'",
             also=(("logits = tl.clamp(tl.sum(e_out, axis=2), -5.0, 5.0)", "logits = tl.sum(e_out, axis=2)"),)),
    Mutation(10, "masked slots not zeroed after exp",
             "weights = tl.where(slot_ok[:, None] & (heads < H)[None, :], tl.exp(logits), 0.0)",
             "weights = tl.exp(logits)", "mismatch", "each padded slot adds exp(0) = 1"),
    Mutation(10, "e_out written in CSC order", "tl.store(e_out_ptr + edges[:, None, None]",
             "tl.store(e_out_ptr + slots[:, None, None]", "mismatch", "e_out is in slot (CSC) order"),
    Mutation(10, "forgot the epsilon", "numerator / (denominator[:, None] + 1e-6)", "numerator / denominator[:, None]",
             "mismatch", "the denominator lacks its + 1e-6"),
    Mutation(10, "e read by source node", "e = tl.load(e_ptr + edges[:, None, None]",
             "e = tl.load(e_ptr + sources[:, None, None]", "mismatch",
             "e was read at the row of the edge's source node (row_idx[s])"),
    # puzzle 11
    Mutation(11, "drops the last partial K step", "for k in tl.range(0, K, BK):",
             "for k in tl.range(0, K // BK * BK, BK):", "mismatch", "the last, partial step along K is missing"),
    Mutation(11, "partial K step on CUDA cores", "    for k in tl.range(0, K, BK):",
             "    whole = K // BK * BK\n    for k in tl.range(0, whole, BK):", "budget",
             "every step along K, the last, partial one too",
             also=(("    c_desc.store(", "    if whole < K:\n"
                    "        a = a_desc.load([pid_m * BM, whole]).to(tl.float32)\n"
                    "        b = b_desc.load([whole, pid_n * BN]).to(tl.float32)\n"
                    "        acc += tl.sum(a[:, :, None] * b[None, :, :], axis=1)\n    c_desc.store("),)),
    Mutation(11, "persistent: bands start at band, not band * GROUP_M", "first_row_block = band * GROUP_M",
             "first_row_block = band", "race", "both wrote c[", beyond=True,  # band 1 redoes row block 1's tiles
             own_launcher=True),
    Mutation(11, "persistent: the last tile dropped", "tl.cdiv(M, BM) * tl.cdiv(N, BN), tl.num_programs(0)):",
             "tl.cdiv(M, BM) * tl.cdiv(N, BN) - 1, tl.num_programs(0)):", "never_written", "never written",
             beyond=True, own_launcher=True),
    Mutation(11, "float16 accumulator", "acc = tl.zeros([BM, BN], dtype=tl.float32)",
             "acc = tl.zeros([BM, BN], dtype=tl.float16)", "error",
             "tl.dot sums its products in float16 (out_dtype=float16, or a float16 acc). Sum in float32",
             also=(("acc = tl.dot(a, b, acc)", "acc += tl.dot(a, b, out_dtype=tl.float16)"),)),
    Mutation(11, "K step of 8", "for k in tl.range(0, K, BK):", "for k in tl.range(0, K, 8):", "gpu_compile",
             "on the GPU every dimension of tl.dot must be at least 16",
             also=(("block_shape=[BM, BK]", "block_shape=[BM, 8]"), ("block_shape=[BK, BN]", "block_shape=[8, BN]"))),
    Mutation(11, "descriptor with a wrong row stride", "a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], "
             "strides=[K, 1]", "a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K + 8, 1]",
             "out_of_bounds", "check the strides this tensor descriptor was made with"),
    Mutation(11, "b described column-major", "shape=[K, N], strides=[N, 1], block_shape=[BK, BN])",
             "shape=[N, K], strides=[K, 1], block_shape=[BN, BK])", "mismatch",
             "b was read as if column-major (or as b^T): it is K x N and row-major",
             also=(("b = b_desc.load([k, pid_n * BN])", "b = tl.trans(b_desc.load([pid_n * BN, k]))"),)),
    Mutation(11, "b descriptor with strides [1, K]", "shape=[K, N], strides=[N, 1], block_shape=[BK, BN])",
             "shape=[K, N], strides=[1, K], block_shape=[BK, BN])", "gpu_compile",
             "Where the line makes a tensor descriptor, that error is its strides: the last must be 1"),
    # puzzle 12
    Mutation(12, "tl.exp2 without log2(e)", "* (scale * LOG2E)", "* scale", "mismatch",
             "the weights are 2^s: tl.exp2 takes scores in log2 units"),
    Mutation(12, "sums not rescaled", "acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])",
             "acc = tl.dot(p.to(v.dtype), v, acc)", "mismatch", "the sums are not rescaled",
             also=(("total = total * alpha +", "total = total +"),)),
    Mutation(12, "acc not rescaled", "acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])",
             "acc = tl.dot(p.to(v.dtype), v, acc)", "mismatch", "multiply l and acc by exp(m - m')"),
    Mutation(12, "p left float32 in the second dot", "acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])",
             "acc = tl.dot(p, v, acc * alpha[:, None])", "gpu_compile", "cast one, e.g. tl.dot(p.to(v.dtype), v)"),
    Mutation(12, "weights normalised per tile", "        p = tl.exp2(scores - new_max[:, None])\n",
             "        p = tl.exp2(scores - new_max[:, None])\n        p = p / tl.sum(p, axis=1)[:, None]\n", "mismatch",
             "each tile's weights were divided by that tile's own sum"),
    Mutation(12, "weights normalised per tile, no division at the end",
             "        p = tl.exp2(scores - new_max[:, None])\n",
             "        p = tl.exp2(scores - new_max[:, None])\n        p = p / tl.sum(p, axis=1)[:, None]\n", "mismatch",
             "each tile's weights were divided by that tile's own sum",
             also=(("acc / total[:, None], mask=query_ok", "acc, mask=query_ok"),)),
    Mutation(12, "scale missing", "* (scale * LOG2E)", "* LOG2E", "mismatch", "the scores miss the 1 / sqrt(D) scale"),
    Mutation(12, "padded keys score 0", 'scores = tl.where(key_ok[None, :], scores, float("-inf"))\n        new_max',
             "new_max", "mismatch", "keys past T count in the sums"),
    Mutation(12, "p v on CUDA cores", "acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])",
             "acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * v.to(tl.float32)[None, :, :], axis=1)", "budget",
             "tl.dot did 62% of the multiply-adds (655360 of 2*N*T*D (N rounded up to whole BQ blocks) = 1064960, "
             "in 20 calls)"),
    Mutation(12, "acc kept in float16", "acc = tl.zeros([BQ, D], dtype=tl.float32)",
             "acc = tl.zeros([BQ, D], dtype=tl.float16)", "gpu_compile",
             "`acc` starts as float16 and becomes float32 in the loop"),
    # puzzle 13
    Mutation(13, "acc summed in float16", "acc = tl.zeros([16, D], dtype=tl.float32)",
             "acc = tl.zeros([16, D], dtype=tl.float16)", "error",
             "a running sum of tl.dot results is kept in float16. Sum in float32",
             also=(("acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])",
                    "acc = (acc * alpha[:, None]).to(tl.float16) + tl.dot(p.to(v.dtype), v).to(tl.float16)"),)),
    Mutation(13, "running max started at 0", 'running_max = tl.full([16], float("-inf"), dtype=tl.float32)',
             "running_max = tl.zeros([16], dtype=tl.float32)", "mismatch", "Start the running max at -inf"),
    Mutation(13, "mask applied after the max",
             'scores = tl.where(edge, scores, float("-inf"))  # before the max: non-edges may score high\n'
             "        new_max = tl.maximum(running_max, tl.max(scores, axis=1))",
             "new_max = tl.maximum(running_max, tl.max(scores, axis=1))\n"
             '        scores = tl.where(edge, scores, float("-inf"))', "mismatch",
             "set non-edges to -inf before the max"),
    Mutation(13, "two TCBs per step: mask applied after the max",
             'scores = tl.where(edge, scores, float("-inf"))\n'
             "        new_max = tl.maximum(running_max, tl.max(scores, axis=1))",
             "new_max = tl.maximum(running_max, tl.max(scores, axis=1))\n"
             '        scores = tl.where(edge, scores, float("-inf"))', "mismatch",
             "set non-edges to -inf before the max", beyond=True, own_launcher=True),
    Mutation(13, "two TCBs per step: a window's last, odd TCB dropped", "for tcb in tl.range(first, last, 2):",
             "for tcb in tl.range(first, last - 1, 2):", "mismatch", "elements of o wrong", beyond=True,
             own_launcher=True),
    Mutation(13, "mask applied after the exp",
             'scores = tl.where(edge, scores, float("-inf"))  # before the max: non-edges may score high\n'
             "        new_max", "new_max", "mismatch", "set non-edges to -inf before the max",
             also=(("p = tl.exp2(scores - base[:, None])",
                    "p = tl.where(edge, tl.exp2(scores - base[:, None]), 0.0)"),)),
    Mutation(13, "acc not rescaled", "acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])",
             "acc = tl.dot(p.to(v.dtype), v, acc)", "mismatch", "the sums are not rescaled"),
    Mutation(13, "scale missing", "* (scale * LOG2E)", "* LOG2E", "mismatch", "the scores miss the 1 / sqrt(D) scale"),
    Mutation(13, "one program per non-empty window counted on the host, window_order ignored",
             "window = tl.load(window_order_ptr + tl.program_id(0))", "window = tl.program_id(0)", "launcher",
             "computed `aten.gt` with PyTorch",
             also=(("windows = window_order.numel()", "windows = int((window_ptr[1:] > window_ptr[:-1]).sum())"),),
             own_launcher=True),
    Mutation(13, "a score of exactly 0 taken for no edge", 'scores = tl.where(edge, scores, float("-inf"))',
             'scores = scores * edge.to(tl.float32)\n        scores = tl.where(scores != 0.0, scores, float("-inf"))',
             "mismatch", "a score of 0 is a real score"),
    Mutation(13, "keys gathered by slot", "k = tl.load(k_ptr + cols[:, None] * D",
             "k = tl.load(k_ptr + slots[:, None] * D", "mismatch", "k was gathered by slot (node c for slot c)"),
    Mutation(13, "non-edges scored 0, a score of 0 taken for no edge",
             'scores = tl.where(edge, scores, float("-inf"))  # before the max: non-edges may score high',
             "scores = tl.where(edge, scores, 0.0)", "mismatch",
             "a 0 took part in the max",
             also=(("p = tl.exp2(scores - base[:, None])",
                    "p = tl.where(scores == 0.0, 0.0, tl.exp2(scores - base[:, None]))"),)),
    Mutation(13, "0 / 0 on a row with no neighbour", "out = acc / tl.where(total > 0, total, 1.0)[:, None]",
             "out = acc / total[:, None]", "mismatch", "or a 0/0?"),
    Mutation(13, "no finite stand-in for a max of -inf", 'base = tl.where(new_max == float("-inf"), 0.0, new_max)',
             "base = new_max", "mismatch", "all of them NaN or inf"),
    # issue 26, class 2: the product on CUDA cores beside a pair of tl.dots that cancel (d1 - d2 / 2, d2 = tl.dot(a,
    # 2 b)), live q k^T on another line: dot_shadows' groups of lines
    Mutation(13, "p v on CUDA cores beside a cancelling pair of tl.dots",
             "acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])",
             "p16 = p.to(v.dtype)\n"
             "        pair = tl.dot(p16, v) - tl.dot(p16, (v.to(tl.float32) * 2).to(v.dtype)) * 0.5\n"
             "        acc = acc * alpha[:, None] + tl.sum(p16.to(tl.float32)[:, :, None] * "
             "v.to(tl.float32)[None, :, :], axis=1) + pair", "budget",
             "cancelled (d - d: what is stored does not move"),
    # puzzle 14
    Mutation(14, "Δ left out", "y * (dy - delta[:, None])", "y * dy", "mismatch", "Δ is missing"),
    Mutation(14, "dx without its factor y", "y * (dy - delta[:, None])", "dy - delta[:, None]", "mismatch",
             "dx is dy - Δ: the factor y is missing"),
    Mutation(14, "lanes past the row's end loaded as 1 in the Δ loop",
             'mask=mask, other=0.0, eviction_policy="evict_last")',
             'mask=mask, other=1.0, eviction_policy="evict_last")',
             "mismatch", "Δ is too large by the number of lanes past the row's end", count=2),
    Mutation(14, "Δ not multiplied by y", "y * (dy - delta[:, None])", "y * dy - delta[:, None]", "mismatch",
             "Δ must be multiplied by y too"),
    Mutation(14, "Δ of dy alone", "delta += tl.sum(y * dy, axis=1)", "delta += tl.sum(dy, axis=1)", "mismatch",
             "Δ is the sum of dy alone"),
    Mutation(14, "Δ from the first block", "for start in tl.range(0, T, B1):", "for start in tl.range(0, B1, B1):",
             "mismatch", "Δ covers only the first block"),
    Mutation(14, "one loop: each block's dx from the Δ so far", "delta += tl.sum(y * dy, axis=1)\n",
             "delta += tl.sum(y * dy, axis=1)\n"
             "        tl.store(dx_ptr + offsets, y * (dy - delta[:, None]), mask=mask)\n", "mismatch",
             "Δ needs the whole row",
             also=(('tl.store(dx_ptr + offsets, y * (dy - delta[:, None]), mask=mask, eviction_policy="evict_first")',
                    "pass"),)),
    Mutation(14, "one Δ for a program's rows", "delta += tl.sum(y * dy, axis=1)", "delta += tl.sum(y * dy)",
             "mismatch", "one Δ was shared by a program's B0 rows"),
    Mutation(14, "row stride B1 instead of T", "row_start = rows.to(tl.int64) * T",
             "row_start = rows.to(tl.int64) * B1",
             "race", "the rows of this block lie B1 = 32 elements apart, but dx ([4, 200], row-major) has rows of "
             "T = 200 elements: row j starts at j * T"),
    Mutation(14, "sign flipped", "y * (dy - delta[:, None])", "y * (delta[:, None] - dy)", "mismatch",
             "dx has the wrong sign"),
    Mutation(14, "masked load without other=", 'y = tl.load(y_ptr + offsets, mask=mask, other=0.0, '
             'eviction_policy="evict_last")', 'y = tl.load(y_ptr + offsets, mask=mask, eviction_policy="evict_last")',
             "mismatch", "a masked load without other="),
    Mutation(14, "missing column mask", "mask = row_ok[:, None] & (cols[None, :] < T)", "mask = row_ok[:, None]",
             "out_of_bounds", "out-of-bounds load on y", count=-1),
    Mutation(14, "dx rounded to float16", "y * (dy - delta[:, None]), mask=mask",
             "(y * (dy - delta[:, None])).to(tl.float16), mask=mask", "mismatch",
             "your output holds float16 values, each the expected one rounded"),
    # puzzle 15
    Mutation(15, "mean over every row", "tl.maximum(counted, 1).to(tl.float32)", "tl.num_programs(0).to(tl.float32)",
             "mismatch", "not by N0"),
    Mutation(15, "no mean", "tl.load(dloss_ptr) / tl.maximum(counted, 1).to(tl.float32)", "tl.load(dloss_ptr)",
             "mismatch", "the loss is a mean"),
    Mutation(15, "dloss left out", "factor = tl.load(dloss_ptr) /", "factor = 1.0 /", "mismatch", "dloss is left out"),
    Mutation(15, "target's 1 not subtracted", "dx = factor * (p - tl.where(cols == target, 1.0, 0.0))",
             "dx = factor * p", "mismatch", "the target's 1 is not subtracted"),
    Mutation(15, "ignored rows not zeroed", "    factor = tl.where(target == IGNORE_INDEX, 0.0, factor)\n", "",
             "mismatch", "its dx is 0"),
    Mutation(15, "0 / 0 when no row counts", "tl.maximum(counted, 1).to(tl.float32)", "counted.to(tl.float32)",
             "mismatch", "divide by max(n, 1)",
             also=(("factor = tl.where(target == IGNORE_INDEX, 0.0, factor)",
                    "factor = factor * (target != IGNORE_INDEX).to(tl.float32)"),)),
    Mutation(15, "lse in natural units fed to exp2", "p = tl.exp(x - lse)", "p = tl.exp2(x * 1.4426950408889634 - lse)",
             "mismatch", "lse is a natural log. With exp2, multiply both x and lse by log2(e)"),
    Mutation(15, "exp(x) / exp(lse)", "p = tl.exp(x - lse)", "p = tl.exp(x) / tl.exp(lse)", "mismatch",
             "an exp that overflows"),
    Mutation(15, "target's 1 in the block's own column", "tl.where(cols == target, 1.0, 0.0)",
             "tl.where(tl.arange(0, BLOCK_V) == target, 1.0, 0.0)", "mismatch", "compare the global column"),
    Mutation(15, "sign flipped", "dx = factor * (p - tl.where(cols == target, 1.0, 0.0))",
             "dx = factor * (tl.where(cols == target, 1.0, 0.0) - p)", "mismatch", "a sign is flipped"),
    Mutation(15, "missing column mask", "x = tl.load(x_ptr + offsets, mask=col_ok, other=0.0)",
             "x = tl.load(x_ptr + offsets)", "out_of_bounds", "out-of-bounds load on x"),
    # puzzle 16
    Mutation(16, "the clips stop the gradient at exactly +-5", "<= 5.0", "< 5.0", "mismatch",
             "torch's clamp counts the bounds as inside its range", count=-1),
    Mutation(16, "the logit clip's gradient ignored",
             "dlogit = tl.where(tl.abs(logit) <= 5.0, p * (tl.sum(dh[None, :, :] * v, axis=2) - delta[None, :]), 0.0)",
             "dlogit = p * (tl.sum(dh[None, :, :] * v, axis=2) - delta[None, :])", "mismatch",
             "where the logit clip held the logit"),
    Mutation(16, "the feature clip's gradient ignored",
             "dproduct = tl.where(tl.abs(product) <= 5.0, grad * e, 0.0)", "dproduct = grad * e", "mismatch",
             "that feature's gradient is 0",
             also=(("dproduct = tl.where(tl.abs(q * k[None, :, :]) <= 5.0, grad * e, 0.0)", "dproduct = grad * e"),)),
    Mutation(16, "δ left out", "v, axis=2) - delta[None, :])", "v, axis=2))", "mismatch", "dlogit misses δ"),
    Mutation(16, "de from the unclipped product", "grad * clipped", "grad * product", "mismatch",
             "the clipped product, as e_out was made"),
    Mutation(16, "de_out left out", "grad = de_out + dlogit[:, :, None]", "grad = dlogit[:, :, None] + 0.0 * de_out",
             "mismatch", "its gradient de_out reaches e, q and k directly", count=-1),
    Mutation(16, "1/sqrt(D) left out of dq and dk", "dq * scale, mask=feature_mask", "dq, mask=feature_mask",
             "mismatch", "lack the 1/sqrt(D)", also=(("dk * scale, mask=feature_mask", "dk, mask=feature_mask"),)),
    Mutation(16, "p and dlogit stored by slot, read by edge id", "edge_heads = edges[:, None] * H + heads[None, :]",
             "edge_heads = slots[:, None] * H + heads[None, :]", "mismatch",
             "dk and dv read p and dlogit of the wrong edges"),
    Mutation(16, "dk and dv left unwritten where a node sends no edge",
             "            # Written even for a node with no outgoing edge: its dk and dv are 0.\n"
             "            tl.store(dk_ptr + node * (H * D) + row, dk * scale, mask=feature_mask)\n"
             "            tl.store(dv_ptr + node * (H * D) + row, dv, mask=feature_mask)\n",
             "            if end > start:\n"
             "                tl.store(dk_ptr + node * (H * D) + row, dk * scale, mask=feature_mask)\n"
             "                tl.store(dv_ptr + node * (H * D) + row, dv, mask=feature_mask)\n",
             "never_written", "elements of dk never written"),
    Mutation(16, "spare nodes not skipped",
             "if node < N:  # the last program's spare nodes, past N, have nothing to do", "if node >= 0:",
             "out_of_bounds", "out-of-bounds load on col_ptr"),
    Mutation(16, "e read twice in the outgoing pass",
             "                e = tl.load(e_ptr + edge_rows, mask=tile_mask, other=0.0)\n"
             "                de_out = tl.load(de_out_ptr + edge_rows, mask=tile_mask, other=0.0)\n"
             "                edge_heads",
             "                e = tl.load(e_ptr + edge_rows, mask=tile_mask, other=0.0)\n"
             "                e += 0.0 * tl.load(e_ptr + edge_rows, mask=tile_mask, other=0.0)\n"
             "                de_out = tl.load(de_out_ptr + edge_rows, mask=tile_mask, other=0.0)\n"
             "                edge_heads", "budget", "elements of e loaded"),
    Mutation(16, "dk from the node's own k", "dk += tl.sum(dproduct * q, axis=0)",
             "dk += tl.sum(dproduct * k[None, :, :], axis=0)", "mismatch", "dk takes the destination's q"),
    Mutation(16, "dk summed from a float16 start", "dk = tl.zeros([H_PAD, D_PAD], dtype=tl.float32)",
             "dk = tl.zeros([H_PAD, D_PAD], dtype=tl.float16)", "gpu_compile",
             "`dk` starts as float16 and becomes float32 in the loop"),
    # puzzle 17
    Mutation(16, "dv from the source node's own dh",
             "dv += tl.sum(p[:, :, None] * dh, axis=0)",
             "dv += tl.sum(p[:, :, None] * tl.load(dh_ptr + node * (H * D) + row, mask=feature_mask, other=0.0)"
             "[None, :, :], axis=0)", "mismatch", "elements of dv wrong",
             not_said="offset by tl.program_id(0) * B0"),
    Mutation(16, "dk and dv stores swapped", "tl.store(dk_ptr + node * (H * D) + row, dk * scale, mask=feature_mask)",
             "tl.store(dv_ptr + node * (H * D) + row, dk * scale, mask=feature_mask)", "mismatch",
             "your dk holds what dv should, and your dv what dk should: the two are swapped",
             also=(("tl.store(dv_ptr + node * (H * D) + row, dv, mask=feature_mask)",
                    "tl.store(dk_ptr + node * (H * D) + row, dv, mask=feature_mask)"),)),
    Mutation(17, "Δ summed in 16 bits", "tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=1)",
             "tl.sum(o * do, axis=1)", "error", "tl.sum of a float16 block adds in float16. Sum in float32"),
    Mutation(17, "dq summed by float16 dots", "dq = tl.dot(ds.to(k.dtype), k, dq)",
             "dq += tl.dot(ds.to(k.dtype), k, out_dtype=tl.float16)", "error",
             "tl.dot sums its products in float16"),
    Mutation(17, "one Δ per program", "tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=1), mask=query_ok)",
             "tl.sum(o.to(tl.float32) * do.to(tl.float32)), mask=query_ok)", "mismatch",
             "one Δ was shared by a program's BQ queries"),
    Mutation(17, "Δ left out of the key walk", "ds = p * (dp - delta[:, None])", "ds = p * dp", "mismatch",
             "ds misses Δ"),
    Mutation(17, "scale left out of dk", "dk * scale, mask", "dk, mask", "mismatch", "dq and dk lack the scale"),
    Mutation(17, "scale applied twice to dq", "dq * scale, mask", "dq * scale * scale, mask", "mismatch",
             "dq and dk carry the scale twice"),
    Mutation(17, "lse in natural units fed to exp2", "tl.exp2(scores - lse[:, None] * LOG2E)",
             "tl.exp2(scores - lse[:, None])", "mismatch", "lse is a natural log", count=-1),
    Mutation(17, "causal mask aligned top left", "(T - N)", "0", "mismatch", "query i sees key j when j <= i + (T - N)",
             count=-1),
    Mutation(17, "causal mask off by one", "<= queries[:, None] + (T - N)", "< queries[:, None] + (T - N)",
             "mismatch", "the causal mask is off by one", count=-1),
    Mutation(17, "causal flag ignored", "if CAUSAL:", "if False:", "mismatch",
             "with causal set, query i sees only keys j <= i + (T - N)", count=-1),
    Mutation(17, "masked scores set to -inf before exp2: NaN where a query sees no key",
             "p = tl.where(seen, tl.exp2(scores - lse[:, None] * LOG2E), 0.0)",
             'p = tl.exp2(tl.where(seen, scores, float("-inf")) - lse[:, None] * LOG2E)', "mismatch",
             "a query that sees no key has lse = -inf", count=-1),
    Mutation(17, "p left float32 in dv's dot", "tl.trans(p.to(do.dtype))", "tl.trans(p)", "gpu_compile",
             "Both operands must be same dtype. Got fp32 and fp16"),
    Mutation(17, "dq's product on CUDA cores", "dq = tl.dot(ds.to(k.dtype), k, dq)",
             "dq += tl.sum(ds[:, :, None] * k.to(tl.float32)[None, :, :], axis=1)", "budget",
             "float operations ran outside tl.dot against"),  # on "spec", where the floor is met with padding
    Mutation(17, "the key walk starts at query 0 with causal",
             "first = tl.maximum(tl.program_id(0) * BK - (T - N), 0) // BQ * BQ", "first = 0", "budget",
             "each query row once per key block's walk that needs it"),
    Mutation(17, "the query walk runs to the last key with causal",
             "end = tl.minimum((tl.program_id(0) + 1) * BQ + (T - N), T)", "end = T", "budget",
             "each key row once per query block's walk that needs it"),
    Mutation(17, "dv on CUDA cores beside a cancelling pair of tl.dots",
             "dv = tl.dot(tl.trans(p.to(do.dtype)), do, dv)",
             "pt = tl.trans(p.to(do.dtype))\n"
             "        pair = tl.dot(pt, do) - tl.dot(pt, (do.to(tl.float32) * 2).to(do.dtype)) * 0.5\n"
             "        dv += tl.sum(pt.to(tl.float32)[:, :, None] * do.to(tl.float32)[None, :, :], axis=1) + pair",
             "budget", "float operations ran outside tl.dot against"),  # on "spec", before a case the pair fails
    Mutation(17, "keys past T not masked", "seen = query_ok[:, None] & key_ok[None, :]", "seen = query_ok[:, None]",
             "mismatch", "keys past T load as 0, so their score is 0", count=-1),
    Mutation(15, "the factor an integer division",
             "factor = tl.load(dloss_ptr) / tl.maximum(counted, 1).to(tl.float32)",
             "factor = tl.load(dloss_ptr) * (1 // tl.maximum(counted, 1))", "mismatch",
             "every element was stored, and every one is 0: a factor of the result came out 0"),
    # puzzle 18
    Mutation(18, "dv rounded to float16 after each product", "dv = tl.dot(p.to(do.dtype), do, dv)",
             "dv = tl.dot(p.to(do.dtype), do, dv).to(tl.float16).to(tl.float32)", "error",
             "was rounded to 16 bits since the last tl.dot"),
    Mutation(18, "dk summed in float16", "dk = tl.zeros([16, D], dtype=tl.float32)",
             "dk = tl.zeros([16, D], dtype=tl.float16)", "error",
             "a running sum of tl.dot results is kept in float16. Sum in float32",
             also=(("dk = tl.dot(ds.to(q.dtype), q, dk)", "dk += tl.dot(ds.to(q.dtype), q).to(tl.float16)"),)),
    Mutation(18, "Δ left out of the dk/dv kernel", "ds = p * (tl.dot(v, tl.trans(do)) - delta[None, :])",
             "ds = p * tl.dot(v, tl.trans(do))", "mismatch", "ds misses Δ"),
    Mutation(18, "bitmap ignored in the dq kernel", "p = tl.where(edge, tl.exp2(scores - lse[:, None] * LOG2E), 0.0)",
             "p = tl.exp2(scores - lse[:, None] * LOG2E)", "mismatch", "p must be 0 off the bitmap"),
    Mutation(18, "bitmap ignored in the dk/dv kernel",
             "p = tl.where(edge, tl.exp2(scores - lse[None, :] * LOG2E), 0.0)",
             "p = tl.exp2(scores - lse[None, :] * LOG2E)", "mismatch", "in the dk/dv kernel too, p is 0 off"),
    Mutation(18, "scale left out of dk", "dk * scale, mask", "dk, mask", "mismatch", "dq and dk lack the 1 / sqrt(D)"),
    Mutation(18, "lse in natural units fed to exp2", "lse[:, None] * LOG2E)", "lse[:, None])", "mismatch",
             "lse is a natural log", also=(("lse[None, :] * LOG2E)", "lse[None, :])"),)),
    Mutation(18, "dk and dv left unwritten where a key window has no TCB",
             "    # Written even for keys that no query attends to: their dk and dv are 0.\n"
             "    tl.store(dk_ptr + keys[:, None] * D + feats[None, :], dk * scale, mask=key_ok[:, None])\n"
             "    tl.store(dv_ptr + keys[:, None] * D + feats[None, :], dv, mask=key_ok[:, None])",
             "    if last > first:\n"
             "        tl.store(dk_ptr + keys[:, None] * D + feats[None, :], dk * scale, mask=key_ok[:, None])\n"
             "        tl.store(dv_ptr + keys[:, None] * D + feats[None, :], dv, mask=key_ok[:, None])",
             "never_written", "never written", not_said="NaN: a row with no neighbour"),
    Mutation(18, "Δ read but never written", "    tl.store(delta_ptr + rows, delta, mask=row_ok)\n", "", "mismatch",
             "delta is read (3.4x per element) but no kernel stored into it"),
    Mutation(18, "Δ summed over the wrong axis", "delta = tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=1)",
             "delta = tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=0)", "gpu_compile",
             "check the axis of tl.sum / tl.max (axis=1 reduces [B0, B1] to [B0])"),
    Mutation(18, "key bitmap transposed in the dk/dv kernel",
             "edge = ((bits[:, None] >> slots[None, :]) & 1) != 0  # [16 keys",
             "edge = ((bits[None, :] >> slots[:, None]) & 1) != 0  # [16 keys", "mismatch",
             "the transposed BSB's bitmap was read transposed"),
    Mutation(18, "lse gathered by key in the dk/dv kernel", "lse = tl.load(lse_ptr + queries)",
             "lse = tl.load(lse_ptr + keys, mask=key_ok, other=0.0)", "mismatch", "p used the key's own lse",
             also=(("lse[None, :] * LOG2E), 0.0)", "lse[:, None] * LOG2E), 0.0)"),)),
    Mutation(18, "Δ gathered by key in the dk/dv kernel", "delta = tl.load(delta_ptr + queries)",
             "delta = tl.load(delta_ptr + keys, mask=key_ok, other=0.0)", "mismatch", "ds used the key's own Δ",
             also=(("- delta[None, :])", "- delta[:, None])"),)),
    Mutation(18, "dq's product on CUDA cores", "dq = tl.dot(ds.to(k.dtype), k, dq)",
             "dq += tl.sum(ds[:, :, None] * k.to(tl.float32)[None, :, :], axis=1)", "budget", "tl.dot did 8"),
    Mutation(18, "dv on CUDA cores beside a cancelling pair of tl.dots", "dv = tl.dot(p.to(do.dtype), do, dv)",
             "p16 = p.to(do.dtype)\n"
             "        pair = tl.dot(p16, do) - tl.dot(p16, (do.to(tl.float32) * 2).to(do.dtype)) * 0.5\n"
             "        dv += tl.sum(p16.to(tl.float32)[:, :, None] * do.to(tl.float32)[None, :, :], axis=1) + pair",
             "budget", "cancelled (d - d: what is stored does not move"),
    Mutation(18, "q gathered twice in the dk/dv kernel",
             "        do = tl.load(do_ptr + queries[:, None] * D + feats[None, :])\n",
             "        do = tl.load(do_ptr + queries[:, None] * D + feats[None, :])\n"
             "        q += 0.0 * tl.load(q_ptr + queries[:, None] * D + feats[None, :])\n", "budget",
             "elements of q loaded"),
]


@pytest.mark.parametrize("mutation", [m.param() for m in MUTATIONS])
@pytest.mark.slow
def test_mutated_solution_is_rejected_for_the_right_reason(mutation, tmp_path):
    """Kernel-only grading compiles a case's launches for the GPU before the interpreter runs them (grader/worker/
    execute.py, _compiled_first): a mistake both refuse fails there first, as "gpu_compile", with the advice the
    interpreter's error would have had (grader/worker/compiler_advice.py)."""
    rejected_case(mutation, tmp_path)


LAUNCHER_MISTAKES = [m for m in MUTATIONS if m.own_launcher]


@pytest.mark.parametrize("mutation", [m.param() for m in LAUNCHER_MISTAKES])
def test_a_changed_launcher_is_ignored_kernel_only_and_named(mutation, tmp_path):
    """Kernel-only grading runs the file's kernels under the puzzle's launcher: the mistake in the launcher (or in
    the path only it takes) does not count, and the report says the launcher was not the one graded."""
    puzzle = registry.find(mutation.puzzle)
    text = mutation.apply(beyond_text(puzzle) if mutation.beyond else lesson_text(puzzle))
    result = grade_text(puzzle, text, tmp_path)
    assert result.status == "passed", report(result)
    assert OWN_LAUNCHER_NOTE in result.notices, result.notices


@pytest.mark.puzzle5
def test_three_loop_kernel_exceeds_puzzle_5_budget(tmp_path):
    """Puzzle 4's kernel takes puzzle 5's parameters: under its name, it reads x three times."""
    text = solution_text(registry.find(4)).replace("softmax_three_loop_kernel", "softmax_online_kernel")
    result = grade_text(5, text, tmp_path)
    case = failed_case(result)
    assert case.reason == "budget", report(result)
    assert "x read 3.00x" in case.message and "budget is 2x" in case.message


@pytest.mark.puzzle8
def test_a_coo_scan_exceeds_the_csc_index_budget():
    """The O(N x E) scan is stopped as soon as it goes over its index budget, long before any time limit (an
    hour here, so that a busy machine cannot turn the verdict into a timeout)."""
    result = grade_file(8, KERNELS / "wrong" / "p08_coo_scan.py", timeout=3600, first_failure=True)
    case = failed_case(result)
    assert case.reason == "budget", report(result)
    assert "elements of col_ptr, edge_id loaded" in case.message and "the budget is E + 3*N" in case.message
    assert "stopped as soon as it went over budget" in case.message


@pytest.mark.puzzle6
def test_two_pass_attention_exceeds_the_one_pass_budget():
    result = grade_file(6, KERNELS / "wrong" / "p06_two_pass.py", first_failure=True)
    case = failed_case(result)
    assert case.reason == "budget", report(result)
    assert "k read 2.00x per program" in case.message


@pytest.mark.parametrize("puzzle, name, work", [
    pytest.param(11, "p11_cuda_cores.py", "0 of M*N*K (M, N rounded up to whole blocks) = 9830400",
                 marks=pytest.mark.puzzle11, id="p11"),
    pytest.param(13, "p13_cuda_cores.py", "0 of 2*num_tcb*16*16*D = 524288", marks=pytest.mark.puzzle13, id="p13"),
])
def test_products_on_cuda_cores_fail_the_tensor_core_budget(puzzle, name, work):
    """Right values from broadcast multiplies and tl.sum, but no tl.dot: nothing runs on tensor cores."""
    result = grade_file(puzzle, KERNELS / "wrong" / name, first_failure=True)
    case = failed_case(result)
    assert case.reason == "budget", report(result)
    assert f"tl.dot did 0% of the multiply-adds ({work}, in 0 calls)" in case.message, report(result)


@pytest.mark.puzzle3
def test_never_ending_loop_is_stopped_and_reported():
    result = grade_file(3, KERNELS / "wrong" / "p03_never_ends.py", timeout=2.0)
    case = failed_case(result)
    assert case.reason == "timeout", report(result)
    assert "stopped after 2 s" in case.message
    assert "it was running p03_never_ends.py:" in case.message
    assert all(c.reason == "skipped" for c in result.cases[1:])


@pytest.mark.puzzle1
def test_out_of_bounds_store_is_blocked_before_it_runs(tmp_path):
    """The grader's own memory survives: the store past the end never executes."""
    text = solution_text(registry.find(1)).replace("mask = offsets < N0", "mask = offsets < N0 + B0")
    text = text.replace("x = tl.load(x_ptr + offsets, mask=mask)", "x = tl.load(x_ptr + offsets, mask=offsets < N0)")
    text = text.replace("y = tl.load(y_ptr + offsets, mask=mask)", "y = tl.load(y_ptr + offsets, mask=offsets < N0)")
    result = grade_text(1, text, tmp_path)
    case = failed_case(result)
    assert case.reason == "out_of_bounds"
    assert "out-of-bounds store on z" in case.message
    assert "p01_add_under_test.py:" in case.message and "tl.store(z_ptr + offsets" in case.message


@pytest.mark.parametrize("puzzle, old, new", [
    (14, "row_start = rows.to(tl.int64) * T", "row_start = rows * T"),
    (15, "offsets = row.to(tl.int64) * V + cols", "offsets = row * V + cols"),
])
def test_int32_row_offsets_get_a_warning_line(puzzle, old, new, tmp_path):
    """Issue 27: `rows * T` in int32 wraps past 2**31 elements on the docstring's large problems, which no CPU case
    reaches: the report warns, with the line; the solution's int64 offsets get no warning."""
    from grader.show.report import format_result

    text = lesson_text(registry.find(puzzle))
    assert text.count(old) == 1, "the solution changed: update this mutation"
    result = grade_text(registry.find(puzzle), text.replace(old, new), tmp_path)
    assert "warning: int32 offsets" in result.cases[0].message, report(result)
    assert "rows.to(tl.int64) * T\n  at " in result.cases[0].message, report(result)
    assert "warning: int32 offsets" in format_result(result, "rerun", "replay"), report(result)
    (tmp_path / "right").mkdir()
    right = grade_text(registry.find(puzzle), text, tmp_path / "right")
    assert right.status == "passed" and not any("warning:" in c.message for c in right.cases), report(right)


@pytest.mark.slow
def test_an_empty_graph_left_unwritten_is_not_blamed_on_the_launcher(tmp_path):
    """Issue 27: kernel-only, the launcher is the puzzle's own, so the empty graph's message must not say "return
    that tensor": it says that nothing was stored into dk, also where there is nothing to sum."""
    mutation = next(m for m in MUTATIONS if m.mistake == "dk and dv left unwritten where a node sends no edge")
    puzzle = registry.find(16)
    result = grade_text(puzzle, mutation.apply(lesson_text(puzzle)), tmp_path, first_failure=False)
    case = next(c for c in result.cases if c.name == "empty graph")
    assert "no kernel stored into dk in this case" in case.message, report(result)
    assert "nothing to sum" in case.message and "return that tensor" not in case.message, report(result)


@pytest.mark.slow
@pytest.mark.parametrize("mistake", ["block start without * B0", "row stride N1 instead of N0",
                                     "row stride B1 instead of T"])
def test_blocks_that_overlap_by_a_wrong_start_or_pitch_are_not_sent_to_atomics(mistake, tmp_path):
    """Issue 27 (the beginner study of 1-6): blocks that overlap through a start without * B0 or a wrong row pitch
    were told "use tl.atomic_add" (puzzle 7's, and wrong here), and a case where the pitch ran past the end "mask
    every dimension" (the mask was right). Puzzle 2's every failing case names the pitch instead."""
    mutation = next(m for m in MUTATIONS if m.mistake == mistake)
    puzzle = registry.find(mutation.puzzle)
    every = mutation.puzzle == 2
    result = grade_text(puzzle, mutation.apply(lesson_text(puzzle)), tmp_path, first_failure=not every)
    failing = [c for c in result.cases if not c.passed]
    assert failing and all("atomic" not in f"{c.message} {c.hint}" for c in failing), report(result)
    if every:
        assert all("row j starts at j * N0" in f"{c.message} {c.hint}" for c in failing), report(result)
        assert {c.reason for c in failing} == {"race", "out_of_bounds"}, report(result)


@pytest.mark.puzzle12
def test_a_bfloat16_constant_passes(tmp_path):
    """A block of ones made in the inputs' dtype: triton 3.6's interpreter could not build a bfloat16 constant (a raw
    AttributeError, then advice to make it in float32); the grader's interpreter now builds it as 3.9's does
    (gpu_semantics._get_bf16), so the kernel passes on either triton, as it compiles on a GPU."""
    text = (KERNELS / "right" / "p12_row_sums_on_tensor_cores.py").read_text()
    old = "ones = tl.full([BK, D], 1.0, dtype=tl.float32).to(q.dtype)"
    assert old in text
    result = grade_text(registry.find(12), text.replace(old, "ones = tl.zeros([BK, D], dtype=q.dtype) + 1"), tmp_path)
    assert result.status == "passed", report(result)


def test_a_kernel_that_writes_every_element_is_not_told_a_block_size_is_baked_in(tmp_path):
    """Every element stored, every one wrong: no hint that a block size is written into the kernel (the ninth
    review: the ragged case's 1000 elements over 8 programs of 128 are 125 a program, which read as one of 125)."""
    text = lesson_text(registry.find(1)).replace("tl.store(z_ptr + offsets, x + y, mask=mask)",
                                                 "tl.store(z_ptr + offsets, x - y, mask=mask)")
    result = grade_text(1, text, tmp_path, first_failure=False)
    assert result.status != "passed"
    assert "block size is written" not in report(result), report(result)
