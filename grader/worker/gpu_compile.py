"""The GPU compile check: every kernel a learner launches in the interpreter is also compiled for a GPU, on the CPU.

The interpreter runs a kernel as Python, so it accepts kernels the GPU compiler refuses: a scalar accumulator
(`acc = 0.0`) that becomes a block in a loop, a module-level float that is not a constexpr, a plain Python helper,
`tl.static_range` or `tl.arange` or `tl.zeros` with run-time sizes. And Python's `and` / `or` / `not` and the
builtins `max` / `min` / `abs` mean something else on a block in the interpreter than on the GPU. ``check`` finds
both kinds, so "Solved" in the interpreter also means "compiles on the GPU":

1. An AST check of every @triton.jit body the kernel reaches (``grader.worker.interpreter_only``, which states the
   rule; cheap, so it runs first): an `and` / `or` / `not`, or a builtin `max` / `min` / `abs`, on run-time values.
2. A compile for sm_90 and sm_80 (``Puzzle.gpu_archs``) with the signature and constexprs of the
   launch, through ``triton.compile``, stopped after TTGIR (triton's stage hook replaces the LLVM stages): every
   trap above fails in the front end or in TTIR / TTGIR passes (so does triton 3.6's OptimizeThreadLocality
   assertion), while LLIR, PTX and ptxas took 70% of the compile time. For sm_90 (``SHARED_MEMORY``) the compile
   goes on through the lowering to the LLVM dialect and stops before LLVM's own translation and -O3
   (``compile_helper._LoweredToLLVM``): float8 arithmetic fails only there (the eleventh review), and there shared
   memory is allocated, which a kernel must keep within the H200's 232,448 bytes per block or it cannot launch
   (puzzle 6 graded, every compile new, 2 cores: 5.2 s before, 5.3 s after). It runs in a helper process
   (``grader.worker.compile_helper``, which says why), started once per grading process. The grading process sends
   each function's source, file, `def` line and the globals it reads (encoded); the helper rebuilds them under the
   same file name and line numbers, so the compiler's lines and the TTIR's locations are the learner's. Advice for
   the known traps (``grader.worker.compiler_advice``) is keyed on substrings of the compiler's messages that triton
   3.6 and 3.9 share.
3. A cache by (sources, globals, signature, constexprs, options, target), in the grading process, so a puzzle pays
   one compile per distinct specialisation (about one per case); run-time numbers count by their type alone, as
   the helper compiles them (``_run_time_numbers``). Triton's disk cache is not used: it keys by
   source and line, not file, so a hit would bring back the TTIR locations of another file; the helper compiles
   afresh (TRITON_ALWAYS_COMPILE) into a scratch cache directory. Measured on the 2-core machine, shared with
   other jobs (load 2-4), fresh TRITON_CACHE_DIR, `time python -m grader --all --impl solutions`: 51 s (37.6 s
   user) before, 70 s (54 s user) after. The 231 compiles cost 16 s of CPU in the helper; to cubin they cost 51 s.
4. The tl.dot lines that survive compilation (``dot_lines``): the `tt.dot` ops left in the sm_90 TTIR (read by
   ``grader.worker.ttir``), each mapped through its `loc(...)` to the learner's file and line (a dot in an inlined
   @triton.jit helper maps to the helper's line). ``budgets.Dots`` counts only the multiply-adds of those lines, so a
   `tl.dot` whose result is never used earns nothing.

The check fails closed: a case passes only once its kernels compiled. When it cannot run (triton lacks the compile
API, a request it cannot encode, a helper that dies or cannot compile a one-line kernel), the case fails
with reason "gpu_compile" and a message that says the check could not run, as the grader's trouble rather than the
kernel's: a kernel it did not compile could be one thing in the interpreter and another on the GPU. The compiler's
verdict on the learner's kernel fails a case, and so does a kernel that reads a global no GPU kernel can use (a
numpy module, a Python object). A compile that does not end within the case's time limit and COMPILE_GRACE (the
helper's CPU time) is the kernel's size (a tl.static_range unrolled, a block of 100,000 elements): CompileTimeout, a
timeout that names the compile (before, the judge's CPU limit, which counts the helper, blamed a loop). Tested on
triton 3.6 and 3.9.
"""

