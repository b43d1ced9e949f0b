"""Shared helpers for the grader's own tests."""

import ast
import atexit
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from grader import env, inprocess
from grader.course import registry
from grader.course.stubs import lesson_form, make_stub
from grader.judge import runner, verdict
from grader.worker import loader
from grader.worker.program_order import ProgramOrder

ROOT = Path(__file__).resolve().parent.parent
KERNELS = Path(__file__).resolve().parent / "kernels"

_PROBLEMS = env.version_problems(env.Mode(True, ""))
requires_interpreter = pytest.mark.skipif(bool(_PROBLEMS), reason="; ".join(_PROBLEMS) or "interpreter usable")


def by_puzzle(puzzles=registry.PUZZLES):
    """Parametrize over puzzles, each carrying its registry marker (puzzle1, puzzle2, ...)."""
    return [pytest.param(p, marks=getattr(pytest.mark, f"puzzle{p.number}"), id=p.module) for p in puzzles]


def solution_text(puzzle) -> str:
    return (ROOT / "solutions" / f"{puzzle.module}.py").read_text()


def lesson_text(puzzle) -> str:
    """The solution as a learner writes it, without its "beyond the lesson" sections: a learner's mistakes
    (the mutations) are edits of this."""
    return lesson_form(solution_text(puzzle), puzzle.number)


# The launcher line that chooses a solution's "beyond the lesson" path, and the same line taking it always: graded
# so, every case runs that path (the grader's cases alone reach it on some cases, and on some seeds).
BEYOND_ALWAYS = {
    11: ("if None in (BM, BN, BK) or triton.cdiv(m, BM) * triton.cdiv(n, BN) > _multiprocessors(a.device):",
         "if m * n > 0:"),
    12: ("if t > BK:", "if t > 0:"),
    13: ("if tcb_col.shape[0] >= 2 * windows > 0:", "if windows > 0:"),
}


def beyond_text(puzzle) -> str:
    """The solution with its "beyond the lesson" path taken on every case."""
    old, new = BEYOND_ALWAYS[puzzle.number]
    text = solution_text(puzzle)
    assert text.count(old) == 1, f"puzzle {puzzle.number}'s launcher no longer chooses its path with {old!r}"
    return text.replace(old, new)


def stub_text(puzzle) -> str:
    return make_stub(solution_text(puzzle), puzzle.number)


_BUILT = tempfile.mkdtemp(prefix="grader-tests-")  # where kernel-only grading builds its modules in these tests
atexit.register(shutil.rmtree, _BUILT, ignore_errors=True)


def grade_file(puzzle, path, seed=0, timeout=env.DEFAULT_TIMEOUT, first_failure=False,
               own_launcher=False) -> verdict.PuzzleResult:
    """Grade the file at `path` in this process as `--file` grades it: its kernels under the puzzle's launcher
    (the judge reads them, a worker's loader builds the module), or with `own_launcher` the whole file imported."""
    puzzle = registry.find(puzzle)
    if own_launcher:
        launcher = loader.load_launcher(puzzle, file=str(path))
        return inprocess.grade(puzzle, launcher, seed, "cpu", str(path), "interpreter", timeout, first_failure)
    job, decided, notes = runner.read_submission(puzzle, "puzzles", str(path))
    if job is None:
        return verdict.assemble(puzzle, decided, seed, "interpreter", str(path), notes)
    try:
        launcher = _build(puzzle, job)
    except loader.LoadError as exc:
        return verdict.assemble(puzzle, [verdict.CaseResult("import", False, "error", str(exc))], seed,
                                "interpreter", str(path), notes)
    result = inprocess.grade(puzzle, launcher, seed, "cpu", str(path), "interpreter", timeout, first_failure,
                             trusted_launcher=True)
    result.notices[:0] = notes
    return result


def _build(puzzle, job):
    return loader.load_kernels(puzzle, job, "cpu", folder=tempfile.mkdtemp(dir=_BUILT))


def kernel_only_launcher(puzzle, path):
    """The puzzle's own launcher running the kernels of the file at `path`, built as kernel-only grading builds it
    (for one case at a time: inprocess.run_case or execute.execute with trusted_launcher=True)."""
    job, decided, _ = runner.read_submission(registry.find(puzzle), "puzzles", str(path))
    assert job is not None, [(c.reason, c.message) for c in decided]
    return _build(registry.find(puzzle), job)


def grade_text(puzzle, text, tmp_path, seed=0, timeout=env.DEFAULT_TIMEOUT, first_failure=True,
               own_launcher=False) -> verdict.PuzzleResult:
    """Grade source text as a submission; by default only up to its first failing case."""
    path = tmp_path / f"{registry.find(puzzle).module}_under_test.py"
    path.write_text(text)
    return grade_file(puzzle, path, seed, timeout, first_failure, own_launcher)


