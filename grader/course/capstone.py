"""The capstone of chapter 5 (notebooks/05_backward.ipynb): a small RTMScore-style graph transformer on molecules,
trained with the course's kernels, and the same model in plain PyTorch to check the training curve against.

- Data (``load_molecules``): with RDKit installed (the optional extra ``capstone``: ``pip install rdkit``), the
  1,017 molecules of ChEMBL document CHEMBL2321810 with their measured activities (pIC50), as RDKit ships them for
  its Free-Wilson example (``rdkit/Contrib/FreeWilson/data/CHEMBL2321810.smi`` and ``CHEMBL2321810_act.csv``; the
  data are ChEMBL's, CC BY-SA 3.0, https://www.ebi.ac.uk/chembl/). Without RDKit, molecule-shaped random graphs
  from ``grader.course.graphs`` with a made-up label that depends on their atoms and bonds, so the notebook still
  runs. Nothing is downloaded.
- The model (``GraphTransformer``): atom and bond embeddings; a graph-attention layer with edge features over the
  bonds (puzzle 10's layer, clipped scores); a softmax attention layer over each atom's atoms within two bonds, in
  16-bit (puzzle 13's, on the BSB of that pattern); a mean over each molecule's atoms; a small MLP to one number.
- Two ways to run it: ``kernels`` given (a ``Kernels`` of puzzles 10, 13, 16 and 18's launchers, through
  ``torch.autograd.Function``s), or None: plain PyTorch written with gathers only (no ``index_add_``), so that under
  ``torch.use_deterministic_algorithms(True)`` its run is repeatable (``train`` sets that for it).

Which launchers make the ``Kernels`` (yours, or the solutions') and the command that runs both ways are
``grader/capstone_runner.py``'s: they load learners' files, which a puzzle's definition never does.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from grader.course import graphs, specs

ELEMENTS = ("C", "N", "O", "S", "F", "Cl", "Br", "P")  # any other element is one more class
BOND_TYPES = ("SINGLE", "DOUBLE", "TRIPLE", "AROMATIC")
DATA_FILES = ("Contrib/FreeWilson/data/CHEMBL2321810.smi", "Contrib/FreeWilson/data/CHEMBL2321810_act.csv")
SOURCE_CHEMBL = ("ChEMBL document CHEMBL2321810: 1,017 molecules and their pIC50, as RDKit ships them "
                 "(rdkit/Contrib/FreeWilson/data; data CC BY-SA 3.0, https://www.ebi.ac.uk/chembl/)")
SOURCE_GENERATED = ("molecule-shaped random graphs (grader.course.graphs.molecules) with a made-up label: RDKit is "
                    "not installed (pip install rdkit, the optional extra 'capstone', for the real molecules)")


@dataclass(frozen=True)
class Molecule:
    atoms: torch.Tensor  # int64 [n]: the element's index in ELEMENTS (len(ELEMENTS) for any other)
    src: torch.Tensor  # int64 [2b]: every bond in both directions
    dst: torch.Tensor  # int64 [2b]
    bonds: torch.Tensor  # int64 [2b]: the bond's index in BOND_TYPES
    label: float


# -- data ------------------------------------------------------------------------------------------------------

def rdkit_available() -> bool:
    return importlib.util.find_spec("rdkit") is not None


def chembl_files() -> tuple[Path, Path]:
    """The two data files of the installed RDKit (FileNotFoundError, with the paths, if this version lacks them)."""
    from rdkit import RDConfig

    paths = tuple(Path(RDConfig.RDContribDir) / Path(name).relative_to("Contrib") for name in DATA_FILES)
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"this RDKit does not ship {', '.join(missing)}")
    return paths


def molecule_from_smiles(smiles: str, label: float) -> Molecule | None:
    """A molecule's heavy atoms and bonds as the model reads them; None if RDKit cannot parse it."""
    from rdkit import Chem

    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return None
    atoms = [ELEMENTS.index(a.GetSymbol()) if a.GetSymbol() in ELEMENTS else len(ELEMENTS) for a in mol.GetAtoms()]
    ends, kinds = [], []
    for bond in mol.GetBonds():
        kind = str(bond.GetBondType()).rsplit(".", 1)[-1]
        i, j = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        ends += [(i, j), (j, i)]
        kinds += [BOND_TYPES.index(kind) if kind in BOND_TYPES else 0] * 2
    pairs = torch.tensor(ends, dtype=torch.int64).reshape(-1, 2)
    return Molecule(torch.tensor(atoms), pairs[:, 0], pairs[:, 1], torch.tensor(kinds, dtype=torch.int64), label)


