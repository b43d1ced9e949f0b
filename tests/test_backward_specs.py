"""Chapter 5's references are right: the backward specs are the forward specs' gradients, the saved tensors the
grader hands a kernel are its forward's, and the closed forms the hints compare with agree with both.

- ``torch.autograd.gradcheck`` of each forward spec on tiny float64 inputs (finite differences against autograd);
- each backward spec against a vector-Jacobian product taken by central differences of its forward spec, at the
  inputs the grader makes (so ``@saves`` and the case generator are in the loop);
- the saved tensors (y, lse, h, den, o) against plain-Python loops;
- the closed forms of grader/course/mistakes.py, with no mistake switched on, against the autograd specs, on every
  case of their puzzles.

Run: `python -m pytest tests/test_backward_specs.py -q`.
"""

import math

import pytest
import torch

from grader.course import graphs, registry, specs
from grader.course.cases import Case, case_seed, make_inputs, normal, per_input, reference
from grader.course.mistakes import (
    attention_backward,
    bsb_backward,
    cross_entropy_backward,
    flash_backward,
    softmax_backward,
)

pytestmark = [pytest.mark.puzzle14, pytest.mark.puzzle15, pytest.mark.puzzle16, pytest.mark.puzzle17,
              pytest.mark.puzzle18]


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _csc(graph: graphs.Graph) -> tuple:
    return tuple(graph.csc)  # col_ptr, row_idx, edge_id: the rest of graph_attention's arguments


def _tiny_graph() -> graphs.Graph:
    """Six nodes: a hub (0) into which four edges run, a duplicate edge, a self loop, node 5 with no edge at all."""
    src = torch.tensor([1, 2, 3, 4, 2, 3, 3, 0, 1], dtype=torch.int32)
    dst = torch.tensor([0, 0, 0, 0, 1, 1, 1, 2, 3], dtype=torch.int32)
    return graphs.from_coo(src, dst, 6)


# -- the forward specs: autograd agrees with finite differences ---------------------------------------------------