from __future__ import annotations

import ast
import atexit
import functools
import inspect
import json
import os
import re
import selectors
import signal
import subprocess
import sys
import textwrap
import threading
import time
import weakref
from concurrent.futures import Future
from queue import SimpleQueue

from grader import env, paths, protocol
from grader.worker import compile_cache, compiler_advice, compose
from grader.worker.interpreter_only import parse_function, static_problems

ROOT = str(paths.ROOT)
DEFAULT_ARCHS = (90,)  # the H200
# Targets compiled on to the LLVM dialect, and the shared memory a block may have there (the H200's opt-in limit,
# cudaDevAttrMaxSharedMemoryPerBlockOptin; triton's launch raises OutOfResources past it). Other targets stop at TTGIR.
SHARED_MEMORY = {90: 232448}
HELPER_TIMEOUT = 120.0  # seconds for one compile, helper start included; a big kernel takes about 2
# CPU seconds a case's compile may take beyond the case's own limit: inside the judge's grace (processes.GRACE, 20 s),
# so that the compile's timeout, which names it, comes first; a 131,072-wide block takes 33 s (a cheat's budget verdict)
COMPILE_GRACE = 15.0
POLL = 0.5  # seconds between looks at the helper's CPU time while it compiles
_JIT_TYPES = ("InterpretedFunction", "JITFunction")
_ALLOWED_MODULES = ("math", "triton")  # modules a kernel may read that the helper may import (and their submodules)


class CompileTimeout(Exception):
    """Compiles that did not finish within the case's time (``Budget``, in the helper's CPU seconds): the kernel's
    size, not the check's trouble (tl.static_range unrolled in full); the case is a timeout (execute), and the helper
    is killed."""


class CompilerCrashed(RuntimeError):
    """The helper died of a signal while compiling a kernel: the compiler's crash on it (helpers inlined 2^16 times
    overflow its stack; the eleventh session's review 22), said as such, not as the check's trouble."""


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class Budget:
    """The helper's CPU seconds a case's compiles may take together (``case_budget``); each compile spends from it."""

    def __init__(self, seconds: float):
        self.seconds = self.left = seconds


class Unsupported(Exception):
    """A kernel the check cannot hand to the compiler: one that reads a global no GPU kernel can use fails its case;
    anything else (a torch dtype passed as an argument) fails it as the check's own trouble (``could_not_run``)."""


# -- what a kernel reads ------------------------------------------------------------------------------

def _jit_target(value):
    """The plain Python function under a @triton.jit object (interpreted or compiled), else None."""
    inner = getattr(value, "fn", None)
    return inner if type(value).__name__ in _JIT_TYPES and inspect.isfunction(inner) else None


def _function_key(fn) -> str:
    return f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}:{fn.__qualname__}"


# A grading asks for the same functions' sources and analyses once per launch and target: kept per code object,
# by identity (equal code objects may come from different texts; one compiled anew is another object), and per
# source text, as the analyses are pure. Puzzle 17's solution graded in-process: 33.1 million Python calls
# before (a fifth of its time in these analyses: 378 parses for 108 launches), 24.3 million after (cProfile).
_sources: dict[int, tuple[weakref.ref, tuple[str, int]]] = {}  # id(code) -> (the code, (source, def line))


def _source(fn) -> tuple[str, int]:
    """The function's source from its `def` (decorators dropped), dedented, and the file line of that `def`."""
    code = fn.__code__
    known = _sources.get(id(code))
    if known is not None and known[0]() is code:
        return known[1]
    lines, start = inspect.getsourcelines(fn)
    skip = next(i for i, line in enumerate(lines) if re.match(r"\s*def\s", line))
    found = textwrap.dedent("".join(lines[skip:])), start + skip
    if len(_sources) > 4096:
        _sources.clear()
    _sources[id(code)] = weakref.ref(code), found
    return found


