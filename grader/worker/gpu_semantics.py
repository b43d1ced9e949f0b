"""Where the interpreter's numpy would compute another kernel than a GPU's, the GPU's way (grader.worker.instrument
installs these on the interpreter): bfloat16 blocks are computed with as numbers, in reductions and scans too; casts
saturate (float to 32-bit integers, to float8 as cvt.rn.satfinite, and to float16 / bfloat16 / float8e5 rounding
toward zero); tl.maximum / tl.minimum, and tl.max / tl.min, order signed zeros (grader.worker.gpu_ops holds other
single ops, tl.dot's precisions and the orders of atomics and combines). What a GPU leaves undefined, or computes in
an order the interpreter does not follow, is refused with the reason: an integer division by zero or INT_MIN // -1,
a shift past the width, a tl.gather index outside its block, a tl.histogram value outside its bins, tl.clamp's min
above its max, a float cast to a narrow integer past its range, and tl.argmax over NaN. The kernel's Python itself
(numbers, and/or, range, arguments equal to 1) is grader.worker.as_compiled's."""

from __future__ import annotations

import numpy as np

from grader.worker.dot_shadows import _as_float32
from grader.worker.regions import (
    AddressAsNumber,
    ArgReduceOverNaN,
    ClampBoundsCrossed,
    DebugCheckFailed,
    GatherOutOfRange,
    HistogramOutOfRange,
    IntegerDivisionByZero,
    IntegerDivisionOverflow,
    NarrowCastOutOfRange,
    ShiftPastWidth,
)

# Triton's interpreter (3.6 to 3.9) keeps bfloat16 blocks as their uint16 bits and applies numpy to those bits:
# `o * do` gives 2.8e-33 for 4.24, -1.0 < 1.0 is False (0xBF80 < 0x3F80 as integers), -x flips the bits' integer,
# and an integer cast to bfloat16 becomes a tiny denormal (7 -> 6.4e-45). A kernel could branch on those, and a
# correct one testing `x.to(tl.bfloat16) < 0` would fail. Each op on bfloat16 blocks is mended to compute in float32
# and, where its result is bfloat16, round to nearest even, as the GPU's bfloat16 arithmetic does.
_BF16_BINARY = ("create_fadd", "create_fsub", "create_fmul", "create_fdiv", "create_frem", "create_precise_divf",
                "create_minimumf", "create_maximumf", "create_minnumf", "create_maxnumf")
_BF16_UNARY = ("create_fneg", "create_exp", "create_exp2", "create_log", "create_log2", "create_sqrt",
               "create_precise_sqrt", "create_rsqrt", "create_sin", "create_cos", "create_floor", "create_ceil",
               "create_erf")
_BF16_CASTS = ("create_si_to_fp", "create_ui_to_fp", "create_fp_to_si", "create_fp_to_ui", "create_fp_ext",
               "create_fp_trunc")


def _is_bf16(handle_or_type) -> bool:
    dtype = getattr(handle_or_type, "dtype", handle_or_type)
    return getattr(getattr(dtype, "scalar", dtype), "name", "") == "bf16"


def _to_bfloat16(handle):
    """A float32 block as bfloat16 (uint16 bits, rounded to nearest even, NaN kept NaN)."""
    from triton import language as tl
    from triton.runtime import interpreter

    values = np.asarray(handle.data, dtype=np.float32)
    bits = values.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    rounded = np.where(np.isnan(values), ((bits >> 16) | 0x40).astype(np.uint16), rounded)
    return interpreter.TensorHandle(rounded, tl.bfloat16)


