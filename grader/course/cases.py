"""The one input generator: named cases, value fills, and inputs built from a spec's annotations.

A case names its sizes (``dims``), the block sizes the launcher is called with (``blocks``)
and how values are drawn (``fill``). Shapes and dtypes come from the spec's jaxtyping
annotations, so a case never repeats them.
"""

from __future__ import annotations

import inspect
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import torch

from grader.course.graphs import Graph, graph_arrays

# A fill draws float64 values for one input: fill(arg_name, shape, generator) -> tensor.
Fill = Callable[[str, tuple, torch.Generator], torch.Tensor]

_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
           "float64": torch.float64, "int32": torch.int32, "int64": torch.int64}


def normal(scale: float = 1.0, shift: float = 0.0) -> Fill:
    def fill(name, shape, gen):
        return torch.randn(shape, generator=gen, dtype=torch.float64) * scale + shift
    fill.__doc__ = f"normal, scale {scale:g}" + (f", shifted by {shift:g}" if shift else "")
    return fill


def per_input(**fills: Fill) -> Fill:
    """A different fill for each named input; inputs not named get a standard normal."""
    default = normal()

    def fill(name, shape, gen):
        return fills.get(name, default)(name, shape, gen)
    fill.__doc__ = "chosen per input: " + ", ".join(fills)
    return fill


def uniform(low: float, high: float) -> Fill:
    def fill(name, shape, gen):
        return low + (high - low) * torch.rand(shape, generator=gen, dtype=torch.float64)
    fill.__doc__ = f"uniform in [{low:g}, {high:g})"
    return fill


def odd_rows_negated(fill: Fill) -> Fill:
    """fill with its odd rows (or elements, for a 1-D input) negated."""
    def negated(name, shape, gen):
        values = fill(name, shape, gen)
        values[1::2] *= -1
        return values
    negated.__doc__ = f"{fill.__doc__}, negated on odd rows"
    return negated


def rows(make_row: Callable[[int, int, torch.Generator], torch.Tensor], doc: str) -> Fill:
    """Fill a 2-D input row by row: make_row(row_index, row_length, generator)."""
    def fill(name, shape, gen):
        return torch.stack([make_row(i, shape[1], gen).to(torch.float64) for i in range(shape[0])])
    fill.__doc__ = doc
    return fill


@dataclass(frozen=True)
class Case:
    name: str
    dims: Mapping[str, int]  # sizes; and any plain number a spec takes (puzzle 17's causal flag and scale)
    blocks: Mapping[str, int] = field(default_factory=dict)
    fill: Fill = normal()
    about: str = ""  # what the case is for, shown when it fails
    # For graph puzzles: builds the graph from the case's generator. Its sizes N and E join the dims,
    # and spec arguments named like graph arrays (dst, col_ptr, edge_id, ...) come from it.
    graph: Callable[[torch.Generator], Graph] | None = None
    half: torch.dtype | None = None  # make the spec's float16 inputs in this dtype instead (torch.bfloat16)
    # Natively, run the launcher twice on the same inputs: the two results must be the same bits. (The interpreter
    # runs one program after another, so only a GPU can show an order-dependent sum, such as atomics make.)
    repeat: bool = False


def evaluate_formula(formula: str, dims: Mapping[str, int]):
    """A formula in a case's sizes, such as a shape's "N+1" or a budget's "16*D*num_tcb": names and arithmetic
    only (no builtins)."""
    return eval(formula, {"__builtins__": {}}, dict(dims))


@dataclass(frozen=True)
class Arg:
    """One argument of a spec, read from its annotation."""
    name: str
    dtype: torch.dtype | None  # None for a plain Python number (int, float or bool): the case's dims hold it
    dims: tuple[str, ...]

    def shape(self, dims: Mapping[str, int]) -> tuple[int, ...]:
        """Sizes from the case's dims; a dimension may be an expression such as "N+1"."""
        return tuple(dims[d] if d in dims else int(evaluate_formula(d, dims)) for d in self.dims)


def _arg_from_annotation(name: str, annotation) -> Arg:
    if annotation in (int, float, bool):  # a size, a scale, a flag: taken from the case's dims as it is
        return Arg(name, None, ())
    dim_str = getattr(annotation, "dim_str", None)
    dtypes = getattr(annotation, "dtypes", None)
    if dim_str is None or not dtypes or dtypes[0] not in _DTYPES:
        raise TypeError(f"spec argument {name!r} needs a jaxtyping annotation such as Float32[Tensor, 'N0']")
    return Arg(name, _DTYPES[dtypes[0]], tuple(dim_str.split()))


def spec_args(spec: Callable) -> list[Arg]:
    params = inspect.signature(spec).parameters.values()
    return [_arg_from_annotation(p.name, p.annotation) for p in params]


def spec_outputs(spec: Callable) -> list[Arg]:
    annotation = inspect.signature(spec).return_annotation
    parts = getattr(annotation, "__args__", None) or (annotation,)
    return [_arg_from_annotation(f"out{i}", part) for i, part in enumerate(parts)]


