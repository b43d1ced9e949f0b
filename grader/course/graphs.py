"""Graphs for chapter 3: one `Graph` value, its COO, CSC and CSR forms, validation and generators.

An edge j runs from src[j] to dst[j]. Edge ids are the positions in the COO arrays, which may be
in any order; per-edge features (e, v_scaled, ...) are stored in that order. Duplicate edges and
self loops are allowed: the graph is a multigraph, as `index_add_` treats it.

- CSC groups edges by destination: node n's incoming edges are the slots
  col_ptr[n] <= s < col_ptr[n+1]; row_idx[s] is the source of slot s and edge_id[s] its edge id.
- CSR groups edges by source: node n's outgoing edges are the slots row_ptr[n] <= s < row_ptr[n+1],
  and col_idx[s] is the destination of slot s.
- The CSR by source with edge ids (``Graph.by_source``, chapter 5's transposed graph) is that CSR plus
  the way back to each edge: node n's outgoing edges are the slots out_ptr[n] <= s < out_ptr[n+1],
  out_dst[s] is the destination of slot s and out_edge_id[s] its edge id. It is the CSC of the
  reversed graph: a backward pass walks it to send gradients back to the sources of edges.

Within a node, slots keep increasing edge id. All index arrays are int32. Generators take a
`torch.Generator`, so a seed fixes the graph.

For chapter 4, `to_bsb` turns a CSR into the block-sparse BSB format: 16-row windows whose distinct
neighbour columns are packed into 16-column tensor-core blocks (TCBs) with a bitmap per row. For chapter 5,
`transpose_bsb` gives the BSB of the transposed pattern (key windows whose TCBs list the queries that attend
to them), which a backward pass walks to sum over the queries of each key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import torch


class GraphError(ValueError):
    """A malformed graph: the message names the array and what is wrong with it."""


class CSC(NamedTuple):
    col_ptr: torch.Tensor  # int32 [N+1]
    row_idx: torch.Tensor  # int32 [E]: source of each slot
    edge_id: torch.Tensor  # int32 [E]: edge id of each slot


class CSR(NamedTuple):
    row_ptr: torch.Tensor  # int32 [N+1]
    col_idx: torch.Tensor  # int32 [E]: destination of each slot


class BySource(NamedTuple):
    """The CSR by source with edge ids: what a kernel walks to visit each node's outgoing edges."""
    out_ptr: torch.Tensor  # int32 [N+1]
    out_dst: torch.Tensor  # int32 [E]: destination of each slot
    out_edge_id: torch.Tensor  # int32 [E]: edge id of each slot


def _check_index(name: str, values, length: int | None = None, upper: int | None = None) -> torch.Tensor:
    if not isinstance(values, torch.Tensor):
        raise GraphError(f"{name} must be a torch tensor, not {type(values).__name__}")
    if values.dtype.is_floating_point or values.dtype.is_complex or values.dtype == torch.bool:
        raise GraphError(f"{name} has dtype {values.dtype}; indices must be integers (int32)")
    if values.dim() != 1:
        raise GraphError(f"{name} must be 1-D, not of shape {tuple(values.shape)}")
    if length is not None and values.numel() != length:
        raise GraphError(f"{name} has {values.numel()} entries; expected {length}")
    if values.numel() and int(values.min()) < 0:
        raise GraphError(f"{name} has a negative entry ({int(values.min())}) at {int(values.argmin())}")
    if upper is not None and values.numel() and int(values.max()) >= upper:
        raise GraphError(f"{name} has entry {int(values.max())} at {int(values.argmax())}, out of range 0..{upper - 1}")
    if values.numel() and int(values.max()) >= 2**31:
        raise GraphError(f"{name} has entry {int(values.max())}, too large for int32 indices")
    return values.to(torch.int32, copy=True).cpu()  # a copy: the caller may change theirs later


def _check_count(ptr_name: str, ptr: torch.Tensor, index_name: str, index) -> None:
    """The pointer's last entry is the number of slots, so it must equal the index array's length."""
    length = index.numel() if isinstance(index, torch.Tensor) else None
    if length is not None and length != int(ptr[-1]):
        raise GraphError(f"{ptr_name} ends at {int(ptr[-1])}, but {index_name} has {length} entries")