def _exactly_to_bfloat16(values):
    """Float64 or integer values rounded once to bfloat16 (nearest, ties to even), as the GPU's cvt.rn.bf16.f64 and
    .s32 / .s64 do; through float32 they would round twice (1 + 2**-8 + 2**-40 to 1.0, not 1 + 2**-7)."""
    from triton import language as tl
    from triton.runtime import interpreter

    values = np.asarray(values)
    if values.dtype.kind in "iu" and values.dtype.itemsize == 8 and (np.abs(values.astype(np.float64)) >= 2**53).any():
        exact = np.array([float(_round_int_to_bits(int(v), 8)) for v in values.reshape(-1)]).reshape(values.shape)
    else:
        exact = values.astype(np.float64)
    finite = np.isfinite(exact) & (exact != 0)
    _, exponent = np.frexp(np.where(finite, exact, 1.0))
    quantum = np.ldexp(1.0, np.maximum(exponent - 8, -133))  # 8 significant bits; bfloat16's subnormal step 2**-133
    rounded = np.where(finite, np.rint(exact / quantum) * quantum, exact)
    with np.errstate(over="ignore"):
        single = rounded.astype(np.float32)  # exact: 8 significant bits (past the range: inf, as rounding gives)
    bits = (np.ascontiguousarray(single).view(np.uint32) >> 16).astype(np.uint16)
    return interpreter.TensorHandle(bits, tl.bfloat16)


def _round_int_to_bits(value: int, bits: int) -> int:
    """An integer rounded to `bits` significant bits, ties to even."""
    magnitude, shift = abs(value), max(0, abs(value).bit_length() - bits)
    if shift == 0:
        return value
    kept, rest = magnitude >> shift, magnitude & ((1 << shift) - 1)
    half = 1 << (shift - 1)
    kept += 1 if rest > half or (rest == half and kept & 1) else 0
    return (kept << shift) * (1 if value >= 0 else -1)


def _remainder_as_the_gpu(remainder):
    """A float `%` as the GPU computes it (LLVM's frem on NVPTX: x - trunc(x / y) * y, the quotient rounded to the
    nearest float first, one fused multiply-add, x where y is infinite), not numpy's exact fmod: 1e8 % 3.0 is -2
    there (1e8 / 3 rounds up to 33333334), 1 here."""
    def gpu(lhs, rhs, *args, **kwargs):
        from triton.runtime import interpreter

        x, y = np.asarray(lhs.data), np.asarray(rhs.data)
        if x.dtype not in (np.float32, np.float64):
            return remainder(lhs, rhs, *args, **kwargs)
        with np.errstate(all="ignore"):
            quotient = np.trunc((x / y).astype(x.dtype))
            if x.dtype == np.float32:  # the product and the difference exact in float64: one rounding, as fma.rn
                result = (x.astype(np.float64) - quotient.astype(np.float64) * y.astype(np.float64)).astype(np.float32)
            else:
                result = x - quotient * y
            result = np.where(np.isinf(y) & np.isfinite(x), x, result).astype(x.dtype)
        return interpreter.TensorHandle(result, lhs.dtype)
    return gpu


def _remainders_histograms_clamps_constants(builder) -> None:
    """Install on the builder: float `%` as the GPU computes it, tl.histogram refusing a value outside its bins,
    tl.clamp refusing min > max, and the bfloat16 constant triton 3.6's interpreter lacks (tl.full(...,
    tl.bfloat16) crashed there)."""
    if callable(getattr(builder, "create_frem", None)):
        builder.create_frem = _remainder_as_the_gpu(builder.create_frem)
    if callable(getattr(builder, "create_histogram", None)):
        builder.create_histogram = _histogram_in_range(builder.create_histogram)
    if callable(getattr(builder, "create_clampf", None)):
        builder.create_clampf = _clamp_in_order(builder.create_clampf)
    if not callable(getattr(builder, "get_bf16", None)):
        builder.get_bf16 = _get_bf16(builder)


