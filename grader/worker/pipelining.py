"""Loads the GPU compiler makes asynchronous, one concern of the access record: a load that reads what the same
launch stored before it.

On sm_90 triton's software pipeliner turns the loads of a loop with `num_stages` (and a tl.dot's operands, in any
loop) into asynchronous copies (cp.async) issued one or more iterations ahead, before the stores of the iterations
between; it does not check whether a load and a store of the loop touch the same memory. A descriptor load runs on
the copy engine (TMA), which does not see the kernel's own plain stores without a fence. So such a load of an
element the launch stored (or updated with an atomic) before it may read the value from before that store: a
running sum kept in the output (`acc = tl.load(z); tl.store(z, acc + ...)` in a pipelined loop) loses most of its
terms on a GPU, while the interpreter runs every step in order and gets it right.

The record notes, per launch, each kernel line whose plain load read an element this launch had stored or updated
atomically before (``note_load``, from Recorder._count: cheap, as a launch's stores are already kept per element for
the race checks, and the line is looked up only on such a load). Once the case's kernels compiled, ``stale_load``
refuses the case where one of those lines is a load the sm_90 compile made asynchronous
(``gpu_compile.pipelined_lines``, read from its TTGIR by ``ttir.async_load_lines``), matched by statement, so a load
written over several lines is still found.

The check compiles without the divisibility hints a GPU launch adds (gpu_compile._run_time_numbers), so it knows
no pointer or stride to be 16-byte aligned and vectorizes no load; a copy of one lane's 4 bytes or more is pipelined
all the same, but a 16-bit load of one element per lane is not, where a GPU would pipeline it as 16-byte vectors.
Every output is float32 and an input may not be written, so 16-bit data a launch stored is a float32 output read
as halves: contiguous halves belong to two lanes' float32 elements, and the final store of one lane over what the
other loaded is a race (races._check_lane_reads) unless a tl.debug_barrier() separates them, which also stops the
pipelining (review 22 of the eleventh session; its probe compiled both ways: no asynchronous load either way).
"""

from __future__ import annotations

import ast
import functools
import linecache

import numpy as np

from grader.paths import location
from grader.worker.frames import _learner_frames


def note_load(recorder, region, elements: np.ndarray) -> None:
    """A plain load of `elements` of `region` (Recorder._count): where this launch stored or atomically updated any
    of them before, note the load's kernel line for the launch running (the first such load of each line)."""
    stored, updated = recorder._stored_by.get(region), recorder._atomic_by.get(region)
    if stored is None and updated is None:
        return
    by = np.full(elements.size, -1, dtype=np.int64)
    if updated is not None:
        by = np.maximum(by, updated[1, elements])
    if stored is not None:
        by = np.maximum(by, stored[elements])
    hit = np.flatnonzero(by >= 0)
    if not hit.size or not recorder.launches:
        return
    frame = next(_learner_frames(), None)
    if frame is None:
        return
    key = (frame.f_code.co_filename, frame.f_lineno)
    notes = recorder.reloads.setdefault(len(recorder.launches) - 1, {})
    if key not in notes:
        writer = recorder._programs_of_launch[int(by[hit[0]])]
        code = linecache.getline(key[0], key[1]).strip()
        notes[key] = (region, int(elements[hit[0]]), writer, recorder.program, code)


def stale_load(recorder, pipelined_lines) -> str | None:
    """The report of the first noted load (``note_load``) that the sm_90 compile of its launch made asynchronous,
    or None. `pipelined_lines`: gpu_compile.pipelined_lines (a launch's asynchronous loads, or None if unknown)."""
    for index, notes in sorted(getattr(recorder, "reloads", {}).items()):
        asynchronous = pipelined_lines(recorder.launches[index]) if index < len(recorder.launches) else None
        if not asynchronous:
            continue
        for (file, line), note in notes.items():
            first, last = _statement(file, line)
            if any(f == file and first <= at <= last for f, at in asynchronous):
                return _message(recorder.launches[index].name, location(file, line), *note)
    return None


def _message(kernel: str, where: str, region, element: int, writer: tuple, reader: tuple, code: str) -> str:
    who = "it" if writer == reader else f"program {writer}"
    return (f"{kernel} loads {region.element(element)}, which {who} stored in the same launch before this load, and "
            "the GPU compiler makes this load asynchronous: the software pipeliner issues it one or more iterations "
            "ahead (the loop's num_stages, or a tl.dot operand in a loop), or the copy engine runs it (a "
            "descriptor), without checking that an earlier store writes the same memory. On a GPU it may run before "
            "that store and read the old value; the interpreter runs every step in order. Keep a running value in a "
            "register (a loop-carried variable, stored once after the loop), load only tensors this launch does "
            f"not write, or drop num_stages from the loop\n  at {where}: {code}")


def _statement(file: str, line: int) -> tuple[int, int]:
    """The lines of the innermost statement holding `line` in `file` (a compound statement's header alone), so that
    the interpreter's line of a call written over several lines and the compiler's line of its load meet."""
    for first, last in _statements("".join(linecache.getlines(file))):
        if first <= line <= last:
            return first, last
    return line, line


@functools.lru_cache(maxsize=32)
def _statements(source: str) -> tuple[tuple[int, int], ...]:
    """Every statement's (first line, last line), a compound statement's header alone; the shortest first."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ()
    spans = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            body = getattr(node, "body", None)
            last = body[0].lineno - 1 if isinstance(body, list) and body else node.end_lineno
            spans.add((node.lineno, max(node.lineno, last)))
    return tuple(sorted(spans, key=lambda span: (span[1] - span[0], span)))
