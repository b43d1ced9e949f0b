"""Puzzle 14: Softmax backward. The row reduction Δ, then dx.

You will learn
- the backward of a softmax: dx = y * (dy - Δ), where Δ = sum_t y_t dy_t is one number per row,
  the dot of the output and its gradient (every attention backward starts with this reduction);
- that a backward needs only what the forward saved, here its output y, never the logits;
- two passes over rows longer than a block, as in puzzle 4: one accumulates Δ, the next writes dx,
  which needs Δ of the whole row.

The math, for one row with y = softmax(x) and dy = dL/dy, the loss's gradient with respect to y
    ∂y_i/∂x_j = y_i (1[i = j] - y_j)                               the softmax's Jacobian
    dx_j = sum_i dy_i ∂y_i/∂x_j = y_j dy_j - y_j sum_i y_i dy_i  =  y_j (dy_j - Δ),   Δ = sum_i y_i dy_i
So a dy that is the same number c along a row gives dx = y (c - c sum_i y_i) = 0: adding a constant
to every logit changes no probability.

Spec (the grader's copy is in grader/course/specs.py; @saves marks what the grader computes from the
forward: it draws logits and hands you their softmax as y)
    @saves(y=lambda y: softmax(y))  # the grader draws y as logits; the forward saved their softmax
    def softmax_backward(y: Float32[Tensor, "N0 T"], dy: Float32[Tensor, "N0 T"]) -> Float32[Tensor, "N0 T"]:
        with torch.enable_grad():
            x = y.log().requires_grad_()  # logits whose softmax is y (softmax ignores a constant added to a row)
            return torch.autograd.grad(softmax(x), x, dy)[0]

What you write: the body of `softmax_backward_kernel`. The launcher is given: one program per B0 rows.
Budget: y and dy read at most twice each, dx written once.

Hints
- rows, their mask, int64 row offsets, and Δ as a float32 block of B0, one per row, zeroed  (4 lines)
- loop 1 over the row in blocks of B1: load y and dy (masked, other=0.0, so padded lanes
  add nothing) and add the row sums of y * dy to Δ                                         (7 lines)
- loop 2: load them again and store y * (dy - Δ[:, None])                                  (7 lines)
- offsets: rows * T passes 2**31 elements at 2,048 rows of 2**20 on a GPU; multiply in int64
  (`rows.to(tl.int64) * T`)

Grade it:  python -m grader 14
"""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_backward_kernel(
    y_ptr,  # pointer to y: N0 x T float32, the softmax the forward saved, row-major
    dy_ptr,  # pointer to dy: N0 x T float32, the loss's gradient with respect to y
    dx_ptr,  # pointer to the output dx: N0 x T float32, the gradient with respect to the logits
    N0,  # number of rows
    T,  # row length
    B0: tl.constexpr,  # rows per program, a power of two
    B1: tl.constexpr,  # columns per loop step, a power of two
):
    # Your code here: about 18 lines.
    pass


def softmax_backward(y: torch.Tensor, dy: torch.Tensor, B0: int = 1, B1: int | None = None) -> torch.Tensor:
    """One program per B0 rows; more warps for wider tiles."""
    assert y.shape == dy.shape and y.dim() == 2 and y.is_contiguous() and dy.is_contiguous()
    n0, t = y.shape
    dx = torch.empty_like(y)
    if B1 is None:
        # Puzzle 5's defaults, which read rows twice too: 16384 columns per step, or the whole row if shorter, and up
        # to 32 warps (the fastest there on an H200; untimed for this kernel: `bench --sweep 14` tries others)
        B1 = min(16384, triton.next_power_of_2(t))
    num_warps = min(32, max(1, B0 * B1 // 256))
    softmax_backward_kernel[(triton.cdiv(n0, B0),)](y, dy, dx, n0, t, B0=B0, B1=B1, num_warps=num_warps)
    return dx
