"""Chapter 3, graph attention on sparse graphs (notebooks/03_graph_attention.ipynb): puzzles 7-10, scatter_add,
csc_gather, csr_aggregate and graph_attention."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

import torch

from grader.course import graphs, specs
from grader.course.budgets import Loads, NoAtomics, Reads, Writes
from grader.course.cases import Case, Fill, normal, per_input
from grader.course.mistakes import coo_scatter, edge_ends, graph_attention, matches, matches_any
from grader.course.puzzle import Hint, Puzzle, Tolerance, magnitude_scale

NOTEBOOK = "03_graph_attention"

# -- the graphs every puzzle of the chapter is graded on ----------------------------------------------------


def _positive_scores(name, shape, gen):
    """Attention-like weights: exp of a logit in [-5, 5]."""
    return torch.exp(torch.rand(shape, generator=gen, dtype=torch.float64) * 10 - 5)


_scores = per_input(score=_positive_scores)


# Graphs every chapter-3 puzzle is graded on: (name, builder, about).
GRAPHS = (
    ("molecules", lambda g: graphs.molecules(2, g), "a batch of two small molecule-like graphs"),
    ("nodes with no incoming edge", lambda g: graphs.with_isolated(graphs.molecules(1, g), 5),
     "five nodes no edge reaches: their output is 0 (a sum over no edge)"),
    ("hub with half the edges", lambda g: graphs.with_hub(graphs.random_graph(100, 4, g), 0.5, g, hub=7),
     "one node receives 50% of all edges: one very long neighbour list (and, with atomics, contention)"),
    ("hub with 90% of the edges", lambda g: graphs.with_hub(graphs.random_graph(60, 3, g), 0.9, g, hub=0),
     "one node receives 90% of all edges"),
    ("duplicate edges and self loops", lambda g: graphs.with_self_loops(graphs.with_duplicates(
        graphs.molecules(2, g), 60, g), 20, g), "each copy of an edge counts: a multigraph"),
    ("power law", lambda g: graphs.power_law(120, 700, g), "hubs and many nodes of degree 0 or 1"),
    ("banded", lambda g: graphs.banded(97, 5, g), "locality: sources near their destination"),
    ("empty graph", lambda g: graphs.empty(37), "no edge at all: every output is 0"),
)


def _graph_cases(blocks: Mapping[str, int], fill: Fill | None = None, extra_blocks=None):
    """The shared graphs as cases with H=4 heads of D=32, alternating two block settings."""
    cases = []
    for index, (name, build, about) in enumerate(GRAPHS):
        chosen = extra_blocks if extra_blocks and index % 2 else blocks
        cases.append(Case(name, dict(H=4, D=32), dict(chosen), fill=fill or normal(), about=about, graph=build))
    return cases


def _spare_nodes(build: Callable[[torch.Generator], graphs.Graph], per_program: int):
    """build, plus one node no edge reaches whenever its node count is a multiple of per_program: the last
    program then always has spare nodes past N, which `if node < N:` (or a node mask) must skip."""
    def build_with_spare_nodes(gen):
        graph = build(gen)
        return graphs.with_isolated(graph, 1) if graph.num_nodes % per_program == 0 else graph
    return build_with_spare_nodes


def _ragged_programs(cases) -> tuple[Case, ...]:
    """The cases, each that gives a program several nodes drawing a node count that is not a multiple of them.
    A random size comes out even half the time, and then a missing node mask goes unnoticed."""
    return tuple(replace(case, graph=_spare_nodes(case.graph, case.blocks["NODES_PER_PROGRAM"]))
                 if case.blocks.get("NODES_PER_PROGRAM", 1) > 1 else case for case in cases)


def _epsilon_hint(without_epsilon: Callable) -> Hint:
    """The hint for a denominator without its + 1e-6; without_epsilon(inputs) is the puzzle's answer so computed."""
    def check(inputs, yours, blocks):
        out = without_epsilon(inputs)
        return out.shape == yours.shape and matches(yours, out)
    check.__doc__ = f"Check whether the output is {without_epsilon.__doc__}"
    return Hint("epsilon left out", check, "the denominator lacks its + 1e-6: it changes every node a little, and "
                                           "turns a node no edge reaches into 0 / 0")