def _bfloat16_as_floats(builder) -> None:
    """Install the bfloat16 mends (above) on the interpreter's builder."""
    def binary(original):
        def wrapper(lhs, rhs, *args, **kwargs):
            if not (_is_bf16(lhs) and _is_bf16(rhs)):
                return original(lhs, rhs, *args, **kwargs)
            return _to_bfloat16(original(_as_float32(lhs), _as_float32(rhs), *args, **kwargs))
        return wrapper

    def compare(original):  # a bool result: nothing to round
        def wrapper(lhs, rhs, *args, **kwargs):
            if _is_bf16(lhs) or _is_bf16(rhs):
                return original(_as_float32(lhs), _as_float32(rhs), *args, **kwargs)
            return original(lhs, rhs, *args, **kwargs)
        return wrapper

    def unary(original):
        def wrapper(arg, *args, **kwargs):
            if not _is_bf16(arg):
                return original(arg, *args, **kwargs)
            return _to_bfloat16(original(_as_float32(arg), *args, **kwargs))
        return wrapper

    def cast(original):  # through float32 on the bfloat16 side (bfloat16 <-> float32 is right already)
        def wrapper(src, dst_type, *args, **kwargs):
            from triton import language as tl

            if _is_bf16(dst_type) and not _is_bf16(src):
                kind = np.asarray(src.data).dtype
                if kind == np.float64 or kind.kind in "iu":  # one rounding, as cvt.rn.bf16.f64 / .s32 (not two)
                    return _exactly_to_bfloat16(np.asarray(src.data))
                return _to_bfloat16(original(src, tl.float32, *args, **kwargs))
            if _is_bf16(src) and not _is_bf16(dst_type):
                return original(_as_float32(src), dst_type, *args, **kwargs)
            return original(src, dst_type, *args, **kwargs)
        return wrapper

    comparisons = tuple(name for name in dir(builder) if name.startswith("create_fcmp"))
    for names, mend in ((_BF16_BINARY, binary), (comparisons, compare), (_BF16_UNARY, unary), (_BF16_CASTS, cast)):
        for name in names:
            if callable(getattr(builder, name, None)):
                setattr(builder, name, mend(getattr(builder, name)))


def _saturating(cast):
    """A float-to-integer cast as the GPU does it (PTX cvt.rzi saturates: past the range it gives the largest or
    smallest integer, NaN gives 0), where numpy's gives INT_MIN for both: a test on such a cast would otherwise make
    a kernel one thing in the interpreter and another on the GPU. To an 8- or 16-bit integer, a value past the
    type's range is refused (NarrowCastOutOfRange): the compiled kernel converts to 32 bits and keeps the low bits,
    or, for a constant, folds LLVM's undefined value, so no one answer is the GPU's."""
    def saturated(src, dst_type):
        from triton.runtime import interpreter

        data = np.asarray(src.data)
        if data.dtype.kind != "f":
            return cast(src, dst_type)
        target = interpreter._get_np_dtype(dst_type)
        info = np.iinfo(target)
        if info.bits < 32:
            outside = np.isfinite(data) & ((data >= info.max + 1.0) | (data <= info.min - 1.0)) | np.isinf(data)
            if outside.any():
                raise NarrowCastOutOfRange(
                    f"a float cast to {dst_type.scalar.name} of {int(np.count_nonzero(outside))} of {data.size} lanes "
                    f"outside {info.min}..{info.max} (e.g. {float(data[outside].flat[0]):g}): past the range the "
                    f"GPU's conversion is undefined (the compiled kernel keeps the low bits of a 32-bit integer, or "
                    f"folds any value), so the kernel would compute one thing here and another on a GPU. Clamp "
                    f"first (tl.minimum / tl.maximum), or cast to tl.int32")
        wide = np.nan_to_num(data.astype(np.float64), nan=0.0)
        high, low = wide >= float(info.max), wide <= float(info.min)
        out = np.where(high | low, 0.0, wide).astype(target)
        out = np.where(high, info.max, np.where(low, info.min, out)).astype(target)
        return interpreter.TensorHandle(out, dst_type.scalar)
    return saturated


