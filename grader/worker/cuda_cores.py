"""Float work on CUDA cores beside tl.dot (grader.worker.instrument counts it where the tensor-core rule applies):
every element of a float add, subtraction, multiply, division or fma (two) between values that move with the
inputs, and every input element of a float sum, product or reduction of the kernel's own combine (a block of no
work, all zeros or all infinite, a padded tile's, counts nothing). budgets.Dots
holds it against the products' multiply-adds, which a kernel on tensor cores leaves to tl.dot: a product computed on
CUDA cores (a broadcast multiply and tl.sum) costs a multiply and an add per multiply-add, however its tl.dot is
kept looking live beside it."""

from __future__ import annotations

import numpy as np

from grader.worker.regions import _SHADOW, _SPLAT

# Floating-point operations per element of each builder op's result (an fma is a multiply and an add): what a
# product costs, one multiply and one add per multiply-add, however it is written (exp(log a + log b) still adds).
# Not counted: what combines no two values (negation, absolute value, floor, exp, log, sqrt and the other functions
# of one value), what cannot build a product (minimum and maximum, clamps, comparisons, selects, casts), and integer
# arithmetic (offsets and masks).
FLOPS = {**dict.fromkeys(("create_fadd", "create_fsub", "create_fmul", "create_fdiv", "create_frem",
                          "create_precise_divf", "create_approx_divf"), 1), "create_fma": 2}


def counted(flops: int, args) -> int:
    """An op's float operations per element (FLOPS): none for an operand that is a constant of the launch (a splat
    of a number no load gave: `s * scale`, `x + 1.0`), which combines no two values of the inputs; an fma with
    one does its add only."""
    constant = any(_constant(arg) for arg in args)
    return flops - 1 if constant and flops == 2 else 0 if constant else flops


def elements(data) -> int:
    """The elements of a block, or 0 for a float block that holds no work: all zeros, or not one finite element (a
    tile of padded keys: its -inf scores and zero probabilities, carried through a softmax, are no product's work).
    A block with one such element counts in full, as a product of zeros among numbers is still computed."""
    data = np.asarray(data)
    if data.dtype.kind == "f" and not (data.any() and np.isfinite(data).any()):
        return 0
    return int(data.size)


def _constant(handle) -> bool:
    """A block splatted from a number that does not move with the inputs (no DotShadows shadow: not loaded, nor
    computed from a load or a tl.dot)."""
    attr = getattr(handle, "attr", None)
    return isinstance(attr, dict) and bool(attr.get(_SPLAT)) and _SHADOW not in attr


# tl.max, tl.min, tl.argmax and tl.argmin: comparisons, no arithmetic (their combine functions, by name)
_COMPARING = ("_elementwise_max", "_elementwise_min", "_argmax_combine_tie_break_left",
              "_argmax_combine_tie_break_fast", "_argmin_combine_tie_break_left", "_argmin_combine_tie_break_fast")


def reduced(combine: str, inputs) -> int:
    """The float operations of a reduction or scan (tl.sum, tl.cumsum, tl.reduce with the kernel's own combine):
    one per float input element; none for a maximum or minimum. (The builder ops a combine function runs, once per
    pair and again in the grader's checks of the order, are not counted: instrument._wrap_reduce drops them.)"""
    if combine in _COMPARING:
        return 0
    total = 0
    for value in inputs:
        dtype = getattr(value, "dtype", None)
        if dtype is not None and callable(getattr(dtype, "is_floating", None)) and dtype.is_floating():
            total += elements(value.handle.data)
    return total