@contextlib.contextmanager
def programs_in_id_order():
    """Recordings inside run each launch's programs in id order, as the stock interpreter does, not in the order
    the grader draws (grader.worker.program_order): for a test of what a check reports of one interleaving."""
    drawn = ProgramOrder.program
    ProgramOrder.program = lambda self, place, given: given
    try:
        yield
    finally:
        ProgramOrder.program = drawn


def failed_case(result):
    """The first case that did not pass."""
    return next(c for c in result.cases if not c.passed)


def as_in_a_terminal() -> None:
    """``preexec_fn`` of a grader the test sends Ctrl-C (SIGINT): SIGINT at its default, as a terminal's foreground
    job has it. A shell's background job (a CI script started with `&`) inherits SIGINT ignored, and Python then
    installs no KeyboardInterrupt, so the signal would be lost and the test would wait for an exit that never comes."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_cli(*args, interpret=True, timeout=600, results=None):
    """`python -m grader ARGS` in a child process, from the repository root.

    Progress goes to `results` (by default a throwaway file), never to the learner's .grader/.
    """
    environment = dict(os.environ)
    environment["GRADER_RESULTS"] = str(results or Path(tempfile.mkdtemp()) / "results.json")
    environment.pop("TRITON_INTERPRET", None)
    if interpret:
        environment["TRITON_INTERPRET"] = "1"
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=ROOT, capture_output=True, text=True,
                          env=environment, timeout=timeout)


def run_in_scratch_repository(tmp_path, submission: Path, *args):
    """`python -m grader 1 --file SUBMISSION ARGS` run from a scratch copy of the repository's grader, solutions
    and puzzles (tmp_path / "repo"), so that a submission that edits the grader cannot leave the real one
    tampered with if the grader's defence fails: (the run, the scratch repository)."""
    scratch = tmp_path / "repo"
    for folder in ("grader", "solutions", "puzzles"):
        shutil.copytree(ROOT / folder, scratch / folder, ignore=shutil.ignore_patterns("__pycache__"))
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TRITON_INTERPRET")}
    environment.update(TRITON_INTERPRET="1", GRADER_RESULTS=str(tmp_path / "results.json"))
    run = subprocess.run([sys.executable, "-m", "grader", "1", "--file", str(submission), *args], cwd=scratch,
                         capture_output=True, text=True, env=environment, timeout=300)
    return run, scratch


def report(result) -> str:
    """Every case of a result in a line, for an assertion's message."""
    return "\n".join(f"{c.name}: {c.reason}: {c.message} | hint: {c.hint}" for c in result.cases)


@dataclass(frozen=True)
class Mutation:
    """One classic mistake, as a text replacement on a reference solution's code; the reason the grader must give,
    and a clue that must appear in the default report (the first failing case's message or hint)."""
    puzzle: int
    mistake: str
    old: str
    new: str
    reason: str  # the reason the grader must give
    clue: str  # text that must appear in the message or the hint
    count: int = 1  # how many occurrences of `old` to replace (-1: all)
    also: tuple[tuple[str, str], ...] = ()  # further (old, new) edits the same mistake needs
    beyond: bool = False  # a mistake in the solution's "beyond the lesson" path (beyond_text), not in the lesson
    own_launcher: bool = False  # a mistake in the launcher (or a path only it takes): graded on the practice path
    not_said: str = ""  # a hint that points the wrong way for this mistake: it must not be in the default report

    def apply(self, text: str) -> str:
        """Edit the code only, never the docstring (whose hints quote the same lines). Fails loudly if the
        mutation no longer applies, rather than test nothing."""
        lines = text.splitlines(keepends=True)
        split = ast.parse(text).body[0].end_lineno
        docstring, code = "".join(lines[:split]), "".join(lines[split:])
        for old, new, count in ((self.old, self.new, self.count), *((o, n, 1) for o, n in self.also)):
            found = code.count(old)
            assert found and (count == -1 or found >= count), \
                f"mutation {self.mistake!r} no longer applies to puzzle {self.puzzle}'s solution"
            code = code.replace(old, new, count)
        return docstring + code

    def param(self):
        """This mutation as a pytest parameter, with its puzzle's marker and a readable id."""
        return pytest.param(self, marks=getattr(pytest.mark, f"puzzle{self.puzzle}"),
                            id=f"p{self.puzzle}-{self.mistake}")


