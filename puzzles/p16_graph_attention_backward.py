"""Puzzle 16: Graph attention backward, over the graph and over its transpose.

You will learn
- the backward of puzzle 10's layer, clips included: where a clip held a value at -5 or 5 the
  gradient stops, and torch's clamp lets it through at exactly -5 and 5;
- δ_n = dh_n . h_n, the row reduction of this attention's softmax (puzzle 14's Δ), from the saved h;
- the transposed graph: dq and de sum over a node's *incoming* edges (the CSC that puzzle 10 walks),
  but dk and dv sum over its *outgoing* edges. A second kernel walks the CSR by source, so that one
  program owns each node's dk and dv and no atomics are needed. The first kernel hands it two
  numbers per edge and head, never an [E, H, D] tensor.

The math, per head, for edge j from s to n (slot s' of n's CSC: j = edge_id[s'], s = row_idx[s']);
a = k_s * q_n / sqrt(D) and c = clip(a, -5, 5) are D-vectors, z = sum_d c * e_j the logit,
w = exp(clip(z, -5, 5)), p = w / den_n, and h_n = sum_{j into n} p v_s (puzzle 10)
    δ_n     = dh_n . h_n                                            one number per node and head
    dlogit_j = p (dh_n . v_s - δ_n)   if |z| <= 5, else 0           dL/dz: the softmax's backward
    g_j      = de_out_j + dlogit_j                                  dL/de_out, from both paths
    de_j     = g_j * c                                              edge by edge: a CSC walk writes it
    da_j     = g_j * e_j * [|a| <= 5]                               per feature: the clip's gradient
    dq_n     = sum_{j into n} da_j * k_s / sqrt(D)                  incoming edges: the CSC
    dk_s     = sum_{j out of s} da_j * q_n / sqrt(D)                outgoing edges: the CSR by source
    dv_s     = sum_{j out of s} p_j dh_n
[|a| <= 5] is 1 inside the clip's range, bounds included (torch's clamp passes the gradient at exactly
-5 and 5), and 0 outside. A node with no outgoing edge has dk = dv = 0, one with no incoming edge dq = 0.

The CSR by source (`grader.course.graphs.Graph.by_source`): node s's outgoing edges are the slots
out_ptr[s] <= s' < out_ptr[s+1]; out_dst[s'] is the destination of slot s' and out_edge_id[s'] its
edge id, the same ids as the CSC's, so per-edge tensors (e, de_out, and the two numbers per edge the
first kernel leaves) are read by edge id in both kernels.

Spec (the grader's copy is in grader/course/specs.py; @saves marks what the grader computes from
puzzle 10's forward and hands you: h, and den = sum of the weights into each node + 1e-6)
    @saves(h=graph_attention_h, den=graph_attention_den)
    def graph_attention_backward(
        q: Float32[Tensor, "N H D"], k: Float32[Tensor, "N H D"], v: Float32[Tensor, "N H D"],
        e: Float32[Tensor, "E H D"], h: Float32[Tensor, "N H D"], den: Float32[Tensor, "N H"],
        dh: Float32[Tensor, "N H D"], de_out: Float32[Tensor, "E H D"], col_ptr: Int32[Tensor, "N+1"],
        row_idx: Int32[Tensor, "E"], edge_id: Int32[Tensor, "E"], out_ptr: Int32[Tensor, "N+1"],
        out_dst: Int32[Tensor, "E"], out_edge_id: Int32[Tensor, "E"],
    ) -> tuple[Float32[Tensor, "N H D"], Float32[Tensor, "N H D"], Float32[Tensor, "N H D"], Float32[Tensor, "E H D"]]:
        with torch.enable_grad():
            leaves = [t.detach().requires_grad_() for t in (q, k, v, e)]
            outputs = graph_attention(*leaves, col_ptr, row_idx, edge_id)  # (h, e_out)
            return torch.autograd.grad(outputs, leaves, (dh, de_out))  # (dq, dk, dv, de)

What you write: the bodies of `graph_attention_backward_incoming_kernel` (one program per node over
its incoming edges: dq, de, and p and dlogit of each edge) and
`graph_attention_backward_outgoing_kernel` (one program per node over its outgoing edges: dk and dv).
The launcher is given; it runs them one after the other.
Budget: no atomics; dq, dk, dv and de written once; k, v and e read at most once per edge in each
pass (plus each node's own row), and the two [E, H] tensors of p and dlogit read once.

Hints
- feature offsets and masks for [H_PAD, D_PAD] and the node loop, as in puzzle 10            (7 lines)
- incoming kernel, per node: its slot range; q (times scale), dh, h and den; δ = the row sums
  of dh * h; a zeroed dq                                                                    (8 lines)
- per block of slots: edge ids and sources; k, v, e and de_out tiles; product = k * q,
  clipped, the logit (sum over features of clipped * e), p = exp(clip(logit)) / den         (17 lines)
- dlogit = p * (sum of dh * v - δ) where |logit| <= 5, else 0 (`tl.where`); g = de_out +
  dlogit; store de = g * clipped; dq += sum over slots of (g * e where |product| <= 5) * k;
  store p and dlogit at [edge, head]; after the loop store dq * scale                       (9 lines)
- outgoing kernel, per node: its slot range in out_ptr, its own k (times scale) once, zeroed
  dk and dv; per block: edge ids and destinations, the q, dh, e, de_out tiles and p, dlogit;
  the same masked g * e times q into dk, p * dh into dv; store dk * scale and dv           (27 lines)

Grade it:  python -m grader 16
"""

import torch
import triton
import triton.language as tl


