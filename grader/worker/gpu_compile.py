"""The GPU compile check: every kernel a learner launches in the interpreter is also compiled for a GPU, on the CPU.

The interpreter runs a kernel as Python, so it accepts kernels the GPU compiler refuses: a scalar accumulator
(`acc = 0.0`) that becomes a block in a loop, a module-level float that is not a constexpr, a plain Python helper,
`tl.static_range` or `tl.arange` or `tl.zeros` with run-time sizes. And Python's `and` / `or` / `not` and the
builtins `max` / `min` / `abs` mean something else on a block in the interpreter than on the GPU. ``check`` finds
both kinds, so "Solved" in the interpreter also means "compiles on the GPU":

1. An AST check of every @triton.jit body the kernel reaches (``static_problems``; cheap, so it runs first).
   The rule: an `and` / `or` / `not`, or a builtin `max` / `min` / `abs`, is refused when one of its operands is a
   run-time value. Run-time values are the parameters not annotated `tl.constexpr`, the results of any call but
   a few pure builtins and `tl.constexpr(...)`, and the locals assigned from them (a fixed point over the body).
   Constexpr parameters, `x: tl.constexpr = ...` locals, globals, literals and `.dtype` / `.shape` are static, so
   `max(B0, 16)` or `if B0 > 16 and B1 > 16` pass. `and` / `or` / `not` that form the whole condition of an `if`,
   `while`, `assert` or `x if c else y` also pass: the GPU needs a scalar there, and on scalars both agree.
   Every solution and every kernel under tests/kernels/right passes this rule.
2. A compile for sm_90 and sm_80 (``Puzzle.gpu_archs``) with the signature and constexprs of the
   launch, through ``triton.compile``, stopped after TTGIR (triton's stage hook replaces the LLVM stages): every
   trap above fails in the front end or in TTIR / TTGIR passes (so does triton 3.6's OptimizeThreadLocality
   assertion), while LLIR, PTX and ptxas took 70% of the compile time. It runs in a helper process
   (``python -m grader.worker.gpu_compile``), started once per grading process: with TRITON_INTERPRET=1,
   triton.language's own @jit helpers (tl.sum, tl.zeros, ...) are interpreter objects, and the interpreter leaves
   parts of triton.language patched after a kernel calls one of them, so a compile in the grading process would go
   through interpreter code. The grading process sends each function's source, file, `def` line and the globals it reads
   (encoded); the helper rebuilds them under the same file name and line numbers, so the compiler's lines and the
   TTIR's locations are the learner's. Advice for the known traps is keyed on substrings of the compiler's
   messages that triton 3.6 and 3.9 share.
3. A cache by (sources, globals, signature, constexprs, options, target), in the grading process, so a puzzle pays
   one compile per distinct specialisation (about one per case). Triton's disk cache is not used: it keys by
   source and line, not file, so a hit would bring back the TTIR locations of another file; the helper compiles
   afresh (TRITON_ALWAYS_COMPILE) into a scratch cache directory. Measured on the 2-core machine, shared with
   other jobs (load 2-4), fresh TRITON_CACHE_DIR, `time python -m grader --all --impl solutions`: 51 s (37.6 s
   user) before, 70 s (54 s user) after. The 231 compiles cost 16 s of CPU in the helper; to cubin they cost 51 s.
4. The tl.dot lines that survive compilation (``dot_lines``): the `tt.dot` ops left in the sm_90 TTIR, each mapped
   through its `loc(...)` to the learner's file and line (a dot in an inlined @triton.jit helper maps to the helper's
   line). ``budgets.Dots`` counts only the multiply-adds of those lines, so a `tl.dot` whose result is never used
   earns nothing.

The check fails closed: a case passes only once its kernels compiled. When it cannot run (triton lacks the compile
API, a request it cannot encode, a helper that dies, times out or cannot compile a one-line kernel), the case fails
with reason "gpu_compile" and a message that says the check could not run, as the grader's trouble rather than the
kernel's: a kernel it did not compile could be one thing in the interpreter and another on the GPU. The compiler's
verdict on the learner's kernel fails a case, and so does a kernel that reads a global no GPU kernel can use (a
numpy module, a Python object). Tested on triton 3.6 and 3.9.
"""

from __future__ import annotations

import ast
import atexit
import builtins
import hashlib
import inspect
import json
import linecache
import os
import re
import selectors
import subprocess
import sys
import tempfile
import textwrap

from grader import env, paths, protocol
from grader.worker import compose, instrument

ROOT = str(paths.ROOT)
DEFAULT_ARCHS = (90,)  # the H200
HELPER_TIMEOUT = 120.0  # seconds for one compile, helper start included; a big kernel takes about 2
_JIT_TYPES = ("InterpretedFunction", "JITFunction")
_ALLOWED_MODULES = ("math", "triton")  # modules a kernel may read that the helper may import (and their submodules)


class Unsupported(Exception):
    """A kernel the check cannot hand to the compiler: one that reads a global no GPU kernel can use fails its case;
    anything else (a torch dtype passed as an argument) fails it as the check's own trouble (``could_not_run``)."""