# A cast to float8 rounding to nearest even compiles to PTX cvt.rn.satfinite on sm_90 (from float32 and float16;
# triton's conversion tests in the NVIDIA backend check for it): past the format's largest finite value it gives
# that value with the sign, NaN stays NaN. The interpreter's own conversion gets these wrong (1000 and inf as
# float8e4nv both read back 256, NaN 384), and misses the carry of a rounding into the exponent (500 as float8e5
# reads back 256, not 512); and reading float8e4nv back, its NaN as 480. So casts to and from the two OCP formats
# go through torch's float8 types, which round and read them as the standard says, after the GPU's saturation.
_FP8_TORCH = {"fp8e4nv": ("float8_e4m3fn", 448.0), "fp8e5": ("float8_e5m2", 57344.0)}


def _fp8_as_the_gpu(convert):
    """Casts to and from float8e4nv and float8e5 as the GPU does them (above); others, and the round-toward-zero
    cast (plain bit truncation on the GPU), as the interpreter does them."""
    def converted(src, dst_type, rounding_mode=None, *args, **kwargs):
        import torch
        from triton import language as tl
        from triton.runtime import interpreter

        to, of = (getattr(getattr(t, "scalar", t), "name", "") for t in (dst_type, src.dtype))
        rtz = "RTZ" in str(getattr(rounding_mode, "name", rounding_mode)).upper()
        if to == "fp8e5" and rtz and of in ("fp16", "fp32", "fp64"):
            return _float8e5_toward_zero(convert, src, dst_type, rounding_mode, of)
        if (to in _FP8_TORCH) == (of in _FP8_TORCH) or (to in _FP8_TORCH and rtz) or \
                not hasattr(torch, "float8_e5m2"):
            result = convert(src, dst_type, rounding_mode, *args, **kwargs)
            if rtz and to in _LARGEST_16 and of in ("fp32", "fp64"):
                return _past_the_range_toward_zero(np.asarray(src.data, dtype=np.float64), result, to)
            return result
        if to in _FP8_TORCH:
            kind, largest = _FP8_TORCH[to]
            values = np.asarray(_as_float32(src).data if _is_bf16(src) else src.data).astype(np.float32)
            bits = torch.from_numpy(np.clip(values, -largest, largest)).to(getattr(torch, kind)).view(torch.uint8)
            return interpreter.TensorHandle(bits.numpy().view(interpreter._get_np_dtype(dst_type)), dst_type.scalar)
        kind, _ = _FP8_TORCH[of]
        bits = torch.from_numpy(np.ascontiguousarray(np.asarray(src.data)).view(np.uint8))
        values = bits.view(getattr(torch, kind)).to(torch.float32).numpy()
        if to == "bf16":
            return _to_bfloat16(interpreter.TensorHandle(values, tl.float32))
        return interpreter.TensorHandle(values.astype(interpreter._get_np_dtype(dst_type)), dst_type.scalar)
    return converted


def _float8e5_toward_zero(convert, src, dst_type, rounding_mode, of: str):
    """A cast to float8e5 rounding toward zero as sm_90 compiles it: to float16 toward zero (cvt.rz.f16, the largest
    finite half past the range), then the half's high byte, which is float8e5's layout. The interpreter's own
    conversion clamped the exponent beside the truncated mantissa: 1e6 became NaN, where a GPU gives 57344."""
    from triton import language as tl
    from triton.runtime import interpreter

    half = src
    if of != "fp16":
        half = convert(src, tl.float16, rounding_mode)
        half = _past_the_range_toward_zero(np.asarray(src.data, dtype=np.float64), half, "fp16")
    high = (np.asarray(half.data).view(np.uint16) >> 8).astype(np.uint8)
    return interpreter.TensorHandle(high.view(interpreter._get_np_dtype(dst_type)), dst_type.scalar)


_LARGEST_16 = {"fp16": (65504.0, 0x7BFF), "bf16": (3.3895313892515355e38, 0x7F7F)}  # the largest finite, its bits