@functools.lru_cache(maxsize=1024)
def _read_names(source: str) -> frozenset[str]:
    """Names the function reads that are not its own parameters or locals: its globals (and closure)."""
    tree = parse_function(source)
    args = tree.args
    local = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    local |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    return frozenset({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - local)


def _language_member(value) -> tuple[str, str] | None:
    """(module, name) where `value` is a function or class of triton.language (a name imported from it), else None."""
    module, name = getattr(value, "__module__", None), getattr(value, "__name__", None)
    if not (isinstance(module, str) and isinstance(name, str)) or \
            not (inspect.isfunction(value) or inspect.isclass(value)):
        return None
    if module != "triton.language" and not module.startswith("triton.language."):
        return None
    home = sys.modules.get(module)
    return (module, name) if home is not None and hasattr(home, name) else None


def _encode(value, functions: dict) -> list:
    """A global as JSON the helper can rebuild: ["jit", key], ["module", name], ["value", v], ..."""
    import triton.language as tl

    fn = _jit_target(value)
    if fn is not None:
        return ["jit", _collect(fn, functions)]
    if inspect.ismodule(value):
        if value.__name__.split(".")[0] not in _ALLOWED_MODULES:
            raise Unsupported(f"the kernel reads the module {value.__name__}")
        return ["module", value.__name__]
    if isinstance(value, tl.constexpr):
        return ["constexpr", _encode(value.value, functions)]
    if isinstance(value, tl.dtype):
        return ["dtype", value.name]
    if value is None or isinstance(value, (bool, int, float, str)):
        return ["value", value]
    if isinstance(value, (tuple, list)):
        return ["tuple", [_encode(v, functions) for v in value]]
    member = _language_member(value)
    if member is not None:  # `from triton.language import load, constexpr`: the compiler reads them as tl's
        return ["member", list(member)]
    if inspect.isfunction(value) or inspect.isbuiltin(value):
        return ["function", value.__name__]  # rebuilt as a stub: the compiler refuses it just the same
    raise Unsupported(f"the kernel reads a global of type {type(value).__name__}")


def _collect(fn, functions: dict) -> str:
    """Add `fn` and every @triton.jit function it reaches to `functions` (key -> description); return its key."""
    key = _function_key(fn)
    if key in functions:
        return key
    source, line = _source(fn)
    functions[key] = description = {"name": fn.__name__, "file": fn.__code__.co_filename, "line": line,
                                    "source": source, "globals": {}}
    scope = dict(fn.__globals__)
    scope.update(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__ or ())))
    literal = compose.LITERAL_CONSTANTS.get(fn.__module__, frozenset())  # read as constexprs on a GPU (compose)
    for name in sorted(_read_names(source)):
        if name in literal and isinstance(scope.get(name), (bool, int, float)):
            description["globals"][name] = ["constexpr", ["value", scope[name]]]
        elif name in scope:
            description["globals"][name] = _encode(scope[name], functions)
    return key


def _argument(value, functions: dict) -> list:
    """A launch argument: tensors and descriptors by their type string, everything else as a global."""
    if hasattr(value, "data_ptr") or type(value).__name__ == "TensorDescriptor":
        from triton.runtime.jit import mangle_type

        return ["type", mangle_type(value)]
    if type(value).__name__ == "dtype" and type(value).__module__ == "torch":
        raise Unsupported("a torch dtype was passed to the kernel")
    return _encode(value, functions)