# -- what a kernel reads ------------------------------------------------------------------------------

def _jit_target(value):
    """The plain Python function under a @triton.jit object (interpreted or compiled), else None."""
    inner = getattr(value, "fn", None)
    return inner if type(value).__name__ in _JIT_TYPES and inspect.isfunction(inner) else None


def _function_key(fn) -> str:
    return f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}:{fn.__qualname__}"


def _source(fn) -> tuple[str, int]:
    """The function's source from its `def` (decorators dropped), dedented, and the file line of that `def`."""
    lines, start = inspect.getsourcelines(fn)
    skip = next(i for i, line in enumerate(lines) if re.match(r"\s*def\s", line))
    return textwrap.dedent("".join(lines[skip:])), start + skip


def _read_names(tree: ast.FunctionDef) -> set[str]:
    """Names the function reads that are not its own parameters or locals: its globals (and closure)."""
    args = tree.args
    local = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    local |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - local


def _encode(value, functions: dict) -> list:
    """A global as JSON the helper can rebuild: ["jit", key], ["module", name], ["value", v], ..."""
    import triton.language as tl

    fn = _jit_target(value)
    if fn is not None:
        return ["jit", _collect(fn, functions)]
    if inspect.ismodule(value):
        if value.__name__.split(".")[0] not in _ALLOWED_MODULES:
            raise Unsupported(f"the kernel reads the module {value.__name__}")
        return ["module", value.__name__]
    if isinstance(value, tl.constexpr):
        return ["constexpr", _encode(value.value, functions)]
    if isinstance(value, tl.dtype):
        return ["dtype", value.name]
    if value is None or isinstance(value, (bool, int, float, str)):
        return ["value", value]
    if isinstance(value, (tuple, list)):
        return ["tuple", [_encode(v, functions) for v in value]]
    if inspect.isfunction(value) or inspect.isbuiltin(value):
        return ["function", value.__name__]  # rebuilt as a stub: the compiler refuses it just the same
    raise Unsupported(f"the kernel reads a global of type {type(value).__name__}")


def _collect(fn, functions: dict) -> str:
    """Add `fn` and every @triton.jit function it reaches to `functions` (key -> description); return its key."""
    key = _function_key(fn)
    if key in functions:
        return key
    source, line = _source(fn)
    functions[key] = description = {"name": fn.__name__, "file": fn.__code__.co_filename, "line": line,
                                    "source": source, "globals": {}}
    scope = dict(fn.__globals__)
    scope.update(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__ or ())))
    literal = compose.LITERAL_CONSTANTS.get(fn.__module__, frozenset())  # read as constexprs on a GPU (compose)
    for name in sorted(_read_names(ast.parse(source).body[0])):
        if name in literal and isinstance(scope.get(name), (bool, int, float)):
            description["globals"][name] = ["constexpr", ["value", scope[name]]]
        elif name in scope:
            description["globals"][name] = _encode(scope[name], functions)
    return key


def _argument(value, functions: dict) -> list:
    """A launch argument: tensors and descriptors by their type string, everything else as a global."""
    if hasattr(value, "data_ptr") or type(value).__name__ == "TensorDescriptor":
        from triton.runtime.jit import mangle_type

        return ["type", mangle_type(value)]
    if type(value).__name__ == "dtype" and type(value).__module__ == "torch":
        raise Unsupported("a torch dtype was passed to the kernel")
    return _encode(value, functions)


def _request(launch, arch: int) -> dict:
    functions: dict = {}
    kernel = _collect(launch.fn, functions)
    return {"functions": functions, "kernel": kernel, "arch": arch,
            "args": {name: _argument(value, functions) for name, value in launch.bound.items()},
            "options": {k: v for k, v in launch.options.items() if k in ("num_warps", "num_stages")}}


# -- the AST check --------------------------------------------------------------------------------------

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
            return (f"`{ast.unparse(node)}` on run-time values: in the interpreter this is Python's `{word}`, which "
                    f"takes any block as true (so it returns one operand whole); on the GPU it is element-wise. "
                    f"Use `{symbol}` on boolean blocks, e.g. `(rows < N0) {symbol} (cols < T)`")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and id(node) not in conditions:
        if not _is_static(node.operand, runtime):
            return (f"`{ast.unparse(node)}` on a run-time value: in the interpreter this is Python's `not`, which "
                    "takes any block as true; on the GPU it is element-wise. Use `~` on a boolean block, or "
                    "`x == 0`")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _BUILTIN_ADVICE:
        if not all(_is_static(a, runtime) for a in node.args):
            name = node.func.id
            return (f"`{ast.unparse(node)}`: the builtin `{name}` on run-time values: the interpreter runs Python's "
                    f"`{name}`, which compares whole blocks (any block counts as true), while the GPU compiler works "
                    f"element by element. Use {_BUILTIN_ADVICE[name]}")
    return None


