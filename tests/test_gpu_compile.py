"""Kernels that pass in the interpreter but not on a GPU fail with reason "gpu_compile" (grader.worker.gpu_compile).

Each trap is a known-wrong kernel, most as a one-line mutation of a solution (as in test_wrong_kernels.py),
rejected with a clue that names the fix. Correct alternatives near each trap pass. Every solution passing
is test_solutions.py's job; the check runs there too.
"""

import dataclasses

import pytest
import triton
import triton.language as tl
from helpers import (
    KERNELS,
    Mutation,
    failed_case,
    grade_file,
    grade_text,
    rejected_case,
    report,
    requires_interpreter,
    solution_text,
)

from grader import env
from grader.course import registry
from grader.worker import gpu_compile, instrument, ttir

pytestmark = requires_interpreter

TRAPS = [
    Mutation(3, "scalar accumulator that becomes a block", "acc = tl.zeros([B0], dtype=tl.float32)", "acc = 0.0",
             "gpu_compile", "Start it as a block: `acc = tl.zeros([B0], dtype=tl.float32)`"),
    Mutation(5, "scalar running max and sum over a block of rows",
             'row_max = tl.full([B0], float("-inf"), dtype=tl.float32)', 'row_max = -float("inf")', "gpu_compile",
             "`row_max` starts as a scalar and becomes a block in the loop (it starts at",
             also=(("denominator = tl.zeros([B0], dtype=tl.float32)", "denominator = 0.0"),)),
    # on the practice path, whose file is imported whole; kernel-only grading reads it as a constexpr (below)
    Mutation(5, "module-level float that is not a constexpr", "    LOG2E: tl.constexpr = 1.4426950408889634\n", "",
             "gpu_compile", "`LOG2E = tl.constexpr(...)` at module level",
             also=(("import triton.language as tl\n",
                    "import triton.language as tl\n\nLOG2E = 1.4426950408889634\n"),), own_launcher=True),
    Mutation(9, "tl.static_range over loaded bounds", "tl.range(start, end, BLOCK_E)",
             "tl.static_range(start, end, BLOCK_E)", "gpu_compile", "use tl.range(...)"),
    Mutation(1, "`and` on blocks", "mask = offsets < N0", "mask = (offsets >= 0) and (offsets < N0)", "gpu_compile",
             "Use `&` on boolean blocks"),
    # case 'single element' passes N0 = 1, which a GPU's JIT makes a constexpr (a Python int there, no .to())
    Mutation(1, "a tensor method on an argument that is 1", "mask = offsets < N0", "mask = offsets < N0.to(tl.int64)",
             "gpu_compile", "convert with tl.cast(N0, tl.int64) rather than N0.to(tl.int64)"),
]

# Traps the interpreter of triton 3.6 and 3.9 refuses itself, as the GPU compiler does: on the practice path, where
# the interpreter runs first, no compile is needed. Kernel-only grading compiles before it runs (or refuses first).
REFUSED_BY_THE_INTERPRETER = [
    Mutation(9, "tl.arange to a run-time size", "heads = tl.arange(0, H_PAD)", "heads = tl.arange(0, H)",
             "error", "arange's arguments must be of type tl.constexpr", own_launcher=True),
    Mutation(9, "tl.zeros of a run-time shape", "acc = tl.zeros([H_PAD, D_PAD], dtype=tl.float32)",
             "acc = tl.zeros([H, D], dtype=tl.float32)", "error", "must have type `constexpr[int]`", own_launcher=True),
    Mutation(1, "builtin abs on a block", "tl.store(z_ptr + offsets, x + y, mask=mask)",
             "tl.store(z_ptr + offsets, abs(x + y), mask=mask)", "error", "bad operand type for abs()",
             own_launcher=True),
]
KERNEL_ONLY = {  # the same traps graded kernel-only: (reason, clue)
    "tl.arange to a run-time size": ("gpu_compile", "arange's arguments must be of type tl.constexpr"),
    "tl.zeros of a run-time shape": ("gpu_compile", "must have type `constexpr[int]`"),
    "builtin abs on a block": ("error", "the name abs: a kernel reads its parameters"),
}


