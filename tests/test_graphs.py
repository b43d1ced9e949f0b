"""grader/course/graphs.py: the COO, CSC and CSR forms agree, bad arrays are refused by name, generators make what
they say.

The references here are plain Python (sorts and loops over edges), never the module's own helpers, so a
bug in a helper cannot hide in both sides of a comparison. Run: `python -m pytest tests/test_graphs.py -q`.
"""

import itertools
from collections import Counter

import pytest
import torch

from grader.course import graphs, specs
from grader.course.chapters import backward, sparse_graphs, tensor_cores


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _int32(*values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.int32)


def _pairs(graph: graphs.Graph) -> Counter:
    """The multiset of (src, dst) pairs: what a graph is, whatever its edge numbering."""
    return Counter(zip(graph.src.tolist(), graph.dst.tolist()))


def slot_nodes(ptr: list[int]) -> list[int]:
    """The node each slot belongs to, read off a pointer array by hand."""
    return [node for node in range(len(ptr) - 1) for _ in range(ptr[node + 1] - ptr[node])]


def _assert_pointer(ptr: torch.Tensor, num_nodes: int, num_edges: int) -> None:
    assert ptr.dtype == torch.int32 and ptr.shape == (num_nodes + 1,)
    assert int(ptr[0]) == 0 and int(ptr[-1]) == num_edges
    assert bool((ptr[1:] >= ptr[:-1]).all()), f"pointer not monotone: {ptr.tolist()}"


# Every family of generated graph, plus edge cases layered on top; each builder takes a torch.Generator.
FAMILIES = [
    pytest.param(lambda g: graphs.molecules(2, g), id="molecules"),
    pytest.param(lambda g: graphs.molecules(3, g, nodes=100, in_degree=10), id="molecules-fixed"),
    pytest.param(lambda g: graphs.random_graph(80, 3.5, g), id="random_graph"),
    pytest.param(lambda g: graphs.power_law(120, 700, g), id="power_law"),
    pytest.param(lambda g: graphs.banded(97, 5, g), id="banded"),
    pytest.param(lambda g: graphs.with_degrees(torch.arange(60) % 7, g), id="with_degrees"),
    pytest.param(lambda g: graphs.with_hub(graphs.random_graph(100, 4, g), 0.5, g, hub=7), id="with_hub"),
    pytest.param(lambda g: graphs.with_duplicates(graphs.molecules(1, g), 40, g), id="with_duplicates"),
    pytest.param(lambda g: graphs.with_self_loops(graphs.random_graph(50, 3, g), 20, g), id="with_self_loops"),
    pytest.param(lambda g: graphs.with_isolated(graphs.molecules(1, g), 5), id="with_isolated"),
    pytest.param(lambda g: graphs.empty(37), id="empty"),
    pytest.param(lambda g: graphs.empty(0), id="empty-no-nodes"),
]
# ... and the graphs the chapter-3 puzzles are actually graded on.
GRADED = [pytest.param(build, id=f"registry:{name}") for name, build, _ in sparse_graphs.GRAPHS] + [
    pytest.param(case.graph, id=f"registry:16:{case.name}") for case in backward.GRAPH_ATTENTION_BACKWARD_CASES]


# -- the formats and the converters -------------------------------------------------------------------

@pytest.mark.parametrize("build", FAMILIES + GRADED)
def test_csc_groups_edges_by_destination_in_increasing_edge_id(build):
    graph = build(_gen())
    col_ptr, row_idx, edge_id = graph.csc
    src, dst, num_edges = graph.src.tolist(), graph.dst.tolist(), graph.num_edges
    _assert_pointer(col_ptr, graph.num_nodes, num_edges)
    assert row_idx.dtype == edge_id.dtype == torch.int32
    assert row_idx.shape == edge_id.shape == (num_edges,)
    assert sorted(edge_id.tolist()) == list(range(num_edges)), "edge_id must be a permutation of the edge ids"

    pointer, slots = col_ptr.tolist(), edge_id.tolist()
    for node in range(graph.num_nodes):
        ids = slots[pointer[node]:pointer[node + 1]]
        assert ids == sorted(ids) and len(set(ids)) == len(ids), f"node {node}'s slots are not in edge-id order: {ids}"
    for slot, (node, edge) in enumerate(zip(slot_nodes(pointer), slots)):
        assert int(row_idx[slot]) == src[edge], f"row_idx[{slot}] is not the source of edge {edge}"
        assert node == dst[edge], f"slot {slot} sits under node {node}, but edge {edge} goes to {dst[edge]}"
    # All of the above pins the CSC down exactly: a stable sort of the edge ids by destination.
    assert slots == sorted(range(num_edges), key=lambda j: (dst[j], j))


@pytest.mark.parametrize("build", FAMILIES + GRADED)
def test_coo_to_csc_and_back_keeps_every_edge_id(build):
    graph = build(_gen())
    back = graphs.from_csc(*graph.csc)
    assert back.num_nodes == graph.num_nodes
    assert back.src.dtype == back.dst.dtype == torch.int32
    assert torch.equal(back.src, graph.src) and torch.equal(back.dst, graph.dst)  # same (src, dst) for each id
    again = back.csc
    assert all(torch.equal(mine, theirs) for mine, theirs in zip(again, graph.csc))


@pytest.mark.parametrize("build", FAMILIES + GRADED)
def test_coo_to_csr_and_back_keeps_the_multiset_of_edges(build):
    graph = build(_gen())
    row_ptr, col_idx = graph.csr
    _assert_pointer(row_ptr, graph.num_nodes, graph.num_edges)
    assert col_idx.dtype == torch.int32 and col_idx.shape == (graph.num_edges,)
    src, dst, pointer = graph.src.tolist(), graph.dst.tolist(), row_ptr.tolist()
    for node in range(graph.num_nodes):
        expected = [d for s, d in zip(src, dst) if s == node]  # outgoing, in increasing edge id
        assert col_idx[pointer[node]:pointer[node + 1]].tolist() == expected, f"node {node}'s outgoing slots"

    back = graphs.from_csr(row_ptr, col_idx)
    assert back.num_nodes == graph.num_nodes and _pairs(back) == _pairs(graph)
    assert back.src.tolist() == sorted(src), "from_csr numbers edges in slot order, so sources are grouped"


