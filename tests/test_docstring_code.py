"""Code the learner is shown compiles for a GPU: the docstring hints of solutions/ and the notebooks' markdown.

Which snippets are kernel code (a claim this test holds them to):
- in a solution's docstring, the backquoted spans of its "Hints" section; in a notebook's markdown cells, the
  backquoted spans and the ```python fenced blocks (an untagged fence is a diagram or pseudo-code); a span may
  wrap onto the next line, and is read as markdown shows it, the line break a space;
- of those, the statements (`acc = tl.zeros(...)`, `acc += ...`, `for ... in tl.range(...):`, `if node < N:`) and
  the expressions that use triton (`tl.full([B0], float("-inf"), dtype=tl.float32)`);
- not: a bare name (`tl.dot`), a span with `...` for arguments left out, a keyword argument (`other=0.0`), and
  the snippets in NOT_KERNEL_CODE, each with its reason (the traps shown on purpose, pseudo-code, fragments).

Each snippet is compiled once for sm_90 (triton.compile to TTGIR, no GPU) inside a small kernel that defines the
names it reads, from CHAPTER_NAMES: its chapter's pointers and sizes as parameters, its block sizes as constexprs,
and its blocks (`x`, `row_max`, `acc`, ...) as locals computed the way the chapter computes them. The compiles
run in one child process: with TRITON_INTERPRET=1 (conftest) triton.language's own helpers are interpreter
objects, so this process cannot compile. The same file is that child: `python tests/test_docstring_code.py`
reads jobs as JSON on stdin and answers one verdict per job.
"""

import ast
import builtins
import json
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TARGET_ARCH = 90  # the H100 / H200 the puzzles are written for


# -- where the snippets come from ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Snippet:
    code: str
    chapter: str  # the notebook whose names it uses, e.g. "02_softmax_and_attention"
    where: str  # the first place it is shown, for messages

    @property
    def name(self) -> str:
        return f"{self.chapter[:2]}: {' '.join(self.code.split())[:70]}"


_SPAN = re.compile(r"`((?:[^`\n]|\n(?![ \t]*\n))+)`")  # a span may wrap onto the next line of its paragraph
_WRAP = re.compile(r"[ \t]*\n[ \t]*")  # where it wraps: one space, as markdown shows it
_FENCE = re.compile(r"```(\w*)\n(.*?)```", re.DOTALL)


def _chapter_of_solution(path: Path) -> str:
    from grader.course import registry  # here, not at the top: the compiling child must import triton before grader

    return registry.find(int(path.name[1:3])).notebook


def _shown_code() -> list[Snippet]:
    """Every backquoted span of the solutions' hints and the notebooks' markdown, and every ```python block."""
    found: dict[tuple[str, str], Snippet] = {}

    def add(code: str, chapter: str, where: str):
        found.setdefault((code, chapter), Snippet(code, chapter, where))

    for path in sorted((ROOT / "solutions").glob("p*.py")):
        docstring = ast.get_docstring(ast.parse(path.read_text()))
        hints = docstring[docstring.index("\nHints\n"):]
        for code in _SPAN.findall(hints):
            add(_WRAP.sub(" ", code), _chapter_of_solution(path), f"solutions/{path.name}, Hints")
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for index, cell in enumerate(json.loads(path.read_text())["cells"]):
            if cell["cell_type"] != "markdown":
                continue
            text = "".join(cell["source"])
            for language, body in _FENCE.findall(text):
                if language == "python":
                    add(body, path.stem, f"notebooks/{path.name}, markdown cell {index}")
            for code in _SPAN.findall(_FENCE.sub("", text)):
                add(_WRAP.sub(" ", code), path.stem, f"notebooks/{path.name}, markdown cell {index}")
    return list(found.values())


# -- which of them are kernel code -----------------------------------------------------------------------------

# Shown on purpose, and not compiled: snippet -> why.
NOT_KERNEL_CODE = {
    # the traps: code the interpreter runs and a GPU does not (notebook 04's table, puzzle 5's hint, notebook 02)
    "acc = 0.0": "a trap shown on purpose: a scalar that a loop turns into a block",
    "acc += tl.sum(x, axis=1)": "the loop half of the `acc = 0.0` trap; its fix `acc = tl.zeros([BQ], ...)` is checked",
    'm = -float("inf")': "a trap shown on purpose: a scalar that a loop turns into a block",
    "m = tl.maximum(m, tl.max(s, axis=1))": "the loop half of the `m = -float(\"inf\")` trap; its fix is checked",
    "LOG2E = 1.4426950408889634": "a trap shown on purpose: a module-level global that is not a tl.constexpr",
    "for t in tl.static_range(first, last):": "a trap shown on purpose: static_range bounds loaded at run time",
    "ok = (rows < N) and (cols < T)": "a trap shown on purpose: Python's `and` on blocks",
    "m_new = max(m, tl.max(s, axis=1))": "a trap shown on purpose: Python's `max` on blocks",
    "tl.dot(a.to(tl.float32), b.to(tl.float32))": "an example the grader rejects: float32 operands run as TF32",
    # not a whole line of code
    "tl.program_id(axis)": "pseudo-code: `axis` stands for 0, 1 or 2",
    ".to(tl.float16)": "a fragment: a method call without the block it is called on",
    # prose: which operand goes where, in the math's names (dO); the hints below it give the code, casts included
    "tl.dot(p, dO)": "prose: the operand order of dv's product, in the math's names; its code is a hint below",
    "tl.dot(ds, q)": "prose: the operand order of dk's product, in the math's names; its code is a hint below",
}

