"""The GPU compiler's verdict on a learner's kernel, explained (``grader.worker.gpu_compile``): the compiler's message
cut to its point, the learner's line it names, and advice for the traps a learner meets, keyed on substrings of the
messages that triton 3.6 and 3.9 share. Kernel-only grading compiles a case before it interprets it, so a mistake
both refuse may meet either first: ``common_advice`` gives the interpreter's errors (``grader.worker.execute``) and
the compiler's messages the same words (``INTERPRETER_ADVICE``, which takes ``ADVICE_BY_CLUE`` in, and
``COMPILER_ADVICE`` for the compiler's own wording of them).
"""

from __future__ import annotations

import ast
import difflib
import linecache
import re
import sys

from grader.paths import location


def where(file: str, line: int) -> str:
    """'at p05.py:12: acc = 0.0': a line of the learner's file, as a report quotes it."""
    return f"at {location(file, line)}: {linecache.getline(file, line).strip()}"


def _first_use(functions: dict, name: str) -> str:
    for description in functions.values():
        for node in ast.walk(ast.parse(description["source"])):
            if isinstance(node, ast.Name) and node.id == name:
                return "\n  " + where(description["file"], description["line"] + node.lineno - 1)
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
            return f" (it starts {where(description['file'], first + max(starts) - 1)})"
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
LOST = "`_semantic` argument must be provided outside of JIT functions"
# The same lost message where a block went where tl.max / tl.min / tl.sum take their axis
REDUCED_TWO_BLOCKS = (
    "tl.max(x, axis) and tl.sum(x, axis) reduce one block along an axis, so a block given as the second argument "
    "is taken for the axis (triton's 'Did you forget to add @triton.jit?'); for the element-wise maximum of two "
    "blocks use tl.maximum(a, b).")


def _lost_message(message: str, error: dict) -> str:
    """LOST's advice for the learner's line: a reduction given two blocks, or a tensor descriptor's strides. Where
    the compiler names no line of the learner's, the source it quotes (triton's own tl.max) says which."""
    line = linecache.getline(error.get("file") or "", error.get("line") or 0)
    if "make_tensor_descriptor" in line:
        return LOST_MESSAGE
    if re.search(r"tl\.(max|min|sum)\(", line) or (not line.strip() and "reduce(input, axis" in message):
        return REDUCED_TWO_BLOCKS
    return LOST_MESSAGE

