"""Facts read from the text of a kernel's TTIR (Triton's first IR), each op's ``loc(...)`` mapped back to the
learner's file and line: the tl.dot lines that survive compilation, tl.dot operands wider than 16 bits, sums kept in
16 bits, and int32 offsets scaled by a kernel argument; and from the sm_90 TTGIR, the loads made asynchronous.

Plain text, no triton: the compile helper (``grader.worker.compile_helper``) reads the sm_90 TTIR of each compile
(``dot_lines_in``, ``int32_offsets``) and its TTGIR (``async_load_lines``), and a native run reads the TTIR of the
kernels that ran, where the interpreter's hook cannot look (``sums_in_16_bits`` in ``grader.worker.execute``,
``wide_dot_operands`` in ``grader.worker.launcher_guard``).
"""

from __future__ import annotations

import re


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


def dot_lines_in(ttir: str) -> list[tuple[str, int]]:
    """(file, line) of each tt.dot in TTIR, through its loc(...) and the #loc aliases."""
    resolve = _resolver(ttir)
    lines = []
    for op in re.findall(r"= tt\.dot .*loc\((.*)\)\s*$", ttir, re.MULTILINE):
        found = resolve(op)
        if found:
            lines.append(found)
    return sorted(set(lines))


# The loads the sm_90 TTGIR makes asynchronous: cp.async copies the software pipeliner issues iterations ahead (a loop
# with num_stages, a tl.dot operand in a loop), and the copy engine's (TMA) copies of descriptor loads. Same names in
# triton 3.6 and 3.9; a TMA copy may have no result.
_ASYNC_LOAD = re.compile(r"^\s*(?:%[\w.#:]+ = )?(?:ttg\.async_copy_global_to_local|ttng\.async_tma_copy_global_to_local"
                         r"|ttng\.async_tma_gather) .*loc\((.*)\)\s*$", re.MULTILINE)


def async_load_lines(ttgir: str) -> list[tuple[str, int]]:
    """(file, line) of each load the GPU compiler made asynchronous in TTGIR (``_ASYNC_LOAD``), through its
    loc(...) and the #loc aliases: on a GPU such a load may run before a store that precedes it in the kernel."""
    resolve = _resolver(ttgir)
    return sorted({found for found in map(resolve, _ASYNC_LOAD.findall(ttgir)) if found})


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
