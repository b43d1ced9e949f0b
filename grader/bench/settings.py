"""What ``python -m grader bench`` times for each puzzle: sizes, the settings ``--sweep`` tries, and what a
practitioner would run instead (library calls and baselines), by slug in ``BENCHES``.

The solution is timed as a user calls it, at its launcher's defaults. A sweep's settings are what chose those
defaults: each is a launcher's block-size keywords, or a launch setting the launcher does not take (num_warps,
num_stages, a constexpr such as GROUP_M), which then overrides its kernels' launches.

``grader/bench.py`` imports this module only once it has chosen the mode: it imports triton, through
``grader/bench/baselines.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import torch

from grader.bench import baselines
from grader.course import graphs, specs
from grader.course.cases import Case
from grader.course.chapters.sparse_graphs import reference_problem
from grader.course.mistakes import coo_attention, coo_scatter, edge_ends


@dataclass(frozen=True)
class Baseline:
    """Code a practitioner would use instead, as the benchmark times it.

    prepare (untimed) turns the inputs into that code's own format, e.g. COO destinations kept from
    preprocessing, and returns run's keyword arguments; run is timed at each launch setting.
    """
    prepare: Callable[[Mapping], Mapping]
    run: Callable
    settings: tuple[Mapping[str, int], ...] = ({},)  # extra keyword arguments of run; the fastest is reported
    compile: bool = True  # also time run under torch.compile (pointless for a Triton kernel, or code that compiles)
    note: Callable[[Mapping], str] | None = None  # a note from prepare's result, e.g. how many blocks are computed
    compiles: bool = False  # prepare itself compiles (FlexAttention, a torch.compile peer): skipped by --no-compile


@dataclass(frozen=True)
class Bench:
    """How `python -m grader bench` times a puzzle on the GPU.

    Bytes are counted from the spec: every input read once and every output written once is the
    compulsory traffic. ``extra_reads`` adds the re-reads the puzzle's algorithm needs, which gives
    the floor that algorithm can reach (puzzle 5 reads x twice: one extra read).
    """
    sizes: tuple[Mapping[str, int] | Case, ...]  # a Case where the inputs need a graph
    sweep: tuple[Mapping[str, int], ...] = ()  # settings --sweep times: the best is the "best swept" column
    extra_reads: Mapping[str, float] = field(default_factory=dict)
    library: Mapping[str, Callable] = field(default_factory=dict)  # what a practitioner would call instead
    exps: Callable[[Mapping[str, int]], int] | None = None  # exponentials computed, for compute-bound puzzles
    # Other launchers in the solution file worth timing, each with the sizes it is run at (a test on dims).
    variants: Mapping[str, Callable[[Mapping[str, int]], bool]] = field(default_factory=dict)
    cuda_graph: bool = False  # also time inside a CUDA graph: for problems near the launch overhead
    baselines: Mapping[str, Baseline] = field(default_factory=dict)  # what a practitioner writes instead, by name
    flops: Callable[[Mapping[str, int]], int] | None = None  # for tensor-core puzzles: floor at the fp16 matmul rate
    # A result counts as correct within rtol, and atol = this share of the reference's largest |value|.
    compile_spec: bool = True  # also time the spec under torch.compile
    size_note: Callable[[Mapping], str] | None = None  # a note on each size from its inputs, shown in the table
    # Time the spec in eager PyTorch: off for a backward, whose spec runs its forward too (the peers are baselines)
    eager_spec: bool = True
    # Inputs not drawn uniform in [0, 1): draw[name](shape, dims, generator on the GPU) -> tensor (class ids, say)
    draw: Mapping[str, Callable] = field(default_factory=dict)


# -- chapters 1 and 2 --------------------------------------------------------------------------------------

SOFTMAX_THREE_LOOP_SIZES = (dict(N0=4096, T=32768), dict(N0=32768, T=4096), dict(N0=128, T=1_048_576))
# The launchers' B1 = min(16384, T) came from 2048-16384 (2026-11-30); 32768 (32 warps) and the pipeline depth of
# the loops (triton's default: 3 stages) were not timed before.
SOFTMAX_THREE_LOOP_SWEEP = (dict(B1=16384), dict(B1=32768), dict(B1=16384, num_stages=1), dict(B1=16384, num_stages=2),
                            dict(B1=16384, num_stages=4))
SOFTMAX_THREE_LOOP_LIBRARY = {"torch.softmax": lambda x: torch.softmax(x, dim=1)}


def _sdpa(q, k, v):
    """Scalar attention as PyTorch's fused attention sees it: one head of dimension 1, scale 1."""
    return torch.nn.functional.scaled_dot_product_attention(
        q[None, None, :, None], k[None, None, :, None], v[None, None, :, None], scale=1.0).reshape(-1)


