"""Single builder ops as sm_90 computes them where triton's interpreter (3.6, or 3.6 and 3.9) computes another value,
and the orders a GPU leaves open (grader.worker.instrument installs them; gpu_semantics holds casts, bfloat16 and the
refusals of what a GPU leaves undefined). Each was a kernel graded Solved here and wrong on a GPU (the twelfth
review; the PTX triton 3.6 emits for sm_90 in brackets):

- tl.fma rounds once (fma.rn.f32): 3.6's interpreter multiplied and added, rounding twice;
- tl.umulhi is unsigned (mul.hi.u32 / .u64): 3.6's sign-extended its operands, and refused an int64 -1;
- tl.maximum / tl.minimum return the other operand where one is NaN (max.f32 / min.f32): 3.6's propagated NaN;
- a sum or difference of booleans wraps in one bit (add i1): 3.6's numpy made True + True an `or`, and refused `-`;
- tl.dot(input_precision="tf32x3", "bf16x3", "bf16x6") is a sum of products of TF32 / bfloat16 parts (the smallest
  products dropped): it was exact, and bf16x3 / bf16x6, which the GPU compiles, were refused;
- a compare-and-swap's lanes land in an order drawn for each call, as an atomic's do (they landed in lane order);
- tl.sum / tl.cumsum of booleans in one bit (the thirteenth review: numpy counted, and any lane made True);
- a kernel's float argument is a float32 and an int from 2**31 to 2**32 an int64, as a GPU's launch passes them;
- tl.reduce with the kernel's own combine is also folded as a tree, as a GPU's shuffles do, and refused when that
  differs from the left fold (the reverse order alone missed max(a, b) + 1 on a row of equal values)."""

from __future__ import annotations

import dataclasses

import numpy as np

from grader.worker.dot_shadows import _as_float32
from grader.worker.regions import _ATOMIC_OLD, CombineOrderMatters

_ORDERS = np.random.default_rng(0)  # the orders atomics' lanes land in: one draw per call, the same run to run


def _handle(data, like):
    from triton.runtime import interpreter

    return interpreter.TensorHandle(data, like.dtype.scalar if hasattr(like.dtype, "scalar") else like.dtype)


def _odd_when_inexact(total, error):
    """Round-to-odd of an exact sum held as float64 `total` plus `error`: where the sum was inexact and `total`'s last
    bit is 0, the float64 next to it on the error's side. Rounding that to a narrower float is rounding once."""
    inexact = (error != 0) & np.isfinite(total)
    bits = total.view(np.int64)
    even = (bits & 1) == 0
    toward = np.nextafter(total, np.where(error > 0, np.inf, -np.inf))
    return np.where(inexact & even, toward, total)


def fma_rounded_once(fma):
    """tl.fma of float32 / float16 blocks rounded once: the product is exact in float64, the sum's rounding error is
    kept (two-sum) and the float64 sum made odd where inexact, so its rounding to 32 or 16 bits is the exact one."""
    def fused(x, y, z, *args, **kwargs):
        a, b, c = (np.asarray(h.data) for h in (x, y, z))
        if c.dtype not in (np.float32, np.float16) or a.dtype != c.dtype or b.dtype != c.dtype:
            return fma(x, y, z, *args, **kwargs)
        product = a.astype(np.float64) * b.astype(np.float64)
        addend = np.broadcast_to(c.astype(np.float64), np.broadcast_shapes(product.shape, c.shape))
        with np.errstate(all="ignore"):
            total = product + addend
            back = total - addend
            error = (product - back) + (addend - (total - back))
            result = _odd_when_inexact(np.ascontiguousarray(total), error).astype(c.dtype)
        return _handle(result, z)
    return fused


def _high_half(a, b, bits: int):
    """The high `bits` of the unsigned product of two unsigned blocks of that width."""
    if bits <= 32:
        return ((a.astype(np.uint64) * b.astype(np.uint64)) >> np.uint64(bits)).astype(a.dtype)
    mask = np.uint64(0xFFFFFFFF)
    a_lo, a_hi, b_lo, b_hi = a & mask, a >> np.uint64(32), b & mask, b >> np.uint64(32)
    middle = (a_lo * b_lo >> np.uint64(32)) + (a_hi * b_lo & mask) + (a_lo * b_hi & mask)
    return a_hi * b_hi + (a_hi * b_lo >> np.uint64(32)) + (a_lo * b_hi >> np.uint64(32)) + (middle >> np.uint64(32))