def _run_time_numbers(launch, ones: set[str]) -> set[str]:
    """The parameters holding a bool, int or float that the compiler sees by type alone: not constexprs (triton's
    test, `"constexpr" in` the normalized annotation) and not a 1 the JIT specializes. The helper compiles them by
    type alone (no divisibility hints), so cases that differ only in sizes and strides share one compile, and so do
    gradings of other seeds: the disk cache keyed them by value (puzzle 6's 11 cases: 22 compiles, now 20)."""
    from triton.runtime.jit import _normalize_ty

    try:
        params = inspect.signature(launch.fn).parameters
    except (TypeError, ValueError):
        return set()
    plain = {name for name, param in params.items() if param.annotation is inspect.Parameter.empty
             or "constexpr" not in _normalize_ty(param.annotation)}
    return {name for name, value in launch.bound.items()
            if name in plain and name not in ones and type(value) in (bool, int, float)}


def _request(launch, arch: int) -> dict:
    from triton.runtime.jit import mangle_type

    functions: dict = {}
    kernel = _collect(launch.fn, functions)
    ones = getattr(launch, "ones", set())  # a GPU's JIT makes each a constexpr 1
    by_type = _run_time_numbers(launch, ones)
    return {"functions": functions, "kernel": kernel, "arch": arch, "lower": arch in SHARED_MEMORY,
            "args": {name: ["constexpr", ["value", 1]] if name in ones else ["type", mangle_type(value)]
                     if name in by_type else _argument(value, functions) for name, value in launch.bound.items()},
            "options": {k: v for k, v in launch.options.items() if k in ("num_warps", "num_stages")}}


# -- the helper process, seen from the grading process ---------------------------------------------

class _Helper:
    """The compile helper: one JSON request per line on its stdin, one reply per line on its stdout."""

    def __init__(self):
        environment = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
        # -P and the repository last on sys.path: nothing planted beside grader/ stands in for triton (runner._Worker)
        bootstrap = f"import sys; sys.path.append({ROOT!r}); import runpy; " \
                    "runpy.run_module('grader.worker.compile_helper', run_name='__main__')"
        self.process = subprocess.Popen([sys.executable, "-P", "-c", bootstrap], env=environment,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        text=True, preexec_fn=protocol.die_with_parent)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.process.stdout, selectors.EVENT_READ)
        atexit.register(self.close)  # reaped, not left behind, when grading ends

    def ask(self, request: dict, budget: Budget) -> dict:
        """The helper's reply; CompileTimeout once the budget is spent, in the helper's CPU time (a loaded machine slows
        a compile in wall time, not in CPU time; wall time where there is no /proc); TimeoutError after HELPER_TIMEOUT
        wall seconds beyond it (a helper that does not compute: the check's trouble)."""
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        started, cpu = time.monotonic(), self.cpu_seconds()

        def spent() -> float:
            used = self.cpu_seconds()
            return used - cpu if used is not None and cpu is not None else time.monotonic() - started

        try:
            while not self.selector.select(POLL):
                if spent() > budget.left:
                    raise CompileTimeout(budget.seconds)
                if time.monotonic() - started > budget.left + HELPER_TIMEOUT:
                    raise TimeoutError(f"no answer from the compile helper in {time.monotonic() - started:.0f} s")
        finally:
            budget.left -= spent()
        line = self.process.stdout.readline()
        if not line:
            status = self.process.wait()
            if status < 0:
                raise CompilerCrashed(f"its process died of {_signal_name(-status)}")
            raise RuntimeError(f"the compile helper exited with status {status}")
        return json.loads(line)

    def cpu_seconds(self) -> float | None:
        stat = protocol.process_stat(self.process.pid)
        return stat[2] if stat is not None else None

    def close(self, kill: bool = False) -> None:
        """End the helper: it exits at the end of its input; one that does not (or a busy one, with `kill`) is
        killed."""
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=0 if kill else 5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.selector.close()


_helper: _Helper | None = None
_outcomes: dict[str, dict] = {}  # request (as JSON) -> the helper's reply
_crashed: dict[str, str] = {}  # the functions of a request that crashed the compiler (as JSON) -> how it died