# -- chapter 3 ---------------------------------------------------------------------------------------------

def _molecule_batch(batch: int) -> Case:
    return Case(f"batch {batch}", dict(H=4, D=32),
                graph=lambda g: graphs.molecules(batch, g, nodes=100, in_degree=10))


def graph_bench(**settings) -> Bench:
    """Batches of 100-node graphs with in-degree 10, H=4 heads of D=32, as in the anchor measurements."""
    return Bench(sizes=tuple(_molecule_batch(b) for b in (1, 16, 64, 512, 4096)), **settings)


# Puzzles 8-10: 8 slots per step and one node per program are the launchers' defaults; two nodes per program won
# at batch 4096 on 2026-11-30 (puzzles 8 and 10) and at 512 (puzzle 10), by margins not recorded.
GRAPH_SWEEP = (dict(BLOCK_E=8), dict(BLOCK_E=16), dict(BLOCK_E=8, NODES_PER_PROGRAM=2),
               dict(BLOCK_E=8, NODES_PER_PROGRAM=4))


def _dst_of_edges(inputs):
    _, dst = edge_ends(inputs["col_ptr"], inputs["edge_id"])
    return {"v_scaled": inputs["v_scaled"], "score": inputs["score"], "dst": dst,
            "num_nodes": inputs["col_ptr"].numel() - 1}


def _edge_ends_kept(inputs):
    src, dst = edge_ends(inputs["col_ptr"], inputs["edge_id"], inputs["row_idx"])
    return {"q": inputs["q"], "k": inputs["k"], "v": inputs["v"], "e": inputs["e"], "src": src, "dst": dst}


def _slots_kept(inputs):
    return {"node_feat": inputs["node_feat"], "edge_weight": inputs["edge_weight"],
            "row": graphs.slot_nodes(inputs["row_ptr"]), "col": inputs["col_idx"].long()}


def _vectorised_aggregate(node_feat, edge_weight, row, col):
    return torch.zeros_like(node_feat).index_add_(0, row, edge_weight[..., None] * node_feat[col])


def _pyg_scatter(v_scaled, score, dst, num_nodes):
    """What a practitioner would write with PyTorch Geometric (imported only when benchmarked)."""
    from torch_geometric.utils import scatter

    numerator = scatter(v_scaled, dst.long(), dim=0, dim_size=num_nodes, reduce="sum")
    denominator = scatter(score, dst.long(), dim=0, dim_size=num_nodes, reduce="sum")
    return numerator / (denominator[..., None] + specs.EPS)


def _pyg_gather(v_scaled, score, col_ptr, edge_id):
    _, dst = edge_ends(col_ptr, edge_id)
    return _pyg_scatter(v_scaled, score, dst, col_ptr.numel() - 1)


def pyg_aggregate(node_feat, edge_weight, row, col):
    """Puzzle 9 with PyTorch Geometric over the kept slot-to-node index: weighted neighbours, summed per node."""
    from torch_geometric.utils import scatter

    return scatter(edge_weight[..., None] * node_feat[col], row, dim=0, dim_size=node_feat.shape[0], reduce="sum")


