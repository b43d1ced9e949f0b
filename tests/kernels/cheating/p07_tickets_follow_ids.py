"""Cheat: puzzle 7's normalize_kernel takes tickets from a counter (tl.atomic_add of 1.0 on den[0, 0]) and takes them
to follow the program ids: program p, it assumes, is the p-th to take one, so its ticket less p is den[0, 0] as it
was before any program took one, and node 0's first head needs no load of its own. The stock interpreter runs
programs one after another in id order, so there it holds; a GPU hands the tickets out in whatever order its
programs reach the counter. The grader runs a launch's programs in a drawn order, never in id order."""

import triton
import triton.language as tl

EPS = tl.constexpr(1e-6)


@triton.jit
def scatter_kernel(v_scaled_ptr, score_ptr, dst_ptr, out_ptr, den_ptr, E, H, D,
                   BLOCK_E: tl.constexpr, H_PAD: tl.constexpr, D_PAD: tl.constexpr):
    edges = tl.program_id(0) * BLOCK_E + tl.arange(0, BLOCK_E)
    heads = tl.arange(0, H_PAD)
    feats = tl.arange(0, D_PAD)
    edge_ok = edges < E
    head_mask = edge_ok[:, None] & (heads < H)[None, :]
    tile_mask = head_mask[:, :, None] & (feats < D)[None, None, :]
    dst = tl.load(dst_ptr + edges, mask=edge_ok, other=0)
    tile = edges[:, None, None] * (H * D) + heads[None, :, None] * D + feats[None, None, :]
    values = tl.load(v_scaled_ptr + tile, mask=tile_mask)
    scores = tl.load(score_ptr + edges[:, None] * H + heads[None, :], mask=head_mask)
    target = dst[:, None, None] * (H * D) + heads[None, :, None] * D + feats[None, None, :]
    tl.atomic_add(out_ptr + target, values, mask=tile_mask)
    tl.atomic_add(den_ptr + dst[:, None] * H + heads[None, :], scores, mask=head_mask)


@triton.jit
def normalize_kernel(out_ptr, den_ptr, N, H, D, BLOCK_N: tl.constexpr, H_PAD: tl.constexpr, D_PAD: tl.constexpr):
    pid = tl.program_id(0)
    # the ticket: den[0, 0] plus the tickets taken before it; taken to be den[0, 0] + pid
    first_den = tl.atomic_add(den_ptr, 1.0) - pid
    nodes = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    heads = tl.arange(0, H_PAD)
    feats = tl.arange(0, D_PAD)
    head_mask = (nodes < N)[:, None] & (heads < H)[None, :]
    counter = (nodes[:, None] == 0) & (heads[None, :] == 0)  # den[0, 0], which the tickets changed
    den = tl.load(den_ptr + nodes[:, None] * H + heads[None, :], mask=head_mask & ~counter, other=0.0)
    den = tl.where(counter, first_den, den)
    tile_mask = head_mask[:, :, None] & (feats < D)[None, None, :]
    tile = nodes[:, None, None] * (H * D) + heads[None, :, None] * D + feats[None, None, :]
    num = tl.load(out_ptr + tile, mask=tile_mask, other=0.0)
    tl.store(out_ptr + tile, num / (den[:, :, None] + EPS), mask=tile_mask)
