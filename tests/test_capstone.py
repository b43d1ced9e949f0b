"""Chapter 5's capstone (grader/course/capstone.py): the molecules become the graphs the kernels read, the PyTorch
model computes what the specs compute with gathers only, and a short training run with the solution kernels follows
the PyTorch model's loss curve within the stated tolerance.

Run: `python -m pytest tests/test_capstone.py -q` (a minute: the kernels run in the interpreter).
"""

import pytest
import torch
from helpers import requires_interpreter

from grader import capstone_runner
from grader.course import capstone, graphs, specs

pytestmark = [pytest.mark.puzzle16, pytest.mark.puzzle18]


@pytest.fixture(scope="module")
def batch():
    molecules = capstone.generated_molecules(3, seed=1)
    return capstone.make_batch(molecules)


def _within_two_bonds(batch) -> set[tuple[int, int]]:
    """(i, j) with j at most two bonds from i, i itself included: a breadth-first walk over the bonds, by hand."""
    neighbours = {}
    for s, d in zip(batch.src.tolist(), batch.dst.tolist()):
        neighbours.setdefault(s, set()).add(d)
    pairs = set()
    for i in range(batch.atoms.numel()):
        one = neighbours.get(i, set())
        pairs |= {(i, j) for j in {i} | one | {k for j in one for k in neighbours.get(j, set())}}
    return pairs


def test_a_batch_holds_each_molecule_apart_and_the_two_bond_pattern_in_both_bsbs(batch):
    rows, cols = graphs.bsb_edges(*batch.reach_index[:3])
    assert set(zip(rows.tolist(), cols.tolist())) == _within_two_bonds(batch)
    key_rows, key_cols = graphs.bsb_edges(*batch.reach_index[4:7])  # the transpose: (key, query)
    assert set(zip(key_cols.tolist(), key_rows.tolist())) == _within_two_bonds(batch)
    molecule = torch.full((batch.atoms.numel(),), -1)
    for index, members in enumerate(batch.members.tolist()):
        molecule[[m for m in members if m >= 0]] = index
    assert bool((molecule >= 0).all()) and bool((molecule[batch.src] == molecule[batch.dst]).all())
    assert batch.labels.shape == (3,) and batch.bonds.shape == batch.src.shape