def chembl_molecules() -> list[Molecule]:
    """The 1,017 molecules of CHEMBL2321810 with their pIC50, in the files' order (the .smi's second column names
    each molecule; the .csv gives its activity)."""
    smi_path, act_path = chembl_files()
    activity = {}
    for line in act_path.read_text().splitlines()[1:]:
        name, value = line.split(",")
        activity[name.strip()] = float(value)
    molecules = []
    for line in smi_path.read_text().splitlines():
        smiles, name = line.split()[:2]
        if name in activity and (molecule := molecule_from_smiles(smiles, activity[name])) is not None:
            molecules.append(molecule)
    return molecules


def generated_molecules(count: int, seed: int = 0) -> list[Molecule]:
    """Molecule-shaped random graphs: 12 to 30 atoms, each bonded to one to three earlier-drawn neighbours in its
    molecule (grader.course.graphs.molecules), both directions; elements and bond types drawn at random. The label
    is made up, and learnable from atoms and bonds: 5, plus 3 times the share of N and O atoms, plus the share of
    double and aromatic bonds."""
    gen = torch.Generator().manual_seed(seed)
    molecules = []
    for _ in range(count):
        graph = graphs.molecules(1, gen, nodes=(12, 30), in_degree=(1, 3))
        keep = graph.src != graph.dst
        src, dst = graph.src[keep].long(), graph.dst[keep].long()
        atoms = torch.multinomial(torch.tensor([6.0, 2, 2, 1, 1, 0.5, 0.5, 0.5, 0.5]), graph.num_nodes,
                                  replacement=True, generator=gen)
        kinds = torch.multinomial(torch.tensor([6.0, 2, 0.5, 3]), src.numel(), replacement=True, generator=gen)
        label = 5 + 3 * float(((atoms == 1) | (atoms == 2)).double().mean()) + \
            float(((kinds == 1) | (kinds == 3)).double().mean()) if kinds.numel() else 5.0
        molecules.append(Molecule(atoms, torch.cat([src, dst]), torch.cat([dst, src]), torch.cat([kinds, kinds]),
                                  label))
    return molecules


def load_molecules(count: int | None = None, seed: int = 0, use_rdkit: bool | None = None) -> tuple[list, str]:
    """(molecules, where they come from): CHEMBL2321810's if RDKit is installed (and use_rdkit is not False), else
    generated ones; `count` of them, drawn at random with `seed` (all of the real ones if None). The environment
    variable CAPSTONE_DATA=generated asks for the generated ones (tests/test_notebooks.py sets it, so that the
    notebook's stored outputs do not depend on whether RDKit is installed)."""
    if use_rdkit is None:
        use_rdkit = rdkit_available() and os.environ.get("CAPSTONE_DATA") != "generated"
    real = use_rdkit
    molecules = chembl_molecules() if real else generated_molecules(count or 200, seed)
    order = torch.randperm(len(molecules), generator=torch.Generator().manual_seed(seed)).tolist()
    return [molecules[i] for i in order[:count]], SOURCE_CHEMBL if real else SOURCE_GENERATED


# -- a batch: one block-diagonal graph, in every form the kernels and the PyTorch model read ----------------------