def _check_pointer(name: str, ptr) -> torch.Tensor:
    ptr = _check_index(name, ptr)
    if ptr.numel() == 0:
        raise GraphError(f"{name} is empty; a pointer array has N+1 entries and starts at 0")
    if int(ptr[0]) != 0:
        raise GraphError(f"{name} starts at {int(ptr[0])}; it must start at 0")
    steps = ptr[1:] - ptr[:-1]
    if steps.numel() and int(steps.min()) < 0:
        at = int(steps.argmin())
        raise GraphError(f"{name} is not monotone: {name}[{at}] = {int(ptr[at])} > "
                         f"{name}[{at + 1}] = {int(ptr[at + 1])}")
    return ptr


def pointer(keys: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """The int32 pointer array (N+1) of slots sorted by `keys`: node n's slots s are ptr[n] <= s < ptr[n+1]."""
    counts = torch.bincount(keys.long(), minlength=num_nodes)
    return torch.cat([counts.new_zeros(1), counts.cumsum(0)]).to(torch.int32)


def slot_nodes(ptr: torch.Tensor) -> torch.Tensor:
    """The node each CSC/CSR slot belongs to: node n repeated ptr[n+1] - ptr[n] times."""
    return torch.repeat_interleave(torch.arange(ptr.numel() - 1, device=ptr.device), (ptr[1:] - ptr[:-1]).long())


@dataclass(frozen=True, eq=False)
class Graph:
    num_nodes: int
    src: torch.Tensor  # int32 [E]
    dst: torch.Tensor  # int32 [E]

    @property
    def num_edges(self) -> int:
        return self.src.numel()

    @cached_property
    def csc(self) -> CSC:
        edge_id = torch.argsort(self.dst.long(), stable=True).to(torch.int32)
        return CSC(pointer(self.dst, self.num_nodes), self.src[edge_id.long()], edge_id)

    @cached_property
    def csr(self) -> CSR:
        order = torch.argsort(self.src.long(), stable=True)
        return CSR(pointer(self.src, self.num_nodes), self.dst[order])

    @cached_property
    def by_source(self) -> BySource:
        """The CSR by source with edge ids: the CSC of the reversed graph, which keeps the edge ids."""
        return BySource(*self.reversed().csc)

    def in_degree(self) -> torch.Tensor:
        return torch.bincount(self.dst.long(), minlength=self.num_nodes)

    def reversed(self) -> Graph:
        return Graph(self.num_nodes, self.dst, self.src)

    @cached_property
    def incoming(self) -> CSR:
        """Each node's incoming neighbours (the CSR of the reversed graph): what an aggregation reads."""
        return self.reversed().csr

    @cached_property
    def bsb(self) -> BSB:
        """The BSB of the incoming CSR: row i (a query) attends to the sources of its edges."""
        return to_bsb(*self.incoming)

    @cached_property
    def key_bsb(self) -> BSB:
        """The BSB of the transposed pattern: row j (a key) lists the queries that attend to it."""
        return transpose_bsb(*self.bsb[:3], self.num_nodes)

    def __repr__(self) -> str:
        return f"Graph(num_nodes={self.num_nodes}, num_edges={self.num_edges})"


class GraphArrays(Mapping):
    """The graph under the argument names the puzzles use, each built when first asked for.

    row_ptr/col_idx here list each node's *incoming* neighbours (the CSR of the reversed graph),
    which is what an aggregation into the node reads; with edge ids in slot order. The BSB arrays
    (window_ptr, tcb_col, tcb_mask, window_order) come from that CSR: row i attends to its sources; the
    key_* arrays (KEY_BSB_NAMES) are the BSB of the transposed pattern (``Graph.key_bsb``).
    out_ptr/out_dst/out_edge_id list each node's *outgoing* edges (``Graph.by_source``).
    """

    def __init__(self, graph: Graph):
        self.graph = graph
        self._makers = {
            "src": lambda: graph.src, "dst": lambda: graph.dst, "num_nodes": lambda: graph.num_nodes,
            "col_ptr": lambda: graph.csc.col_ptr, "row_idx": lambda: graph.csc.row_idx,
            "edge_id": lambda: graph.csc.edge_id, "row_ptr": lambda: graph.incoming.row_ptr,
            "col_idx": lambda: graph.incoming.col_idx,
            **{name: (lambda name=name: getattr(graph.bsb, name)) for name in BSB._fields},
            **{KEY_BSB_NAMES[name]: (lambda name=name: getattr(graph.key_bsb, name)) for name in BSB._fields},
            **{name: (lambda name=name: getattr(graph.by_source, name)) for name in BySource._fields},
        }

    def __getitem__(self, name):
        return self._makers[name]()

    def __iter__(self):
        return iter(self._makers)

    def __len__(self):
        return len(self._makers)


def graph_arrays(graph: Graph) -> GraphArrays:
    return GraphArrays(graph)


def from_coo(src, dst, num_nodes: int) -> Graph:
    if isinstance(num_nodes, bool) or not isinstance(num_nodes, int) or num_nodes < 0:
        raise GraphError(f"num_nodes must be a non-negative int, not {num_nodes!r}")
    src = _check_index("src", src, upper=num_nodes)
    dst = _check_index("dst", dst, length=src.numel(), upper=num_nodes)
    return Graph(num_nodes, src, dst)


def from_csc(col_ptr, row_idx, edge_id=None) -> Graph:
    """The graph a CSC describes. Without edge_id, edges are numbered in slot order."""
    col_ptr = _check_pointer("col_ptr", col_ptr)
    num_nodes, num_edges = col_ptr.numel() - 1, int(col_ptr[-1])
    _check_count("col_ptr", col_ptr, "row_idx", row_idx)
    row_idx = _check_index("row_idx", row_idx, upper=num_nodes)
    if edge_id is None:
        edge_id = torch.arange(num_edges, dtype=torch.int32)
    edge_id = _check_index("edge_id", edge_id, length=num_edges, upper=num_edges)
    if torch.unique(edge_id).numel() != num_edges:
        raise GraphError("edge_id is not a permutation: some edge id appears twice")
    src = torch.empty(num_edges, dtype=torch.int32)
    dst = torch.empty(num_edges, dtype=torch.int32)
    src[edge_id.long()] = row_idx
    dst[edge_id.long()] = slot_nodes(col_ptr).to(torch.int32)
    return Graph(num_nodes, src, dst)


def from_csr(row_ptr, col_idx) -> Graph:
    """The graph a CSR describes; edges are numbered in slot order."""
    row_ptr = _check_pointer("row_ptr", row_ptr)
    num_nodes = row_ptr.numel() - 1
    _check_count("row_ptr", row_ptr, "col_idx", col_idx)
    col_idx = _check_index("col_idx", col_idx, upper=num_nodes)
    return Graph(num_nodes, slot_nodes(row_ptr).to(torch.int32), col_idx)


def from_by_source(out_ptr, out_dst, out_edge_id) -> Graph:
    """The graph a CSR by source with edge ids describes (each edge back at its id)."""
    out_ptr = _check_pointer("out_ptr", out_ptr)
    num_nodes, num_edges = out_ptr.numel() - 1, int(out_ptr[-1])
    _check_count("out_ptr", out_ptr, "out_dst", out_dst)
    out_dst = _check_index("out_dst", out_dst, upper=num_nodes)
    out_edge_id = _check_index("out_edge_id", out_edge_id, length=num_edges, upper=num_edges)
    if torch.unique(out_edge_id).numel() != num_edges:
        raise GraphError("out_edge_id is not a permutation: some edge id appears twice")
    src = torch.empty(num_edges, dtype=torch.int32)
    dst = torch.empty(num_edges, dtype=torch.int32)
    src[out_edge_id.long()] = slot_nodes(out_ptr).to(torch.int32)
    dst[out_edge_id.long()] = out_dst
    return Graph(num_nodes, src, dst)


def check_csc(col_ptr, row_idx, edge_id) -> None:
    """Raise GraphError unless the three arrays form a valid CSC."""
    from_csc(col_ptr, row_idx, edge_id)


def check_by_source(out_ptr, out_dst, out_edge_id) -> None:
    """Raise GraphError unless the three arrays form a valid CSR by source with edge ids."""
    from_by_source(out_ptr, out_dst, out_edge_id)


def check_csr(row_ptr, col_idx) -> None:
    from_csr(row_ptr, col_idx)


# -- generators ------------------------------------------------------------------------------------

def _randint(low: int, high: int, size, gen) -> torch.Tensor:
    """Uniform integers in [low, high] (both ends included); none when size is 0."""
    size = size if isinstance(size, tuple) else (size,)
    if 0 in size:
        return torch.zeros(size, dtype=torch.int64)
    if high < low:
        raise GraphError(f"cannot draw from the empty range {low}..{high}: the graph has no nodes or edges")
    return torch.randint(low, high + 1, size, generator=gen)


def molecules(batch: int, gen: torch.Generator, nodes=(20, 100), in_degree=(2, 10)) -> Graph:
    """A batch of small molecule-like graphs: block-diagonal, each node with a few sources in its molecule.

    `nodes` and `in_degree` are (low, high) ranges, or single numbers for fixed sizes.
    """
    low_n, high_n = (nodes, nodes) if isinstance(nodes, int) else nodes
    low_d, high_d = (in_degree, in_degree) if isinstance(in_degree, int) else in_degree
    sizes = _randint(low_n, high_n, batch, gen)
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), sizes.cumsum(0)])
    total = int(offsets[-1])
    molecule = torch.repeat_interleave(torch.arange(batch), sizes)
    degree = _randint(low_d, high_d, total, gen)
    dst = torch.repeat_interleave(torch.arange(total), degree)
    owner = molecule[dst]
    src = offsets[owner] + (torch.rand(dst.numel(), generator=gen) * sizes[owner]).long()
    order = torch.randperm(dst.numel(), generator=gen)  # COO in no particular order
    return Graph(total, src[order].to(torch.int32), dst[order].to(torch.int32))