# Placed at module level, where the notebooks say they go; the kernel then reads the name they define.
MODULE_LEVEL = {"LOG2E = tl.constexpr(1.4426950408889634)"}

_KEYWORD_ARGUMENT = re.compile(r"\w+=[^=\s].*")  # other=0.0, mask=real, other=0, TRITON_INTERPRET=1
_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.If, ast.While)
_LOOP_ITERATORS = ("range", "static_range")  # `tl.range(0, T, B1)` alone is compiled as the loop it heads


def _completed(code: str) -> str:
    """The snippet as lines that compile alone: a block header (`if node < N:`) gets an empty body."""
    code = textwrap.dedent(code).strip("\n")
    return code + "\n    pass" if code.rstrip().endswith(":") else code


def _parse(code: str) -> list[ast.stmt] | None:
    """The snippet's statements, None if it is not Python."""
    try:
        return ast.parse(_completed(code)).body
    except SyntaxError:
        return None


def _is_kernel_code(snippet: Snippet) -> bool:
    code = snippet.code.strip()
    if code in NOT_KERNEL_CODE or re.fullmatch(r"[\w.]+", code) or "..." in code or _KEYWORD_ARGUMENT.fullmatch(code):
        return False  # listed with a reason, a name, a call with arguments left out, a keyword argument
    body = _parse(code)
    if body is None:
        return "tl." in code  # triton that is not Python fails (so it gets listed above), anything else is prose
    return "tl." in code or any(isinstance(statement, _STATEMENTS) for statement in body)


# -- the names a snippet may read, per chapter ---------------------------------------------------------------

@dataclass(frozen=True)
class Name:
    kind: str  # "param" (run time, value is its triton type), "constexpr" (value), or "block" (value is code)
    value: object


def param(triton_type: str) -> Name:
    return Name("param", triton_type)


def constexpr(value) -> Name:
    return Name("constexpr", value)


def block(code: str) -> Name:
    return Name("block", code)


