"""The GPU compile check's cache on disk (grader.worker.gpu_compile): a kernel graded again, unchanged, is not
compiled again, in this grading or the next."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path


class DiskCache:
    """One compile's outcome on disk, so that a kernel graded again (unchanged) is not compiled again.

    The key is the request with the files its functions came from replaced by placeholders (a worker builds the
    kernels' module in a fresh folder each time), plus triton's version and the code that made the outcome
    (``_SOURCES``); the outcome is stored with the same placeholders and given its files back when loaded. The
    folder is ``GRADER_COMPILE_CACHE``, else ``$XDG_CACHE_HOME/triton-attention-puzzles/gpu-compile``. A cache that
    cannot be read or written is no cache."""

    def __init__(self, request: dict):
        self.files = sorted({f["file"] for f in request["functions"].values()}, key=len, reverse=True)
        text = self._placeheld(json.dumps(request, sort_keys=True))
        digest = hashlib.sha256("\n".join([text, _triton_version(), _SOURCES]).encode()).hexdigest()
        self.path = os.path.join(_cache_folder(), f"{digest}.json")

    def _placeheld(self, text: str) -> str:
        for number, file in enumerate(self.files):
            text = text.replace(json.dumps(file)[1:-1], f"<file {number}>")
        return text

    def load(self) -> dict | None:
        try:
            with open(self.path) as saved:
                text = saved.read()
        except OSError:
            return None
        for number, file in enumerate(self.files):
            text = text.replace(f"<file {number}>", json.dumps(file)[1:-1])
        try:
            outcome = json.loads(text)
        except ValueError:
            return None
        return outcome if isinstance(outcome, dict) else None

    def store(self, outcome: dict) -> None:
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=os.path.dirname(self.path), suffix=".part")
            with os.fdopen(handle, "w") as saved:
                saved.write(self._placeheld(json.dumps(outcome)))
            os.replace(temporary, self.path)
        except OSError:
            pass


# What an outcome depends on besides the request: the code that encodes it (gpu_compile), compiles it (the helper),
# reads its TTIR and keeps it (here); a change to any of them is a fresh cache.
_SOURCES = hashlib.sha256(b"".join((Path(__file__).parent / name).read_bytes() for name in (
    "gpu_compile.py", "compile_helper.py", "ttir.py", "compile_cache.py"))).hexdigest()


def _cache_folder() -> str:
    explicit = os.environ.get("GRADER_COMPILE_CACHE")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "triton-attention-puzzles", "gpu-compile")


def _triton_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("triton")
    except metadata.PackageNotFoundError:
        return "?"
