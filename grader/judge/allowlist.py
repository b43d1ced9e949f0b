"""What a kernel may hold, read from its syntax tree in the judge (grader.judge.submission reads the file and calls
``kernel_problems`` on each @triton.jit function): tl's functions called on the kernel's own parameters and locals,
other @triton.jit functions, literal constants, a few builtins; never a way into Python, Triton's internals or
anything the interpreter and the GPU compiler would read differently (identity tests but against None, tl's
functions used as values, ** arguments, strings but as a call's argument)."""

from __future__ import annotations

import ast
import functools
import inspect
from dataclasses import dataclass

# The builtins Triton's code generator accepts in a kernel (it evaluates them at compile time or lowers them).
KERNEL_BUILTINS = frozenset({"range", "min", "max", "len", "int", "float", "print"})  # print: tl.device_print


# Builtins Triton's code generator finds for a name that is neither a local yet nor a global
# (CodeGenerator.builtin_namespace): a kernel may not name a local after those it may not call, or
# `f = getattr(...)` before `getattr = 0` is read as the builtin when compiled.
_TRITON_BUILTINS = frozenset({"getattr", "hasattr", "isinstance", "list", "print", "setattr", "delattr", "type",
                              "vars", "dir", "globals", "locals", "eval", "exec", "compile", "open"})


# Attributes that reach past a value: str.format can read any attribute through its format string.
_FORBIDDEN_VALUE_ATTRIBUTES = frozenset({"format", "format_map", "mro", "handle", "to_ir"})


# Statements and expressions a kernel body may hold: what Triton's code generator compiles, less what it would
# evaluate as Python (comprehensions, lambdas, f-strings) or what no kernel needs (imports, classes, try, with).
_KERNEL_NODES = (
    ast.FunctionDef, ast.arguments, ast.arg, ast.Return, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For,
    ast.While, ast.If, ast.Expr, ast.Pass, ast.Break, ast.Continue, ast.Assert, ast.BoolOp, ast.BinOp,
    ast.UnaryOp, ast.Compare, ast.Call, ast.keyword, ast.IfExp, ast.Attribute, ast.Subscript, ast.Slice, ast.Name,
    ast.Constant, ast.Tuple, ast.List, ast.Load, ast.Store, ast.operator, ast.boolop, ast.unaryop, ast.cmpop,
    ast.expr_context,
)


MODULE_PREFIX = "triton.language"  # every module a kernel may reach (tl, tl.math, tl.extra.cuda.libdevice, ...)


def dotted_name(node: ast.AST) -> str | None:
    """'triton.language.constexpr' for a chain of names, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def is_literal(node: ast.AST) -> bool:
    """A number, string, bool or None (negated or not), or a tuple of those."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
        return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and \
            not isinstance(node.value, bool)
    if isinstance(node, ast.Tuple):
        return all(is_literal(e) for e in node.elts)
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool, type(None)))


CONSTEXPR = ("triton.language.constexpr", "triton.language.core.constexpr")


def resolve_alias(dotted: str | None, aliases: dict) -> str | None:
    """'tl.constexpr' -> 'triton.language.constexpr', through the file's triton imports."""
    if not dotted:
        return None
    head, _, rest = dotted.partition(".")
    if head not in aliases:
        return None
    return f"{aliases[head]}.{rest}" if rest else aliases[head]


def value_attributes() -> frozenset:
    """The attributes a kernel may read of a value (a block, a descriptor, a dtype, a constexpr): the public ones
    of triton.language's types, less those that reach past the value (``_FORBIDDEN_VALUE_ATTRIBUTES``)."""
    import triton.language as tl

    types = [tl.tensor, tl.dtype, tl.pointer_type, tl.block_type, tl.constexpr]
    types += [getattr(tl.core, n) for n in ("tensor_descriptor_base", "tensor_descriptor") if hasattr(tl.core, n)]
    names = {n for t in types for n in dir(t) if not n.startswith("_")}
    # attributes set on instances, so not in dir() of their class
    names |= {"shape", "dtype", "type", "numel", "value", "element_ty", "base", "strides", "block_shape", "name",
              "primitive_bitwidth", "int_bitwidth", "int_signedness", "fp_mantissa_width", "scalar"}
    return frozenset(names - _FORBIDDEN_VALUE_ATTRIBUTES)


