"""Puzzle 8 walking a node's slots one at a time: a scalar loop with no masks on the edge dimension (BLOCK_E
goes unused). Each program still takes its NODES_PER_PROGRAM nodes one after another."""

import triton
import triton.language as tl


@triton.jit
def csc_gather_kernel(v_scaled_ptr, score_ptr, col_ptr_ptr, edge_id_ptr, out_ptr, N, H, D, BLOCK_E: tl.constexpr,
                      NODES_PER_PROGRAM: tl.constexpr, H_PAD: tl.constexpr, D_PAD: tl.constexpr):
    heads = tl.arange(0, H_PAD)
    feats = tl.arange(0, D_PAD)
    row = heads[:, None] * D + feats[None, :]
    feature_mask = (heads < H)[:, None] & (feats < D)[None, :]
    for i in tl.static_range(NODES_PER_PROGRAM):
        node = tl.program_id(0) * NODES_PER_PROGRAM + i
        if node < N:
            num = tl.zeros([H_PAD, D_PAD], dtype=tl.float32)
            den = tl.zeros([H_PAD], dtype=tl.float32)
            for slot in tl.range(tl.load(col_ptr_ptr + node), tl.load(col_ptr_ptr + node + 1)):
                edge = tl.load(edge_id_ptr + slot)
                num += tl.load(v_scaled_ptr + edge * (H * D) + row, mask=feature_mask, other=0.0)
                den += tl.load(score_ptr + edge * H + heads, mask=heads < H, other=0.0)
            tl.store(out_ptr + node * (H * D) + row, num / (den[:, None] + 1e-6), mask=feature_mask)
