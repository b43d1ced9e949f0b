"""The progress table, read from a small cache that grading writes (``.grader/results.json``).

A cached result counts only while the graded file is unchanged (same SHA-256). A puzzle file
that is still exactly its stub is "not started" without being graded. Only a grading under the puzzle's own
launcher counts as solved: a pass with ``--own-launcher`` (practice, ``PuzzleResult.trusted`` false) shows as
"practice pass", and never replaces a result graded under the puzzle's launcher for the same file.
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
        if not path.is_file():
            continue
        sha, before = _sha(path.read_text()), entries.get(str(result.puzzle))
        if not result.trusted and before and before["sha256"] == sha and before.get("trusted", True):
            continue  # practice never replaces a grading of this very file under the puzzle's launcher
        entries[str(result.puzzle)] = {"status": result.status, "seed": result.seed, "mode": result.mode,
                                       "trusted": result.trusted, "sha256": sha,
                                       "graded": time.strftime("%Y-%m-%d %H:%M")}
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


def _status(entry: dict) -> str:
    """The entry's status key; a pass under the learner's own launcher is "practice", which is not solved."""
    if entry["status"] == "passed" and entry.get("trusted") is False:
        return "practice"
    return entry["status"]


def rows(impl: str) -> list[tuple[int, str, str, str]]:
    entries = _load().get(impl, {})
    table = []
    for puzzle in index.entries():
        path = source_path(puzzle, impl)
        text = path.read_text() if path.is_file() else ""
        entry = entries.get(str(puzzle.number))
        if entry and entry["sha256"] == _sha(text):
            status = _status(entry)
        elif impl == "puzzles" and text and text == _stub_or_none(puzzle):
            status = "not_started"
        else:
            status = f"changed:{_status(entry)}" if entry else "ungraded"
        table.append((puzzle.number, puzzle.slug, puzzle.title, status))
    return table
