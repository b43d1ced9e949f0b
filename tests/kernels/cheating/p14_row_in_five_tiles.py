import triton
import triton.language as tl


@triton.jit
def cols_of(c: tl.constexpr, B1: tl.constexpr, H: tl.constexpr):
    return c * H * B1 + tl.arange(0, H)[:, None] * B1 + tl.arange(0, B1)[None, :]


@triton.jit
def softmax_backward_kernel(y_ptr, dy_ptr, dx_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    H: tl.constexpr = min(B1, 16)
    c0 = cols_of(0, B1, H)
    c1 = cols_of(1, B1, H)
    c2 = cols_of(2, B1, H)
    c3 = cols_of(3, B1, H)
    c4 = cols_of(4, B1, H)
    for r in range(0, B0):
        row = tl.program_id(0) * B0 + r
        if row < N0:
            base = row.to(tl.int64) * T
            y0 = tl.load(y_ptr + base + c0, mask=c0 < T, other=0.0)
            g0 = tl.load(dy_ptr + base + c0, mask=c0 < T, other=0.0)
            y1 = tl.load(y_ptr + base + c1, mask=c1 < T, other=0.0)
            g1 = tl.load(dy_ptr + base + c1, mask=c1 < T, other=0.0)
            y2 = tl.load(y_ptr + base + c2, mask=c2 < T, other=0.0)
            g2 = tl.load(dy_ptr + base + c2, mask=c2 < T, other=0.0)
            y3 = tl.load(y_ptr + base + c3, mask=c3 < T, other=0.0)
            g3 = tl.load(dy_ptr + base + c3, mask=c3 < T, other=0.0)
            y4 = tl.load(y_ptr + base + c4, mask=c4 < T, other=0.0)
            g4 = tl.load(dy_ptr + base + c4, mask=c4 < T, other=0.0)
            d = tl.sum(y0 * g0) + tl.sum(y1 * g1) + tl.sum(y2 * g2) + tl.sum(y3 * g3) + tl.sum(y4 * g4)
            tl.store(dx_ptr + base + c0, y0 * (g0 - d), mask=c0 < T)
            tl.store(dx_ptr + base + c1, y1 * (g1 - d), mask=c1 < T)
            tl.store(dx_ptr + base + c2, y2 * (g2 - d), mask=c2 < T)
            tl.store(dx_ptr + base + c3, y3 * (g3 - d), mask=c3 < T)
            tl.store(dx_ptr + base + c4, y4 * (g4 - d), mask=c4 < T)
