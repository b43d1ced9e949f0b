"""Hints that the puzzles with an online softmax share: sums not rescaled and weights normalised per tile (6, 12,
13), a max that took in a score of 0 (4, 5, 6, 12), and ``mistaken``, which makes a hint's check of an emulated
mistake (grader/course/mistakes.py)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from grader.course.puzzle import Hint


def mistaken(compute: Callable, close: Callable, **mistake) -> Callable:
    """A hint's check: the output is compute(inputs, blocks, **mistake), and that mistake changes the answer
    here (close(inputs, yours, candidate) compares two outputs)."""
    def check(inputs, yours, blocks):
        wrong = compute(inputs, blocks, **mistake)
        return close(inputs, yours, wrong) and not close(inputs, compute(inputs, blocks), wrong)
    check.__doc__ = f"Check whether the output is {compute.__name__} with {mistake}."
    return check


def rescale_hints(loop: Callable, close: Callable, sums: str, total: str) -> tuple[Hint, ...]:
    """Hints for the running sums of an online softmax (total, and acc) not rescaled when the max grows:
    neither of them, or only one. loop(inputs, blocks, rescale=...) is the puzzle's loop (grader/course/mistakes.py)."""
    fix = f"when the max grows from m to m', multiply {total} and acc by exp(m - m')"
    return (Hint("rescale flipped", mistaken(loop, close, rescale="flipped"), flipped_text(f"{total} and acc")),
            Hint("sums not rescaled", mistaken(loop, close, rescale="none"), f"{sums} are not rescaled: {fix}"),
            Hint("acc not rescaled", mistaken(loop, close, rescale="l"),
                 f"{sums} are not rescaled alike: {total} is, acc is not; {fix}"),
            Hint(f"{total} not rescaled", mistaken(loop, close, rescale="acc"),
                 f"{sums} are not rescaled alike: acc is, {total} is not; {fix}"))


def per_tile_hints(loop: Callable, close: Callable) -> tuple[Hint, ...]:
    """Hints for weights divided by each tile's own sum instead of once by the whole sum, with the final division
    kept or left out. loop(inputs, blocks, per_step_sum=...) is the puzzle's loop (grader/course/mistakes.py)."""
    text = ("each tile's weights were divided by that tile's own sum: the softmax divides by the sum over all the "
            "keys, known only after the last tile. Keep acc and l as sums of exp(s - m), rescaled when the max grows, "
            "and divide acc / l once, after the loop")
    return tuple(Hint(f"weights normalised per tile, {how}", mistaken(loop, close, per_step_sum=how), text)
                 for how in ("divided", "undivided"))


def flipped_text(sums: str) -> str:
    """The hint for a rescale factor written the wrong way round, exp(m' - m)."""
    return (f"the rescale factor is flipped: when the max grows from m to m', multiply {sums} by exp(m - m'), which "
            "is at most 1. exp(m' - m) is inf on the first block (where m is -inf), and 0 x inf is NaN")


# float32's exp(s) underflows to 0 below s = -87 (-104 with subnormals): a row whose scores all lie below this,
# measured from a max of 0, loses every weight.
UNDERFLOW = -80.0


def lost_to_a_max_of_0(scores: torch.Tensor, yours: torch.Tensor, expected: torch.Tensor) -> bool:
    """Check whether the rows that came out NaN or 0 (and should not) are rows whose scores all lie far below 0:
    a max that took in a score of 0 leaves every weight exp(s - 0) underflowing, and the sum 0."""
    flat = yours.reshape(yours.shape[0], -1)
    lost = (flat.isnan() | (flat == 0)).all(dim=1) & (expected.reshape(flat.shape) != 0).any(dim=1)
    return bool(lost.any()) and bool((scores.amax(dim=1)[lost] < UNDERFLOW).all())


def max_took_in_0_hint(scores: Callable, spec: Callable, keys: str) -> Hint:
    """The hint for rows lost to a max of 0; scores(inputs) gives the [queries, keys] scores."""
    def check(inputs, yours, blocks):
        return lost_to_a_max_of_0(scores(inputs), yours, spec(**inputs))
    check.__doc__ = lost_to_a_max_of_0.__doc__
    return Hint("max took in a 0", check,
                f"rows whose scores all lie far below 0 came out NaN or 0: the max took in a score of 0, so every "
                f"weight exp(s - m) underflowed and the sum is 0. Set the scores of {keys} to -inf BEFORE tl.max (a "
                "padded key loads as 0 and scores 0), and start the running max at -inf, not 0")
