"""The chapter modules (grader/course/chapters/) and the index built from them: every puzzle defined once, in its
chapter, with hints that are named checks, and benchmark settings for each slug.

Run: `python -m pytest tests/test_chapters.py -q`.
"""

import pytest

from grader.course import registry
from grader.course.chapters import backward, softmax, sparse_graphs, tensor_cores, warmup
from grader.course.puzzle import Hint

CHAPTERS = (warmup, softmax, sparse_graphs, tensor_cores, backward)


def test_the_index_is_the_chapters_in_order():
    assert registry.PUZZLES == tuple(p for chapter in CHAPTERS for p in chapter.PUZZLES)
    for chapter in CHAPTERS:
        assert {p.notebook for p in chapter.PUZZLES} == {chapter.NOTEBOOK}, chapter.__name__


@pytest.mark.parametrize("puzzle", registry.PUZZLES, ids=lambda p: p.module)
def test_every_hint_is_a_named_check_that_says_what_it_checks(puzzle):
    names = [hint.name for hint in puzzle.hints]
    assert len(set(names)) == len(names), f"two hints of puzzle {puzzle.number} share a name"
    for hint in puzzle.hints:
        assert isinstance(hint, Hint)
        assert hint.check.__name__ != "<lambda>", f"{hint.name}: a check is a named function"
        assert (hint.check.__doc__ or "").startswith("Check "), f"{hint.name}: its docstring says what it checks"
        assert hint.text and hint.text == hint.text.strip()


def test_benchmark_settings_are_by_slug():
    from grader.bench.settings import BENCHES

    assert set(BENCHES) == set(registry.BY_SLUG)


def test_puzzle_4s_cases_speak_of_what_it_has():
    """Puzzles 4 and 5 share their cases; puzzle 4 (three passes) has no running max, so no m_new."""
    texts = [case.about + case.name for case in registry.find(4).cases]
    assert not [text for text in texts if "m_new" in text]
