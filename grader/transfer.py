"""What one case sends from the worker that ran it to the parent that judges it, as plain JSON.

The worker (``grader.worker.execute``) runs the learner's launcher and sends an ``Execution``: the outputs
as raw bytes, which elements its kernels wrote, a digest of each input after the run, and what the
access record showed. The parent (``grader.judge.verdict.judge``) rebuilds the inputs from the seed, computes the
reference and compares, so the expected values never exist where the submission runs.

A worker can fail its own case (an ``Outcome``: an error, a timeout, an out-of-bounds access, a race,
a budget, all read from the access record it keeps) but never pass one: "passed" is refused here,
and "skipped" counts only where the judge would skip too. Everything read back goes through the
``*_from_json`` functions, which check each field's type, dtype and size and raise ``Malformed``
otherwise, so a forged or garbled event is a crashed case, never a grader traceback.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import math
import re
from dataclasses import dataclass, field

import numpy as np
import torch

from grader import coach
from grader.protocol import Malformed, ends_puzzle  # noqa: F401 (the protocol's, named here too)

MAX_ELEMENTS = 1 << 28  # per array: far above any case, low enough that a forged size cannot exhaust memory
MAX_OUTPUTS = 64
MAX_COUNT = 1 << 53  # a coach's count: far above any case, and exact where --json is read as float64 (JavaScript)
# The NaN that masked-off lanes of a load without other= get in the interpreter (grader.worker.instrument): its
# payload (bits 21..16 of a float32's mantissa, kept by float16 and bfloat16, and by most arithmetic: 0 * NaN, sums,
# exp2) tells the judge (grader.judge.checker) that an output's NaN came from an undefined lane, not from 0 * inf.
UNDEFINED_NAN32 = 0x7FDEAD00
UNDEFINED_PAYLOAD = 0x003F0000
_TORCH_DTYPES = {str(d): d for d in (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8,
                                     torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool)}
_REASON = re.compile(r"[a-z_]{1,40}")


def _expect(ok: bool, what: str) -> None:
    if not ok:
        raise Malformed(what)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# -- tensors and arrays ----------------------------------------------------------------------------

def _bytes_from_json(text, what: str) -> bytes:
    _expect(isinstance(text, str), f"{what}: data is not a string")
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:
        raise Malformed(f"{what}: data is not base64") from None


def _shape_from_json(shape, what: str) -> tuple[int, ...]:
    _expect(isinstance(shape, list) and len(shape) <= 8 and all(_is_int(s) and s >= 0 for s in shape),
            f"{what}: bad shape")
    _expect(int(np.prod(shape, dtype=np.float64)) <= MAX_ELEMENTS, f"{what}: too many elements")
    return tuple(shape)


def tensor_bytes(tensor: torch.Tensor) -> bytes:
    """The tensor's elements in order, as raw bytes (of a CPU copy; a subclass's overrides are bypassed)."""
    with torch._C.DisableTorchFunctionSubclass():
        flat = tensor.detach().to("cpu").contiguous().reshape(-1)
        return flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""


def digest(tensor: torch.Tensor) -> str:
    """SHA-256 of a tensor's dtype, shape and bytes: equal digests, equal tensors."""
    header = f"{tensor.dtype} {tuple(tensor.shape)}".encode()
    return hashlib.sha256(header + tensor_bytes(tensor)).hexdigest()


def tensor_to_json(tensor: torch.Tensor) -> dict:
    return {"dtype": str(tensor.dtype), "shape": list(tensor.shape),
            "data": base64.b64encode(tensor_bytes(tensor)).decode("ascii")}


def tensor_from_json(data, what: str) -> torch.Tensor:
    _expect(isinstance(data, dict) and set(data) == {"dtype", "shape", "data"}, f"{what} is not a tensor")
    dtype = _TORCH_DTYPES.get(data["dtype"]) if isinstance(data["dtype"], str) else None
    _expect(dtype is not None, f"{what}: dtype {data['dtype']!r} cannot be sent")
    shape = _shape_from_json(data["shape"], what)
    raw = _bytes_from_json(data["data"], what)
    numel = int(np.prod(shape, dtype=np.int64))
    _expect(len(raw) == numel * torch.empty((), dtype=dtype).element_size(), f"{what}: data does not fit its shape")
    if numel == 0:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(bytearray(raw), dtype=dtype).reshape(shape)


