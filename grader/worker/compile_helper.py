"""The compile helper: the process that ``grader.worker.gpu_compile`` starts (``python -m
grader.worker.compile_helper``, once per grading process) to compile a learner's kernels for the GPU, on the CPU.

It is a process of its own because the grading process runs triton's interpreter: with TRITON_INTERPRET=1,
triton.language's own @jit helpers (tl.sum, tl.zeros, ...) are interpreter objects, and the interpreter leaves parts
of triton.language patched after a kernel calls one of them, so a compile there would go through interpreter code.
This process imports triton without the interpreter; of the grader it uses ``grader.worker.ttir`` alone.

One JSON request per line on stdin (``gpu_compile._request``: each function's source, file, `def` line and the
globals it reads, encoded; the launch's arguments, options and target), one JSON reply per line on stdout:
``{"error": ...}``, the compiler's verdict on the kernel (its message, and the learner's file and line where it
names one); ``{"error": None, "dots": ..., "offsets32": ..., "pipelined": ...}``, compiled, with what the sm_90 TTIR
and TTGIR show (``grader.worker.ttir``); or ``{"skip": why}``, where it cannot compile anything here (the check's own
trouble).
The functions are rebuilt under the learner's file names and line numbers, so the compiler's lines and the TTIR's
locations are the learner's. gpu_compile's docstring says why the compile stops at TTGIR (for sm_90, once lowered
to the LLVM dialect, with the shared memory it allocated) and why it never uses triton's disk cache.
"""

from __future__ import annotations

import builtins
import json
import linecache
import os
import sys

from grader.worker.ttir import async_load_lines, dot_lines_in, int32_offsets

_PROBE = {"name": "grader_probe", "file": "grader_gpu_compile_probe.py", "line": 1,
          "source": "def grader_probe(x_ptr):\n    tl.store(x_ptr, 1.0)\n",
          "globals": {"tl": ["module", "triton.language"]}}


def _decode(encoded, jits: dict):
    import importlib

    import triton.language as tl

    kind, value = encoded
    if kind == "module":
        return importlib.import_module(value)
    if kind == "constexpr":
        return tl.constexpr(_decode(value, jits))
    if kind == "dtype":
        return tl.dtype(value)
    if kind == "tuple":
        return tuple(_decode(v, jits) for v in value)
    if kind == "member":  # a function or class of triton.language, by its module and name
        module, name = value
        if module != "triton.language" and not module.startswith("triton.language."):
            raise ValueError(f"not a triton.language module: {module}")
        return getattr(importlib.import_module(module), name)
    if kind == "function":
        namespace: dict = {}
        exec(f"def {value}(*args, **kwargs):\n    pass\n", namespace)
        return namespace[value]
    if kind == "jit":
        return jits[value]
    return value


def _rebuild(functions: dict) -> dict:
    """JITFunctions made from the descriptions, under the learner's file names and line numbers."""
    from triton.runtime.jit import JITFunction

    files: dict[str, list[str]] = {}
    for description in functions.values():
        lines = files.setdefault(description["file"], [])
        body = description["source"].splitlines(keepends=True)
        end = description["line"] - 1 + len(body)
        lines.extend(["\n"] * (end - len(lines)))
        lines[description["line"] - 1:end] = body
    for file, lines in files.items():  # what inspect (and so triton) reads as the source of these files
        linecache.cache[file] = (sum(map(len, lines)), None, lines, file)
    jits, scopes = {}, {}
    for key, description in functions.items():
        scope = {"__name__": "grader_gpu_compile_rebuilt", "__builtins__": builtins}
        scope.update({name: _decode(value, {}) for name, value in description["globals"].items() if value[0] != "jit"})
        code = "\n" * (description["line"] - 1) + description["source"]
        exec(compile(code, description["file"], "exec"), scope)
        jits[key], scopes[key] = JITFunction(scope[description["name"]]), scope
    for key, description in functions.items():  # calls between functions, once all of them exist
        scopes[key].update({name: jits[value[1]] for name, value in description["globals"].items()
                            if value[0] == "jit"})
    return jits


def _chain(exc):
    while exc is not None:
        yield exc
        exc = exc.__cause__ or exc.__context__