def static_problems(functions: dict) -> str | None:
    """The first interpreter-only operator in any of the functions (as `_collect` describes them), or None."""
    for description in functions.values():
        tree = ast.parse(description["source"]).body[0]
        runtime, conditions = _runtime_names(tree), _conditions(tree)
        for node in sorted(ast.walk(tree), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))):
            problem = _operator_problem(node, runtime, conditions)
            if problem:
                line = description["line"] + node.lineno - 1
                return (f"{_where(description['file'], line)}\n  {problem}: the interpreter and the GPU would compute "
                        "different things")
    return None


def _where(file: str, line: int) -> str:
    return f"at {instrument.location(file, line)}: {linecache.getline(file, line).strip()}"


# -- the compiler's verdict, explained --------------------------------------------------------------

def _first_use(functions: dict, name: str) -> str:
    for description in functions.values():
        for node in ast.walk(ast.parse(description["source"])):
            if isinstance(node, ast.Name) and node.id == name:
                return "\n  " + _where(description["file"], description["line"] + node.lineno - 1)
    return ""


def _start_of(functions: dict, error: dict, name: str) -> str:
    """Where loop variable `name` was last given its first value before the loop the compiler named."""
    for description in functions.values():
        if description["file"] != error.get("file"):
            continue
        first = description["line"]
        starts = [n.lineno for n in ast.walk(ast.parse(description["source"]))
                  if isinstance(n, (ast.Assign, ast.AnnAssign)) and first + n.lineno - 1 < error.get("line", 0)
                  and any(isinstance(t, ast.Name) and t.id == name
                         for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]
        if starts:
            return f" (it starts {_where(description['file'], first + max(starts) - 1)})"
    return ""


BOOLEAN_OF_A_BLOCK = (
    "a Python `if`, `while`, `and`, `or` or `not` on a block asks for one truth value of many lanes. To load or "
    "store only some lanes, give the condition as the access's mask= (tl.load(ptrs, mask=offsets < N0, other=0.0)); "
    "to choose a value lane by lane, tl.where(condition, a, b); or reduce the block first (`if tl.max(x) > 0:` is "
    "one value)")


DOT_SHAPES = (
    "tl.dot multiplies an [M, K] block by a [K, N] block: the first's last dimension must equal the second's first. "
    "If a block came from a tensor descriptor, check the block_shape it was made with (b's is [BK, BN]); for q k^T, "
    "transpose k with tl.trans(k).")

SHAPES_MEET = (
    "two blocks of different shapes meet on this line, e.g. a row's [B0] value against a [B0, B1] tile: give the "
    "[B0] one its second axis, `delta[:, None]`, and check the axis of tl.sum / tl.max (axis=1 reduces [B0, B1] to "
    "[B0]). Cases whose block is 1 wide (B0=1) can still pass, as such shapes broadcast there")

BLOCK_POINTERS_REMOVED = (
    "triton 3.9 removed block pointers (tl.make_block_ptr, tl.advance): describe the matrix once with "
    "tl.make_tensor_descriptor(base, shape=[M, K], strides=[K, 1], block_shape=[BM, BK]) and load with "
    "desc.load([row, col]); past the edge it gives zeros, as boundary_check did (puzzle 11's docstring shows it). "
    "Block pointers still work on triton 3.6.")

LOST_MESSAGE = (
    "this message of triton's stands for another error that it failed to print (formatting a run-time value). "
    "Where the line makes a tensor descriptor, that error is its strides: the last must be 1 and the others "
    "multiples of 16 bytes. Describe a matrix as it lies in memory, row-major (b, K x N: shape=[K, N], "
    "strides=[N, 1]), and transpose a loaded block with tl.trans where you need it the other way")

# Triton's messages whose cause is common in a learner's kernel, as (clue, advice): the compile check's, and the
# interpreter's too (grader.worker.execute._ADVICE takes them), since either may meet the mistake first.
ADVICE_BY_CLUE = (
    ("Block pointers have been removed", BLOCK_POINTERS_REMOVED),
    ("Cannot make_shape_compatible", SHAPES_MEET),
    ("input and other must have equal reduction dimensions", DOT_SHAPES),
    ("`_semantic` argument must be provided outside of JIT functions", LOST_MESSAGE),
)


_TRITON_DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64"}


def _dtype_of(triton_type: str) -> str:
    """'float16' from a triton type as the compiler prints it: "<['32', '32'], fp16>" or "fp16"."""
    name = triton_type.strip("<> ").split(",")[-1].strip()
    return _TRITON_DTYPES.get(name, name)


def _same_shape_other_dtype(start: str, then: str) -> bool:
    """Whether two printed triton types are blocks of one shape (or both scalars) of different element types."""
    shape = (lambda text: text.rsplit(",", 1)[0] if text.startswith("<") else "")
    return shape(start) == shape(then) and _dtype_of(start) != _dtype_of(then)


def _advice(message: str, functions: dict, error: dict) -> str:
    for clue, advice in ADVICE_BY_CLUE:
        if clue in message:
            return advice
    found = re.search(r"Loop-carried variable (\w+) has initial type (.+?) but is re-assigned to (.+?) in loop",
                      message)
    if found and _same_shape_other_dtype(found[2], found[3]):
        name, start, then = found[1], _dtype_of(found[2]), _dtype_of(found[3])
        return (f"`{name}` starts as {start} and becomes {then} in the loop{_start_of(functions, error, name)} (a "
                "sum of a float16 and a float32 value is float32; tl.dot with out_dtype=tl.float16 or a .to() makes "
                "a 16-bit one). The interpreter lets a variable change type; the GPU compiler needs the same type on "
                "every pass. Sum in float32: start it float32 "
                f"(`{name} = tl.zeros([...], dtype=tl.float32)`) and add float32 terms (tl.dot's default out_dtype, "
                "not out_dtype=tl.float16); convert to 16 bits only an operand of tl.dot")
    found = re.search(r"Loop-carried variable (\w+)", message)
    if found:
        name = found[1]
        return (f"`{name}` starts as a scalar and becomes a block in the loop{_start_of(functions, error, name)}. The "
                "interpreter lets a variable change shape; the GPU compiler needs the same type and shape on every "
                f"pass. Start it as a block: `{name} = tl.zeros([B0], dtype=tl.float32)`, or "
                f"`{name} = tl.full([B0], float(\"-inf\"), dtype=tl.float32)` for a running max")
    found = re.search(r"global variable (\w+)", message)
    if found:
        name = found[1]
        return (f"`{name}` is a module-level Python value, which the GPU compiler does not read (the interpreter "
                f"does). Make it a constexpr: `{name} = tl.constexpr(...)` at module level, or "
                f"`{name}: tl.constexpr = ...` inside the kernel, or write the number itself")
    found = re.search(r"Unsupported function referenced: <function (\w+)", message)
    if found:
        name = found[1]
        return (f"`{name}` is a plain Python function: a kernel can only call @triton.jit functions. Put "
                f"@triton.jit above `def {name}`{_first_use(functions, name)}")
    if "Boolean value of Tensor" in message:
        return BOOLEAN_OF_A_BLOCK
    last = message.strip().splitlines()[-1] if message.strip() else ""  # the error itself, not the source it quotes
    if "static_range" in message:
        return ("tl.static_range unrolls its loop while compiling, so its bounds must be tl.constexpr; for bounds "
                "known only at run time (loaded, or plain int arguments) use tl.range(...)")
    if "arange" in last:
        return ("tl.arange's bounds must be tl.constexpr (a power of two): use a constexpr block size such as B0 and "
                "mask the lanes past the run-time size, e.g. `offsets < N0`")
    if "Shape element" in last or "shape" in last.lower() and "constexpr" in last:
        return ("tl.zeros / tl.full need a constexpr shape: pad to a constexpr size (an H_PAD = "
                "triton.next_power_of_2(H) passed as tl.constexpr) and mask the lanes past the real size")
    return ""


def _explain(error: dict, functions: dict, arch: int, compiled_for: list[int]) -> str:
    import triton

    other = f" (it compiles for sm_{compiled_for[0]})" if compiled_for else ""
    text = f"the kernel does not compile for the GPU (sm_{arch}, triton {triton.__version__}){other}: "
    message = error["message"].strip()
    text += message.splitlines()[-1] if error.get("file") else "\n  ".join(message.splitlines()[-6:])
    if error.get("file"):
        text += "\n  " + _where(error["file"], error["line"])
    advice = _advice(message, functions, error)
    if advice:
        text += "\n  " + advice
    elif error.get("diagnostics"):
        text += "\n  the compiler said: " + "\n  ".join(error["diagnostics"].strip().splitlines()[-6:])
    return text


# -- the helper process, seen from the grading process ---------------------------------------------

class _Helper:
    """The compile helper: one JSON request per line on its stdin, one reply per line on its stdout."""

    def __init__(self):
        environment = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
        # -P and the repository last on sys.path: nothing planted beside grader/ stands in for triton (runner._Worker)
        bootstrap = f"import sys; sys.path.append({ROOT!r}); import runpy; " \
                    "runpy.run_module('grader.worker.gpu_compile', run_name='__main__')"
        self.process = subprocess.Popen([sys.executable, "-P", "-c", bootstrap], env=environment,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        text=True, preexec_fn=protocol.die_with_parent)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.process.stdout, selectors.EVENT_READ)
        atexit.register(self.close)  # reaped, not left behind, when grading ends

    def ask(self, request: dict) -> dict:
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        if not self.selector.select(HELPER_TIMEOUT):
            raise TimeoutError(f"no answer from the compile helper in {HELPER_TIMEOUT:g} s")
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the compile helper exited with status {self.process.wait()}")
        return json.loads(line)

    def close(self) -> None:
        """End the helper: it exits at the end of its input; one that does not is killed."""
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.selector.close()