@pytest.mark.parametrize("mutation", [m.param() for m in TRAPS])
def test_interpreter_only_kernel_fails_the_gpu_compile_check(mutation, tmp_path):
    _, case = rejected_case(mutation, tmp_path)
    module = registry.find(mutation.puzzle).module
    assert f"{module}_under_test.py:" in case.message, "the message names the learner's line"


@pytest.mark.parametrize("mutation", [m.param() for m in REFUSED_BY_THE_INTERPRETER])
def test_trap_the_interpreter_refuses_fails_before_the_compile(mutation, tmp_path):
    test_interpreter_only_kernel_fails_the_gpu_compile_check(mutation, tmp_path)


@pytest.mark.parametrize("mutation", [m.param() for m in REFUSED_BY_THE_INTERPRETER])
def test_trap_the_interpreter_refuses_fails_kernel_only_before_it_runs(mutation, tmp_path):
    reason, clue = KERNEL_ONLY[mutation.mistake]
    rejected_case(dataclasses.replace(mutation, reason=reason, clue=clue, own_launcher=False), tmp_path)


@pytest.mark.parametrize("puzzle, name, clue, own_launcher", [
    pytest.param(1, "p01_plain_helper.py", "Put @triton.jit above `def add_values`", True, marks=pytest.mark.puzzle1,
                 id="plain helper"),
    pytest.param(5, "p05_builtin_max.py", "Use tl.maximum(a, b)", False, marks=pytest.mark.puzzle5, id="builtin max"),
])
def test_wrong_kernel_fails_the_gpu_compile_check(puzzle, name, clue, own_launcher):
    """The plain helper on the practice path: kernel-only grading refuses it before anything compiles (next)."""
    result = grade_file(puzzle, KERNELS / "wrong" / name, first_failure=True, own_launcher=own_launcher)
    case = failed_case(result)
    assert case.reason == "gpu_compile", report(result)
    assert clue in case.message and f"{name}:" in case.message, report(result)


@pytest.mark.parametrize("puzzle, name, clue", [
    pytest.param(1, "p01_plain_helper.py", "the name add_values: a plain Python function: a kernel calls "
                 "@triton.jit functions only (put @triton.jit above it)", marks=pytest.mark.puzzle1, id="plain helper"),
    pytest.param(5, "p05_reads_numpy_in_the_kernel.py", "the name np: np runs on the host, not in a kernel",
                 marks=pytest.mark.puzzle5, id="numpy"),
])
def test_a_kernel_reaching_python_is_refused_kernel_only(puzzle, name, clue):
    """Kernel-only grading holds a kernel to Triton before it compiles or runs it (grader.judge.submission)."""
    (case,) = grade_file(puzzle, KERNELS / "wrong" / name).cases
    assert case.reason == "error" and case.message.startswith(f"not graded: {name} holds code a kernel may not run")
    assert clue in case.message, case.message


@pytest.mark.parametrize("puzzle, name", [
    pytest.param(1, "p01_jit_helper.py", marks=pytest.mark.puzzle1, id="@triton.jit helper"),
    pytest.param(5, "p05_one_row_scalars.py", marks=pytest.mark.puzzle5, id="scalars that stay scalars"),
])
def test_correct_alternative_compiles(puzzle, name):
    result = grade_file(puzzle, KERNELS / "right" / name)
    assert result.status == "passed", report(result)


@pytest.mark.puzzle5
@pytest.mark.parametrize("constant", ["LOG2E = tl.constexpr(1.4426950408889634)", "LOG2E = 1.4426950408889634",
                                      "LOG2E: tl.constexpr = 1.4426950408889634"],
                         ids=["tl.constexpr(...)", "a plain float", "annotated tl.constexpr"])
def test_a_module_level_constant_compiles(constant, tmp_path):
    """The forms README and the allowlist's message promise, graded kernel-only: the GPU compiler reads a global only
    as a tl.constexpr, and the grader gives it the submission's literal constants as such (grader.worker.compose),
    on a GPU as in the compile check. (The practice path imports the file whole: there the advice above holds.)"""
    edit = Mutation(5, "module-level constant", "    LOG2E: tl.constexpr = 1.4426950408889634\n", "", "passed", "",
                    also=(("import triton.language as tl\n", f"import triton.language as tl\n\n{constant}\n"),))
    result = grade_text(5, edit.apply(solution_text(registry.find(5))), tmp_path, first_failure=False)
    assert result.status == "passed", report(result)