def test_the_gather_attentions_compute_what_the_specs_compute(batch):
    gen = torch.Generator().manual_seed(0)
    n, e = batch.atoms.numel(), batch.bonds.numel()
    q, k, v = (2 * torch.randn(n, 4, 16, generator=gen, dtype=torch.float64) for _ in range(3))
    edges = torch.randn(e, 4, 16, generator=gen, dtype=torch.float64)
    h, _ = specs.graph_attention(q, k, v, edges, *batch.bond_index[:3])
    assert torch.allclose(capstone.graph_attention_gathers(q, k, v, edges, batch), h, rtol=1e-10, atol=1e-12)
    q, k, v = (torch.randn(n, 64, generator=gen).half().float() for _ in range(3))  # exact in float16
    o = specs.sparse_attention(q, k, v, *batch.reach_index[:4])
    assert torch.allclose(capstone.sparse_attention_gathers(q, k, v, batch), o, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_the_pytorch_run_is_repeatable_bit_for_bit(batch):
    mean = float(batch.labels.mean())
    first = capstone.train(capstone.new_model(3, mean), [batch], 3)
    assert first == capstone.train(capstone.new_model(3, mean), [batch], 3)
    assert not torch.are_deterministic_algorithms_enabled()  # set for the run only


@requires_interpreter
@pytest.mark.slow
def test_a_short_run_with_the_kernels_follows_the_pytorch_models_loss_curve():
    """Two steps on each of two batches: the kernels' curve within CURVE_RTOL of the PyTorch model's (both from one
    seed's weights), and the kernels' gradients those of the PyTorch model after the first step."""
    batches = capstone.make_batches(capstone.generated_molecules(4, seed=2), 2)
    mean = float(torch.cat([b.labels for b in batches]).mean())
    kernels = capstone_runner.solution_kernels()
    ours = capstone.train(capstone.new_model(0, mean), batches, 4, kernels)
    theirs = capstone.train(capstone.new_model(0, mean), batches, 4)
    assert capstone.curves_agree(ours, theirs, capstone.CURVE_RTOL) < capstone.CURVE_RTOL
    mine, reference = capstone.new_model(0, mean), capstone.new_model(0, mean)
    for model, run in ((mine, kernels), (reference, None)):
        torch.nn.functional.mse_loss(model(batches[0], run), batches[0].labels).backward()
    for (name, a), b in zip(mine.named_parameters(), reference.parameters()):
        assert torch.allclose(a.grad, b.grad, rtol=1e-2, atol=1e-3 * float(b.grad.abs().max())), name


def test_the_curves_disagreeing_is_said_with_the_difference():
    with pytest.raises(AssertionError, match="differ by up to 10.00% of the PyTorch model's loss, more than 1%"):
        capstone.curves_agree([1.0, 1.1], [1.0, 1.0], 0.01)


def test_generated_molecules_are_molecule_shaped_with_a_label_of_their_atoms_and_bonds():
    for molecule in capstone.generated_molecules(5, seed=3):
        n = molecule.atoms.numel()
        assert 12 <= n <= 30 and bool((molecule.src != molecule.dst).all())
        pairs = set(zip(molecule.src.tolist(), molecule.dst.tolist()))
        assert pairs == {(d, s) for s, d in pairs}  # every bond both ways
        share_no = float(((molecule.atoms == 1) | (molecule.atoms == 2)).double().mean())
        share_double = float(((molecule.bonds == 1) | (molecule.bonds == 3)).double().mean())
        assert molecule.label == pytest.approx(5 + 3 * share_no + share_double)


@pytest.mark.skipif(not capstone.rdkit_available(), reason="RDKit is the optional extra 'capstone': pip install rdkit")
def test_the_chembl_molecules_come_from_the_installed_rdkit():
    smi, act = capstone.chembl_files()
    assert smi.name == "CHEMBL2321810.smi" and act.name == "CHEMBL2321810_act.csv"
    molecules = capstone.chembl_molecules()
    assert len(molecules) == 1017
    assert min(m.label for m in molecules) == 4.27 and max(m.label for m in molecules) == 9.22
    ethanol = capstone.molecule_from_smiles("CCO", 1.0)
    assert ethanol.atoms.tolist() == [0, 0, 2] and sorted(zip(ethanol.src.tolist(), ethanol.dst.tolist())) == [
        (0, 1), (1, 0), (1, 2), (2, 1)]
    benzene = capstone.molecule_from_smiles("c1ccccc1", 1.0)
    assert set(benzene.bonds.tolist()) == {capstone.BOND_TYPES.index("AROMATIC")}


def test_the_figures_draw_both_curves_and_every_validation_molecule():
    import xml.dom.minidom

    svg = capstone.figures_svg([0.5, 0.2, 0.1], [0.5, 0.21, 0.1], torch.tensor([5.0, 6.5]), torch.tensor([5.2, 6.1]))
    drawing = xml.dom.minidom.parseString(svg).documentElement
    curves = drawing.getElementsByTagName("polyline")
    assert [len(c.getAttribute("points").split()) for c in curves] == [3, 3]
    assert len(drawing.getElementsByTagName("circle")) == 2


def test_the_kernels_say_where_each_came_from_and_a_changed_file_is_named(monkeypatch):
    """Puzzle 10 solved, 13 solved then edited, 16 never graded, 18 given by the notebook: each source says so."""
    statuses = {10: "passed", 13: "changed:passed", 16: "ungraded", 18: "passed"}
    monkeypatch.setattr(capstone_runner.progress, "rows",
                        lambda impl: [(n, "", "", statuses.get(n, "ungraded")) for n in range(1, 19)])
    monkeypatch.setattr(capstone_runner.loader, "load_launcher", lambda puzzle, impl: f"{impl} {puzzle.number}")
    def mine(*args):
        return None

    kernels = capstone_runner.course_kernels({18: mine})
    assert (kernels.graph_attention, kernels.sparse_attention, kernels.graph_attention_backward,
            kernels.sparse_attention_backward) == ("puzzles 10", "solutions 13", "solutions 16", mine)
    text = kernels.describe()
    assert "puzzles/p10_graph_attention.py (solved)" in text
    assert "changed since it was solved: grade it again" in text
    assert "puzzle 16 is not solved in puzzles/ yet" in text
    assert "yours, from this notebook" in text


@pytest.mark.parametrize("mine", [{11: print}, {10: "graph_attention"}])
def test_a_wrong_entry_in_my_kernels_is_named(mine):
    with pytest.raises(ValueError, match="MY_KERNELS maps puzzle numbers"):
        capstone_runner.course_kernels(mine)