def _padded(groups: Sequence[torch.Tensor]) -> torch.Tensor:
    """Lists of indices as one [len(groups), longest] int64 table, -1 where a list is shorter."""
    width = max((g.numel() for g in groups), default=0)
    table = torch.full((len(groups), max(width, 1)), -1, dtype=torch.int64)
    for row, group in enumerate(groups):
        table[row, :group.numel()] = group
    return table


def _grouped(keys: torch.Tensor, values: torch.Tensor, count: int) -> list[torch.Tensor]:
    order = torch.argsort(keys, stable=True)
    return list(torch.split(values[order], torch.bincount(keys, minlength=count).tolist()))


@dataclass
class Batch:
    """Molecules as one graph of N atoms and E directed bonds (edge ids in COO order)."""
    atoms: torch.Tensor  # int64 [N]
    bonds: torch.Tensor  # int64 [E]
    labels: torch.Tensor  # float32 [B]
    bond_index: tuple  # puzzles 10 and 16: col_ptr, row_idx, edge_id (CSC), out_ptr, out_dst, out_edge_id
    reach_index: tuple  # puzzles 13 and 18: the BSB of "within two bonds", then its transpose
    src: torch.Tensor  # int64 [E]: for the PyTorch model
    dst: torch.Tensor
    in_edges: torch.Tensor  # int64 [N, most incoming]: each atom's incoming edge ids, -1 padded
    reach: torch.Tensor  # int64 [N, most]: the atoms within two bonds of each atom (itself included), -1 padded
    members: torch.Tensor  # int64 [B, most atoms]: each molecule's atoms, -1 padded

    def to(self, device) -> Batch:
        return dataclasses.replace(self, **{f.name: _moved(getattr(self, f.name), device)
                                            for f in dataclasses.fields(self)})


def _moved(value, device):
    return tuple(_moved(v, device) for v in value) if isinstance(value, tuple) else value.to(device)


def make_batch(molecules: Sequence[Molecule]) -> Batch:
    sizes = torch.tensor([m.atoms.numel() for m in molecules])
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), sizes.cumsum(0)])
    n = int(offsets[-1])
    src = torch.cat([m.src + offsets[i] for i, m in enumerate(molecules)])
    dst = torch.cat([m.dst + offsets[i] for i, m in enumerate(molecules)])
    bond_graph = graphs.from_coo(src, dst, n)
    # within two bonds: A + A^2 + I, per molecule (the batch is block-diagonal)
    adjacency = torch.zeros(n, n, dtype=torch.bool)
    adjacency[src, dst] = True
    two_bonds = adjacency | (adjacency.float() @ adjacency.float() > 0) | torch.eye(n, dtype=torch.bool)
    reached, reaching = two_bonds.nonzero(as_tuple=True)  # (i, j): atom i attends to atom j
    reach_graph = graphs.from_coo(reaching, reached, n)  # an edge j -> i: i's BSB row lists j
    return Batch(atoms=torch.cat([m.atoms for m in molecules]), bonds=torch.cat([m.bonds for m in molecules]),
                 labels=torch.tensor([m.label for m in molecules], dtype=torch.float32),
                 bond_index=(*bond_graph.csc, *bond_graph.by_source),
                 reach_index=(*reach_graph.bsb, *reach_graph.key_bsb), src=src, dst=dst,
                 in_edges=_padded(_grouped(dst, torch.arange(dst.numel()), n)),
                 reach=_padded(_grouped(reached, reaching, n)),
                 members=_padded([torch.arange(int(offsets[i]), int(offsets[i + 1])) for i in range(len(molecules))]))


def make_batches(molecules: Sequence[Molecule], size: int) -> list[Batch]:
    return [make_batch(molecules[i:i + size]) for i in range(0, len(molecules), size)]


# -- the two attentions through the kernels ------------------------------------------------------------------------