def _past_the_range_toward_zero(values, result, to: str):
    """A cast to float16 / bfloat16 rounding toward zero (fp_downcast_rounding="rtz", PTX cvt.rz) of a finite value
    past the type's range gives the largest finite value, as IEEE's round-toward-zero does; the interpreter gave
    NaN (its exponent clamped beside the truncated mantissa)."""
    from triton.runtime import interpreter

    largest, bits = _LARGEST_16[to]
    past = np.isfinite(values) & (np.abs(values) > largest)
    if not past.any():
        return result
    data = np.array(result.data, copy=True)
    view = data.view(np.uint16)
    view[...] = np.where(past, np.where(values < 0, bits | 0x8000, bits), view)
    return interpreter.TensorHandle(data, result.dtype)


def _get_bf16(builder):
    """The builder's bfloat16 constant (tl.full(..., tl.bfloat16)), which triton 3.6's interpreter lacks, as 3.9's."""
    def get_bf16(value):
        from triton import language as tl

        return builder.create_fp_trunc(builder.get_fp32(value), tl.bfloat16)
    return get_bf16


def _histogram_in_range(histogram):
    """tl.histogram refusing a value outside 0..bins-1 on a lane it counts (HistogramOutOfRange)."""
    def checked(data, bins, mask=None, *args, **kwargs):
        values = np.asarray(data.data)
        counted = np.ones(values.shape, dtype=bool) if mask is None else np.asarray(mask.data, dtype=bool)
        outside = counted & ((values < 0) | (values >= int(bins)))
        if outside.any():
            raise HistogramOutOfRange(
                f"tl.histogram of a value outside 0..{int(bins) - 1} on {int(np.count_nonzero(outside))} of "
                f"{values.size} lanes: triton 3.6's interpreter counts a value of {int(bins)} in the last bin, 3.9's "
                f"drops it, and a GPU's histogram reads the bits of the index, so the kernel would compute one thing "
                f"here and another on a GPU. Keep the values in range, or leave the others out with mask=")
        return histogram(data, bins, mask, *args, **kwargs)
    return checked


_EXTREMES = ("_argmin_combine_tie_break_left", "_argmin_combine_tie_break_fast", "_argmax_combine_tie_break_left",
             "_argmax_combine_tie_break_fast", "_elementwise_max", "_elementwise_min")
_SCANS = {"_prod_combine": np.multiply, "_sum_combine": np.add}


def _tensor_of(handle, like):
    """A tl tensor of this handle, shaped as `like` (a tl tensor), with the handle's own element type."""
    from triton import language as tl

    shape = list(getattr(like.type, "shape", []) or [])
    return tl.core.tensor(handle, tl.block_type(handle.dtype, shape) if shape else handle.dtype)


def _bfloat16_scan(values, axis: int, reverse: bool, combine):
    """A cumulative sum or product along `axis`, each step rounded to bfloat16 as the GPU's bfloat16 arithmetic
    does; float32 numbers in, bfloat16 bits out."""
    from triton import language as tl
    from triton.runtime import interpreter

    moved = np.moveaxis(np.asarray(values, dtype=np.float32), axis, -1)
    moved = moved[..., ::-1] if reverse else moved
    out = np.empty(moved.shape, dtype=np.uint16)
    acc = None
    for i in range(moved.shape[-1]):
        step = moved[..., i] if acc is None else combine(acc, moved[..., i]).astype(np.float32)
        bits = np.asarray(_to_bfloat16(interpreter.TensorHandle(np.asarray(step, np.float32), tl.float32)).data)
        out[..., i] = bits
        acc = (bits.astype(np.uint32) << 16).view(np.float32)
    out = out[..., ::-1] if reverse else out
    return interpreter.TensorHandle(np.ascontiguousarray(np.moveaxis(out, -1, axis)), tl.bfloat16)