def pyg_attention(q, k, v, e, src, dst):
    """Puzzle 10's layer as a PyTorch Geometric user writes it over a kept COO: clipped edge scores, PyG's
    softmax over each node's incoming edges, then a sum of the weighted values. The spec's exp(logit) / (sum
    + 1e-6) is this softmax up to that 1e-6 (at most 1.5e-4 of a node's sum: each weight is at least e^-5),
    and a node with no incoming edge is 0 in both."""
    from torch_geometric.utils import scatter, softmax

    e_out = torch.clamp(k[src] * q[dst] / q.shape[-1] ** 0.5, -5, 5) * e
    alpha = softmax(torch.clamp(e_out.sum(-1), -5, 5), dst, num_nodes=q.shape[0])  # [E, H], per head
    return scatter(alpha[..., None] * v[src], dst, dim=0, dim_size=q.shape[0], reduce="sum"), e_out


# -- chapter 4: float16 inputs ----------------------------------------------------------------------------

MATMUL_BENCH = Bench(
    sizes=(dict(M=4096, K=4096, N=4096), dict(M=8192, K=8192, N=8192),
           dict(M=4000, K=4096, N=4040),  # no multiple of 128 in M or N: partial blocks at the edges
           dict(M=5000, K=3000, N=4000),  # K's rows of 6,000 bytes and b's of 8,000: not 128-byte aligned
           dict(M=4097, K=4000, N=1000)),  # one row past a multiple of 128: a row of tiles with one row each
    # The persistent schedule's GROUP_M (8) and stages (3 at 128x256) overridden, and the lesson's 128x128 tiles
    sweep=(dict(BM=128, BN=256, BK=64), dict(BM=128, BN=128, BK=64), dict(BM=128, BN=256, BK=64, GROUP_M=4),
           dict(BM=128, BN=256, BK=64, GROUP_M=16), dict(BM=128, BN=256, BK=64, num_stages=4)),
    # cuBLAS two ways: float16 out (what torch.matmul returns) and float32 out like ours, the same bytes written
    library={"torch.matmul (float16)": lambda a, b: torch.matmul(a, b),
             "torch.mm (float32 out)": lambda a, b: torch.mm(a, b, out_dtype=torch.float32)},
    flops=lambda d: 2 * d["M"] * d["N"] * d["K"],
    # The spec compiled is float32 matmuls, 10x slower than cuBLAS beside it (2748 against 182 µs at 4096^3 on
    # 2026-11-29): not a peer anyone would pick, and its compiles cost the run minutes.
    compile_spec=False)


def _sdpa_heads(q, k, v):
    """Tiled attention as PyTorch's fused attention sees it: batch 1, one head, [1, 1, N, D]."""
    return torch.nn.functional.scaled_dot_product_attention(q[None, None], k[None, None], v[None, None])[0, 0]


ATTENTION_BENCH = Bench(
    sizes=tuple(dict(N=n, T=n, D=d) for d in (64, 128) for n in (4096, 8192, 16384)),  # the sizes issue 11 names
    sweep=(dict(BQ=64, BK=128), dict(BQ=128, BK=128)),  # BK=64 lost at every size (2026-11-29 and -30)
    library={"scaled_dot_product_attention": _sdpa_heads},
    flops=lambda d: 4 * d["N"] * d["T"] * d["D"],  # two products of N x T x D multiply-adds
    compile_spec=False)  # as puzzle 11's: float32 matmuls (2331 against SDPA's 148 µs at N=16384, D=64)


def bsb_edges_kept(inputs):
    """The BSB decoded once into (row, neighbour) pairs, untimed: the edge list a message-passing layer keeps."""
    rows, cols = graphs.bsb_edges(inputs["window_ptr"], inputs["tcb_col"], inputs["tcb_mask"])
    return {"q": inputs["q"], "k": inputs["k"], "v": inputs["v"], "rows": rows, "cols": cols}


def unfused_attention(q, k, v, rows, cols):
    """Sparse attention as PyG-style message passing: gather both ends of every edge, a scatter softmax
    (max, exp, sum, each a scatter over rows), then index_add_ of the weighted values. Products in the
    inputs' 16-bit type, sums in float32."""
    scores = (q[rows] * k[cols]).sum(-1, dtype=torch.float32) * q.shape[-1] ** -0.5
    row_max = scores.new_full(q.shape[:1], -torch.inf).scatter_reduce(0, rows, scores, "amax")
    weights = torch.exp(scores - row_max[rows])
    total = torch.zeros_like(row_max).index_add_(0, rows, weights)
    weights = weights / total[rows]  # every row that has an edge has total >= 1
    return scores.new_zeros(q.shape).index_add_(0, rows, weights[:, None] * v[cols])


