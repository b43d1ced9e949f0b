"""The one hook into Triton's interpreter: bounds checks, access counts and store coverage.

Everything version-specific lives here. We wrap a handful of methods of the interpreter's builder object
(``triton.runtime.interpreter.interpreter_builder``), the kernel launch (``InterpretedFunction.run``), its
reductions (``ReduceScanOpInterface.apply``) and its patch of ``tl.range`` (``_patch_lang_core``). Every wrapper
takes ``*args`` and passes them through unchanged, so a new argument in a later triton release does not break us;
we only read the positions that have been stable from 3.6 to 3.9 (the pointer, and the mask where there is one).
Tested on triton 3.6.0 and 3.9.0.

What the wrappers do while a ``Recorder`` is active:
- map every pointer to the tensor argument(s) it came from (a tag carried through the builder's
  ops, or the tensor that holds most of its lanes); ``tl.where`` between pointers into two
  tensors carries both, and each lane is then judged against the one it falls in;
- before a load, store or atomic runs, check every byte of each unmasked lane lies inside its tensor
  (a lane moves its pointer's element width: an int64 lane over float32 data is 8 bytes); an
  out-of-bounds lane stops the kernel *before* the access, so nothing is read or corrupted;
- count the bytes each load or store moves per tensor, for its distinct lanes (a GPU coalesces
  duplicate lanes into one access), in all and per program, and mark which elements were stored; an
  atomic lane reads and writes its bytes; per program, what it loaded between two of its stores into a tensor
  (``StoreSegment``: per-program budgets that pairing programs cannot game);
- run a launch's programs in an order drawn for it (``program_order``), never in id order, as a GPU keeps none;
- record, per launch, which program stored each element: two programs storing one element (even the
  same bytes), or a program loading what another stored, is a race on a GPU. Atomics that combine (add, max, ...)
  are exempt among themselves; an exchange, a compare-and-swap outside a retry loop, and an atomic that writes a
  value made from what an atomic read there (``Recorder.read_back``) overwrite and race; a plain store of an
  element another program adds into atomically, and a plain load of an element another program updated atomically
  (outside a compare-and-swap retry loop), race too (``_check_atomic_race``); a swap in a retry loop fails once
  where another program updated its element, as it may on a GPU (``contended_swaps``);
- give masked-off lanes of a load without ``other=`` a poison value (a NaN whose payload the judge recognises,
  ``transfer.UNDEFINED_NAN32``, or the largest integer), as undefined as on a GPU, where the interpreter gives 0;
- hand loads and stores boolean masks (the interpreter can build an int32 one that it then rejects), and note
  where, so the learner can write a mask that runs without the grader;
- count ``tl.dot`` calls and their multiply-adds, hold them to the GPU's smallest size (every dimension at
  least 16), and give bfloat16 operands to numpy as the numbers they are (the interpreter multiplies their
  raw bits); every block carries the dots it was computed from, so that a dot whose result never reaches a
  store (multiplied by a constant zero, overwritten) is known as dead work; where the tl.dot budget applies, each
  dot's result is also perturbed in shadows carried beside the real values (``DotShadows``), and a dot whose
  perturbation moves no store (d - d, however written) is dead work too; and the float operations outside tl.dot
  are counted (``cuda_cores``: products on CUDA cores beside a tl.dot kept looking live);
- where blocks are the lesson (``Recorder.tile_limit``), note the first block shape wider than the case allows,
  whatever made it (a local constexpr, a ``@triton.jit`` helper).
Outside a recording too, ``tl.range``'s loop variable is a tensor, as on the GPU (``i.to(tl.int64)``). On a triton
version we have not tested, ``status()`` says so and the grader falls back to checking values only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import os
import sys

import numpy as np

from grader.paths import location  # noqa: F401 (the name this module's callers use: instrument.location)
from grader.worker import cuda_cores, gpu_ops
from grader.worker.as_compiled import (
    _ABSENT,
    _as_the_compiler_reads,
    _debug_as_jitted,
    _ones_as_constexprs,
    _source_as_compiled,
    _unspecialized,
    combines_as_compiled,
)
from grader.worker.dot_shadows import DotShadows, _as_float32  # noqa: F401 (instrument.DotShadows, for callers)
from grader.worker.gpu_semantics import (
    _arg_reduce_without_nan,
    _bfloat16_as_floats,
    _bfloat16_as_numbers_in_reductions,
    _debug_check,
    _fp8_as_the_gpu,
    _gather_in_range,
    _no_address_numbers,
    _nonzero_divisor,
    _reduced_zeros_ordered,
    _remainders_histograms_clamps_constants,
    _saturating,
    _shift_in_width,
    _zeros_ordered,
)
from grader.worker.recorder import _HERE, Recorder, _in_while_loop, _kernel_line, _triton_dir, learner_line  # noqa: F401
from grader.worker.regions import (  # noqa: F401 (the names callers read as instrument.X)
    _DOTS,
    _MEMORY_OPS,
    _SPLAT,
    _WRITTEN_AT,
    DOT_16BIT_RULE,
    MIN_DOT,
    SUM_16BIT_ADVICE,
    ArgReduceOverNaN,
    CombineOrderMatters,
    DotNot16Bit,
    DotTooSmall,
    GatherOutOfRange,
    IntegerDivisionByZero,
    IntegerDivisionOverflow,
    Launch,
    NarrowCastOutOfRange,
    Race,
    Region,
    RegionMap,
    ShiftPastWidth,
    StepNotPositive,
    SumIn16Bit,
    Traffic,
    _refuse_16_bit_sum,
)

# -- installing the hook ------------------------------------------------------------------
_active: Recorder | None = None
_dry: list | None = None  # while dry_run() is on: the launches noted
_installed = False
_unavailable_reason: str | None = None


def _hook_points():
    from triton.runtime import interpreter

    builder = getattr(interpreter, "interpreter_builder", None)
    executor = getattr(interpreter, "InterpretedFunction", None)
    missing = [name for name in (*_MEMORY_OPS, "set_grid_idx", "set_grid_dim", "create_addptr", "create_dot")
               if not callable(getattr(builder, name, None))]
    if executor is None or "run" not in vars(executor):
        missing.append("InterpretedFunction.run")
    if "apply" not in vars(getattr(interpreter, "ReduceScanOpInterface", object)):
        missing.append("ReduceScanOpInterface.apply")
    for name in ("_patch_lang_core", "_patch_lang", "_LangPatchScope", "_get_np_dtype", "_implicit_cvt"):
        if not callable(getattr(interpreter, name, None)):
            missing.append(name)
    handle = getattr(interpreter, "TensorHandle", None)
    if not dataclasses.is_dataclass(handle) or "attr" not in [field.name for field in dataclasses.fields(handle)]:
        missing.append("TensorHandle.attr")
    return interpreter, builder, executor, missing


def status() -> tuple[bool, str]:
    """(True, "") when the hook can be used; else (False, the one-line reason)."""
    global _unavailable_reason
    if _installed:
        return True, ""
    if _unavailable_reason is not None:
        return False, _unavailable_reason
    from grader import env

    if not env.interpreter_forced():
        _unavailable_reason = "the interpreter is not in use"
    elif not env.triton_is_tested():
        _unavailable_reason = (f"triton {env.versions()['triton']} is untested with the grader's interpreter hook: "
                               "grading correctness only (no out-of-bounds, coverage or budget checks)")
    else:
        try:
            missing = _hook_points()[3]
        except Exception as exc:  # a reorganised interpreter module
            missing = [repr(exc)]
        if missing:
            _unavailable_reason = (f"triton's interpreter lacks {', '.join(missing)}: "
                                   "grading correctness only (no out-of-bounds, coverage or budget checks)")
    return _unavailable_reason is None, _unavailable_reason or ""


_OTHER_AT = 2  # create_masked_load(ptrs, mask, other, ...) from 3.6 to 3.9
_VALUE_AT = 1  # create_masked_store(ptrs, value, mask, ...) from 3.6 to 3.9


def _poisoned_other(ptrs):
    """A block like the loaded one, full of a value no honest kernel relies on; None if unsure."""
    from triton.runtime import interpreter

    to_numpy = getattr(interpreter, "_get_np_dtype", None)
    element = ptrs.get_element_ty() if hasattr(ptrs, "get_element_ty") else None
    try:
        dtype = to_numpy(element)
    except Exception:  # a dtype the interpreter does not map, or a reorganised interpreter
        return None
    from grader.transfer import UNDEFINED_NAN32
    from grader.worker import guards

    # a NaN with the grader's payload (transfer.UNDEFINED_NAN32), or in every other case 0, as a GPU's compiled load
    # leaves a masked lane (guards.poison_finite): a kernel cannot test for a value that only the grader gives
    if guards.poison_is_finite():
        return interpreter.TensorHandle(np.zeros(np.shape(ptrs.data), dtype=dtype), element)
    nan32 = np.array([UNDEFINED_NAN32], dtype=np.uint32).view(np.float32)
    if dtype.kind == "f":  # in this float's width
        fill = nan32.astype(dtype)[0]
    elif dtype.kind in "iu":
        # bfloat16 lives in uint16 here: the top half of the float32 NaN; any other integer gets its largest value
        fill = UNDEFINED_NAN32 >> 16 if getattr(element, "name", "") == "bf16" else np.iinfo(dtype).max
    else:
        return None
    return interpreter.TensorHandle(np.full(np.shape(ptrs.data), fill, dtype=dtype), element)


def _bool_mask(mask):
    """Triton 3.9's interpreter broadcasts a scalar condition (`node < N`) into a block as int32 data, so
    `block_mask & (node < N)` is an int32 mask, which its own load and store then reject; the GPU (and
    triton 3.6) take it. Hand them booleans; the recorder notes where, for MASK_FIX_ADVICE."""
    from triton.runtime import interpreter

    if mask is None or np.asarray(mask.data).dtype == np.bool_:
        return mask
    return interpreter.TensorHandle(np.asarray(mask.data) != 0, mask.dtype)


def _wrap_memory_op(original, name, kind, ptr_at, mask_at):
    def wrapper(*args, **kwargs):
        mask = args[mask_at] if mask_at is not None and len(args) > mask_at else None
        if mask is not None and np.asarray(mask.data).dtype != np.bool_:  # also outside a recording
            mask = _bool_mask(mask)
            args = (*args[:mask_at], mask, *args[mask_at + 1:])
            if _active is not None:
                _active._note_mask_fix()
        failing = None  # a compare-and-swap's lanes that fail once (in a retry loop, as on a GPU: contended_swaps)
        if _active is not None:
            if kind == "atomic":
                racy = _active.overwriting_atomic(name, args)
                _active._access(kind, args[ptr_at], mask, racy=racy, swap=name == "create_atomic_cas")
                failing = _active.contended_swaps(args[ptr_at]) if name == "create_atomic_cas" and not racy else None
            else:
                _active._access(kind, args[ptr_at], mask, args[_VALUE_AT] if kind == "store" else None)
            if kind != "load" and _active.dot_calls:  # a product put to use is a value written (not a pointer, a mask)
                written = args[_WRITTEN_AT[name]]
                _active._mark_live(written)
                if _active.shadows is not None:
                    _active.shadows.reaches(written, mask)
            if kind == "load" and len(args) > _OTHER_AT and args[_OTHER_AT] is None:
                poison = _poisoned_other(args[ptr_at])
                if poison is not None:
                    args = (*args[:_OTHER_AT], poison, *args[_OTHER_AT + 1:])
        result = original(*args, **kwargs) if failing is None else gpu_ops.swap_failing(original, args, failing)
        if kind == "atomic" and _active is not None:
            _active.note_atomic_result(result, args[ptr_at])
        if kind == "load" and _active is not None and _active.shadows is not None:
            _active.shadows.load(result, mask)
        return result
    return wrapper


_ROUNDED = "_grader_rounded_16"  # on a block: a float32 value rounded to 16 bits on its way (x.to(fp16).to(fp32))
_ROUNDING = ("create_fp_trunc", "create_fp_to_fp", "create_fp_ext")


def _note_rounding(name: str, result, args) -> None:
    """Mark a block rounded to 16 bits, and the float32 value made back from it."""
    attr = getattr(result, "attr", None)
    if not isinstance(attr, dict) or not args:
        return
    source = getattr(args[0], "attr", None) or {}
    if getattr(result.dtype, "name", "") in ("fp16", "bf16") or (name == "create_fp_ext" and source.get(_ROUNDED)):
        attr[_ROUNDED] = True


def _wrap_tagging(original, name):
    multiply = name in ("create_fmul", "create_mul")
    splat = name == "create_splat"
    adds = name in ("create_fadd", "create_fsub")
    rounding = name in _ROUNDING
    flops = cuda_cores.FLOPS.get(name, 0)  # float work on CUDA cores, where the tensor-core rule applies

    def wrapper(*args, **kwargs):
        if adds and _active is not None and _active.dot_calls:
            _refuse_16_bit_sum("add", args)
        result = original(*args, **kwargs)
        if rounding and _active is not None and _active.dot_calls:
            _note_rounding(name, result, args)
        if _active is not None:
            if flops and _active.dots_16bit:
                _active.float_ops += cuda_cores.counted(flops, args) * cuda_cores.elements(result.data)
            if _active.shadows is not None and name != "create_dot":  # see _wrap_dot
                _active.shadows.op(original, name, result, args, kwargs)
            _active._tag(result, args)
            if _active.atomic_reads:
                _active.carry_reads(result, args)
            if splat and isinstance(getattr(result, "attr", None), dict):
                result.attr[_SPLAT] = True
            if _active.dot_calls:
                _active._carry_dots(result, args, multiply)
            if _active.tile_limit is not None:
                _active._check_tile(result)
        return result
    return wrapper


def _wrap_dot(original):
    def wrapper(*args, **kwargs):
        a, b = args[0], args[1]
        (m, k), n = np.shape(a.data)[-2:], np.shape(b.data)[-1]
        if min(m, n, k) < MIN_DOT:
            where, code = _kernel_line()
            raise DotTooSmall(f"tl.dot of a {m}x{k} block by a {k}x{n} block: on the GPU every dimension of tl.dot "
                              f"must be at least {MIN_DOT} (M={m}, N={n}, K={k}); use blocks of 16 or more "
                              f"(the interpreter would run it, the GPU compiler would not)\n  at {where}: {code}")
        if _active is not None and _active.dots_16bit:
            wide = [f"{side} is {handle.dtype}" for side, handle in (("the first operand", a), ("the second", b))
                    if getattr(handle.dtype, "name", "") not in ("fp16", "bf16")]
            if wide:  # the learner's line is added by the grader's report of the exception
                raise DotNot16Bit(DOT_16BIT_RULE.format(found=" and ".join(wide)))
        if _active is not None:
            _refuse_16_bit_sum("dot", args)
            accumulator = args[2] if len(args) > 2 else None
            attr = getattr(accumulator, "attr", None) or {}
            if attr.get(_ROUNDED) and attr.get(_DOTS):  # the learner's line is added by the grader's report
                raise SumIn16Bit("the running sum this tl.dot adds into was rounded to 16 bits since the last tl.dot "
                                 f"(acc.to(tl.float16) between two products). {SUM_16BIT_ADVICE}")
        precision = args[3] if len(args) > 3 else kwargs.get("input_precision")
        split = gpu_ops.split_dot_kind(precision, a, b)
        if split:  # 3xTF32, bf16x3, bf16x6: products of narrower parts, the smallest dropped (gpu_ops)
            result = gpu_ops.split_dot(split, original, a, b, args[2:], kwargs)
        else:
            read_a, read_b = gpu_ops.as_tf32(a, b, precision)  # a float32 dot's default precision: TF32
            result = original(_as_float32(read_a), _as_float32(read_b), *args[2:], **kwargs)
        if _active is None:
            return result
        counted, line = None, None
        if np.any(a.data) or np.any(b.data):  # zeros by zeros: no work (one zero block may be honest: q of 0s)
            work = int(np.prod(np.shape(a.data)[:-2], dtype=np.int64)) * m * n * k
            _active.dots += 1
            _active.dot_work += work
            frame = sys._getframe(1)  # the kernel's line, found again in the compiled TTIR (gpu_compile)
            while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith((_HERE, _triton_dir())):
                frame = frame.f_back
            line = (frame.f_code.co_filename, frame.f_lineno) if frame is not None else ("?", 0)
            if frame is not None:
                calls, total = _active.dot_lines.get(line, (0, 0))
                _active.dot_lines[line] = (calls + 1, total + work)
            counted = len(_active.dot_calls)
            _active.dot_calls.append((line, work, m, n))
            if _active.shadows is not None and not all(_active.shadows.fed(h) or _fed_dots(h) for h in (a, b)):
                _active.unfed_dots.add(counted)
        _active._carry_dots(result, args[:3], multiply=False)  # what the operands and the accumulator came from
        if counted is not None and isinstance(getattr(result, "attr", None), dict):
            result.attr[_DOTS] = result.attr.get(_DOTS, frozenset()) | {counted}
        if _active.shadows is not None:  # an unfed product (p @ ones: a row sum) counts for nothing, and is not
            # nudged either, or (p @ v) / (p @ ones) would cancel p @ v's nudge
            _active.shadows.dot(original, line, result, (a, b), args[2:], kwargs,
                                own=counted is not None and counted not in _active.unfed_dots)
        return result
    return wrapper


def _fed_dots(handle) -> set:
    """The tl.dot calls, fed by the inputs' values, whose results `handle` was computed from."""
    attr = getattr(handle, "attr", None)
    return set(attr.get(_DOTS, ())) - _active.unfed_dots if isinstance(attr, dict) else set()