def _compile_error(exc, functions: dict, diagnostics: str) -> dict:
    """The innermost CompilationError's line in the learner's file and its message; else the message alone."""
    found = [e for e in _chain(exc) if type(e).__name__ == "CompilationError" and getattr(e, "node", None)]
    if found:
        error = found[-1]
        cause = error.__cause__
        message = getattr(error, "error_message", None) or (str(cause) if cause else str(error))
        for description in functions.values():
            if description["source"].strip() == (getattr(error, "src", "") or "").strip():
                line = description["line"] + error.node.lineno - 1
                return {"message": message, "file": description["file"], "line": line}
        return {"message": str(error)}
    return {"message": f"{type(exc).__name__}: {exc}", "diagnostics": diagnostics}



class _LoweredToLLVM:
    """The NVIDIA backend's `llvm` module, with `to_module` stopping the compile: by then the TTGIR was lowered to
    the LLVM dialect (where float8 arithmetic and unsupported conversions fail) and shared memory was allocated (the
    module's `ttg.shared`), and global scratch memory (`ttg.global_scratch_memory_size`: a tensor descriptor made in
    the kernel); LLVM's own translation and -O3, and PTX, are not needed to know them."""

    def __init__(self, llvm, helper):
        self._llvm, self._helper = llvm, helper

    def __getattr__(self, name):
        return getattr(self._llvm, name)

    def to_module(self, module, *args, **kwargs):
        self._helper.shared = module.get_int_attr("ttg.shared") or 0
        self._helper.scratch = module.get_int_attr("ttg.global_scratch_memory_size") or 0
        raise _Stopped()


class _Mismatch(Exception):
    """The grading process sent a parameter by type that this process reads as a constexpr: it is not compiled with
    a value it lacks (a skip, so the case fails closed)."""


class _Stopped(Exception):
    """Raised where the check ends: after TTGIR, or for the H200's target after lowering to the LLVM dialect
    (gpu_compile's docstring says why)."""