def case_seed(seed: int, case: Case) -> int:
    """Each case draws from its own stream, so adding a case does not change the others."""
    return (seed * 1_000_003 + zlib.crc32(case.name.encode())) % (2**63)


def case_dims(case: Case, graph: Graph | None) -> dict[str, int]:
    return {**case.dims, "N": graph.num_nodes, "E": graph.num_edges} if graph is not None else dict(case.dims)


class Kept:
    """The last `limit` values of a pure function of (a spec or puzzle, a case, a seed), kept in this process for the
    next grading of the same case: a --watch re-grade, a notebook's, and the tests, which grade each puzzle's cases
    at one seed again and again (its inputs, its float64 reference and its allowed error cost a backward puzzle's
    grading a fifth of its time). Keyed by identity, and checked, as a Case holds dicts and is no key."""

    def __init__(self, limit: int):
        self.limit, self.values, self.lock = limit, OrderedDict(), threading.Lock()

    def get(self, owner, case: Case, seed: int):
        with self.lock:
            found = self.values.get((id(owner), id(case), seed))
            if found is None or found[0] is not owner or found[1] is not case:
                return None
            self.values.move_to_end((id(owner), id(case), seed))
            return found[2]

    def put(self, owner, case: Case, seed: int, value) -> None:
        with self.lock:
            self.values[(id(owner), id(case), seed)] = (owner, case, value)
            while len(self.values) > self.limit:
                self.values.popitem(last=False)


_drawn = Kept(48)


def make_inputs(spec: Callable, case: Case, seed: int) -> tuple[dict[str, torch.Tensor | int], dict[str, int]]:
    """The inputs of one case, in the spec's dtypes, on the CPU; and its sizes (with N, E for a graph). Each call
    gets tensors of its own (a kernel may write into its inputs: the judge checks it did not), drawn once per
    process (``Kept``).

    A backward spec's saved arguments (``specs.saves``) are drawn like the others first, then replaced
    by what the forward saves, computed from the drawn inputs (``with_saved``)."""
    drawn = _drawn.get(spec, case, seed)
    if drawn is None:
        drawn = _draw_inputs(spec, case, seed)
        _drawn.put(spec, case, seed, drawn)
    inputs, dims = drawn
    return {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}, dict(dims)


def _draw_inputs(spec: Callable, case: Case, seed: int) -> tuple[dict[str, torch.Tensor | int], dict[str, int]]:
    gen = torch.Generator().manual_seed(case_seed(seed, case))
    graph = case.graph(gen) if case.graph is not None else None
    from_graph = graph_arrays(graph) if graph is not None else {}
    dims = case_dims(case, graph)
    inputs: dict[str, torch.Tensor | int] = {}
    for arg in spec_args(spec):
        if arg.name in from_graph:
            inputs[arg.name] = from_graph[arg.name]
            _learn_dims(arg, inputs[arg.name], dims)
        elif arg.dtype is None:
            inputs[arg.name] = dims[arg.name]
        else:
            values = case.fill(arg.name, arg.shape(dims), gen)
            dtype = case.half if case.half is not None and arg.dtype == torch.float16 else arg.dtype
            inputs[arg.name] = values.to(dtype).contiguous()
    return with_saved(spec, inputs), dims


def with_saved(spec: Callable, inputs: dict) -> dict:
    """The inputs with each argument the spec marks as saved (``specs.saves``) replaced by what the forward
    saves: its function, called on the inputs its parameters name, in float64 from the values as drawn and cast
    (the exact values the kernel sees), then cast to the argument's dtype and device. Other specs: unchanged."""
    saved = getattr(spec, "saved", {})
    if not saved:
        return inputs
    exact = {k: v.to(torch.float64) if isinstance(v, torch.Tensor) and v.is_floating_point() else v
             for k, v in inputs.items()}
    replaced = dict(inputs)
    for name, compute in saved.items():
        value = compute(**{p: exact[p] for p in inspect.signature(compute).parameters})
        replaced[name] = value.to(inputs[name].dtype).contiguous()
    return replaced


def _learn_dims(arg: Arg, value, dims: dict[str, int]) -> None:
    """Sizes named only by graph arrays (num_tcb of tcb_col, R of window_order) join the dims."""
    if isinstance(value, torch.Tensor):
        for name, size in zip(arg.dims, value.shape):
            if name.isidentifier():
                dims.setdefault(name, size)


def reference(spec: Callable, inputs: Mapping[str, torch.Tensor | int]) -> list[torch.Tensor]:
    """The spec on float64 copies of the inputs (the exact values the kernel sees), as a list."""
    upcast = {k: v.to(torch.float64) if isinstance(v, torch.Tensor) and v.is_floating_point() else v
              for k, v in inputs.items()}
    return as_list(spec(**upcast))


def as_list(out) -> list:
    """A launcher's or spec's result as a list of outputs: one tensor, or a tuple of them."""
    return list(out) if isinstance(out, (tuple, list)) else [out]