def prestart() -> None:
    """Start the helper now, so that it imports triton while the grading process imports the rest."""
    global _helper
    if _helper is None:
        try:
            _helper = _Helper()
        except OSError:
            pass  # the first compile tries again, and the case fails (could_not_run) if it cannot


def _compile(request: dict, budget: Budget) -> dict:
    """The helper's outcome for this request: the one started ahead (``compile_ahead``, with its case's budget), else
    compiled now, within the budget, else CompileTimeout (the busy helper killed, and the compiles started ahead
    dropped)."""
    key, sources = json.dumps(request, sort_keys=True), json.dumps(request["functions"], sort_keys=True)
    started = _started.pop(key, None)
    if sources in _crashed:  # the same functions crashed the compiler in another configuration: once per grading
        raise CompilerCrashed(_crashed[sources])
    try:
        return started.result() if started is not None else _compile_now(request, key, budget)  # what it raised, here
    except (CompileTimeout, CompilerCrashed) as exc:
        if isinstance(exc, CompilerCrashed):
            if len(_crashed) > 64:
                _crashed.clear()
            _crashed[sources] = str(exc)
        _abandon()
        raise


def _compile_now(request: dict, key: str, budget: Budget | None = None, since: int | None = None) -> dict:
    """Ask the helper (or the disk cache). `since`: for a compile started ahead, the count of abandoned compiles when
    it was started; one started before a compile timed out is not asked for (the same kernel, as big)."""
    global _helper
    with _talking:
        budget = budget or Budget(HELPER_TIMEOUT)
        if since is not None and since != _abandoned:
            raise CompileTimeout(budget.seconds)
        if key in _outcomes:
            return _outcomes[key]
        saved = compile_cache.DiskCache(request)
        loaded = saved.load()
        if loaded is not None:
            _outcomes[key] = loaded
            return loaded
        if _helper is not None and _helper.process.poll() is not None:
            # It ended between two requests (a grading that ends kills every process it finds below the judge, and
            # in a notebook or the tests this process is the judge): a fresh one takes the request.
            _helper.close()
            _helper = None
        if _helper is None:
            _helper = _Helper()
        try:
            outcome = _helper.ask(request, budget)
        except Exception as exc:
            # a helper that timed out or died on this request is not asked again: it fails closed
            _helper.close(kill=isinstance(exc, CompileTimeout))
            _helper = None
            raise
        if "skip" not in outcome:  # the check's trouble may pass; the compiler's verdict stays
            saved.store(outcome)
        _outcomes[key] = outcome
        return outcome


# -- compiling ahead ----------------------------------------------------------------------------------
# The helper is another process, so it can compile a case's kernels while this one interprets the case before
# (kernel-only grading: grader.worker.execute.compiled_ahead) or the same case (a launcher of the learner's own,
# checked after its run). Each case still waits for its own kernels' outcome where it waited before (``check``),
# so nothing runs in the interpreter that was not compiled first where that is the rule. One thread asks, in turn,
# since the helper answers one request at a time; a daemon, so that a grading process never waits for it at exit.
# Measured on 2 cores (puzzle 16 kernel-only, every compile new, another job on one core): 23.1 s before, 17-19 s.

_talking = threading.Lock()  # one conversation with the helper at a time
_started: dict[str, Future] = {}  # request (as JSON) -> its compile, started ahead and not yet taken by _compile
_queue: SimpleQueue | None = None
_abandoned = 0  # compiles that timed out in this process (``_abandon``)


def _abandon() -> None:
    """After a compile timed out: the compiles started ahead (of that kernel, as big) are not started."""
    global _abandoned
    _abandoned += 1
    for future in _started.values():
        future.cancel()
    _started.clear()


def _asking() -> None:
    while True:
        request, key, future, budget, since = _queue.get()
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(_compile_now(request, key, budget, since))
            except BaseException as exc:  # handed to the case that takes it
                future.set_exception(exc)


