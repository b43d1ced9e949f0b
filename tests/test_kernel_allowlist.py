"""Kernel-only grading takes Triton and nothing else: a kernel that reaches for Python is refused before anything
compiles or runs it, with a message naming the line; a hostile file is refused in a line, fast.

Each trick is an edit of puzzle 1's lesson solution (a line in its kernel, at module level, or in its signature),
read as the judge reads a submission (``grader.judge.submission.kernel_job``). The last tricks in the table are holes
a review found open (code run at compile time or at import, a kernel that is one thing on the GPU and another in
the interpreter); the end-to-end tests show they no longer run anything.
"""

import json
import shutil
import time
from dataclasses import dataclass

import pytest
from helpers import KERNELS, failed_case, grade_file, grade_text, lesson_text, requires_interpreter, run_cli

from grader.course import registry
from grader.judge import submission

PUZZLE = registry.find(1)
ANCHOR = "    mask = offsets < N0  # the last block runs past N0\n"  # a kernel line the trick goes after
IMPORTS = "import triton.language as tl\n"  # module-level code goes after this line


@dataclass(frozen=True)
class Trick:
    """A cheat on puzzle 1's kernel, and the clue its refusal must hold."""
    what: str
    kernel: str  # lines added to the kernel's body ("" for none)
    clue: str
    module: str = ""  # lines added at module level, after the imports
    signature: tuple[str, str] = ("", "")  # an edit of the kernel's signature (old, new)

    def text(self) -> str:
        text = lesson_text(PUZZLE)
        assert text.count(ANCHOR) == 1 and text.count(IMPORTS) == 1, "puzzle 1's solution no longer has its anchors"
        body = "".join(f"    {line}\n" for line in self.kernel.splitlines())
        text = text.replace(ANCHOR, ANCHOR + body).replace(IMPORTS, IMPORTS + self.module + "\n" * bool(self.module))
        old, new = self.signature
        if old:
            assert text.count(old) == 1, f"the signature edit of {self.what!r} no longer applies"
            text = text.replace(old, new)
        return text


def _refusal(text: str | bytes) -> str:
    with pytest.raises(submission.Refused) as refused:
        submission.kernel_job(PUZZLE, text, "p01_add.py")
    return str(refused.value)


