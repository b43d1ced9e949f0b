"""Where the interpreter's numpy (or Python) would compute another kernel than a GPU's, the GPU's way
(grader.worker.instrument installs these on the interpreter): bfloat16 blocks are computed with as numbers; casts
saturate (float to 32-bit integers, and to float8 as cvt.rn.satfinite); a float32 tl.dot reads TF32 operands;
tl.maximum / tl.minimum order signed zeros; assignments, conditional expressions and a helper's returns make tensors
of numbers, and `and` / `or` / `not` on tensors are element-wise (``_source_as_compiled``); an atomic's lanes
land in an order drawn for each call. What a GPU leaves undefined, or computes in an order the interpreter does not
follow, is refused with the reason: an integer division by zero or INT_MIN // -1, a shift past the width, a
tl.gather index outside its block, a float cast to a narrow integer past its range, tl.argmax over NaN, and a
tl.reduce whose combine gives another result in another order."""

from __future__ import annotations

import ast
import builtins
import inspect

import numpy as np

from grader.worker.dot_shadows import _as_float32
from grader.worker.regions import (
    ArgReduceOverNaN,
    CombineOrderMatters,
    GatherOutOfRange,
    IntegerDivisionByZero,
    IntegerDivisionOverflow,
    Launch,
    NarrowCastOutOfRange,
    ShiftPastWidth,
)

_ORDERS = np.random.default_rng(0)  # the orders atomics' lanes land in: one draw per call, the same run to run


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
        if (to in _FP8_TORCH) == (of in _FP8_TORCH) or (to in _FP8_TORCH and rtz) or \
                not hasattr(torch, "float8_e5m2"):
            return convert(src, dst_type, rounding_mode, *args, **kwargs)
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


def _as_tf32(a, b, precision):
    """A tl.dot's float32 operands at its default precision, TF32, as a tensor core reads them: the low 13 of the 23
    mantissa bits dropped (10 kept), so a float32 product is not exact on a GPU (x + y as a dot with ones misses a
    1e-6 tolerance there), where numpy's matmul is. input_precision="ieee" (and "tf32x3") stay exact."""
    from triton.runtime import interpreter

    asked = str(getattr(precision, "name", precision)).upper()
    if "TF32" not in asked or "X3" in asked or any(getattr(h.dtype, "name", "") != "fp32" for h in (a, b)):
        return a, b

    def cut(handle):
        bits = np.ascontiguousarray(np.asarray(handle.data, dtype=np.float32)).view(np.uint32) & np.uint32(0xFFFFE000)
        return interpreter.TensorHandle(bits.view(np.float32), handle.dtype)
    return cut(a), cut(b)


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


def _combine_in_any_order(generic_reduce):
    """tl.reduce with a combine function of the kernel's own (the interpreter folds it left to right), done again
    with each row's elements in the reverse order, and refused (CombineOrderMatters) when the two differ by more
    than rounding: a GPU combines a row in a tree (within each thread, then across threads, the operands either way
    round), so it takes the function to be associative and commutative. A combine that is not (a - b, keep the
    left one on a tie) would give one answer here and another there."""
    def checked(self, input):
        result = generic_reduce(self, input)
        values = input if isinstance(input, (tuple, list)) else (input,)
        flipped = tuple(self.to_tensor(np.flip(np.asarray(v.handle.data), axis=self.axis), v.dtype) for v in values)
        again = generic_reduce(self, flipped)
        for first, second in zip(result, again):
            a, b = (np.asarray(_as_float32(t.handle).data if _is_bf16(t.handle) else t.handle.data) for t in
                    (first, second))
            same = np.allclose(a, b, rtol=1e-3, atol=1e-6 * (1.0 + float(np.nanmax(np.abs(a), initial=0.0))),
                               equal_nan=True) if a.dtype.kind == "f" else np.array_equal(a, b)
            if not same:
                raise CombineOrderMatters(
                    "tl.reduce with your combine function gives another result when a row's elements are combined in "
                    "another order (the reverse): a GPU combines them in a tree, within each thread and then across "
                    "threads, taking operands either way round, not left to right as the interpreter does. The "
                    "combine function must be associative and commutative (a + b, a maximum, the online softmax's "
                    "pair; a tie broken by index, not by which operand came first)")
        return result
    return checked


def _is_tensor(value) -> bool:
    from triton import language as tl

    return isinstance(value, tl.core.tensor)


def _semantic():
    from triton.runtime import interpreter

    return interpreter.interpreter_semantic