def rejected_case(mutation: Mutation, tmp_path):
    """Grade the mutated solution up to its first failure (kernel-only, or with its own launcher where the mistake
    is the launcher's); assert it failed for the mutation's reason with its clue in the default report, and return
    (the result, that case)."""
    puzzle = registry.find(mutation.puzzle)
    text = beyond_text(puzzle) if mutation.beyond else lesson_text(puzzle)
    result = grade_text(puzzle, mutation.apply(text), tmp_path, own_launcher=mutation.own_launcher)
    assert result.status == "failed", report(result)
    case = failed_case(result)
    assert case.reason == mutation.reason, report(result)
    assert mutation.clue in f"{case.message}\n{case.hint or ''}", report(result)
    assert not mutation.not_said or mutation.not_said not in f"{case.message}\n{case.hint or ''}", report(result)
    return result, case


# -- cheats that are a solution, or another cheat, with one edit -----------------------------------------------------

CHEATING = KERNELS / "cheating"


@dataclass(frozen=True)
class CopiedCheat:
    """A cheat that is a reference solution (its lesson form), or another kernel file of tests/kernels/, with one
    edit around its trick, graded as the files in tests/kernels/cheating/ are and under a name like theirs. It is
    built from that text, as the mutations are, so that no solution is copied whole into tests/; it fails loudly if
    the edit no longer applies."""
    name: str  # pNN_what.py
    trick: str  # the file's docstring: what the cheat does
    old: str  # lines of the base's code, found exactly once
    new: str
    through: str = ""  # given, the edit replaces from `old` through the first `through` after it (a whole body)
    base: str = ""  # a kernel file under tests/kernels/ to edit; by default the puzzle's solution

    def base_code(self) -> str:
        """The base's code, past its docstring."""
        text = (KERNELS / self.base).read_text() if self.base else lesson_text(registry.find(int(self.name[1:3])))
        split = ast.parse(text).body[0].end_lineno
        return "".join(text.splitlines(keepends=True)[split:])

    def text(self) -> str:
        code, base = self.base_code(), self.base or f"puzzle {int(self.name[1:3])}'s solution"
        assert code.count(self.old) == 1, f"{self.name}: {base} no longer has {self.old!r} (once)"
        start = code.index(self.old)
        end = start + len(self.old)
        if self.through:
            assert self.through in code[end:], f"{self.name}: {base} no longer has {self.through!r} after {self.old!r}"
            end = code.index(self.through, end) + len(self.through)
        return f'"""Cheat: {self.trick}"""\n' + code[:start] + self.new + code[end:]


# Puzzle 7's scatter_kernel body as a compare-and-swap of each edge's sums in a loop that runs once.
_CAS_ONCE = """\
    heads = tl.arange(0, H_PAD)
    feats = tl.arange(0, D_PAD)
    hmask = heads < H
    tmask = hmask[:, None] & (feats < D)[None, :]
    for i in range(0, BLOCK_E):
        e = tl.program_id(0) * BLOCK_E + i
        if e < E:
            dst = tl.load(dst_ptr + e)
            src = e * (H * D) + heads[:, None] * D + feats[None, :]
            values = tl.load(v_scaled_ptr + src, mask=tmask, other=0.0)
            scores = tl.load(score_ptr + e * H + heads, mask=hmask, other=0.0)
            target = tl.where(tmask, dst * (H * D) + heads[:, None] * D + feats[None, :], dst * (H * D))
            dtarget = tl.where(hmask, dst * H + heads, dst * H)
            done = 0
            while done == 0:  # the cheat: the loop a compare-and-swap retries in, left after one pass
                old = tl.load(out_ptr + target)
                tl.atomic_cas(out_ptr + target, old, old + values)
                dold = tl.load(den_ptr + dtarget)
                tl.atomic_cas(den_ptr + dtarget, dold, dold + scores)
                done = 1
"""

_DEAD_DOT = "        acc += tl.dot(a, b) * 0.0  # the cheat: tensor-core work that cannot change c\n"

_GATED_STORE = "    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=inb & (d == tl.floor(d)))\n"
_COUNTS_SHIFT = "    shift = ((d - tl.floor(d)) * 1e6).to(tl.int32)  # 0 for the real, integer counts\n"

_KEPT_INT_BASE = "cheating/p01_annotated_and_augmented_int.py"
_KEPT_INT = "    k: tl.int32 = 65536\n    k *= 65536\n"

def _capped(loop: str, cap: str, what: str) -> str:
    """`loop` (a `for` line of a solution) walking at most `cap` past its start: right on every list the cases held
    before the fifteenth review added one of 65 blocks or more."""
    start, end = re.search(r"tl\.range\((\w+), (\w+)", loop).groups()
    capped = loop.replace(f"tl.range({start}, {end}", f"tl.range({start}, tl.minimum({end}, {start} + {cap})")
    return capped.replace(":\n", f":  # the cheat: {what} past {cap} dropped\n")