@triton.jit
def graph_attention_backward_incoming_kernel(
    q_ptr,  # pointer to q: N x H x D float32
    k_ptr,  # pointer to k: N x H x D float32
    v_ptr,  # pointer to v: N x H x D float32
    e_ptr,  # pointer to e: E x H x D float32, in edge-id order
    h_ptr,  # pointer to h: N x H x D float32, the forward's output (saved)
    den_ptr,  # pointer to den: N x H float32, the forward's sum of weights + 1e-6 per node (saved)
    dh_ptr,  # pointer to dh: N x H x D float32, the gradient of h
    de_out_ptr,  # pointer to de_out: E x H x D float32, the gradient of e_out, in edge-id order
    col_ptr_ptr,  # pointer to col_ptr: N+1 int32; node n's incoming slots are col_ptr[n] <= s < col_ptr[n+1]
    row_idx_ptr,  # pointer to row_idx: E int32, the source node of each slot
    edge_id_ptr,  # pointer to edge_id: E int32, the edge id of each slot
    dq_ptr,  # pointer to the output dq: N x H x D float32
    de_ptr,  # pointer to the output de: E x H x D float32, in edge-id order
    p_ptr,  # pointer to p: E x H float32, written here for the outgoing kernel: w / den of each edge
    dlogit_ptr,  # pointer to dlogit: E x H float32, written here for the outgoing kernel: dL/dz of each edge
    N,  # number of nodes
    H,  # heads
    D,  # features per head
    scale,  # 1 / sqrt(D)
    BLOCK_E: tl.constexpr,  # slots per inner step, a power of two
    NODES_PER_PROGRAM: tl.constexpr,  # nodes each program handles, one after another
    H_PAD: tl.constexpr,  # H rounded up to a power of two
    D_PAD: tl.constexpr,  # D rounded up to a power of two
):
    # Your code here: about 41 lines.
    pass


@triton.jit
def graph_attention_backward_outgoing_kernel(
    q_ptr,  # pointer to q: N x H x D float32
    k_ptr,  # pointer to k: N x H x D float32
    e_ptr,  # pointer to e: E x H x D float32, in edge-id order
    dh_ptr,  # pointer to dh: N x H x D float32, the gradient of h
    de_out_ptr,  # pointer to de_out: E x H x D float32, the gradient of e_out, in edge-id order
    p_ptr,  # pointer to p: E x H float32, w / den of each edge (from the incoming kernel)
    dlogit_ptr,  # pointer to dlogit: E x H float32, dL/dz of each edge (from the incoming kernel)
    out_ptr_ptr,  # pointer to out_ptr: N+1 int32; node n's outgoing slots are out_ptr[n] <= s < out_ptr[n+1]
    out_dst_ptr,  # pointer to out_dst: E int32, the destination node of each outgoing slot
    out_edge_id_ptr,  # pointer to out_edge_id: E int32, the edge id of each outgoing slot
    dk_ptr,  # pointer to the output dk: N x H x D float32
    dv_ptr,  # pointer to the output dv: N x H x D float32
    N,  # number of nodes
    H,  # heads
    D,  # features per head
    scale,  # 1 / sqrt(D)
    BLOCK_E: tl.constexpr,  # slots per inner step, a power of two
    NODES_PER_PROGRAM: tl.constexpr,  # nodes each program handles, one after another
    H_PAD: tl.constexpr,  # H rounded up to a power of two
    D_PAD: tl.constexpr,  # D rounded up to a power of two
):
    # Your code here: about 34 lines.
    pass


def _warps(block_e: int, heads: int, feats: int) -> int:
    """Warps for a [BLOCK_E, H_PAD, D_PAD] tile: about 2048 elements per warp, from 1 to 8 (untuned: puzzle 10's
    measurement, a small tile in many programs hides the gathers' latency best)."""
    tile = block_e * triton.next_power_of_2(heads) * triton.next_power_of_2(feats)
    return max(1, min(8, tile // 2048))


def graph_attention_backward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, e: torch.Tensor, h: torch.Tensor,
                             den: torch.Tensor, dh: torch.Tensor, de_out: torch.Tensor, col_ptr: torch.Tensor,
                             row_idx: torch.Tensor, edge_id: torch.Tensor, out_ptr: torch.Tensor,
                             out_dst: torch.Tensor, out_edge_id: torch.Tensor, BLOCK_E: int = 8,
                             NODES_PER_PROGRAM: int = 1):
    """Two passes, one program per NODES_PER_PROGRAM nodes each; returns (dq, dk, dv, de)."""
    num_nodes, heads, feats = q.shape
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    de = torch.empty_like(e)
    p, dlogit = e.new_empty(e.shape[:2]), e.new_empty(e.shape[:2])  # [E, H]: what pass 1 leaves for pass 2
    if num_nodes:
        grid = (triton.cdiv(num_nodes, NODES_PER_PROGRAM),)
        sizes = dict(BLOCK_E=BLOCK_E, NODES_PER_PROGRAM=NODES_PER_PROGRAM, H_PAD=triton.next_power_of_2(heads),
                     D_PAD=triton.next_power_of_2(feats), num_warps=_warps(BLOCK_E, heads, feats))
        graph_attention_backward_incoming_kernel[grid](q, k, v, e, h, den, dh, de_out, col_ptr, row_idx, edge_id, dq,
                                                       de, p, dlogit, num_nodes, heads, feats, feats ** -0.5, **sizes)
        graph_attention_backward_outgoing_kernel[grid](q, k, e, dh, de_out, p, dlogit, out_ptr, out_dst, out_edge_id,
                                                       dk, dv, num_nodes, heads, feats, feats ** -0.5, **sizes)
    return dq, dk, dv, de
