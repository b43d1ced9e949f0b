"""Puzzle 10: Graph attention in one kernel (the RTMScore layer).

You will learn
- how a whole attention layer over a sparse graph fuses into one pass over each node's edges:
  scores, per-feature clip, edge update, weights and the weighted sum, with no [E, H, D]
  intermediate written to memory except the edge output the model needs;
- why no running max is needed here: the logit is clipped to [-5, 5], so every weight lies in
  [e^-5, e^5] and the normalisation can wait until the end;
- to write per-edge outputs in physical edge order (through edge_id), and to zero masked lanes
  *after* exp, where a padded lane would otherwise add exp(0) = 1.

The math, for edge j from src to dst (slot s of node dst holds it: j = edge_id[s], src = row_idx[s])
    e_out[j, h, :] = clip(k[src, h, :] * q[dst, h, :] / sqrt(D), -5, 5) * e[j, h, :]    clip each feature
    w[j, h]        = exp(clip(sum_d e_out[j, h, d], -5, 5))                              then clip the sum
    h[n, h, :]     = sum_{j into n} w[j, h] v[src_j, h, :] / (sum_{j into n} w[j, h] + 1e-6)

Spec (the grader's copy is in grader/course/specs.py)
    def graph_attention(
        q: Float32[Tensor, "N H D"], k: Float32[Tensor, "N H D"], v: Float32[Tensor, "N H D"],
        e: Float32[Tensor, "E H D"], col_ptr: Int32[Tensor, "N+1"], row_idx: Int32[Tensor, "E"],
        edge_id: Int32[Tensor, "E"],
    ) -> tuple[Float32[Tensor, "N H D"], Float32[Tensor, "E H D"]]:
        edge = edge_id.long()
        src = torch.empty_like(edge)
        dst = torch.empty_like(edge)
        src[edge], dst[edge] = row_idx.long(), slot_nodes(col_ptr)
        e_out = torch.clamp(k[src] * q[dst] / q.shape[-1] ** 0.5, -5, 5) * e  # clip per feature, before the sum
        weight = torch.exp(torch.clamp(e_out.sum(-1), -5, 5))  # [E, H], within [e^-5, e^5]
        h = scatter_add(weight[..., None] * v[src], weight, dst.to(torch.int32), q.shape[0])
        return h, e_out

What you write: the body of `graph_attention_kernel`. The launcher is given; it returns (h, e_out).
Budget: e, k and v read once per edge, e_out written once, q read once per node.

Hints
- feature offsets and masks for [H_PAD, D_PAD], as in puzzle 8                          (4 lines)
- per node, as in puzzle 8 (`if node < N:`): its slot range, its q row loaded once, zeroed
  numerator and denominator                                                              (7 lines)
- per block of slots: edge ids and sources, then k[src] and e[edge]; the clipped product
  times e is e_out, stored at the edge ids; the clipped row sum gives the logits         (12 lines)
- weights = exp(logits), set to 0 on masked slots with tl.where; accumulate w * v[src] and w   (6 lines)
- store numerator / (denominator + 1e-6)                                                  (1 line)

Grade it:  python -m grader 10
"""

import torch
import triton
import triton.language as tl