def test_gradcheck_of_the_softmax_spec():
    x = torch.randn(3, 7, generator=_gen(), dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(specs.softmax, (x,))


def test_gradcheck_of_the_cross_entropy_with_ignored_rows():
    x = torch.randn(5, 6, generator=_gen(), dtype=torch.float64, requires_grad=True)
    target = torch.tensor([2, specs.IGNORE_INDEX, 0, 5, specs.IGNORE_INDEX])
    assert torch.autograd.gradcheck(
        lambda logits: torch.nn.functional.cross_entropy(logits, target, ignore_index=specs.IGNORE_INDEX), (x,))


@pytest.mark.slow
def test_gradcheck_of_the_graph_attention_spec_with_clipped_features_and_logits():
    """Scaled so that some features and logits lie beyond +-5 (none within the step of a bound)."""
    graph, gen = _tiny_graph(), _gen(1)
    q, k = (3 * torch.randn(6, 2, 3, generator=gen, dtype=torch.float64) for _ in range(2))
    v = torch.randn(6, 2, 3, generator=gen, dtype=torch.float64)
    e = 2 * torch.randn(graph.num_edges, 2, 3, generator=gen, dtype=torch.float64)
    leaves = tuple(t.requires_grad_() for t in (q, k, v, e))
    _, e_out = specs.graph_attention(*leaves, *_csc(graph))
    product = (k[graph.src.long()] * q[graph.dst.long()] / 3 ** 0.5).detach()
    assert (product.abs() > 5).any() and ((product.abs() - 5).abs() > 1e-3).all()
    assert (e_out.sum(-1).abs() > 5).any()
    assert torch.autograd.gradcheck(lambda *t: specs.graph_attention(*t, *_csc(graph)), leaves)


def test_gradcheck_of_the_masked_attention_spec_with_queries_that_see_no_key():
    """Causal with N = 6 > T = 4: queries 0 and 1 see no key (their output is 0, their gradients 0, never NaN)."""
    gen = _gen(2)
    q, k, v = (torch.randn(rows, 3, generator=gen, dtype=torch.float64, requires_grad=True) for rows in (6, 4, 4))
    assert torch.autograd.gradcheck(lambda *t: specs.masked_attention(*t, True, 0.7)[0], (q, k, v))
    o, lse = specs.masked_attention(q, k, v, True, 0.7)
    assert torch.equal(o[:2], torch.zeros(2, 3, dtype=torch.float64)) and bool(lse[:2].isneginf().all())
    grads = torch.autograd.grad(o.sum(), (q, k, v))
    assert all(bool(g.isfinite().all()) for g in grads) and torch.equal(grads[0][:2], torch.zeros(2, 3).double())


def test_the_causal_mask_ends_at_the_last_query_and_key():
    assert specs.causal_visible(3, 3).tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    assert specs.causal_visible(2, 4).tolist() == [[True, True, True, False], [True, True, True, True]]
    assert specs.causal_visible(4, 2).tolist() == [[False, False], [False, False], [True, False], [True, True]]


# -- the backward specs: a vector-Jacobian product by central differences --------------------------------------

def _numerical_vjp(forward, leaves: list[torch.Tensor], grads: tuple, step: float = 1e-6) -> list[torch.Tensor]:
    """sum over outputs of grad * d output / d leaf, for every element of every leaf, by central differences."""
    result = []
    for leaf in leaves:
        vjp = torch.zeros_like(leaf)
        for index in range(leaf.numel()):
            values = []
            for sign in (1, -1):
                moved = leaf.clone()
                moved.view(-1)[index] += sign * step
                outputs = forward(*[moved if other is leaf else other for other in leaves])
                outputs = outputs if isinstance(outputs, tuple) else (outputs,)
                values.append(sum(float((out * grad).sum()) for out, grad in zip(outputs, grads)))
            vjp.view(-1)[index] = (values[0] - values[1]) / (2 * step)
        result.append(vjp)
    return result


def _exact(inputs) -> dict:
    return {k: v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v for k, v in inputs.items()}


def _logits_drawn(case: Case, seed: int) -> torch.Tensor:
    """The logits a softmax_backward case drew for y (its first argument), before @saves took their softmax; as
    float32, as make_inputs casts them."""
    shape = (case.dims["N0"], case.dims["T"])
    return case.fill("y", shape, _gen(case_seed(seed, case))).float().double()


def test_softmax_backward_is_the_softmax_gradient_at_the_logits_the_grader_drew():
    case = Case("tiny", dict(N0=3, T=5), fill=per_input(y=normal(2.0)))
    inputs = make_inputs(specs.softmax_backward, case, seed=0)[0]
    (expected,) = _numerical_vjp(specs.softmax, [_logits_drawn(case, 0)], (_exact(inputs)["dy"],))
    assert torch.allclose(reference(specs.softmax_backward, inputs)[0], expected, rtol=1e-6, atol=1e-7)


def test_cross_entropy_backward_is_the_mean_loss_gradient_times_dloss():
    def targets(name, shape, gen):
        return torch.tensor([3.0, specs.IGNORE_INDEX, 0.0, 6.0])

    case = Case("tiny", dict(N0=4, V=7), fill=per_input(target=targets))
    inputs = _exact(make_inputs(specs.cross_entropy_backward, case, seed=0)[0])

    def loss(x):
        return torch.nn.functional.cross_entropy(x, inputs["target"], ignore_index=specs.IGNORE_INDEX)
    (expected,) = _numerical_vjp(loss, [inputs["x"]], (inputs["dloss"],))
    got = reference(specs.cross_entropy_backward, make_inputs(specs.cross_entropy_backward, case, seed=0)[0])[0]
    assert torch.allclose(got, expected, rtol=1e-6, atol=1e-8)
    assert torch.equal(got[1], torch.zeros(7, dtype=torch.float64))  # the ignored row


@pytest.mark.slow
def test_graph_attention_backward_is_the_layers_gradient_for_q_k_v_and_e():
    case = Case("tiny", dict(H=2, D=3), fill=per_input(q=normal(3.0), k=normal(3.0), e=normal(2.0)),
                graph=lambda gen: _tiny_graph())
    inputs = _exact(make_inputs(specs.graph_attention_backward, case, seed=0)[0])
    leaves = [inputs[name] for name in "qkve"]
    expected = _numerical_vjp(lambda *t: specs.graph_attention(*t, *(inputs[n] for n in ("col_ptr", "row_idx",
                                                                                       "edge_id"))),
                              leaves, (inputs["dh"], inputs["de_out"]))
    got = reference(specs.graph_attention_backward, make_inputs(specs.graph_attention_backward, case, seed=0)[0])
    for name, mine, theirs in zip(("dq", "dk", "dv", "de"), got, expected):
        assert torch.allclose(mine, theirs, rtol=1e-5, atol=1e-6), name
    assert torch.equal(got[1][5], torch.zeros(2, 3, dtype=torch.float64))  # node 5 sends no edge: dk = 0


def test_attention_backward_is_the_gradient_of_attention_with_its_scale_and_mask():
    case = Case("tiny", dict(N=5, T=3, D=4, causal=True, scale=0.7))  # queries 0 and 1 see no key
    inputs = _exact(make_inputs(specs.attention_backward, case, seed=0)[0])
    leaves = [inputs[name] for name in "qkv"]
    expected = _numerical_vjp(lambda *t: specs.masked_attention(*t, True, 0.7)[0], leaves, (inputs["do"],))
    got = reference(specs.attention_backward, make_inputs(specs.attention_backward, case, seed=0)[0])
    for name, mine, theirs in zip(("dq", "dk", "dv"), got, expected):
        assert torch.allclose(mine, theirs, rtol=1e-6, atol=1e-8), name
    assert torch.equal(got[0][:2], torch.zeros(2, 4, dtype=torch.float64))


def test_sparse_attention_backward_is_the_gradient_of_puzzle_13s_attention():
    """On the tiny graph: a hub row, a duplicate edge (counted once), a node with no edge (dq, dk, dv all 0)."""
    case = Case("tiny", dict(D=3), graph=lambda gen: _tiny_graph())
    inputs = _exact(make_inputs(specs.sparse_attention_backward, case, seed=0)[0])
    bsb = [inputs[name] for name in ("window_ptr", "tcb_col", "tcb_mask", "window_order")]
    expected = _numerical_vjp(lambda *t: specs.sparse_attention(*t, *bsb), [inputs[name] for name in "qkv"],
                              (inputs["do"],))
    got = reference(specs.sparse_attention_backward, make_inputs(specs.sparse_attention_backward, case, seed=0)[0])
    for name, mine, theirs in zip(("dq", "dk", "dv"), got, expected):
        assert torch.allclose(mine, theirs, rtol=1e-6, atol=1e-8), name
    assert all(torch.equal(g[5], torch.zeros(3, dtype=torch.float64)) for g in got)


def test_the_clip_passes_the_gradient_at_exactly_5_and_not_beyond():
    """torch's clamp, which the spec uses: the gradient is 1 at the bounds and 0 past them."""
    x = torch.tensor([-5.01, -5.0, 0.0, 5.0, 5.01], dtype=torch.float64, requires_grad=True)
    (grad,) = torch.autograd.grad(torch.clamp(x, -5, 5).sum(), x)
    assert grad.tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]