def random_graph(num_nodes: int, avg_degree: float, gen: torch.Generator) -> Graph:
    """Every edge's two ends drawn uniformly: in-degrees are Poisson-like, some nodes get none."""
    num_edges = round(num_nodes * avg_degree)
    return Graph(num_nodes, _randint(0, num_nodes - 1, num_edges, gen).to(torch.int32),
                 _randint(0, num_nodes - 1, num_edges, gen).to(torch.int32))


def power_law(num_nodes: int, num_edges: int, gen: torch.Generator, exponent: float = 1.2) -> Graph:
    """Destinations drawn with probability ~ rank^-exponent: a few hubs receive most edges."""
    weights = torch.arange(1, num_nodes + 1, dtype=torch.float64) ** -exponent
    ranks = torch.randperm(num_nodes, generator=gen)  # which node is the biggest hub
    dst = ranks[torch.multinomial(weights, num_edges, replacement=True, generator=gen)]
    return Graph(num_nodes, _randint(0, num_nodes - 1, num_edges, gen).to(torch.int32), dst.to(torch.int32))


def banded(num_nodes: int, degree: int, gen: torch.Generator, width: int = 16) -> Graph:
    """Locality: each node's sources lie within `width` positions of it (clamped at the ends)."""
    dst = torch.arange(num_nodes).repeat_interleave(degree)
    src = (dst + _randint(-width, width, dst.numel(), gen)).clamp(0, num_nodes - 1)
    order = torch.randperm(dst.numel(), generator=gen)
    return Graph(num_nodes, src[order].to(torch.int32), dst[order].to(torch.int32))


