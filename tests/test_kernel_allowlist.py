"""Kernel-only grading takes Triton and nothing else: a kernel that reaches for Python is refused before anything
compiles or runs it, with a message naming the line; a hostile file is refused in a line, fast.

Each trick is an edit of puzzle 1's lesson solution (a line in its kernel, at module level, or in its signature),
read as the judge reads a submission (``grader.judge.submission.kernel_job``). The last tricks in the table are holes
a review found open (code run at compile time or at import, a kernel that is one thing on the GPU and another in
the interpreter); the end-to-end tests show they no longer run anything.
"""

import json
import time
from dataclasses import dataclass

import pytest
from helpers import failed_case, grade_text, lesson_text, requires_interpreter, run_cli

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
          signature=("    N0,  # number of elements", "    N0, tl,  # number of elements")),
    Trick("a constant named tl", "leak = tl.bit_length()", "tl: a constant or a @triton.jit function may not take "
                                                          "the name of an import", module="tl = 5"),
    Trick("a @triton.jit function named tl", "leak = tl.fn", "tl: a constant or a @triton.jit function may not "
          "take the name of an import", module="@triton.jit\ndef tl(v):\n    return v\n"),
]


@pytest.mark.puzzle1
@pytest.mark.parametrize("trick", TRICKS, ids=lambda t: t.what)
def test_a_kernel_reaching_past_triton_is_refused_naming_it(trick):
    refusal = _refusal(trick.text())
    assert refusal.startswith("not graded: p01_add.py holds code a kernel may not run"), refusal
    assert trick.clue in refusal, refusal


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