def _bfloat16_as_numbers_in_reductions(apply):
    """tl.max / tl.argmax / tl.cumprod and their kin on bfloat16 blocks: the interpreter's fast paths apply numpy to
    the uint16 bits (-1.0 is the largest, a product of ones is garbage). A maximum or minimum is taken of the numbers
    (exact: it is one of them) and given back as bfloat16; a cumulative sum or product rounds each step to bfloat16."""
    def wrapper(self, input, *args, **kwargs):
        from triton.runtime import interpreter

        inputs = input if isinstance(input, (tuple, list)) else (input,)
        combine = getattr(self, "combine_fn", None)
        name = getattr(getattr(combine, "fn", combine), "__name__", "")
        if not any(_is_bf16(getattr(value, "dtype", None)) for value in inputs):
            return apply(self, input, *args, **kwargs)
        if name in _SCANS and isinstance(self, interpreter.ScanOps) and len(inputs) == 1:
            bits = _bfloat16_scan(np.asarray(_as_float32(inputs[0].handle).data), self.axis, self.reverse,
                                  _SCANS[name])
            scanned = _tensor_of(bits, inputs[0])
            return (scanned,) if isinstance(input, (tuple, list)) else scanned
        if name not in _EXTREMES:
            return apply(self, input, *args, **kwargs)
        numbers = tuple(_tensor_of(_as_float32(v.handle), v) if _is_bf16(v.dtype) else v for v in inputs)
        result = apply(self, numbers if isinstance(input, (tuple, list)) else numbers[0], *args, **kwargs)
        first = result[0] if isinstance(result, tuple) else result
        back = _tensor_of(_to_bfloat16(first.handle), first)
        return (back, *result[1:]) if isinstance(result, tuple) else back
    return wrapper


def _value_at_the_index(self, values, result):
    """tl.max / tl.min with return_indices as a GPU's argmax combine gives them: the value is the one at the index
    chosen (the leftmost of the tied, -0.0 and +0.0 tying), so [-0.0, +0.0] gives -0.0 and index 0."""
    value, index = result
    chosen = np.asarray(index.handle.data).astype(np.int64)
    data = np.asarray(value.handle.data)
    if self.axis is None:
        picked = values.reshape(-1)[chosen.reshape(-1)]
    else:
        along = list(values.shape)
        along[self.axis] = 1
        picked = np.take_along_axis(values, chosen.reshape(along), self.axis)
    value.handle.data = np.where(data == 0, picked.reshape(data.shape), data).astype(data.dtype)
    return result


def _reduced_zeros_ordered(min_max):
    """tl.max / tl.min of a float block as a GPU folds them (max.f32 / min.f32: -0.0 below +0.0): a row whose
    maximum is a zero and that holds +0.0 gives +0.0, a row whose minimum is a zero and that holds -0.0 gives -0.0;
    numpy's nanmax / nanmin may return either zero (a kernel could read 1 / m)."""
    def ordered(self, input, val_reduce_op, idx_reduce_op=None, *args, **kwargs):
        result = min_max(self, input, val_reduce_op, idx_reduce_op, *args, **kwargs)
        values = np.asarray(getattr(getattr(input[0] if isinstance(input, tuple) else input, "handle", None), "data",
                                    np.zeros(0)))
        if val_reduce_op is None or values.dtype.kind != "f" or not (values == 0).any():
            return result
        if idx_reduce_op is not None and isinstance(result, tuple):  # tl.max(..., return_indices=True)
            return _value_at_the_index(self, values, result)
        maximum = "max" in getattr(val_reduce_op, "__name__", "")
        wanted = (values == 0) & (np.signbit(values) != maximum)
        present = np.any(wanted, axis=self.axis, keepdims=getattr(self, "keep_dims", False))
        value = result[0] if isinstance(result, tuple) else result
        data = np.asarray(value.handle.data)
        value.handle.data = np.where((data == 0) & present, 0.0 if maximum else -0.0, data).astype(data.dtype)
        return result
    return ordered