@dataclass(frozen=True)
class Kernels:
    """The four launchers the model runs: puzzles 10 and 13 forward, 16 and 18 backward; and where each came
    from (shown by ``describe``)."""
    graph_attention: Callable
    sparse_attention: Callable
    graph_attention_backward: Callable
    sparse_attention_backward: Callable
    sources: tuple[str, str, str, str] = ("", "", "", "")

    def describe(self) -> str:
        names = ("10 graph_attention", "13 sparse_attention", "16 graph_attention_backward",
                 "18 sparse_attention_backward")
        return "\n".join(f"  puzzle {name}: {source}" for name, source in zip(names, self.sources))


class GraphAttentionFunction(torch.autograd.Function):
    """Puzzle 10's kernel forward, puzzle 16's kernels backward. Puzzle 10's kernel does not return its denominators,
    which a training kernel would store: here the spec's graph_attention_den computes them."""

    @staticmethod
    def forward(ctx, kernels, q, k, v, e, col_ptr, row_idx, edge_id, out_ptr, out_dst, out_edge_id):
        h, e_out = kernels.graph_attention(q, k, v, e, col_ptr, row_idx, edge_id)
        den = specs.graph_attention_den(q, k, e, col_ptr, row_idx, edge_id)
        ctx.kernels = kernels
        ctx.save_for_backward(q, k, v, e, h, den, col_ptr, row_idx, edge_id, out_ptr, out_dst, out_edge_id)
        return h, e_out

    @staticmethod
    def backward(ctx, dh, de_out):
        q, k, v, e, h, den, *index = ctx.saved_tensors
        dh = torch.zeros_like(h) if dh is None else dh.contiguous()
        de_out = torch.zeros_like(e) if de_out is None else de_out.contiguous()
        dq, dk, dv, de = ctx.kernels.graph_attention_backward(q, k, v, e, h, den, dh, de_out, *index)
        return None, dq, dk, dv, de, *(None,) * len(index)


class SparseAttentionFunction(torch.autograd.Function):
    """Puzzle 13's kernel forward, puzzle 18's kernels backward, on float16 copies of q, k and v (the gradients
    come back for the float32 originals, as if the rounding were not there). Puzzle 13's kernel does not return its
    log-sum-exp, which a training kernel would store: here the spec's sparse_attention_lse computes it. dO is
    scaled by a power of two before it is rounded to float16, as mixed-precision training scales its loss, so that
    small gradients do not underflow; the gradients are scaled back."""

    @staticmethod
    def forward(ctx, kernels, q, k, v, *bsbs):
        q16, k16, v16 = (x.half().contiguous() for x in (q, k, v))
        o = kernels.sparse_attention(q16, k16, v16, *bsbs[:4])
        lse = specs.sparse_attention_lse(q16, k16, *bsbs[:3]).float()
        ctx.kernels = kernels
        ctx.save_for_backward(q16, k16, v16, o.half(), lse, *bsbs)
        return o

    @staticmethod
    def backward(ctx, do):
        q16, k16, v16, o16, lse, *bsbs = ctx.saved_tensors
        largest = float(do.abs().max())
        scale = 2.0 ** (8 - math.ceil(math.log2(largest))) if largest > 0 else 1.0  # largest |dO| near 256
        grads = ctx.kernels.sparse_attention_backward(q16, k16, v16, o16, lse, (do * scale).half().contiguous(),
                                                      *bsbs)
        return None, *(g / scale for g in grads), *(None,) * len(bsbs)


# -- the same attentions in PyTorch, with gathers only -------------------------------------------------------------