@functools.lru_cache(maxsize=4096)
def _module_object(dotted: str):
    """The object a dotted name under triton names, or None if there is none. Found with getattr from triton as the
    judge imported it, never by importing: a chain of names costs its length, and one seen before costs nothing
    (thousands of `tl.a.b.c` chains once made the judge import every prefix of each)."""
    import triton
    import triton.language  # noqa: F401 - what a kernel reaches

    head, *rest = dotted.split(".")
    value = triton if head == "triton" else None
    for attr in rest:
        if value is None:
            return None
        try:
            value = _unpatched(getattr(value, attr, None))
        except Exception:  # noqa: BLE001 - a property that raises
            return None
    return value


def _unpatched(value):
    """The tl function behind the interpreter's stand-in for it, where a kernel ran in the interpreter in this
    process before (a notebook, the grader's tests): the verdict on a name must not depend on that. Triton's
    interpreter swaps each builtin for a lambda that keeps the builtin as a keyword's default (`member=member`),
    or a partial of it."""
    import functools

    import triton.language as tl

    if isinstance(value, functools.partial) and tl.core.is_builtin(value.func):
        return value.func
    if getattr(value, "__name__", "") == "<lambda>" and \
            str(getattr(value, "__module__", "")).startswith("triton.runtime.interpreter"):
        kept = [*(getattr(value, "__defaults__", None) or ()), *(getattr(value, "__kwdefaults__", None) or {}).values()]
        return next((d for d in kept if tl.core.is_builtin(d)), value)
    return value


# The modules of triton.language a kernel names things in: tl itself, tl.math and libdevice. Its other modules
# (tl.core, tl.standard, tl.semantic, ...) are Triton's internals, and a second name for one of tl's functions is a
# second object in the interpreter, which patches tl.load but not tl.core.load.
KERNEL_MODULES = frozenset({"triton.language", "triton.language.math", "triton.language.extra",
                            "triton.language.extra.cuda", "triton.language.extra.cuda.libdevice",
                            "triton.language.extra.libdevice"})


def _path_problem(dotted: str, resolved: str, values: frozenset) -> str | None:
    """Why a name reached through a triton import is refused, by the path it takes (`resolved`: the path from
    triton, `dotted`: as written), or None: it must go through KERNEL_MODULES to one of their names, and past that
    name only to an attribute of a dtype or constexpr."""
    import triton.language as tl

    names = resolved.split(".")
    for cut in range(2, len(names) + 1):
        prefix = ".".join(names[:cut])
        value = _module_object(prefix)
        if value is None:
            return None  # a name this triton lacks fails in the compiler, with its advice (tl.advance on 3.9)
        if inspect.ismodule(value):
            if prefix not in KERNEL_MODULES:
                return (f"{dotted}: {prefix} is Triton's internals; a kernel names things in tl, tl.math and "
                        "libdevice only (tl.load, not tl.core.load)")
            continue
        extra = names[cut:]
        if value is tl.PropagateNan and len(extra) == 1 and extra[0] in tl.PropagateNan.__members__:
            return None  # tl.PropagateNan.ALL / .NONE: tl.maximum's propagate_nan=
        if extra and not (isinstance(value, (tl.dtype, tl.constexpr)) and all(a in values for a in extra)):
            return (f"{dotted}: an attribute of {'.'.join(names[:cut])}; a kernel calls tl's functions and reads its "
                    "dtypes, nothing inside them")
        return None
    return None


def _inside_triton_language(value) -> bool:
    """Whether an object a kernel reaches through a module belongs to triton.language: a module under it, a
    function or class defined in it, a dtype, constexpr or PropagateNan of it, or a plain number or string."""
    import triton.language as tl

    if inspect.ismodule(value):
        return value.__name__.startswith(MODULE_PREFIX)
    if isinstance(value, (tl.dtype, tl.constexpr, tl.PropagateNan, int, float, str, bool)) or value is tl.PropagateNan:
        return True  # tl.PropagateNan and its members: tl.maximum's propagate_nan= (triton's enum, from its ir)
    wrapped = getattr(value, "fn", None)  # triton.language's own @jit functions (tl.sum, tl.zeros, tl.cdiv)
    module = getattr(wrapped if inspect.isfunction(wrapped) else value, "__module__", None) or ""
    return module.startswith(MODULE_PREFIX)


_INLINE_ASSEMBLY = ("inline_asm_elementwise",)
_EXTERNAL = ("extern", "extern_elementwise", "dispatch")
_UNCHECKED_HINTS = ("multiple_of", "max_contiguous", "max_constancy")


