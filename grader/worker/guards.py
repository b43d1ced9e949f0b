"""Guard zones: natively, every tensor a case hands its kernels sits between two poisoned zones of memory.

On a GPU nothing checks a store's address: a store past the end of an output lands in whatever memory follows.
So natively each input is copied into the middle of a larger buffer, and each tensor the launcher allocates
(``torch.empty``, ``empty_like``, ``zeros``, ...) is moved into one, while the launcher runs (``allocations``, a
torch dispatch mode). The zones before and after hold a known byte pattern; after the case, ``Guards.trampled``
names every tensor whose zones changed: an out-of-bounds store, caught on the GPU itself. A fresh output's own
elements are filled with the grader's poison (a NaN no arithmetic makes), so that one never written is seen too.

The interpreter needs none of this (grader.worker.instrument checks every lane before it runs); the guards are
for native grading, where a worker also runs the interpreter's checks on the same kernels (grader.judge.runner).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode

GUARD_BYTES = 4096  # per side: a whole number of 16-byte units, so a tensor keeps the alignment TMA needs
PATTERN = 0xA5  # the guard zones' byte
POISON_BITS = 0x7FC0DEAD  # a fresh float32 output's elements: a NaN with a payload no arithmetic produces
# In every other case of a puzzle (poison_finite), a number instead: a kernel that tests for the NaN (x != x) and
# swaps in what it wants would otherwise pass, where a GPU's memory holds whatever it held. A whole number from
# 1000 to 1999 drawn from the grading's seed (so a kernel cannot test for it, and --seed replays it): float16 and
# bfloat16 hold it or its rounding alike. (Masked lanes loaded with no other= are 0 in those cases, as a GPU's
# compiled load leaves them: instrument._poisoned_other.)
_finite: float | None = None
_finite_bits = 0  # its float32 bits


def poison_finite(finite: bool, seed: int = 0) -> None:
    """This case's poison: a NaN with the grader's payload, or (finite) a number drawn from `seed`."""
    global _finite, _finite_bits
    _finite = float(1000 + zlib.crc32(str(seed).encode()) % 1000) if finite else None
    if finite:
        _finite_bits = int(torch.tensor([_finite], dtype=torch.float32).view(torch.int32).item())


def poison_is_finite() -> bool:
    return _finite is not None


def poison_bits() -> int:
    """The bits of a fresh float32 element in this case."""
    return POISON_BITS if _finite is None else _finite_bits


def poison_value() -> float:
    """A fresh element of another float width in this case."""
    return float("nan") if _finite is None else _finite

# aten ops (by overload packet) that make a fresh tensor: each result is moved into a guarded buffer.
_ALLOCATING = frozenset(f"aten.{name}" for name in (
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like", "new_zeros",
    "ones", "ones_like", "new_ones", "full", "full_like", "new_full", "empty_permuted",
))
_UNFILLED = frozenset(f"aten.{name}" for name in ("empty", "empty_like", "empty_strided", "new_empty",
                                                  "new_empty_strided", "empty_permuted"))


@dataclass
class _Zone:
    label: str
    buffer: torch.Tensor  # uint8: guard, the tensor's bytes, guard
    size: int  # the tensor's bytes


class Guards:
    """The guarded buffers of one case."""

    def __init__(self):
        self.zones: list[_Zone] = []

    def place(self, tensor: torch.Tensor, label: str, poison: bool = False) -> torch.Tensor:
        """A tensor equal to `tensor` (shape, strides, dtype, values) in the middle of a guarded buffer; with
        `poison`, its elements hold the grader's poison instead of its values (a fresh output)."""
        span = _span(tensor)
        size = span * tensor.element_size()
        buffer = torch.full((GUARD_BYTES + size + GUARD_BYTES,), PATTERN, dtype=torch.uint8, device=tensor.device)
        inner = buffer[GUARD_BYTES:GUARD_BYTES + size].view(tensor.dtype)
        placed = inner.as_strided(tensor.shape, tensor.stride(), inner.storage_offset())
        if poison and tensor.dtype == torch.float32:
            inner.view(torch.int32).fill_(poison_bits())
        elif span:
            placed.copy_(tensor)
        self.zones.append(_Zone(label, buffer, size))
        return placed

    def rename(self, tensor: torch.Tensor, label: str) -> None:
        """Call the zone that holds `tensor` (a tensor the launcher returned, or a view of one) by its name."""
        for zone in self.zones:
            start = zone.buffer.data_ptr() + GUARD_BYTES
            if start <= tensor.data_ptr() < start + max(zone.size, 1) and zone.label.startswith("the launcher's"):
                zone.label = label

    def trampled(self) -> list[str]:
        """'z: 64 bytes after it' for each tensor whose guard zones changed."""
        found = []
        for zone in self.zones:
            before = int((zone.buffer[:GUARD_BYTES] != PATTERN).sum())
            after = int((zone.buffer[GUARD_BYTES + zone.size:] != PATTERN).sum())
            where = [f"{before} bytes before it"] * bool(before) + [f"{after} bytes after it"] * bool(after)
            if where:
                found.append(f"{zone.label}: {' and '.join(where)}")
        return found