def _wrap_reduce(apply):
    """Reductions and scans (tl.sum, tl.max, ...) build their blocks outside the builder: their results carry
    the tl.dot ids of their inputs too."""
    def wrapper(self, input, *args, **kwargs):
        inputs = input if isinstance(input, (tuple, list)) else (input,)
        combine = getattr(self, "combine_fn", None)
        combine = getattr(getattr(combine, "fn", combine), "__name__", "")
        if _active is not None and combine == "_sum_combine":
            _refuse_16_bit_sum("sum", inputs)
        before = _active.float_ops if _active is not None else 0  # a combine's ops, and its checks', count as below
        result = apply(self, input, *args, **kwargs)
        if _active is not None and _active.shadows is not None:
            _active.shadows.reduce(apply, self, inputs, result, args, kwargs)
        if _active is not None and _active.dots_16bit:
            _active.float_ops = before + cuda_cores.reduced(combine, inputs)
        if _active is not None and _active.dot_calls:
            handles = [getattr(value, "handle", None) for value in inputs]
            for value in result if isinstance(result, (tuple, list)) else (result,):
                _active._carry_dots(getattr(value, "handle", None), handles, multiply=False)
        return result
    return wrapper


def _tensor_range(original_range):
    """tl.range as the GPU runs it: its loop variable is a tensor of the bounds' promoted type (int32; uint32 for a
    bound of 2**31, int64 where a bound is one), so `i.to(tl.int64)` works and `i * 2` wraps where it does there; the
    interpreter's own gives Python ints. tl.static_range keeps ints (constexprs)."""
    from triton import language as tl
    from triton.runtime import interpreter

    def loop(arg1, arg2=None, step=None, **kwargs):
        if isinstance(step, tl.tensor) and int(np.asarray(step.handle.data).reshape(-1)[0]) <= 0:
            raise StepNotPositive(
                f"a loop's step known only at run time is {int(np.asarray(step.handle.data).reshape(-1)[0])}: the GPU "
                "compiler's loop counts up and takes a run-time step to be positive (a loop with a negative one "
                "never runs there, or never ends), while Python's counts down. Count up with a positive step and "
                "use end - 1 - i, or make the step a tl.constexpr")
        # the compiler's loop variable type: the bounds and step as tensors (2**31 a uint32), promoted together
        semantic = interpreter.interpreter_semantic
        lower, upper = (0, arg1) if arg2 is None else (arg1, arg2)
        kinds = [semantic.to_tensor(v).dtype for v in (lower, upper, 1 if step is None else step)]
        dtype = semantic.integer_promote_impl(semantic.integer_promote_impl(kinds[0], kinds[1]), kinds[2])
        numpy_type = interpreter._get_np_dtype(dtype)
        for value in original_range(arg1, arg2, step, **kwargs):
            yield tl.tensor(interpreter.TensorHandle(np.array([value], dtype=numpy_type), dtype), dtype)
    return loop