TRICKS = [
    # attribute chains out of Triton's values
    Trick("__class__ of a parameter", "leak = x_ptr.__class__", ".__class__: attributes starting with _"),
    Trick("__globals__ of a tl function", "leak = tl.load.__globals__", ".__globals__: attributes starting with _"),
    Trick("the module's __builtins__", "leak = __builtins__", "the name __builtins__: names starting with _"),
    Trick("__subclasses__ of a constexpr's class", "leak = B0.value.__class__.__subclasses__()",
          ".__subclasses__: attributes starting with _"),
    Trick("a format string reading attributes", 'leak = "{0.__class__}".format(x_ptr)',
          ".format: not an attribute of a Triton block"),
    Trick("x.handle.data: the interpreter's array", "leak = x_ptr.handle.data",
          ".handle: not an attribute of a Triton block"),
    Trick("a method of a constexpr's value", "leak = B0.bit_length()", ".bit_length: not an attribute of a Triton"),
    # modules triton.language imports, and triton outside triton.language
    Trick("tl.core.builtins", "leak = tl.core.builtins", "tl.core.builtins: a kernel reaches triton.language only"),
    Trick("tl.core.inspect", "leak = tl.core.inspect", "tl.core.inspect: a kernel reaches triton.language only"),
    Trick("tl.extra.pkgutil", "leak = tl.extra.pkgutil", "tl.extra.pkgutil: a kernel reaches triton.language only"),
    Trick("triton.runtime", "leak = triton.runtime", "triton.runtime: a kernel reaches triton.language only"),
    Trick("triton.knobs", "leak = triton.knobs", "triton.knobs: a kernel reaches triton.language only"),
    # writes
    Trick("an attribute write on tl", "tl.load = tl.store", "an assignment to .load: a kernel writes memory with"),
    Trick("an attribute write on a value", "x_ptr.handle = y_ptr", "an assignment to .handle"),
    # Python that Triton would evaluate as Python
    Trick("a lambda", "double = lambda v: v + v", "lambda (a kernel holds Triton code only"),
    Trick("a comprehension", "blocks = [b for b in range(2)]", "listcomp (a kernel holds Triton code only"),
    Trick("a nested def", "def helper():\n    pass", "a function defined inside a kernel"),
    Trick("global", "global leak\nleak = 1", "global (a kernel holds Triton code only"),
    Trick("an import in a kernel", "import os", "import (a kernel holds Triton code only"),
    Trick("try", "try:\n    pid = 1\nexcept Exception:\n    pid = 0", "try (a kernel holds Triton code only"),
    Trick("with", "with B0:\n    pid = 1", "with (a kernel holds Triton code only"),
    Trick("getattr", 'leak = getattr(x_ptr, "dtype")', "the name getattr: a kernel reads its parameters"),
    Trick("eval", 'leak = eval("1")', "the name eval: a kernel reads its parameters"),
    Trick("open", 'leak = open("/etc/passwd")', "the name open: a kernel reads its parameters"),
    # keywords Triton fills in itself
    Trick("_semantic=", "leak = tl.program_id(0, _semantic=None)", "the keyword _semantic=: names starting with _"),
    Trick("_builder=", "leak = tl.program_id(0, _builder=None)", "the keyword _builder=: names starting with _"),
    # leaving Triton
    Trick("inline assembly", 'leak = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [offsets], '
                             "dtype=tl.int32, is_pure=True, pack=1)",
          "tl.inline_asm_elementwise: inline assembly is not graded"),
    # module-level values a kernel reads
    Trick("numpy", "leak = np.float32", "the name np: np runs on the host, not in a kernel",
          module="import numpy as np"),
    Trick("a computed global", "leak = SCALE", "the name SCALE: a module-level value that is not a literal",
          module="SCALE = 2 ** 3"),
    Trick("a plain Python function", "leak = helper(x_ptr)", "the name helper: a plain Python function",
          module="def helper(v):\n    return v"),
    # holes found in review, closed in grader/judge/submission.py
    Trick("inline assembly through a local", "asm = tl.inline_asm_elementwise",
          "tl.inline_asm_elementwise: inline assembly is not graded"),
    Trick("inline assembly through tl.core", "asm = tl.core.inline_asm_elementwise",
          "tl.core.inline_asm_elementwise: inline assembly is not graded"),
    Trick("inline assembly imported by another name", "leak = asm", "asm: inline assembly is not graded",
          module="from triton.language import inline_asm_elementwise as asm"),
    Trick("an external library", "leak = tl.core.extern_elementwise",
          "tl.core.extern_elementwise: calls into an external library are not graded"),
    Trick("getattr named as a local after its use", 'leak = getattr(B0, "real")\ngetattr = 0',
          "a local named getattr: Triton reads the builtin getattr until the local is assigned"),
    Trick("print named as a loop variable", "for print in range(2):\n    pid = print",
          "a local named print: Triton reads the builtin print"),
    Trick("a builtin in a parameter's annotation", "open = 0", "the name open: an annotation reads tl and module",
          signature=("    N0,  # number of elements", "    N0: open('/etc/passwd'),  # number of elements")),
    Trick("target_info: a constexpr the GPU and the interpreter answer differently",
          "if tl.target_info.is_cuda():\n    pid = 0", "target_info answers is_cuda() with True"),
    Trick("target_info imported", "leak = is_cuda()", "is_cuda: target_info answers is_cuda() with True",
          module="from triton.language.target_info import is_cuda"),
    Trick("tl.str_to_ty, which evaluates its argument",
          'leak = tl.str_to_ty("tensordesc<fp32[16],1>".value, None)',
          "tl.str_to_ty: a helper of Triton's compiler, not a kernel function"),
    Trick("a compiler helper's Python function", "leak = tl.sum.fn",
          "tl.sum.fn: a helper of Triton's compiler, not a kernel function"),
    Trick("Triton's semantic module", "leak = tl.semantic", "tl.semantic: Triton's compiler internals"),
    Trick("a local named tl, so that tl.format is a string's", 'tl = "{0.__class__}"\nleak = tl.format(x_ptr)',
          "the name tl: a parameter or local may not take the name of an import"),
    Trick("a parameter named tl", "", "the name tl: a parameter or local may not take the name of an import",
          signature=("    B0: tl.constexpr,  # elements", "    B0: tl.constexpr, tl=0,  # elements")),
    Trick("a constant named tl", "leak = tl.bit_length()", "tl: a constant or a @triton.jit function may not take "
                                                          "the name of an import", module="tl = 5"),
    Trick("a @triton.jit function named tl", "leak = tl.fn", "tl: a constant or a @triton.jit function may not "
          "take the name of an import", module="@triton.jit\ndef tl(v):\n    return v\n"),
    # issue 26, class 1: whatever expression chooses a constexpr branch, it cannot tell the interpreter from the GPU
    Trick("identity of two names for tl.load", "if tl.load is tl.core.load:\n    pid = 1",
          "`tl.load is tl.core.load`: a kernel tests identity against None only"),
    Trick("identity of a constexpr and a small int", "if B0 is not 16:\n    pid = 1",
          "`B0 is not 16`: a kernel tests identity against None only"),
    Trick("equality of tl functions", "if tl.load == tl.store:\n    pid = 1",
          "tl.load used as a value: a kernel calls tl's functions"),
    Trick("a tl function held in a local", "loader = tl.load", "tl.load used as a value"),
    Trick("a tl function passed", "pid = tl.minimum(pid, tl.maximum)", "tl.maximum used as a value"),
    Trick("a tl function imported by name, compared", "if load != tl.store:\n    pid = 1",
          "load used as a value", module="from triton.language import load"),
    Trick("tl's module held in a local", "lang = tl", "tl used as a value"),
    Trick("a builtin compared", "if print == max:\n    pid = 1", "print used as a value: a kernel calls the "
          "builtins"),
    Trick("tl.core.load", "leak = tl.core.load(x_ptr)", "tl.core.load: triton.language.core is Triton's internals"),
    Trick("tl.standard", "leak = tl.standard.sum(B0)", "triton.language.standard is Triton's internals"),
    Trick("tl.core imported", "leak = core.load(x_ptr)", "triton.language.core is Triton's internals",
          module="import triton.language.core as core"),
    Trick("a function of tl.core imported by name", "leak = load(x_ptr)", "triton.language.core is Triton's "
          "internals", module="from triton.language.core import load"),
    Trick("a partial's keywords", "leak = tl.load.keywords", "tl.load.keywords: an attribute of "
          "triton.language.load"),
    Trick("a function's func", "leak = tl.cdiv.func", "tl.cdiv.func: an attribute of triton.language.cdiv"),
    Trick("** arguments", "leak = tl.load(x_ptr, **B0)", "**B0: pass each keyword by its name"),
    Trick("a dunder name", "__leak = 1", "the name __leak: names starting with __ are not allowed"),
    Trick("a block's description", 'leak = "%s" % x_ptr', "'%s': a string in a kernel is a call's argument"),
    Trick("a string constant as an operand", "leak = FORMAT % x_ptr", "FORMAT: a string in a kernel is a call's "
          "argument", module='FORMAT = "%s"'),
    Trick("a string local", 'text = "a"', "'a': a string in a kernel is a call's argument"),
]