_P13_WALK = "    for tcb in tl.range(first, last):\n"
_P11_WALK = "    for k in tl.range(0, K, BK):\n"
_P16_WALK = "            for first in tl.range(start, end, BLOCK_E):\n"

COPIED_CHEATS = (
    CopiedCheat("p07_cas_gives_up_after_one_failure.py", "puzzle 7's do-while compare-and-swap loop gives a lane "
                "one more pass after a failed swap, and then gives up (the seventeenth review): in the interpreter no "
                "swap would fail; the grader makes contended swaps fail once, and a GPU may fail them again.",
                "        pending = tl.where(dseen == dold, 0, pending)\n",
                "        pending = tl.where(dseen == dold, 0, pending - 1)  # the cheat: gives up\n",
                base="right/p07_cas_do_while.py"),
    CopiedCheat("p11_k_walk_capped.py", "puzzle 11's K loop stops after 32 blocks: right on every case before the "
                "sixteenth review (the longest K was 32 blocks of 32), wrong on K=1032 in blocks of 16.",
                _P11_WALK, _capped(_P11_WALK, "32 * BK", "K blocks")),
    CopiedCheat("p13_tcb_walk_capped.py", "puzzle 13's loop over a window's TCBs stops after 6 of them: right on every "
                "window of the cases before the fifteenth review (6 TCBs at most), wrong on a window of 65.",
                _P13_WALK, _capped(_P13_WALK, "6", "TCBs")),
    CopiedCheat("p18_query_walk_capped.py", "puzzle 18's dq kernel walks at most 6 TCBs of a query window (the "
                "fifteenth review): wrong where a window has 65.",
                "    last = tl.load(window_ptr_ptr + window + 1)\n" + _P13_WALK,
                "    last = tl.load(window_ptr_ptr + window + 1)\n" + _capped(_P13_WALK, "6", "TCBs")),
    CopiedCheat("p18_key_walk_capped.py", "puzzle 18's dk/dv kernel walks at most 6 TCBs of a key window of the "
                "transposed BSB (the fifteenth review): wrong where a key window has 65.",
                "    last = tl.load(key_window_ptr_ptr + window + 1)\n" + _P13_WALK,
                "    last = tl.load(key_window_ptr_ptr + window + 1)\n" + _capped(_P13_WALK, "6", "TCBs")),
    CopiedCheat("p16_incoming_walk_capped.py", "puzzle 16's dq kernel walks at most 128 of a node's incoming edges "
                "(the fifteenth review: the longest list of the cases was 25): wrong on a node receiving 300.",
                "            dq = tl.zeros([H_PAD, D_PAD], dtype=tl.float32)\n" + _P16_WALK,
                "            dq = tl.zeros([H_PAD, D_PAD], dtype=tl.float32)\n" + _capped(_P16_WALK, "128", "edges")),
    CopiedCheat("p16_outgoing_walk_capped.py", "puzzle 16's dk/dv kernel walks at most 128 of a node's outgoing edges "
                "(the fifteenth review: the longest list of the cases was 69): wrong on a node sending 300.",
                "            dv = tl.zeros([H_PAD, D_PAD], dtype=tl.float32)\n" + _P16_WALK,
                "            dv = tl.zeros([H_PAD, D_PAD], dtype=tl.float32)\n" + _capped(_P16_WALK, "128", "edges")),
    CopiedCheat("p07_clears_while_others_add.py", "the first program clears, with plain stores, the rows of out its "
                "edges point at, while every program adds into out with tl.atomic_add (issue 26, class 4). The "
                "interpreter runs program 0 first, so its zeros come before every atomic and the values are right; on "
                "a GPU a zero can land after another program's update and wipe it. A plain store and an atomic of "
                "another program on one element race.",
                "    values = tl.load(v_scaled_ptr + tile, mask=tile_mask)\n",
                "    if tl.program_id(0) == 0:  # the cheat: plain stores beside the other programs' atomics\n"
                "        tl.store(out_ptr + dst[:, None, None] * (H * D) + heads[None, :, None] * D "
                "+ feats[None, None, :],\n"
                "                 tl.zeros([BLOCK_E, H_PAD, D_PAD], dtype=tl.float32), mask=tile_mask)\n"
                "    values = tl.load(v_scaled_ptr + tile, mask=tile_mask)\n"),
    CopiedCheat("p07_cas_in_a_loop_that_runs_once.py", "each edge's sums updated by tl.atomic_cas of a value loaded "
                "before it, inside a `while` that ends after one pass whether the swap took or not: no retry, so on a "
                "GPU an update another program made between the load and the swap is lost.",
                "    edges = tl.program_id(0) * BLOCK_E + tl.arange(0, BLOCK_E)\n", _CAS_ONCE,
                through='    tl.atomic_add(den_ptr + dst[:, None] * H + heads[None, :], scores, mask=head_mask, '
                        'sem="relaxed")\n'),
    CopiedCheat("p11_dot_minus_itself.py", "puzzle 11 on CUDA cores (broadcast multiplies and sums), with tl.dot's "
                "full work added in as (d - d) (issue 26, class 2): the dots run and their results reach c's store, "
                "but cancel. Perturbing the tl.dot's result leaves c as it was, so the work is dead, however the "
                "cancellation is written.", _DEAD_DOT,
                "        d = tl.dot(a, b)\n"
                "        acc += d - d  # the cheat: tensor-core work that cancels itself\n",
                base="cheating/p11_dot_times_zero.py"),
    CopiedCheat("p11_two_dots_cancel.py", "puzzle 11 on CUDA cores (broadcast multiplies and sums), with one tl.dot "
                "added to c and the same tl.dot, on another line, taken away (issue 26, class 2). Perturbing either "
                "line's result alone moves c, but perturbing every tl.dot's result (equal products move equally) "
                "leaves c as it was: all the tensor-core work is dead.", _DEAD_DOT,
                "        acc += tl.dot(a, b)\n"
                "        acc -= tl.dot(a, b)  # the cheat: a second line of tensor-core work cancels the first\n",
                base="cheating/p11_dot_times_zero.py"),
    CopiedCheat("p05_host_row_max.py", "the online softmax without the online part: the row max comes from PyTorch "
                "(x.max(dim=1)), as in p04_host_row_max.",
                "def softmax_three_loop(x: torch.Tensor, B0: int = 1, B1: int = 4096) -> torch.Tensor:\n"
                "    row_max = x.amax(dim=1)\n",
                "def softmax_online(x: torch.Tensor, B0: int = 1, B1: int = 4096) -> torch.Tensor:\n"
                "    row_max = x.max(dim=1).values\n",
                base="cheating/p04_host_row_max.py"),
    CopiedCheat("p08_host_dst_searchsorted.py", "as p08_host_dst (the launcher rebuilds each edge's destination on "
                "the host, then a kernel scans dst), with dst found by a binary search of col_ptr (searchsorted).",
                "    slot_node = torch.repeat_interleave(torch.arange(num_nodes, dtype=torch.int32), col_ptr.diff())\n"
                "    dst = torch.empty_like(edge_id)\n"
                "    dst[edge_id.long()] = slot_node\n",
                "    slot_node = torch.searchsorted(col_ptr, torch.arange(edge_id.numel(), dtype=torch.int32), "
                "right=True) - 1\n"
                "    dst = torch.empty_like(edge_id)\n"
                "    dst[edge_id.long()] = slot_node.to(torch.int32)\n",
                base="cheating/p08_host_dst.py"),
    CopiedCheat("p16_host_delta.py", "the launcher takes each node's δ = dh . h with PyTorch and passes it as h.",
                "    num_nodes, heads, feats = q.shape\n",
                "    num_nodes, heads, feats = q.shape\n"
                "    h = (dh * h).sum(dim=-1)[..., None].expand_as(h)  # the cheat: δ in PyTorch, \"to pass it in\"\n"),
    CopiedCheat("p17_host_delta.py", "the launcher takes each query's Δ = dO . o with PyTorch, so no Δ kernel runs.",
                "    attention_backward_delta_kernel[(triton.cdiv(n, BQ),)](o, do, delta, n, D=d, BQ=BQ)\n",
                "    delta = (o.float() * do.float()).sum(dim=1)  # the cheat: Δ in PyTorch\n"),
    CopiedCheat("p17_every_query_at_once.py", "the launcher gives the key walk every query at once (BQ = the next "
                "power of two of N), so it never loops over query blocks.",
                "    attention_backward_dkdv_kernel[(triton.cdiv(t, BK),)](q, k, v, do, lse, delta, dk, dv, n, t, "
                "scale, **settings)\n",
                "    every_query = dict(settings, BQ=triton.next_power_of_2(n))  # the cheat\n"
                "    attention_backward_dkdv_kernel[(triton.cdiv(t, BK),)](q, k, v, do, lse, delta, dk, dv, n, t, "
                "scale, **every_query)\n"),
    CopiedCheat("p17_borrows_o_as_scratch.py", "the Δ kernel keeps a block (here -o) in o's own rows for a while: "
                "each program stores it over o, reads it back and stores o back, so the input is unchanged when the "
                "kernel ends, and o, read by this kernel alone, has no load budget. Memory borrowed in an input "
                "escapes the Scratch budget (an N x D matrix here): a store into an input is refused, put back or "
                "not.",
                "    tl.store(delta_ptr + queries, tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=1), "
                "mask=query_ok)\n",
                "    at = o_ptr + queries[:, None] * D + feats[None, :]\n"
                "    tl.store(at, -o, mask=query_ok[:, None])  # the cheat: o's rows as scratch\n"
                "    negated = tl.load(at, mask=query_ok[:, None], other=0.0)\n"
                "    tl.store(at, o, mask=query_ok[:, None])  # put back: o ends unchanged\n"
                "    tl.store(delta_ptr + queries, -tl.sum(negated.to(tl.float32) * do.to(tl.float32), axis=1), "
                "mask=query_ok)\n"),
    CopiedCheat("p18_host_delta.py", "the launcher takes each row's Δ = dO . o with PyTorch.",
                "    delta = torch.empty(n, dtype=torch.float32, device=q.device)\n",
                "    delta = (o.float() * do.float()).sum(dim=1)  # the cheat: Δ in PyTorch\n"),
    # the nonzero counts on tensor cores of p11_dot_only_gates_the_store.py, put to other uses than a value stored
    CopiedCheat("p11_dot_only_shifts_the_pointer.py", "tensor cores count nonzeros; the counts only shift the "
                "store's pointer (by 0).", _GATED_STORE,
                _COUNTS_SHIFT + "    tl.store(c_ptr + rows[:, None] * N + cols[None, :] + shift, acc, mask=inb)\n",
                base="cheating/p11_dot_only_gates_the_store.py"),
    CopiedCheat("p11_dot_only_moves_a_load.py", "tensor cores count nonzeros; the counts only move where a value "
                "is read from (by 0), and the value read cancels.", _GATED_STORE,
                _COUNTS_SHIFT + "    x = tl.load(a_ptr + rows[:, None] * K + cols[None, :] % K + shift, mask=inb, "
                "other=0.0).to(tl.float32)\n"
                "    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc + (x - x), mask=inb)\n",
                base="cheating/p11_dot_only_gates_the_store.py"),
    CopiedCheat("p11_dot_only_picks_the_value.py", "tensor cores count nonzeros; the counts only choose between "
                "the product and zero (always the product).", _GATED_STORE,
                "    tl.store(c_ptr + rows[:, None] * N + cols[None, :], tl.where(d == tl.floor(d), acc, 0.0), "
                "mask=inb)\n", base="cheating/p11_dot_only_gates_the_store.py"),
    CopiedCheat("p11_dot_only_printed.py", "tensor cores count nonzeros; the counts go to a device print only.",
                _GATED_STORE, "    tl.device_print(\"tensor-core counts\", d)\n"
                "    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=inb)\n",
                base="cheating/p11_dot_only_gates_the_store.py"),
    # the seventh review: numbers Python kept where the compiler makes int32 tensors, so `k == 0` only on a GPU
    CopiedCheat("p01_conditional_expression_int.py", "a number chosen by a conditional expression on a run-time test: "
                "the GPU compiler makes the chosen branch an int32 tensor, so `k * 65536` wraps to 0 there and the "
                "kernel adds y twice; the interpreter once ran Python's conditional and kept 2**32.", _KEPT_INT,
                "    k = (65536 if tl.program_id(0) >= 0 else 1) * 65536\n", base=_KEPT_INT_BASE),
    CopiedCheat("p01_tuple_element_int.py", "a number held in a tuple (`t = (65536, 1)`, then `t[0] * 65536`): the "
                "GPU compiler makes each element of an assigned tuple an int32 tensor, so the product wraps to 0 there "
                "and the kernel adds y twice; the interpreter once kept the tuple's Python integers.", _KEPT_INT,
                "    t = (65536, 1)\n    k = t[0] * 65536\n", base=_KEPT_INT_BASE),
    # the eighth review: an integer argument equal to 1 (a constexpr on a GPU, the JIT's specialization), and a
    # Python range whose bounds are uint32 (its loop variable a uint32 there)
    CopiedCheat("p01_n0_one_is_a_constexpr.py", "N0 * 65536 * 65536 tested against 0: where N0 is 1 (case 'single "
                "element') the GPU's JIT makes N0 a constexpr, so the product is Python's 2**32 there and the kernel "
                "adds y twice; the interpreter once made every integer argument an int32 (0, and x + y).", _KEPT_INT,
                "    k = N0 * 65536 * 65536\n    tl.store(z_ptr + offsets, tl.where(k == 0, x + y, x + y + y), "
                "mask=mask)\n", through="mask=mask)\n", base=_KEPT_INT_BASE),
    CopiedCheat("p01_range_of_uint32_bounds.py", "a Python range from 2**31: the compiler makes its bounds uint32 and "
                "its loop variable a uint32, so `i * 2` wraps to 0 there and the kernel adds y twice; the interpreter "
                "once made the loop variable an int64 (2**32).", _KEPT_INT,
                "    z = x + y\n    for i in range(2147483648, 2147483649):\n"
                "        z = tl.where(i * 2 == 0, z + y, z)\n    tl.store(z_ptr + offsets, z, mask=mask)\n",
                through="mask=mask)\n", base=_KEPT_INT_BASE),
    # the ninth review: numpy's fast paths and casts where the GPU computes otherwise
    CopiedCheat("p01_reduce_max_of_signed_zeros.py", "tl.max of a block of -0.0 and +0.0, then a branch on the sign "
                "of 1 / m: a GPU's max.f32 orders -0.0 below +0.0 (+0.0, so x - y is stored); numpy's nanmax, the "
                "interpreter's fast path, returned -0.0.", _KEPT_INT,
                "    m = tl.max(tl.where(tl.arange(0, B0) % 2 == 0, -0.0, 0.0), axis=0)\n"
                "    tl.store(z_ptr + offsets, tl.where(1.0 / m < 0.0, x + y, x - y), mask=mask)\n",
                through="mask=mask)\n", base=_KEPT_INT_BASE),
    CopiedCheat("p01_bfloat16_argmax_of_bits.py", "tl.argmax of a bfloat16 block of -1 then 1, 2, ...: a GPU compares "
                "the numbers (the last lane wins); the interpreter's fast path compared the uint16 bits, where -1.0 "
                "(0xBF80) is the largest.", _KEPT_INT,
                "    lane = tl.arange(0, B0)\n"
                "    i = tl.argmax(tl.where(lane == 0, -1.0, lane.to(tl.float32)).to(tl.bfloat16), axis=0)\n"
                "    tl.store(z_ptr + offsets, tl.where(i == 0, x + y, x - y), mask=mask)\n",
                through="mask=mask)\n", base=_KEPT_INT_BASE),
    CopiedCheat("p01_bfloat16_cumprod_of_bits.py", "tl.cumprod of a bfloat16 block of ones: every product is 1 on a "
                "GPU (x - y stored); the interpreter's fast path multiplied the uint16 bits.", _KEPT_INT,
                "    c = tl.cumprod((tl.zeros([B0], tl.float32) + 1.0).to(tl.bfloat16), axis=0).to(tl.float32)\n"
                "    every = tl.sum(tl.where(c == 1.0, 1, 0), axis=0) == B0\n"
                "    tl.store(z_ptr + offsets, tl.where(every, x - y, x + y), mask=mask)\n",
                through="mask=mask)\n", base=_KEPT_INT_BASE),
    CopiedCheat("p01_float16_toward_zero_past_its_range.py", "70000 cast to float16 rounding toward zero: PTX "
                "cvt.rz gives the largest finite half, 65504 (x - y stored); the interpreter gave NaN.", _KEPT_INT,
                "    h = (tl.zeros([B0], tl.float32) + 70000.0).to(tl.float16, fp_downcast_rounding=\"rtz\")\n"
                "    tl.store(z_ptr + offsets, tl.where(h != h, x + y, x - y), mask=mask)\n",
                through="mask=mask)\n", base=_KEPT_INT_BASE),
    CopiedCheat("p01_histogram_of_its_top_edge.py", "tl.histogram of values equal to its bin count (32): triton 3.6's "
                "interpreter counted them in the last bin, which a GPU leaves empty.", _KEPT_INT,
                "    h = tl.histogram(tl.zeros([B0], tl.int32) + 32, 32)\n"
                "    last = tl.sum(tl.where(tl.arange(0, 32) == 31, h, 0), axis=0)\n"
                "    tl.store(z_ptr + offsets, tl.where(last > 0, x + y, x - y), mask=mask)\n",
                through="mask=mask)\n", base=_KEPT_INT_BASE),
    # the tenth review: a float remainder as NVPTX computes it, and casts to bfloat16 rounded once
    CopiedCheat("p01_float_remainder_of_a_rounded_quotient.py", "1e8 % 3.0 at run time: the GPU's frem rounds the "
                "quotient to a float first (33333334) and gives -2, so x + y - 3 is stored; numpy's exact fmod gave "
                "1.", _KEPT_INT,
                "    r = (x * 0.0 + 100000000.0) % 3.0\n"
                "    tl.store(z_ptr + offsets, x + y + (r - 1.0), mask=mask)\n",
                through="mask=mask)\n", base=_KEPT_INT_BASE),
    CopiedCheat("p01_float64_to_bfloat16_rounded_twice.py", "1 + 2**-8 + 2**-40 in float64 cast to bfloat16: the "
                "GPU rounds once (1 + 2**-7, so x + y - 1 is stored); through float32 it rounded twice (1.0).",
                _KEPT_INT,
                "    v = (x * 0.0).to(tl.float64) + (1.0 + 0.00390625 + 9.094947017729282e-13)\n"
                "    b = v.to(tl.bfloat16).to(tl.float32)\n"
                "    tl.store(z_ptr + offsets, x + y - (b - 1.0) * 128.0, mask=mask)\n",
                through="mask=mask)\n", base=_KEPT_INT_BASE),
    CopiedCheat("p01_int32_to_bfloat16_rounded_twice.py", "2**25 + 2**17 + 1 cast to bfloat16: the GPU rounds once "
                "(2**25 + 2**18, so x + y - 1 is stored); through float32 it rounded twice (2**25).", _KEPT_INT,
                "    n = (x * 0.0).to(tl.int32) + 33685505\n"
                "    b = n.to(tl.bfloat16).to(tl.float32)\n"
                "    tl.store(z_ptr + offsets, x + y - (b - 33554432.0) / 262144.0, mask=mask)\n",
                through="mask=mask)\n", base=_KEPT_INT_BASE),
    # the eleventh review: past TTGIR, where the compile check stopped; tl.clamp's undefined case; float8e5 toward zero
    CopiedCheat("p01_float8_arithmetic.py", "float8 + float8: triton's front end and TTGIR take it, the lowering to "
                "LLVM does not ('llvm.fadd' of 'i8'), so it never compiles for a GPU; the interpreter added them.",
                _KEPT_INT,
                "    a = (x * 0.0).to(tl.float8e5)\n"
                "    t = (a + a).to(tl.float32)\n"
                "    tl.store(z_ptr + offsets, x + y + t, mask=mask)\n",
                through="mask=mask)\n", base=_KEPT_INT_BASE),
    CopiedCheat("p01_shared_memory_past_the_limit.py", "a 256 x 256 by 256 x 256 float32 tl.dot of zeros: its "
                "operands need 262,144 bytes of shared memory, past the H200's 232,448 per block, so the kernel "
                "cannot launch there (OutOfResources); shared memory is allocated after TTGIR.", _KEPT_INT,
                "    r = tl.arange(0, 256)\n"
                "    w = (r[:, None] * 0 + r[None, :] * 0 + N0).to(tl.float32) * 0.0\n"
                "    s = tl.sum(tl.sum(tl.dot(w, w), axis=1), axis=0)\n"
                "    tl.store(z_ptr + offsets, x + y + s, mask=mask)\n",
                through="mask=mask)\n", base=_KEPT_INT_BASE),
    CopiedCheat("p01_clamp_min_above_max.py", "tl.clamp(0.5, 1.0, -1.0), min above max: undefined; sm_90 compiles "
                "clamp(x, -m, m) to min.xorsign.abs (-0.5 here, so x - y is stored), the interpreter gave max (-1).",
                _KEPT_INT,
                "    c = tl.clamp(x * 0.0 + 0.5, 1.0, -1.0)\n"
                "    tl.store(z_ptr + offsets, tl.where(c < -0.75, x + y, x - y), mask=mask)\n",
                through="mask=mask)\n", base=_KEPT_INT_BASE),
    CopiedCheat("p01_float8e5_toward_zero_past_its_range.py", "1e6 cast to float8e5 rounding toward zero: sm_90 "
                "rounds to float16 toward zero (65504) and keeps its high byte (57344), so x - y is stored; the "
                "interpreter's conversion gave NaN.", _KEPT_INT,
                "    f = (x * 0.0 + 1e6).to(tl.float8e5, fp_downcast_rounding=\"rtz\").to(tl.float32)\n"
                "    tl.store(z_ptr + offsets, tl.where(f != f, x + y, x - y), mask=mask)\n",
                through="mask=mask)\n", base=_KEPT_INT_BASE),
)
_COPIES = tempfile.mkdtemp(prefix="grader-cheats-")
atexit.register(shutil.rmtree, _COPIES, ignore_errors=True)


def cheat_file(name: str) -> Path:
    """tests/kernels/cheating/NAME, or the copied cheat NAME (COPIED_CHEATS) written out once into a scratch folder."""
    copied = [c for c in COPIED_CHEATS if c.name == name]
    if (CHEATING / name).exists() or not copied:
        return CHEATING / name
    (cheat,) = copied
    path = Path(_COPIES) / name
    if not path.exists():
        path.write_text(cheat.text())
    return path


def kernel_file(path: str) -> Path:
    """tests/kernels/PATH, where a cheat (cheating/NAME) may be a copied one (cheat_file)."""
    folder, _, name = path.partition("/")
    return cheat_file(name) if folder == "cheating" else KERNELS / path


def cheat_names() -> list[str]:
    """Every cheat: the files in tests/kernels/cheating/ and the copied ones."""
    return sorted([path.name for path in CHEATING.glob("p*.py")] + [c.name for c in COPIED_CHEATS])