def _gather_rows(values: torch.Tensor, table: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """values[table] with -1 entries as rows of zeros, and the mask of the real entries."""
    real = table >= 0
    rows = values[table.clamp(min=0)]
    return rows * real.reshape(*real.shape, *(1,) * (rows.dim() - 2)).to(rows.dtype), real


def graph_attention_gathers(q, k, v, e, batch: Batch) -> torch.Tensor:
    """Puzzle 10's h (specs.graph_attention), each atom's sum over its incoming edges taken from a padded table of
    edge ids, so the backward is the gathers' (deterministic), not index_add_'s."""
    e_out = torch.clamp(k[batch.src] * q[batch.dst] / q.shape[-1] ** 0.5, -5, 5) * e
    weight = torch.exp(torch.clamp(e_out.sum(-1), -5, 5))  # [E, H]
    weighted, _ = _gather_rows(weight[..., None] * v[batch.src], batch.in_edges)  # [N, most, H, D]
    total, _ = _gather_rows(weight, batch.in_edges)  # [N, most, H]
    return weighted.sum(1) / (total.sum(1)[..., None] + specs.EPS)


def rounded_to_16_bits(x: torch.Tensor) -> torch.Tensor:
    """x rounded to float16 in the forward pass, its gradient passed through unrounded: what the kernel path does."""
    return x + (x.half().float() - x).detach()


def sparse_attention_gathers(q, k, v, batch: Batch) -> torch.Tensor:
    """Puzzle 13's softmax attention over each atom's atoms within two bonds, from a padded neighbour table; q, k and
    v rounded to float16 as the kernels take them."""
    q, k, v = (rounded_to_16_bits(x) for x in (q, k, v))
    keys, real = _gather_rows(k, batch.reach)  # [N, most, D]
    scores = torch.where(real, (q[:, None, :] * keys).sum(-1) / q.shape[-1] ** 0.5, -torch.inf)
    weights, _ = specs.masked_softmax(scores)
    values, _ = _gather_rows(v, batch.reach)
    return (weights[..., None] * values).sum(1)


# -- the model -------------------------------------------------------------------------------------------------------

class GraphTransformer(nn.Module):
    """Embeddings, a graph-attention layer over the bonds (4 heads of 16), a softmax attention layer over atoms within
    two bonds (16-bit, one head of 64), each followed by a residual and a LayerNorm, a mean over each molecule's
    atoms, and an MLP to one number."""

    def __init__(self, hidden: int = 64, heads: int = 4):
        super().__init__()
        self.heads = heads
        self.atom_embedding = nn.Embedding(len(ELEMENTS) + 1, hidden)
        self.bond_embedding = nn.Embedding(len(BOND_TYPES), hidden)
        self.bond_attention = nn.Linear(hidden, 3 * hidden)
        self.bond_features = nn.Linear(hidden, hidden)
        self.bond_out = nn.Linear(hidden, hidden)
        self.bond_norm = nn.LayerNorm(hidden)
        self.reach_attention = nn.Linear(hidden, 3 * hidden)
        self.reach_out = nn.Linear(hidden, hidden)
        self.reach_norm = nn.LayerNorm(hidden)
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, batch: Batch, kernels: Kernels | None = None) -> torch.Tensor:
        h = self.atom_embedding(batch.atoms)
        n, hidden = h.shape
        e = self.bond_features(self.bond_embedding(batch.bonds)).reshape(-1, self.heads, hidden // self.heads)
        q, k, v = (x.reshape(n, self.heads, -1).contiguous() for x in self.bond_attention(h).chunk(3, dim=-1))
        if kernels is not None:
            attended, _ = GraphAttentionFunction.apply(kernels, q, k, v, e.contiguous(), *batch.bond_index)
        else:
            attended = graph_attention_gathers(q, k, v, e, batch)
        h = self.bond_norm(h + self.bond_out(attended.reshape(n, hidden)))
        q, k, v = (x.contiguous() for x in self.reach_attention(h).chunk(3, dim=-1))
        if kernels is not None:
            attended = SparseAttentionFunction.apply(kernels, q, k, v, *batch.reach_index)
        else:
            attended = sparse_attention_gathers(q, k, v, batch)
        h = self.reach_norm(h + self.reach_out(attended))
        atoms, real = _gather_rows(h, batch.members)  # [B, most atoms, hidden]
        pooled = atoms.sum(1) / real.sum(1, keepdim=True)
        return self.head(pooled).squeeze(-1)


def new_model(seed: int, label_mean: float, device="cpu") -> GraphTransformer:
    """The model's initial weights, the same for every run with this seed; the output starts at the labels' mean."""
    torch.manual_seed(seed)
    model = GraphTransformer()
    with torch.no_grad():
        model.head[-1].bias.fill_(label_mean)
    return model.to(device)


# -- training ------------------------------------------------------------------------------------------------------

def train(model: GraphTransformer, batches: Sequence[Batch], steps: int, kernels: Kernels | None = None,
          lr: float = 3e-3) -> list[float]:
    """Adam on the mean squared error, one batch per step in order (again from the first after the last); the loss
    of every step. Without kernels the PyTorch model runs under torch.use_deterministic_algorithms(True)."""
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    was = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(kernels is None)
    losses = []
    try:
        for step in range(steps):
            batch = batches[step % len(batches)]
            loss = torch.nn.functional.mse_loss(model(batch, kernels), batch.labels)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            losses.append(loss.item())
    finally:
        torch.use_deterministic_algorithms(was)
    return losses


@torch.no_grad()
def predict(model: GraphTransformer, batches: Sequence[Batch], kernels: Kernels | None = None) -> torch.Tensor:
    return torch.cat([model(batch, kernels) for batch in batches]).cpu()


def rmse(predicted: torch.Tensor, measured: torch.Tensor) -> float:
    return float(((predicted - measured) ** 2).mean().sqrt())


# How close the kernels' loss curve stays to the PyTorch model's, step by step, over tens of steps: the two compute
# the same model, but the kernels round p and ds to 16 bits in the backward pass (the PyTorch model rounds only q, k
# and v) and sum in another order, and training amplifies such differences slowly.
CURVE_RTOL = 0.01


def curves_agree(ours: Sequence[float], theirs: Sequence[float], rtol: float) -> float:
    """The largest relative difference between two loss curves, step by step (failing if any exceeds rtol)."""
    worst = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(ours, theirs))
    if worst > rtol:
        raise AssertionError(f"the loss curves differ by up to {worst:.2%} of the PyTorch model's loss, more than "
                             f"{rtol:.0%}")
    return worst