class _AsCompiled:
    """What the GPU compiler makes of a kernel's Python where Python alone would keep a number, or a block whole
    (triton 3.6's code generator, and 3.9's where it differs). ``_source_as_compiled`` rewrites a kernel's source so
    that each construct calls one of these while the interpreter runs it (as ``grader_as_compiled``)."""

    @staticmethod
    def value(value):
        """An assigned value (``visit_Assign``'s _sanitize_value): every number a tensor, tuples element by element
        (`t = (65536, 1)`: t[0] is an int32 there), dtypes and None as they are."""
        from triton import language as tl

        if type(value) is tuple:
            return tuple(_AsCompiled.value(v) for v in value)
        value = value.value if isinstance(value, tl.constexpr) else value
        if isinstance(value, (bool, int, float)):
            return _semantic().to_tensor(value)
        return value

    @staticmethod
    def annotated(annotation, value):
        """`x: annotation = value`: a constexpr where the annotation *is* tl.constexpr (compared as the compiler
        compares it, not by its name), else an assignment."""
        from triton import language as tl

        return value if annotation == tl.constexpr else _AsCompiled.value(value)

    @staticmethod
    def returned(value):
        """What a @triton.jit helper returns: a number becomes a tensor, as triton 3.6 (the H200's) makes every
        returned number one. Triton 3.9 does so only where the returns it compiles differ (a `return` in a
        tl.static_range, under a run-time `if`), which the source alone cannot tell (a `return` under a constexpr
        `if` that is never compiled): a kernel whose result hangs on that difference is graded as 3.6 runs it."""
        from triton import language as tl

        if type(value) is tuple:
            return tuple(_AsCompiled.returned(v) for v in value)
        if isinstance(value, (tl.constexpr, bool, int, float)):
            return _semantic().to_tensor(value.value if isinstance(value, tl.constexpr) else value)
        return value

    @staticmethod
    def chosen(test, body, orelse):
        """`body if test else orelse`: on a run-time test the compiler makes the chosen branch a tensor (an
        scf.if yielding it); on a compile-time one it is Python's."""
        if _is_tensor(test):
            return _semantic().to_tensor(body() if test else orelse())
        return body() if test else orelse()

    @staticmethod
    def boolean(conjunction: bool, first, *rest):
        """`a and b` / `a or b` as the compiler folds them (``visit_BoolOp``): a compile-time operand decides or
        drops out, run-time ones combine element by element (logical_and / logical_or), where Python would take a
        block as true and return one operand whole (a mask `m1 or m2` passed into a helper's parameter)."""
        values, value = [], None
        for thunk in (lambda: first, *rest):
            value = thunk()
            if _is_tensor(value):
                values.append(value)
            elif bool(value) is not conjunction:  # False in an `and`, True in an `or`: the answer
                return value
        if not values:
            values.append(value)
        while len(values) >= 2:
            rhs, lhs = values.pop(), values.pop()
            values.append(lhs.logical_and(rhs) if conjunction else lhs.logical_or(rhs))
        return values[0]

    @staticmethod
    def negated(value):
        """`not x`: element-wise on a tensor, as the compiler's ``__not__``; Python's on anything else."""
        return value.__not__() if _is_tensor(value) else not value


def _call(name: str, *args):
    return ast.Call(func=ast.Attribute(value=ast.Name(id="grader_as_compiled", ctx=ast.Load()), attr=name,
                                       ctx=ast.Load()), args=list(args), keywords=[])


def _thunk(node):
    return ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                      body=node)


def _located(new, old):
    return ast.fix_missing_locations(ast.copy_location(new, old))


class _CompiledSource:
    """The visits ``_source_as_compiled`` puts on the interpreter's ASTTransformer (each `self` is that
    transformer)."""

    def visit_Assign(self, node):
        if len(node.targets) > 1:
            raise ValueError("Multiple assignments are not supported")
        node.targets = [self.visit(target) for target in node.targets]
        node.value = _located(_call("value", self.visit(node.value)), node.value)
        return node

    def visit_AugAssign(self, node):
        node = self.generic_visit(node)
        if not isinstance(node.target, ast.Name):
            return node
        value = ast.BinOp(left=ast.Name(id=node.target.id, ctx=ast.Load()), op=node.op, right=node.value)
        return _located(ast.Assign(targets=[ast.Name(id=node.target.id, ctx=ast.Store())],
                                   value=_call("value", value)), node)

    def visit_AnnAssign(self, node):
        node = self.generic_visit(node)
        if node.value is not None and isinstance(node.target, ast.Name):
            node.value = _located(_call("annotated", node.annotation, node.value), node.value)
        return node

    def visit_Return(self, node):
        node = self.generic_visit(node)
        if node.value is not None:
            node.value = _located(_call("returned", node.value), node.value)
        return node

    def visit_IfExp(self, node):
        node = self.generic_visit(node)
        return _located(_call("chosen", node.test, _thunk(node.body), _thunk(node.orelse)), node)

    def visit_BoolOp(self, node):
        node = self.generic_visit(node)
        first, *rest = node.values
        return _located(_call("boolean", ast.Constant(value=isinstance(node.op, ast.And)), first,
                              *[_thunk(v) for v in rest]), node)

    def visit_UnaryOp(self, node):
        node = self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return _located(_call("negated", node.operand), node)
        return node


