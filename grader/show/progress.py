"""The progress table, read from a small cache that grading writes (``.grader/results.json``).

A cached result counts only while the graded file is unchanged (same SHA-256). A puzzle file
that is still exactly its stub is "not started" without being graded.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from grader.course import index
from grader.course.stubs import make_stub
from grader.paths import ROOT, source_path

if TYPE_CHECKING:  # the table is drawn without importing torch (grader.show.quick)
    from grader.judge.verdict import PuzzleResult

# GRADER_RESULTS moves the cache, so the repository's own tests leave a learner's progress alone.
CACHE = Path(os.environ.get("GRADER_RESULTS", ROOT / ".grader" / "results.json"))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _load() -> dict:
    try:
        return json.loads(CACHE.read_text())
    except (OSError, ValueError):
        return {}


def record(results: list[PuzzleResult], impl: str) -> None:
    """Remember results graded from puzzles/ or solutions/ (never from --file)."""
    cache = _load()
    entries = cache.setdefault(impl, {})
    for result in results:
        path = source_path(index.find(result.puzzle), impl)
        if path.is_file():
            entries[str(result.puzzle)] = {"status": result.status, "seed": result.seed, "mode": result.mode,
                                           "sha256": _sha(path.read_text()), "graded": time.strftime("%Y-%m-%d %H:%M")}
    try:
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        CACHE.write_text(json.dumps(cache, indent=1))
    except OSError:
        pass  # a read-only checkout still grades; it just does not remember


def _stub_or_none(puzzle) -> str | None:
    """The puzzle's stub, made from its solution; None where the solution is missing or its markers are broken
    (someone editing solutions/), so the table still shows every other puzzle."""
    try:
        return make_stub((ROOT / "solutions" / f"{puzzle.module}.py").read_text(), puzzle.number)
    except (OSError, ValueError):
        return None


def rows(impl: str) -> list[tuple[int, str, str, str]]:
    entries = _load().get(impl, {})
    table = []
    for puzzle in index.entries():
        path = source_path(puzzle, impl)
        text = path.read_text() if path.is_file() else ""
        entry = entries.get(str(puzzle.number))
        if entry and entry["sha256"] == _sha(text):
            status = entry["status"]
        elif impl == "puzzles" and text and text == _stub_or_none(puzzle):
            status = "not_started"
        else:
            status = f"changed:{entry['status']}" if entry else "ungraded"
        table.append((puzzle.number, puzzle.slug, puzzle.title, status))
    return table