def start_ahead() -> None:
    """Start the thread that compiles ahead, once per process, in the interpreter: before a launcher runs (the
    launcher guard refuses a thread started inside a learner's launcher)."""
    global _queue
    if _queue is None and env.interpreter_forced():
        _queue = SimpleQueue()
        threading.Thread(target=_asking, name="gpu-compile-ahead", daemon=True).start()


def _spare_core() -> bool:
    """Whether a core is idle for the helper (the load average under the core count, less half a core): a compile
    ahead is a guess (a case that fails ends its puzzle, and the next case's compile is lost), free on a learner's
    idle cores, but a test suite grading on every core pays for each lost one (CI took 34 min against 19)."""
    try:
        return os.getloadavg()[0] < (os.cpu_count() or 1) - 0.5
    except OSError:
        return False


def compile_ahead(puzzle, launches, budget: Budget | None = None) -> None:
    """Start compiling these launches' kernels for the puzzle's GPU targets on the helper (``start_ahead``'s thread,
    else nothing is started), and return at once, where a core is spare; the ``check`` of the same launches takes the
    outcomes. They spend from `budget`, the case's (``case_budget``), else from one of a case without a time limit.
    A launch the check cannot encode is left to the check."""
    if _queue is None or not env.interpreter_forced() or not _spare_core():
        return
    budget = budget or case_budget(None)
    for launch in launches:
        try:
            requests = [_request(launch, arch) for arch in getattr(puzzle, "gpu_archs", DEFAULT_ARCHS)]
        except Exception:
            continue  # the check says why
        for request in requests:
            key = json.dumps(request, sort_keys=True)
            if key not in _outcomes and key not in _started:
                _started[key] = Future()
                _queue.put((request, key, _started[key], budget, _abandoned))


def could_not_run(why: str) -> str:
    """The failing message of a case whose kernels the check could not compile (module docstring: fails closed)."""
    return (f"the GPU compile check could not run, so this case does not pass: {why}. A kernel counts as solved only "
            "once it compiles for the GPU; this is the grader's trouble, not a mistake found in your kernel: grade "
            "again, and if it stays, report it with this message")


def _check_launch(launch, archs, allocator: bool, budget: Budget) -> str | None:
    try:
        requests = [_request(launch, arch) for arch in archs]
    except Unsupported as why:
        if str(why).startswith("the kernel reads"):  # no GPU compiler takes it either: a verdict, not a skip
            return (f"{launch.name} would not compile for a GPU: {why}. A kernel can read only triton.language "
                    "(tl), math, other @triton.jit functions and tl.constexpr globals; numpy, torch and Python "
                    "objects stay in the launcher.")
        return could_not_run(f"{launch.name} could not be handed to the compiler: {why}")
    problem = static_problems(requests[0]["functions"])
    if problem:
        return problem
    compiled = []
    for request in requests:
        try:
            outcome = _compile(request, budget)
        except CompilerCrashed as exc:
            return (f"the GPU compiler crashed while compiling {launch.name} ({exc}), so this case does not pass. A "
                    "kernel too big for the compiler does this: helpers that call helpers many levels deep (each call "
                    "is inlined in full), a tl.static_range of many steps, a block of many thousand elements. If "
                    "yours is none of these, grade again, and if it stays, report it with this message")
        except CompileTimeout:
            raise CompileTimeout(
                f"stopped after {budget.seconds:g} s of CPU time: the GPU compile of {launch.name} did not finish "
                "(a kernel of this course compiles in a second or two). The compiler unrolls each tl.static_range loop "
                "in full and inlines every @triton.jit helper, even in a branch that never runs, and lays out every "
                "element of a block, so a static loop of many steps or a block of many thousand elements makes a "
                "kernel too big to compile: use tl.range for a long loop, and the blocks the launcher gives") from None
        if "skip" in outcome:
            return could_not_run(outcome["skip"])
        if outcome.get("error"):
            return compiler_advice.explain(outcome["error"], request["functions"], request["arch"], compiled)
        limit = SHARED_MEMORY.get(request["arch"])
        if limit is not None and not isinstance(outcome.get("shared"), int):
            return could_not_run(f"the compile for sm_{request['arch']} did not say how much shared memory it needs")
        if limit is not None and outcome.get("scratch") and not allocator:
            return (f"{launch.name} compiles for sm_{request['arch']} but would not launch there: it needs "
                    f"{outcome['scratch']:,} bytes of global scratch memory (a tensor descriptor made in the kernel), "
                    f"which triton asks of the allocator that triton.set_allocator sets, and this puzzle's launcher "
                    f"sets none (\"no allocator was set\"). Make descriptors only where the puzzle's launcher sets an "
                    f"allocator (puzzles 11 and 12); load through pointers here")
        if limit is not None and outcome["shared"] > limit:
            return (f"{launch.name} compiles for sm_{request['arch']} but would not launch there: it needs "
                    f"{outcome['shared']:,} bytes of shared memory per program, past the {limit:,} a block may have "
                    f"(triton raises OutOfResources). Shared memory holds the operands of tl.dot and the blocks a "
                    f"loop carries through its stages: use smaller tiles, or fewer stages (num_stages)")
        compiled.append(request["arch"])
    return None