def _source_as_compiled(transformer, interpreter) -> None:
    """The interpreter rewrites a kernel's source so that `x = value` makes a tensor of a number, as the GPU compiler
    does; everything else it runs as Python, which keeps numbers and takes blocks whole where the compiler does not:
    `k *= 65536` twice, `(a, b), c = ...`, `t = (65536, 1)`, `65536 if pid >= 0 else 1`, a helper's `return 65536`
    (each wraps to 0 only on a GPU; returns as triton 3.6 makes them: ``_AsCompiled.returned``), `-1 // 2` (floored
    in Python, truncated there), `k: NAME = v` with NAME not tl.constexpr, and `a or b` on masks inside a helper
    whose parameters say tl.constexpr (one mask whole in Python, the element-wise or there). Each is rewritten to
    call ``_AsCompiled`` (``transformer``: the interpreter's ASTTransformer class, given ``_CompiledSource``'s
    visits; ``interpreter``: its module, whose globals each kernel is given)."""
    interpreter.grader_as_compiled = _AsCompiled
    for name, visit in vars(_CompiledSource).items():
        if name.startswith("visit_"):
            setattr(transformer, name, visit)


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


_ABSENT = object()


def _as_the_compiler_reads(scope: dict) -> dict:
    """Put in a kernel's globals, for one launch, what the GPU compiler reads for names Python reads otherwise; return
    what they held (_ABSENT: nothing). Python's range, min and max are the compiler's tl.range and builtin min / max
    (element-wise on tensors, where Python's compares whole blocks); a tl builtin imported by name (`from
    triton.language import load`) is the interpreter's patched one, looked up as it is called (the launch patches
    triton.language after this)."""
    from triton import language as tl

    replaced = {}
    for name, stand_in in (("range", _builtin_range), ("min", _builtin_extreme("builtin_min")),
                           ("max", _builtin_extreme("builtin_max"))):
        if name not in scope:
            replaced[name], scope[name] = _ABSENT, stand_in
    for name, value in list(scope.items()):
        module = getattr(value, "__module__", None) or ""
        if inspect.isfunction(value) and getattr(value, "__triton_builtin__", False) and \
                module.startswith("triton.language") and getattr(tl, value.__name__, None) is value:
            replaced[name], scope[name] = value, _patched_member(value.__name__)
    return replaced


def _patched_member(name: str):
    def call(*args, **kwargs):
        from triton import language as tl

        return getattr(tl, name)(*args, **kwargs)
    return call


def _builtin_extreme(name: str):
    """The compiler's builtin min / max: Python's on numbers, tl.minimum / tl.maximum on tensors."""
    def extreme(*args, **kwargs):
        from triton import language as tl
        from triton.runtime import interpreter

        if any(isinstance(a, tl.core.tensor) for a in args):
            return getattr(tl.core, name)(*args, _semantic=interpreter.interpreter_semantic, **kwargs)
        return getattr(builtins, name[len("builtin_"):])(*args, **kwargs)
    return extreme


def _builtin_range(*args, **kwargs):
    """Python's range inside a kernel, as the GPU compiler takes it: tl.range, whose loop variable is an int32 (or
    int64) tensor, so `i * 65536 * 65536` wraps as it does there (Python's would give a big integer). Put in the
    kernel's globals only while it runs, so the launcher's own range stays Python's."""
    from triton import language as tl

    return tl.range(*args, **kwargs)


def _unspecialized(function) -> frozenset:
    """The parameters an interpreted @triton.jit(do_not_specialize=[...]) names (by name or by position)."""
    names = list(getattr(function, "arg_names", ()))
    listed = (getattr(function, "kwargs", None) or {}).get("do_not_specialize") or ()
    return frozenset(names[k] if isinstance(k, int) and 0 <= k < len(names) else k for k in listed)


def _ones_as_constexprs(function, args: tuple, kwargs: dict, grid, unspecialized) -> tuple[tuple, dict]:
    """The launch's arguments with each integer 1 the GPU's JIT specializes (Launch.ones) a tl.constexpr, as the
    kernel receives it there; the interpreter would make an int32 of it."""
    from triton import language as tl

    ones = Launch.of(function.fn, function.arg_names, args, kwargs, grid, unspecialized=unspecialized).ones
    if not ones:
        return args, kwargs
    names = list(function.arg_names)
    args = tuple(tl.constexpr(1) if i < len(names) and names[i] in ones else value for i, value in enumerate(args))
    given = set(names[:len(args)]) | set(kwargs)
    kwargs = {**kwargs, **{name: tl.constexpr(1) for name in ones if name in kwargs or name not in given}}
    return args, kwargs