# -- puzzle 7: scatter_add ------------------------------------------------------------------------------------

SCATTER_ADD_CASES = (
    *_graph_cases(dict(BLOCK_E=32), _scores, extra_blocks=dict(BLOCK_E=8)),
    Case("H and D not powers of two", dict(H=3, D=20), dict(BLOCK_E=16), fill=_scores,
         graph=lambda g: graphs.molecules(2, g), about="H=3 heads of D=20 features: masks on both"),
)


def _scatter_add_without_epsilon(inputs):
    """puzzle 7's answer with the + 1e-6 left out of the denominator."""
    return coo_scatter(inputs["v_scaled"], inputs["score"], inputs["dst"], inputs["num_nodes"], eps=0.0)


def _rows_by_destination(inputs, yours, blocks) -> bool:
    """Check whether edge e's row of v_scaled, of score or of both was read at row dst[e], its destination, instead
    of at row e (possible without an out-of-bounds load only where every destination is below E)."""
    v_scaled, score, dst, nodes = inputs["v_scaled"], inputs["score"], inputs["dst"].long(), inputs["num_nodes"]
    if dst.numel() == 0 or int(dst.max()) >= dst.numel():
        return False
    right = coo_scatter(v_scaled, score, dst, nodes)
    return any(matches(yours, wrong) and not matches(right, wrong) for wrong in (
        coo_scatter(v_scaled[dst], score, dst, nodes), coo_scatter(v_scaled, score[dst], dst, nodes),
        coo_scatter(v_scaled[dst], score[dst], dst, nodes)))


SCATTER_ADD_HINTS = (
    Hint("rows by destination", _rows_by_destination,
         "edge e's features were read at row dst[e], its destination: in COO, row e of v_scaled and of score belongs "
         "to edge e. Read them at the edge's own index (edges), and add them into row dst[e] of out and den"),
    _epsilon_hint(_scatter_add_without_epsilon),
)

SCATTER_ADD = Puzzle(
    7, "scatter_add", "Scatter-add over COO edges, with atomics", NOTEBOOK, specs.scatter_add, SCATTER_ADD_CASES,
    Tolerance(1e-5, magnitude_scale(specs.scatter_add), "sum |v_scaled| / (sum score + 1e-6)"),
    hints=SCATTER_ADD_HINTS, outputs=("out",))

# -- puzzle 8: csc_gather -------------------------------------------------------------------------------------

CSC_GATHER_CASES = _ragged_programs((
    *_graph_cases(dict(BLOCK_E=16), _scores, extra_blocks=dict(BLOCK_E=8, NODES_PER_PROGRAM=4)),
    Case("H and D not powers of two", dict(H=3, D=20), dict(BLOCK_E=4, NODES_PER_PROGRAM=2), fill=_scores,
         graph=lambda g: graphs.molecules(2, g), about="H=3 heads of D=20 features: masks on both"),
))


def _gather_in_slot_order(inputs, yours, blocks) -> bool:
    """Check whether slot s read the features of edge s, not of edge edge_id[s]."""
    wrong = dict(inputs, edge_id=torch.arange(inputs["edge_id"].numel(), dtype=torch.int32))
    return inputs["edge_id"].numel() > 1 and matches(yours, specs.csc_gather(**wrong))


def _csc_gather_without_epsilon(inputs):
    """puzzle 8's answer with the + 1e-6 left out of the denominator."""
    _, dst = edge_ends(inputs["col_ptr"], inputs["edge_id"])
    return coo_scatter(inputs["v_scaled"], inputs["score"], dst, inputs["col_ptr"].numel() - 1, eps=0.0)