# Sizes differ from each other (B0 != B1, BQ != BK), so a snippet that mixes up two axes fails to compile.
CHAPTER_NAMES = {
    "01_warmup": {
        "x_ptr": param("*fp32"), "y_ptr": param("*fp32"), "z_ptr": param("*fp32"),
        "N0": param("i32"), "N1": param("i32"), "T": param("i32"),
        "start": param("i32"),  # a tl.range loop's variable: a run-time int
        "B0": constexpr(16), "B1": constexpr(32),
        "pid": block("tl.program_id(0)"),
        "offsets": block("pid * B0 + tl.arange(0, B0)"),
        "rows": block("tl.program_id(0) * B0 + tl.arange(0, B0)"),
        "cols": block("start + tl.arange(0, B1)"),
        "tile": block("tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=rows[:, None] < N0, other=0.0)"),
        "acc": block("tl.zeros([B0], dtype=tl.float32)"),
    },
    "02_softmax_and_attention": {
        "x_ptr": param("*fp32"), "q_ptr": param("*fp32"), "k_ptr": param("*fp32"), "v_ptr": param("*fp32"),
        "N0": param("i32"), "T": param("i32"),
        "B0": constexpr(16), "B1": constexpr(32),
        "LOG2E": constexpr(1.4426950408889634),  # a tl.constexpr, as the notebook says it must be
        "rows": block("tl.program_id(0) * B0 + tl.arange(0, B0)"),
        "cols": block("tl.arange(0, B1)"),
        "x": block("tl.load(x_ptr + rows[:, None] * T + cols[None, :])"),
        "row_max": block("tl.max(x, axis=1)"),
        "m": block("row_max[:, None]"),  # puzzle 4's m, as its hints define it
        "new_max": block("tl.maximum(row_max, tl.max(x, axis=1))"),
        "denominator": block("tl.zeros([B0], dtype=tl.float32)"),
        # puzzle 6: one query per row, B1 keys per step
        "keys": block("tl.arange(0, B1)"),
        "key_ok": block("keys < T"),
        "q": block("tl.load(q_ptr + rows)"),
        "k": block("tl.load(k_ptr + keys)"),
        "v": block("tl.load(v_ptr + keys)"),
        "running_max": block('tl.full([B0], float("-inf"), dtype=tl.float32)'),
        "scores": block('tl.where(key_ok[None, :], q[:, None] * k[None, :], float("-inf"))'),
        "weights": block("tl.exp(scores - new_max[:, None])"),
        "alpha": block("tl.exp(running_max - new_max)"),
        "acc": block("tl.zeros([B0], dtype=tl.float32)"),
    },
    "03_graph_attention": {
        "dst_ptr": param("*i32"), "col_ptr_ptr": param("*i32"), "row_idx_ptr": param("*i32"),
        "q_ptr": param("*fp32"), "k_ptr": param("*fp32"), "v_ptr": param("*fp32"), "e_ptr": param("*fp32"),
        "node_feat_ptr": param("*fp32"),
        "N": param("i32"), "H": param("i32"), "D": param("i32"),
        "BLOCK_E": constexpr(16), "H_PAD": constexpr(4), "D_PAD": constexpr(32), "NODES_PER_PROGRAM": constexpr(2),
        "i": constexpr(0),  # a tl.static_range index is a compile-time int
        "edges": block("tl.program_id(0) * BLOCK_E + tl.arange(0, BLOCK_E)"),
        "heads": block("tl.arange(0, H_PAD)"),
        "feats": block("tl.arange(0, D_PAD)"),
        "row": block("heads[:, None] * D + feats[None, :]"),
        "node": block("tl.program_id(0) * NODES_PER_PROGRAM + i"),
        "start": block("tl.load(col_ptr_ptr + node)"),
        "end": block("tl.load(col_ptr_ptr + node + 1)"),
        "slots": block("start + tl.arange(0, BLOCK_E)"),
        "slot_ok": block("slots < end"),
        "sources": block("tl.load(row_idx_ptr + slots, mask=slot_ok, other=0)"),
        "hit": block("tl.load(dst_ptr + edges) == node"),
        "q": block("tl.load(q_ptr + node * (H * D) + row)"),
        "k": block("tl.load(k_ptr + sources[:, None, None] * (H * D) + row[None, :, :])"),
        "v": block("tl.load(v_ptr + sources[:, None, None] * (H * D) + row[None, :, :])"),
        "e": block("tl.load(e_ptr + edges[:, None, None] * (H * D) + row[None, :, :])"),
        "e_out": block("tl.clamp(k * q[None, :, :], -5.0, 5.0) * e"),
        "logits": block("tl.clamp(tl.sum(e_out, axis=2), -5.0, 5.0)"),
        "weights": block("tl.exp(logits)"),
        "features": block("tl.load(node_feat_ptr + sources[:, None, None] * (H * D) + row[None, :, :])"),
        "numerator": block("tl.zeros([H_PAD, D_PAD], dtype=tl.float32)"),
        "denominator": block("tl.zeros([H_PAD], dtype=tl.float32)"),
        "acc": block("tl.zeros([H_PAD, D_PAD], dtype=tl.float32)"),
    },
    "04_tensor_cores": {
        "a_ptr": param("*fp16"), "b_ptr": param("*fp16"),
        "q_ptr": param("*fp16"), "k_ptr": param("*fp16"), "v_ptr": param("*fp16"),
        "window_order_ptr": param("*i32"), "tcb_col_ptr": param("*i32"), "tcb_mask_ptr": param("*i32"),
        "M": param("i32"), "N": param("i32"), "K": param("i32"), "T": param("i32"),
        "row": param("i32"), "col": param("i32"), "first": param("i32"), "last": param("i32"),
        "scale": param("fp32"),
        "BM": constexpr(64), "BN": constexpr(32), "BK": constexpr(16), "BQ": constexpr(32), "D": constexpr(64),
        # puzzle 11
        "a": block("tl.load(a_ptr + tl.arange(0, BM)[:, None] * BK + tl.arange(0, BK)[None, :])"),
        "b": block("tl.load(b_ptr + tl.arange(0, BK)[:, None] * BN + tl.arange(0, BN)[None, :])"),
        # puzzle 12: BQ queries against BK keys
        "queries": block("tl.program_id(0) * BQ + tl.arange(0, BQ)"),
        "keys": block("tl.arange(0, BK)"),
        "key_ok": block("keys < T"),
        "feats": block("tl.arange(0, D)"),
        "q": block("tl.load(q_ptr + queries[:, None] * D + feats[None, :])"),
        "k": block("tl.load(k_ptr + keys[:, None] * D + feats[None, :])"),
        "v": block("tl.load(v_ptr + keys[:, None] * D + feats[None, :])"),
        "s": block("tl.dot(q, tl.trans(k))"),
        "m": block('tl.full([BQ], float("-inf"), tl.float32)'),
        "m_new": block("tl.maximum(m, tl.max(s, axis=1))"),
        "alpha": block("tl.exp2(m - m_new)"),
        "p": block("tl.exp2(s - m_new[:, None])"),
        "l": block("tl.zeros([BQ], tl.float32)"),
        "acc": block("tl.zeros([BQ, D], tl.float32)"),
        # puzzle 13: a window of 16 rows, TCBs of 16 slots
        "window": block("tl.load(window_order_ptr + tl.program_id(0))"),
        "rows": block("window * 16 + tl.arange(0, 16)"),
        "slots": block("tl.arange(0, 16)"),
        "cols": block("tl.load(tcb_col_ptr + slots)"),
        "bits": block("tl.load(tcb_mask_ptr + slots)"),
        "edge": block("((bits[:, None] >> slots[None, :]) & 1) != 0"),
    },
    # One notebook, five puzzles whose names collide: the chapter's q, k, v, p, lse and delta are puzzle 17's, and
    # the snippets of 14, 15, 16 and 18 that read them get their own (_P14_NAMES, ... below, by SNIPPET_NAMES).
    "05_backward": {
        # puzzle 14: B0 rows, the row in steps of B1 columns
        "y_ptr": param("*fp32"), "dy_ptr": param("*fp32"), "dx_ptr": param("*fp32"),
        "N0": param("i32"), "T": param("i32"),
        "start": param("i32"),  # a tl.range loop's variable: a run-time int
        "B0": constexpr(16), "B1": constexpr(32),
        "rows": block("tl.program_id(0) * B0 + tl.arange(0, B0)"),
        "row_ok": block("rows < N0"),
        "row_start": block("rows.to(tl.int64) * T"),
        "mask": block("row_ok[:, None] & ((start + tl.arange(0, B1)) < T)[None, :]"),
        "offsets": block("row_start[:, None] + (start + tl.arange(0, B1))[None, :]"),
        "y": block("tl.load(y_ptr + offsets, mask=mask, other=0.0)"),
        "dy": block("tl.load(dy_ptr + offsets, mask=mask, other=0.0)"),
        # puzzle 15: one row, BLOCK_V columns of it
        "x_ptr": param("*fp32"), "dloss_ptr": param("*fp32"), "counted_ptr": param("*i64"),
        "V": param("i32"),
        "BLOCK_V": constexpr(64),
        "row": block("tl.program_id(0)"),
        "cols": block("tl.program_id(1) * BLOCK_V + tl.arange(0, BLOCK_V)"),
        "x": block("tl.load(x_ptr + row.to(tl.int64) * V + cols, mask=cols < V, other=0.0)"),
        "counted": block("tl.load(counted_ptr)"),
        "dloss": block("tl.load(dloss_ptr)"),
        # puzzle 17: BQ queries against BK keys, 16-bit operands
        "q_ptr": param("*fp16"), "k_ptr": param("*fp16"), "v_ptr": param("*fp16"),
        "o_ptr": param("*fp16"), "do_ptr": param("*fp16"), "lse_ptr": param("*fp32"), "delta_ptr": param("*fp32"),
        "N": param("i32"),
        "scale": param("fp32"),
        "BQ": constexpr(32), "BK": constexpr(64), "D": constexpr(128),
        "LOG2E": constexpr(1.4426950408889634),  # the solutions' `LOG2E: tl.constexpr = ...`
        "queries": block("tl.program_id(0) * BQ + tl.arange(0, BQ)"),
        "keys": block("start + tl.arange(0, BK)"),
        "query_ok": block("queries < N"),
        "key_ok": block("keys < T"),
        "feats": block("tl.arange(0, D)"),
        "q": block("tl.load(q_ptr + queries[:, None] * D + feats[None, :], mask=query_ok[:, None], other=0.0)"),
        "o": block("tl.load(o_ptr + queries[:, None] * D + feats[None, :], mask=query_ok[:, None], other=0.0)"),
        "do": block("tl.load(do_ptr + queries[:, None] * D + feats[None, :], mask=query_ok[:, None], other=0.0)"),
        "k": block("tl.load(k_ptr + keys[:, None] * D + feats[None, :], mask=key_ok[:, None], other=0.0)"),
        "v": block("tl.load(v_ptr + keys[:, None] * D + feats[None, :], mask=key_ok[:, None], other=0.0)"),
        "lse": block("tl.load(lse_ptr + queries, mask=query_ok, other=0.0)"),
        "delta": block("tl.load(delta_ptr + queries, mask=query_ok, other=0.0)"),
        "seen": block("query_ok[:, None] & key_ok[None, :]"),
        "scores": block("tl.dot(q, tl.trans(k)) * (scale * LOG2E)"),
        "p": block("tl.where(seen, tl.exp2(scores - lse[:, None] * LOG2E), 0.0)"),
        "ds": block("p * (tl.dot(do, tl.trans(v)) - delta[:, None])"),
        "dq": block("tl.zeros([BQ, D], dtype=tl.float32)"),
        "dk": block("tl.zeros([BK, D], dtype=tl.float32)"),
        "dv": block("tl.zeros([BK, D], dtype=tl.float32)"),
        # puzzle 18: a window of 16 rows, TCBs of 16 slots
        "window_order_ptr": param("*i32"), "tcb_col_ptr": param("*i32"), "tcb_mask_ptr": param("*i32"),
        "tcb": param("i32"),  # a tl.range loop's variable
        "window": block("tl.load(window_order_ptr + tl.program_id(0))"),
        "slots": block("tl.arange(0, 16)"),
        "bits": block("tl.load(tcb_mask_ptr + tcb * 16 + slots)"),
        "edge": block("((bits[:, None] >> slots[None, :]) & 1) != 0"),
    },
}