def umulhi_unsigned(umulhi):
    """tl.umulhi as mul.hi.u32 / mul.hi.u64: the high half of the unsigned product, whatever the operands' sign."""
    def unsigned(lhs, rhs, *args, **kwargs):
        a, b = np.broadcast_arrays(np.asarray(lhs.data), np.asarray(rhs.data))
        if a.dtype.kind not in "iu" or a.dtype != b.dtype:
            return umulhi(lhs, rhs, *args, **kwargs)
        kind = np.dtype(f"uint{a.dtype.itemsize * 8}")
        high = _high_half(a.astype(kind), b.astype(kind), a.dtype.itemsize * 8)
        return _handle(high.astype(kind).view(a.dtype), lhs)
    return unsigned


def nan_ignored(pick):
    """tl.maximum / tl.minimum (maxnumf / minnumf) returning the other operand where exactly one is NaN."""
    def picked(lhs, rhs, *args, **kwargs):
        result = pick(lhs, rhs, *args, **kwargs)
        a, b = np.asarray(lhs.data), np.asarray(rhs.data)
        if a.dtype.kind != "f" or b.dtype.kind != "f":
            return result
        a, b, data = np.broadcast_arrays(a, b, np.asarray(result.data))
        only_a, only_b = np.isnan(a) & ~np.isnan(b), np.isnan(b) & ~np.isnan(a)
        if not (only_a.any() or only_b.any()):
            return result
        return _handle(np.where(only_a, b, np.where(only_b, a, data)).astype(data.dtype), result)
    return picked


def one_bit_wraps(arithmetic, op):
    """A sum or difference of boolean blocks in one bit (add i1 / sub i1): True + True is False."""
    def wrapped(lhs, rhs, *args, **kwargs):
        a, b = np.asarray(lhs.data), np.asarray(rhs.data)
        if a.dtype != np.bool_ or b.dtype != np.bool_:
            return arithmetic(lhs, rhs, *args, **kwargs)
        return _handle((op(a.astype(np.int8), b.astype(np.int8)) & 1).astype(np.bool_), lhs)
    return wrapped


def as_tf32(a, b, precision):
    """A tl.dot's float32 operands at its default precision, TF32, as a tensor core reads them: the low 13 of the 23
    mantissa bits dropped (10 kept), so a float32 product is not exact on a GPU (x + y as a dot with ones misses a
    1e-6 tolerance there), where numpy's matmul is. "ieee" stays exact; "tf32x3" is split_dot's."""
    from triton.runtime import interpreter

    asked = str(getattr(precision, "name", precision)).upper()
    if "TF32" not in asked or "X3" in asked or any(getattr(h.dtype, "name", "") != "fp32" for h in (a, b)):
        return a, b

    def cut(handle):
        bits = np.ascontiguousarray(np.asarray(handle.data, dtype=np.float32)).view(np.uint32) & np.uint32(0xFFFFE000)
        return interpreter.TensorHandle(bits.view(np.float32), handle.dtype)
    return cut(a), cut(b)


def _tf32(values):
    """cvt.rna.tf32.f32: to 10 mantissa bits, the tie away from zero."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    return ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)


def _bf16(values):
    """To bfloat16 (7 mantissa bits), to nearest even, kept as float32."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    return ((bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)).view(
        np.float32)


# input_precision -> (how an operand is cut, into how many parts, and the (part of a, part of b) products summed,
# smallest first, 0 being the high part): 3xTF32 and bf16x3 drop the low by low product, bf16x6 keeps six of nine
SPLIT_DOTS = {"TF32X3": (_tf32, 2, ((1, 0), (0, 1), (0, 0))),
              "BF16X3": (_bf16, 2, ((1, 0), (0, 1), (0, 0))),
              "BF16X6": (_bf16, 3, ((2, 0), (0, 2), (1, 1), (1, 0), (0, 1), (0, 0)))}


