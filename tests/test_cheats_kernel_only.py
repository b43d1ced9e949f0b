"""Every cheat in tests/kernels/cheating/ (and helpers.COPIED_CHEATS, a solution with one edit) fails kernel-only
grading, where no Python of the submission runs.

The cheats there are Python: a launcher that computes in PyTorch or numpy, forges events or reads the grader's
frames; module-level code that patches the judge, forks a daemon or edits the grader's files.
tests/test_launcher_guard.py, test_isolation.py and test_map_isolation.py hold them on the practice path
(`--own-launcher`), where they run. Here each is graded as a classroom grades it, by its kernels alone:

- rewritten as such a cheat must be now, with the puzzle's kernel names and kernels that store nothing (the trick
  must do the work): it fails, and the report names the code it left out ("your launcher differs from the
  puzzle's", "not run: the code of ... outside its kernels");
- as it is: a file without the puzzle's kernels is refused before anything runs; one with them (a right kernel
  beside the trick) is graded on its kernels alone, and the trick leaves no trace.
"""

import ast
import json
import shutil
from pathlib import Path

import pytest
from expected_verdicts import EXPECTED
from helpers import (
    COPIED_CHEATS,
    KERNELS,
    ROOT,
    cheat_file,
    cheat_names,
    failed_case,
    grade_file,
    grade_text,
    lesson_text,
    report,
    requires_interpreter,
    run_cli,
    run_in_scratch_repository,
)

from grader.course import registry
from grader.judge import submission

pytestmark = requires_interpreter

CHEATING = KERNELS / "cheating"
# Cheats in the kernel itself: tests/test_gpu_compile.py rejects the first, the test below the next two, and
# tests/test_expected_verdicts.py those in tests/expected_verdicts.py
IN_THE_KERNEL = {"p11_dots_of_zeros.py", "p05_square_tile.py", "p05_flat_square_tile.py"} | \
    {Path(path).name for path in EXPECTED if path.startswith("cheating/")}
CHEATS = [name for name in cheat_names() if name not in IN_THE_KERNEL]
LEFT_OUT = ("your launcher differs from the puzzle's", "not run: the code of ")


def _puzzle(name: str):
    return registry.find(int(name[1:3]))


def _jit_names(text: str) -> set[str]:
    return set(submission.read_parts(ast.parse(text), text).jit)