# Chapter 5's puzzles by their own names, where they collide with puzzle 17's (SNIPPET_NAMES hands them out).
# Puzzle 14: Δ is one float32 per row, accumulated.
_P14_NAMES = {"delta": block("tl.zeros([B0], dtype=tl.float32)")}
# Puzzle 15: one row's log-sum-exp, a single value.
_P15_NAMES = {"lse": block("tl.load(lse_ptr + row)")}
# Puzzle 16: one node of the CSC walk, float32 [BLOCK_E, H_PAD, D_PAD] tiles of its incoming edges; D is run time.
_P16_NAMES = {
    "q_ptr": param("*fp32"), "k_ptr": param("*fp32"), "v_ptr": param("*fp32"), "e_ptr": param("*fp32"),
    "h_ptr": param("*fp32"), "den_ptr": param("*fp32"), "dh_ptr": param("*fp32"), "de_out_ptr": param("*fp32"),
    "col_ptr_ptr": param("*i32"), "row_idx_ptr": param("*i32"), "edge_id_ptr": param("*i32"),
    "H": param("i32"), "D": param("i32"),
    "first": param("i32"),  # a tl.range loop's variable
    "BLOCK_E": constexpr(16), "H_PAD": constexpr(4), "D_PAD": constexpr(32), "NODES_PER_PROGRAM": constexpr(2),
    "i": constexpr(0),  # a tl.static_range index is a compile-time int
    "heads": block("tl.arange(0, H_PAD)"),
    "feats": block("tl.arange(0, D_PAD)"),
    "row": block("heads[:, None] * D + feats[None, :]"),
    "feature_mask": block("(heads < H)[:, None] & (feats < D)[None, :]"),
    "node": block("tl.program_id(0) * NODES_PER_PROGRAM + i"),
    "end": block("tl.load(col_ptr_ptr + node + 1)"),
    "q": block("tl.load(q_ptr + node * (H * D) + row, mask=feature_mask, other=0.0) * scale"),
    "dh": block("tl.load(dh_ptr + node * (H * D) + row, mask=feature_mask, other=0.0)"),
    "h": block("tl.load(h_ptr + node * (H * D) + row, mask=feature_mask, other=0.0)"),
    "den": block("tl.load(den_ptr + node * H + heads, mask=heads < H, other=1.0)"),
    "delta": block("tl.sum(dh * h, axis=1)"),
    "dq": block("tl.zeros([H_PAD, D_PAD], dtype=tl.float32)"),
    "slots": block("first + tl.arange(0, BLOCK_E)"),
    "slot_ok": block("slots < end"),
    "tile_mask": block("slot_ok[:, None, None] & feature_mask[None, :, :]"),
    "edges": block("tl.load(edge_id_ptr + slots, mask=slot_ok, other=0)"),
    "sources": block("tl.load(row_idx_ptr + slots, mask=slot_ok, other=0)"),
    "k": block("tl.load(k_ptr + sources[:, None, None] * (H * D) + row[None, :, :], mask=tile_mask, other=0.0)"),
    "v": block("tl.load(v_ptr + sources[:, None, None] * (H * D) + row[None, :, :], mask=tile_mask, other=0.0)"),
    "e": block("tl.load(e_ptr + edges[:, None, None] * (H * D) + row[None, :, :], mask=tile_mask, other=0.0)"),
    "de_out": block("tl.load(de_out_ptr + edges[:, None, None] * (H * D) + row[None, :, :], mask=tile_mask, "
                    "other=0.0)"),
    "product": block("k * q[None, :, :]"),
    "clipped": block("tl.clamp(product, -5.0, 5.0)"),
    "logit": block("tl.sum(clipped * e, axis=2)"),
    "p": block("tl.exp(tl.clamp(logit, -5.0, 5.0)) / den[None, :]"),
    "dlogit": block("tl.where(tl.abs(logit) <= 5.0, p * (tl.sum(dh[None, :, :] * v, axis=2) - delta[None, :]), 0.0)"),
    "grad": block("de_out + dlogit[:, :, None]"),
}
# Puzzle 18's dq kernel: one window's 16 rows against one TCB's 16 gathered columns.
_P18_QUERY_WINDOW = {
    "rows": block("window * 16 + tl.arange(0, 16)"),
    "cols": block("tl.load(tcb_col_ptr + tcb * 16 + slots)"),
    "q": block("tl.load(q_ptr + rows[:, None] * D + feats[None, :], mask=(rows < N)[:, None], other=0.0)"),
    "k": block("tl.load(k_ptr + cols[:, None] * D + feats[None, :])"),
    "lse": block("tl.load(lse_ptr + rows, mask=rows < N, other=0.0)"),
}
# Puzzle 18's dk/dv kernel: one key window's 16 keys against one TCB's 16 gathered queries, tiles [16 keys, 16 queries].
_P18_KEY_WINDOW = {
    "key_window_order_ptr": param("*i32"), "key_tcb_query_ptr": param("*i32"), "key_tcb_mask_ptr": param("*i32"),
    "window": block("tl.load(key_window_order_ptr + tl.program_id(0))"),
    "keys": block("window * 16 + tl.arange(0, 16)"),
    "key_ok": block("keys < N"),
    "queries": block("tl.load(key_tcb_query_ptr + tcb * 16 + slots)"),
    "bits": block("tl.load(key_tcb_mask_ptr + tcb * 16 + slots)"),
    "q": block("tl.load(q_ptr + queries[:, None] * D + feats[None, :])"),
    "do": block("tl.load(do_ptr + queries[:, None] * D + feats[None, :])"),
    "lse": block("tl.load(lse_ptr + queries)"),
    "delta": block("tl.load(delta_ptr + queries)"),
    "scores": block("tl.dot(k, tl.trans(q)) * (scale * LOG2E)"),
    "p": block("tl.where(edge, tl.exp2(scores - lse[None, :] * LOG2E), 0.0)"),
    "ds": block("p * (tl.dot(v, tl.trans(do)) - delta[None, :])"),
    "dk": block("tl.zeros([16, D], dtype=tl.float32)"),
    "dv": block("tl.zeros([16, D], dtype=tl.float32)"),
}