_helper: _Helper | None = None
_outcomes: dict[str, dict] = {}  # request (as JSON) -> the helper's reply


def prestart() -> None:
    """Start the helper now, so that it imports triton while the grading process imports the rest."""
    global _helper
    if _helper is None:
        try:
            _helper = _Helper()
        except OSError:
            pass  # the first compile tries again, and the case fails (could_not_run) if it cannot


def _compile(request: dict) -> dict:
    global _helper
    key = json.dumps(request, sort_keys=True)
    if key not in _outcomes:
        saved = _DiskCache(request)
        loaded = saved.load()
        if loaded is not None:
            _outcomes[key] = loaded
            return loaded
        if _helper is not None and _helper.process.poll() is not None:
            # It ended between two requests (a grading that ends kills every process it finds below the judge, and
            # in a notebook or the tests this process is the judge): a fresh one takes the request.
            _helper.close()
            _helper = None
        if _helper is None:
            _helper = _Helper()
        try:
            _outcomes[key] = _helper.ask(request)
        except Exception:
            _helper.close()  # a helper that timed out or died on this request is not asked again: it fails closed
            _helper = None
            raise
        if "skip" not in _outcomes[key]:  # the check's trouble may pass; the compiler's verdict stays
            saved.store(_outcomes[key])
    return _outcomes[key]