# Forms that are Triton, taken since issue 26 (class 7 and 8): each must stay taken.
TAKEN = [
    Trick("identity against None", "if B0 is not None:\n    pid = pid + 0", ""),
    Trick("a dtype compared with ==", "if x_ptr.dtype.element_ty == tl.float32:\n    pid = pid + 0", ""),
    Trick("a debug print", 'print("pid", pid)', ""),
    Trick("a message and an option", 'tl.static_assert(B0 > 0, "B0 is a block")\n'
          'x = tl.load(x_ptr + pid, eviction_policy="evict_last")', ""),
    Trick("a string constant as an option", "x = tl.load(x_ptr + pid, eviction_policy=POLICY)", "",
          module='POLICY = "evict_last"'),
    Trick("a string statement", "'the offsets are set'", ""),
    Trick("tl.device_print", 'tl.device_print("pid", pid)', ""),
    Trick("a local with a leading _", "_pid = pid\npid = _pid", ""),
    Trick("a helper with a leading _", "pid = _same(pid)", "", module="@triton.jit\ndef _same(v):\n    return v\n"),
    Trick("a constant with a leading _", "pid = pid * _ONE", "", module="_ONE = 1"),
    Trick("a parameter of its own with a default, after the puzzle's", "pid = pid * ONE", "",
          signature=("    B0: tl.constexpr,  # elements", "    B0: tl.constexpr, ONE: tl.constexpr = 1,  # elements")),
    Trick("tl.math and libdevice", "pid = pid + 0 * tl.math.exp(0.0).to(tl.int32) + "
          "0 * tl.extra.cuda.libdevice.exp(0.0).to(tl.int32)", ""),
]