# Where a snippet's name means something else than in the rest of its chapter: snippet -> {name: definition}.
SNIPPET_NAMES = {
    # puzzle 5's m is one value per row, puzzle 4's (the chapter's) a column for `x - m`
    "m_new = tl.maximum(m, tl.max(x, axis=1))": {"m": block('tl.full([B0], float("-inf"), dtype=tl.float32)')},
    # puzzle 11's accumulator is [BM, BN], puzzle 12's (the chapter's) [BQ, D]
    "acc = tl.dot(a, b, acc)": {"acc": block("tl.zeros([BM, BN], dtype=tl.float32)")},
    "tl.dot(a, b, acc)": {"acc": block("tl.zeros([BM, BN], dtype=tl.float32)")},
    # the tl.dot rules name a dot's block sizes M x K by K x N: constexprs there
    "tl.zeros([M, N], tl.float32)": {"M": constexpr(16), "N": constexpr(32)},
    # puzzle 13's scores are one window's 16 rows by one TCB's 16 slots
    'tl.where(edge, s, float("-inf"))': {"s": block("tl.zeros([16, 16], dtype=tl.float32)")},
    # chapter 5, by puzzle (the dicts above)
    "delta += tl.sum(y * dy, axis=1)": _P14_NAMES,
    "tl.store(dx_ptr + offsets, y * (dy - delta[:, None]), mask=mask)": _P14_NAMES,
    "p = tl.exp(x - lse)": _P15_NAMES,
    "if node < N:": _P16_NAMES,
    "delta = tl.sum(dh * h, axis=1)": _P16_NAMES,
    "p = tl.exp(tl.clamp(logit, -5.0, 5.0)) / den[None, :]": _P16_NAMES,
    "dlogit = tl.where(tl.abs(logit) <= 5.0, p * (tl.sum(dh[None, :, :] * v, axis=2) - delta[None, :]), 0.0)":
        _P16_NAMES,
    "grad = de_out + dlogit[:, :, None]": _P16_NAMES,
    "product = k * q[None, :, :]": _P16_NAMES,
    "clipped = tl.clamp(product, -5.0, 5.0)": _P16_NAMES,
    "logit = tl.sum(clipped * e, axis=2)": _P16_NAMES,
    "dq += tl.sum(tl.where(tl.abs(product) <= 5.0, grad * e, 0.0) * k, axis=0)": _P16_NAMES,
    "p = tl.where(edge, tl.exp2(scores - lse[:, None] * LOG2E), 0.0)": _P18_QUERY_WINDOW,
    "scores = tl.dot(k, tl.trans(q)) * (scale * LOG2E)": _P18_KEY_WINDOW,
    "p = tl.where(edge, tl.exp2(scores - lse[None, :] * LOG2E), 0.0)": _P18_KEY_WINDOW,
    "dv = tl.dot(p.to(do.dtype), do, dv)": _P18_KEY_WINDOW,
    "ds = p * (tl.dot(v, tl.trans(do)) - delta[None, :])": _P18_KEY_WINDOW,
    "dk = tl.dot(ds.to(q.dtype), q, dk)": _P18_KEY_WINDOW,
}


