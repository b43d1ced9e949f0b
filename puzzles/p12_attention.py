"""Puzzle 12: Tiled FlashAttention on tensor cores.

You will learn
- puzzle 6 again with vectors: a block of BQ queries against blocks of BK keys is a [BQ, BK]
  matrix of scores, `tl.dot(q, tl.trans(k))`, and the weighted sum of values is a second
  `tl.dot(p, v)`: both products on tensor cores, the softmax in float32 between them;
- the online softmax per row of the block: a running max m and sum l per query, and the
  float32 accumulator rescaled by exp(m - m_new) whenever the max grows;
- why K and V are read once per query block: the whole T-long row of scores never exists, so
  the memory traffic is (N / BQ) passes over K and V, not an N x T matrix.

The math, with D features per head and scale 1 / sqrt(D)
    s[i, j] = q[i, :] . k[j, :] / sqrt(D)
    o[i, :] = sum_j exp(s[i, j] - m[i]) v[j, :] / sum_j exp(s[i, j] - m[i]),    m[i] = max_j s[i, j]
Per key block (pseudo-code; m = -inf, l = 0, acc = 0 at the start):
    m_new = max(m, rowmax(s));  alpha = exp(m - m_new);  p = exp(s - m_new)
    l = l * alpha + rowsum(p);  acc = acc * alpha + p @ v_block;  m = m_new
and o = acc / l at the end.

Spec (the grader's copy is in grader/course/specs.py)
    def attention(
        q: Float16[Tensor, "N D"], k: Float16[Tensor, "T D"], v: Float16[Tensor, "T D"]
    ) -> Float32[Tensor, "N D"]:
        scores = wide(q) @ wide(k).T / q.shape[-1] ** 0.5
        return torch.softmax(scores, dim=1) @ wide(v)
(wide(x) is x as float32.)

What you write: the body of `attention_kernel`. The launcher is given: one program per BQ
queries. D is a power of two from 16 to 256, so a row of q, k or v is one block.
- `tl.dot` needs 16-bit operands on both sides to use tensor cores: cast p to v's dtype
  (`p.to(v.dtype)`) before `tl.dot(p, v)`; a float32 `tl.dot` would run as TF32, and the grader
  rejects a float32 operand.
- keys past T must get a score of -inf (not 0), so they add nothing to the sums, and they must get
  it BEFORE the row max: masked after the max, the padded keys (score q . 0 = 0) take part in it,
  and a row whose real scores are all far below 0 gets m = 0, weights that underflow to 0, and
  0 / 0 = NaN.
Budget: each program reads every k and v element once; both products are `tl.dot` calls;
o is written once.

Hints
- the query block: offsets and mask, loaded once as a [BQ, D] 16-bit block                (4 lines)
- m and l as float32 blocks of BQ (`tl.full([BQ], float("-inf"), dtype=tl.float32)`,
  `tl.zeros([BQ], dtype=tl.float32)`); a float32 [BQ, D] accumulator                        (3 lines)
- a `tl.range` loop over key blocks: load k and v [BK, D], scores by tl.dot, -inf on keys
  past T (before the max), then the online update with `tl.maximum` and exp2 (exp(x) = exp2(x * log2(e)),
  with log2(e) a literal or a `tl.constexpr`, as in puzzle 4)                               (13 lines)
- store acc / l                                                                             (1 line)

Grade it:  python -m grader 12
"""

import torch
import triton
import triton.language as tl


@triton.jit
def attention_kernel(
    q_ptr,  # pointer to q: N x D float16 (or bfloat16)
    k_ptr,  # pointer to k: T x D, same dtype
    v_ptr,  # pointer to v: T x D, same dtype
    o_ptr,  # pointer to the output o: N x D float32
    N,  # queries
    T,  # keys and values
    scale,  # 1 / sqrt(D)
    D: tl.constexpr,  # features, a power of two
    BQ: tl.constexpr,  # queries per program
    BK: tl.constexpr,  # keys per loop step
):
    # Your code here: about 24 lines.
    pass


def _scratch(size: int, alignment: int, stream):
    """Global memory for descriptors made inside a kernel (triton asks for it on the GPU)."""
    return torch.empty(size, dtype=torch.int8, device="cuda")


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, BQ: int | None = None,
              BK: int = 128) -> torch.Tensor:
    """One program per BQ queries."""
    (n, d), t = q.shape, k.shape[0]
    if d < 16 or d > 256 or d & (d - 1):
        raise ValueError(f"D={d}: this kernel takes D a power of two from 16 to 256")
    o = torch.empty((n, d), dtype=torch.float32, device=q.device)
    if q.is_cuda:
        triton.set_allocator(_scratch)
    if BQ is None:
        # 128 queries per program where D >= 128 and they still make 128 programs (N >= 16384), else 64: on an H200
        # at N=16384, D=128, 270.3 µs against 314 with 64; at N=8192, D=128, 64 programs of 128 leave half the
        # multiprocessors idle, and 64 per program took 80.8 µs. BK=128 beat 64 at every size.
        BQ = 128 if d >= 128 and n >= 16384 else 64
    # 16 query rows per warp: BQ=128 with 8 warps took 282 µs at N=16384, D=128 on an H200 (BQ=64, 4 warps: 314);
    # 3 stages: 2 were slower everywhere, 4 do not fit in shared memory at D=128 (docs/performance-notes.md)
    settings = dict(D=d, BQ=BQ, BK=BK, num_warps=BQ // 16, num_stages=3)
    attention_kernel[(triton.cdiv(n, BQ),)](q, k, v, o, n, t, d ** -0.5, **settings)
    return o