def _outside_triton(value, name: str = "") -> str | None:
    """Why a kernel may not use an object of triton.language, or None: inline assembly and external libraries
    leave Triton (and the interpreter cannot run them); target_info tells the GPU compile from the interpreter; the
    plain Python functions of triton.language are the compiler's helpers, run as Python when a kernel calls them
    (libdevice's stand-ins excepted: the compiler swaps them for the GPU's functions)."""
    import triton.language as tl

    # by name too: Triton's interpreter swaps some of triton.language's functions for stand-ins during a launch in
    # this process (a notebook's, a test's), and the stand-in is not the function
    if name in _INLINE_ASSEMBLY or value is getattr(tl, "inline_asm_elementwise", None) or \
            value is getattr(tl.core, "inline_asm_elementwise", None):
        return "inline assembly is not graded"
    if name in _UNCHECKED_HINTS or any(value is getattr(tl, n, None) for n in _UNCHECKED_HINTS):
        return (f"{name or 'a compiler hint'} is a promise the GPU compiler trusts and the interpreter ignores: a "
                "wrong one makes the compiled kernel wrong (a mask vectorised over elements past the end) where the "
                "interpreter's is right, so the grader cannot check it. The puzzles need no hint: leave it out")
    if name == "cat" or value is getattr(tl, "cat", None):
        return ("tl.cat may put the elements in any order (can_reorder=True): the interpreter's order is not a "
                "GPU's. Build the block with tl.where or two stores instead")
    if name in _EXTERNAL or any(value is getattr(tl.core, n, None) for n in _EXTERNAL):
        return "calls into an external library are not graded (tl.extra.libdevice's functions are)"
    module = value.__name__ if inspect.ismodule(value) else getattr(value, "__module__", None)
    if isinstance(module, str) and module.startswith("triton.language.semantic"):
        return "Triton's compiler internals, not a kernel function"
    if isinstance(module, str) and module.startswith("triton.language.target_info"):
        return ("target_info answers is_cuda() with True when the grader compiles the kernel for the GPU and with "
                "False in the interpreter: the kernel graded must be the one a GPU runs")
    if inspect.isfunction(value) and not tl.core.is_builtin(value) and \
            not (isinstance(module, str) and module.startswith("triton.language.extra")):
        return "a helper of Triton's compiler, not a kernel function (tl.str_to_ty, for one, evaluates its argument)"
    return None


@dataclass(frozen=True)
class _Scope:
    """What the names in one kernel may stand for, read once (``_scope``) for the checks of each of its nodes."""
    aliases: dict  # the file's triton imports: name -> module path
    values: frozenset  # the attributes a value may have (value_attributes)
    elsewhere: dict  # what the file's other top-level names are, for the message
    stores: list  # the Name nodes the body assigns
    local: set  # the kernel's parameters and the names its body assigns
    module_level: set  # what an annotation, evaluated at import, may read
    allowed: set  # what the body may read
    outside: set  # ids of the nodes inside an annotation
    bases: set  # ids of the nodes that are an attribute's base: `tl.core` in `tl.core.load`
    called: set  # ids of the nodes where a name of triton.language may stand other than called: called, a base,
    # or in an annotation