# -- a kernel around a snippet ---------------------------------------------------------------------------

_BUILTINS = set(dir(builtins)) | {"tl", "triton"}


def _needed(statements: list[ast.stmt], defined_here: set[str]) -> list[str]:
    """Names the statements read before assigning them (an augmented assignment reads its target too)."""
    needed, assigned = [], set(defined_here)
    for statement in statements:
        reads = [n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
        if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
            reads.append(statement.target.id)
        needed += [name for name in reads if name not in assigned and name not in _BUILTINS and name not in needed]
        assigned |= {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return needed


def _kernel_source(snippet: Snippet) -> tuple[str, dict, dict]:
    """(module source with `snippet_kernel`, its signature, its constexprs) for the snippet."""
    names = {**CHAPTER_NAMES[snippet.chapter], **SNIPPET_NAMES.get(snippet.code, {})}
    code = _completed(snippet.code)
    statements = _parse(code)
    at_module_level = snippet.code in MODULE_LEVEL
    if (len(statements) == 1 and isinstance(statements[0], ast.Expr) and isinstance(statements[0].value, ast.Call)
            and getattr(statements[0].value.func, "attr", None) in _LOOP_ITERATORS):
        code, statements = f"for _ in {code}:\n    pass", _parse(f"for _ in {code}:\n    pass")
    module_names = {n.id for s in statements for n in ast.walk(s) if isinstance(n, ast.Name)
                    and isinstance(n.ctx, ast.Store)} if at_module_level else set()
    signature, constexprs, lines, done = {}, {}, [], set()

    def define(name: str):
        if name in done:
            return
        if name not in names:
            raise KeyError(f"{snippet.where}: `{snippet.code}` reads `{name}`, which CHAPTER_NAMES"
                           f"[{snippet.chapter!r}] does not define: add it there (or to SNIPPET_NAMES), or list the "
                           "snippet in NOT_KERNEL_CODE")
        done.add(name)
        definition = names[name]
        if definition.kind == "block":
            for dependency in _needed(_parse(definition.value), set()):
                define(dependency)
            lines.append(f"{name} = {definition.value}")
        elif definition.kind == "constexpr":
            signature[name], constexprs[name] = "constexpr", definition.value
        else:
            signature[name] = definition.value

    body = [f"_read = {name}" for name in sorted(module_names)] if at_module_level else code.splitlines()
    for name in _needed(_parse("\n".join(body)), module_names):
        define(name)
    runtime = [name for name in signature if name not in constexprs]
    arguments = runtime + [f"{name}: tl.constexpr" for name in constexprs]
    source = (f"{code}\n\n" if at_module_level else "") + f"def snippet_kernel({', '.join(arguments)}):\n" + \
        textwrap.indent("\n".join(lines + body), "    ") + "\n"
    return source, {**{n: signature[n] for n in runtime}, **{n: "constexpr" for n in constexprs}}, constexprs


# -- the compiling child -----------------------------------------------------------------------------------

class _StopBeforeLLVM(Exception):
    """Raised where triton's LLVM stages would start: front end, TTIR and TTGIR are what a snippet can fail."""


def _stop_after_ttgir(backend=None, stages=None, *rest):
    """Triton's stage hook: replace the LLVM stage. Triton 3.9 also calls it with no argument, for a cache key."""
    if stages is None:
        return "-docstring-snippet-check", ""

    def stop(module, metadata):
        raise _StopBeforeLLVM()

    stages["llir"] = stop


def _compile(job: dict, index: int) -> str | None:
    """None if the job's kernel compiles for sm_90 up to TTGIR, else the compiler's message in short."""
    import linecache

    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.runtime.jit import JITFunction

    file = f"<shown snippet {index}>"
    linecache.cache[file] = (len(job["source"]), None, job["source"].splitlines(keepends=True), file)
    scope = {"tl": tl, "triton": triton}
    try:
        exec(compile(job["source"], file, "exec"), scope)
        source = ASTSource(JITFunction(scope["snippet_kernel"]), job["signature"], job["constexprs"])
        triton.compile(source, target=GPUTarget("cuda", TARGET_ARCH, 32))
    except _StopBeforeLLVM:
        return None
    except Exception as exc:  # the compiler's verdict
        cause = exc.__cause__ or exc
        return f"{type(cause).__name__}: {' '.join(str(cause).split())[:600]}"
    return "triton ran past the stage hook: the check did not stop where it should"


def _serve():
    """The child: jobs (JSON list) on stdin, one verdict per job (JSON list) on stdout."""
    import tempfile

    os.environ.pop("TRITON_INTERPRET", None)  # before triton is imported: triton.language must be the compiler's
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    with tempfile.TemporaryDirectory(prefix="docstring-snippets-") as cache:
        os.environ["TRITON_CACHE_DIR"] = cache
        import triton

        triton.knobs.runtime.add_stages_inspection_hook = _stop_after_ttgir
        jobs = json.load(sys.stdin)
        verdicts = [_compile(job, index) for index, job in enumerate(jobs)]
    print(json.dumps(verdicts))


# -- the tests ----------------------------------------------------------------------------------------------

SHOWN = _shown_code() if __name__ != "__main__" else []
KERNEL_CODE = [snippet for snippet in SHOWN if _is_kernel_code(snippet)]
# Compiled beside them, and must fail: proof that a snippet that does not compile for a GPU is caught.
CONTROL = Snippet("acc = tl.zeros([N0], dtype=tl.float32)", "01_warmup", "this test (a run-time shape)")


@pytest.fixture(scope="session")
def verdicts() -> dict[Snippet, str | None]:
    """Every kernel snippet compiled once, in one child process (session-scoped: see test_stock_interpreter.py's
    stock_run)."""
    jobs = []
    for snippet in [*KERNEL_CODE, CONTROL]:
        source, signature, constexprs = _kernel_source(snippet)
        jobs.append({"source": source, "signature": signature, "constexprs": constexprs})
    environment = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    run = subprocess.run([sys.executable, __file__], input=json.dumps(jobs), capture_output=True, text=True,
                         env=environment, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return dict(zip([*KERNEL_CODE, CONTROL], json.loads(run.stdout.strip().splitlines()[-1])))


ONE_CHILD = pytest.mark.xdist_group("docstring_snippets")  # one worker runs the fixture's child (tests/conftest.py)


@ONE_CHILD
@pytest.mark.parametrize("snippet", KERNEL_CODE, ids=lambda s: s.name)
def test_kernel_code_shown_to_the_learner_compiles_for_sm_90(snippet, verdicts):
    assert verdicts[snippet] is None, (f"{snippet.where}: `{snippet.code}` does not compile for sm_{TARGET_ARCH}: "
                                       f"{verdicts[snippet]}\n--- the kernel it was compiled in:\n"
                                       f"{_kernel_source(snippet)[0]}")


@ONE_CHILD
def test_a_snippet_that_does_not_compile_is_caught(verdicts):
    assert verdicts[CONTROL] is not None and "constexpr" in verdicts[CONTROL], verdicts[CONTROL]


def test_every_snippet_listed_as_not_kernel_code_is_still_shown():
    """A stale entry would excuse a snippet that no longer exists, and hide that its replacement is unchecked."""
    shown = {snippet.code.strip() for snippet in SHOWN}
    assert not [code for code in NOT_KERNEL_CODE if code not in shown]
    assert not [code for code in {*MODULE_LEVEL, *SNIPPET_NAMES} if code not in shown]


def test_the_check_finds_the_hints_it_is_about():
    """The extraction works: the block initial values the hints teach are among the snippets compiled."""
    compiled = {(snippet.chapter, snippet.code) for snippet in KERNEL_CODE}
    assert ("02_softmax_and_attention", 'tl.full([B0], float("-inf"), dtype=tl.float32)') in compiled
    assert ("04_tensor_cores", 'm = tl.full([BQ], float("-inf"), tl.float32)') in compiled
    assert any("\n" in snippet.code for snippet in KERNEL_CODE), "the ```python blocks are missing"


if __name__ == "__main__":
    _serve()