def _gather_in_range(gather):
    """tl.gather refusing an index outside its block (GatherOutOfRange): numpy's take_along_axis counts a negative
    index from the end, a GPU reads whatever its registers hold (the index is not checked there)."""
    def checked(src, indices, axis, *args, **kwargs):
        index = np.asarray(indices.data)
        size = np.shape(src.data)[axis]
        outside = int(np.count_nonzero((index < 0) | (index >= size)))
        if outside:
            raise GatherOutOfRange(
                f"tl.gather with an index outside 0..{size - 1} on {outside} of {index.size} lanes (e.g. "
                f"{int(index[(index < 0) | (index >= size)].flat[0])}): the interpreter counts a negative index from "
                f"the end, a GPU reads an undefined value, so the kernel would compute one thing here and another on a "
                f"GPU. Keep every index inside the block (tl.where(ok, i, 0)), masked lanes too")
        return gather(src, indices, axis, *args, **kwargs)
    return checked


def _shift_in_width(shift):
    """An integer shift refusing an amount outside 0..width-1 on any lane (ShiftPastWidth): numpy gives 0 or the
    sign, LLVM leaves it undefined (the compiled kernel may store a register nothing wrote)."""
    def checked(lhs, rhs, *args, **kwargs):
        amount, bits = np.asarray(rhs.data), np.asarray(lhs.data).dtype.itemsize * 8
        outside = (amount < 0) | (amount >= bits) if amount.dtype.kind == "i" else amount >= bits
        count = int(np.count_nonzero(outside))
        if count:
            raise ShiftPastWidth(
                f"a shift by {int(np.asarray(amount)[outside].flat[0])} of a {bits}-bit integer on {count} of "
                f"{amount.size} lanes: a shift by the width or more is undefined on a GPU (the compiled kernel may "
                f"store whatever a register held), while numpy gives 0, so the kernel would compute one thing here "
                f"and another on a GPU. Keep every lane's amount in 0..{bits - 1}, masked lanes too")
        return shift(lhs, rhs, *args, **kwargs)
    return checked


def _no_address_numbers(convert):
    """A pointer cast to an integer, or an integer to a pointer, refused (AddressAsNumber, review 19): a tensor's
    address is the interpreter's here and the allocator's on a GPU (PyTorch's CUDA allocator aligns each tensor to
    512 bytes), so a kernel that reads it can tell them apart and compute another thing on each."""
    def refused(*args, **kwargs):
        raise AddressAsNumber(
            "a pointer cast to an integer (or an integer to a pointer): a tensor's address is not the same number in "
            "the interpreter and on a GPU, so a kernel that computes with it can do one thing here and another "
            "there. Compute offsets from program ids, tl.arange and the sizes the launcher passes; keep pointers as "
            "pointers (x_ptr + offsets)")
    return refused


def _debug_check(create_assert):
    """A failing check of a debug build (instrument._debug_as_jitted) as DebugCheckFailed, which says where it comes
    from; the interpreter raises a bare AssertionError."""
    def checked(condition, message, *args, **kwargs):
        if not bool(np.all(np.asarray(condition.data))):
            raise DebugCheckFailed(
                f"{message}: a check of the kernel's debug build failed. @triton.jit(debug=True) compiles every "
                "tl.device_assert, and an overflow check of each int32 + and *, into the GPU kernel, and a failing "
                "one stops it there")
        return create_assert(condition, message, *args, **kwargs)
    return checked