@pytest.mark.puzzle1
@pytest.mark.parametrize("trick", TRICKS, ids=lambda t: t.what)
def test_a_kernel_reaching_past_triton_is_refused_naming_it(trick):
    refusal = _refusal(trick.text())
    assert refusal.startswith("not graded: p01_add.py holds code a kernel may not run"), refusal
    assert trick.clue in refusal, refusal


@pytest.mark.puzzle1
@pytest.mark.parametrize("trick", TAKEN, ids=lambda t: t.what)
def test_triton_a_kernel_may_write_is_taken(trick):
    job, kernels = submission.kernel_job(PUZZLE, trick.text(), "p01_add.py")
    assert kernels.started and job["text"].strip()


@pytest.mark.puzzle1
@pytest.mark.parametrize("decorator", ['@triton.jit(do_not_specialize=["N0"])',
                                       '@triton.jit(do_not_specialize_on_alignment=["x_ptr"], noinline=False)',
                                       "@triton.jit(debug=True)"])
def test_triton_jit_with_arguments_is_taken(decorator):
    """Legal Triton was refused as "defines no @triton.jit function" (issue 26, class 7)."""
    text = lesson_text(PUZZLE).replace("@triton.jit\n", decorator + "\n")
    job, kernels = submission.kernel_job(PUZZLE, text, "p01_add.py")
    assert kernels.kernels == ("add_kernel",) and decorator in job["text"]


@pytest.mark.puzzle1
@pytest.mark.parametrize("decorator, clue", [
    ("@triton.jit(repr=print)", "@triton.jit(repr=...): a kernel may take do_not_specialize="),
    ('@triton.jit(do_not_specialize=[__import__("os")])', "@triton.jit(do_not_specialize=...)"),
    ("@triton.jit(print)", "@triton.jit takes keyword arguments only"),
    ("@triton.jit(**options)", "@triton.jit(**...)"),
])
def test_triton_jit_arguments_that_run_python_are_refused(decorator, clue):
    """The decorator runs when the worker imports the kernels: only literal options may go in it."""
    text = lesson_text(PUZZLE).replace("@triton.jit\n", decorator + "\n")
    line = text.splitlines().index(decorator) + 1
    assert f"p01_add.py:{line}: {clue}" in _refusal(text)


@pytest.mark.puzzle1
def test_an_extra_parameter_is_named():
    """It failed every case with "'NoneType' object has no attribute 'dtype'" (issue 26, class 8)."""
    n0 = "    N0,  # number of elements\n"
    text = lesson_text(PUZZLE).replace(n0, n0 + "    stride,\n")
    refusal = _refusal(text)
    assert "the parameters of add_kernel differ from the puzzle's kernel's (stride is not the puzzle's): the " \
        "puzzle's launcher passes (x_ptr, y_ptr, z_ptr, N0, B0)" in refusal, refusal
    dropped = _refusal(lesson_text(PUZZLE).replace("    N0,  # number of elements\n", ""))
    assert "(it lacks N0)" in dropped, dropped