# -- the figures, as SVG text (no plotting library needed) ----------------------------------------------------------

def _axes(left: float, top: float, size: float, title: str, xlabel: str, ylabel: str) -> list[str]:
    return [f'<rect x="{left}" y="{top}" width="{size}" height="{size}" fill="none" stroke="#888"/>',
            f'<text x="{left + size / 2}" y="{top - 10}" text-anchor="middle" font-weight="bold">{title}</text>',
            f'<text x="{left + size / 2}" y="{top + size + 32}" text-anchor="middle">{xlabel}</text>',
            f'<text x="{left - 42}" y="{top + size / 2}" text-anchor="middle" '
            f'transform="rotate(-90 {left - 42} {top + size / 2})">{ylabel}</text>']


def _ticks(left: float, top: float, size: float, low: float, high: float, axis: str, labels) -> list[str]:
    """Tick labels at the given values along the x axis (below) or the y axis (left)."""
    out = []
    for value, text in labels:
        at = (value - low) / (high - low) * size
        if axis == "x":
            out.append(f'<text x="{left + at:.1f}" y="{top + size + 14}" text-anchor="middle">{text}</text>')
        else:
            out.append(f'<text x="{left - 4}" y="{top + size - at + 4:.1f}" text-anchor="end">{text}</text>')
    return out