def with_idle_kernels(text: str, puzzle) -> str:
    """The file with its @triton.jit functions replaced by the puzzle's kernels (the stub's, with signatures and
    all) whose body stores nothing: everything else of the file, launcher and module-level code, is kept."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    for node in sorted(submission.read_parts(tree, text).jit.values(), key=lambda n: -n.lineno):
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        del lines[first - 1:node.end_lineno]
    given = submission.puzzle_given(puzzle.number)
    for name in given.kernels:
        node = given.parts.jit[name]
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        kernel = "".join(line + "\n" for line in given.parts.lines[first - 1:node.end_lineno])
        assert kernel.endswith("    pass\n"), f"puzzle {puzzle.number}'s stub kernel {name} no longer ends in pass"
        lines.append("\n\n" + kernel[:-len("    pass\n")] + "    tl.program_id(0)  # stores nothing\n")
    return "".join(lines)


@pytest.mark.parametrize("name", CHEATS)
def test_the_cheat_with_the_puzzles_kernel_names_fails_and_its_trick_is_named(name, tmp_path):
    puzzle = _puzzle(name)
    text = with_idle_kernels(cheat_file(name).read_text(), puzzle)
    result = grade_text(puzzle, text, tmp_path)
    assert result.status in {"failed", "not_started"}, report(result)
    assert failed_case(result).reason in {"not_started", "never_written"}, report(result)
    assert any(note.startswith(LEFT_OUT) for note in result.notices), result.notices
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{puzzle.module}_under_test.py"], "the trick left a trace"


WITHOUT_THE_KERNELS = [name for name in CHEATS
                       if not set(submission.puzzle_given(_puzzle(name).number).kernels) <=
                       _jit_names(cheat_file(name).read_text())]
WITH_THE_KERNELS = [name for name in CHEATS if name not in WITHOUT_THE_KERNELS]


@pytest.mark.parametrize("name", WITHOUT_THE_KERNELS)
def test_the_cheat_as_it_is_is_refused_for_its_kernel_names(name):
    (case,) = grade_file(_puzzle(name), cheat_file(name)).cases
    assert case.reason == "error" and "defines no @triton.jit function" in case.message, case.message


# The verdict each file with the puzzle's kernels earns on its kernels alone.
# Its kernel adds x twice; the others' kernels are cheats themselves, which the budget checks catch: a row read as
# int64 pairs or through atomic_add(x, 0) is still a third pass over x (bytes counted); a whole row in one block is
# a tile wider than every block the launcher gives; a tl.dot multiplied by zero, overwritten or cancelled is dead
# work. Issue 26's: a row in a dozen tiles is too short for 65 blocks; paired programs read the keys twice before one
# store; a plain store beside other programs' atomics races.
KERNEL_VERDICTS = {"p01_prints_escapes.py": "failed", "p05_reads_pairs_as_int64.py": "failed",
                   "p05_reads_through_atomic_add_zero.py": "failed", "p05_whole_row_in_a_helper.py": "failed",
                   "p05_whole_row_local_constexpr.py": "failed", "p11_dot_overwritten.py": "failed",
                   "p11_dot_times_zero.py": "failed", "p05_row_in_a_dozen_tiles.py": "failed",
                   "p06_paired_query_blocks.py": "failed", "p07_clears_while_others_add.py": "failed",
                   "p11_dot_minus_itself.py": "failed", "p11_two_dots_cancel.py": "failed",
                   "p12_pv_on_cuda_cores_dot_cancelled.py": "failed"}


@pytest.mark.parametrize("name", WITH_THE_KERNELS)
def test_the_cheat_as_it_is_is_graded_on_its_kernels_alone(name, tmp_path, capfd):
    copy = tmp_path / name  # the tricks write beside __file__: here, if anything of them ran
    shutil.copy(cheat_file(name), copy)
    result = grade_file(_puzzle(name), copy)
    assert result.status == KERNEL_VERDICTS.get(name, "passed"), report(result)
    assert sorted(p.name for p in tmp_path.iterdir()) == [name], "the trick left a trace"
    assert "Solved" not in capfd.readouterr().err  # p01_prints_escapes.py's print at import did not run
    assert any(note.startswith(LEFT_OUT) for note in result.notices), result.notices


@pytest.mark.puzzle1
def test_a_hanging_import_is_no_hang_kernel_only(tmp_path):
    """The module-level `while True: pass` never runs: the kernel is graded and passes, and the report names the
    line it left out."""
    submission_file = tmp_path / "p01_hangs_at_import.py"
    shutil.copy(CHEATING / submission_file.name, submission_file)
    run = run_cli("1", "--file", str(submission_file), "--json", "--timeout", "20", timeout=300)
    (result,) = json.loads(run.stdout)["results"]
    assert run.returncode == 0 and result["status"] == "passed" and result["trusted"], result
    loop = (CHEATING / submission_file.name).read_text().splitlines().index("while True:") + 1
    assert any(f"not run: the code of p01_hangs_at_import.py outside its kernels (line {loop})" in note
               for note in result["notices"]), result["notices"]


@pytest.mark.puzzle1
def test_a_submission_that_edits_the_grader_edits_nothing_kernel_only(tmp_path):
    """In a scratch copy of the repository, as on the practice path (tests/test_isolation.py): there the grader
    restores its files and voids the grade; kernel-only, the edit never runs."""
    submission_file = tmp_path / "p01_edits_the_grader.py"
    shutil.copy(CHEATING / submission_file.name, submission_file)
    original = (ROOT / "grader" / "judge" / "checker.py").read_bytes()
    run, scratch = run_in_scratch_repository(tmp_path, submission_file, "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    assert (scratch / "grader" / "judge" / "checker.py").read_bytes() == original
    assert not (scratch / "sitecustomize.py").exists()
    (result,) = json.loads(run.stdout)["results"]
    assert result["status"] == "passed" and not [c for c in result["cases"] if c["name"] == "grader files"]


@pytest.mark.puzzle5
@pytest.mark.parametrize("name", ["p05_square_tile.py", "p05_flat_square_tile.py"])
def test_a_tile_of_tiles_is_a_block_wider_than_the_lesson(name):
    """[B0, B1, B1] or [B1, B1]: no axis wider than the launcher's B1, yet B1 x B1 columns of a row in one block."""
    case = failed_case(grade_file(5, CHEATING / name, first_failure=True))
    assert case.reason == "budget" and "your kernel made a block of shape [32, 32], 1024 elements, more than a " \
        "tile of the launcher's blocks holds (512)" in case.message, case.message


@pytest.mark.parametrize("cheat", COPIED_CHEATS, ids=lambda cheat: cheat.name)
def test_a_copied_cheat_is_its_solution_with_one_edit(cheat):
    """Built from the solution's text (its lesson form), or another kernel file's, never kept as a copy in
    tests/kernels/cheating/: its code is the base's but for the one edit, which must still apply (CopiedCheat.text
    fails loudly otherwise)."""
    text = cheat.text()
    assert not (CHEATING / cheat.name).exists(), f"{cheat.name} is built from its base: delete the copy"
    assert text.startswith(f'"""Cheat: {cheat.trick}"""\n')
    base = (KERNELS / cheat.base).read_text() if cheat.base else lesson_text(_puzzle(cheat.name))
    original, code = base[base.index("\nimport"):], text[text.index('"""\n') + 4:]
    assert code.count(cheat.new) == 1, cheat.name
    before, after = code.split(cheat.new)
    assert original.startswith(before) and original.endswith(after), f"{cheat.name} differs from its base elsewhere"
    replaced = original[len(before):len(original) - len(after)]
    assert replaced == cheat.old or cheat.through and replaced.startswith(cheat.old) and \
        replaced.endswith(cheat.through), f"{cheat.name} replaces {replaced!r}"