def _wrap_patch_lang_core(patch):
    def wrapper(lang, scope, *args, **kwargs):
        result = patch(lang, scope, *args, **kwargs)
        scope.set_attr(lang, "range", _tensor_range(lang.range))
        return result
    return wrapper


def _install():
    """Put the hook in place: wrap the interpreter's builder ops (memory, dots, arithmetic), its reductions, grid and
    launches, and make three of its slow paths fast. Once per process."""
    global _installed

    interpreter, builder, executor, _ = _hook_points()
    if callable(getattr(getattr(interpreter, "ASTTransformer", None), "visit_Assign", None)):
        _source_as_compiled(interpreter.ASTTransformer, interpreter)
    _wrap_builder(builder)
    _wrap_grid(builder)
    _skip_overflow_asserts(builder)
    interpreter.ReduceScanOpInterface.apply = combines_as_compiled(_wrap_reduce(gpu_ops.one_bit_sums(
        _bfloat16_as_numbers_in_reductions(interpreter.ReduceScanOpInterface.apply))))
    interpreter._implicit_cvt = gpu_ops.arguments_as_the_gpu(interpreter._implicit_cvt)
    if callable(getattr(getattr(interpreter, "ReduceOps", None), "min_max", None)):
        interpreter.ReduceOps.min_max = _arg_reduce_without_nan(_reduced_zeros_ordered(interpreter.ReduceOps.min_max))
    if callable(getattr(getattr(interpreter, "ReduceOps", None), "generic_reduce", None)):
        interpreter.ReduceOps.generic_reduce = gpu_ops.combine_in_any_order(interpreter.ReduceOps.generic_reduce)
    interpreter._patch_lang_core = _wrap_patch_lang_core(interpreter._patch_lang_core)
    patched: set = set()  # the languages patched since this launch began (_noted_launches and _patch_lang_once)
    executor.run = _noted_launches(executor.run, patched)
    interpreter._patch_lang = _patch_lang_once(interpreter, patched)
    interpreter._get_np_dtype = _np_dtype_once(interpreter._get_np_dtype)
    _installed = True