@pytest.mark.parametrize("build", FAMILIES + GRADED)
def test_by_source_groups_edges_by_source_in_increasing_edge_id(build):
    graph = build(_gen())
    out_ptr, out_dst, out_edge_id = graph.by_source
    src, dst, num_edges = graph.src.tolist(), graph.dst.tolist(), graph.num_edges
    _assert_pointer(out_ptr, graph.num_nodes, num_edges)
    assert out_dst.dtype == out_edge_id.dtype == torch.int32
    assert out_dst.shape == out_edge_id.shape == (num_edges,)
    pointer, slots = out_ptr.tolist(), out_edge_id.tolist()
    for node in range(graph.num_nodes):
        expected = [j for j in range(num_edges) if src[j] == node]  # its outgoing edges, in edge-id order
        assert slots[pointer[node]:pointer[node + 1]] == expected, f"node {node}'s outgoing slots"
    for slot, edge in enumerate(slots):
        assert int(out_dst[slot]) == dst[edge], f"out_dst[{slot}] is not the destination of edge {edge}"


@pytest.mark.parametrize("build", FAMILIES + GRADED)
def test_by_source_and_back_keeps_every_edge_id(build):
    graph = build(_gen())
    back = graphs.from_by_source(*graph.by_source)
    assert back.num_nodes == graph.num_nodes
    assert torch.equal(back.src, graph.src) and torch.equal(back.dst, graph.dst)
    assert all(torch.equal(mine, theirs) for mine, theirs in zip(back.by_source, graph.by_source))


@pytest.mark.parametrize("build", FAMILIES + GRADED)
def test_each_edge_id_has_one_slot_in_the_csc_and_one_in_the_csr_by_source(build):
    """The two views of one edge agree: its CSC slot (under its destination) and its slot under its source."""
    graph = build(_gen())
    col_ptr, row_idx, edge_id = (t.tolist() for t in graph.csc)
    out_ptr, out_dst, out_edge_id = (t.tolist() for t in graph.by_source)
    by_dst = {edge: (row_idx[slot], node) for slot, (node, edge) in enumerate(zip(slot_nodes(col_ptr), edge_id))}
    by_src = {edge: (node, out_dst[slot]) for slot, (node, edge) in enumerate(zip(slot_nodes(out_ptr), out_edge_id))}
    assert by_dst == by_src and sorted(by_dst) == list(range(graph.num_edges))


@pytest.mark.parametrize("build", FAMILIES + GRADED)
def test_from_coo_accepts_a_generated_graph_unchanged(build):
    graph = build(_gen())
    again = graphs.from_coo(graph.src.long(), graph.dst.long(), graph.num_nodes)  # int64 in, int32 out
    assert again.src.dtype == again.dst.dtype == torch.int32
    assert torch.equal(again.src, graph.src) and torch.equal(again.dst, graph.dst)


@pytest.mark.parametrize("build", FAMILIES + GRADED)
def test_graph_arrays_row_ptr_and_col_idx_list_incoming_neighbours(build):
    graph = build(_gen())
    arrays = graphs.graph_arrays(graph)
    assert set(arrays) == {"src", "dst", "num_nodes", "col_ptr", "row_idx", "edge_id", "row_ptr", "col_idx",
                           "window_ptr", "tcb_col", "tcb_mask", "window_order", "out_ptr", "out_dst", "out_edge_id",
                           "key_window_ptr", "key_tcb_query", "key_tcb_mask", "key_window_order"}
    assert arrays["num_nodes"] == graph.num_nodes
    assert torch.equal(arrays["src"], graph.src) and torch.equal(arrays["dst"], graph.dst)
    col_ptr, row_idx, edge_id = graph.csc
    assert torch.equal(arrays["col_ptr"], col_ptr) and torch.equal(arrays["row_idx"], row_idx)
    assert torch.equal(arrays["edge_id"], edge_id)
    # The CSR of the reversed graph is the CSC without edge ids: slot s is edge edge_id[s] in both.
    assert torch.equal(arrays["row_ptr"], col_ptr) and torch.equal(arrays["col_idx"], row_idx)
    assert arrays["row_ptr"].dtype == arrays["col_idx"].dtype == torch.int32
    # Puzzle 13's BSB is built from that same CSR: row i attends to the sources of its incoming edges.
    for got, expected in zip((arrays[name] for name in graphs.BSB._fields), graphs.to_bsb(col_ptr, row_idx)):
        assert torch.equal(got, expected)
    for got, expected in zip((arrays[name] for name in graphs.BySource._fields), graph.by_source):
        assert torch.equal(got, expected)
    # Puzzle 18's key BSB: the BSB of each node's outgoing edges (row j: the queries that attend to key j).
    row_ptr, col_idx = graph.csr
    for got, expected in zip((arrays[name] for name in graphs.KEY_BSB_NAMES.values()), graphs.to_bsb(row_ptr, col_idx)):
        assert torch.equal(got, expected)


# A graph small enough to write its formats out by hand. Edge ids: 0: 2->1, 1: 0->1, 2: 3->0, 3: 1->3,
# 4: 0->1 (a duplicate of edge 1), 5: 2->2 (a self loop). Node 4 has no edge at all.
TINY_SRC, TINY_DST, TINY_N = (2, 0, 3, 1, 0, 2), (1, 1, 0, 3, 1, 2), 5


def _tiny() -> graphs.Graph:
    return graphs.from_coo(_int32(*TINY_SRC), _int32(*TINY_DST), TINY_N)


def test_a_hand_written_graph_has_the_formats_worked_out_by_hand():
    graph = _tiny()
    assert (graph.num_nodes, graph.num_edges) == (5, 6)
    assert graph.in_degree().tolist() == [1, 3, 1, 1, 0]
    col_ptr, row_idx, edge_id = graph.csc
    assert col_ptr.tolist() == [0, 1, 4, 5, 6, 6]
    assert edge_id.tolist() == [2, 0, 1, 4, 5, 3]  # node 1 gets edges 0, 1, 4 in that order
    assert row_idx.tolist() == [3, 2, 0, 0, 2, 1]
    row_ptr, col_idx = graph.csr
    assert row_ptr.tolist() == [0, 2, 3, 5, 6, 6]
    assert col_idx.tolist() == [1, 1, 3, 1, 2, 0]
    arrays = graphs.graph_arrays(graph)
    assert arrays["row_ptr"].tolist() == [0, 1, 4, 5, 6, 6]  # incoming, not the outgoing row_ptr above
    assert arrays["col_idx"].tolist() == [3, 2, 0, 0, 2, 1]
    reversed_graph = graph.reversed()
    assert reversed_graph.src.tolist() == list(TINY_DST) and reversed_graph.dst.tolist() == list(TINY_SRC)
    out_ptr, out_dst, out_edge_id = graph.by_source
    assert out_ptr.tolist() == [0, 2, 3, 5, 6, 6]  # the outgoing row_ptr above
    assert out_edge_id.tolist() == [1, 4, 3, 0, 5, 2]  # node 0 sends edges 1 and 4, node 2 edges 0 and 5
    assert out_dst.tolist() == [1, 1, 3, 1, 2, 0]  # the CSR's col_idx: the same slots