def _scope(fn: ast.FunctionDef, walked: list, names: set, aliases: dict, values: frozenset,
           elsewhere: dict) -> _Scope:
    """The scope of kernel `fn` (`walked`: every node of its parameters, body and return annotation)."""
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    stores = [n for root in fn.body for n in ast.walk(root) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    stored = {n.id for n in stores}
    module_level = names | KERNEL_BUILTINS | set(aliases)
    allowed = module_level | params | (stored - _TRITON_BUILTINS)
    annotations = [a.annotation for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs + [fn.args.vararg,
                   fn.args.kwarg] if a is not None and a.annotation is not None] + ([fn.returns] if fn.returns else [])
    outside = {id(n) for root in annotations for n in ast.walk(root)}
    bases = {id(n.value) for n in walked if isinstance(n, ast.Attribute)}
    called = {id(n.func) for n in walked if isinstance(n, ast.Call)} | bases | outside | \
        {id(part) for n in walked if isinstance(n, ast.AnnAssign) for part in ast.walk(n.annotation)}
    return _Scope(aliases, values, elsewhere, stores, params | stored, module_level, allowed, outside, bases, called)


def kernel_problems(fn: ast.FunctionDef, names: set, aliases: dict, values: frozenset,
                    elsewhere: dict, strings: frozenset = frozenset()) -> list[tuple[int, str]]:
    """(line, what) for everything in a kernel the allowlist refuses (module docstring: kernel-only grading).
    `elsewhere`: what the file's other top-level names are (a plain function, a computed global), for the message;
    `strings`: the module constants that hold a string."""
    walked = [node for root in [fn.args, *fn.body, *([fn.returns] if fn.returns else [])] for node in ast.walk(root)]
    scope = _scope(fn, walked, names, aliases, values, elsewhere)
    problems = _string_problems(fn, strings) + _signature_problems(fn, scope)
    for node in walked:
        problems += _node_problems(node, fn, scope)
    return problems


def _signature_problems(fn: ast.FunctionDef, scope: _Scope) -> list[tuple[int, str]]:
    """Locals named after a builtin Triton reads, parameters or locals named after an import, *args or **kwargs,
    parameters annotated with anything but tl.constexpr, and defaults that are not literals."""
    problems = [(node.lineno, f"a local named {node.id}: Triton reads the builtin {node.id} until the local is "
                              "assigned; name it otherwise") for node in scope.stores if node.id in _TRITON_BUILTINS]
    for name in sorted(scope.local & set(scope.aliases)):  # `tl = "{0.__class__}"` would make tl.format a str's
        problems.append((fn.lineno, f"the name {name}: a parameter or local may not take the name of an import"))
    if fn.args.vararg or fn.args.kwarg:
        problems.append((fn.lineno, "*args or **kwargs in a kernel's parameters"))
    for arg in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:  # review 19
        if arg.annotation is not None and resolve_alias(dotted_name(arg.annotation), scope.aliases) not in CONSTEXPR:
            problems.append((arg.lineno, f"the annotation `{arg.arg}: {ast.unparse(arg.annotation)[:40]}`: a "
                             "parameter is annotated tl.constexpr or not at all. On a GPU any other annotation sets "
                             "the argument's type (`N0: tl.int8` passes 200 as -56; a pointer type reads the tensor "
                             "as another dtype), which the interpreter ignores"))
    for default in fn.args.defaults + [d for d in fn.args.kw_defaults if d is not None]:
        if not is_literal(default):
            problems.append((default.lineno, f"the default {ast.unparse(default)[:40]}: a parameter's default "
                                             "is a literal"))
    return problems


def _node_problems(node: ast.AST, fn: ast.FunctionDef, scope: _Scope) -> list[tuple[int, str]]:
    """What the allowlist refuses in one node of a kernel's parameters, body or return annotation."""
    problems = []
    if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load) and id(node) not in scope.called:
        problems += _as_a_value(node, scope.aliases, scope.local)
    if isinstance(node, ast.Compare):
        problems += _identity_problems(node)
    if isinstance(node, ast.Call):
        problems += _order_call_problems(node, scope.aliases)
    if isinstance(node, ast.FunctionDef):
        problems.append((node.lineno, "a function defined inside a kernel: make it a @triton.jit function"))
    elif not isinstance(node, _KERNEL_NODES):
        problems.append((getattr(node, "lineno", fn.lineno), f"{type(node).__name__.lower()} "
                         "(a kernel holds Triton code only: no imports, lambdas, comprehensions, f-strings, "
                         "try, with, global or class)"))
    elif isinstance(node, ast.Name):
        problems += _name_problems(node, scope)
    elif isinstance(node, ast.Attribute):
        problems += _attribute_node_problems(node, scope)
    elif isinstance(node, ast.keyword):
        problems += _keyword_problems(node)
    return problems


def _identity_problems(node: ast.Compare) -> list[tuple[int, str]]:
    """`is` and `is not` are for None only: on anything else the interpreter's objects and the GPU's differ."""
    sides = [node.left, *node.comparators]
    return [(node.lineno, f"`{ast.unparse(node)[:60]}`: a kernel tests identity against None only (`x is None`); "
                          "use == to compare values")
            for at, op in enumerate(node.ops) if isinstance(op, (ast.Is, ast.IsNot)) and not any(
                isinstance(v, ast.Constant) and v.value is None for v in sides[at:at + 2])]