def _barrier(original):
    def wrapper(*args, **kwargs):
        if _active is not None:
            _active.barrier()
        return original(*args, **kwargs)
    return wrapper


def _wrap_builder(builder) -> None:
    """The builder's ops: bfloat16 ops on numbers (not bits), float-to-integer casts saturating as on the GPU,
    integer division refusing a zero divisor, every other create_ op tagged, memory ops recorded, tl.dot watched."""
    for name in ("create_fp_to_si", "create_fp_to_ui"):
        if callable(getattr(builder, name, None)):
            setattr(builder, name, _saturating(getattr(builder, name)))
    gpu_ops.install(builder)  # innermost: the bfloat16 mend and the signed zeros' order wrap these
    for name in ("create_maximumf", "create_minimumf", "create_maxnumf", "create_minnumf"):
        if callable(getattr(builder, name, None)):  # inside the bfloat16 mend, which hands it float32 numbers
            setattr(builder, name, _zeros_ordered(getattr(builder, name), name))
    _remainders_histograms_clamps_constants(builder)
    _bfloat16_as_floats(builder)  # after _saturating: a bfloat16 source reaches it as the float32 numbers it holds
    for name, wrap in (*((shift, _shift_in_width) for shift in ("create_shl", "create_lshr", "create_ashr")),
                       ("create_fp_to_fp", _fp8_as_the_gpu), ("create_gather", _gather_in_range),
                       ("create_barrier", _barrier), ("create_ptr_to_int", _no_address_numbers),
                       ("create_int_to_ptr", _no_address_numbers), ("create_assert", _debug_check)):
        if callable(getattr(builder, name, None)):
            setattr(builder, name, wrap(getattr(builder, name)))
    for name in ("create_sdiv", "create_udiv", "create_srem", "create_urem"):
        if callable(getattr(builder, name, None)):
            setattr(builder, name, _nonzero_divisor(getattr(builder, name), name))
    for name in dir(builder):
        if name.startswith("create_") and name not in _MEMORY_OPS and callable(getattr(builder, name)):
            setattr(builder, name, _wrap_tagging(getattr(builder, name), name))
    if callable(getattr(builder, "create_atomic_rmw", None)):  # inside the memory hook, which sees lane order
        builder.create_atomic_rmw = gpu_ops.lanes_in_any_order(builder.create_atomic_rmw)
    if callable(getattr(builder, "create_atomic_cas", None)):
        builder.create_atomic_cas = gpu_ops.cas_lanes_in_any_order(builder.create_atomic_cas)
    for name, (kind, ptr_at, mask_at) in _MEMORY_OPS.items():
        setattr(builder, name, _wrap_memory_op(getattr(builder, name), name, kind, ptr_at, mask_at))
    builder.create_dot = _wrap_dot(builder.create_dot)