@pytest.mark.puzzle11
def test_a_dot_whose_result_is_never_used_does_not_count():
    result = grade_file(11, KERNELS / "wrong" / "p11_dead_dot.py", first_failure=True)
    case = failed_case(result)
    assert case.reason == "budget", report(result)
    assert "tl.dot did 0% of the multiply-adds" in case.message, report(result)
    # the dead work is seen as the kernel runs (issue 18), before the compile check's "not in the compiled kernel"
    assert "multiply-adds of tl.dot never reached a stored value" in case.message, case.message


# -- the AST rule, on its own -------------------------------------------------------------------------

@triton.jit
def _static_uses(x_ptr, N0, B0: tl.constexpr, B1: tl.constexpr):
    WIDE: tl.constexpr = max(B0, 16)
    half = min(B1, 64) // 2
    offsets = tl.program_id(0) * WIDE + tl.arange(0, WIDE)
    if B0 > 16 and not B1 < 16:
        offsets += half
    if tl.program_id(0) < N0 and N0 > 0:  # a whole condition: scalars, where both agree
        tl.store(x_ptr + offsets, abs(-1.0), mask=(offsets < N0) & (offsets >= 0))


@triton.jit
def _not_on_a_block(x_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    inside = offsets < N0
    tl.store(x_ptr + offsets, 1.0, mask=not inside)


@triton.jit
def _or_through_a_local(x_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    alias = offsets
    tl.store(x_ptr + offsets, 1.0, mask=(alias < 0) or (alias < N0))


def _static_problems(kernel):
    functions: dict = {}
    gpu_compile._collect(kernel.fn, functions)
    return gpu_compile.static_problems(functions)


def test_static_values_may_use_python_operators():
    assert _static_problems(_static_uses) is None


@triton.jit
def _builtin_min_and_abs(x_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    x = tl.load(x_ptr + offsets, mask=offsets < N0)
    tl.store(x_ptr + offsets, min(x, 1.0), mask=offsets < N0)
    tl.store(x_ptr + offsets, abs(x), mask=offsets < N0)


@pytest.mark.parametrize("kernel, clue", [(_not_on_a_block, "Use `~` on a boolean block"),
                                          (_or_through_a_local, "Use `|` on boolean blocks"),
                                          (_builtin_min_and_abs, "Use tl.minimum(a, b)")],
                         ids=["not", "or through a local", "builtin min"])
def test_python_operators_on_run_time_values_are_refused(kernel, clue):
    problem = _static_problems(kernel)
    assert problem is not None and clue in problem and "test_gpu_compile.py:" in problem


# -- the check fails closed: a case whose kernels it could not compile does not pass ----------------------

def _fails_closed(monkeypatch, clue, **patches):
    for name, value in patches.items():
        monkeypatch.setattr(gpu_compile, name, value)
    problem = gpu_compile.check(registry.find(1), [instrument.Launch(_static_uses.fn, {}, {}, (1,))])
    assert problem is not None and problem.startswith("the GPU compile check could not run, so this case does not "
                                                      "pass"), problem
    assert clue in problem and "the grader's trouble, not a mistake found in your kernel" in problem, problem


def test_trouble_inside_the_check_fails_the_case(monkeypatch):
    def broken(launch, arch):
        raise KeyError("something the check did not expect")

    _fails_closed(monkeypatch, "KeyError: 'something the check did not expect'", _request=broken)


def test_a_helper_that_dies_fails_the_case(monkeypatch):
    def dies(request, wait):
        raise RuntimeError("the compile helper exited with status -9")

    _fails_closed(monkeypatch, "RuntimeError: the compile helper exited with status -9", _compile=dies)


def test_a_helper_that_cannot_compile_fails_the_case(monkeypatch):
    """The helper's own answers when it cannot compile anything here (no compile API, a one-line kernel refused)."""
    skip = "kernels were not compiled for the GPU: this triton lacks its compile API (ImportError)"
    _fails_closed(monkeypatch, skip, _compile=lambda request, wait: {"skip": skip})


def test_a_request_the_check_cannot_encode_fails_the_case(monkeypatch):
    def unencodable(launch, arch):
        raise gpu_compile.Unsupported("a torch dtype was passed to the kernel")

    _fails_closed(monkeypatch, "could not be handed to the compiler: a torch dtype was passed", _request=unencodable)


def test_the_check_does_not_run_natively(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET")
    monkeypatch.setattr(gpu_compile, "_request", None)  # would raise if the check ran
    assert gpu_compile.check(registry.find(1), [instrument.Launch(_static_uses.fn, {}, {}, (1,))]) is None


def test_dots_of_zero_blocks_do_no_tensor_core_work():
    """A tl.dot of two constant zero blocks, added into a product computed on CUDA cores, is live in the compiled
    kernel but multiplies nothing: its work does not count."""
    result = grade_file(11, KERNELS / "cheating" / "p11_dots_of_zeros.py", first_failure=True)
    case = failed_case(result)
    assert case.reason == "budget", report(result)
    assert "tl.dot did 0% of the multiply-adds" in case.message, report(result)


def test_a_kernel_that_reads_a_module_no_gpu_kernel_can_use_fails():
    """Reading numpy inside a kernel is no reason to skip the compile check: it fails the case (on the practice
    path; kernel-only grading refuses the file first, above)."""
    case = failed_case(grade_file(5, KERNELS / "wrong" / "p05_reads_numpy_in_the_kernel.py", first_failure=True,
                                  own_launcher=True))
    assert case.reason == "gpu_compile", case.message
    assert "the kernel reads the module numpy" in case.message and "tl.constexpr globals" in case.message


# -- sums kept in 16 bits, read from TTIR (issue 27): what a GPU run checks where the hook cannot look ---------
# Each text is the relevant part of the sm_90 TTIR that triton 3.9 made of a small kernel (file k.py).

TTIR_RUNNING_SUM_16 = """
    %acc_1 = scf.for %s = %c0_i32 to %N step %c32_i32 iter_args(%acc_2 = %acc) -> (tensor<32x32xf16>)  : i32 {
      %acc_13 = tt.dot %a_12, %a_12, %cst : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32> loc(#loc29)
      %acc_14 = arith.truncf %acc_13 : tensor<32x32xf32> to tensor<32x32xf16> loc(#loc29)
      %acc_15 = arith.addf %acc_2, %acc_14 : tensor<32x32xf16> loc(#loc30)
#loc29 = loc("k.py":11:24)
#loc30 = loc("k.py":11:8)
"""
TTIR_DOT_ACC_16 = """
      %acc_12 = tt.dot %a_11, %a_11, %acc_1 : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf16> loc(#loc28)
#loc28 = loc("k.py":20:14)
"""
TTIR_SUM_16 = """
    %2 = arith.mulf %a_8, %a_8 : tensor<32x32xf16> loc(#loc7)
    %3 = "tt.reduce"(%2) <{axis = 1 : i32}> ({
    ^bb0(%arg3: f16 loc(callsite(#loc10 at #loc9)), %arg4: f16 loc(callsite(#loc10 at #loc9))):
      %5 = arith.addf %arg3, %arg4 : f16 loc(#loc23)
      tt.reduce.return %5 : f16 loc(#loc21)
    }) : (tensor<32x32xf16>) -> tensor<32xf16> loc(#loc21)
#loc9 = loc("k.py":27:25)
#loc8 = loc("standard.py":314:12)
#loc11 = loc("standard.py":287:12)
#loc21 = loc(callsite(#loc8 at #loc9))
#loc23 = loc(callsite(#loc11 at #loc21))
"""
TTIR_FLOAT32_SUMS = """
    %acc = scf.for %s = %c0_i32 to %N step %c32_i32 iter_args(%acc_1 = %cst) -> (tensor<32x32xf32>)  : i32 {
      %p = tt.dot %a_11, %a_11, %cst : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32> loc(#loc31)
      %acc_12 = arith.truncf %p : tensor<32x32xf32> to tensor<32x32xf16> loc(#loc32)
      %acc_13 = tt.dot %acc_12, %a_11, %acc_1 : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32> loc(#loc33)
      %acc_15 = "tt.reduce"(%acc_14) <{axis = 1 : i32}> ({
        %acc_21 = arith.addf %acc_19, %acc_20 : f32 loc(#loc39)
        tt.reduce.return %acc_21 : f32 loc(#loc37)
      }) : (tensor<32x32xf32>) -> tensor<32xf32> loc(#loc37)
      %acc_18 = arith.addf %acc_13, %acc_17 : tensor<32x32xf32> loc(#loc36)
      %x = arith.addf %a_11, %a_11 : tensor<32x32xf16> loc(#loc36)
"""


@pytest.mark.parametrize("text, expected", [
    (TTIR_RUNNING_SUM_16, [("a running sum of tl.dot results is kept in float16", ("k.py", 11))]),
    (TTIR_DOT_ACC_16, [("tl.dot sums its products in float16", ("k.py", 20))]),
    (TTIR_SUM_16, [("tl.sum of a float16 block adds in float16", ("k.py", 27))]),
    (TTIR_FLOAT32_SUMS, []),  # float32 sums, a 16-bit dot operand, and a 16-bit add of loaded blocks: no sum
], ids=["running sum", "dot accumulator", "tl.sum", "float32 sums"])
def test_sums_in_16_bits_are_read_from_ttir(text, expected):
    assert ttir.sums_in_16_bits(text) == expected


def test_a_helper_that_ended_between_two_gradings_is_started_again(tmp_path, monkeypatch):
    """A grading that ends kills every process below the judge, and in the tests (or a notebook) the judge's process
    holds the compile helper too: the next request starts a fresh one instead of failing closed on a dead pipe."""
    import os
    import signal

    from helpers import ROOT, grade_file

    from grader.worker import gpu_compile

    assert grade_file(1, ROOT / "solutions" / "p01_add.py", first_failure=True).status == "passed"
    if gpu_compile._helper is not None:
        os.kill(gpu_compile._helper.process.pid, signal.SIGKILL)
        gpu_compile._helper.process.wait()
    monkeypatch.setattr(gpu_compile, "_outcomes", {})
    monkeypatch.setenv("GRADER_COMPILE_CACHE", str(tmp_path / "cache"))  # nothing cached: the helper is asked
    result = grade_file(2, ROOT / "solutions" / "p02_outer_add.py", first_failure=True)
    assert result.status == "passed", [c.message for c in result.cases if not c.passed]


# -- a compile that does not end: the kernel's size, named as such ----------------------------------------

_UNROLLED = """    pid = tl.program_id(0)
    if pid < 0:  # never taken, but compiled: the compiler unrolls the loop in full
        for i in tl.static_range(200000):
            pid += 0
"""


def test_a_compile_that_does_not_end_is_a_timeout_that_names_the_compile(tmp_path, monkeypatch):
    """Review 18: a tl.static_range of 200,000 steps in a branch never taken failed every case after minutes, as "does
    a loop never end": the case's CPU limit counts the compile helper. The compile's wait is now the case's time
    (and COMPILE_GRACE): a timeout that names the compile and tl.range, the busy helper killed, and the next
    grading compiles on a fresh one."""
    from helpers import ROOT

    monkeypatch.setattr(gpu_compile, "COMPILE_GRACE", 1.0)
    monkeypatch.setenv("GRADER_COMPILE_CACHE", str(tmp_path / "cache"))
    text = solution_text(registry.find(1)).replace("    pid = tl.program_id(0)\n", _UNROLLED, 1)
    assert text.count("static_range(200000)") == 1
    result = grade_text(1, text, tmp_path, timeout=1)
    case = result.cases[0]
    assert (case.reason, result.status) == ("timeout", "failed"), (case.reason, case.message)
    assert "stopped after 2 s of CPU time: the GPU compile of add_kernel did not finish" in case.message, case.message
    assert "tl.static_range" in case.message and "use tl.range" in case.message, case.message
    assert all(c.message.startswith("not run") for c in result.cases[1:])  # a timeout ends the puzzle
    assert gpu_compile._helper is None and not gpu_compile._started  # killed, and nothing of it compiled ahead
    assert grade_file(1, ROOT / "solutions" / "p01_add.py", first_failure=True).status == "passed"


def test_a_compiles_timeout_comes_before_the_judges():
    """The judge stops a case's processes (the helper among them) after its limit and GRACE of CPU: the compile's own
    timeout, which says what took the time, must come first."""
    from grader.judge import processes

    assert gpu_compile.case_budget(30.0).seconds == 30.0 + gpu_compile.COMPILE_GRACE < 30.0 + processes.GRACE


def test_a_compile_started_ahead_that_does_not_end_is_a_timeout(monkeypatch):
    """A compile started ahead is asked with its case's wait; its timeout reaches the check as the same timeout, and
    the other compiles started ahead for the grading are dropped."""
    monkeypatch.setattr(gpu_compile, "_outcomes", {})
    monkeypatch.setattr(gpu_compile, "_started", {})
    waits = []

    def too_long(request, key, budget, since=None):
        waits.append(budget)
        raise gpu_compile.CompileTimeout(budget.seconds)

    monkeypatch.setattr(gpu_compile, "_compile_now", too_long)
    monkeypatch.setattr(gpu_compile, "_spare_core", lambda: True)
    puzzle, launch = registry.find(1), _launch_of_ones()
    gpu_compile.start_ahead()
    gpu_compile.compile_ahead(puzzle, [launch], gpu_compile.case_budget(25))
    with pytest.raises(gpu_compile.CompileTimeout, match="stopped after 40 s of CPU time: the GPU compile of _ones"):
        gpu_compile.check(puzzle, [launch], gpu_compile.case_budget(25))
    assert waits[0].seconds == 25 + gpu_compile.COMPILE_GRACE and not gpu_compile._started


def _stand_in_helper(program: str):
    """A compile helper that runs `program` (a Python loop over its stdin) instead of compiling."""
    import selectors
    import subprocess
    import sys

    helper = gpu_compile._Helper.__new__(gpu_compile._Helper)
    helper.process = subprocess.Popen([sys.executable, "-c", program], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True)
    helper.selector = selectors.DefaultSelector()
    helper.selector.register(helper.process.stdout, selectors.EVENT_READ)
    return helper


def test_a_compile_slowed_by_a_busy_machine_is_not_a_timeout():
    """The compile's wait counts the helper's CPU time: a helper that answers after 2 s of wall time spent waiting
    (as on a loaded machine) is waited for, under a budget of 0.5 s."""
    helper = _stand_in_helper("import sys, time\nfor line in sys.stdin:\n    time.sleep(2)\n"
                              "    print('{\"slow\": true}', flush=True)")
    try:
        assert helper.ask({}, gpu_compile.Budget(0.5)) == {"slow": True}
    finally:
        helper.close(kill=True)


def test_a_cases_compiles_share_one_budget():
    """A case's compiles (a launch for sm_90 and sm_80, several launches) spend from one budget of CPU time, so
    that together they stay inside the judge's limit: two compiles of 0.4 s fit 1 s, a third of 5 s is stopped when the
    budget's last 0.2 s are spent."""
    helper = _stand_in_helper("import sys, time\nfor n, line in enumerate(sys.stdin):\n    t = time.process_time()\n"
                              "    while time.process_time() - t < (0.4 if n < 2 else 5):\n        pass\n"
                              "    print('{}', flush=True)")
    budget = gpu_compile.Budget(1.0)
    try:
        assert helper.ask({}, budget) == {} and helper.ask({}, budget) == {} and budget.left < 0.3
        with pytest.raises(gpu_compile.CompileTimeout):
            helper.ask({}, budget)
    finally:
        helper.close(kill=True)


def test_a_compiler_that_crashes_on_a_kernel_is_said_so():
    """Review 22: helpers inlined 2^16 times crash the compiler (SIGSEGV); the case fails, said as the compiler's
    crash on a kernel too big, not as the check's own trouble."""
    helper = _stand_in_helper("import os, signal, sys\nsys.stdin.readline()\nos.kill(os.getpid(), signal.SIGSEGV)")
    try:
        with pytest.raises(gpu_compile.CompilerCrashed, match="died of SIGSEGV"):
            helper.ask({}, gpu_compile.Budget(10))
    finally:
        helper.close(kill=True)


def test_a_compiler_crash_fails_the_case_with_advice_and_is_not_compiled_again(monkeypatch):
    """The advice; and the same functions in another configuration (the next case) fail at once, not after another
    crash of a fresh helper: review 22's file took 15 s of CPU per case, each crashing again."""
    asked = []

    def crashes(request, key, budget=None, since=None):
        asked.append(request["arch"])
        raise gpu_compile.CompilerCrashed("its process died of SIGSEGV")

    import torch

    monkeypatch.setattr(gpu_compile, "_compile_now", crashes)
    monkeypatch.setattr(gpu_compile, "_crashed", {})
    for size in (64, 128):
        launch = instrument.Launch(_ones.fn, {"x_ptr": torch.zeros(size), "N0": size, "B0": size}, {}, (1,))
        problem = gpu_compile.check(registry.find(1), [launch])
        assert problem.startswith("the GPU compiler crashed while compiling _ones (its process died of SIGSEGV)")
        assert "helpers that call helpers many levels deep" in problem and "could not run" not in problem
    assert asked == [90]  # B0 differs, so the second case's request differs: not compiled, the crash remembered


# -- compiling ahead: the helper compiles while the interpreter runs --------------------------------------

@triton.jit
def _ones(x_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    tl.store(x_ptr + offsets, 1.0, mask=offsets < N0)


def _launch_of_ones():
    import torch

    return instrument.Launch(_ones.fn, {"x_ptr": torch.zeros(64), "N0": 64, "B0": 32}, {}, (2,))


def test_a_compile_started_ahead_is_the_one_the_check_takes(tmp_path, monkeypatch):
    """compile_ahead hands the launch to the helper on a thread and returns; check waits for that outcome instead of
    asking again (the helper is asked once per target), and an outcome the thread got is the same verdict."""
    import threading

    monkeypatch.setattr(gpu_compile, "_outcomes", {})
    monkeypatch.setattr(gpu_compile, "_started", {})
    monkeypatch.setenv("GRADER_COMPILE_CACHE", str(tmp_path / "cache"))  # nothing cached: the helper is asked
    asked, release = [], threading.Event()
    compile_now = gpu_compile._compile_now

    def noted(request, key, *rest):
        asked.append(threading.current_thread().name)
        release.wait(60)  # still compiling when compile_ahead has returned
        return compile_now(request, key, *rest)

    monkeypatch.setattr(gpu_compile, "_compile_now", noted)
    monkeypatch.setattr(gpu_compile, "_spare_core", lambda: True)  # whatever the machine's load
    puzzle, launch = registry.find(1), _launch_of_ones()
    gpu_compile.start_ahead()
    gpu_compile.compile_ahead(puzzle, [launch])
    assert len(gpu_compile._started) == len(puzzle.gpu_archs) and not gpu_compile._outcomes
    release.set()
    assert gpu_compile.check(puzzle, [launch]) is None
    assert asked == ["gpu-compile-ahead"] * len(puzzle.gpu_archs), asked
    assert not gpu_compile._started and gpu_compile.dot_lines([launch]) == set()


def test_a_launchers_compiles_share_its_cases_budget(monkeypatch, tmp_path):
    """On the practice path (a launcher of the learner's own) the compiles started launch by launch and the check
    after the run spend from one budget, the case's, as kernel-only grading's do: two launches of 40 s of compile
    each must not reach the judge's limit before the compile's own timeout (the eleventh session's last read)."""
    budgets = []
    ahead, checked = gpu_compile.compile_ahead, gpu_compile.check

    def noted_ahead(puzzle, launches, budget=None):
        budgets.append(("ahead", budget))
        return ahead(puzzle, launches, budget)

    def noted_check(puzzle, launches, budget=None):
        budgets.append(("check", budget))
        return checked(puzzle, launches, budget)

    monkeypatch.setattr(gpu_compile, "compile_ahead", noted_ahead)
    monkeypatch.setattr(gpu_compile, "check", noted_check)
    twice = solution_text(registry.find(1)).replace(
        "    add_kernel[(triton.cdiv(n0, B0),)](x, y, z, n0, B0=B0)\n",
        "    add_kernel[(triton.cdiv(n0, B0),)](x, y, z, n0, B0=B0)\n"
        "    add_kernel[(triton.cdiv(n0, B0 // 2),)](x, y, z, n0, B0=B0 // 2)\n")
    grade_text(1, twice, tmp_path, own_launcher=True, first_failure=True)
    kinds = [kind for kind, _ in budgets]
    assert kinds[:3] == ["ahead", "ahead", "check"], kinds  # the first case: a compile per launch, then the check
    first_case = {id(budget) for _, budget in budgets[:3]}
    assert len(first_case) == 1 and budgets[0][1] is not None, budgets[:3]
    assert budgets[0][1].seconds == gpu_compile.case_budget(env.DEFAULT_TIMEOUT).seconds


def test_kernel_only_checks_before_and_after_the_run_share_the_cases_budget(monkeypatch, tmp_path):
    """Kernel-only grading compiles a case's kernels before it runs them and checks them again after the run (from
    the cache): both spend from the case's one budget."""
    budgets = []
    checked = gpu_compile.check

    def noted_check(puzzle, launches, budget=None):
        budgets.append(budget)
        return checked(puzzle, launches, budget)

    monkeypatch.setattr(gpu_compile, "check", noted_check)
    grade_text(1, solution_text(registry.find(1)), tmp_path, first_failure=True)
    assert len(budgets) >= 2 and budgets[0] is not None and budgets[0] is budgets[1], budgets[:2]


def test_a_compile_ahead_that_fails_fails_the_case(monkeypatch):
    """What went wrong on the compiling thread (a helper that died) reaches the check: the case fails closed."""
    monkeypatch.setattr(gpu_compile, "_outcomes", {})
    monkeypatch.setattr(gpu_compile, "_started", {})

    def dies(request, key, *rest):
        raise RuntimeError("the compile helper exited with status -9")

    monkeypatch.setattr(gpu_compile, "_compile_now", dies)
    monkeypatch.setattr(gpu_compile, "_spare_core", lambda: True)
    puzzle, launch = registry.find(1), _launch_of_ones()
    gpu_compile.start_ahead()
    gpu_compile.compile_ahead(puzzle, [launch])
    problem = gpu_compile.check(puzzle, [launch])
    assert problem is not None and problem.startswith("the GPU compile check could not run"), problem
    assert "the compile helper exited with status -9" in problem, problem


def test_sizes_and_strides_are_compiled_by_type_and_constexprs_by_value():
    """Two launches that differ only in a run-time size ask for one compile (the JIT compiles such a parameter by
    its type); a constexpr keeps its value, and a 1 stays the constexpr a GPU's JIT makes of it."""
    import torch

    def request(**bound):
        return gpu_compile._request(instrument.Launch(_ones.fn, {"x_ptr": torch.zeros(64), **bound}, {}, (2,)), 90)

    assert request(N0=64, B0=32) == request(N0=1000, B0=32)
    assert request(N0=64, B0=32)["args"]["N0"] == ["type", "i32"]
    assert request(N0=2 ** 40, B0=32)["args"]["N0"] == ["type", "i64"]
    assert request(N0=64, B0=32) != request(N0=64, B0=64)
    assert request(N0=1, B0=32)["args"]["N0"] == ["constexpr", ["value", 1]]


def test_a_constexpr_sent_by_type_is_not_compiled_without_its_value(monkeypatch, tmp_path):
    """Should the grading process and the helper disagree on which parameters are constexprs, the helper does not
    compile a constexpr it was given no value for: the case fails closed."""
    import torch

    monkeypatch.setattr(gpu_compile, "_outcomes", {})
    monkeypatch.setenv("GRADER_COMPILE_CACHE", str(tmp_path / "cache"))
    launch = instrument.Launch(_ones.fn, {"x_ptr": torch.zeros(64), "N0": 64, "B0": 32}, {}, (2,))
    sent = gpu_compile._request

    def by_type(launch, arch):
        asked = sent(launch, arch)
        asked["args"]["B0"] = ["type", "i32"]
        return asked

    monkeypatch.setattr(gpu_compile, "_request", by_type)
    problem = gpu_compile.check(registry.find(1), [launch])
    assert problem is not None and problem.startswith("the GPU compile check could not run"), problem
    assert "B0 is a tl.constexpr here and a run-time value in the grading process" in problem, problem


def test_the_puzzles_that_may_make_descriptors_are_those_whose_launcher_sets_an_allocator():
    """A kernel that makes tensor descriptors needs global scratch memory from triton's allocator on a GPU: the
    compile check allows it where `Puzzle.allocator` says the puzzle's launcher sets one (triton.set_allocator)."""
    for puzzle in registry.PUZZLES:
        assert puzzle.allocator == ("triton.set_allocator(" in solution_text(puzzle)), puzzle.module
    result = grade_file(1, KERNELS / "cheating" / "p01_descriptor_without_an_allocator.py", first_failure=True)
    assert failed_case(result).reason == "gpu_compile", report(result)
    assert "bytes of global scratch memory" in failed_case(result).message, report(result)