def split_dot_kind(precision, a, b) -> str | None:
    """The SPLIT_DOTS key of a float32 by float32 tl.dot at that input_precision, or None."""
    asked = str(getattr(precision, "name", precision)).upper()
    if asked in SPLIT_DOTS and all(getattr(h.dtype, "name", "") == "fp32" for h in (a, b)):
        return asked
    return None


def _parts(handle, cut, count: int) -> list:
    rest = np.asarray(_as_float32(handle).data, dtype=np.float32)
    parts = []
    with np.errstate(all="ignore"):
        for _ in range(count):
            parts.append(cut(rest))
            rest = rest - parts[-1]
    return [_handle(part, handle) for part in parts]


def split_dot(kind: str, original, a, b, rest: tuple, kwargs: dict):
    """The interpreter's dot (`original`, accumulating into rest[0]) of a and b as a GPU computes a split-precision
    one: each operand cut into parts of a narrower type, and the products of SPLIT_DOTS[kind] summed."""
    cut, count, products = SPLIT_DOTS[kind]
    parts_a, parts_b = _parts(a, cut, count), _parts(b, cut, count)
    partial = rest[0] if rest else None
    for i, j in products:
        partial = original(parts_a[i], parts_b[j], partial, *rest[1:], **kwargs)
    return partial


def install(builder) -> None:
    """Single ops as sm_90 computes them, on the interpreter's builder: fma rounded once, umulhi unsigned, maxnum /
    minnum past a NaN, booleans added and taken away in one bit; and tl.dot's split precisions allowed."""
    mends = (("create_fma", fma_rounded_once), ("create_umulhi", umulhi_unsigned),
             ("create_maxnumf", nan_ignored), ("create_minnumf", nan_ignored),
             ("create_add", lambda op: one_bit_wraps(op, np.add)),
             ("create_sub", lambda op: one_bit_wraps(op, np.subtract)))
    for name, mend in mends:
        if callable(getattr(builder, name, None)):
            setattr(builder, name, mend(getattr(builder, name)))
    options = getattr(builder, "options", None)  # the precisions a GPU's backend takes (split_dot computes them)
    allowed = getattr(options, "allowed_dot_input_precisions", None)
    if dataclasses.is_dataclass(options) and isinstance(allowed, tuple):
        wider = tuple(dict.fromkeys((*allowed, *(kind.lower() for kind in SPLIT_DOTS))))
        builder.options = dataclasses.replace(options, allowed_dot_input_precisions=wider)


def one_bit_sums(apply):
    """tl.sum / tl.cumsum of a boolean block (dtype=tl.int1) in one bit, as add i1 wraps: the parity of the count.
    The interpreter's fast paths summed with numpy and cast the count back to bool: any lane true. An integer tl.sum
    wraps in its width, as a GPU's adds do."""
    def wrapper(self, input, *args, **kwargs):
        from triton import language as tl

        inputs = input if isinstance(input, tuple) else (input,)
        combine = getattr(self, "combine_fn", None)
        name = getattr(getattr(combine, "fn", combine), "__name__", "")
        data = np.asarray(inputs[0].handle.data) if len(inputs) == 1 else None
        if name != "_sum_combine" or data is None or data.dtype.kind not in "biu":
            return apply(self, input, *args, **kwargs)
        if data.dtype != np.bool_:  # an integer tl.sum wraps in its width (triton 3.6 raised OverflowError)
            if not hasattr(self, "keep_dims"):
                return apply(self, input, *args, **kwargs)
            wide = np.uint64 if data.dtype.kind == "u" else np.int64
            total = np.sum(data, axis=self.axis, keepdims=self.keep_dims, dtype=wide).astype(data.dtype)
            back = self.to_tensor(total, inputs[0].dtype)
            return (back,) if isinstance(input, tuple) else back
        counts = self.to_tensor(data.astype(np.int8), tl.int8)
        result = apply(self, (counts,) if isinstance(input, tuple) else counts, *args, **kwargs)
        first = result[0] if isinstance(result, tuple) else result
        back = self.to_tensor((np.asarray(first.handle.data).astype(np.int64) & 1).astype(np.bool_), inputs[0].dtype)
        return (back, *result[1:]) if isinstance(result, tuple) else back
    return wrapper