def _wrap_grid(builder) -> None:
    """The record hears of each grid, and of each program as it starts: the next of its drawn order, not of the ids."""
    set_grid_idx, set_grid_dim = builder.set_grid_idx, builder.set_grid_dim

    def grid_idx(*args, **kwargs):
        if _active is not None:
            args = (*_active._start_program(tuple(args[:3])), *args[3:])
        return set_grid_idx(*args, **kwargs)

    def grid_dim(*args, **kwargs):
        if _active is not None:
            _active._start_grid(tuple(int(n) for n in args[:3]))
        return set_grid_dim(*args, **kwargs)

    builder.set_grid_idx, builder.set_grid_dim = grid_idx, grid_dim


def _noted_launches(launch, patched: set):
    """The interpreter's launch, noting each launch: in a dry run (dry_run()) noted and not run, in a recording noted
    before it runs. `patched` starts empty for each launch (_patch_lang_once)."""
    def run(self, *args, grid, warmup, **kwargs):
        noted = Launch.of(self.fn, self.arg_names, args, kwargs, grid, unspecialized=_unspecialized(self))
        if _dry is not None and not warmup:  # dry_run(): note the launch, run nothing
            _dry.append(noted)
            return None
        if _active is not None and not warmup:
            _active._launch(noted)
        args, kwargs = _ones_as_constexprs(self.arg_names, args, kwargs, noted.ones)
        patched.clear()
        scope = getattr(self.fn, "__globals__", {})
        replaced = _as_the_compiler_reads(scope)
        try:
            with _debug_as_jitted(bool((getattr(self, "kwargs", None) or {}).get("debug"))):
                return launch(self, *args, grid=grid, warmup=warmup, **kwargs)
        finally:
            patched.clear()
            for name, value in replaced.items():
                if value is _ABSENT:
                    scope.pop(name, None)
                else:
                    scope[name] = value
    return run