@triton.jit
def graph_attention_kernel(
    q_ptr,  # pointer to q: N x H x D float32 (the queries of the destination nodes)
    k_ptr,  # pointer to k: N x H x D float32 (the keys of the source nodes)
    v_ptr,  # pointer to v: N x H x D float32 (the values of the source nodes)
    e_ptr,  # pointer to e: E x H x D float32, edge features in edge-id order
    col_ptr_ptr,  # pointer to col_ptr: N+1 int32; node n's incoming slots are col_ptr[n] <= s < col_ptr[n+1]
    row_idx_ptr,  # pointer to row_idx: E int32, the source node of each slot
    edge_id_ptr,  # pointer to edge_id: E int32, the edge id of each slot
    h_ptr,  # pointer to the node output h: N x H x D float32
    e_out_ptr,  # pointer to the edge output e_out: E x H x D float32, in edge-id order
    N,  # number of nodes
    H,  # heads
    D,  # features per head
    scale,  # 1 / sqrt(D)
    BLOCK_E: tl.constexpr,  # slots per inner step, a power of two
    NODES_PER_PROGRAM: tl.constexpr,  # nodes each program handles, one after another
    H_PAD: tl.constexpr,  # H rounded up to a power of two
    D_PAD: tl.constexpr,  # D rounded up to a power of two
):
    # >>> solution: about 30 lines
    heads = tl.arange(0, H_PAD)
    feats = tl.arange(0, D_PAD)
    row = heads[:, None] * D + feats[None, :]
    feature_mask = (heads < H)[:, None] & (feats < D)[None, :]
    for i in tl.static_range(NODES_PER_PROGRAM):
        node = tl.program_id(0) * NODES_PER_PROGRAM + i
        if node < N:  # the last program's spare nodes, past N, have nothing to do
            start = tl.load(col_ptr_ptr + node)
            end = tl.load(col_ptr_ptr + node + 1)
            q = tl.load(q_ptr + node * (H * D) + row, mask=feature_mask, other=0.0) * scale
            numerator = tl.zeros([H_PAD, D_PAD], dtype=tl.float32)
            denominator = tl.zeros([H_PAD], dtype=tl.float32)
            for first in tl.range(start, end, BLOCK_E):
                slots = first + tl.arange(0, BLOCK_E)
                slot_ok = slots < end
                tile_mask = slot_ok[:, None, None] & feature_mask[None, :, :]
                edges = tl.load(edge_id_ptr + slots, mask=slot_ok, other=0)
                sources = tl.load(row_idx_ptr + slots, mask=slot_ok, other=0)
                k = tl.load(k_ptr + sources[:, None, None] * (H * D) + row[None, :, :], mask=tile_mask, other=0.0)
                e = tl.load(e_ptr + edges[:, None, None] * (H * D) + row[None, :, :], mask=tile_mask, other=0.0)
                e_out = tl.clamp(k * q[None, :, :], -5.0, 5.0) * e  # the clip is per feature, before the sum
                tl.store(e_out_ptr + edges[:, None, None] * (H * D) + row[None, :, :], e_out, mask=tile_mask)
                logits = tl.clamp(tl.sum(e_out, axis=2), -5.0, 5.0)
                # exp of a padded slot's logit (0) is 1: zero it, or every padded lane joins the sums.
                weights = tl.where(slot_ok[:, None] & (heads < H)[None, :], tl.exp(logits), 0.0)
                v = tl.load(v_ptr + sources[:, None, None] * (H * D) + row[None, :, :], mask=tile_mask, other=0.0)
                numerator += tl.sum(weights[:, :, None] * v, axis=0)
                denominator += tl.sum(weights, axis=0)
            # Weights lie in [e^-5, e^5], so summing them without a running max cannot overflow.
            tl.store(h_ptr + node * (H * D) + row, numerator / (denominator[:, None] + 1e-6), mask=feature_mask)
    # <<< solution


def _warps(block_e: int, heads: int, feats: int) -> int:
    """Few warps: a node's tile is small, and many small programs in flight hide the gathers' latency
    better than a few wide ones (on an H200, one warp for an 8x4x32 tile ran 1.7x faster than four)."""
    tile = block_e * triton.next_power_of_2(heads) * triton.next_power_of_2(feats)
    return max(1, min(8, tile // 2048))


def graph_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, e: torch.Tensor, col_ptr: torch.Tensor,
                    row_idx: torch.Tensor, edge_id: torch.Tensor, BLOCK_E: int = 8, NODES_PER_PROGRAM: int = 1):
    """One program per NODES_PER_PROGRAM nodes; returns (h, e_out). By default 8 slots per step and one node per
    program: with in-degree 10, the fastest on an H200 at batch 64 (38.4 µs; BLOCK_E=16 and two nodes per program
    were slower)."""
    num_nodes, heads, feats = q.shape
    h = torch.empty_like(q)
    e_out = torch.empty_like(e)
    if num_nodes:
        grid = (triton.cdiv(num_nodes, NODES_PER_PROGRAM),)
        graph_attention_kernel[grid](q, k, v, e, col_ptr, row_idx, edge_id, h, e_out, num_nodes, heads, feats,
                                     feats ** -0.5, BLOCK_E=BLOCK_E, NODES_PER_PROGRAM=NODES_PER_PROGRAM,
                                     H_PAD=triton.next_power_of_2(heads), D_PAD=triton.next_power_of_2(feats),
                                     num_warps=_warps(BLOCK_E, heads, feats))
    return h, e_out
