"""Single ops as sm_90 computes them (grader.worker.gpu_ops), against exact arithmetic in Python."""

from fractions import Fraction

import numpy as np
import pytest

from grader.worker import gpu_ops


class _Handle:  # what the interpreter's builder hands an op: .data and .dtype
    def __init__(self, data):
        self.data, self.dtype = data, type("dtype", (), {"scalar": None})()


@pytest.fixture(autouse=True)
def _plain_handles(monkeypatch):
    monkeypatch.setattr(gpu_ops, "_handle", lambda data, like: _Handle(data))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_fma_rounds_once(dtype):
    """tl.fma of 32- and 16-bit floats is the exact a * b + c rounded once (fma.rn), including where the float64 sum
    is itself inexact (c far below a * b) and where a double rounding would land elsewhere."""
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal(4000).astype(dtype) for _ in range(2))
    c = np.concatenate([-(a[:2000].astype(np.float64) * b[:2000]).astype(dtype),  # the product's rounding error
                        (rng.standard_normal(2000) * 10.0 ** rng.integers(-30, 3, 2000)).astype(dtype)])
    got = gpu_ops.fma_rounded_once(None)(_Handle(a), _Handle(b), _Handle(c)).data
    for x, y, z, r in zip(a, b, c, got):
        exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        near = dtype(float(exact))  # through float64: may be rounded twice, so its neighbours are candidates too
        candidates = (near, np.nextafter(near, dtype(np.inf)), np.nextafter(near, dtype(-np.inf)))
        best = min(abs(Fraction(float(v)) - exact) for v in candidates)
        assert abs(Fraction(float(r)) - exact) == best, (x, y, z, r)


@pytest.mark.parametrize("dtype,bits", [(np.int32, 32), (np.int64, 64), (np.uint32, 32), (np.uint64, 64)])
def test_umulhi_is_the_high_half_of_the_unsigned_product(dtype, bits):
    info = np.iinfo(dtype)
    values = np.array([info.min, info.min + 1, -1 if info.min < 0 else 1, 0, 1, 2, 12345, info.max - 1, info.max],
                      dtype=dtype)
    a, b = np.meshgrid(values, values)
    got = gpu_ops.umulhi_unsigned(None)(_Handle(a), _Handle(b)).data
    for x, y, r in zip(a.reshape(-1), b.reshape(-1), got.reshape(-1)):
        unsigned = (int(x) % 2 ** bits) * (int(y) % 2 ** bits) >> bits
        assert int(r) % 2 ** bits == unsigned, (x, y, r)