def _patch_lang_once(interpreter, patched: set):
    """Each call of a @jit function inside a kernel (tl.sum, tl.zeros, a learner's helper) patches triton.language
    again (_patch_lang: inspect.getmembers of every module it reaches), though the launch patched it already: a
    quarter of puzzle 10's grading time. Within one launch, a language patched once stays patched (the launch
    restores it at its end), so a second patch of the same languages is skipped."""
    patch_lang = interpreter._patch_lang
    languages: dict = {}  # function -> the triton.language modules its globals hold (what _patch_lang patches)

    def patch_once(fn):
        key = languages.get(fn)
        if key is None:
            key = languages[fn] = tuple(sorted(id(value) for value in fn.__globals__.values() if inspect.ismodule(value)
                                               and getattr(value, "__name__", "").startswith("triton.language")))
        if key in patched:
            return interpreter._LangPatchScope()
        patched.add(key)
        return patch_lang(fn)
    return patch_once


def _np_dtype_once(np_dtype):
    """The interpreter maps a triton dtype to numpy's by building a table on every call (a few seconds of a graph
    puzzle's grading); the mapping never changes, so each answer is kept."""
    np_dtypes: dict = {}

    def np_dtype_once(tt_dtype):
        try:
            return np_dtypes[tt_dtype]
        except KeyError:
            return np_dtypes.setdefault(tt_dtype, np_dtype(tt_dtype))
        except TypeError:  # unhashable: ask every time
            return np_dtype(tt_dtype)
    return np_dtype_once


