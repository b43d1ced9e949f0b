"""Operators that mean one thing in the interpreter and another on a GPU, found in a kernel's source (the first step of
the GPU compile check, grader.worker.gpu_compile: cheap, so it runs before any compile).

Python's `and` / `or` / `not` and the builtins `max` / `min` / `abs` mean something else on a block in the
interpreter than on the GPU. The rule: such an operator is refused when one of its operands is a run-time value.
Run-time values are the parameters not annotated `tl.constexpr`, the results of any call but a few pure builtins and
`tl.constexpr(...)`, and the locals assigned from them (a fixed point over the body). Constexpr parameters,
`x: tl.constexpr = ...` locals, globals, literals and `.dtype` / `.shape` are static, so `max(B0, 16)` or
`if B0 > 16 and B1 > 16` pass. `and` / `or` / `not` that form the whole condition of an `if`, `while`, `assert` or
`x if c else y` also pass: the GPU needs a scalar there, and on scalars both agree. Every solution and every kernel
under tests/kernels/right passes this rule.
"""

from __future__ import annotations

import ast
import functools

from grader.worker import compiler_advice


@functools.lru_cache(maxsize=1024)
def parse_function(source: str) -> ast.FunctionDef:
    """A function's AST, from its source; shared, so never changed by its readers."""
    return ast.parse(source).body[0]


# -- the check --------------------------------------------------------------------------------------

_PURE_BUILTINS = {"min", "max", "abs", "int", "float", "bool", "len", "round"}
_METADATA = {"dtype", "shape", "type", "ndim", "numel"}  # compile-time facts of a block, static whatever it holds
_BUILTIN_ADVICE = {"max": "tl.maximum(a, b)", "min": "tl.minimum(a, b)", "abs": "tl.abs(x)"}


def _is_constexpr_annotation(annotation) -> bool:
    return annotation is not None and "constexpr" in ast.unparse(annotation)


def _is_static(node, runtime: set[str]) -> bool:
    """True when `node` holds a compile-time value: no run-time name and no call but a pure builtin."""
    if isinstance(node, ast.Attribute) and node.attr in _METADATA:
        return True
    if isinstance(node, ast.Name):
        return node.id not in runtime
    if isinstance(node, ast.Call):
        name = ast.unparse(node.func)
        if name not in _PURE_BUILTINS and not name.endswith("constexpr"):
            return False
    return all(_is_static(child, runtime) for child in ast.iter_child_nodes(node))


def _assignments(tree: ast.FunctionDef):
    """(name, the expression it is given, or None for a value of unknown origin) for each local assignment."""
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if not _is_constexpr_annotation(node.annotation):
                yield node.target.id, node.value
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.NamedExpr)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = ast.BinOp(node.target, node.op, node.value) if isinstance(node, ast.AugAssign) else node.value
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        yield name.id, value if isinstance(target, ast.Name) else None
        elif isinstance(node, ast.For):
            static_loop = isinstance(node.iter, ast.Call) and ast.unparse(node.iter.func).endswith(
                ("static_range", "range")) and not ast.unparse(node.iter.func).endswith("tl.range")
            for name in ast.walk(node.target):
                if isinstance(name, ast.Name):
                    yield name.id, node.iter if static_loop else None
        elif isinstance(node, (ast.With, ast.comprehension)):
            for name in ast.walk(node):
                if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store):
                    yield name.id, None


def _runtime_names(tree: ast.FunctionDef) -> set[str]:
    """Parameters not annotated constexpr, and (to a fixed point) locals assigned a run-time value."""
    args = tree.args
    runtime = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs
               if not _is_constexpr_annotation(a.annotation)}
    assignments = list(_assignments(tree))
    changed = True
    while changed:
        changed = False
        for name, value in assignments:
            if name not in runtime and (value is None or not _is_static(value, runtime)):
                runtime.add(name)
                changed = True
    return runtime


def _conditions(tree) -> set[int]:
    """ids of the nodes that are a whole `if` / `while` / `assert` / conditional-expression test."""
    return {id(node.test) for node in ast.walk(tree) if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert))}


def _operator_problem(node, runtime: set[str], conditions: set[int]) -> str | None:
    if isinstance(node, ast.BoolOp) and id(node) not in conditions:
        if not all(_is_static(v, runtime) for v in node.values):
            word, symbol = ("and", "&") if isinstance(node.op, ast.And) else ("or", "|")
            return (f"`{ast.unparse(node)}` on run-time values: the GPU compiler makes `{word}` element-wise and "
                    f"drops a number beside a tensor (`(pid >= 0) and 7` is the comparison there), while Python's "
                    f"`{word}`, as triton's interpreter runs it, takes a whole block as one truth value and returns "
                    f"an operand whole (7). Use `{symbol}` on boolean blocks, e.g. `(rows < N0) {symbol} (cols < T)`")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and id(node) not in conditions:
        if not _is_static(node.operand, runtime):
            return (f"`{ast.unparse(node)}` on a run-time value: the GPU compiler makes `not` element-wise, while "
                    "Python's, as triton's interpreter runs it, takes a whole block as one truth value. Use `~` on a "
                    "boolean block, or `x == 0`")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _BUILTIN_ADVICE:
        if not all(_is_static(a, runtime) for a in node.args):
            name = node.func.id
            return (f"`{ast.unparse(node)}`: the builtin `{name}` on run-time values: the interpreter runs Python's "
                    f"`{name}`, which compares whole blocks (any block counts as true), while the GPU compiler works "
                    f"element by element. Use {_BUILTIN_ADVICE[name]}")
    return None


@functools.lru_cache(maxsize=1024)
def _first_operator_problem(source: str) -> tuple[int, str] | None:
    """(line in the source, the problem) of the function's first interpreter-only operator, or None."""
    tree = parse_function(source)
    runtime, conditions = _runtime_names(tree), _conditions(tree)
    for node in sorted(ast.walk(tree), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))):
        problem = _operator_problem(node, runtime, conditions)
        if problem:
            return node.lineno, problem
    return None


def static_problems(functions: dict) -> str | None:
    """The first interpreter-only operator in any of the functions (as `_collect` describes them), or None."""
    for description in functions.values():
        found = _first_operator_problem(description["source"])
        if found:
            line = description["line"] + found[0] - 1
            return (f"{compiler_advice.where(description['file'], line)}\n  {found[1]}: the interpreter and the "
                    "GPU would compute different things")
    return None