@pytest.mark.puzzle1
def test_a_def_line_hidden_in_a_kernels_string_is_refused():
    """Triton's interpreter starts a kernel at the last line of its source that starts with `def ` (a docstring's
    too) and runs from there, so a kernel whose docstring held a second `def` ran unchecked code while the allowlist
    and the compile check read the first (found by an attacker's review: an import and a shell command ran)."""
    hidden = Trick("a def in a docstring", '"""\ndef add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):\n"""',
                   "")
    refusal = _refusal(hidden.text())
    assert "a line inside a kernel that starts with `def ` (in a string too)" in refusal, refusal


@pytest.mark.puzzle1
@pytest.mark.parametrize("first, clue", [
    ("def\tadd_kernel(", "write the first line of add_kernel as `def add_kernel(...`"),
    ("def \\\nadd_kernel(", "write the first line of add_kernel as `def add_kernel(...`"),
    ("def  add_kernel(", "write the first line of add_kernel as `def add_kernel(...`"),
], ids=["a tab after def", "the name on the next line", "two spaces"])
def test_a_kernel_whose_first_line_triton_reads_otherwise_is_refused(first, clue):
    """The interpreter finds a kernel's start by a line starting with "def " and the compiler by "def name(": with a
    tab after def the interpreter ran the block's last line (a string's inside) as the kernel, and with the name on
    the next line the compile check could not read the function and was skipped (an attacker's review)."""
    text = lesson_text(PUZZLE)
    assert text.count("def add_kernel(") == 1
    assert clue in _refusal(text.replace("def add_kernel(", first))


@pytest.mark.puzzle1
def test_a_decorator_on_two_lines_is_refused():
    text = lesson_text(PUZZLE).replace("@triton.jit\n", "@triton.\\\njit\n")
    assert "the decorator of add_kernel on more than one line" in _refusal(text)


@pytest.mark.puzzle1
@pytest.mark.parametrize("char", ["\x0c", "\u2028", "\x85"], ids=["form feed", "line separator", "next line"])
def test_a_line_break_that_python_does_not_count_is_refused(char):
    """str.splitlines() breaks lines at these and Python does not: the lines the allowlist keeps, by their numbers,
    would not be the lines the worker imports."""
    text = Trick("odd line break", "", "", module=f'NOTE = "a{char}b"').text()
    assert "breaks a line for some readers of a file and not for Python" in _refusal(text)


@pytest.mark.puzzle1
def test_the_lesson_solution_itself_is_taken():
    """Control: the tricks' base is a kernel kernel-only grading takes."""
    job, kernels = submission.kernel_job(PUZZLE, Trick("nothing", "", "").text(), "p01_add.py")
    assert kernels.kernels == ("add_kernel",) and kernels.started and kernels.notes == ()


@pytest.mark.puzzle1
def test_a_line_holding_a_constant_and_other_code_is_refused():
    """`EPS = 1e-6; import os` would carry the second statement into the module the worker imports."""
    for line in ('EPS = 1e-6; __import__("os").getpid()', 'import os; EPS = 1e-6'):
        text = Trick("semicolon", "", "", module=line).text()
        number = text.splitlines().index(line) + 1
        refusal = _refusal(text)
        assert f"p01_add.py:{number}: this line holds a constant or a triton import and other code" in refusal


@pytest.mark.puzzle1
def test_a_constant_with_an_annotation_that_computes_is_left_out():
    """Python evaluates a module-level annotation when it imports the module: `EPS: <expression> = 1e-6` is not a
    literal constant, so it stays out of what the worker imports (and a kernel reading it is refused)."""
    text = Trick("annotated", "", "", module='EPS: __import__("os").getpid() = 1e-6').text()
    job, kernels = submission.kernel_job(PUZZLE, text, "p01_add.py")
    assert "__import__" not in job["text"] and "EPS" not in job["text"]
    number = text.splitlines().index('EPS: __import__("os").getpid() = 1e-6') + 1
    assert any(note.startswith(f"not run: the code of p01_add.py outside its kernels (line {number})") for note in
               kernels.notes), kernels.notes
    read = Trick("annotated, read", "leak = EPS", "", module='EPS: __import__("os").getpid() = 1e-6')
    assert "the name EPS: a module-level value that is not a literal" in _refusal(read.text())
    plain = Trick("constexpr", "leak = EPS", "", module="EPS: tl.constexpr = 1e-6").text()
    assert "EPS: tl.constexpr = 1e-6" in submission.kernel_job(PUZZLE, plain, "p01_add.py")[0]["text"]


