import triton
import triton.language as tl


@triton.jit
def chunk_load(x_ptr, row, T, c: tl.constexpr, B1: tl.constexpr, H: tl.constexpr):
    j = tl.arange(0, H)
    cols = c * H * B1 + j[:, None] * B1 + tl.arange(0, B1)[None, :]
    return tl.load(x_ptr + row * T + cols, mask=cols < T, other=float("-inf"))


@triton.jit
def chunk_store(z_ptr, row, T, v, c: tl.constexpr, B1: tl.constexpr, H: tl.constexpr):
    j = tl.arange(0, H)
    cols = c * H * B1 + j[:, None] * B1 + tl.arange(0, B1)[None, :]
    tl.store(z_ptr + row * T + cols, v, mask=cols < T)


@triton.jit
def softmax_online_kernel(x_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    H: tl.constexpr = min(B1, 16)
    for r in range(0, B0):
        row = tl.program_id(0) * B0 + r
        if row < N0:
            x0 = chunk_load(x_ptr, row, T, 0, B1, H)
            x1 = chunk_load(x_ptr, row, T, 1, B1, H)
            x2 = chunk_load(x_ptr, row, T, 2, B1, H)
            x3 = chunk_load(x_ptr, row, T, 3, B1, H)
            x4 = chunk_load(x_ptr, row, T, 4, B1, H)
            x5 = chunk_load(x_ptr, row, T, 5, B1, H)
            x6 = chunk_load(x_ptr, row, T, 6, B1, H)
            x7 = chunk_load(x_ptr, row, T, 7, B1, H)
            m = tl.maximum(tl.maximum(tl.maximum(tl.max(x0), tl.max(x1)), tl.maximum(tl.max(x2), tl.max(x3))),
                           tl.maximum(tl.maximum(tl.max(x4), tl.max(x5)), tl.maximum(tl.max(x6), tl.max(x7))))
            e0 = tl.exp(x0 - m)
            e1 = tl.exp(x1 - m)
            e2 = tl.exp(x2 - m)
            e3 = tl.exp(x3 - m)
            e4 = tl.exp(x4 - m)
            e5 = tl.exp(x5 - m)
            e6 = tl.exp(x6 - m)
            e7 = tl.exp(x7 - m)
            s = tl.sum(e0) + tl.sum(e1) + tl.sum(e2) + tl.sum(e3) + tl.sum(e4) + tl.sum(e5) + tl.sum(e6) + tl.sum(e7)
            chunk_store(z_ptr, row, T, e0 / s, 0, B1, H)
            chunk_store(z_ptr, row, T, e1 / s, 1, B1, H)
            chunk_store(z_ptr, row, T, e2 / s, 2, B1, H)
            chunk_store(z_ptr, row, T, e3 / s, 3, B1, H)
            chunk_store(z_ptr, row, T, e4 / s, 4, B1, H)
            chunk_store(z_ptr, row, T, e5 / s, 5, B1, H)
            chunk_store(z_ptr, row, T, e6 / s, 6, B1, H)
            chunk_store(z_ptr, row, T, e7 / s, 7, B1, H)