class _DiskCache:
    """One compile's outcome on disk, so that a kernel graded again (unchanged) is not compiled again.

    The key is the request with the files its functions came from replaced by placeholders (a worker builds the
    kernels' module in a fresh folder each time), plus triton's version and this module's source; the outcome
    is stored with the same placeholders and given its files back when loaded. The folder is
    ``GRADER_COMPILE_CACHE``, else ``$XDG_CACHE_HOME/triton-attention-puzzles/gpu-compile``. A cache that cannot
    be read or written is no cache."""

    def __init__(self, request: dict):
        self.files = sorted({f["file"] for f in request["functions"].values()}, key=len, reverse=True)
        text = self._placeheld(json.dumps(request, sort_keys=True))
        digest = hashlib.sha256("\n".join([text, _triton_version(), _THIS_SOURCE]).encode()).hexdigest()
        self.path = os.path.join(_cache_folder(), f"{digest}.json")

    def _placeheld(self, text: str) -> str:
        for number, file in enumerate(self.files):
            text = text.replace(json.dumps(file)[1:-1], f"<file {number}>")
        return text

    def load(self) -> dict | None:
        try:
            with open(self.path) as saved:
                text = saved.read()
        except OSError:
            return None
        for number, file in enumerate(self.files):
            text = text.replace(f"<file {number}>", json.dumps(file)[1:-1])
        try:
            outcome = json.loads(text)
        except ValueError:
            return None
        return outcome if isinstance(outcome, dict) else None

    def store(self, outcome: dict) -> None:
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=os.path.dirname(self.path), suffix=".part")
            with os.fdopen(handle, "w") as saved:
                saved.write(self._placeheld(json.dumps(outcome)))
            os.replace(temporary, self.path)
        except OSError:
            pass


_THIS_SOURCE = hashlib.sha256(open(__file__, "rb").read()).hexdigest()


def _cache_folder() -> str:
    explicit = os.environ.get("GRADER_COMPILE_CACHE")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "triton-attention-puzzles", "gpu-compile")


def _triton_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("triton")
    except metadata.PackageNotFoundError:
        return "?"


def could_not_run(why: str) -> str:
    """The failing message of a case whose kernels the check could not compile (module docstring: fails closed)."""
    return (f"the GPU compile check could not run, so this case does not pass: {why}. A kernel counts as solved only "
            "once it compiles for the GPU; this is the grader's trouble, not a mistake found in your kernel: grade "
            "again, and if it stays, report it with this message")


def _check_launch(launch, archs) -> str | None:
    try:
        requests = [_request(launch, arch) for arch in archs]
    except Unsupported as why:
        if str(why).startswith("the kernel reads"):  # no GPU compiler takes it either: a verdict, not a skip
            return (f"{launch.name} would not compile for a GPU: {why}. A kernel can read only triton.language "
                    "(tl), math, other @triton.jit functions and tl.constexpr globals; numpy, torch and Python "
                    "objects stay in the launcher.")
        return could_not_run(f"{launch.name} could not be handed to the compiler: {why}")
    problem = static_problems(requests[0]["functions"])
    if problem:
        return problem
    compiled = []
    for request in requests:
        outcome = _compile(request)
        if "skip" in outcome:
            return could_not_run(outcome["skip"])
        if outcome.get("error"):
            return _explain(outcome["error"], request["functions"], request["arch"], compiled)
        else:
            compiled.append(request["arch"])
    return None


def check(puzzle, launches) -> str | None:
    """None when every launched kernel compiles for the puzzle's GPU targets; else the report."""
    if not launches or not env.interpreter_forced():
        return None
    archs = getattr(puzzle, "gpu_archs", DEFAULT_ARCHS)
    try:
        for launch in launches:
            problem = _check_launch(launch, archs)
            if problem:
                return problem
    except Exception as exc:  # the check's own trouble: the case fails, as the grader's trouble (fails closed)
        return could_not_run(f"{type(exc).__name__}: {str(exc)[:300]}")
    return None


def dot_lines(launches) -> set[tuple[str, int]] | None:
    """(file, line) of every tl.dot left in the compiled sm_90 kernels of these launches; None when not known."""
    found = set()
    try:
        for launch in launches:
            outcome = _outcomes.get(json.dumps(_request(launch, DEFAULT_ARCHS[0]), sort_keys=True))
            if outcome is None or "dots" not in outcome:
                return None
            found.update((file, line) for file, line in outcome["dots"])
    except Exception:  # unknown, so every dot counts
        return None
    return found