def arguments_as_the_gpu(implicit_cvt):
    """A kernel's scalar arguments as a GPU's launch passes them: a Python float as a float32 (the interpreter kept
    the Python float, so `S * 1e10` of S = 1e30 was 1e40, where the GPU's f32 is inf), an int from 2**31 to 2**32
    as the int64 the JIT types it (the interpreter held it as uint32: 2**31 + 2**31 wrapped to 0), a bool as i1."""
    def converted(arg):
        from triton import language as tl
        from triton.runtime import interpreter

        if type(arg) is float:
            with np.errstate(over="ignore"):
                value, kind = np.array([arg], dtype=np.float32), tl.float32
        elif type(arg) is int and 2 ** 31 <= arg < 2 ** 32:
            value, kind = np.array([arg], dtype=np.int64), tl.int64
        elif type(arg) is bool:
            value, kind = np.array([arg], dtype=np.bool_), tl.int1
        else:
            return implicit_cvt(arg)
        return tl.tensor(interpreter.TensorHandle(value, kind), kind)
    return converted


def _permuted(handle, shape, order):
    from triton.runtime import interpreter

    if handle is None:
        return None
    return interpreter.TensorHandle(np.broadcast_to(np.asarray(handle.data), shape).reshape(-1)[order], handle.dtype)


def _in_any_order(original, lanes_at: tuple[int, ...], shape_at: int):
    """`original` (an atomic) with the lanes of its arguments at `lanes_at` applied in an order drawn for each call,
    its result given back in lane order."""
    def shuffled(*args, **kwargs):
        from triton.runtime import interpreter

        shape = np.shape(args[shape_at].data)
        if len(shape) == 0 or int(np.prod(shape)) < 2:
            return original(*args, **kwargs)
        size = int(np.prod(shape))
        order = _ORDERS.permutation(size)
        if np.array_equal(order, np.arange(size)):  # never the lane order itself
            order = order[::-1].copy()
        args = tuple(_permuted(a, shape, order) if i in lanes_at else a for i, a in enumerate(args))
        result = original(*args, **kwargs)
        back = np.empty_like(np.asarray(result.data).reshape(-1))
        back[order] = np.asarray(result.data).reshape(-1)
        return interpreter.TensorHandle(back.reshape(shape), result.dtype)
    return shuffled


def lanes_in_any_order(original):
    """tl.atomic_add and its kin (create_atomic_rmw(op, ptr, val, mask, ...)) with the lanes applied in an order drawn
    for each call, not lane order: on a GPU the threads' atomics land in any order, so a kernel that reads meaning
    into the old values' order (tickets handed out in lane order) must not pass by the interpreter's. The old values
    are marked (_ATOMIC_OLD), for the recorder to note a kernel that uses them (Recorder.order_note)."""
    in_any_order = _in_any_order(original, (1, 2, 3), 1)

    def marked(*args, **kwargs):
        result = in_any_order(*args, **kwargs)
        if isinstance(getattr(result, "attr", None), dict):
            result.attr[_ATOMIC_OLD] = True
        return result
    return marked


def cas_lanes_in_any_order(original):
    """tl.atomic_cas (create_atomic_cas(ptr, cmp, val, ...)) likewise: which of a block's lanes swaps first on one
    address is the GPU's to choose, not lane 0."""
    return _in_any_order(original, (0, 1, 2), 0)