class _Compiler:
    """Compiles requests in the helper; says, for every request, when it cannot."""

    def __init__(self):
        self.unavailable = None
        self.probed: dict[int, str | None] = {}  # arch -> why it cannot be compiled for, or None
        self.ttir = ""  # the TTIR of the latest compile
        self.ttgir = ""  # and its TTGIR, after the software pipeliner
        self.lower = False  # whether the latest compile goes on to the LLVM dialect (request["lower"])
        self.shared = None  # the bytes of shared memory it allocated, when it did
        self.scratch = 0  # the bytes of global scratch memory its launch asks triton's allocator for
        try:
            import triton
            from triton.backends.compiler import GPUTarget
            from triton.compiler import ASTSource
            from triton.runtime.jit import mangle_type

            triton.knobs.runtime.add_stages_inspection_hook = self._inspect_stages
            from triton.backends.nvidia import compiler as nvidia

            nvidia.llvm = _LoweredToLLVM(nvidia.llvm, self)
        except Exception as exc:  # an untested triton without this API
            self.unavailable = f"kernels were not compiled for the GPU: this triton lacks its compile API ({exc})"
            return
        self.triton, self.target, self.source, self.mangle = triton, GPUTarget, ASTSource, mangle_type

    def _inspect_stages(self, backend=None, stages=None, *rest):
        """Triton's hook on its pipeline: keep the TTIR's and the TTGIR's text, and stop before the LLVM stages.
        Triton 3.9 also calls it with no argument for a suffix to its cache key."""
        if stages is None:
            return "-grader-gpu-compile-check", ""
        make_ttir, make_ttgir = stages["ttir"], stages["ttgir"]

        def keep_ttir(module, metadata):
            module = make_ttir(module, metadata)
            self.ttir = str(module)
            return module

        def keep_ttgir(module, metadata):
            module = make_ttgir(module, metadata)
            self.ttgir = str(module)
            return module

        def stop(module, metadata):
            raise _Stopped()

        stages["ttir"], stages["ttgir"] = keep_ttir, keep_ttgir
        if not self.lower:  # else make_llir runs up to _LoweredToLLVM.to_module
            stages["llir"] = stop

    def _signature(self, request: dict, jits: dict) -> tuple[dict, dict]:
        """The launch's types for run-time parameters and values for constexprs, as the JIT would pass them."""
        import triton.language as tl

        signature, constexprs = {}, {}
        for param in jits[request["kernel"]].params:
            encoded = request["args"].get(param.name)
            if encoded is not None and encoded[0] == "type" and param.is_constexpr:
                raise _Mismatch(f"{param.name} is a tl.constexpr here and a run-time value in the grading process")
            if encoded is not None and encoded[0] == "type" and not param.is_constexpr:
                signature[param.name] = encoded[1]
                continue
            value = _decode(encoded, jits) if encoded is not None and encoded[0] != "type" else None
            if isinstance(value, tl.constexpr) and not param.is_constexpr:  # an integer 1, specialized by the JIT
                signature[param.name], constexprs[param.name] = "constexpr", value.value
            elif param.is_constexpr or value is None:
                signature[param.name], constexprs[param.name] = "constexpr", value
            else:
                signature[param.name] = self.mangle(value)
        return signature, constexprs

    def _compile(self, request: dict) -> dict:
        start = os.lseek(2, 0, os.SEEK_END)
        self.lower, self.shared, self.scratch, self.ttgir = bool(request.get("lower")), None, 0, ""
        try:
            # Inside the try: a kernel that Triton cannot even read (a `def \` line it finds no function in) fails
            # the check, rather than skipping it; trouble of this machine's triton shows in _trouble's probe
            jits = _rebuild(request["functions"])
            signature, constexprs = self._signature(request, jits)
            source = self.source(jits[request["kernel"]], signature, constexprs)
            self.triton.compile(source, target=self.target("cuda", request["arch"], 32), options=request["options"])
        except _Stopped:
            if self.lower and self.shared is None:
                return {"skip": "the compile stopped before it lowered the kernel to the LLVM dialect"}
            return {"error": None, "dots": dot_lines_in(self.ttir), "offsets32": int32_offsets(self.ttir),
                    "pipelined": async_load_lines(self.ttgir), "shared": self.shared, "scratch": self.scratch}
        except _Mismatch as exc:
            return {"skip": str(exc)}
        except Exception as exc:  # the compiler's verdict on the kernel
            diagnostics = os.pread(2, 1 << 16, start).decode(errors="replace")[-4000:]
            return {"error": _compile_error(exc, request["functions"], diagnostics)}
        return {"skip": "triton ran past the stage where the check stops"}

    def _trouble(self, arch: int) -> str | None:
        """Why nothing compiles for `arch` here (a one-line kernel fails), or None."""
        if arch not in self.probed:
            self.probed[arch] = None
            probe = self._compile({"functions": {"probe": _PROBE}, "kernel": "probe", "arch": arch, "lower": True,
                                   "args": {"x_ptr": ["type", "*fp32"]}, "options": {}})
            if "dots" not in probe:
                why = probe["error"]["message"] if probe.get("error") else probe.get("skip")
                self.probed[arch] = (f"kernels were not compiled for the GPU: triton {self.triton.__version__} could "
                                     f"not compile a one-line kernel for sm_{arch}: {why}")
        return self.probed[arch]

    def compile(self, request: dict) -> dict:
        trouble = self.unavailable or self._trouble(request["arch"])
        return {"skip": trouble} if trouble else self._compile(request)


def _serve() -> None:
    """The helper's loop. Compiler output goes to a scratch file, so only replies reach stdout."""
    import tempfile
    import warnings

    os.environ.pop("TRITON_INTERPRET", None)  # `import grader` set it; triton reads it when it is imported
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"  # see gpu_compile's docstring, point 3
    scratch = tempfile.TemporaryDirectory(prefix="grader-gpu-compile-")
    os.environ["TRITON_CACHE_DIR"] = scratch.name
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    log = tempfile.TemporaryFile("w+")
    os.dup2(log.fileno(), 1)
    os.dup2(log.fileno(), 2)
    warnings.simplefilter("ignore")
    compiler = _Compiler()
    for line in sys.stdin:
        try:
            reply = compiler.compile(json.loads(line))
        except Exception as exc:  # rebuilding the request failed: the check's trouble, not the kernel's
            reply = {"skip": f"the helper could not read the request: {type(exc).__name__}: {exc}"}
        replies.write(json.dumps(reply) + "\n")
    scratch.cleanup()


if __name__ == "__main__":
    _serve()
