"""The chapter modules (grader/course/chapters/) and the index built from them: every puzzle defined once, in its
chapter, with hints that are named checks, and benchmark settings for each slug.

Run: `python -m pytest tests/test_chapters.py -q`.
"""

import pytest

from grader.course import registry
from grader.course.cases import make_inputs
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


# The row each loop-over-blocks puzzle walks, and the block it walks it by (issue 26, class 3).
LOOPED = {3: [("T", "B1")], 4: [("T", "B1")], 5: [("T", "B1")], 6: [("T", "B1")], 11: [("K", "BK")], 12: [("T", "BK")],
          14: [("T", "B1")], 15: [("V", "BLOCK_V")], 17: [("T", "BK"), ("N", "BQ")]}


def _longest_lists(puzzle) -> dict[str, tuple[int, int]]:
    """Per list pointer of a graph puzzle's inputs (col_ptr, out_ptr, window_ptr, ...): the most blocks one list
    took in any case (a list of TCBs is walked one TCB at a time; edges BLOCK_E at a time), and that case's block."""
    longest = {}
    for case in puzzle.cases:
        if case.graph is None:
            continue
        inputs, _ = make_inputs(puzzle.spec, case, 0)
        block = case.blocks.get("BLOCK_E", 1)
        for name in (name for name in inputs if name.endswith("_ptr")):
            blocks = -(-int(inputs[name].diff().max()) // block) if inputs[name].numel() > 1 else 0
            longest[name] = max(longest.get(name, (0, 0)), (blocks, -block))
    return longest


@pytest.mark.parametrize("puzzle", [p for p in registry.PUZZLES if any(c.graph for c in p.cases)],
                         ids=lambda p: p.module)
def test_every_walk_over_a_graphs_lists_has_a_case_of_at_least_64_blocks(puzzle):
    """A loop over a node's edges (or a window's TCBs) capped just past the longest list the cases hold, or a few
    TCBs taken as one tile, is right on every case; a list of 64 blocks or more, of small blocks, makes it wrong (the
    fifteenth review: puzzles 13, 16 and 18 had lists of 5 to 7)."""
    for name, (blocks, minus_block) in _longest_lists(puzzle).items():
        assert blocks >= 64 and -minus_block <= 16, f"puzzle {puzzle.number}: {name}'s longest list is {blocks} blocks"


@pytest.mark.parametrize("number", sorted(LOOPED))
def test_every_loop_over_blocks_has_a_case_of_at_least_64_blocks_per_row(number):
    """A kernel holding a whole row in a dozen separate tiles (reading it once) is right on every row shorter than
    its tiles: a case of 64 blocks or more per row, of small blocks, makes it wrong (the interpreter stays fast)."""
    puzzle = registry.PUZZLES[number - 1]
    for size, block in LOOPED[number]:
        longest = max(-(-case.dims[size] // case.blocks[block]) for case in puzzle.cases)
        assert longest >= 64, f"puzzle {number}: at most {longest} blocks of {block} along {size}"
        assert any(-(-case.dims[size] // case.blocks[block]) >= 64 and case.blocks[block] <= 16
                   for case in puzzle.cases), f"puzzle {number}: no case of 64 small blocks along {size}"