@pytest.mark.puzzle1
def test_an_autotuned_kernel_is_refused_with_the_reason():
    text = lesson_text(PUZZLE).replace("@triton.jit\n", '@triton.autotune(configs=[], key=["N0"])\n@triton.jit\n')
    line = text.splitlines().index('@triton.autotune(configs=[], key=["N0"])') + 1
    refusal = _refusal(text)
    assert f"p01_add.py:{line}: @autotune on add_kernel: the puzzle's launcher passes the block sizes" in refusal
    assert "`--own-launcher` grades your own launcher" in refusal


def _nested(opening: str, closing: str = "", depth: int = 10_000) -> bytes:
    return f"x = {opening * depth}1{closing * depth}\n".encode()


HOSTILE = {
    "larger than 1 MiB": (b"# padding\n" * 110_000, "bytes; a puzzle file is a few kB (the limit is 1,048,576)"),
    "not UTF-8": ("x = 'caf\xe9'\n".encode("latin-1"), "is not UTF-8 text (byte 8): save it as a Python file"),
    "a NUL byte": (b"x = 1\n\x00\n", "null bytes"),  # a SyntaxError since Python 3.11.4, a ValueError before
    "a syntax error": (b"import triton\n\ndef add(:\n", "p01_add.py:3: SyntaxError: invalid syntax"),
    "a syntax error on a megabyte line": (b"x = (" + b"1 +" * 300_000 + b"\n", "p01_add.py:1: SyntaxError"),
    "10,000 unary minuses": (_nested("-"), "cannot be parsed as Python"),
    "10,000 nested calls": (b"x = f" + b"()" * 10_000 + b"\n", "cannot be parsed as Python"),
    "10,000 nested brackets": (_nested("[", "]"), "SyntaxError: too many nested parentheses"),
    "100,000 additions": (b"x = 1" + b" + 1" * 100_000 + b"\n", "cannot be parsed as Python"),
    "deep but parseable": (_nested("-", depth=80), "nests expressions more than 60 deep"),
    # issue 26, class 5: Python parses a long hexadecimal literal, then refuses to print it (ast.dump raised)
    "a 5,000-digit integer": (b"import triton\nX = 0x" + b"f" * 5000 + b"\n", "p01_add.py:2: an integer literal of "
                                                                          "20,000 bits"),
    "a 5,000-digit decimal": (b"import triton\nX = " + b"7" * 5000 + b"\n", "SyntaxError: Exceeds the limit"),
    "a megabyte of tl chains": (b"import triton.language as tl\n" + b"tl.a.b.c.d\n" * 90_000,
                                "holds more than 50,000 pieces of code"),
    "no kernel": (b"import triton\nX = 1\n", "defines no @triton.jit function `add_kernel`, the kernel the puzzle's "
                                            "launcher launches (it defines no @triton.jit function)"),
}


@pytest.mark.puzzle1
@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_file_is_refused_in_a_line_and_fast(name):
    text, clue = HOSTILE[name]
    started = time.process_time()
    refusal = _refusal(text)
    assert time.process_time() - started < 10, "reading a hostile file must be quick"
    assert clue in refusal or name == "a NUL byte" and "cannot be parsed as Python: ValueError" in refusal, refusal
    assert len(refusal) < 400 and refusal.count("\n") <= 1, refusal  # one line (a SyntaxError quotes its line)


@pytest.mark.puzzle1
def test_a_kernel_named_otherwise_is_refused_naming_both():
    text = lesson_text(PUZZLE).replace("add_kernel", "my_add_kernel")
    refusal = _refusal(text)
    assert "defines no @triton.jit function `add_kernel`" in refusal and "(it defines my_add_kernel)" in refusal
    assert "Keep the puzzle's kernel names and parameters" in refusal


# -- end to end: what the holes did, they no longer do ------------------------------------------------------------

