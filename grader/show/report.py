"""Turn grading results into text for people; ``--json`` output is ``PuzzleResult.to_json``.

Every report passes through ``safe_output.clean_text``: a submission's messages, source lines and file
name cannot move the cursor, recolour the terminal, or crash the printing with a lone surrogate.
"""

from __future__ import annotations

import itertools
import re
import sys
import textwrap
from collections.abc import Mapping
from typing import TYPE_CHECKING

from grader import coach as coaching
from grader.safe_output import clean_text, one_line

if TYPE_CHECKING:  # the report of a stub is made without importing torch (grader.show.quick)
    from grader.judge.verdict import CaseResult, PuzzleResult


def _marks():
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower()
    return ("✓", "✗", "★") if "utf" in encoding else ("ok", "XX", "*")


def accesses_line(case: CaseResult, per: Mapping[str, str] | None = None) -> str:
    """'x read 2.0x, z written 1.0x'. A tensor whose budget is per program or per edge shows that rate."""
    per = per or {}
    units = {"program": case.programs, "edge": case.dims.get("E", 0) / max(case.dims.get("N", 1), 1)}
    parts = []
    for row in case.accesses:
        unit = per.get(row["name"])
        if row["read"] and unit in units and units[unit]:
            parts.append(f"{row['name']} read {row['read'] / units[unit]:.1f}x per {unit}")
        elif row["read"]:
            parts.append(f"{row['name']} read {row['read']:.1f}x")
        if row["written"]:
            parts.append(f"{row['name']} written {row['written']:.1f}x")
        if row["atomics"]:
            parts.append(f"{row['name']} {row['atomics']} atomics")
    return ", ".join(parts)


def sizes_text(dims: Mapping) -> str:
    """A case's sizes as "N=100, T=130, scale=0.1768": a float to four digits."""
    return ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in dims.items())


def _where(case: CaseResult) -> str:
    shape = sizes_text(case.dims)
    blocks = ", ".join(f"{k}={v}" for k, v in case.blocks.items())
    return f"{shape}; {blocks}" if blocks else shape


def _case_line(case: CaseResult, mark: str, per_program: Mapping[str, str], widths: tuple[int, int]) -> str:
    line = f"  {mark} {case.name:<{widths[0]}} {_where(case):<{widths[1]}}"
    if case.passed and case.accesses:
        line += f"  {accesses_line(case, per_program)}"
    return line.rstrip()


def _details(case: CaseResult, per_program: Mapping[str, str]) -> list[str]:
    lines = [f"      this case: {case.about}"] if case.about else []
    lines += [f"      {line}" for line in clean_text(case.message).splitlines()]
    if case.accesses:
        lines.append(f"      accesses: {accesses_line(case, per_program)}")
    if case.hint:
        lines.append(f"      hint: {clean_text(case.hint)}")
    return lines


def _shape_of(message: str | None) -> str:
    """A message with its numbers blanked: failures that differ only in sizes or counts read as the same."""
    return re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "#", message or "")


def format_result(result: PuzzleResult, rerun: str, replay: str, verbose: bool = False,
                  more: str = "-v shows every failure in full", coach: bool = False) -> str:
    """The first failing case in full, later ones in a line each (all in full when verbose); after a solved
    puzzle (or a failed one, with `coach`), the performance coach.

    `rerun` grades again with fresh cases, `replay` with the same seed; `more` says how to see
    every failure in full, in the caller's terms. Each message is capped; the whole text is cleaned.
    """
    text = _format_result(result, rerun, replay, verbose, more)
    if result.status == "passed" or (coach and result.status == "failed"):
        text += "".join(f"\n{line}" for line in _coach_lines(result))
    return clean_text(text, limit=None)


def _coach_lines(result: PuzzleResult) -> list[str]:
    """The coach on the case it chose, each line wrapped; one line saying it needs the interpreter natively."""
    from grader.course.registry import BY_NUMBER

    found = coaching.chosen(result.cases)
    if found is None:
        return [f"  {coaching.NEEDS_INTERPRETER}"] if result.mode == "native" else []
    case, figures = found
    verdict = "" if case.passed else ", which failed"
    lines = [f"  coach, on case {case.name!r} ({_where(case)}{verdict}):"]
    for line in coaching.advice(figures, BY_NUMBER[result.puzzle]):
        lines += textwrap.wrap(line, TABLE_WIDTH, initial_indent="    - ", subsequent_indent="      ")
    return lines


def header_lines(number: int, title: str, source: str, notices: list[str], trusted: bool = True) -> list[str]:
    """A puzzle report's first lines: which puzzle and file, the practice line, the notes."""
    lines = [f"Puzzle {number}: {title}   ({source})"]
    if not trusted:
        lines.append(f"  practice: {PRACTICE}")
    return lines + [f"  note: {clean_text(one_line(n), NOTICE_LIMIT)}" for n in notices[:MAX_NOTICES]]


def not_started_lines(message: str, source: str, rerun: str) -> list[str]:
    return [f"  not started: {clean_text(message)}", f"  Write your kernel in {source}, then run: {rerun}"]


