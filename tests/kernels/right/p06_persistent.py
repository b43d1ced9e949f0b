"""Puzzle 6 as a persistent kernel: a few programs, each looping over several query blocks and reading
every key once per block. The per-program key budget counts per query block stored, so this passes.

The parameter NUM_PROGRAMS declares the persistent variant (grader/worker/compose.py): the puzzle's launcher
then runs min(NUM_PROGRAMS, its grid) programs, NUM_PROGRAMS being the GPU's multiprocessor count (4 in the
interpreter), and program p does query blocks p, p + NUM_PROGRAMS, ...
"""

import triton
import triton.language as tl


@triton.jit
def flash_attention_kernel(q_ptr, k_ptr, v_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr,
                           NUM_PROGRAMS: tl.constexpr):
    LOG2E: tl.constexpr = 1.4426950408889634
    for first in tl.range(tl.program_id(0) * B0, N0, NUM_PROGRAMS * B0):  # this program's query blocks
        queries = first + tl.arange(0, B0)
        q = tl.load(q_ptr + queries, mask=queries < N0, other=0.0)
        running_max = tl.full([B0], float("-inf"), dtype=tl.float32)
        denominator = tl.zeros([B0], dtype=tl.float32)
        acc = tl.zeros([B0], dtype=tl.float32)
        for start in tl.range(0, T, B1):
            keys = start + tl.arange(0, B1)
            key_ok = keys < T
            k = tl.load(k_ptr + keys, mask=key_ok, other=0.0)
            v = tl.load(v_ptr + keys, mask=key_ok, other=0.0)
            scores = tl.where(key_ok[None, :], q[:, None] * k[None, :], float("-inf"))
            new_max = tl.maximum(running_max, tl.max(scores, axis=1))
            alpha = tl.exp2((running_max - new_max) * LOG2E)
            weights = tl.exp2((scores - new_max[:, None]) * LOG2E)
            denominator = denominator * alpha + tl.sum(weights, axis=1)
            acc = acc * alpha + tl.sum(weights * v[None, :], axis=1)
            running_max = new_max
        tl.store(z_ptr + queries, acc / denominator, mask=queries < N0)
