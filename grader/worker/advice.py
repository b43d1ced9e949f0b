"""Advice for Triton's own messages: a learner's kernel meets the same mistake as an exception in the interpreter
(``grader.worker.execute``) or as a compiler error in the GPU compile check (``grader.worker.gpu_compile``), and
kernel-only grading compiles a case before it interprets it, so either may speak first. Both give the advice of
``advice_for``, so a mistake gets the same words on every path (the CPU's, and the interpreter's checks beside a
native run). Each entry is (a substring of the message, the advice)."""

from __future__ import annotations

import difflib
import re
import sys

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


# Triton's messages whose cause is common in a learner's kernel, as (clue, advice): the compile check's, and the
# interpreter's too (INTERPRETER_ADVICE takes them), since either may meet the mistake first.
ADVICE_BY_CLUE = (
    ("Block pointers have been removed", BLOCK_POINTERS_REMOVED),
    ("Cannot make_shape_compatible", SHAPES_MEET),
    ("input and other must have equal reduction dimensions", DOT_SHAPES),
)


# Messages from triton and the driver that have a common cause in a learner's kernel: (clue, advice).
INTERPRETER_ADVICE = (
    ("Both operands must be same dtype",
     "tl.dot takes two blocks of one dtype: cast one, e.g. tl.dot(p.to(v.dtype), v). Keep both 16-bit, so the "
     "GPU uses tensor cores (a float32 tl.dot runs as TF32)."),
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
    ("argument must be provided outside of JIT functions",
     "tl.max(x, axis) and tl.sum(x, axis) reduce one block along an axis, so a block given as the second argument "
     "is taken for the axis (triton's 'Did you forget to add @triton.jit?'); for the element-wise maximum of two "
     "blocks use tl.maximum(a, b)."),
)


def advice_for(text: str) -> list[str]:
    """The advice for every clue in an error's text, and the real name for a misspelt tl function."""
    found = [a for clue, a in (*INTERPRETER_ADVICE, *COMPILER_ADVICE) if clue in text] + [did_you_mean(text)]
    return list(dict.fromkeys(a for a in found if a))