CSC_GATHER_HINTS = (
    Hint("gathered in slot order", _gather_in_slot_order,
         "edge features were read in slot order: slot s holds edge edge_id[s], so read row edge_id[s] of "
         "v_scaled and score"),
    _epsilon_hint(_csc_gather_without_epsilon),
)

CSC_GATHER = Puzzle(
    8, "csc_gather", "Gather over CSC: each node reads its own edges", NOTEBOOK, specs.csc_gather, CSC_GATHER_CASES,
    Tolerance(1e-5, magnitude_scale(specs.csc_gather), "sum |v_scaled| / (sum score + 1e-6)"),
    hints=CSC_GATHER_HINTS, outputs=("out",),
    budgets=(NoAtomics(lesson="One program owns each node's sum: no atomics needed, and the result is "
                              "deterministic."),  # first: an atomic also reads, and the reads would speak first
             Loads(("col_ptr", "edge_id"), "E + 3*N", lesson="Read each node's slot range from col_ptr and "
                                                             "each slot's edge id once; never scan edges "
                                                             "that are not the node's own."),
             Reads("v_scaled", 1, lesson="Each edge's features are read once, by its destination."),
             Reads("score", 1, lesson="Each edge's score is read once.")))

# -- puzzle 9: csr_aggregate ----------------------------------------------------------------------------------


def reference_problem(gen):
    """The reference aggregation: 320 nodes, node n receiving 14 + (n % 5) - 2 edges."""
    return graphs.with_degrees(12 + torch.arange(320) % 5, gen)


CSR_AGGREGATE_CASES = _ragged_programs((
    Case("reference problem", dict(H=8, D=32), dict(BLOCK_E=16), graph=reference_problem,
         about="320 nodes with 12 to 16 neighbours each, 8 heads of 32 features"),
    *_graph_cases(dict(BLOCK_E=16), extra_blocks=dict(BLOCK_E=4, NODES_PER_PROGRAM=2)),
    Case("H and D not powers of two", dict(H=5, D=12), dict(BLOCK_E=8), graph=lambda g: graphs.molecules(2, g),
         about="H=5 heads of D=12 features: masks on both"),
))


def _aggregate_with_weights(inputs, edge_weight: torch.Tensor | None) -> torch.Tensor | None:
    """Puzzle 9's answer had slot s been given row s of this edge_weight (None: the mistake cannot happen here)."""
    return None if edge_weight is None else specs.csr_aggregate(**dict(inputs, edge_weight=edge_weight))


def _weights_by_neighbour(inputs, yours, blocks) -> bool:
    """Check whether each slot took the weights of row col_idx[s] (its neighbour) or row n (its node), not row s."""
    weight, col_idx = inputs["edge_weight"], inputs["col_idx"].long()
    by_node = [col_idx, graphs.slot_nodes(inputs["row_ptr"]).long()]
    return weight.shape[0] > 1 and matches_any(yours, (
        _aggregate_with_weights(inputs, weight[rows]) for rows in by_node if int(rows.max()) < weight.shape[0]))


def _one_weight_for_all_heads(inputs, yours, blocks) -> bool:
    """Check whether each slot used one weight for every head: element s of edge_weight (a load of
    edge_weight_ptr + slots) or its head 0 (edge_weight_ptr + slots * H)."""
    weight = inputs["edge_weight"]
    slots, heads = weight.shape
    if slots == 0 or heads < 2:
        return False
    return matches_any(yours, (_aggregate_with_weights(inputs, column[:, None].expand(slots, heads))
                               for column in (weight.reshape(-1)[:slots], weight[:, 0])))


def _last_slot_left_out(inputs, yours, blocks) -> bool:
    """Check whether each node's last slot, row_ptr[n+1] - 1, was left out of its sum."""
    row_ptr, weight = inputs["row_ptr"].long(), inputs["edge_weight"].clone()
    filled = row_ptr[1:] > row_ptr[:-1]
    weight[row_ptr[1:][filled] - 1] = 0.0
    return bool(filled.any()) and matches_any(yours, (_aggregate_with_weights(inputs, weight),))