def case_budget(timeout: float | None) -> Budget:
    """The CPU seconds a case's compiles may take: its time limit and COMPILE_GRACE; HELPER_TIMEOUT without a limit."""
    return Budget(timeout + COMPILE_GRACE if timeout else HELPER_TIMEOUT)


def check(puzzle, launches, budget: Budget | None = None) -> str | None:
    """None when every launched kernel compiles for the puzzle's GPU targets; else the report. Compiles that do not
    end within `budget` (the case's, ``case_budget``: shared with its compiles started ahead; else one of a case
    without a time limit), in the helper's CPU seconds, raise CompileTimeout."""
    if not launches or not env.interpreter_forced():
        return None
    archs = getattr(puzzle, "gpu_archs", DEFAULT_ARCHS)
    budget = budget or case_budget(None)
    try:
        for launch in launches:
            problem = _check_launch(launch, archs, getattr(puzzle, "allocator", False), budget)
            if problem:
                return problem
    except CompileTimeout:
        raise
    except Exception as exc:  # the check's own trouble: the case fails, as the grader's trouble (fails closed)
        return could_not_run(f"{type(exc).__name__}: {str(exc)[:300]}")
    return None


def _outcome(launch) -> dict | None:
    """The helper's outcome of this launch's sm_90 compile, where this process has it; else None."""
    return _outcomes.get(json.dumps(_request(launch, DEFAULT_ARCHS[0]), sort_keys=True))


def dot_lines(launches) -> set[tuple[str, int]] | None:
    """(file, line) of every tl.dot left in the compiled sm_90 kernels of these launches; None when not known."""
    found = set()
    try:
        for launch in launches:
            outcome = _outcome(launch)
            if outcome is None or "dots" not in outcome:
                return None
            found.update((file, line) for file, line in outcome["dots"])
    except Exception:  # unknown, so every dot counts
        return None
    return found


def pipelined_lines(launch) -> set[tuple[str, int]] | None:
    """(file, line) of every load the sm_90 compile of this launch made asynchronous (``ttir.async_load_lines``: the
    software pipeliner's copies issued iterations ahead, the copy engine's); None when not known."""
    try:
        outcome = _outcome(launch)
    except Exception:
        return None
    if outcome is None or "pipelined" not in outcome:
        return None
    return {(file, line) for file, line in outcome["pipelined"]}


def int32_offset_lines(launches) -> list[tuple[str, int]]:
    """(file, line) of every int32 offset times a kernel argument (int32_offsets) in the compiled sm_90 kernels of
    these launches; [] when none, or not known."""
    found = set()
    try:
        for launch in launches:
            found.update((file, line) for file, line in (_outcome(launch) or {}).get("offsets32", ()))
    except Exception:  # unknown: no warning
        return []
    return sorted(found)