def test_from_csc_without_edge_id_numbers_edges_in_slot_order():
    graph = graphs.from_csc(_int32(0, 1, 4, 5, 6, 6), _int32(3, 2, 0, 0, 2, 1))
    assert graph.src.tolist() == [3, 2, 0, 0, 2, 1]
    assert graph.dst.tolist() == [0, 1, 1, 1, 2, 3]
    assert _pairs(graph) == _pairs(_tiny())


def test_from_csc_with_an_edge_id_puts_each_edge_back_at_its_id():
    graph = graphs.from_csc(_int32(0, 1, 4, 5, 6, 6), _int32(3, 2, 0, 0, 2, 1), _int32(2, 0, 1, 4, 5, 3))
    assert graph.src.tolist() == list(TINY_SRC) and graph.dst.tolist() == list(TINY_DST)


def test_check_csc_and_check_csr_accept_valid_arrays():
    graph = _tiny()
    assert graphs.check_csc(*graph.csc) is None
    assert graphs.check_csr(*graph.csr) is None
    assert graphs.check_by_source(*graph.by_source) is None


def test_from_by_source_puts_each_edge_back_at_its_id():
    graph = graphs.from_by_source(_int32(0, 2, 3, 5, 6, 6), _int32(1, 1, 3, 1, 2, 0), _int32(1, 4, 3, 0, 5, 2))
    assert graph.src.tolist() == list(TINY_SRC) and graph.dst.tolist() == list(TINY_DST)


# -- validation: a GraphError naming the array and the problem, never a wrong graph ------------------------

I = _int32  # noqa: E741 (short enough to keep each case on one line)
BAD = [
    # (what is wrong, call, words the message must contain)
    ("col_ptr decreases", lambda: graphs.from_csc(I(0, 2, 1, 3), I(0, 1, 2)), ["col_ptr", "not monotone"]),
    ("row_ptr decreases", lambda: graphs.from_csr(I(0, 3, 1, 3), I(0, 1, 2)), ["row_ptr", "not monotone"]),
    ("col_ptr starts at 1", lambda: graphs.from_csc(I(1, 2, 3), I(0, 1)), ["col_ptr", "start at 0"]),
    ("row_ptr starts at 2", lambda: graphs.from_csr(I(2, 2, 3), I(0)), ["row_ptr", "start at 0"]),
    ("col_ptr is empty", lambda: graphs.from_csc(I(), I()), ["col_ptr", "empty"]),
    ("col_ptr has a negative entry", lambda: graphs.from_csc(I(0, -1, 2), I(0, 1)), ["col_ptr", "negative"]),
    ("col_ptr ends past row_idx", lambda: graphs.from_csc(I(0, 1, 3), I(0, 1)),
     ["col_ptr ends at 3", "row_idx has 2 entries"]),
    ("col_ptr ends before row_idx", lambda: graphs.from_csc(I(0, 1, 1), I(0, 1)),
     ["col_ptr ends at 1", "row_idx has 2 entries"]),
    ("row_ptr ends past col_idx", lambda: graphs.from_csr(I(0, 2, 4), I(0, 1, 1)),
     ["row_ptr ends at 4", "col_idx has 3 entries"]),
    ("row_idx too large", lambda: graphs.from_csc(I(0, 1, 2), I(0, 2)), ["row_idx", "out of range", "0..1"]),
    ("row_idx negative", lambda: graphs.from_csc(I(0, 1, 2), I(-1, 0)), ["row_idx", "negative"]),
    ("col_idx too large", lambda: graphs.from_csr(I(0, 1, 2), I(5, 0)), ["col_idx", "out of range"]),
    ("col_idx negative", lambda: graphs.from_csr(I(0, 1, 2), I(0, -3)), ["col_idx", "negative", "-3"]),
    ("src too large", lambda: graphs.from_coo(I(0, 3), I(1, 1), 3), ["src", "out of range", "0..2"]),
    ("dst too large", lambda: graphs.from_coo(I(0, 1), I(1, 3), 3), ["dst", "out of range"]),
    ("src negative", lambda: graphs.from_coo(I(-1, 1), I(1, 1), 3), ["src", "negative"]),
    ("dst negative", lambda: graphs.from_coo(I(0, 1), I(1, -2), 3), ["dst", "negative"]),
    ("any node with no nodes", lambda: graphs.from_coo(I(0), I(0), 0), ["src", "out of range"]),
    ("dst shorter than src", lambda: graphs.from_coo(I(0, 1, 2), I(0, 1), 3), ["dst", "2 entries", "expected 3"]),
    ("dst longer than src", lambda: graphs.from_coo(I(0), I(0, 1), 3), ["dst", "expected 1"]),
    ("edge_id too short", lambda: graphs.from_csc(I(0, 1, 2), I(0, 1), I(0)), ["edge_id", "expected 2"]),
    ("edge_id out of range", lambda: graphs.from_csc(I(0, 1, 2), I(0, 1), I(0, 2)), ["edge_id", "out of range"]),
    ("edge_id repeats an id", lambda: graphs.from_csc(I(0, 1, 2), I(0, 1), I(1, 1)), ["edge_id", "not a permutation"]),
    ("float src", lambda: graphs.from_coo(torch.tensor([0.0]), I(0), 1), ["src", "dtype", "float32"]),
    ("float64 col_ptr", lambda: graphs.from_csc(torch.tensor([0.0, 1.0]), I(0)), ["col_ptr", "dtype"]),
    ("bool dst", lambda: graphs.from_coo(I(0), torch.tensor([False]), 1), ["dst", "dtype", "bool"]),
    ("bool col_idx", lambda: graphs.from_csr(I(0, 1), torch.tensor([False])), ["col_idx", "dtype"]),
    ("complex edge_id", lambda: graphs.from_csc(I(0, 1), I(0), torch.tensor([0j])), ["edge_id", "dtype"]),
    ("2-D src", lambda: graphs.from_coo(I(0, 1).reshape(1, 2), I(0, 1), 2), ["src", "1-D", "(1, 2)"]),
    ("2-D col_ptr", lambda: graphs.from_csc(I(0, 1, 2).reshape(3, 1), I(0, 0)), ["col_ptr", "1-D"]),
    ("0-D row_idx", lambda: graphs.from_csc(I(0, 1), torch.tensor(0, dtype=torch.int32)), ["row_idx", "1-D"]),
    ("list src", lambda: graphs.from_coo([0, 1], I(0, 1), 2), ["src", "torch tensor", "list"]),
    ("numpy col_ptr", lambda: graphs.from_csc(I(0, 1).numpy(), I(0)), ["col_ptr", "torch tensor", "ndarray"]),
    ("negative num_nodes", lambda: graphs.from_coo(I(), I(), -1), ["num_nodes", "non-negative", "-1"]),
    ("float num_nodes", lambda: graphs.from_coo(I(0), I(0), 2.0), ["num_nodes", "int", "2.0"]),
    ("check_csc on a bad pointer", lambda: graphs.check_csc(I(0, 2, 1), I(0, 0), I(0, 1)), ["not monotone"]),
    ("check_csr on a bad index", lambda: graphs.check_csr(I(0, 1), I(1)), ["col_idx", "out of range"]),
    ("out_ptr decreases", lambda: graphs.from_by_source(I(0, 2, 1, 3), I(0, 1, 2), I(0, 1, 2)),
     ["out_ptr", "not monotone"]),
    ("out_ptr starts at 1", lambda: graphs.from_by_source(I(1, 2), I(0), I(0)), ["out_ptr", "start at 0"]),
    ("out_ptr ends past out_dst", lambda: graphs.from_by_source(I(0, 1, 3), I(0, 1), I(0, 1)),
     ["out_ptr ends at 3", "out_dst has 2 entries"]),
    ("out_dst too large", lambda: graphs.from_by_source(I(0, 1, 2), I(0, 2), I(0, 1)),
     ["out_dst", "out of range", "0..1"]),
    ("out_dst negative", lambda: graphs.from_by_source(I(0, 1, 2), I(-1, 0), I(0, 1)), ["out_dst", "negative"]),
    ("out_edge_id too short", lambda: graphs.from_by_source(I(0, 1, 2), I(0, 1), I(0)),
     ["out_edge_id", "expected 2"]),
    ("out_edge_id out of range", lambda: graphs.from_by_source(I(0, 1, 2), I(0, 1), I(0, 2)),
     ["out_edge_id", "out of range"]),
    ("out_edge_id repeats an id", lambda: graphs.from_by_source(I(0, 1, 2), I(0, 1), I(1, 1)),
     ["out_edge_id", "not a permutation"]),
    ("float out_edge_id", lambda: graphs.from_by_source(I(0, 1), I(0), torch.tensor([0.0])),
     ["out_edge_id", "dtype"]),
    ("check_by_source on a bad pointer", lambda: graphs.check_by_source(I(0, 2, 1), I(0, 0), I(0, 1)),
     ["not monotone"]),
]


