"""A kernel's Python as the GPU compiler reads it, where Python alone would read it otherwise (grader.worker.instrument
installs these on the interpreter): the interpreter's rewrite of a kernel's source is extended so that numbers
become tensors where the compiler makes them (every assignment, a conditional expression on a run-time test, a
helper's returns) and `and` / `or` / `not` are element-wise on tensors (``_source_as_compiled``); while a kernel runs,
its `range`, `min` and `max` are the compiler's and names imported from triton.language are the interpreter's
patched ones (``_as_the_compiler_reads``); and an integer argument equal to 1 is a constexpr, as the JIT
specializes it (``_ones_as_constexprs``); a kernel built with @triton.jit(debug=True) runs with its checks on, as
its GPU build does (``_debug_as_jitted``). grader.worker.gpu_semantics does the same for the arithmetic."""

from __future__ import annotations

import ast
import builtins
import contextlib
import dataclasses
import functools
import inspect


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


_ABSENT = object()


def _as_the_compiler_reads(scope: dict) -> dict:
    """Put in a kernel's globals, for one launch, what the GPU compiler reads for names Python reads otherwise; return
    what they held (_ABSENT: nothing). Python's range, min and max are the compiler's tl.range and builtin min / max
    (element-wise on tensors, where Python's compares whole blocks); a tl builtin imported by name (`from
    triton.language import load`) is the interpreter's patched one, looked up as it is called (the launch patches
    triton.language after this)."""
    from triton import language as tl

    replaced = {}
    for name, stand_in in _STAND_INS:
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
    """Python's range inside a kernel, as the GPU compiler takes it: tl.range, whose loop variable is a tensor of its
    bounds' promoted type, so `i * 65536 * 65536` wraps as it does there (Python's would give a big integer). Put in
    the kernel's globals only while it runs, so the launcher's own range stays Python's."""
    from triton import language as tl

    return tl.range(*args, **kwargs)


# Python's names in a kernel that the compiler reads as its own (made once: _as_the_compiler_reads, every launch)
_STAND_INS = (("range", _builtin_range), ("min", _builtin_extreme("builtin_min")),
              ("max", _builtin_extreme("builtin_max")))


def _unspecialized(function) -> frozenset:
    """The parameters an interpreted @triton.jit(do_not_specialize=[...]) names (by name or by position)."""
    names = list(getattr(function, "arg_names", ()))
    listed = (getattr(function, "kwargs", None) or {}).get("do_not_specialize") or ()
    return frozenset(names[k] if isinstance(k, int) and 0 <= k < len(names) else k for k in listed)


def _ones_as_constexprs(arg_names, args: tuple, kwargs: dict, ones: set[str]) -> tuple[tuple, dict]:
    """The launch's arguments with each integer 1 the GPU's JIT specializes (``Launch.ones``) a tl.constexpr, as the
    kernel receives it there; the interpreter would make an int32 of it. A default not passed is passed."""
    from triton import language as tl

    if not ones:
        return args, kwargs
    names = list(arg_names)
    args = tuple(tl.constexpr(1) if i < len(names) and names[i] in ones else value for i, value in enumerate(args))
    given = set(names[:len(args)]) | set(kwargs)
    kwargs = {**kwargs, **{name: tl.constexpr(1) for name in ones if name in kwargs or name not in given}}
    return args, kwargs


@contextlib.contextmanager
def _debug_as_jitted(debug: bool):
    """Inside, the interpreter's debug option is as @triton.jit(debug=...) sets it on a GPU, where a debug build keeps
    every tl.device_assert and an overflow check of each integer + and *, any of which stops the kernel (review 19):
    the interpreter checks them too (triton's interpreter ignores the flag). The options are restored after."""
    from triton.runtime import interpreter

    builder = interpreter.interpreter_builder
    options = getattr(builder, "options", None)
    if dataclasses.is_dataclass(options) and getattr(options, "debug", debug) != debug:
        builder.options = dataclasses.replace(options, debug=debug, **(
            {"sanitize_overflow": True} if debug and hasattr(options, "sanitize_overflow") else {}))
    try:
        yield
    finally:
        builder.options = options


def combines_as_compiled(apply):
    """tl.reduce and tl.associative_scan with the kernel's own combine function run it as any @triton.jit helper is
    run: through its rewritten source, numbers as the compiler types them (review 20: triton's interpreter called the
    raw Python function, where `k = 65536; k * k` is 2**32, and on a GPU an int32 0). Triton's own combines stay
    as they are (the interpreter knows them by identity)."""
    def wrapper(self, *args, **kwargs):
        combine = getattr(self, "combine_fn", None)
        raw = getattr(combine, "fn", None)
        if type(combine).__name__ != "InterpretedFunction" or not inspect.isfunction(raw) or \
                str(getattr(raw, "__module__", "")).startswith("triton."):
            return apply(self, *args, **kwargs)
        self.combine_fn = _Rewritten(combine)
        try:
            return apply(self, *args, **kwargs)
        finally:
            self.combine_fn = combine
    return wrapper


class _Rewritten:
    """A @triton.jit combine function whose `fn`, as the interpreter's reductions call it, is the helper call."""

    def __init__(self, jitted):
        self.jitted = jitted
        self.fn = functools.wraps(jitted.fn)(lambda *args: jitted(*args))

    def __getattr__(self, name):
        return getattr(self.jitted, name)