# Triton's messages whose cause is common in a learner's kernel, as (clue, advice): the compile check's, and the
# interpreter's too (INTERPRETER_ADVICE takes them), since either may meet the mistake first.
ADVICE_BY_CLUE = (
    ("Block pointers have been removed", BLOCK_POINTERS_REMOVED),
    ("Cannot make_shape_compatible", SHAPES_MEET),
    ("input and other must have equal reduction dimensions", DOT_SHAPES),
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


def advice_for(message: str, functions: dict, error: dict) -> str:
    """Advice for the compiler's message on the learner's kernel (`functions`, as gpu_compile collects them), or ''."""
    for clue, advice in ADVICE_BY_CLUE:
        if clue in message:
            return advice
    if LOST in message:
        return _lost_message(message, error)
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
    return "\n  ".join(common_advice(message))  # the interpreter's words for the same mistake


# Messages from triton and the driver that have a common cause in a learner's kernel: (clue, advice).
INTERPRETER_ADVICE = (
    ("Unsupported data type",
     "triton's interpreter cannot run this operation on this element type (tl.atomic_add on float16 or bfloat16, "
     "tl.atomic_xchg on a float), though a GPU may compile it: the grader runs kernels in the interpreter, so do "
     "this one another way (an add in float32; an exchange on an integer view, x.to(tl.int32, bitcast=True))"),
    ("Both operands must be same dtype",
     "tl.dot takes two blocks of one dtype: cast one, e.g. tl.dot(p.to(v.dtype), v). Keep both 16-bit, so the "
     "GPU uses tensor cores (a float32 tl.dot runs as TF32)."),
    ("op operand #0 must be floating point",
     "float8 values cannot be computed with on a GPU (the compiled kernel holds them as 8-bit integers; only "
     "conversions read them): convert to tl.float16 or tl.float32 first, and back to float8 to store"),
    ("PassManager::run failed",
     "The Triton compiler itself failed; the assertion it printed names the pass. A known trigger in triton 3.6 "
     "(OptimizeThreadLocality): a loop's reduced result used directly by two later loops. Broadcast it once, "
     "e.g. `m = row_max[:, None]`, and use m in both."),
    ("active drivers",
     "This kernel was defined before `import grader` switched Triton to its interpreter (no GPU here). Run the "
     "cell with `import grader` first, then re-run the cell that defines your kernel."),
    ("block offset start must be 16-byte aligned",
     "A tensor descriptor's offsets are in elements, not blocks: desc.load([pid_m * BM, k]), not "
     "desc.load([pid_m, k]); along the last dimension an offset must also be a multiple of 16 bytes (8 float16 or "
     "4 float32 elements)."),
    ("arange's arguments must be of type tl.constexpr",
     "tl.arange's bounds are compile-time constants: use a block size (`tl.arange(0, B0)`, a tl.constexpr "
     "parameter) and mask the lanes past the size: `offsets < N0`. A size such as N0 is a run-time value."),
    ("arange's range must be a power of 2",
     "tl.arange(0, n) needs n a power of two (16, 32, 64, ...): round the block up (the launcher can use "
     "triton.next_power_of_2) and mask the lanes past the real size."),
    ("Shape element",
     "A block's shape (tl.zeros, tl.full, tl.arange) must be made of tl.constexpr values: a run-time size such "
     "as H or D cannot shape a block. Use the padded constexpr sizes the launcher passes (e.g. H_PAD, D_PAD = "
     "next powers of two) and mask the padding: tl.zeros([H_PAD, D_PAD], dtype=tl.float32)."),
    ("Expected pointer argument to have shape",
     "The value stored has a different shape from the block of pointers: check the axis of the reductions "
     "that made it."),
    ("Boolean value of Tensor", BOOLEAN_OF_A_BLOCK),
    ("libdevice.",
     "this tl.extra.libdevice function compiles for a GPU, but triton's interpreter cannot run it (it has no "
     "libdevice): use triton.language's own, which both run (tl.fma, tl.exp, tl.sqrt, tl.maximum, ...)."),
    *ADVICE_BY_CLUE,
    ("out of bounds for shape",
     "tl.max(x, axis) and tl.sum(x, axis) reduce along an axis; for the element-wise maximum of two blocks use "
     "tl.maximum(a, b)."),
)


def did_you_mean(text: str) -> str | None:
    """For a misspelt tl.something (in an error's text), the closest real name."""
    found = re.search(r"module '(triton\.language)' has no attribute '(\w+)'", text)
    language = sys.modules.get("triton.language")
    if not found or language is None:
        return None
    close = difflib.get_close_matches(found[2], [n for n in dir(language) if not n.startswith("_")], n=1)
    return f"did you mean tl.{close[0]}?" if close else None


# Messages only the compiler gives, for mistakes the interpreter names with its own exception.
COMPILER_ADVICE = (
    ("K >= 16",
     "on the GPU every dimension of tl.dot must be at least 16 (a 16-bit tl.dot takes K >= 16): use blocks of 16 "
     "or more along M, N and K (the interpreter would run it, the GPU compiler would not)"),
    ("'int' object has no attribute",
     "an integer argument that is 1 in this case is a tl.constexpr on a GPU (triton's JIT specializes the value 1), "
     "so in the kernel it is a Python int with no tensor methods: convert with tl.cast(N0, tl.int64) rather than "
     "N0.to(tl.int64), or keep it a tensor with @triton.jit(do_not_specialize=[\"N0\"])"),
)


def common_advice(text: str) -> list[str]:
    """The advice for every clue in an error's text, and the real name for a misspelt tl function."""
    found = [a for clue, a in (*INTERPRETER_ADVICE, *COMPILER_ADVICE) if clue in text] + [did_you_mean(text)]
    return list(dict.fromkeys(a for a in found if a))


def explain(error: dict, functions: dict, arch: int, compiled_for: list[int]) -> str:
    """The report of a kernel the compiler refused for sm_`arch` (`compiled_for`: the targets it compiled for)."""
    import triton

    other = f" (it compiles for sm_{compiled_for[0]})" if compiled_for else ""
    text = f"the kernel does not compile for the GPU (sm_{arch}, triton {triton.__version__}){other}: "
    message = error["message"].strip()
    text += message.splitlines()[-1] if error.get("file") else "\n  ".join(message.splitlines()[-6:])
    if error.get("file"):
        text += "\n  " + where(error["file"], error["line"])
    said = [line for line in (error.get("diagnostics") or "").strip().splitlines() if "error:" in line][-3:]
    advice = advice_for("\n".join([message, *said]), functions, error)
    if said:  # the pass's own error (a failed pass says only "PassManager::run failed")
        text += "\n  the compiler said: " + "\n  ".join(said)
    if advice:
        text += "\n  " + advice
    elif error.get("diagnostics") and not said:
        text += "\n  the compiler said: " + "\n  ".join(error["diagnostics"].strip().splitlines()[-6:])
    return text