CSR_AGGREGATE_HINTS = (
    Hint("weights by neighbour", _weights_by_neighbour,
         "edge_weight was read by node (row col_idx[s] or n), but its rows are by slot: slot s takes row s, "
         "edge_weight[s, h], like col_idx[s]"),
    Hint("one weight for all heads", _one_weight_for_all_heads,
         "edge_weight was read once per slot, where there is one weight per slot and head: load the [BLOCK_E, H] "
         "tile at slots[:, None] * H + heads[None, :]"),
    Hint("last slot left out", _last_slot_left_out,
         "each node's last slot is left out: its slots run from row_ptr[n] up to but not including row_ptr[n+1], "
         "so the loop ends at row_ptr[n+1] itself, not row_ptr[n+1] - 1"),
)

CSR_AGGREGATE = Puzzle(
    9, "csr_aggregate", "Multi-head neighbour aggregation over CSR", NOTEBOOK, specs.csr_aggregate,
    CSR_AGGREGATE_CASES,
    Tolerance(1e-5, magnitude_scale(specs.csr_aggregate), "sum |edge_weight| |node_feat| over the node's slots"),
    hints=CSR_AGGREGATE_HINTS, outputs=("out",),
    budgets=(Reads("node_feat", 1, per="edge", lesson="Each slot gathers its neighbour's row once."),
             Reads("edge_weight", 1, lesson="Each slot's weights are read once.")))

# -- puzzle 10: graph_attention -------------------------------------------------------------------------------

GRAPH_ATTENTION_CASES = _ragged_programs((
    *_graph_cases(dict(BLOCK_E=16), extra_blocks=dict(BLOCK_E=8, NODES_PER_PROGRAM=2)),
    Case("clip per feature", dict(H=4, D=32), dict(BLOCK_E=16), fill=per_input(q=normal(5.0), k=normal(5.0)),
         graph=lambda g: graphs.molecules(2, g),
         about="|k*q/sqrt(D)| exceeds 5 on many features, so the per-feature clip matters"),
    Case("logits beyond 5", dict(H=4, D=32), dict(BLOCK_E=16), fill=per_input(e=normal(4.0)),
         graph=lambda g: graphs.molecules(2, g), about="sums of e_out beyond +-5, so the logit clip matters"),
    Case("H and D not powers of two", dict(H=3, D=20), dict(BLOCK_E=8), graph=lambda g: graphs.molecules(2, g),
         about="H=3 heads of D=20 features: masks on both"),
    Case("H=5, D=7", dict(H=5, D=7), dict(BLOCK_E=4, NODES_PER_PROGRAM=4), fill=per_input(q=normal(3.0)),
         graph=lambda g: graphs.with_hub(graphs.random_graph(40, 3, g), 0.3, g),
         about="small odd sizes with a hub"),
))


def _graph_attention_h_scale(inputs, expected):
    """Rounding bound for h in units of float32 eps, as for puzzle 6: each weight carries the relative
    error of its logit (about the sum of |e_out| over the features), and the normaliser spreads it."""
    q, k, v = inputs["q"], inputs["k"], inputs["v"]
    src, dst = edge_ends(inputs["col_ptr"], inputs["edge_id"], inputs["row_idx"])
    e_out = torch.clamp(k[src] * q[dst] / q.shape[-1] ** 0.5, -5, 5) * inputs["e"]
    weight = torch.exp(torch.clamp(e_out.sum(-1), -5, 5))
    condition = 1 + e_out.abs().sum(-1)  # [E, H]
    den = torch.zeros_like(q[..., 0]).index_add_(0, dst, weight) + specs.EPS
    share = weight / den[dst]
    mass = share[..., None] * v[src].abs()
    scale = torch.zeros_like(q).index_add_(0, dst, mass * (1 + condition[..., None]))
    spread = torch.zeros_like(q[..., 0]).index_add_(0, dst, share * condition)
    return scale + torch.zeros_like(q).index_add_(0, dst, mass) * spread[..., None]