# -- one case's execution -----------------------------------------------------------------------------------

@dataclass
class Outcome:
    """A failing verdict the worker reached while running (it may only fail its own case, never pass it)."""
    reason: str  # any CaseResult reason but passed (skipped only where the judge skips too)
    message: str = ""
    hint: str | None = None
    accesses: list[dict] = field(default_factory=list)


@dataclass
class Returned:
    """One value the launcher returned: a tensor's description and a CPU copy of its values, or a type name."""
    type_name: str
    is_tensor: bool = False
    dtype: str = ""  # as torch prints it: "torch.float32"
    shape: tuple[int, ...] = ()
    device: str = ""  # as torch prints it: "cpu", "cuda:0"
    values: torch.Tensor | None = None  # None where the dtype cannot be sent (the judge refuses it anyway)
    written: torch.Tensor | None = None  # per element: stored by a kernel; None where unknown

    @classmethod
    def of(cls, value, written: torch.Tensor | None) -> Returned:
        if not isinstance(value, torch.Tensor):
            return cls(type(value).__name__)
        sendable = str(value.dtype) in _TORCH_DTYPES and value.layout == torch.strided
        return cls(type(value).__name__, True, str(value.dtype), tuple(value.shape), str(value.device),
                   value if sendable else None, written)


@dataclass
class Execution:
    """The worker's half of a case: either an early failing Outcome, or what the launcher returned and what the
    access record showed about it."""
    early: Outcome | None = None
    returned: list[Returned] = field(default_factory=list)
    # A failure found while collecting the outputs (one no kernel stored into, a race); the judge reports it
    # only if the outputs have the spec's count, shapes and dtypes, which it checks first.
    deferred: Outcome | None = None
    late: Outcome | None = None  # a budget exceeded: reported only if the values are right and the inputs intact
    inputs_after: dict[str, str] = field(default_factory=dict)  # input name -> digest()
    recorded: bool = False  # the interpreter hook recorded accesses (else only values can be judged)
    programs: int = 0
    note: str = ""  # said with every verdict (the interpreter fixed an int32 mask of the learner's)
    accesses: list[dict] = field(default_factory=list)  # per tensor: elements, reads and writes, for the report
    seconds: float = 0.0
    coach: dict | None = None  # the performance coach's figures (grader.coach.Figures), where there is a record


def _outcome_to_json(outcome: Outcome | None) -> dict | None:
    return None if outcome is None else dataclasses.asdict(outcome)


def _outcome_from_json(data, what: str) -> Outcome | None:
    if data is None:
        return None
    _expect(isinstance(data, dict) and set(data) == {"reason", "message", "hint", "accesses"},
            f"{what} is malformed")
    reason, message, hint, accesses = data["reason"], data["message"], data["hint"], data["accesses"]
    _expect(isinstance(reason, str) and _REASON.fullmatch(reason) is not None and reason != "passed",
            f"{what}: a worker cannot report {reason!r}")
    _expect(isinstance(message, str) and (hint is None or isinstance(hint, str)), f"{what}: message is not text")
    return Outcome(reason, message, hint, _accesses_from_json(accesses))


def _accesses_from_json(rows) -> list[dict]:
    """The report's rows of accesses: name, params, elements, read, written, atomics (numbers and strings)."""
    _expect(isinstance(rows, list) and len(rows) <= 1000 and all(isinstance(r, dict) for r in rows),
            "the accesses are malformed")
    numbers = ("elements", "read", "written", "atomics")
    for row in rows:
        _expect(set(row) == {"name", "params", *numbers} and isinstance(row["name"], str)
                and isinstance(row["params"], list) and all(isinstance(p, str) for p in row["params"])
                and all(isinstance(row[k], (int, float)) and not isinstance(row[k], bool) and math.isfinite(row[k])
                        for k in numbers), "an access row is malformed")
    return rows


# Pairs of coach figures where the first counts a part of the second.
_FIGURE_PARTS = (("load_active", "load_lanes"), ("store_active", "store_lanes"), ("wide_loads", "load_lanes"),
                 ("contiguous_loads", "wide_loads"), ("busiest_program", "program_loads"))