def _name_problems(node: ast.Name, scope: _Scope) -> list[tuple[int, str]]:
    """A name: never a dunder; read only if the kernel may read it; an import read for what it names."""
    if node.id.startswith("__"):  # `_online_update` and `for _ in ...` are names like any other
        return [(node.lineno, f"the name {node.id}: names starting with __ are not allowed")]
    if not isinstance(node.ctx, ast.Load):
        return []
    in_annotation = id(node) in scope.outside
    if node.id not in (scope.module_level if in_annotation else scope.allowed):
        return [(node.lineno, f"the name {node.id}: " + scope.elsewhere.get(
            node.id, "an annotation reads tl and module-level names only" if in_annotation else
            _HOST_MODULES.get(node.id, "a kernel reads its parameters, its locals, tl, other @triton.jit "
                                       "functions and literal constants only")))]
    if node.id in scope.aliases and node.id not in scope.local:
        alias = scope.aliases[node.id]
        why = _outside_triton(_module_object(alias), alias.rsplit(".", 1)[-1]) or \
            _path_problem(node.id, alias, scope.values)
        if why:
            return [(node.lineno, why if why.startswith(f"{node.id}: ") else f"{node.id}: {why}")]
    return []


def _attribute_node_problems(node: ast.Attribute, scope: _Scope) -> list[tuple[int, str]]:
    """An attribute: never private, never assigned; read through triton.language or of a value (_attribute_problems)."""
    if node.attr.startswith("_"):
        return [(node.lineno, f".{node.attr}: attributes starting with _ are not allowed")]
    if isinstance(node.ctx, ast.Store):
        return [(node.lineno, f"an assignment to .{node.attr}: a kernel writes memory with tl.store, never "
                              "attributes")]
    if _under_refused_name(node, scope.allowed, scope.aliases):  # torch.zeros: the name torch says it all
        return []
    return _attribute_problems(node, scope.aliases, scope.values, id(node) not in scope.bases)


# Keywords whose value may leave an order to the GPU (its layout or its threads' timing), which the interpreter
# fixes: each allowed only as the literal that keeps the order defined
_ORDER_KEYWORDS = {
    "can_reorder": (False, "can_reorder=True lets the compiler put the elements in any order (its layout's), and "
                           "the interpreter keeps numpy's: the two kernels differ. Leave it out"),
    "tie_break_left": (True, "tie_break_left=False returns whichever tied index a GPU's threads find first, and the "
                             "interpreter always the leftmost: the two kernels differ. Leave it out (the leftmost)"),
}
_ORDER_KEYWORDS["return_indices_tie_break_left"] = _ORDER_KEYWORDS["tie_break_left"]
# Calls whose order options may also come by position (after the block and the axis): tl.argmax(x, 0, False) is
# tie_break_left=False, tl.max(x, 0, True, False) return_indices_tie_break_left=False. Positions past the axis are
# refused, so each option is named and checked above; x.view(...) is a reshape with can_reorder=True.
_ORDER_POSITIONAL = {"argmax": "tie_break_left", "argmin": "tie_break_left", "max": "return_indices",
                     "min": "return_indices"}


def _order_call_problems(node: ast.Call, aliases: dict) -> list[tuple[int, str]]:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else None
    if name == "view":
        return [(node.lineno, "x.view(...) is a reshape with can_reorder=True: the compiler may put the elements in "
                              "any order (its layout's), and the interpreter keeps numpy's. Use tl.reshape(x, shape)")]
    if name not in _ORDER_POSITIONAL:
        return []
    on_module = isinstance(func.value, ast.Name) and resolve_alias(func.value.id, aliases) is not None
    allowed = 2 if on_module else 1  # tl.max(x, axis) or x.max(axis)
    if len(node.args) > allowed:
        return [(node.lineno, f"{name}: pass what comes after the axis by its name ({_ORDER_POSITIONAL[name]}=...), "
                              "so that the grader can check it")]
    return []


def _keyword_problems(node: ast.keyword) -> list[tuple[int, str]]:
    """A keyword argument: named, not private, and not one that leaves an order to the GPU."""
    if node.arg in _ORDER_KEYWORDS:
        safe, why = _ORDER_KEYWORDS[node.arg]
        if not (isinstance(node.value, ast.Constant) and node.value.value is safe):
            return [(node.value.lineno, why)]
    if node.arg is not None and node.arg.startswith("_"):
        return [(node.value.lineno, f"the keyword {node.arg}=: names starting with _ are not allowed")]
    if node.arg is None:
        return [(node.value.lineno, f"**{ast.unparse(node.value)[:40]}: pass each keyword by its name")]
    return []