@pytest.mark.parametrize("call, words", [pytest.param(call, words, id=what) for what, call, words in BAD])
def test_malformed_arrays_raise_a_graph_error_that_names_the_problem(call, words):
    with pytest.raises(graphs.GraphError) as raised:
        call()
    message = str(raised.value)
    missing = [word for word in words if word not in message]
    assert not missing, f"message {message!r} lacks {missing}"


def test_graph_error_is_a_value_error():
    assert issubclass(graphs.GraphError, ValueError)
    with pytest.raises(ValueError):
        graphs.from_coo(I(0), I(9), 2)


def test_the_non_monotone_message_points_at_the_step_that_goes_down():
    with pytest.raises(graphs.GraphError, match=r"col_ptr\[2\] = 5 > col_ptr\[3\] = 4"):
        graphs.from_csc(I(0, 1, 5, 4, 6), I(0, 0, 0, 0, 0, 0))


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64])
def test_any_integer_dtype_is_accepted_and_stored_as_int32(dtype):
    graph = graphs.from_coo(torch.tensor([0, 2], dtype=dtype), torch.tensor([1, 1], dtype=dtype), 3)
    assert graph.src.dtype == graph.dst.dtype == torch.int32
    assert graph.src.tolist() == [0, 2] and graph.dst.tolist() == [1, 1]
    from_pointer = graphs.from_csc(torch.tensor([0, 0, 2, 2], dtype=dtype), torch.tensor([0, 2], dtype=dtype))
    assert _pairs(from_pointer) == _pairs(graph)


@pytest.mark.parametrize("convert", [
    pytest.param(lambda ptr, idx: graphs.from_csc(ptr, idx), id="from_csc"),
    pytest.param(lambda ptr, idx: graphs.from_csr(ptr, idx), id="from_csr"),
])
def test_an_int64_pointer_past_int32_is_refused_not_wrapped(convert):
    with pytest.raises(graphs.GraphError):
        convert(torch.tensor([0, 2**32 + 3], dtype=torch.int64), I(0, 0, 0))


# -- generators ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("build", FAMILIES + GRADED)
def test_generated_graphs_are_int32_with_every_index_in_range(build):
    graph = build(_gen(3))
    assert isinstance(graph.num_nodes, int) and graph.num_nodes >= 0
    assert graph.src.dtype == graph.dst.dtype == torch.int32
    assert graph.src.shape == graph.dst.shape == (graph.num_edges,)
    if graph.num_edges:
        assert 0 <= int(graph.src.min()) and int(graph.src.max()) < graph.num_nodes
        assert 0 <= int(graph.dst.min()) and int(graph.dst.max()) < graph.num_nodes
    graphs.check_csc(*graph.csc)  # the generators skip from_coo's checks, so check their output here
    graphs.check_csr(*graph.csr)


@pytest.mark.parametrize("build", FAMILIES + GRADED)
def test_the_same_seed_gives_the_same_graph(build):
    first, second = build(_gen(11)), build(_gen(11))
    assert first.num_nodes == second.num_nodes
    assert torch.equal(first.src, second.src) and torch.equal(first.dst, second.dst)


@pytest.mark.parametrize("build", [p for p in FAMILIES if not p.id.startswith("empty")])
def test_different_seeds_give_different_graphs(build):
    first, second = build(_gen(1)), build(_gen(2))
    same = (first.num_nodes == second.num_nodes and torch.equal(first.src, second.src)
            and torch.equal(first.dst, second.dst))
    assert not same