COMPILE_TIME_SHELL = (
    'getattr(getattr(getattr(getattr(tl.load, "__globals__"), "get")("__builtins__"), "get")("__import__")("os"),\n'
    '        "system")("touch {marker}")\n'
    'getattr = 0')
AT_IMPORT = 'EPS: __import__("os").system("touch {marker}") = 1e-6'
SEMICOLON = 'EPS = 1e-6; __import__("os").system("touch {marker}")'
STR_TO_TY = """tl.str_to_ty("tensordesc<fp32[16],__import__('os').system('touch {marker}')>".value, None)"""


@requires_interpreter
@pytest.mark.puzzle1
@pytest.mark.parametrize("kernel, module", [(COMPILE_TIME_SHELL, ""), ("", AT_IMPORT), ("", SEMICOLON),
                                            (STR_TO_TY, "")],
                         ids=["getattr at compile time", "an annotation at import", "a semicolon", "tl.str_to_ty"])
def test_a_submission_cannot_run_python_in_the_worker(kernel, module, tmp_path):
    """Each of these ran a shell command in the worker before it was closed (compiling the kernel, or importing the
    module of kernels), graded as `python -m grader 1 --file` grades; now nothing of them runs, and the kernel is
    graded or refused."""
    marker = tmp_path / "ran"
    trick = Trick("shell", kernel.format(marker=marker), "", module=module.format(marker=marker))
    path = tmp_path / "p01_add.py"
    path.write_text(trick.text())
    run = run_cli("1", "--file", str(path), "--json", timeout=300)
    assert not marker.exists(), "the submission ran a command in the worker"
    (result,) = json.loads(run.stdout)["results"]
    assert result["status"] == "passed" or result["cases"][0]["reason"] == "error", result


@requires_interpreter
@pytest.mark.puzzle1
def test_a_kernel_that_is_wrong_only_on_the_gpu_is_refused(tmp_path):
    """is_cuda() is True where the grader compiles for sm_90 and False in the interpreter: this kernel passed every
    case in the interpreter while the GPU's kernel stored zeros."""
    text = lesson_text(PUZZLE).replace(
        "    tl.store(z_ptr + offsets, x + y, mask=mask)\n",
        "    if tl.target_info.is_cuda():\n        tl.store(z_ptr + offsets, x * 0, mask=mask)\n"
        "    else:\n        tl.store(z_ptr + offsets, x + y, mask=mask)\n")
    case = failed_case(grade_text(PUZZLE, text, tmp_path))
    assert case.reason == "error" and "target_info answers is_cuda() with True" in case.message, case.message


# -- issue 26, class 5: the judge survives any file --------------------------------------------------------------

@pytest.mark.puzzle1
def test_thousands_of_tl_chains_import_nothing(monkeypatch):
    """2,000 distinct `tl.aN.b.c` chains in a branch never taken made the judge import every prefix of every chain
    (24 kB took 66 s). Now a chain is followed with getattr, never imported: the file is read, and taken (a name
    triton.language lacks is the compiler's to refuse, in a branch it never compiles)."""
    import importlib

    def no_import(name, *args):
        raise AssertionError(f"the judge imported {name} to read a kernel")

    chains = "".join(f"    tl.a{i}.b.c\n" for i in range(2_000))
    text = Trick("chains", "if B0 < 0:\n" + chains, "").text()
    assert len(text) > 24_000
    submission.kernel_job(PUZZLE, lesson_text(PUZZLE), "p01_add.py")  # triton itself is imported once, as ever
    monkeypatch.setattr(importlib, "import_module", no_import)
    job, kernels = submission.kernel_job(PUZZLE, text, "p01_add.py")
    assert kernels.started and "tl.a1999.b.c" in job["text"]