def swap_failing(original, args, lanes):
    """create_atomic_cas(ptr, cmp, val, ...) where the `lanes` (Recorder.contended_swaps) fail once, as on a GPU when
    another program's update lands between a program's load and its swap: they swap in the value they compare (so
    memory keeps what it holds), and where the swap would have taken they return the compare value with its lowest
    bit flipped, as if another program had changed it, so a retry loop goes round again (and a loop that gives up
    loses the update); where it would have failed anyway, they return what memory holds, as the swap does."""
    from triton.runtime import interpreter

    if lanes is None:
        return original(*args)
    compare = np.broadcast_to(np.asarray(args[1].data), lanes.shape)
    value = np.broadcast_to(np.asarray(args[2].data), lanes.shape)
    unsigned = compare.dtype.str.replace("f", "u").replace("i", "u")[1:]
    kept = interpreter.TensorHandle(np.where(lanes, compare, value), args[2].dtype)
    result = original(args[0], args[1], kept, *args[3:])
    found = np.asarray(result.data)
    would_take = lanes & (found.view(unsigned) == compare.view(unsigned))
    phantom = (compare.view(unsigned) ^ 1).view(compare.dtype)
    return interpreter.TensorHandle(np.where(would_take, phantom, found), result.dtype)


def _tree_fold(self, values):
    """The row reduced as a tree of pairs, (0, 1), (2, 3), ... and so on up, with the kernel's combine applied to
    whole blocks: one order a GPU's shuffles take; its results' handles. None where a row's length is not a power of
    two."""
    data = [np.asarray(v.handle.data) for v in values]
    axis = self.axis
    if axis is None:
        data, axis = [d.reshape(-1) for d in data], 0
    length = data[0].shape[axis]
    if length < 2 or length & (length - 1):
        return None
    dtypes = [v.dtype for v in values]
    handles = None
    while data[0].shape[axis] > 1:
        left = [self.to_tensor(np.take(d, range(0, d.shape[axis], 2), axis=axis), t) for d, t in zip(data, dtypes)]
        right = [self.to_tensor(np.take(d, range(1, d.shape[axis], 2), axis=axis), t) for d, t in zip(data, dtypes)]
        combined = self.combine_fn.fn(*left, *right)
        combined = combined if isinstance(combined, tuple) else (combined,)
        if len(combined) != len(values):
            return None
        handles = [c.handle for c in combined]
        data, dtypes = [np.asarray(h.data) for h in handles], [c.dtype for c in combined]
    return handles


def _numbers(handle):
    return np.asarray(_as_float32(handle).data if getattr(handle.dtype, "name", "") == "bf16" else handle.data)


def _same(a, b) -> bool:
    a, b = np.asarray(a).reshape(-1), np.asarray(b).reshape(-1)
    if a.dtype.kind != "f":
        return np.array_equal(a, b)
    return np.allclose(a, b, rtol=1e-3, atol=1e-6 * (1.0 + float(np.nanmax(np.abs(a), initial=0.0))), equal_nan=True)


def combine_in_any_order(generic_reduce):
    """tl.reduce with a combine function of the kernel's own (the interpreter folds it left to right), done again
    with each row's elements in the reverse order and as a tree of pairs, and refused (CombineOrderMatters) when
    either differs from the left fold by more than rounding: a GPU combines a row in a tree (within each thread,
    then across threads by shuffles, the operands either way round), so it takes the function to be associative and
    commutative. A combine that is not (a - b, keep the left one on a tie, max(a, b) + 1) would give one answer here
    and another there."""
    def checked(self, input):
        result = generic_reduce(self, input)
        values = input if isinstance(input, (tuple, list)) else (input,)
        flipped = tuple(self.to_tensor(np.flip(np.asarray(v.handle.data), axis=self.axis), v.dtype) for v in values)
        again = [_numbers(t.handle) for t in generic_reduce(self, flipped)]
        tree = _tree_fold(self, values)
        tree = None if tree is None or len(tree) != len(result) else [_numbers(h) for h in tree]
        for index, first in enumerate(result):
            ours = _numbers(first.handle)
            if not _same(ours, again[index]) or (tree is not None and not _same(ours, tree[index])):
                raise CombineOrderMatters(
                    "tl.reduce with your combine function gives another result when a row's elements are combined in "
                    "another order (the reverse, or a tree of pairs): a GPU combines them in a tree, within each "
                    "thread and then across threads, taking operands either way round, not left to right as the "
                    "interpreter does. The combine function must be associative and commutative (a + b, a maximum, "
                    "the online softmax's pair; a tie broken by index, not by which operand came first)")
        return result
    return checked