def int32_offset_lines(launches) -> list[tuple[str, int]]:
    """(file, line) of every int32 offset times a kernel argument (int32_offsets) in the compiled sm_90 kernels of
    these launches; [] when none, or not known."""
    found = set()
    try:
        for launch in launches:
            outcome = _outcomes.get(json.dumps(_request(launch, DEFAULT_ARCHS[0]), sort_keys=True)) or {}
            found.update((file, line) for file, line in outcome.get("offsets32", ()))
    except Exception:  # unknown: no warning
        return []
    return sorted(found)


# -- the helper process itself ----------------------------------------------------------------------

_PROBE = {"name": "grader_probe", "file": "grader_gpu_compile_probe.py", "line": 1,
          "source": "def grader_probe(x_ptr):\n    tl.store(x_ptr, 1.0)\n",
          "globals": {"tl": ["module", "triton.language"]}}


def _decode(encoded, jits: dict):
    import importlib

    import triton.language as tl

    kind, value = encoded
    if kind == "module":
        return importlib.import_module(value)
    if kind == "constexpr":
        return tl.constexpr(_decode(value, jits))
    if kind == "dtype":
        return tl.dtype(value)
    if kind == "tuple":
        return tuple(_decode(v, jits) for v in value)
    if kind == "function":
        namespace: dict = {}
        exec(f"def {value}(*args, **kwargs):\n    pass\n", namespace)
        return namespace[value]
    if kind == "jit":
        return jits[value]
    return value


def _rebuild(functions: dict) -> dict:
    """JITFunctions made from the descriptions, under the learner's file names and line numbers."""
    from triton.runtime.jit import JITFunction

    files: dict[str, list[str]] = {}
    for description in functions.values():
        lines = files.setdefault(description["file"], [])
        body = description["source"].splitlines(keepends=True)
        end = description["line"] - 1 + len(body)
        lines.extend(["\n"] * (end - len(lines)))
        lines[description["line"] - 1:end] = body
    for file, lines in files.items():  # what inspect (and so triton) reads as the source of these files
        linecache.cache[file] = (sum(map(len, lines)), None, lines, file)
    jits, scopes = {}, {}
    for key, description in functions.items():
        scope = {"__name__": "grader_gpu_compile_rebuilt", "__builtins__": builtins}
        scope.update({name: _decode(value, {}) for name, value in description["globals"].items() if value[0] != "jit"})
        code = "\n" * (description["line"] - 1) + description["source"]
        exec(compile(code, description["file"], "exec"), scope)
        jits[key], scopes[key] = JITFunction(scope[description["name"]]), scope
    for key, description in functions.items():  # calls between functions, once all of them exist
        scopes[key].update({name: jits[value[1]] for name, value in description["globals"].items()
                            if value[0] == "jit"})
    return jits


def _chain(exc):
    while exc is not None:
        yield exc
        exc = exc.__cause__ or exc.__context__


def _compile_error(exc, functions: dict, diagnostics: str) -> dict:
    """The innermost CompilationError's line in the learner's file and its message; else the message alone."""
    found = [e for e in _chain(exc) if type(e).__name__ == "CompilationError" and getattr(e, "node", None)]
    if found:
        error = found[-1]
        cause = error.__cause__
        message = getattr(error, "error_message", None) or (str(cause) if cause else str(error))
        for description in functions.values():
            if description["source"].strip() == (getattr(error, "src", "") or "").strip():
                line = description["line"] + error.node.lineno - 1
                return {"message": message, "file": description["file"], "line": line}
        return {"message": str(error)}
    return {"message": f"{type(exc).__name__}: {exc}", "diagnostics": diagnostics}


def wide_dot_operands(ttir: str) -> list[str]:
    """The element types of tt.dot operands in TTIR that are not 16-bit ("f32", "tf32", ...), one per wide operand:
    how a GPU run tells that a kernel multiplied float32 blocks, where the interpreter's hook cannot look."""
    wide = []
    for types in re.findall(r"= tt\.dot [^:]*: tensor<(?:\d+x)+(\w+)> \* tensor<(?:\d+x)+(\w+)>", ttir):
        wide += [t for t in types if t not in ("f16", "bf16")]
    return wide


def _resolver(ttir: str):
    """A function from the text inside an op's loc(...) to its (file, line), through the #loc aliases; None if none."""
    aliases = dict(re.findall(r"^(#loc\d*) = loc\((.*)\)\s*$", ttir, re.MULTILINE))

    def resolve(text: str, depth: int = 0):
        direct = re.search(r'"([^"]+)":(\d+):\d+', text)
        if direct:
            return direct[1], int(direct[2])
        for ref in re.findall(r"#loc\d*", text):
            if depth < 50 and ref in aliases:
                found = resolve(aliases[ref], depth + 1)
                if found:
                    return found
        return None
    return resolve