def _graph_attention_e_out_scale(inputs, expected):
    src, dst = edge_ends(inputs["col_ptr"], inputs["edge_id"], inputs["row_idx"])
    product = (inputs["k"][src] * inputs["q"][dst]).abs() / inputs["q"].shape[-1] ** 0.5
    return torch.clamp(product, max=5) * inputs["e"].abs()


def _e_out_in_slot_order(inputs, yours, blocks) -> bool:
    """Check whether e_out holds slot s's result at row s, not at row edge_id[s]."""
    return (yours.shape == inputs["e"].shape and yours.numel() > 0
            and matches(yours, graph_attention(inputs, e_out_in_slot_order=True)[1]))


def _attention_unscaled(inputs, yours, blocks) -> bool:
    """Check whether h or e_out is what the layer gives when k * q is not scaled by 1/sqrt(D)."""
    q = inputs["q"]
    return matches_any(yours, specs.graph_attention(**dict(inputs, q=q * q.shape[-1] ** 0.5)))


def _e_out_not_clipped_per_feature(inputs, yours, blocks) -> bool:
    """Check whether e_out is the layer's without the per-feature clip."""
    return yours.shape == inputs["e"].shape and matches(yours, graph_attention(inputs, clip_features=False)[1])


def _weights_miss_the_feature_clip(inputs, yours, blocks) -> bool:
    """Check whether h is the layer's without the per-feature clip."""
    return yours.shape == inputs["q"].shape and matches(yours, graph_attention(inputs, clip_features=False)[0])


def _float32_h(inputs, **mistakes) -> torch.Tensor:
    """h as a float32 kernel with these clip mistakes computes it: where an unclipped logit passes 88, exp
    overflows to inf and h comes out NaN, in the kernel and here alike. (The inputs hold float32 values.)"""
    single = {k: v.float() if isinstance(v, torch.Tensor) and v.is_floating_point() else v for k, v in inputs.items()}
    return graph_attention(single, **mistakes)[0].double()


def _fits_float32_h(yours: torch.Tensor, inputs, **mistakes) -> bool:
    """Whether yours is h as _float32_h computes it: NaN in the same places, and elsewhere within 1e-4 of
    sum_j w_j |v_j| / sum_j w_j (huge unclipped weights cancel, so each value's own size is too tight a scale)."""
    if yours.shape != inputs["q"].shape:
        return False
    candidate = _float32_h(inputs, **mistakes)
    scale = _float32_h(dict(inputs, v=inputs["v"].abs()), **mistakes)
    close = ((yours - candidate).abs() <= 1e-4 * scale) | (yours == candidate) | (yours.isnan() & candidate.isnan())
    return bool(close.all())


def _sum_clip_missing(feature_clip_shows: bool):
    """A check whether h is what the per-feature clip alone gives, the summed logit left unclipped, on a case
    where the per-feature clip changes h (feature_clip_shows) or one where it does not, so that a kernel
    without either clip gives that same h."""
    def check(inputs, yours, blocks) -> bool:
        if not _fits_float32_h(yours, inputs, clip_logits=False):
            return False
        return _fits_float32_h(_float32_h(inputs, clip_features=False, clip_logits=False), inputs,
                               clip_logits=False) != feature_clip_shows
    check.__doc__ = (f"Check whether h is the layer's without the sum clip, on a case where the per-feature clip "
                     f"{'changes' if feature_clip_shows else 'does not change'} h.")
    return check


def _neither_clip(inputs, yours, blocks) -> bool:
    """Check whether h is the layer's (in float32) with neither clip."""
    return _fits_float32_h(yours, inputs, clip_features=False, clip_logits=False)


def _padded_slots_weigh_1(inputs, yours, blocks) -> bool:
    """Check whether each padded slot of a node's last block of BLOCK_E added exp(0) = 1 to its denominator."""
    return yours.shape == inputs["q"].shape and matches(yours, graph_attention(inputs,
                                                                               padding_block=blocks["BLOCK_E"])[0])