def with_degrees(degrees: torch.Tensor, gen: torch.Generator) -> Graph:
    """Node n receives degrees[n] edges, from sources drawn uniformly."""
    num_nodes = degrees.numel()
    dst = torch.repeat_interleave(torch.arange(num_nodes), degrees.long())
    src = _randint(0, num_nodes - 1, dst.numel(), gen)
    order = torch.randperm(dst.numel(), generator=gen)
    return Graph(num_nodes, src[order].to(torch.int32), dst[order].to(torch.int32))


def empty(num_nodes: int) -> Graph:
    return Graph(num_nodes, torch.zeros(0, dtype=torch.int32), torch.zeros(0, dtype=torch.int32))


# -- edge cases, each added to an existing graph ------------------------------------------------------

def _add(graph: Graph, src: torch.Tensor, dst: torch.Tensor, gen: torch.Generator) -> Graph:
    """The graph plus new edges, shuffled in among the old ones."""
    src = torch.cat([graph.src, src.to(torch.int32)])
    dst = torch.cat([graph.dst, dst.to(torch.int32)])
    order = torch.randperm(src.numel(), generator=gen)
    return Graph(graph.num_nodes, src[order], dst[order])


def with_hub(graph: Graph, fraction: float, gen: torch.Generator, hub: int = 0) -> Graph:
    """Add edges into node `hub` until it receives `fraction` of all edges (contention for a scatter)."""
    if not 0 <= fraction < 1:
        raise GraphError(f"a hub's fraction of the edges must lie in [0, 1), not {fraction}")
    have = int((graph.dst == hub).sum())
    extra = max(0, round((fraction * graph.num_edges - have) / (1 - fraction)))
    return _add(graph, _randint(0, graph.num_nodes - 1, extra, gen), torch.full((extra,), hub), gen)