# -- the saved tensors the grader hands a kernel ------------------------------------------------------------------

def test_y_is_the_softmax_of_the_logits_drawn_and_lse_their_log_sum_exp():
    case = Case("c", dict(N0=4, T=9))
    inputs = make_inputs(specs.softmax_backward, case, seed=3)[0]
    for row, probabilities in zip(_logits_drawn(case, 3).tolist(), inputs["y"].double().tolist()):
        top = max(row)
        total = sum(math.exp(value - top) for value in row)
        assert probabilities == pytest.approx([math.exp(value - top) / total for value in row], rel=1e-6)
    ce = make_inputs(specs.cross_entropy_backward, registry.find(15).cases[0], seed=3)[0]
    for row, lse in zip(ce["x"].double().tolist(), ce["lse"].tolist()):
        top = max(row)
        assert lse == pytest.approx(top + math.log(sum(math.exp(value - top) for value in row)), rel=1e-6)


@pytest.mark.slow
def test_h_and_den_are_the_forwards_output_and_sum_of_weights_plus_eps():
    """By a loop over the edges, as the layer's math reads."""
    case = registry.find(16).cases[0]
    inputs = _exact(make_inputs(specs.graph_attention_backward, case, seed=2)[0])
    q, k, v, e = (inputs[name] for name in "qkve")
    graph = graphs.from_csc(inputs["col_ptr"], inputs["row_idx"], inputs["edge_id"])
    heads, feats = q.shape[1:]
    numerator = torch.zeros_like(q)
    den = torch.full(q.shape[:2], specs.EPS, dtype=torch.float64)
    for j, (s, n) in enumerate(zip(graph.src.tolist(), graph.dst.tolist())):
        for h in range(heads):
            e_out = [min(max(k[s, h, d] * q[n, h, d] / feats ** 0.5, -5), 5) * e[j, h, d] for d in range(feats)]
            weight = math.exp(min(max(float(sum(e_out)), -5), 5))
            den[n, h] += weight
            numerator[n, h] += weight * v[s, h]
    assert torch.allclose(inputs["den"], den, rtol=1e-6)
    assert torch.allclose(inputs["h"], numerator / den[..., None], rtol=1e-5, atol=1e-6)