def figures_svg(losses: Sequence[float], pytorch_losses: Sequence[float], measured: torch.Tensor,
                predicted: torch.Tensor) -> str:
    """Two panels as one SVG: the loss curves (log scale), yours solid and the PyTorch model's dashed; and predicted
    against measured labels for the validation molecules, on the diagonal where they agree."""
    size, top, gap = 260.0, 40.0, 110.0
    left = 70.0
    right = left + size + gap
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{right + size + 30:.0f}" height="{top + size + 50:.0f}" '
             'font-family="Helvetica, Arial, sans-serif" font-size="11">']
    parts += _axes(left, top, size, "loss curves", "step", "training loss (log scale)")
    logs = [math.log10(max(x, 1e-12)) for x in (*losses, *pytorch_losses)]
    low, high = math.floor(min(logs)), math.ceil(max(logs))
    high = high if high > low else low + 1
    steps = max(len(losses) - 1, 1)
    for curve, style in ((losses, 'stroke="#4e79a7" stroke-width="2"'),
                         (pytorch_losses, 'stroke="#f28e2b" stroke-width="1.5" stroke-dasharray="5 3"')):
        heights = [(math.log10(max(x, 1e-12)) - low) / (high - low) * size for x in curve]
        points = " ".join(f"{left + i / steps * size:.1f},{top + size - y:.1f}" for i, y in enumerate(heights))
        parts.append(f'<polyline points="{points}" fill="none" {style}/>')
    parts += _ticks(left, top, size, 0, steps, "x", [(0, "0"), (steps, str(steps))])
    parts += _ticks(left, top, size, low, high, "y", [(e, f"1e{e}") for e in range(low, high + 1)])
    parts += [f'<line x1="{left + 10}" y1="{top + 12}" x2="{left + 34}" y2="{top + 12}" stroke="#4e79a7" '
              'stroke-width="2"/>', f'<text x="{left + 38}" y="{top + 16}">your kernels</text>',
              f'<line x1="{left + 10}" y1="{top + 28}" x2="{left + 34}" y2="{top + 28}" stroke="#f28e2b" '
              'stroke-width="1.5" stroke-dasharray="5 3"/>', f'<text x="{left + 38}" y="{top + 32}">PyTorch</text>']
    parts += _axes(right, top, size, "validation molecules", "measured", "predicted")
    values = [float(x) for x in (*measured.tolist(), *predicted.tolist())]
    low, high = math.floor(min(values) * 2) / 2, math.ceil(max(values) * 2) / 2
    high = high if high > low else low + 0.5
    parts.append(f'<line x1="{right}" y1="{top + size}" x2="{right + size}" y2="{top}" stroke="#bbb"/>')
    for x, y in zip(measured.tolist(), predicted.tolist()):
        parts.append(f'<circle cx="{right + (x - low) / (high - low) * size:.1f}" '
                     f'cy="{top + size - (y - low) / (high - low) * size:.1f}" r="3" fill="#4e79a7" '
                     'fill-opacity="0.7"/>')
    ticks = [(low, f"{low:g}"), (high, f"{high:g}")]
    parts += _ticks(right, top, size, low, high, "x", ticks) + _ticks(right, top, size, low, high, "y", ticks)
    return "\n".join([*parts, "</svg>"])


def step_seconds(model: GraphTransformer, batches: Sequence[Batch], kernels: Kernels | None, steps: int = 20,
                 compiled: bool = False) -> float:
    """Median seconds of one training step on a GPU (forward, backward, Adam), after a warm-up pass over the
    batches; the PyTorch model under torch.compile where `compiled`."""
    import time

    forward = torch.compile(model) if compiled else model
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-4)
    times = []
    for step in range(len(batches) + steps):
        batch = batches[step % len(batches)]
        torch.cuda.synchronize()
        start = time.perf_counter()
        loss = torch.nn.functional.mse_loss(forward(batch, kernels) if kernels else forward(batch), batch.labels)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        torch.cuda.synchronize()
        if step >= len(batches):
            times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]