# Host modules a kernel may reach for, and what to write instead.
_HOST_MODULES = {name: f"{name} runs on the host, not in a kernel: use triton.language's own, e.g. tl.zeros([B0], "
                       f"dtype=tl.float32) for {name}.zeros, tl.exp for {name}.exp"
                 for name in ("torch", "np", "numpy")}


def _under_refused_name(node: ast.Attribute, allowed: set, aliases: dict) -> bool:
    """Whether an attribute chain starts at a name a kernel may not read (reported once, as that name)."""
    base = node.value
    while isinstance(base, ast.Attribute):
        base = base.value
    return isinstance(base, ast.Name) and base.id not in allowed and base.id not in aliases


def _string_problems(fn: ast.FunctionDef, strings: frozenset) -> list[tuple[int, str]]:
    """A string in a kernel is a whole argument of a call (a message, `float("-inf")`, an option such as
    eviction_policy=) or a statement of its own (a docstring), never an operand: `"%s" % x` is the interpreter's
    numbers and the compiler's description of a block, a constexpr that differs between the two. The same holds for
    a module constant that holds a string (`strings`)."""
    walked = [node for root in [fn.args, *fn.body, *([fn.returns] if fn.returns else [])] for node in ast.walk(root)]
    allowed = set()
    for node in walked:  # not the decorator: @triton.jit's options are checked apart (_jit_options_problem)
        if isinstance(node, ast.Call):
            allowed.update(id(a) for a in node.args)
        elif isinstance(node, ast.keyword):
            allowed.add(id(node.value))
        elif isinstance(node, ast.Expr):
            allowed.add(id(node.value))
    found = []
    for node in walked:
        text = isinstance(node, ast.Constant) and isinstance(node.value, str) or \
            isinstance(node, ast.Name) and node.id in strings and isinstance(node.ctx, ast.Load)
        if text and id(node) not in allowed:
            found.append((node.lineno, f"{ast.unparse(node)[:40]}: a string in a kernel is a call's argument (a "
                                       "message, an option) and nothing else; a kernel computes no strings"))
    return found


def _as_a_value(node: ast.AST, aliases: dict, local: set) -> list[tuple[int, str]]:
    """A function or module of triton.language used other than called (compared, passed, stored): refused, since
    the interpreter runs its own stand-in for each of tl's functions, so a test on the function itself (`==`, `is`,
    a name for it) is one thing there and another on the GPU. Dtypes and constexprs are values like any other."""
    dotted = dotted_name(node)
    if dotted is None or dotted.split(".")[0] in local:
        return []
    if dotted in KERNEL_BUILTINS:  # `print` is tl.device_print when compiled and Python's print in the interpreter
        return [(node.lineno, f"{dotted} used as a value: a kernel calls the builtins it may use")]
    resolved = resolve_alias(dotted, aliases)
    value = _module_object(resolved) if resolved else None
    if value is None or not (callable(value) or inspect.ismodule(value)):
        return []
    return [(node.lineno, f"{dotted} used as a value: a kernel calls tl's functions (the interpreter runs a "
                          "stand-in for each, so a test on the function itself differs from the GPU's)")]


def _attribute_problems(node: ast.Attribute, aliases: dict, values: frozenset,
                        outermost: bool = True) -> list[tuple[int, str]]:
    """An attribute read: through a triton module, the object it names must belong to triton.language, by a path
    through tl's own modules (checked at the chain's outermost attribute); on a value (a block, a dtype), the
    attribute must be one of triton.language's types."""
    dotted = dotted_name(node)
    resolved = resolve_alias(dotted, aliases)
    if resolved is not None:
        value = _module_object(resolved)
        why = _outside_triton(value, resolved.rsplit(".", 1)[-1]) if value is not None else None
        if why:
            return [(node.lineno, f"{dotted}: {why}")]
        if value is not None and not _inside_triton_language(value):
            return [(node.lineno, f"{dotted}: a kernel reaches triton.language only")]
        why = _path_problem(dotted, resolved, values) if outermost else None
        return [(node.lineno, why)] if why else []
    base = node.value
    while isinstance(base, ast.Attribute):
        base = base.value
    if isinstance(base, ast.Name) and base.id in aliases:
        return []  # checked whole, at the outermost attribute of the chain
    if node.attr not in values:
        return [(node.lineno, f".{node.attr}: not an attribute of a Triton block, descriptor or dtype")]
    return []