def _span(tensor: torch.Tensor) -> int:
    """Elements from the tensor's first to its last, as its strides lay them out."""
    if tensor.numel() == 0:
        return 0
    return 1 + sum((size - 1) * stride for size, stride in zip(tensor.shape, tensor.stride()))


def without_dynamo(mode: type) -> type:
    """A TorchDispatchMode class whose __torch_dispatch__ runs as written. torch (2.10 on) wraps it to keep
    torch.compile out (``torch._disable_dynamo``), and that wrapper imports torch._dynamo on its first call: 1.3 s
    of CPU on a 2-core laptop, 3 s on the H200's host, once in every grading process, for a compiler the grader
    never runs. The wrapper reads the function's ``__dynamo_disable`` attribute first; given the function itself,
    it skips the import. Without the wrapper (older torch) this changes nothing."""
    wrapped = getattr(mode.__dict__.get("__torch_dispatch__"), "__wrapped__", None)
    if wrapped is not None:
        setattr(wrapped, "__dynamo_disable", wrapped)
    return mode


@without_dynamo
class allocations(TorchDispatchMode):  # noqa: N801 (used as a context manager, like torch's own modes)
    """While the launcher runs, each fresh tensor it makes is placed between guard zones (``Guards.place``),
    named after the order it was made in ("the launcher's tensor 1")."""

    def __init__(self, guards: Guards):
        super().__init__()
        self.guards = guards
        self.made = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if str(func.overloadpacket) in _ALLOCATING and isinstance(out, torch.Tensor) and out.device.type != "meta":
            self.made += 1
            out = self.guards.place(out, f"the launcher's tensor {self.made}",
                                    poison=str(func.overloadpacket) in _UNFILLED)
        return out


@without_dynamo
class poisoned_allocations(TorchDispatchMode):  # noqa: N801 (a context manager, like torch's own modes)
    """In the interpreter, what ``allocations`` does to a fresh tensor's own elements, without the zones (the
    recorder checks every lane): each float tensor the launcher makes with torch.empty & co. holds a NaN, float32
    the grader's poison, as natively (in every other case a number: poison_finite). A kernel that reads an output
    before it writes it (acc = tl.load(z_ptr + i), with z from torch.empty) then gets NaN on every machine, not
    whatever the allocator left there: on a CPU that is often zeros, and such a kernel passed."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if str(func.overloadpacket) in _UNFILLED and isinstance(out, torch.Tensor) and out.is_floating_point() \
                and out.device.type == "cpu" and out.numel():
            if out.dtype == torch.float32 and out.is_contiguous():
                out.view(torch.int32).fill_(poison_bits())
            else:
                out.fill_(poison_value())
        return out

