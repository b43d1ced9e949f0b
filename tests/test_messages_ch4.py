"""Chapter 4's mistakes (and puzzle 6's) from the second learner study are rejected, and the report names the fix.

Each mistake is a mutation of a solution, graded up to its first failing case; the reason and a clue must
appear in that case's message or hint (the default report). Where a mistake is caught only by a case made
for it, the test also names that case: every case before it passed the mistaken kernel.
"""

from dataclasses import dataclass

import pytest
from helpers import Mutation, rejected_case, report, requires_interpreter

pytestmark = requires_interpreter

P12_MASK_BEFORE_MAX = ('scores = tl.where(key_ok[None, :], scores, float("-inf"))\n'
                       "        new_max = tl.maximum(running_max, tl.max(scores, axis=1))")
P13_STAND_IN = 'base = tl.where(new_max == float("-inf"), 0.0, new_max)'


@dataclass(frozen=True)
class CaughtMutation(Mutation):
    case: str = ""  # the case that must be the first to fail, where one was made for this mistake


MUTATIONS = [
    # padded keys in the max: caught only by the case of scores far below 0
    CaughtMutation(12, "mask applied after the max", P12_MASK_BEFORE_MAX,
                   "new_max = tl.maximum(running_max, tl.max(scores, axis=1))\n"
                   '        scores = tl.where(key_ok[None, :], scores, float("-inf"))',
                   "mismatch", "to -inf BEFORE tl.max", case="scores far below 0, keys padded"),
    CaughtMutation(12, "running max started at 0", 'running_max = tl.full([BQ], float("-inf"), dtype=tl.float32)',
                   "running_max = tl.zeros([BQ], dtype=tl.float32)", "mismatch",
                   "start the running max at -inf, not 0", case="scores far below 0, keys padded"),
    CaughtMutation(6, "mask applied after the max",
                   'scores = tl.where(key_ok[:, None], k[:, None] * q[None, :], float("-inf"))\n'
                   "        new_max = tl.maximum(running_max, tl.max(scores, axis=0))",
                   "scores = k[:, None] * q[None, :]\n"
                   "        new_max = tl.maximum(running_max, tl.max(scores, axis=0))\n"
                   '        scores = tl.where(key_ok[:, None], scores, float("-inf"))',
                   "mismatch", "to -inf BEFORE tl.max", case="scores far below 0, keys padded"),
    # the base of the exponential
    CaughtMutation(12, "exp where exp2 is meant", "tl.exp2(", "tl.exp(", "mismatch",
                   "went into tl.exp. Use tl.exp2", count=-1),
    CaughtMutation(12, "exp2 of scores not in log2 units", "* (scale * LOG2E)", "* scale", "mismatch",
                   "Multiply the scores by log2(e) = 1.4427 before tl.exp2"),
    CaughtMutation(13, "exp where exp2 is meant", "tl.exp2(", "tl.exp(", "mismatch",
                   "went into tl.exp. Use tl.exp2", count=-1),
    # one running sum rescaled, the other not
    CaughtMutation(12, "l not rescaled, acc is", "total = total * alpha +", "total = total +", "mismatch",
                   "acc is, l is not; when the max grows from m to m', multiply l and acc by exp(m - m')"),
    CaughtMutation(13, "l not rescaled, acc is", "total = total * alpha +", "total = total +", "mismatch",
                   "acc is, l is not"),
    CaughtMutation(6, "acc not rescaled, d is", "acc = acc * alpha +", "acc = acc +", "mismatch",
                   "the denominator d is, acc is not"),
    CaughtMutation(6, "d not rescaled, acc is", "denominator = denominator * alpha +", "denominator = denominator +",
                   "mismatch", "acc is, the denominator d is not"),
    # puzzle 13's bitmap, gathers and -inf
    CaughtMutation(13, "bitmap read transposed", "edge = ((bits[:, None] >> slots[None, :]) & 1) != 0",
                   "edge = ((bits[None, :] >> slots[:, None]) & 1) != 0", "mismatch",
                   "read transposed: tcb_mask[t, r] is row r's mask, and its bit c is slot c"),
    CaughtMutation(13, "bit order reversed", "edge = ((bits[:, None] >> slots[None, :]) & 1) != 0",
                   "edge = ((bits[:, None] >> (15 - slots)[None, :]) & 1) != 0", "mismatch",
                   "bit c (the value 1 << c, counting from the least significant bit) is slot c"),
    CaughtMutation(13, "k and v gathered by slot", "k_ptr + cols[:, None]", "k_ptr + slots[:, None]", "mismatch",
                   "slot c of TCB t holds the node tcb_col[t, c]",
                   also=(("v_ptr + cols[:, None]", "v_ptr + slots[:, None]"),)),
    CaughtMutation(13, "no finite stand-in while m = -inf", P13_STAND_IN, "base = new_max", "mismatch",
                   "-inf - (-inf) = NaN. Subtract a finite stand-in"),
    CaughtMutation(13, "-1e30 instead of -inf", P13_STAND_IN, "base = new_max", "mismatch",
                   'a finite "minus infinity" such as -1e30 minus itself is 0',
                   also=(('running_max = tl.full([16], float("-inf")', "running_max = tl.full([16], -1e30"),
                         ('scores = tl.where(edge, scores, float("-inf"))', "scores = tl.where(edge, scores, -1e30)")),
                   case="rows with no neighbour"),
    CaughtMutation(13, "a score of exactly 0 taken for no edge", 'scores = tl.where(edge, scores, float("-inf"))',
                   'scores = scores * edge.to(tl.float32)\n'
                   '        scores = tl.where(scores != 0.0, scores, float("-inf"))',
                   "mismatch", "a score of 0 is a real score", case="scores of exactly 0"),
    # puzzle 11's descriptors
    CaughtMutation(11, "row offset of a in blocks", "a_desc.load([pid_m * BM, k])", "a_desc.load([pid_m, k])",
                   "mismatch", "a descriptor's offsets are in elements, not blocks: load a at [pid_m * BM, k]"),
    # These two need their (clue, advice) entries in grader.worker.compiler_advice.INTERPRETER_ADVICE.
    CaughtMutation(11, "every offset in blocks", "for k in tl.range(0, K, BK):",
                   "for k in tl.range(0, tl.cdiv(K, BK)):", "error", "offsets are in elements, not blocks",
                   also=(("a_desc.load([pid_m * BM, k])", "a_desc.load([pid_m, k])"),
                         ("b_desc.load([k, pid_n * BN])", "b_desc.load([k, pid_n])"))),
    # square blocks hide the swap until the rectangular case, where the compile check sees it first
    CaughtMutation(11, "b's block_shape swapped", "block_shape=[BK, BN])", "block_shape=[BN, BK])", "gpu_compile",
                   "check the block_shape"),
]


@pytest.mark.parametrize("mutation", [m.param() for m in MUTATIONS])
@pytest.mark.slow
def test_mistake_is_rejected_with_its_fix_named(mutation, tmp_path):
    result, case = rejected_case(mutation, tmp_path)
    assert not mutation.case or case.name == mutation.case, report(result)
