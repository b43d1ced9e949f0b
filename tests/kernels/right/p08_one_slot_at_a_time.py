"""Puzzle 8 walking a node's slots one at a time: a scalar loop with no masks on the edge dimension."""

import torch
import triton
import triton.language as tl


@triton.jit
def slot_by_slot_kernel(v_ptr, score_ptr, col_ptr_ptr, edge_id_ptr, out_ptr, H, D,
                        H_PAD: tl.constexpr, D_PAD: tl.constexpr):
    node = tl.program_id(0)
    heads = tl.arange(0, H_PAD)
    feats = tl.arange(0, D_PAD)
    row = heads[:, None] * D + feats[None, :]
    feature_mask = (heads < H)[:, None] & (feats < D)[None, :]
    num = tl.zeros([H_PAD, D_PAD], dtype=tl.float32)
    den = tl.zeros([H_PAD], dtype=tl.float32)
    for slot in tl.range(tl.load(col_ptr_ptr + node), tl.load(col_ptr_ptr + node + 1)):
        edge = tl.load(edge_id_ptr + slot)
        num += tl.load(v_ptr + edge * (H * D) + row, mask=feature_mask, other=0.0)
        den += tl.load(score_ptr + edge * H + heads, mask=heads < H, other=0.0)
    tl.store(out_ptr + node * (H * D) + row, num / (den[:, None] + 1e-6), mask=feature_mask)


def csc_gather(v_scaled, score, col_ptr, edge_id, BLOCK_E: int = 16, NODES_PER_PROGRAM: int = 1):
    num_nodes = col_ptr.numel() - 1
    _, heads, feats = v_scaled.shape
    out = torch.empty((num_nodes, heads, feats), dtype=v_scaled.dtype, device=v_scaled.device)
    if num_nodes:
        slot_by_slot_kernel[(num_nodes,)](v_scaled, score, col_ptr, edge_id, out, heads, feats,
                                          H_PAD=triton.next_power_of_2(heads), D_PAD=triton.next_power_of_2(feats))
    return out
