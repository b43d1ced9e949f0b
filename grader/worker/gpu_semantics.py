"""Where the interpreter's numpy would compute another kernel than a GPU's, the GPU's way (grader.worker.instrument
installs these on the interpreter's builder): float-to-integer casts saturate, an integer division by zero is
refused, and an atomic's lanes land in an order drawn for each call."""

from __future__ import annotations

import numpy as np

from grader.worker.regions import IntegerDivisionByZero

_ORDERS = np.random.default_rng(0)  # the orders atomics' lanes land in: one draw per call, the same run to run


def _saturating(cast):
    """A float-to-integer cast as the GPU does it (PTX cvt.rzi saturates: past the range it gives the largest or
    smallest integer, NaN gives 0), where numpy's gives INT_MIN for both: a test on such a cast would otherwise make
    a kernel one thing in the interpreter and another on the GPU."""
    def saturated(src, dst_type):
        from triton.runtime import interpreter

        data = np.asarray(src.data)
        if data.dtype.kind != "f":
            return cast(src, dst_type)
        target = interpreter._get_np_dtype(dst_type)
        info = np.iinfo(target)
        wide = np.nan_to_num(data.astype(np.float64), nan=0.0)
        high, low = wide >= float(info.max), wide <= float(info.min)
        out = np.where(high | low, 0.0, wide).astype(target)
        out = np.where(high, info.max, np.where(low, info.min, out)).astype(target)
        return interpreter.TensorHandle(out, dst_type.scalar)
    return saturated


def _nonzero_divisor(divide, name: str):
    """An integer division or remainder that refuses a zero divisor on any lane (IntegerDivisionByZero)."""
    def checked(lhs, rhs, *args, **kwargs):
        zeros = int(np.count_nonzero(np.asarray(rhs.data) == 0))
        if zeros:  # the learner's line is added by the grader's report of the exception
            sign = "%" if name.endswith("rem") else "//"
            raise IntegerDivisionByZero(
                f"an integer {sign} by zero on {zeros} of {np.size(rhs.data)} lanes: the interpreter gives 0 there, a "
                f"GPU another value (division by zero is undefined in the compiled kernel), so the kernel would "
                f"compute one thing here and another on a GPU. Keep every lane's divisor nonzero, masked lanes too "
                f"(tl.where(d == 0, 1, d))")
        return divide(lhs, rhs, *args, **kwargs)
    return checked


def _lanes_in_any_order(original):
    """tl.atomic_add and its kin with the lanes applied in an order drawn for each call, not lane order: on a GPU the
    threads' atomics land in any order, so a kernel that reads meaning into the old values' order (tickets handed
    out in lane order) must not pass by the interpreter's."""
    def shuffled(op, ptr, val, mask, *args, **kwargs):
        from triton.runtime import interpreter

        shape = np.shape(ptr.data)
        if len(shape) == 0 or int(np.prod(shape)) < 2:
            return original(op, ptr, val, mask, *args, **kwargs)
        size = int(np.prod(shape))
        order = _ORDERS.permutation(size)
        if np.array_equal(order, np.arange(size)):  # never the lane order itself
            order = order[::-1].copy()

        def permuted(handle):
            if handle is None:
                return None
            return interpreter.TensorHandle(np.broadcast_to(np.asarray(handle.data), shape).reshape(-1)[order],
                                            handle.dtype)

        result = original(op, permuted(ptr), permuted(val), permuted(mask), *args, **kwargs)
        back = np.empty_like(np.asarray(result.data).reshape(-1))
        back[order] = np.asarray(result.data).reshape(-1)
        return interpreter.TensorHandle(back.reshape(shape), result.dtype)
    return shuffled