def _format_result(result: PuzzleResult, rerun: str, replay: str, verbose: bool, more: str) -> str:
    from grader.course.registry import BY_NUMBER

    ok, bad, star = _marks()
    puzzle = BY_NUMBER[result.puzzle]
    per_program = {b.arg: b.per for b in puzzle.budgets if getattr(b, "per", "all") != "all"}
    lines = header_lines(result.puzzle, puzzle.title, result.source, result.notices, result.trusted)
    if result.status == "not_started":
        return "\n".join(lines + not_started_lines(result.cases[-1].message, result.source, rerun))
    shown, same, first_message, first_hint = 0, 0, None, None
    widths = (max(len(c.name) for c in result.cases), max(len(_where(c)) for c in result.cases))
    for case in result.cases:
        skipped = case.reason == "skipped" and result.status == "passed"
        lines.append(_case_line(case, "-" if skipped else ok if case.passed else bad, per_program, widths))
        if skipped:
            lines.append(f"      {case.message}")
        if case.passed or skipped:
            continue
        if shown == 0 or verbose:
            lines += _details(case, per_program)
            first_message = first_message or case.message
            first_hint = first_hint or case.hint
        elif _shape_of(case.message) == _shape_of(first_message):
            same += 1
        else:  # in short: what the case is about (often the clue), its first line, and a hint not given yet
            lines += [f"      this case: {case.about}"] if case.about else []
            lines += [f"      {clean_text(case.message).splitlines()[0]}"] if case.message else []
            lines += [f"      hint: {case.hint}"] if case.hint and case.hint != first_hint else []
        shown += 1
    passed = sum(c.passed for c in result.cases)
    total = len(puzzle.cases)
    # a risk no case shows (int32 offsets past 2**31 elements): said once, passed or not
    warned = next((c.message[c.message.index("warning:"):] for c in result.cases
                   if c.passed and "warning:" in c.message), "")
    lines += [f"  {line}" for line in clean_text(warned).splitlines()]
    if result.status == "passed":
        following = BY_NUMBER.get(result.puzzle + 1)
        nxt = f" Next: puzzle {following.number}, {following.title}." if following else " That was the last one."
        skips = sum(c.reason == "skipped" for c in result.cases)
        cases = f"{total - skips} of {total} cases pass, {skips} skipped" if skips else f"all {total} cases pass"
        lines.append(f"  {star} Solved: {cases} ({result.mode}).{nxt}")
    elif [c.name for c in result.cases] in (["import"], ["startup"]):
        lines.append(f"  Fix that, then run: {rerun}")
    else:
        if same:
            lines.append(f"  {same} more case{'s' if same > 1 else ''} failed with the same message as the first.")
        see = f" ({more})" if shown > 1 and not verbose else ""
        lines.append(f"  {passed} of {total} cases pass ({result.mode}){see}. Seed {result.seed}; replay: {replay}")
    return "\n".join(lines)


PRACTICE = ("your own launcher was graded, and its checks ran in your own process: a classroom grades your kernels "
            "alone, under the puzzle's launcher (python -m grader N)")
MAX_NOTICES, NOTICE_LIMIT = 8, 400  # notes shown per puzzle, and characters per note


STATUS_WORDS = {"passed": "passed", "failed": "failed", "not_started": "not started",
                "ungraded": "not graded yet", "practice": "practice pass"}  # practice: passed under --own-launcher


def _status_words(status: str) -> str:
    """'passed', or 'changed since graded (was passed)' for a file edited after its last grade."""
    if status.startswith("changed:"):
        return f"changed since graded (was {STATUS_WORDS[status.split(':', 1)[1]]})"
    return STATUS_WORDS[status]


TABLE_WIDTH = 100  # the progress table fits a terminal this wide, half a laptop screen beside an editor


def format_table(rows: list[tuple[int, str, str, str]], where: str) -> str:
    """rows of (number, slug, title, status key); see progress.rows.

    The slug and title columns are as wide as their longest entry, as long as that leaves room for the usual
    statuses ("not graded yet") within TABLE_WIDTH; a title longer than that would wrap. A rarer, longer status
    ("changed since graded (was not started)") wraps within the status column. Text wraps at spaces."""
    slug_width = max(len("puzzle"), *(len(slug) for _, slug, _, _ in rows))
    prefix = f"  {'':>2}  {'':<{slug_width}}  "  # two spaces between columns
    usual_status = max(len(_status_words(key)) for key in STATUS_WORDS)
    title_width = min(max(len(title) for _, _, title, _ in rows), TABLE_WIDTH - len(prefix) - 2 - usual_status)
    status_width = TABLE_WIDTH - len(prefix) - title_width - 2
    lines = [f"Triton Attention Puzzles: progress in {where}/", "",
             f"  {'#':>2}  {'puzzle':<{slug_width}}  {'title':<{title_width}}  status"]
    for number, slug, title, status in rows:
        titles = textwrap.wrap(title, title_width) or [""]
        statuses = textwrap.wrap(_status_words(status), status_width)
        for index, (title_part, status_part) in enumerate(itertools.zip_longest(titles, statuses, fillvalue="")):
            start = f"  {number:>2}  {slug:<{slug_width}}  " if index == 0 else prefix
            lines.append(f"{start}{title_part:<{title_width}}  {status_part}".rstrip())
    done = sum(status == "passed" for *_, status in rows)
    todo = next((number for number, *_, status in rows if status != "passed"), None)
    lines.append("")
    lines.append(f"  {done} of {len(rows)} passed." + (f" Next: python -m grader {todo}" if todo else " All solved!"))
    practised = [str(number) for number, *_, status in rows if status.endswith("practice")]
    if practised:
        lines += textwrap.wrap(f"A practice pass ({', '.join(practised)}) graded your own launcher (--own-launcher) "
                               "and is not solved: python -m grader N grades the file under the puzzle's launcher.",
                               TABLE_WIDTH, initial_indent="  ", subsequent_indent="  ")
    return "\n".join(lines)


def format_summary(results: list[PuzzleResult]) -> str:
    """One closing line when several puzzles were graded."""
    passed = [r.puzzle for r in results if r.status == "passed"]
    others = ", ".join(f"{r.puzzle} ({r.status.replace('_', ' ')})" for r in results if r.status != "passed")
    return f"{len(passed)} of {len(results)} puzzles passed." + (f" Not yet: {others}." if others else "")
