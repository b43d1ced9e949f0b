"""Cheat: the launcher rebuilds each edge's destination (dst) on the host, then a kernel scans dst.

The scan reads dst, which no index budget counts, instead of walking each node's own CSC slots."""

import torch
import triton
import triton.language as tl


@triton.jit
def dst_scan_kernel(v_ptr, score_ptr, dst_ptr, out_ptr, E, H, D,
                    BLOCK_E: tl.constexpr, H_PAD: tl.constexpr, D_PAD: tl.constexpr):
    node = tl.program_id(0)
    heads = tl.arange(0, H_PAD)
    feats = tl.arange(0, D_PAD)
    row = heads[:, None] * D + feats[None, :]
    feature_mask = (heads < H)[:, None] & (feats < D)[None, :]
    num = tl.zeros([H_PAD, D_PAD], dtype=tl.float32)
    den = tl.zeros([H_PAD], dtype=tl.float32)
    for first in tl.range(0, E, BLOCK_E):
        edges = first + tl.arange(0, BLOCK_E)
        mine = tl.load(dst_ptr + edges, mask=edges < E, other=-1) == node
        num += tl.sum(tl.load(v_ptr + edges[:, None, None] * (H * D) + row[None, :, :],
                              mask=mine[:, None, None] & feature_mask[None, :, :], other=0.0), axis=0)
        den += tl.sum(tl.load(score_ptr + edges[:, None] * H + heads[None, :],
                              mask=mine[:, None] & (heads < H)[None, :], other=0.0), axis=0)
    tl.store(out_ptr + node * (H * D) + row, num / (den[:, None] + 1e-6), mask=feature_mask)


def csc_gather(v_scaled, score, col_ptr, edge_id, BLOCK_E: int = 16, NODES_PER_PROGRAM: int = 1):
    num_nodes = col_ptr.numel() - 1
    _, heads, feats = v_scaled.shape
    slot_node = torch.repeat_interleave(torch.arange(num_nodes, dtype=torch.int32), col_ptr.diff())
    dst = torch.empty_like(edge_id)
    dst[edge_id.long()] = slot_node
    out = torch.empty((num_nodes, heads, feats), dtype=v_scaled.dtype, device=v_scaled.device)
    if num_nodes:
        dst_scan_kernel[(num_nodes,)](v_scaled, score, dst, out, edge_id.numel(), heads, feats, BLOCK_E=256,
                                      H_PAD=triton.next_power_of_2(heads), D_PAD=triton.next_power_of_2(feats))
    return out