def _e_by_source(inputs, yours, blocks) -> bool:
    """Check whether h or e_out is the layer's with each edge's e read at the row of its source node (row_idx[s])
    instead of its edge id (possible without an out-of-bounds load only where every source is below E)."""
    src, _ = edge_ends(inputs["col_ptr"], inputs["edge_id"], inputs["row_idx"])
    if src.numel() == 0 or int(src.max()) >= src.numel():
        return False
    wrong = graph_attention(dict(inputs, e=inputs["e"][src]))
    return matches_any(yours, wrong) and not any(matches(right, w) for right, w in zip(graph_attention(inputs), wrong))


def _graph_attention_without_epsilon(inputs):
    """puzzle 10's h with the + 1e-6 left out of the denominator."""
    return graph_attention(inputs, eps=0.0)[0]


GRAPH_ATTENTION_HINTS = (
    Hint("e_out in slot order", _e_out_in_slot_order,
         "e_out is in slot (CSC) order: store the result of slot s at row edge_id[s], the edge's own position"),
    Hint("k * q unscaled", _attention_unscaled,
         "k * q misses the 1/sqrt(D) scale, so e_out and h are both off: clip(k * q * scale, -5, 5) * e, with the "
         "launcher's scale = 1/sqrt(D)"),
    Hint("e_out not clipped per feature", _e_out_not_clipped_per_feature,
         "e_out is not clipped per feature: clip(k * q / sqrt(D), -5, 5) element by element, before the sum"),
    Hint("weights miss the per-feature clip", _weights_miss_the_feature_clip,
         "the weights miss the per-feature clip: clip(k * q / sqrt(D), -5, 5) element by element, then sum"),
    Hint("sum clip missing, feature clip present", _sum_clip_missing(feature_clip_shows=True),
         "the sum clip is missing, though each feature is clipped: the weight is exp(clip(sum over d of e_out, -5, "
         "5))"),
    Hint("sum clip missing", _sum_clip_missing(feature_clip_shows=False),
         "the sum clip is missing: the weight is exp(clip(sum over d of e_out, -5, 5)). No feature of this case passes "
         "+-5, so whether each feature is clipped shows in the case 'clip per feature'"),
    Hint("neither clip", _neither_clip,
         "neither clip is applied: clip each feature of k * q / sqrt(D) to [-5, 5], then the summed logit too"),
    Hint("e read by source", _e_by_source,
         "e was read at the row of the edge's source node (row_idx[s]): e holds one row per edge, in edge-id order, "
         "so read it at edge_id[s], the row e_out is stored to"),
    Hint("padded slots weigh 1", _padded_slots_weigh_1,
         "each padded slot adds exp(0) = 1 to the denominator: set the weights of masked slots to 0 after the exp"),
    _epsilon_hint(_graph_attention_without_epsilon),
)

GRAPH_ATTENTION = Puzzle(
    10, "graph_attention", "Graph attention in one kernel (RTMScore)", NOTEBOOK, specs.graph_attention,
    GRAPH_ATTENTION_CASES,
    (Tolerance(4e-6, _graph_attention_h_scale, "the float32 rounding bound of the weighted sum"),
     Tolerance(1e-5, _graph_attention_e_out_scale, "min(|k q| / sqrt(D), 5) |e|")),
    hints=GRAPH_ATTENTION_HINTS, outputs=("h", "e_out"),
    budgets=(Reads("e", 1, lesson="Each edge's features are read once."),
             Reads("k", 1, per="edge", lesson="Each edge gathers its source's key once."),
             Reads("v", 1, per="edge", lesson="Each edge gathers its source's value once, in the same pass."),
             Reads("q", 1, lesson="Each node's query is read once, before its edges."),
             Writes("e_out", 1, lesson="Each edge's output is written once.")))

PUZZLES = (SCATTER_ADD, CSC_GATHER, CSR_AGGREGATE, GRAPH_ATTENTION)