def with_duplicates(graph: Graph, count: int, gen: torch.Generator) -> Graph:
    """Repeat `count` existing edges (each copy counts: a multigraph)."""
    pick = _randint(0, graph.num_edges - 1, count, gen)
    return _add(graph, graph.src[pick], graph.dst[pick], gen)


def with_self_loops(graph: Graph, count: int, gen: torch.Generator) -> Graph:
    nodes = _randint(0, graph.num_nodes - 1, count, gen)
    return _add(graph, nodes, nodes, gen)


def with_isolated(graph: Graph, count: int) -> Graph:
    """Append `count` nodes that no edge reaches (their output is 0)."""
    return Graph(graph.num_nodes + count, graph.src, graph.dst)


# -- chapter 4: the BSB format (Fused3S) -----------------------------------------------------------

WINDOW = 16  # rows per row window
TCB_COLS = 16  # columns per tensor-core block


class BSB(NamedTuple):
    """A sparse pattern as dense 16x16 tiles; the argument order of puzzle 13's launcher.

    Window w holds rows 16w .. 16w+15 and its TCBs window_ptr[w] .. window_ptr[w+1]-1. A window's
    distinct neighbour columns, ascending, fill its TCBs 16 at a time; tcb_col[t, c] is the column of
    slot c (a padding slot repeats the TCB's first column, with its bits 0). Bit c of tcb_mask[t, r]
    is set when row r of the window attends to slot c. window_order lists every window, the most
    TCBs first (ties by window index), so the longest programs start first.
    """
    window_ptr: torch.Tensor  # int32 [R+1]
    tcb_col: torch.Tensor  # int32 [num_tcb, 16]
    tcb_mask: torch.Tensor  # int32 [num_tcb, 16], each in [0, 2^16)
    window_order: torch.Tensor  # int32 [R]