@pytest.mark.puzzle1
def test_whatever_breaks_the_reading_of_a_file_is_a_verdict_on_it(monkeypatch, tmp_path):
    """No file makes the judge raise: trouble reading one (here a RecursionError planted in the reading) fails that
    puzzle with the reason, as a refusal does."""
    from grader.judge import runner

    def breaks(puzzle, text, name):
        raise RecursionError("maximum recursion depth exceeded")

    path = tmp_path / "p01_add.py"
    path.write_text(lesson_text(PUZZLE))
    monkeypatch.setattr(submission, "kernel_job", breaks)
    job, (case,), notes = runner.read_submission(PUZZLE, "puzzles", str(path))
    assert job is None and not case.passed and case.reason == "error", case
    assert case.message.startswith("not graded: the grader could not read p01_add.py (RecursionError: maximum "
                                   "recursion depth exceeded); no kernel of it ran"), case.message


@requires_interpreter
@pytest.mark.puzzle1
def test_a_file_that_crashed_the_judge_gets_a_line_strict_json_and_a_gradescope_part(tmp_path):
    """The 5,000-digit literal ended the judge in a traceback: no --json, no --gradescope file."""
    path = tmp_path / "p01_add.py"
    shutil.copy(KERNELS / "cheating" / "p01_huge_integer.py", path)
    part = tmp_path / "part.json"
    run = run_cli("1", "--file", str(path), "--json", "--gradescope", str(part), timeout=300)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr[-2000:]
    (result,) = json.loads(run.stdout)["results"]
    assert result["status"] == "failed" and "an integer literal of 20,000 bits" in result["cases"][0]["message"]
    (test,) = json.loads(part.read_text())["tests"]
    assert test["score"] == 0 and "an integer literal of 20,000 bits" in test["output"], test
    shown = run_cli("1", "--file", str(path), timeout=300)
    assert "✗" in shown.stdout and "p01_add.py:16: an integer literal of 20,000 bits" in shown.stdout, shown.stdout


@requires_interpreter
@pytest.mark.puzzle1
def test_a_kernels_print_stays_out_of_the_report(tmp_path):
    """`print` in a kernel is legal Triton (a device print when compiled): the kernel is graded, its lines go to
    stderr, quoted, and --json stays strict (issue 26, class 7)."""
    run = run_cli("1", "--file", str(KERNELS / "right" / "p01_jit_options_and_print.py"), "--json", timeout=300)
    (result,) = json.loads(run.stdout)["results"]
    assert result["status"] == "passed", result
    assert "  | first block of z [" in run.stderr, run.stderr[-2000:]


# The issue's known-cheating and known-wrong kernels that the judge refuses (tests/expected_verdicts.py): each is
# refused for its reason, with its clue in the default report, before anything of it runs.
REFUSED_BY_THE_JUDGE = ["cheating/p01_load_is_core_load.py", "cheating/p01_load_equals_core_load.py",
                        "cheating/p01_block_is_a_small_int.py", "cheating/p01_dtype_identity.py",
                        "cheating/p01_through_tl_core.py", "cheating/p01_partial_and_double_star.py",
                        "cheating/p01_huge_integer.py", "wrong/p01_extra_stride.py",
                        "cheating/p01_describes_a_block.py"]


@pytest.mark.puzzle1
@pytest.mark.parametrize("path", REFUSED_BY_THE_JUDGE)
def test_issue_26s_kernels_are_refused_for_their_reason(path):
    from expected_verdicts import EXPECTED

    from grader.show import report

    reason, clue = EXPECTED[path]
    result = grade_file(PUZZLE, KERNELS / path)
    (case,) = result.cases
    assert case.reason == reason, case
    shown = report.format_result(result, "rerun", "replay")
    assert clue in shown, shown


def test_the_verdict_on_a_name_does_not_depend_on_an_interpreter_run_before(tmp_path):
    """In a process where the interpreter left tl.core.load patched (a stand-in lambda), the judge still reads
    tl.core.load as the tl function it stands for (grader.judge.allowlist._unpatched)."""
    import triton.language as tl

    from grader.judge import allowlist

    builtin = allowlist._unpatched(tl.core.load)  # the tests before may have left it patched already
    assert tl.core.is_builtin(builtin)
    stand_in = lambda *args, member=builtin, **kwargs: member(*args, **kwargs)  # noqa: E731 (as the interpreter's)
    stand_in.__module__ = "triton.runtime.interpreter"
    assert allowlist._unpatched(stand_in) is builtin