def _skip_overflow_asserts(builder) -> None:
    """With debug off (as a GPU build has it), the overflow check of every integer + and * builds an assert it then
    drops (semantic.device_assert returns at once): a third of a graph puzzle's grading time, for nothing. The GPU
    wraps around silently; so does the interpreter without it, and the bounds check sees the wrapped offsets."""
    options = getattr(builder, "options", None)
    if dataclasses.is_dataclass(options) and not getattr(options, "debug", True) and \
            hasattr(options, "sanitize_overflow"):
        builder.options = dataclasses.replace(options, sanitize_overflow=False)


def install() -> bool:
    """Put the hook in place now (it is otherwise installed by the first recording); False if unavailable.
    Notebooks do this at import, so kernels called directly get the interpreter fixes too."""
    ok, _ = status()
    if ok and not _installed:
        _install()
    return ok


@contextlib.contextmanager
def dry_run():
    """Note every kernel launch inside the block, with its arguments, and run none of them: kernel-only grading
    compiles a case's kernels for the GPU before the interpreter runs them (grader.worker.execute). Yields the list
    of Launches, or None when the hook is unavailable."""
    global _dry
    if not install():
        yield None
        return
    _dry = []
    try:
        yield _dry
    finally:
        _dry = None


@contextlib.contextmanager
def recording(maps: bool = False):
    """Record every kernel launched inside the block. Yields None when the hook is unavailable.
    With maps, keep a RegionMap per tensor (what grader.show.memory_map draws)."""
    global _active
    if not install():
        yield None
        return
    _active = recorder = Recorder()
    recorder.maps = maps
    try:
        yield recorder
    finally:
        _active = None