def to_bsb(row_ptr, col_idx) -> BSB:
    """The BSB of a CSR (row i attends to col_idx[row_ptr[i]:row_ptr[i+1]]). Duplicate entries count
    once: a bitmap holds a set. Raises GraphError on a malformed CSR."""
    row_ptr = _check_pointer("row_ptr", row_ptr)
    num_rows = row_ptr.numel() - 1
    _check_count("row_ptr", row_ptr, "col_idx", col_idx)
    col_idx = _check_index("col_idx", col_idx, upper=num_rows)  # an empty col_idx has nothing to check
    num_windows = -(-num_rows // WINDOW)
    rows, cols = slot_nodes(row_ptr), col_idx.long()
    width = max(num_rows, 1)
    pairs = torch.unique(rows * width + cols)  # sorted by row, then column; duplicates gone
    rows, cols = pairs // width, pairs % width
    windows = rows // WINDOW
    # The distinct (window, column) pairs, sorted: each window's columns in ascending order.
    slots, slot_of_pair = torch.unique(windows * width + cols, return_inverse=True)
    slot_window, slot_col = slots // width, slots % width
    per_window = torch.bincount(slot_window, minlength=num_windows)
    first_slot = torch.cumsum(per_window, 0) - per_window
    rank = torch.arange(slots.numel()) - first_slot[slot_window]  # position among the window's columns
    tcbs = -(-per_window // TCB_COLS)
    window_ptr = torch.cat([torch.zeros(1, dtype=torch.int64), torch.cumsum(tcbs, 0)])
    slot_tcb = window_ptr[:-1][slot_window] + rank // TCB_COLS
    num_tcb = int(window_ptr[-1])
    tcb_col = torch.full((num_tcb, TCB_COLS), -1, dtype=torch.int64)
    tcb_col[slot_tcb, rank % TCB_COLS] = slot_col
    tcb_col = torch.where(tcb_col < 0, tcb_col[:, :1], tcb_col)  # padding repeats the first column
    tcb_mask = torch.zeros((num_tcb, WINDOW), dtype=torch.int64)
    bits = torch.ones_like(rows) << (rank[slot_of_pair] % TCB_COLS)
    tcb_mask.index_put_((slot_tcb[slot_of_pair], rows % WINDOW), bits, accumulate=True)  # distinct bits: sum = or
    order = torch.argsort(-tcbs, stable=True)
    return BSB(window_ptr.to(torch.int32), tcb_col.to(torch.int32), tcb_mask.to(torch.int32), order.to(torch.int32))


# The transposed BSB's arrays under the names puzzle 18 gives them: its TCB slots hold query ids.
KEY_BSB_NAMES = {"window_ptr": "key_window_ptr", "tcb_col": "key_tcb_query", "tcb_mask": "key_tcb_mask",
                 "window_order": "key_window_order"}


def transpose_bsb(window_ptr, tcb_col, tcb_mask, num_rows: int) -> BSB:
    """The BSB of the transposed pattern of a BSB over num_rows rows: row j (a key) holds column i (a query)
    wherever the given BSB has row i attending to column j. So window w of the result holds keys 16w .. 16w+15,
    its TCBs list the queries that attend to them, 16 to a TCB, ascending, and bit c of tcb_mask[t, r] is set
    when key 16w + r is attended by the query in slot c. It is ``to_bsb`` of the transposed CSR."""
    if isinstance(num_rows, bool) or not isinstance(num_rows, int) or num_rows < 0:
        raise GraphError(f"num_rows must be a non-negative int, not {num_rows!r}")
    if -(-num_rows // WINDOW) != window_ptr.numel() - 1:
        raise GraphError(f"window_ptr has {window_ptr.numel() - 1} windows; {num_rows} rows make "
                         f"{-(-num_rows // WINDOW)}")
    rows, cols = bsb_edges(window_ptr, tcb_col, tcb_mask)
    if cols.numel() and int(cols.max()) >= num_rows:
        raise GraphError(f"tcb_col names column {int(cols.max())}, out of range 0..{num_rows - 1}")
    order = torch.argsort(cols * max(num_rows, 1) + rows)  # by key, then query
    return to_bsb(pointer(cols, num_rows), rows[order].to(torch.int32))


def bsb_edges(window_ptr, tcb_col, tcb_mask) -> tuple[torch.Tensor, torch.Tensor]:
    """The (row, column) pairs a BSB holds, sorted by row then column, as int64."""
    tcb_col, tcb_mask = tcb_col.long(), tcb_mask.long()
    window = slot_nodes(window_ptr.to(tcb_col.device))  # the window of each TCB
    slot = torch.arange(TCB_COLS, device=tcb_col.device)
    bit = (tcb_mask[:, :, None] >> slot) & 1  # [tcb, row, slot]
    tcb, row, col = bit.nonzero(as_tuple=True)
    rows = window[tcb] * WINDOW + row
    cols = tcb_col[tcb, col]
    order = torch.argsort(rows * (int(cols.max()) + 1 if cols.numel() else 1) + cols)
    return rows[order], cols[order]


@dataclass(frozen=True)
class BSBStats:
    windows: int
    empty_windows: int
    tcbs: int
    edges: int  # distinct (row, column) pairs
    most_tcbs: int  # in one window

    @property
    def fill(self) -> float:
        """Edges over TCB cells (16 x 16 per TCB): the share of tensor-core work that is real."""
        return self.edges / (self.tcbs * WINDOW * TCB_COLS) if self.tcbs else 0.0

    def __str__(self) -> str:
        return (f"{self.windows} windows ({self.empty_windows} empty), {self.tcbs} TCBs (at most {self.most_tcbs} "
                f"in a window), {self.edges} edges, fill {self.fill:.1%}")


def bsb_stats(bsb: BSB) -> BSBStats:
    per_window = (bsb.window_ptr[1:] - bsb.window_ptr[:-1]).long()
    bits = (bsb.tcb_mask.long()[:, :, None] >> torch.arange(TCB_COLS)) & 1
    return BSBStats(windows=per_window.numel(), empty_windows=int((per_window == 0).sum()),
                    tcbs=bsb.tcb_col.shape[0], edges=int(bits.sum()),
                    most_tcbs=int(per_window.max()) if per_window.numel() else 0)
