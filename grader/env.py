"""Pick the execution mode (interpreter or native GPU) and vet the installed versions.

This module must not import triton: ``TRITON_INTERPRET`` has to be set before the
first ``@triton.jit`` runs, and importing triton here would make that order fragile.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from importlib import metadata

# Seconds per case, for the CLI and grader.check alike: an honest interpreter case takes well under 5.
DEFAULT_TIMEOUT = 30.0

# The oldest triton whose interpreter we test, and the newest release we have tested.
OLDEST_TRITON = (3, 6)
NEWEST_TESTED_TRITON = (3, 9)


@dataclass(frozen=True)
class Mode:
    interpret: bool
    reason: str  # one line for the learner: why this mode was chosen

    @property
    def device(self) -> str:
        return "cpu" if self.interpret else "cuda"

    @property
    def name(self) -> str:
        return "interpreter" if self.interpret else "native"


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _release(version: str) -> tuple[int, ...]:
    """'3.6.0+git1234' -> (3, 6, 0); '3.10.0rc1' -> (3, 10, 0)."""
    match = re.match(r"\d+(\.\d+)*", version)
    return tuple(int(part) for part in match.group(0).split(".")) if match else ()


def versions() -> dict[str, str | None]:
    return {name: _version(name) for name in ("torch", "triton", "numpy", "jaxtyping")}


def interpreter_forced() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0").lower() in ("1", "true", "on", "yes")


# Whether the user asked for the interpreter, read before choose_mode() sets the variable itself.
_USER_INTERPRET = interpreter_forced()


def choose_mode(force_interpret: bool = False) -> Mode:
    """Decide between the interpreter and the GPU, and set TRITON_INTERPRET to match.

    Call this before any kernel is defined: triton reads TRITON_INTERPRET when
    ``@triton.jit`` runs.
    """
    if force_interpret or _USER_INTERPRET:
        os.environ["TRITON_INTERPRET"] = "1"
        why = "--interpret was given" if force_interpret else "TRITON_INTERPRET=1 is set"
        return Mode(True, f"interpreter mode ({why}): kernels run on the CPU")
    try:
        import torch  # torch does not import triton, so the order above is kept
    except ImportError:  # reported by missing_packages() before anything needs torch
        os.environ["TRITON_INTERPRET"] = "1"
        return Mode(True, "interpreter mode (torch is not installed)")

    if torch.cuda.is_available():
        os.environ.pop("TRITON_INTERPRET", None)
        name = torch.cuda.get_device_name()
        return Mode(False, f"native mode on {name} (use --interpret for the interpreter's checks)")
    os.environ["TRITON_INTERPRET"] = "1"
    return Mode(True, "interpreter mode (no GPU found): kernels run on the CPU through TRITON_INTERPRET=1")


_CAPABILITY: list = []  # the GPU's compute capability, once asked


def gpu_capability() -> tuple[int, int] | None:
    """The compute capability of the GPU that native mode uses ((9, 0) for an H200), or None without one.
    Call it only after choose_mode: it imports torch."""
    if not _CAPABILITY:
        import torch
        _CAPABILITY.append(tuple(torch.cuda.get_device_capability()) if torch.cuda.is_available() else None)
    return _CAPABILITY[0]


def gpu_label() -> str:
    """'NVIDIA H200 (sm_90)', for messages; '' without a GPU."""
    capability = gpu_capability()
    if capability is None:
        return ""
    import torch
    return f"{torch.cuda.get_device_name()} (sm_{capability[0]}{capability[1]})"


def missing_packages() -> list[str]:
    """One line per package the grader needs that is not installed (in this Python), with the fix."""
    missing = [name for name, version in versions().items() if version is None]
    if not missing:
        return []
    return [f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not installed for {sys.executable}. "
            "Activate the course's virtual environment (`source .venv/bin/activate`), or create it: "
            "`python3 -m venv .venv && source .venv/bin/activate && pip install -e . -c constraints.txt` "
            "(in the repository)."]


def version_problems(mode: Mode) -> list[str]:
    """Combinations known not to work, each explained with the fix. Empty when all is well."""
    found = versions()
    problems = missing_packages()
    if problems:
        return problems
    triton, numpy = _release(found["triton"]), _release(found["numpy"])
    if triton[:2] < OLDEST_TRITON:
        problems.append(
            f"triton {found['triton']} is older than 3.6, the oldest version these puzzles support: "
            "`pip install -c constraints.txt triton`."
        )
    if mode.interpret and triton[:2] < (3, 7) and numpy[:2] >= (2, 4):
        problems.append(
            f"triton {found['triton']}'s interpreter fails with numpy {found['numpy']} "
            "(TypeError inside tl.range). Use numpy < 2.4 with triton 3.6 (`pip install 'numpy<2.4'`), "
            "or triton >= 3.7 (`pip install -c constraints.txt triton numpy`)."
        )
    return problems


def triton_is_tested() -> bool:
    found = _version("triton")
    return found is not None and OLDEST_TRITON <= _release(found)[:2] <= NEWEST_TESTED_TRITON


def notice(message: str) -> None:
    """Informational lines go to stderr, so stdout stays clean for --json."""
    print(message, file=sys.stderr, flush=True)