def _clamp_in_order(clamp):
    """tl.clamp refusing min > max on any lane (ClampBoundsCrossed): the interpreter gives max (or NaN), while sm_90
    compiles clamp(x, -m, m) to min.xorsign.abs, which gives -0.5 for clamp(0.5, 1.0, -1.0)."""
    def checked(arg, lo, hi, *args, **kwargs):
        low, high = np.broadcast_arrays(*(np.asarray(_as_float32(h).data if _is_bf16(h) else h.data)
                                          for h in (lo, hi)))
        crossed = int(np.count_nonzero(low > high))
        if crossed:
            raise ClampBoundsCrossed(
                f"tl.clamp with its min above its max on {crossed} of {np.size(low)} lanes (e.g. min "
                f"{float(low[low > high].flat[0]):g}, max {float(high[low > high].flat[0]):g}): undefined, and a GPU "
                f"computes it one way or another by how the call compiled (clamp(x, -m, m) becomes min.xorsign.abs "
                f"on sm_90), so the kernel would compute one thing here and another on a GPU. Keep min <= max")
        return clamp(arg, lo, hi, *args, **kwargs)
    return checked


def _zeros_ordered(pick, name: str):
    """tl.maximum / tl.minimum as PTX max.f32 / min.f32 take signed zeros: -0.0 below +0.0, so the maximum of +0.0
    and -0.0 is +0.0 and the minimum -0.0, where numpy may return either operand (a kernel could read 1 / m)."""
    def ordered(lhs, rhs, *args, **kwargs):
        from triton.runtime import interpreter

        result = pick(lhs, rhs, *args, **kwargs)
        a, b = np.asarray(lhs.data), np.asarray(rhs.data)
        if a.dtype.kind != "f" or b.dtype.kind != "f":
            return result
        a, b, data = np.broadcast_arrays(a, b, np.asarray(result.data))
        zeros = (a == 0) & (b == 0)
        if not zeros.any():
            return result
        negative = np.signbit(a) & np.signbit(b) if "max" in name else np.signbit(a) | np.signbit(b)
        signed = np.where(negative, -0.0, 0.0).astype(data.dtype)
        return interpreter.TensorHandle(np.where(zeros, signed, data), result.dtype)
    return ordered


def _arg_reduce_without_nan(min_max):
    """tl.argmax / tl.argmin refusing a block that holds NaN (ArgReduceOverNaN): numpy's nanargmax skips it, a GPU
    compares with > and ==, both false against NaN, so which index wins depends on its tree."""
    def checked(self, input, val_reduce_op, idx_reduce_op=None, *args, **kwargs):
        values = np.asarray(getattr(getattr(input, "handle", None), "data", np.zeros(0)))
        if idx_reduce_op is not None and values.dtype.kind == "f" and np.isnan(values).any():
            raise ArgReduceOverNaN(
                f"tl.argmax / tl.argmin over a block with NaN in {int(np.count_nonzero(np.isnan(values)))} of "
                f"{values.size} lanes: the interpreter skips NaN, a GPU compares with > and ==, both false against "
                f"NaN, so the index it returns depends on the order of its tree. Replace NaN first (tl.where(x == x, "
                f"x, -float('inf')))")
        return min_max(self, input, val_reduce_op, idx_reduce_op, *args, **kwargs)
    return checked


def _nonzero_divisor(divide, name: str):
    """An integer division or remainder that refuses a zero divisor on any lane (IntegerDivisionByZero), and, signed,
    the smallest integer divided by -1 (IntegerDivisionOverflow: numpy gives the smallest integer, a GPU an
    undefined value)."""
    def checked(lhs, rhs, *args, **kwargs):
        top, bottom = np.asarray(lhs.data), np.asarray(rhs.data)
        if name in ("create_sdiv", "create_srem") and top.dtype.kind == "i":
            overflow = int(np.count_nonzero((top == np.iinfo(top.dtype).min) & (bottom == -1)))
            if overflow:
                raise IntegerDivisionOverflow(
                    f"the smallest {top.dtype.itemsize * 8}-bit integer divided by -1 on {overflow} of {top.size} "
                    f"lanes: the quotient does not fit, numpy gives the smallest integer and a GPU an undefined "
                    f"value (the compiled kernel may store whatever a register held), so the kernel would compute one "
                    f"thing here and another on a GPU. Divide in a wider type (.to(tl.int64)), or keep that lane out")
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