def _dot_lines(ttir: str) -> list[tuple[str, int]]:
    """(file, line) of each tt.dot in TTIR, through its loc(...) and the #loc aliases."""
    resolve = _resolver(ttir)
    lines = []
    for op in re.findall(r"= tt\.dot .*loc\((.*)\)\s*$", ttir, re.MULTILINE):
        found = resolve(op)
        if found:
            lines.append(found)
    return sorted(set(lines))


_SIXTEEN = {"f16": "float16", "bf16": "bfloat16"}


def _caller(ttir: str, loc: str) -> tuple[str, int] | None:
    """The outermost caller's (file, line) of a loc that is a callsite (an inlined tl.sum), else None."""
    aliases = dict(re.findall(r"^(#loc\d*) = loc\((.*)\)\s*$", ttir, re.MULTILINE))
    for _ in range(50):
        loc = aliases.get(loc.strip(), loc)
        outer = re.match(r"callsite\(.* at (#loc\d*)\)$", loc.strip())
        if outer is None:
            break
        loc = outer[1]
    return _resolver(ttir)(loc)


def sums_in_16_bits(ttir: str) -> list[tuple[str, tuple[str, int] | None]]:
    """Sums kept in a 16-bit float, read from TTIR, as (what, (file, line) or None): a tt.dot whose result (its
    accumulator) is 16-bit; a 16-bit add whose operands are a tl.dot result (through any ops) and another, or a loop's
    running value (a running sum of tl.dot results); a 16-bit add inside a reduction (a tl.sum of a 16-bit block).
    What instrument.SumIn16Bit refuses in the interpreter, for a GPU run, where the interpreter's hook cannot look."""
    resolve = _resolver(ttir)
    running = set(re.findall(r"(%[\w.#]+) = %[\w.#]+", " ".join(re.findall(r"iter_args\(([^)]*)\)", ttir))))
    fed: set[str] = set()  # values computed from a tt.dot result
    found, pending = [], None
    for line in ttir.splitlines():
        closing = re.match(r"\s*\}\) : .* loc\((.*)\)\s*$", line)
        if closing and pending is not None:  # the reduction's own loc: tl.sum called at the learner's line
            found.append((pending, _caller(ttir, closing[1]) or resolve(closing[1])))
            pending = None
        op = re.match(r"\s*(%[\w.#]+)(?::\d+)? = (.*?)(?: loc\((.*)\))?\s*$", line)
        if op is None:
            continue
        result, body, loc = op[1], op[2], op[3] or ""
        operands = re.findall(r"%[\w.#]+", body.split(" : ")[0])
        where = resolve(loc) if loc else None
        if body.startswith("tt.dot "):
            fed.add(result)
            dtype = re.search(r"-> tensor<(?:\d+x)+(\w+)>", body)
            if dtype and dtype[1] in _SIXTEEN:
                found.append((f"tl.dot sums its products in {_SIXTEEN[dtype[1]]}", where))
            continue
        if any(name in fed for name in operands):
            fed.add(result)
        add = re.match(r"arith\.(?:addf|subf) (%[\w.#]+), (%[\w.#]+) : (tensor<(?:\d+x)+)?(\w+)>?$", body)
        if add is None or add[4] not in _SIXTEEN:
            continue
        dtype = _SIXTEEN[add[4]]
        if add[3] is None:  # a scalar add: the combine region of a reduction
            pending = f"tl.sum of a {dtype} block adds in {dtype}"  # said where the reduction closes
        elif any(a in fed for a in add.group(1, 2)) and all(a in fed or a in running for a in add.group(1, 2)):
            found.append((f"a running sum of tl.dot results is kept in {dtype}", where))
    return found


def int32_offsets(ttir: str) -> list[tuple[str, int]]:
    """(file, line) of each load or store whose pointer adds an int32 offset that multiplies by a kernel argument
    (`rows * T`): an offset that wraps around past 2**31 elements, on the large problems 14 and 15's docstrings
    name, though never on a case's sizes. `rows.to(tl.int64) * T` makes it int64."""
    resolve = _resolver(ttir)
    signature = re.search(r"tt\.func [^(]*\((.*)\) (?:attributes|\{)", ttir)
    given = set(re.findall(r"(%[\w.#]+): i32", signature[1])) if signature else set()
    from_args, scaled, found = set(given), set(), []
    for line in ttir.splitlines():
        op = re.match(r"\s*(%[\w.#]+)(?::\d+)? = (.*?)(?: loc\((.*)\))?\s*$", line)
        if op is None:
            continue
        result, body, loc = op[1], op[2], op[3] or ""
        operands = re.findall(r"%[\w.#]+", body.split(" : ")[0])
        if body.startswith("tt.addptr "):
            offset = re.search(r", (?:tensor<(?:\d+x)+)?i32>?$", body)
            if offset and len(operands) > 1 and operands[1] in scaled:
                found.append(resolve(loc) if loc else None)
            continue
        if any(name in from_args for name in operands):
            from_args.add(result)
        if any(name in scaled for name in operands) or (
                re.match(r"arith\.muli .* : (?:tensor<(?:\d+x)+)?i32>?$", body)
                and any(name in from_args for name in operands)):
            scaled.add(result)
    return sorted({where for where in found if where is not None})


