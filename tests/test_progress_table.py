"""The progress table fits every title in 100 columns, wrapping only what cannot fit (issue 12)."""

import pytest

from grader.course import registry
from grader.show import report

ROWS = [(p.number, p.slug, p.title, "ungraded") for p in registry.PUZZLES]
LONGEST_STATUS = "changed:not_started"  # "changed since graded (was not started)"


def _table_rows(text: str) -> list[str]:
    """The table's lines, from its header to the blank line before the summary."""
    lines = text.splitlines()
    return lines[2:lines.index("", 2)]


@pytest.mark.parametrize("status", ["passed", "failed", "not_started", "ungraded", LONGEST_STATUS])
def test_every_line_fits_in_100_columns(status):
    text = report.format_table([row[:3] + (status,) for row in ROWS], "puzzles")
    assert max(len(line) for line in text.splitlines()) <= report.TABLE_WIDTH, text


def test_every_title_stands_whole_on_its_row_with_the_statuses_in_one_column():
    lines = _table_rows(report.format_table(ROWS, "puzzles"))
    header, rows = lines[0], lines[1:]
    assert len(rows) == len(registry.PUZZLES), "a title wrapped"
    for (_, slug, title, _), line in zip(ROWS, rows):
        assert f" {slug} " in line and f" {title} " in line, line
        assert line.index("not graded yet") == header.index("status"), line


def _lines_of(lines: list[str], number: int) -> list[str]:
    """Puzzle `number`'s row and the wrapped lines under it."""
    first = next(i for i, line in enumerate(lines) if line.startswith(f"  {number:>2}  "))
    rest = next((i for i in range(first + 1, len(lines)) if lines[i][:4].strip()), len(lines))
    return lines[first:rest]


def test_a_long_status_wraps_in_its_own_column_and_leaves_the_titles_whole():
    rows = [ROWS[0][:3] + (LONGEST_STATUS,), *ROWS[1:]]
    lines = _table_rows(report.format_table(rows, "puzzles"))
    status_column = lines[0].index("status")
    first_row = _lines_of(lines, 1)
    assert len(first_row) > 1 and all(line[status_column - 1] == " " for line in first_row), lines
    assert " ".join(line[status_column:] for line in first_row) == "changed since graded (was not started)"
    assert f" {ROWS[0][2]} " in first_row[0]


def test_a_title_too_long_for_the_row_wraps_at_spaces_under_its_column():
    long_title = ("A very long title " * 6).strip()
    lines = _table_rows(report.format_table([(14, "long_one", long_title, "passed"), *ROWS], "puzzles"))
    title_column = lines[0].index("title")
    wrapped = _lines_of(lines, 14)
    assert len(wrapped) > 1 and all(len(line) <= report.TABLE_WIDTH for line in wrapped)
    assert all(line[:title_column].strip() == "" for line in wrapped[1:])
    assert " ".join(line[title_column:].split("  ")[0] for line in wrapped) == long_title


# -- issue 26, class 9: practice must not count as solved ----------------------------------------------------------

def _graded(number: int, status: str, trusted: bool):
    from types import SimpleNamespace

    return SimpleNamespace(puzzle=number, status=status, seed=1, mode="interpret", trusted=trusted)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    from grader.show import progress

    monkeypatch.setattr(progress, "CACHE", tmp_path / "results.json")
    return progress


def _status_of(progress, number: int) -> str:
    return next(status for n, *_, status in progress.rows("solutions") if n == number)


def test_a_pass_under_the_learners_own_launcher_is_a_practice_pass_not_solved(cache):
    cache.record([_graded(1, "passed", trusted=False)], "solutions")
    assert _status_of(cache, 1) == "practice"
    text = report.format_table(cache.rows("solutions"), "solutions")
    assert "practice pass" in text and "0 of 18 passed" in text, text
    assert "A practice pass (1) graded your own launcher" in text, text
    assert max(len(line) for line in text.splitlines()) <= report.TABLE_WIDTH, text


def test_only_a_grading_under_the_puzzles_launcher_counts_as_passed(cache):
    cache.record([_graded(1, "passed", trusted=True)], "solutions")
    assert _status_of(cache, 1) == "passed"
    assert "1 of 18 passed" in report.format_table(cache.rows("solutions"), "solutions")


def test_practice_never_replaces_a_grading_of_the_same_file_under_the_puzzles_launcher(cache):
    cache.record([_graded(2, "failed", trusted=True)], "solutions")
    cache.record([_graded(2, "passed", trusted=False)], "solutions")
    assert _status_of(cache, 2) == "failed"
    cache.record([_graded(2, "passed", trusted=True)], "solutions")
    assert _status_of(cache, 2) == "passed"
