"""PyTorch Geometric peers of puzzles 9 and 10, checked against the spec on the CPU without PyG.

PyG is installed on the GPU machine only, so a small stand-in for ``torch_geometric.utils`` (``scatter`` with
reduce="sum" and ``softmax`` over groups, in plain torch, with PyG's defaults) is put in ``sys.modules``: the
math of each peer and the arguments it passes are tested here, PyG's own kernels on the GPU.
Run: `python -m pytest tests/test_pyg_peers.py -q`.
"""

import sys
import types

import pytest
import torch

from grader.bench import measure, timing
from grader.bench import settings as bench_settings
from grader.course import graphs, registry
from grader.course.cases import Case, as_list, make_inputs, normal
from grader.course.mistakes import edge_ends

AGGREGATE, ATTENTION = registry.find(9), registry.find(10)
PEERS = {9: (AGGREGATE, "PyG scatter (slots kept)"), 10: (ATTENTION, "PyG softmax and scatter (COO kept)")}


def _scatter(src, index, dim=0, dim_size=None, reduce="sum"):
    """PyG's scatter for what the peers use: sums along dim 0; dim_size defaults to the largest index + 1."""
    assert dim == 0 and reduce == "sum", f"the stand-in sums along dim 0 only, got dim={dim}, reduce={reduce!r}"
    size = int(index.max()) + 1 if dim_size is None else dim_size
    return src.new_zeros(size, *src.shape[1:]).index_add_(0, index, src)


def _softmax(src, index, ptr=None, num_nodes=None, dim=0):
    """PyG's softmax: exp(src - its group's max), over the group's sum of those plus 1e-16."""
    assert ptr is None and dim == 0
    size = int(index.max()) + 1 if num_nodes is None else num_nodes
    group_max = src.new_full((size, *src.shape[1:]), -torch.inf).scatter_reduce(
        0, index[:, None].expand_as(src), src, "amax")
    weights = torch.exp(src - group_max[index])
    return weights / (_scatter(weights, index, dim_size=size)[index] + 1e-16)


@pytest.fixture
def fake_pyg(monkeypatch):
    utils = types.ModuleType("torch_geometric.utils")
    utils.scatter, utils.softmax = _scatter, _softmax
    package = types.ModuleType("torch_geometric")
    package.utils = utils
    monkeypatch.setitem(sys.modules, "torch_geometric", package)
    monkeypatch.setitem(sys.modules, "torch_geometric.utils", utils)


def _case(number):
    """Molecules with nodes no edge reaches at the end (a peer that leaves out dim_size or num_nodes comes
    back short), and values large enough that puzzle 10's clips, on features and on logits, both bite."""
    return Case("peer", dict(H=2, D=4), fill=normal(3.0),
                graph=lambda g: graphs.with_isolated(graphs.molecules(2, g, nodes=30, in_degree=5), 3))


@pytest.mark.parametrize("number", [pytest.param(9, marks=pytest.mark.puzzle9),
                                    pytest.param(10, marks=pytest.mark.puzzle10)])
def test_pyg_peer_matches_the_spec(fake_pyg, number):
    puzzle, name = PEERS[number]
    settings = bench_settings.BENCHES[puzzle.slug]
    inputs = make_inputs(puzzle.spec, _case(number), seed=0)[0]
    out = settings.baselines[name].run(**settings.baselines[name].prepare(inputs))
    assert measure.GraderCheck(puzzle, inputs).accepts(out)  # the grader's own check
    h = as_list(out)[0]
    assert torch.equal(h[-3:], torch.zeros_like(h[-3:])), "a node no edge reaches sums nothing"


@pytest.mark.puzzle10
def test_puzzle_10_inputs_reach_both_clips():
    """The case above is only a test of the clips if some features and some logits lie past +-5."""
    inputs = make_inputs(ATTENTION.spec, _case(10), seed=0)[0]
    src, dst = edge_ends(inputs["col_ptr"], inputs["edge_id"], inputs["row_idx"])
    product = inputs["k"][src] * inputs["q"][dst] / 2
    logits = (torch.clamp(product, -5, 5) * inputs["e"]).sum(-1)
    assert (product.abs() > 5).any() and (logits.abs() > 5).any()


@pytest.mark.parametrize("number", [pytest.param(9, marks=pytest.mark.puzzle9),
                                    pytest.param(10, marks=pytest.mark.puzzle10)])
def test_the_bench_times_the_pyg_peer_and_notes_when_pyg_is_missing(monkeypatch, fake_pyg, number):
    puzzle, name = PEERS[number]
    settings = bench_settings.BENCHES[puzzle.slug]
    monkeypatch.setattr(timing, "median_us", lambda fn: (fn(), 1.0)[1])
    monkeypatch.setattr(timing, "graph_us", lambda fn: (fn(), 1.0)[1])
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    inputs = make_inputs(puzzle.spec, _case(number), seed=0)[0]
    expected = measure.GraderCheck(puzzle, inputs)
    timed = timing._time_baseline(name, settings.baselines[name], inputs, expected, settings, use_compile=True)
    assert [(impl, us, correct) for impl, us, _, correct in timed][0] == (name, 1.0, True)
    monkeypatch.delitem(sys.modules, "torch_geometric.utils")
    monkeypatch.setitem(sys.modules, "torch_geometric", None)  # its import now fails, as where PyG is missing
    missing = timing._time_baseline(name, settings.baselines[name], inputs, expected, settings, use_compile=False)
    assert len(missing) == 1 and missing[0][1] is None and missing[0][2].startswith("not installed: torch_geometric")