def _figures_from_json(data) -> dict | None:
    """The coach's figures (grader.coach.Figures): whole numbers in range, each part no more than its whole."""
    if data is None:
        return None
    _expect(isinstance(data, dict) and set(data) == set(coach.FIELDS), "the coach's figures have unknown fields")
    _expect(all(_is_int(v) and 0 <= v <= MAX_COUNT for v in data.values()), "a coach figure is not a count")
    _expect(all(data[part] <= data[whole] for part, whole in _FIGURE_PARTS), "the coach's figures do not add up")
    return data


def _returned_to_json(item: Returned) -> dict:
    return {"type_name": item.type_name, "is_tensor": item.is_tensor, "dtype": item.dtype, "shape": list(item.shape),
            "device": item.device, "values": None if item.values is None else tensor_to_json(item.values),
            "written": None if item.written is None else tensor_to_json(item.written)}


def _returned_from_json(data, index: int) -> Returned:
    what = f"returned value {index}"
    keys = {"type_name", "is_tensor", "dtype", "shape", "device", "values", "written"}
    _expect(isinstance(data, dict) and set(data) == keys, f"{what} is malformed")
    _expect(isinstance(data["type_name"], str) and isinstance(data["is_tensor"], bool)
            and isinstance(data["dtype"], str) and isinstance(data["device"], str), f"{what} is malformed")
    shape = _shape_from_json(data["shape"], what)
    values = None if data["values"] is None else tensor_from_json(data["values"], what)
    written = None if data["written"] is None else tensor_from_json(data["written"], f"{what}'s written flags")
    if values is not None:
        _expect(tuple(values.shape) == shape and str(values.dtype) == data["dtype"], f"{what}: values do not match")
    if written is not None:
        _expect(written.dtype == torch.bool and written.numel() == int(np.prod(shape, dtype=np.int64)),
                f"{what}: written flags do not match")
    if data["is_tensor"]:
        _expect(data["device"].split(":")[0] in ("cpu", "cuda", "meta", "mps", "xpu"), f"{what}: unknown device")
    return Returned(data["type_name"], data["is_tensor"], data["dtype"], shape, data["device"], values, written)


def execution_to_json(execution: Execution) -> dict:
    return {"early": _outcome_to_json(execution.early),
            "returned": [_returned_to_json(r) for r in execution.returned],
            "deferred": _outcome_to_json(execution.deferred), "late": _outcome_to_json(execution.late),
            "inputs_after": execution.inputs_after, "recorded": execution.recorded, "programs": execution.programs,
            "note": execution.note, "accesses": execution.accesses, "seconds": execution.seconds,
            "coach": execution.coach}


def execution_from_json(data) -> Execution:
    """An Execution from a worker's event, every field checked; raises Malformed."""
    keys = {"early", "returned", "deferred", "late", "inputs_after", "recorded", "programs", "note", "accesses",
            "seconds", "coach"}
    _expect(isinstance(data, dict) and set(data) == keys, "the execution has missing or unknown fields")
    returned = data["returned"]
    _expect(isinstance(returned, list) and len(returned) <= MAX_OUTPUTS, "the returned values are malformed")
    inputs_after = data["inputs_after"]
    _expect(isinstance(inputs_after, dict) and all(isinstance(v, str) for v in inputs_after.values()),
            "the input digests are malformed")
    _expect(isinstance(data["recorded"], bool) and isinstance(data["note"], str), "the record is malformed")
    _expect(_is_int(data["programs"]) and data["programs"] >= 0, "the program count is malformed")
    _expect(isinstance(data["seconds"], (int, float)) and not isinstance(data["seconds"], bool)
            and 0 <= data["seconds"] < 1e6, "the time taken is malformed")
    later = [_outcome_from_json(data[k], f"the {k} outcome") for k in ("deferred", "late")]
    _expect(all(o is None or o.reason != "skipped" for o in later), "a late outcome cannot be a skip")
    return Execution(_outcome_from_json(data["early"], "the early outcome"),
                     [_returned_from_json(r, i) for i, r in enumerate(returned)], *later, inputs_after,
                     data["recorded"], data["programs"], data["note"], _accesses_from_json(data["accesses"]),
                     float(data["seconds"]), _figures_from_json(data["coach"]))