def test_o_and_lse_are_the_attention_and_log_sum_exp_of_what_each_query_sees():
    """By loops over the keys each query sees (j <= i + T - N with causal), as the math reads."""
    for causal in (False, True):
        case = Case("c", dict(N=6, T=4, D=3, causal=causal, scale=0.6))
        inputs = make_inputs(specs.attention_backward, case, seed=4)[0]
        exact = _exact(inputs)
        for i in range(6):
            seen = [j for j in range(4) if not causal or j <= i + 4 - 6]
            scores = [0.6 * float(exact["q"][i] @ exact["k"][j]) for j in seen]
            if not seen:
                assert inputs["lse"][i] == -math.inf and inputs["o"][i].abs().max() == 0
                continue
            top = max(scores)
            total = sum(math.exp(s - top) for s in scores)
            assert float(inputs["lse"][i]) == pytest.approx(top + math.log(total), rel=1e-6)
            o = sum(math.exp(s - top) / total * exact["v"][j] for s, j in zip(scores, seen))
            assert torch.allclose(exact["o"][i], o, rtol=2e-3, atol=1e-3)  # o is float16, as the forward saved it


def test_the_sparse_lse_is_the_log_sum_exp_over_each_rows_distinct_neighbours():
    case = registry.find(18).cases[0]
    inputs = make_inputs(specs.sparse_attention_backward, case, seed=5)[0]
    exact = _exact(inputs)
    neighbours = {}  # read back by hand from the BSB's bitmap, the only form of the graph the puzzle is given
    for tcb, window in enumerate(graphs.slot_nodes(inputs["window_ptr"]).tolist()):
        for r in range(16):
            for c in range(16):
                if inputs["tcb_mask"][tcb, r] >> c & 1:
                    neighbours.setdefault(16 * window + r, set()).add(int(inputs["tcb_col"][tcb, c]))
    for i in range(exact["q"].shape[0]):
        scores = [float(exact["q"][i] @ exact["k"][j]) / 32 ** 0.5 for j in neighbours.get(i, ())]
        expected = max(scores) + math.log(sum(math.exp(x - max(scores)) for x in scores)) if scores else -math.inf
        assert float(inputs["lse"][i]) == pytest.approx(expected, rel=1e-6)


# -- the closed forms the hints compare with ---------------------------------------------------------------------

@pytest.mark.parametrize("number", [14, 15, 16, 17, 18])
@pytest.mark.slow
def test_the_closed_forms_with_no_mistake_equal_the_autograd_specs_on_every_case(number):
    """Within a tenth of the puzzle's tolerance: they take the saved tensors as given (rounded to float32, or to 16
    bits), where autograd recomputes them, so they differ by that rounding (on 14's constant-dy rows, by
    c y (1 - sum y))."""
    puzzle = registry.find(number)
    closed_form = {14: lambda i: softmax_backward(i["y"], i["dy"]), 15: cross_entropy_backward,
                   16: attention_backward, 17: flash_backward, 18: bsb_backward}[number]
    for case in puzzle.cases:
        inputs = make_inputs(puzzle.spec, case, seed=1)[0]
        got = closed_form(_exact(inputs))
        for name, mine, expected, tolerance in zip(puzzle.outputs, got if isinstance(got, tuple) else (got,),
                                                   reference(puzzle.spec, inputs), puzzle.tolerances):
            allowed = tolerance.allowed(_exact(inputs), expected)
            assert bool(((mine - expected).abs() * 10 <= allowed).all()), f"{case.name}: {name}"


def test_the_bound_case_puts_products_and_logits_exactly_on_5():
    """The trap of puzzle 16's case 'values exactly at the clip bounds': many products and logits are exactly +-5 (in
    float64 here, and in float32 too: every value involved is a short binary fraction)."""
    from grader.course.mistakes import attention_terms

    puzzle = registry.find(16)
    case = next(c for c in puzzle.cases if c.name == "values exactly at the clip bounds")
    for seed in range(3):
        terms = attention_terms(_exact(make_inputs(puzzle.spec, case, seed)[0]))
        on_product, on_logit = terms.product.abs() == 5, terms.logit.abs() == 5
        assert on_product.double().mean() > 0.05 and on_logit.double().mean() > 0.05
        assert (terms.product.abs() > 5).any() and (terms.logit.abs() > 5).any()
        assert torch.equal(terms.product.float().double(), terms.product)  # exact in float32
