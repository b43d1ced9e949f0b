"""Puzzle 15: Cross-entropy backward from the saved log-sum-exp.

You will learn
- the gradient of the mean cross-entropy of a batch of logit rows, the kernel behind every fused
  language-model loss, where a row (one token) has a vocabulary of 32,000 to 256,000 columns;
- to recompute instead of saving: the forward keeps one number per row, its log-sum-exp, and the
  backward rebuilds every probability from it, exp(x - lse), instead of storing an N0 x V softmax;
- `ignore_index`: a row whose target is -100 does not count, in the loss or in the mean.

The math, for row r with target t_r, n = the number of rows whose target is not -100
    loss   = (1 / n) sum over counted rows r of (lse_r - x[r, t_r]),   lse_r = log sum_c exp(x[r, c])
    dx[r, c] = dloss * (exp(x[r, c] - lse_r) - 1[c = t_r]) / n    for a counted row
    dx[r, c] = 0                                                  for a row whose target is -100
The probabilities exp(x - lse) sum to 1 over a row, so each counted row's gradient sums to 0. When every
row is ignored, n = 0 and the loss is 0 / 0; its gradient is 0 everywhere (divide by max(n, 1)).

Spec (the grader's copy is in grader/course/specs.py; @saves marks what the grader computes from the
forward and hands you: lse)
    @saves(lse=lambda x: torch.logsumexp(x, dim=1))  # the forward saved each row's log-sum-exp
    def cross_entropy_backward(
        x: Float32[Tensor, "N0 V"], target: Int64[Tensor, "N0"], lse: Float32[Tensor, "N0"], dloss: Float32[Tensor, ""]
    ) -> Float32[Tensor, "N0 V"]:
        with torch.enable_grad():
            logits = x.detach().requires_grad_()
            loss = torch.nn.functional.cross_entropy(logits, target, ignore_index=IGNORE_INDEX)  # mean of counted rows
            return torch.autograd.grad(loss, logits, dloss)[0]

What you write: the body of `cross_entropy_backward_kernel`. The launcher is given: one program per row
and block of BLOCK_V columns; it counts the rows that are not ignored (on the GPU, without waiting for
the count) and passes the count as a one-element tensor.
Budget: x read once, dx written once: no second pass, and no softmax stored.

Hints
- the row from program 0, the columns from program 1, their mask; offsets in int64
  (`row.to(tl.int64) * V`): 16,384 rows of 128,000 columns pass 2**31 elements                   (4 lines)
- the row's target and lse, the counted rows (`tl.load(counted_ptr)`) and dloss; the factor
  dloss / max(n, 1), or 0 where target == IGNORE_INDEX (`tl.where` works on single values too)      (5 lines)
- load x, p = exp(x - lse), subtract 1 where cols == target, times the factor; store             (4 lines)

Grade it:  python -m grader 15
"""

import torch
import triton
import triton.language as tl

IGNORE_INDEX = tl.constexpr(-100)  # a global a kernel may read must be a tl.constexpr value


@triton.jit
def cross_entropy_backward_kernel(
    x_ptr,  # pointer to x: N0 x V float32 logits, row-major
    target_ptr,  # pointer to target: N0 int64 class ids, IGNORE_INDEX (-100) for a row that does not count
    lse_ptr,  # pointer to lse: N0 float32, each row's log-sum-exp, saved by the forward
    dloss_ptr,  # pointer to dloss: one float32, the gradient of whatever came after the loss
    counted_ptr,  # pointer to one int64: the number of rows whose target is not IGNORE_INDEX
    dx_ptr,  # pointer to the output dx: N0 x V float32, row-major
    V,  # columns per row (the vocabulary)
    BLOCK_V: tl.constexpr,  # columns per program, a power of two
):
    # Your code here: about 13 lines.
    pass


def cross_entropy_backward(x: torch.Tensor, target: torch.Tensor, lse: torch.Tensor, dloss: torch.Tensor,
                           BLOCK_V: int | None = None) -> torch.Tensor:
    """One program per row and block of BLOCK_V columns."""
    assert x.dim() == 2 and x.is_contiguous() and target.shape == lse.shape == x.shape[:1] and dloss.numel() == 1
    n0, v = x.shape
    dx = torch.empty_like(x)
    counted = (target != IGNORE_INDEX.value).sum()  # stays on the device: no wait for the host
    if BLOCK_V is None:
        # 4096 columns, 8 warps: 16 per thread (untimed: `bench --sweep 15` tries 1024 to 8192)
        BLOCK_V = min(4096, triton.next_power_of_2(v))
    if n0:
        grid = (n0, triton.cdiv(v, BLOCK_V))
        cross_entropy_backward_kernel[grid](x, target, lse, dloss, counted, dx, v, BLOCK_V=BLOCK_V,
                                            num_warps=max(1, min(16, BLOCK_V // 512)))
    return dx