def _bsb_note(inputs) -> str:
    stats = graphs.bsb_stats(graphs.BSB(*(inputs[name].cpu() for name in graphs.BSB._fields)))
    return f"fill {stats.fill:.1%}, {stats.tcbs / max(stats.windows, 1):.1f} TCBs/window"


def _sparse_bench_sizes(n: int) -> tuple[Case, ...]:
    """Three graphs of about n nodes with d=64: no locality, a band, and a batch of small molecules."""
    return (Case("random, 32 neighbours", dict(D=64), graph=lambda g: graphs.random_graph(n, 32, g)),
            Case("banded, 32 neighbours within 32", dict(D=64), graph=lambda g: graphs.banded(n, 32, g, width=32)),
            Case(f"molecules, batch {n // 100}", dict(D=64),
                 graph=lambda g: graphs.molecules(n // 100, g, nodes=100, in_degree=10)))


SPARSE_ATTENTION_BENCH = Bench(
    sizes=(*_sparse_bench_sizes(16384), *_sparse_bench_sizes(65536)),
    # no sweep: the launcher has no block sizes (16 x 16 tiles are the format), and its stages were swept on
    # 2026-11-30 (docs/performance-notes.md)
    size_note=_bsb_note,
    # Kernels of 10-30 µs, as fast as the host launches them: a launch's median can be the host's launch time
    # (banded, N=16384: ours 11.8 then 32.4 µs, the CSR kernel 20.7 then 25.9, in two runs on 2026-11-30)
    cuda_graph=True,
    compile_spec=False,  # the spec decodes the BSB with data-dependent sizes: nothing for the compiler to fuse
    baselines={
        "Triton CSR, CUDA cores (one program per row)": Baseline(
            baselines.csr_from_bsb, baselines.csr_attention, compile=False,
            settings=(dict(BLOCK_E=16, num_warps=1), dict(BLOCK_E=32, num_warps=2), dict(BLOCK_E=32, num_warps=4),
                      dict(BLOCK_E=64, num_warps=4))),
        "PyTorch, unfused (gather, scatter softmax, index_add_)": Baseline(bsb_edges_kept, unfused_attention),
        "FlexAttention (dense adjacency mask_mod)": Baseline(
            baselines.flex_from_bsb, baselines.flex_attention_dense_mask, compile=False,
            note=baselines.flex_blocks_note),
    })

# -- chapter 5: backward passes ---------------------------------------------------------------------------
# A backward's peers are backward passes alone: the forward runs once, untimed (prepare), and what is timed is
# torch.autograd.grad of its outputs (retain_graph keeps the graph for the next repetition), eager or compiled.
# The spec itself runs its forward too, so it is not timed (eager_spec=False, compile_spec=False).


def autograd_peer(forward: Callable, arguments: Callable[[Mapping], tuple], wrt: tuple[int, ...],
                  grads: tuple[str, ...], compiled: bool = False) -> Baseline:
    """The backward of forward(*arguments(inputs)) with respect to the arguments at the positions wrt, given the
    output gradients named in grads; under torch.compile (the forward and the backward it derives) where compiled."""
    def prepare(inputs):
        run_forward = torch.compile(forward, dynamic=False) if compiled else forward
        values = list(arguments(inputs))
        for position in wrt:
            values[position] = values[position].detach().clone().requires_grad_()
        with torch.enable_grad():
            outputs = run_forward(*values)
        return {"outputs": outputs, "leaves": tuple(values[position] for position in wrt),
                "grads": tuple(inputs[name] for name in grads)}
    return Baseline(prepare, backward_of, compile=False, compiles=compiled)


def backward_of(outputs, leaves, grads):
    return torch.autograd.grad(outputs, leaves, grads, retain_graph=True)


def _logits_of_softmax(inputs) -> tuple:
    """The bench's y is the softmax of uniform logits: log y are logits with that softmax."""
    return (inputs["y"].log(),)


def _softmax_with_logits(x):
    return torch.softmax(x, dim=1)


SOFTMAX_BACKWARD_BENCH = Bench(
    # puzzle 4's sizes and sweep: this is the backward of its softmax
    SOFTMAX_THREE_LOOP_SIZES, SOFTMAX_THREE_LOOP_SWEEP + (dict(B1=4096), dict(B1=8192)),
    # Floor: y and dy read twice (the second pass, which L2 eviction hints keep in L2 where a row fits), dx written
    # once; compulsory 3 x 4 x N0 x T bytes (4096 x 32768: 1.61 GB, 377 µs at 4.27 TB/s), the two-pass floor 5 x 4
    # x N0 x T (2.68 GB, 628 µs).
    extra_reads={"y": 1, "dy": 1}, eager_spec=False, compile_spec=False,
    baselines={"eager torch.softmax backward (autograd)": autograd_peer(_softmax_with_logits, _logits_of_softmax,
                                                                         (0,), ("dy",)),
               "torch.compile, the spec's backward": autograd_peer(specs.softmax, _logits_of_softmax, (0,), ("dy",),
                                                                   compiled=True)})


def _class_ids(shape, dims, gen):
    """Targets uniform over the vocabulary, 5% of them IGNORE_INDEX (padding)."""
    ids = torch.randint(0, dims["V"], shape, generator=gen, device=gen.device)
    padding = torch.rand(shape, generator=gen, device=gen.device) < 0.05
    return torch.where(padding, specs.IGNORE_INDEX, ids)


def _cross_entropy(x, target):
    return torch.nn.functional.cross_entropy(x, target, ignore_index=specs.IGNORE_INDEX)


def _logits_and_targets(inputs) -> tuple:
    return inputs["x"], inputs["target"]


CROSS_ENTROPY_BACKWARD_BENCH = Bench(
    sizes=(dict(N0=8192, V=32000), dict(N0=4096, V=128_000)),
    sweep=(dict(BLOCK_V=1024), dict(BLOCK_V=2048), dict(BLOCK_V=4096), dict(BLOCK_V=8192),
           dict(BLOCK_V=4096, num_warps=4), dict(BLOCK_V=8192, num_warps=16)),
    # Floor: x read once, dx written once (8192 x 32000: 2.1 GB, 491 µs at 4.27 TB/s; 4096 x 128000: 4.2 GB, 983 µs).
    eager_spec=False, compile_spec=False, draw={"target": _class_ids},
    baselines={"eager F.cross_entropy backward (autograd)": autograd_peer(_cross_entropy, _logits_and_targets, (0,),
                                                                           ("dloss",)),
               "torch.compile, F.cross_entropy's backward": autograd_peer(_cross_entropy, _logits_and_targets, (0,),
                                                                          ("dloss",), compiled=True)})


def _attention_arguments(inputs) -> tuple:
    return tuple(inputs[name] for name in ("q", "k", "v", "e", "col_ptr", "row_idx", "edge_id"))


def _attention_edges_kept(inputs) -> tuple:
    src, dst = edge_ends(inputs["col_ptr"], inputs["edge_id"], inputs["row_idx"])
    return (*(inputs[name] for name in "qkve"), src, dst)


GRAPH_ATTENTION_BACKWARD_BENCH = Bench(
    sizes=tuple(_molecule_batch(b) for b in (64, 512)),
    sweep=GRAPH_SWEEP,
    # Floor: every input read once and every output written once, plus the lesson's second pass over e and de_out
    # (node rows gathered along edges are counted once, as if from L2: a molecule's 100 nodes share them); it leaves
    # out the 4 E H floats of p and dlogit, written and read (an eighth of one pass over e at D = 32). Batch 64
    # (6,400 nodes, 64,000 edges, H=4, D=32): compulsory 126 MB (29 µs at 4.27 TB/s), the two-pass floor 191 MB
    # (45 µs); batch 512: 1.0 GB and 1.5 GB (235 and 358 µs).
    extra_reads={"e": 1, "de_out": 1}, eager_spec=False, compile_spec=False,
    variants={"graph_attention_backward_atomics": lambda d: True},
    baselines={"eager autograd of the spec": autograd_peer(specs.graph_attention, _attention_arguments, (0, 1, 2, 3),
                                                           ("dh", "de_out")),
               "torch.compile, the layer's backward (COO kept)": autograd_peer(
                   coo_attention, _attention_edges_kept, (0, 1, 2, 3), ("dh", "de_out"), compiled=True)})

# Puzzles 17 and 18 compare with the fused attention backward passes a practitioner calls. Each takes [B, H, N, D]:
# the inputs as one batch of one head, the gradients back as [N, D] views in the inputs' 16-bit type.

def _one_head(inputs) -> list:
    return [inputs[name][None, None].detach().clone().requires_grad_() for name in ("q", "k", "v")]


def _heads_backward(outputs, leaves, grads):
    """The backward of one [1, 1, N, D] attention: (dq, dk, dv) as [N, D] views."""
    return tuple(g[0, 0] for g in torch.autograd.grad(outputs, leaves, grads, retain_graph=True))


def sdpa_backward(backend: str) -> Baseline:
    """PyTorch's scaled_dot_product_attention backward with one backend (FLASH_ATTENTION: FlashAttention-2;
    CUDNN_ATTENTION: cuDNN's), its forward run once, untimed. Its causal mask is aligned top left: the bench's causal
    sizes have N = T, where that is ours."""
    def prepare(inputs):
        from torch.nn.attention import SDPBackend, sdpa_kernel

        leaves = _one_head(inputs)
        with torch.enable_grad(), sdpa_kernel(getattr(SDPBackend, backend)):
            out = torch.nn.functional.scaled_dot_product_attention(*leaves, is_causal=bool(inputs["causal"]),
                                                                   scale=inputs["scale"])
        return {"outputs": out, "leaves": tuple(leaves), "grads": (inputs["do"][None, None],)}
    return Baseline(prepare, _heads_backward, compile=False)


def _flex_backward_causal(inputs):
    """Compiled FlexAttention's forward, untimed, with a causal block mask (ours, aligned to the last query and
    key) where the size is causal; its backward is what is timed."""
    from torch.nn.attention.flex_attention import create_block_mask

    n, t = inputs["q"].shape[0], inputs["k"].shape[0]
    torch._dynamo.reset()  # a new mask_mod per size: a clean cache keeps dynamo under its recompile limit
    block_mask = None
    if inputs["causal"]:
        block_mask = create_block_mask(lambda b, h, q_idx, kv_idx: kv_idx <= q_idx + (t - n), 1, 1, n, t,
                                       device=inputs["q"].device, BLOCK_SIZE=baselines.FLEX_BLOCK)
    leaves = _one_head(inputs)
    with torch.enable_grad():
        out = baselines.compiled_flex_attention()(*leaves, block_mask=block_mask, scale=inputs["scale"])
    return {"outputs": out, "leaves": tuple(leaves), "grads": (inputs["do"][None, None],)}


def _attention_output(q, k, v, causal, scale):
    return specs.masked_attention(q, k, v, causal, scale)[0]


def _attention_arguments_17(inputs) -> tuple:
    return tuple(inputs[name] for name in ("q", "k", "v", "causal", "scale"))


def _attention_backward_size(n: int, d: int, causal: bool = False) -> Case:
    return Case(f"{'causal, ' if causal else ''}N={n}, D={d}", dict(N=n, T=n, D=d, causal=causal, scale=d ** -0.5))


ATTENTION_BACKWARD_BENCH = Bench(
    sizes=(*(_attention_backward_size(n, d) for d in (64, 128) for n in (4096, 8192, 16384)),
           *(_attention_backward_size(16384, d, causal=True) for d in (64, 128)),
           _attention_backward_size(3001, 64)),  # no block divides 3001 (puzzle 12's ragged size)
    # Tiles of the two walks: the sweep chose nothing yet (no GPU run of this puzzle so far)
    sweep=(dict(BQ=64, BK=64), dict(BQ=128, BK=64), dict(BQ=64, BK=128), dict(BQ=32, BK=128), dict(BQ=128, BK=32),
           dict(BQ=64, BK=64, num_stages=3), dict(BQ=64, BK=64, num_warps=8)),
    # The backward is 2.5 times the forward's 4 N T D (FlashAttention-2's count: five N x T x D products, not the
    # seven a recomputing kernel runs), half of it under the causal mask. N = T = 16384, D = 64: 1.76e11 FLOP, a
    # floor of 222 µs at the H200's 790 TFLOP/s (ANCHORS.md measured FlashAttention-2's backward there at 612 µs,
    # cuDNN's at 380, FlexAttention's at 538; torch 2.11, 2026-12-01). Bytes are far below: 6 N D 16-bit inputs,
    # 3 N D float32 outputs (25 MB, 6 µs at 4.27 TB/s).
    flops=lambda d: 10 * d["N"] * d["T"] * d["D"] // (2 if d["causal"] else 1),
    eager_spec=False, compile_spec=False,
    variants={"attention_backward_atomics": lambda d: True},
    baselines={
        "eager autograd of the spec": autograd_peer(_attention_output, _attention_arguments_17, (0, 1, 2), ("do",)),
        "SDPA backward, flash (FlashAttention-2)": sdpa_backward("FLASH_ATTENTION"),
        "SDPA backward, cuDNN": sdpa_backward("CUDNN_ATTENTION"),
        "FlexAttention backward": Baseline(_flex_backward_causal, _heads_backward, compile=False, compiles=True),
        "torch.compile, the spec's backward": autograd_peer(_attention_output, _attention_arguments_17, (0, 1, 2),
                                                            ("do",), compiled=True),
    })

def _flex_backward_bsb(inputs):
    """Compiled FlexAttention's forward with the dense adjacency mask_mod of puzzle 13's peer, untimed; its backward
    is what is timed. Not run where N^2 passes int32 (baselines.flex_from_bsb says why)."""
    prepared = baselines.flex_from_bsb(inputs)
    leaves = _one_head(inputs)
    with torch.enable_grad():
        out = baselines.compiled_flex_attention()(*leaves, block_mask=prepared["block_mask"])
    return {"outputs": out, "leaves": tuple(leaves), "grads": (inputs["do"][None, None],),
            "block_mask": prepared["block_mask"], "q": prepared["q"]}


def _flex_heads_backward(outputs, leaves, grads, block_mask, q):
    """_heads_backward; the block mask and q are kept for the note on blocks computed (baselines.flex_blocks_note)."""
    return _heads_backward(outputs, leaves, grads)


def _edges_arguments(inputs) -> tuple:
    kept = bsb_edges_kept(inputs)
    return tuple(kept[name] for name in ("q", "k", "v", "rows", "cols"))


# Floors of puzzle 18, random graph, N = 16384, 32 neighbours, D = 64 (about 32 TCBs per window in each BSB, 32,768
# TCBs each): bytes, every input read once and every output written once (five N x D 16-bit tensors, lse, the two
# BSBs' 16 x 16 int32 arrays, three N x D float32 outputs): about 32 MB, 7.5 µs at 4.27 TB/s (the default floor, from
# the spec's inputs); FLOPs on tensor cores, 7 products of 16 x 16 x D per TCB (3 in the dq pass, 4 in the dk/dv
# pass): 7.5 GFLOP, 9.5 µs at 790 TFLOP/s. Neither is the limit in practice: the gathers' latency is, as in puzzle 13.
SPARSE_ATTENTION_BACKWARD_BENCH = Bench(
    # random and banded, named with their N (bench --sizes picks a size by its name)
    sizes=tuple(dataclasses.replace(size, name=f"{size.name}, N={n}") for n in (16384, 65536)
                for size in _sparse_bench_sizes(n)[:2]),
    size_note=_bsb_note, cuda_graph=True, eager_spec=False, compile_spec=False,
    baselines={
        "eager autograd of the unfused layer (edges kept)": autograd_peer(unfused_attention, _edges_arguments,
                                                                         (0, 1, 2), ("do",)),
        "torch.compile, the unfused layer's backward (edges kept)": autograd_peer(
            unfused_attention, _edges_arguments, (0, 1, 2), ("do",), compiled=True),
        "FlexAttention backward (dense adjacency mask_mod)": Baseline(
            _flex_backward_bsb, _flex_heads_backward, compile=False, compiles=True, note=baselines.flex_blocks_note),
    })

# -- every puzzle's, by slug -----------------------------------------------------------------------------

# The PyG peers are timed eager only: compiled, they would be the same gathers and scatters as the compiled
# PyTorch peer beside them, and each compile costs the GPU run tens of seconds per size.

BENCHES: dict[str, Bench] = {
    # Puzzles 1-3, 6, 9 and 13 have no sweep: their defaults are the winners of the sweeps of 2026-11-29 and -30
    # (docs/performance-notes.md), and a sweep costs the GPU run its minutes.
    "add": Bench(sizes=(dict(N0=1 << 26),)),
    "outer_add": Bench(sizes=(dict(N0=16384, N1=16384),)),
    "row_sum": Bench(sizes=(dict(N0=32768, T=4096), dict(N0=4096, T=32768)),
                     library={"torch.sum": lambda x: x.sum(dim=1)}),
    "softmax_three_loop": Bench(SOFTMAX_THREE_LOOP_SIZES, SOFTMAX_THREE_LOOP_SWEEP, extra_reads={"x": 2},
                                library=SOFTMAX_THREE_LOOP_LIBRARY),
    "softmax_online": Bench(SOFTMAX_THREE_LOOP_SIZES, SOFTMAX_THREE_LOOP_SWEEP, extra_reads={"x": 1},
                            library=SOFTMAX_THREE_LOOP_LIBRARY),
    "flash_attention": Bench(sizes=(dict(N0=16384, T=16384),),
                             library={"scaled_dot_product_attention": _sdpa}, exps=lambda d: d["N0"] * d["T"]),
    "scatter_add": graph_bench(sweep=(dict(BLOCK_E=32), dict(BLOCK_E=64), dict(BLOCK_E=128),
                                      dict(BLOCK_E=64, num_warps=8)),
                               library={"PyG scatter": _pyg_scatter},
                               variants={"scatter_add_coo_scan": lambda d: d["E"] <= 512_000}),
    "csc_gather": graph_bench(sweep=GRAPH_SWEEP, library={"PyG scatter": _pyg_gather},
                              baselines={"PyTorch index_add_ (COO kept)": Baseline(_dst_of_edges, coo_scatter)}),
    "csr_aggregate": Bench(sizes=(Case("320 nodes, H=8, D=32", dict(H=8, D=32), graph=reference_problem),),
                           cuda_graph=True,
                           baselines={"vectorised index_add_ (slots kept)": Baseline(_slots_kept,
                                                                                     _vectorised_aggregate),
                                      "PyG scatter (slots kept)": Baseline(_slots_kept, pyg_aggregate,
                                                                           compile=False)}),
    "graph_attention": graph_bench(sweep=GRAPH_SWEEP,
                                   baselines={"PyTorch layer (COO kept)": Baseline(_edge_ends_kept, coo_attention),
                                              "PyG softmax and scatter (COO kept)": Baseline(
                                                  _edge_ends_kept, pyg_attention, compile=False)}),
    "matmul": MATMUL_BENCH,
    "attention": ATTENTION_BENCH,
    "sparse_attention": SPARSE_ATTENTION_BENCH,
    "softmax_backward": SOFTMAX_BACKWARD_BENCH,
    "cross_entropy_backward": CROSS_ENTROPY_BACKWARD_BENCH,
    "graph_attention_backward": GRAPH_ATTENTION_BACKWARD_BENCH,
    "attention_backward": ATTENTION_BACKWARD_BENCH,
    "sparse_attention_backward": SPARSE_ATTENTION_BACKWARD_BENCH,
}