class _Stopped(Exception):
    """Raised where the LLVM stages would start: the check ends with TTGIR (the module's docstring says why)."""


class _Compiler:
    """Compiles requests in the helper; says, for every request, when it cannot."""

    def __init__(self):
        self.unavailable = None
        self.probed: dict[int, str | None] = {}  # arch -> why it cannot be compiled for, or None
        self.ttir = ""  # the TTIR of the latest compile
        try:
            import triton
            from triton.backends.compiler import GPUTarget
            from triton.compiler import ASTSource
            from triton.runtime.jit import mangle_type

            triton.knobs.runtime.add_stages_inspection_hook = self._inspect_stages
        except Exception as exc:  # an untested triton without this API
            self.unavailable = f"kernels were not compiled for the GPU: this triton lacks its compile API ({exc})"
            return
        self.triton, self.target, self.source, self.mangle = triton, GPUTarget, ASTSource, mangle_type

    def _inspect_stages(self, backend=None, stages=None, *rest):
        """Triton's hook on its pipeline: keep the TTIR's text, and stop before the LLVM stages.
        Triton 3.9 also calls it with no argument for a suffix to its cache key."""
        if stages is None:
            return "-grader-gpu-compile-check", ""
        make_ttir = stages["ttir"]

        def keep_ttir(module, metadata):
            module = make_ttir(module, metadata)
            self.ttir = str(module)
            return module

        def stop(module, metadata):
            raise _Stopped()

        stages["ttir"], stages["llir"] = keep_ttir, stop

    def _signature(self, request: dict, jits: dict) -> tuple[dict, dict]:
        """The launch's types for run-time parameters and values for constexprs, as the JIT would pass them."""
        signature, constexprs = {}, {}
        for param in jits[request["kernel"]].params:
            encoded = request["args"].get(param.name)
            if encoded is not None and encoded[0] == "type" and not param.is_constexpr:
                signature[param.name] = encoded[1]
                continue
            value = _decode(encoded, jits) if encoded is not None and encoded[0] != "type" else None
            if param.is_constexpr or value is None:
                signature[param.name], constexprs[param.name] = "constexpr", value
            else:
                signature[param.name] = self.mangle(value)
        return signature, constexprs

    def _compile(self, request: dict) -> dict:
        start = os.lseek(2, 0, os.SEEK_END)
        try:
            # Inside the try: a kernel that Triton cannot even read (a `def \` line it finds no function in) fails
            # the check, rather than skipping it; trouble of this machine's triton shows in _trouble's probe
            jits = _rebuild(request["functions"])
            signature, constexprs = self._signature(request, jits)
            source = self.source(jits[request["kernel"]], signature, constexprs)
            self.triton.compile(source, target=self.target("cuda", request["arch"], 32), options=request["options"])
        except _Stopped:
            return {"error": None, "dots": _dot_lines(self.ttir), "offsets32": int32_offsets(self.ttir)}
        except Exception as exc:  # the compiler's verdict on the kernel
            diagnostics = os.pread(2, 1 << 16, start).decode(errors="replace")[-4000:]
            return {"error": _compile_error(exc, request["functions"], diagnostics)}
        return {"skip": "triton ran past the stage where the check stops"}

    def _trouble(self, arch: int) -> str | None:
        """Why nothing compiles for `arch` here (a one-line kernel fails), or None."""
        if arch not in self.probed:
            self.probed[arch] = None
            probe = self._compile({"functions": {"probe": _PROBE}, "kernel": "probe", "arch": arch,
                                   "args": {"x_ptr": ["type", "*fp32"]}, "options": {}})
            if "dots" not in probe:
                why = probe["error"]["message"] if probe.get("error") else probe.get("skip")
                self.probed[arch] = (f"kernels were not compiled for the GPU: triton {self.triton.__version__} could "
                                     f"not compile a one-line kernel for sm_{arch}: {why}")
        return self.probed[arch]

    def compile(self, request: dict) -> dict:
        trouble = self.unavailable or self._trouble(request["arch"])
        return {"skip": trouble} if trouble else self._compile(request)


def _serve() -> None:
    """The helper's loop. Compiler output goes to a scratch file, so only replies reach stdout."""
    import tempfile
    import warnings

    os.environ.pop("TRITON_INTERPRET", None)  # `import grader` set it; triton reads it when it is imported
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"  # see the module's docstring, point 3
    scratch = tempfile.TemporaryDirectory(prefix="grader-gpu-compile-")
    os.environ["TRITON_CACHE_DIR"] = scratch.name
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    log = tempfile.TemporaryFile("w+")
    os.dup2(log.fileno(), 1)
    os.dup2(log.fileno(), 2)
    warnings.simplefilter("ignore")
    compiler = _Compiler()
    for line in sys.stdin:
        try:
            reply = compiler.compile(json.loads(line))
        except Exception as exc:  # rebuilding the request failed: the check's trouble, not the kernel's
            reply = {"skip": f"the helper could not read the request: {type(exc).__name__}: {exc}"}
        replies.write(json.dumps(reply) + "\n")
    scratch.cleanup()


if __name__ == "__main__":
    _serve()
