"""What a launcher launches, without running it: each ``kernel[grid](...)`` call is noted as a ``KernelCall`` (the
kernel, its grid, its arguments), described for the tables' notes, and replayed with other launch settings (warps,
stages, a constexpr) for ``--sweep``. Needs no GPU to note. (Not ``grader.worker.instrument.Launch``, which is a
launch the interpreter hook saw run.)"""

from __future__ import annotations

import sys
from typing import NamedTuple


class KernelCall(NamedTuple):
    """One kernel launch a launcher made: the kernel, its grid, and its arguments."""
    kernel: object  # the @triton.jit function
    grid: tuple
    args: tuple
    kwargs: dict

    def describe(self) -> str:
        """'name[grid](B0=1, B1=16384, num_warps=32)': the launch's keyword settings (block sizes, warps, stages)."""
        name = getattr(getattr(self.kernel, "fn", None), "__name__", type(self.kernel).__name__)
        grid = "x".join(map(str, self.grid)) if isinstance(self.grid, tuple) else "grid()"
        settings = ", ".join(f"{k}={v}" for k, v in self.kwargs.items() if isinstance(v, (bool, int, str)))
        return f"{name}[{grid}]({settings})"


class _KernelStandIn:
    """Stands in for a kernel while a launcher runs: `kernel[grid](...)` is recorded, not run."""

    def __init__(self, kernel, launches: list):
        self.kernel, self.launches = kernel, launches

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.launches.append(KernelCall(self.kernel, grid, args, kwargs))


def launches_of(launcher, *args, **kwargs) -> list[KernelCall]:
    """The kernel launches ``launcher(*args, **kwargs)`` makes, recorded and not run. Needs no GPU."""
    return recorded_call(launcher, *args, **kwargs)[1]


def recorded_call(launcher, *args, **kwargs) -> tuple[object, list[KernelCall]]:
    """(what the launcher returned, its launches): while it runs, every kernel of its module stands in as a
    recorder (the launcher finds its kernels among the module's globals), so nothing is launched and the output
    it returns is not written."""
    import triton

    module = sys.modules[launcher.__module__]
    kernels = {name: value for name, value in vars(module).items() if isinstance(value, triton.KernelInterface)}
    launches: list[KernelCall] = []
    try:
        for name, kernel in kernels.items():
            setattr(module, name, _KernelStandIn(kernel, launches))
        result = launcher(*args, **kwargs)
    finally:
        for name, kernel in kernels.items():
            setattr(module, name, kernel)
    return result, launches


def launches_note(launches: list[KernelCall]) -> str:
    """What the launcher chose, one kernel after another; table-safe."""
    return "; ".join(launch.describe() for launch in launches).replace("|", "/")


def replay(launches: list[KernelCall], overrides: dict):
    """KernelCall the recorded launches again, each with `overrides` in its keyword arguments."""
    for launch in launches:
        launch.kernel[launch.grid](*launch.args, **{**launch.kwargs, **overrides})


def split_setting(launcher, setting) -> tuple[dict, dict]:
    """(the keywords `launcher` takes, the rest: launch overrides)."""
    import inspect

    parameters = inspect.signature(launcher).parameters
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return dict(setting), {}
    keywords = {k: v for k, v in setting.items() if k in parameters}
    return keywords, {k: v for k, v in setting.items() if k not in parameters}
