"""Graphs for chapter 3: one `Graph` value, its COO, CSC and CSR forms, validation and generators.

An edge j runs from src[j] to dst[j]. Edge ids are the positions in the COO arrays, which may be
in any order; per-edge features (e, v_scaled, ...) are stored in that order. Duplicate edges and
self loops are allowed: the graph is a multigraph, as `index_add_` treats it.

- CSC groups edges by destination: node n's incoming edges are the slots
  col_ptr[n] .. col_ptr[n+1]-1; row_idx[s] is the source of slot s and edge_id[s] its edge id.
- CSR groups edges by source: node n's outgoing edges are the slots row_ptr[n] .. row_ptr[n+1]-1,
  and col_idx[s] is the destination of slot s.

Within a node, slots keep increasing edge id. All index arrays are int32. Generators take a
`torch.Generator`, so a seed fixes the graph.
"""

from __future__ import annotations

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


def _pointer(keys: torch.Tensor, num_nodes: int) -> torch.Tensor:
    counts = torch.bincount(keys.long(), minlength=num_nodes)
    return torch.cat([torch.zeros(1, dtype=torch.int64), counts.cumsum(0)]).to(torch.int32)


def _expand(ptr: torch.Tensor) -> torch.Tensor:
    """The node of each slot: [0, 0, 1, 3, ...] from a pointer array."""
    return torch.repeat_interleave(torch.arange(ptr.numel() - 1), (ptr[1:] - ptr[:-1]).long()).to(torch.int32)


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
        return CSC(_pointer(self.dst, self.num_nodes), self.src[edge_id.long()], edge_id)

    @cached_property
    def csr(self) -> CSR:
        order = torch.argsort(self.src.long(), stable=True)
        return CSR(_pointer(self.src, self.num_nodes), self.dst[order])

    def in_degree(self) -> torch.Tensor:
        return torch.bincount(self.dst.long(), minlength=self.num_nodes)

    def reversed(self) -> Graph:
        return Graph(self.num_nodes, self.dst, self.src)

    def __repr__(self) -> str:
        return f"Graph(num_nodes={self.num_nodes}, num_edges={self.num_edges})"


def graph_arrays(graph: Graph) -> dict:
    """The graph under the argument names the puzzles use.

    row_ptr/col_idx here list each node's *incoming* neighbours (the CSR of the reversed graph),
    which is what an aggregation into the node reads; with edge ids in slot order.
    """
    incoming = graph.reversed().csr
    return {"src": graph.src, "dst": graph.dst, "num_nodes": graph.num_nodes, "col_ptr": graph.csc.col_ptr,
            "row_idx": graph.csc.row_idx, "edge_id": graph.csc.edge_id, "row_ptr": incoming.row_ptr,
            "col_idx": incoming.col_idx}


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
    dst[edge_id.long()] = _expand(col_ptr)
    return Graph(num_nodes, src, dst)


def from_csr(row_ptr, col_idx) -> Graph:
    """The graph a CSR describes; edges are numbered in slot order."""
    row_ptr = _check_pointer("row_ptr", row_ptr)
    num_nodes = row_ptr.numel() - 1
    _check_count("row_ptr", row_ptr, "col_idx", col_idx)
    col_idx = _check_index("col_idx", col_idx, upper=num_nodes)
    return Graph(num_nodes, _expand(row_ptr), col_idx)


def check_csc(col_ptr, row_idx, edge_id) -> None:
    """Raise GraphError unless the three arrays form a valid CSC."""
    from_csc(col_ptr, row_idx, edge_id)


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