def _blocks(graph: graphs.Graph) -> list[tuple[int, int]]:
    """Merge each edge's span [min(src, dst), max(src, dst)] into maximal runs of consecutive node ids."""
    spans = sorted(zip(torch.minimum(graph.src, graph.dst).tolist(), torch.maximum(graph.src, graph.dst).tolist()))
    blocks: list[list[int]] = []
    for low, high in spans:
        if blocks and low <= blocks[-1][1]:
            blocks[-1][1] = max(blocks[-1][1], high)
        else:
            blocks.append([low, high])
    return [(low, high) for low, high in blocks]


@pytest.mark.parametrize("batch", [1, 3, 8])
def test_molecules_are_block_diagonal_with_sizes_and_degrees_in_range(batch):
    graph = graphs.molecules(batch, _gen(batch))
    assert 20 * batch <= graph.num_nodes <= 100 * batch
    degree = graph.in_degree()
    assert int(degree.min()) >= 2 and int(degree.max()) <= 10, "default in-degree range is 2..10"
    blocks = _blocks(graph)
    # No edge crosses a molecule, so edges never join two molecules' id ranges: at least `batch` runs,
    # each within one molecule of at most 100 nodes, together covering every node (each has an edge).
    assert len(blocks) >= batch
    assert max(high - low + 1 for low, high in blocks) <= 100
    assert sum(high - low + 1 for low, high in blocks) == graph.num_nodes


@pytest.mark.parametrize("batch", [1, 4])
def test_molecules_of_fixed_size_and_degree(batch):
    graph = graphs.molecules(batch, _gen(), nodes=100, in_degree=10)
    assert graph.num_nodes == 100 * batch and graph.num_edges == 1000 * batch
    assert graph.in_degree().tolist() == [10] * graph.num_nodes
    assert torch.equal(graph.src // 100, graph.dst // 100), "an edge leaves its 100-node molecule"


def test_molecules_list_edges_in_no_particular_order():
    """The COO must not come pre-sorted by destination, or a COO puzzle would secretly be a CSC one."""
    dst = graphs.molecules(2, _gen()).dst
    assert not bool((dst[1:] >= dst[:-1]).all())


@pytest.mark.parametrize("num_nodes, avg_degree", [(100, 4), (37, 2.5), (1, 3)])
def test_random_graph_has_the_asked_number_of_edges(num_nodes, avg_degree):
    graph = graphs.random_graph(num_nodes, avg_degree, _gen())
    assert graph.num_nodes == num_nodes and graph.num_edges == round(num_nodes * avg_degree)


@pytest.mark.parametrize("make, fraction, hub", [
    (lambda g: graphs.random_graph(100, 4, g), 0.5, 7),
    (lambda g: graphs.random_graph(60, 3, g), 0.9, 0),
    (lambda g: graphs.molecules(2, g), 0.3, 0),
    (lambda g: graphs.power_law(120, 700, g), 0.1, 119),
])
def test_with_hub_sends_the_asked_fraction_of_edges_to_the_hub(make, fraction, hub):
    base = make(_gen())
    graph = graphs.with_hub(base, fraction, _gen(1), hub=hub)
    share = int((graph.dst == hub).sum()) / graph.num_edges
    assert abs(share - fraction) < 0.02, f"hub {hub} receives {share:.3f} of the edges, asked {fraction}"
    assert graph.num_nodes == base.num_nodes
    assert not (_pairs(base) - _pairs(graph)), "with_hub must keep every original edge"
    assert all(d == hub for _, d in (_pairs(graph) - _pairs(base)).elements()), "an added edge misses the hub"


def test_with_hub_adds_nothing_when_the_hub_already_has_its_share():
    base = graphs.from_coo(I(0, 1, 2, 3), I(5, 5, 5, 1), 6)
    graph = graphs.with_hub(base, 0.5, _gen(), hub=5)
    assert graph.num_edges == 4 and _pairs(graph) == _pairs(base)


def test_power_law_has_hubs_far_above_the_mean_degree():
    graph = graphs.power_law(120, 700, _gen())
    degree = graph.in_degree().double()
    assert graph.num_edges == 700
    assert degree.max() > 10 * degree.mean(), f"max in-degree {degree.max():.0f}, mean {degree.mean():.1f}"
    # A uniform graph of the same size does not pass this bar, so the bar tells the two apart.
    uniform = graphs.random_graph(120, 700 / 120, _gen()).in_degree().double()
    assert uniform.max() < 4 * uniform.mean()


@pytest.mark.parametrize("num_nodes, degree, width", [(97, 5, 16), (50, 3, 2), (10, 4, 0)])
def test_banded_sources_lie_within_width_of_their_destination(num_nodes, degree, width):
    graph = graphs.banded(num_nodes, degree, _gen(), width=width)
    assert graph.in_degree().tolist() == [degree] * num_nodes
    assert int((graph.src - graph.dst).abs().max()) <= width


def test_with_degrees_gives_exactly_the_degrees_asked():
    degrees = torch.tensor([0, 3, 1, 0, 7, 2, 0, 12, 4])
    graph = graphs.with_degrees(degrees, _gen())
    assert graph.num_nodes == degrees.numel() and graph.num_edges == int(degrees.sum())
    assert graph.in_degree().tolist() == degrees.tolist()


def test_with_isolated_appends_nodes_no_edge_reaches():
    base = graphs.molecules(1, _gen())
    graph = graphs.with_isolated(base, 5)
    assert graph.num_nodes == base.num_nodes + 5
    assert torch.equal(graph.src, base.src) and torch.equal(graph.dst, base.dst)
    assert graph.in_degree()[-5:].tolist() == [0] * 5
    col_ptr = graph.csc.col_ptr
    assert col_ptr[-6:].tolist() == [base.num_edges] * 6  # five empty column ranges at the end


def test_with_duplicates_repeats_existing_edges():
    base = graphs.molecules(1, _gen())
    graph = graphs.with_duplicates(base, 40, _gen(1))
    added = _pairs(graph) - _pairs(base)
    assert graph.num_edges == base.num_edges + 40 and sum(added.values()) == 40
    assert set(added) <= set(_pairs(base)), "a 'duplicate' that is not a copy of an existing edge"


def test_with_self_loops_adds_that_many_self_loops():
    base = graphs.random_graph(50, 3, _gen())
    graph = graphs.with_self_loops(base, 20, _gen(1))
    added = _pairs(graph) - _pairs(base)
    assert graph.num_edges == base.num_edges + 20 and sum(added.values()) == 20
    assert all(s == d for s, d in added)


@pytest.mark.parametrize("num_nodes", [0, 1, 37])
def test_empty_has_no_edges_and_an_all_zero_pointer(num_nodes):
    graph = graphs.empty(num_nodes)
    assert (graph.num_nodes, graph.num_edges) == (num_nodes, 0)
    col_ptr, row_idx, edge_id = graph.csc
    assert col_ptr.dtype == torch.int32 and col_ptr.tolist() == [0] * (num_nodes + 1)
    assert row_idx.tolist() == edge_id.tolist() == [] and row_idx.dtype == edge_id.dtype == torch.int32
    assert graph.csr.row_ptr.tolist() == [0] * (num_nodes + 1)
    graphs.check_csc(*graph.csc)


@pytest.mark.parametrize("make", [
    pytest.param(lambda g: graphs.with_duplicates(graphs.empty(5), 0, g), id="with_duplicates(empty(5), 0)"),
    pytest.param(lambda g: graphs.with_self_loops(graphs.empty(0), 0, g), id="with_self_loops(empty(0), 0)"),
    pytest.param(lambda g: graphs.random_graph(0, 3, g), id="random_graph(0 nodes)"),
])
def test_asking_a_generator_for_zero_edges_gives_no_edges(make):
    assert make(_gen()).num_edges == 0


# -- agreement with the chapter-3 specs ------------------------------------------------------------------

H, D = 3, 5  # awkward sizes: neither is a power of two


def _features(graph: graphs.Graph, seed: int = 0):
    """Per-edge v_scaled [E, H, D] and positive scores [E, H], in float64 so sums agree to rounding."""
    gen = _gen(seed)
    v_scaled = torch.randn(graph.num_edges, H, D, generator=gen, dtype=torch.float64)
    score = torch.rand(graph.num_edges, H, generator=gen, dtype=torch.float64) + 0.1
    return v_scaled, score


def _loop_scatter(v_scaled, score, src, dst, num_nodes):
    """specs.scatter_add one edge at a time."""
    numerator = torch.zeros(num_nodes, H, D, dtype=torch.float64)
    denominator = torch.zeros(num_nodes, H, dtype=torch.float64)
    for edge, node in enumerate(dst):
        numerator[node] += v_scaled[edge]
        denominator[node] += score[edge]
    return numerator / (denominator[..., None] + specs.EPS)


@pytest.mark.parametrize("build", FAMILIES + GRADED)
def test_scatter_add_over_coo_equals_csc_gather_over_the_csc(build):
    graph = build(_gen())
    v_scaled, score = _features(graph)
    coo = specs.scatter_add(v_scaled, score, graph.dst, graph.num_nodes)
    csc = specs.csc_gather(v_scaled, score, graph.csc.col_ptr, graph.csc.edge_id)
    torch.testing.assert_close(csc, coo, rtol=1e-12, atol=1e-12)


def test_scatter_add_and_csc_gather_equal_a_loop_over_the_edges():
    graph = graphs.with_isolated(graphs.with_self_loops(graphs.with_duplicates(
        graphs.random_graph(30, 4, _gen()), 15, _gen(1)), 6, _gen(2)), 3)
    v_scaled, score = _features(graph)
    expected = _loop_scatter(v_scaled, score, graph.src.tolist(), graph.dst.tolist(), graph.num_nodes)
    coo = specs.scatter_add(v_scaled, score, graph.dst, graph.num_nodes)
    csc = specs.csc_gather(v_scaled, score, graph.csc.col_ptr, graph.csc.edge_id)
    torch.testing.assert_close(coo, expected, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(csc, expected, rtol=1e-12, atol=1e-12)
    assert coo[-3:].abs().max() == 0, "an isolated node's output is 0, not 0/0"


def _loop_aggregate(node_feat, edge_weight, src, dst):
    """Each edge j adds edge_weight[j] * node_feat[src[j]] into dst[j]; weights indexed by edge id."""
    out = torch.zeros_like(node_feat)
    for edge, (source, node) in enumerate(zip(src, dst)):
        out[node] += edge_weight[edge][:, None] * node_feat[source]
    return out


@pytest.mark.parametrize("make", [
    pytest.param(lambda g: _tiny(), id="tiny"),
    pytest.param(lambda g: graphs.with_duplicates(graphs.banded(25, 3, g, width=4), 10, g), id="banded+dups"),
    pytest.param(lambda g: graphs.with_isolated(graphs.power_law(30, 90, g), 2), id="power_law+isolated"),
])
def test_csr_aggregate_over_graph_arrays_equals_a_loop_over_the_edges(make):
    graph = make(_gen())
    arrays = graphs.graph_arrays(graph)
    gen = _gen(5)
    node_feat = torch.randn(graph.num_nodes, H, D, generator=gen, dtype=torch.float64)
    weight_by_edge = torch.randn(graph.num_edges, H, generator=gen, dtype=torch.float64)
    weight_by_slot = weight_by_edge[arrays["edge_id"].long()]  # the puzzle's edge_weight is in slot order
    got = specs.csr_aggregate(node_feat, weight_by_slot, arrays["row_ptr"], arrays["col_idx"])
    expected = _loop_aggregate(node_feat, weight_by_edge, graph.src.tolist(), graph.dst.tolist())
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)


def test_a_duplicate_edge_counts_twice():
    """Node 1 receives edges 0 -> 1 and 2 -> 1; then a second copy of 0 -> 1 with the same features."""
    once = graphs.from_coo(I(0, 2), I(1, 1), 3)
    twice = graphs.from_coo(I(0, 2, 0), I(1, 1, 1), 3)
    v_scaled, score = _features(once)
    v_twice, score_twice = torch.cat([v_scaled, v_scaled[:1]]), torch.cat([score, score[:1]])

    expected = (2 * v_scaled[0] + v_scaled[1]) / ((2 * score[0] + score[1])[:, None] + specs.EPS)
    for out in (specs.scatter_add(v_twice, score_twice, twice.dst, 3),
                specs.csc_gather(v_twice, score_twice, twice.csc.col_ptr, twice.csc.edge_id)):
        torch.testing.assert_close(out[1], expected, rtol=1e-12, atol=1e-12)
    single = specs.scatter_add(v_scaled, score, once.dst, 3)[1]
    assert not torch.allclose(single, expected), "the test is blind: one copy and two copies agree"

    gen = _gen(7)
    node_feat = torch.randn(3, H, D, generator=gen, dtype=torch.float64)
    weight = torch.randn(2, H, generator=gen, dtype=torch.float64)
    weight_twice = torch.cat([weight, weight[:1]])

    def aggregate(graph, weight_by_edge):
        arrays = graphs.graph_arrays(graph)
        return specs.csr_aggregate(node_feat, weight_by_edge[arrays["edge_id"].long()], arrays["row_ptr"],
                                   arrays["col_idx"])

    extra = aggregate(twice, weight_twice)[1] - aggregate(once, weight)[1]
    torch.testing.assert_close(extra, weight[0][:, None] * node_feat[0], rtol=1e-12, atol=1e-12)


# -- chapter 4: the BSB format -----------------------------------------------------------------------------

SPARSE_GRAPHS = [pytest.param(case.graph, id=f"p13:{case.name}") for case in tensor_cores.SPARSE_ATTENTION_CASES]


def _csr_pairs(row_ptr: list[int], col_idx: list[int]) -> set[tuple[int, int]]:
    return set(zip(slot_nodes(row_ptr), col_idx))


def _bsb_by_hand(row_ptr: list[int], col_idx: list[int]):
    """to_bsb written out with loops: windows of 16 rows, their distinct columns ascending, 16 to a TCB."""
    num_rows, pairs = len(row_ptr) - 1, _csr_pairs(row_ptr, col_idx)
    window_ptr, tcb_col, tcb_mask = [0], [], []
    for first in range(0, num_rows, 16):
        columns = sorted({col for row, col in pairs if first <= row < first + 16})
        for start in range(0, len(columns), 16):
            chunk = columns[start:start + 16]
            tcb_col.append(chunk + [chunk[0]] * (16 - len(chunk)))
            tcb_mask.append([sum(1 << slot for slot, col in enumerate(chunk) if (first + r, col) in pairs)
                             for r in range(16)])
        window_ptr.append(len(tcb_col))
    counts = [window_ptr[w + 1] - window_ptr[w] for w in range(len(window_ptr) - 1)]
    order = sorted(range(len(counts)), key=lambda w: (-counts[w], w))
    return window_ptr, tcb_col, tcb_mask, order


@pytest.mark.parametrize("build", FAMILIES + SPARSE_GRAPHS)
def test_to_bsb_equals_the_format_worked_out_with_loops(build):
    row_ptr, col_idx = build(_gen()).csr
    bsb = graphs.to_bsb(row_ptr, col_idx)
    assert all(a.dtype == torch.int32 for a in bsb)
    window_ptr, tcb_col, tcb_mask, order = _bsb_by_hand(row_ptr.tolist(), col_idx.tolist())
    assert bsb.window_ptr.tolist() == window_ptr
    assert bsb.tcb_col.reshape(-1, 16).tolist() == tcb_col
    assert bsb.tcb_mask.reshape(-1, 16).tolist() == tcb_mask
    assert bsb.window_order.tolist() == order


@pytest.mark.parametrize("build", FAMILIES + GRADED + SPARSE_GRAPHS)
def test_bsb_edges_gives_back_every_distinct_pair_of_the_csr(build):
    row_ptr, col_idx = build(_gen()).csr
    rows, cols = graphs.bsb_edges(*graphs.to_bsb(row_ptr, col_idx)[:3])
    pairs = list(zip(rows.tolist(), cols.tolist()))
    assert pairs == sorted(_csr_pairs(row_ptr.tolist(), col_idx.tolist()))  # sorted, and each pair once


@pytest.mark.parametrize("build", FAMILIES + SPARSE_GRAPHS)
def test_bsb_invariants_the_kernel_relies_on(build):
    graph = build(_gen())
    bsb = graphs.to_bsb(*graph.csr)
    windows = -(-graph.num_nodes // 16)
    per_window = (bsb.window_ptr[1:] - bsb.window_ptr[:-1]).tolist()
    assert bsb.window_ptr.shape == (windows + 1,) and int(bsb.window_ptr[0]) == 0 and min(per_window, default=0) >= 0
    assert bsb.tcb_col.shape == bsb.tcb_mask.shape == (int(bsb.window_ptr[-1]), 16)
    assert bool(((bsb.tcb_mask >= 0) & (bsb.tcb_mask < 1 << 16)).all()), "a row mask has bits past the 16 slots"
    assert bool(((bsb.tcb_col >= 0) & (bsb.tcb_col < max(graph.num_nodes, 1))).all())
    assert sorted(bsb.window_order.tolist()) == list(range(windows)), "window_order is not a permutation"
    counts = [per_window[w] for w in bsb.window_order.tolist()]
    assert counts == sorted(counts, reverse=True), "the heaviest windows must come first"
    in_degree = graph.reversed().in_degree()  # entries of each CSR row
    for w in range(windows):
        rows = range(16 * w, 16 * w + 16)
        masks = bsb.tcb_mask[bsb.window_ptr[w]:bsb.window_ptr[w + 1]]
        for r in rows:
            if r >= graph.num_nodes or in_degree[r] == 0:
                assert bool((masks[:, r % 16] == 0).all()), f"row {r} has no entry but has mask bits"


def _transposed_csr(row_ptr: list[int], col_idx: list[int], num_rows: int) -> tuple[list[int], list[int]]:
    """The CSR of the transposed pattern, by hand: row j lists every i whose row holds j, ascending, once."""
    pairs = sorted({(col, row) for row, col in _csr_pairs(row_ptr, col_idx)})
    counts = Counter(row for row, _ in pairs)
    return list(itertools.accumulate((counts[j] for j in range(num_rows)), initial=0)), [col for _, col in pairs]


@pytest.mark.parametrize("build", FAMILIES + SPARSE_GRAPHS)
def test_transpose_bsb_equals_the_transposed_format_worked_out_with_loops(build):
    graph = build(_gen())
    row_ptr, col_idx = graph.incoming  # puzzle 13's CSR: row i attends to the sources of its incoming edges
    key_bsb = graphs.transpose_bsb(*graphs.to_bsb(row_ptr, col_idx)[:3], graph.num_nodes)
    assert all(a.dtype == torch.int32 for a in key_bsb)
    window_ptr, tcb_col, tcb_mask, order = _bsb_by_hand(*_transposed_csr(row_ptr.tolist(), col_idx.tolist(),
                                                                         graph.num_nodes))
    assert key_bsb.window_ptr.tolist() == window_ptr
    assert key_bsb.tcb_col.reshape(-1, 16).tolist() == tcb_col
    assert key_bsb.tcb_mask.reshape(-1, 16).tolist() == tcb_mask
    assert key_bsb.window_order.tolist() == order


@pytest.mark.parametrize("build", FAMILIES + SPARSE_GRAPHS)
def test_transposing_twice_gives_the_bsb_back(build):
    graph = build(_gen())
    bsb = graph.bsb
    again = graphs.transpose_bsb(*graphs.transpose_bsb(*bsb[:3], graph.num_nodes)[:3], graph.num_nodes)
    assert all(torch.equal(a, b) for a, b in zip(again, bsb))


def test_transpose_bsb_of_a_hand_made_pattern():
    """Rows 0 and 1 attend to column 17, row 17 to columns 0 and 17 (N=20): the key BSB's window 0 lists query 17
    for key 0 (bit 0 of key 0's mask) and window 1 lists queries 0, 1, 17 for key 17 (bits 0-2 of key 1's mask)."""
    bsb = graphs.to_bsb(_int32(0, 1, 2, *[2] * 15, 4, 4, 4), _int32(17, 17, 0, 17))
    key_bsb = graphs.transpose_bsb(*bsb[:3], 20)
    assert key_bsb.window_ptr.tolist() == [0, 1, 2]
    assert key_bsb.tcb_col.tolist() == [[17] * 16, [0, 1, 17] + [0] * 13]
    assert key_bsb.tcb_mask.tolist() == [[0b1] + [0] * 15, [0, 0b111] + [0] * 14]
    assert key_bsb.window_order.tolist() == [0, 1]


@pytest.mark.parametrize("num_rows, words", [(33, "window_ptr has 2 windows; 33 rows make 3"),
                                             (17, "tcb_col names column 17, out of range 0..16"),
                                             (-1, "num_rows must be a non-negative int, not -1")])
def test_transpose_bsb_refuses_a_wrong_row_count(num_rows, words):
    bsb = graphs.to_bsb(_int32(0, 1, *[1] * 16, 2), _int32(17, 0))  # 18 rows: row 0 attends to 17, row 17 to 0
    with pytest.raises(graphs.GraphError, match=words):
        graphs.transpose_bsb(*bsb[:3], num_rows)


def test_bsb_of_a_hand_made_graph():
    """N=40: three windows, the last half full. Window 0 has 17 distinct columns (two TCBs, the second
    with 15 padding slots), window 1 no entry (no TCB), window 2 one entry, listed twice."""
    row_ptr = _int32(0, 0, 0, *[17] * 37, 19)  # row 2: columns 16 down to 0; row 39: 7 twice
    col_idx = torch.cat([torch.arange(17, dtype=torch.int32).flip(0), _int32(7, 7)])
    bsb = graphs.to_bsb(row_ptr, col_idx)
    assert bsb.window_ptr.tolist() == [0, 2, 2, 3]
    assert bsb.tcb_col.tolist() == [list(range(16)), [16] * 16, [7] * 16]  # ascending; padding repeats slot 0
    masks = torch.zeros(3, 16, dtype=torch.int32)
    masks[0, 2], masks[1, 2], masks[2, 39 - 32] = 0xFFFF, 0b1, 0b1
    assert torch.equal(bsb.tcb_mask, masks)
    assert bsb.window_order.tolist() == [0, 2, 1]
    stats = graphs.bsb_stats(bsb)
    assert (stats.windows, stats.empty_windows, stats.tcbs, stats.edges, stats.most_tcbs) == (3, 1, 3, 18, 2)
    assert stats.fill == 18 / (3 * 256)
    assert str(stats) == "3 windows (1 empty), 3 TCBs (at most 2 in a window), 18 edges, fill 2.3%"


def test_window_order_breaks_ties_by_window_index():
    """Windows with 1, 2, 1, 2 and 0 TCBs (rows 0, 16, 32, 48 and none in 64..79) run as 1, 3, 0, 2, 4."""
    heads = {0: [0], 16: list(range(17)), 32: [5], 48: list(range(20, 40))}
    row_ptr = torch.tensor([0] + list(itertools.accumulate(len(heads.get(r, [])) for r in range(80))))
    col_idx = torch.tensor([c for r in range(80) for c in heads.get(r, [])])
    bsb = graphs.to_bsb(row_ptr, col_idx)
    assert bsb.window_ptr.tolist() == [0, 1, 3, 4, 6, 6]
    assert bsb.window_order.tolist() == [1, 3, 0, 2, 4]


def test_duplicate_entries_of_a_row_set_one_bit():
    bsb = graphs.to_bsb(_int32(0, 3, 3), _int32(1, 0, 1))
    assert bsb.tcb_col.tolist() == [[0, 1] + [0] * 14]
    assert bsb.tcb_mask.tolist() == [[0b11] + [0] * 15]
    assert graphs.bsb_stats(bsb).edges == 2


def test_bsb_of_no_rows_is_empty():
    bsb = graphs.to_bsb(_int32(0), _int32())
    assert bsb.window_ptr.tolist() == [0] and bsb.window_order.numel() == 0
    assert bsb.tcb_col.shape == bsb.tcb_mask.shape == (0, 16)
    rows, cols = graphs.bsb_edges(*bsb[:3])
    assert rows.numel() == cols.numel() == 0
    stats = graphs.bsb_stats(bsb)
    assert (stats.windows, stats.tcbs, stats.edges, stats.most_tcbs, stats.fill) == (0, 0, 0, 0, 0.0)


@pytest.mark.parametrize("row_ptr, col_idx, words", [
    (_int32(0, 2, 1, 3), _int32(0, 1, 2), "row_ptr is not monotone: row_ptr[1] = 2 > row_ptr[2] = 1"),
    (_int32(0, 1, 2), _int32(0, 2), "col_idx has entry 2 at 1, out of range 0..1"),
    (_int32(0, 1, 2), _int32(0, -1), "col_idx has a negative entry (-1) at 1"),
    (_int32(0, 1, 3), _int32(0, 1), "row_ptr ends at 3, but col_idx has 2 entries"),
    (_int32(1, 2), _int32(0), "row_ptr starts at 1; it must start at 0"),
    (_int32(0, 1), [0], "col_idx must be a torch tensor, not list"),
], ids=["non-monotone", "column out of range", "negative column", "length mismatch", "bad start", "not a tensor"])
def test_to_bsb_refuses_a_malformed_csr_by_name(row_ptr, col_idx, words):
    with pytest.raises(graphs.GraphError) as raised:
        graphs.to_bsb(row_ptr, col_idx)
    assert words in str(raised.value)
