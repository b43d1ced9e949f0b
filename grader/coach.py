"""The performance coach: a few figures from the interpreter's access record, and what they mean on a GPU.

The worker counts (``figures``) from what the hook counts anyway (``instrument.Traffic``, the per-tensor and
per-program counts), so grading pays nothing per access; ``grader.transfer`` checks the figures it sends; the
report and ``--json`` turn those of one case (``chosen``: the largest of a solved puzzle, else the first failing
one) into 3-5 lines (``advice``):

    lanes      how many load and store lanes did work, and how many were masked off
    traffic    bytes moved against the compulsory bytes, and loads per input element
    coalescing how many loads of several lanes read consecutive elements
    atomics    how many, and per output element (only where there are some)
    imbalance  the busiest program's loads against the mean, in the launch that loaded most (graph puzzles only)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

NEEDS_INTERPRETER = ("coach: it reads the interpreter's record of every load and store, which a native run does not "
                     "keep; grade with --interpret to see it")


@dataclass(frozen=True)
class Figures:
    """What the coach knows of one case: counts, all whole numbers."""
    load_lanes: int  # lanes of every load, masked-off ones included
    load_active: int  # unmasked lanes of loads
    store_lanes: int  # the same for stores and atomics
    store_active: int
    wide_loads: int  # loads with at least two unmasked lanes
    contiguous_loads: int  # those whose unmasked lanes read consecutive elements (coalesced)
    bytes_moved: int  # every element loaded, stored or atomically updated, times its size
    compulsory_bytes: int  # each input a kernel read, read once, and each output written once
    input_loads: int  # elements loaded from the inputs the grader passed
    input_elements: int  # the size of those inputs
    atomics: int  # atomic lanes
    output_elements: int
    programs: int  # programs of the launch that loaded most (puzzle 7's scatter, not its small normalising launch)
    program_loads: int  # elements that launch loaded, summed over its programs
    busiest_program: int  # elements loaded by its program that loaded most

    def to_json(self) -> dict:
        return asdict(self)


FIELDS = tuple(f.name for f in fields(Figures))


def figures(recorder, outputs: tuple[str, ...]) -> Figures:
    """The figures of a recorded case; `outputs` names the spec's outputs. An output is a tensor a kernel stored
    into that is no input: by the output's name where the grader has matched it, else every such tensor."""
    traffic, regions = recorder.traffic, recorder.regions
    inputs = [r for r in regions if r.given and r.loads]
    written = [r for r in regions if not r.given and (r.stores or r.atomics)]
    named = [r for r in written if r.label in outputs]
    results = named or written
    launches: dict[int, list[int]] = {}  # launch -> elements each of its programs loaded
    for (launch, _), loads in recorder.program_loads.items():
        launches.setdefault(launch, []).append(round(sum(loads.values())))
    launch, per_program = max(launches.items(), key=lambda item: sum(item[1]), default=(0, []))
    return Figures(
        traffic.load_lanes, traffic.load_active, traffic.store_lanes, traffic.store_active, traffic.wide_loads,
        traffic.contiguous_loads,
        bytes_moved=sum(r.load_bytes + r.store_bytes for r in regions),  # an atomic reads and writes
        compulsory_bytes=sum(r.numel * r.itemsize for r in inputs + results),
        input_loads=round(sum(r.loads for r in inputs)), input_elements=sum(r.numel for r in inputs),
        atomics=sum(r.atomics for r in regions), output_elements=sum(r.numel for r in results),
        programs=max(len(per_program), sum(1 for number, _ in recorder.program_names if number == launch)),
        program_loads=sum(per_program),
        busiest_program=max(per_program, default=0))


def chosen(cases) -> tuple[object, Figures] | None:
    """The case the coach speaks of, with its figures: on a failing puzzle (--coach), its first failing case with a
    record, the one `--map` draws; else the largest (by compulsory bytes) passing case. None without a record."""
    recorded = [(case, Figures(**case.coach)) for case in cases if case.coach is not None]
    failing = [pair for pair in recorded if not pair[0].passed and pair[0].reason != "skipped"]
    if failing:
        return failing[0]
    return max(recorded, key=lambda pair: pair[1].compulsory_bytes) if recorded else None


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "none"


def _lanes(f: Figures) -> str:
    lanes, active = f.load_lanes + f.store_lanes, f.load_active + f.store_active
    return (f"lanes: {_share(active, lanes)} of load and store lanes did work ({lanes - active:,} of {lanes:,} masked "
            "off). A masked-off lane keeps a thread of its warp idle: blocks much wider than the data waste threads.")


def _traffic(f: Figures, tensor_cores: bool) -> str:
    ratio = f"{f.bytes_moved / f.compulsory_bytes:.2f}x" if f.compulsory_bytes else "all of"
    reads = f"{f.input_loads / f.input_elements:.2f}" if f.input_elements else "no"
    meaning = ("Tensor cores multiply far faster than memory feeds them, so a tile is loaded again by each program "
               "that needs it: cheap while L2 holds it, and larger tiles mean fewer loads." if tensor_cores else
               "A kernel like this waits on memory, so each byte beyond the compulsory ones costs time.")
    return (f"traffic: {f.bytes_moved:,} bytes moved, {ratio} the compulsory {f.compulsory_bytes:,} (inputs read "
            f"once, outputs written once); {reads} loads per input element. {meaning}")


def _coalescing(f: Figures) -> str:
    if not f.wide_loads:
        return ("coalescing: no load had two or more active lanes. A load of one lane spends a whole memory "
                "transaction on one element; loading a block lets a warp share them.")
    return (f"coalescing: {_share(f.contiguous_loads, f.wide_loads)} of loads of several lanes read consecutive "
            f"elements ({f.contiguous_loads:,} of {f.wide_loads:,}). A warp's neighbouring addresses merge into a few "
            "wide memory transactions; a scattered gather costs one per lane.")


def _atomics(f: Figures) -> str:
    per = f" ({f.atomics / f.output_elements:.2f} per output element)" if f.output_elements else ""
    return (f"atomics: {f.atomics:,}{per}. Memory applies the atomics on one address one after another: cheap when "
            "spread out, slow when many programs add into one element, such as a hub node's.")


def _imbalance(f: Figures) -> str:
    mean = f.program_loads / f.programs if f.programs else 0
    ratio = f"{f.busiest_program / mean:.1f}x" if mean else "no more than"
    return (f"imbalance: the busiest program loaded {ratio} the mean ({f.busiest_program:,} elements against "
            f"{mean:,.0f}, over {f.programs:,} programs). The kernel lasts as long as its busiest program: a hub's "
            "long neighbour list keeps one program working while the rest of the GPU waits.")


def advice(f: Figures, puzzle) -> list[str]:
    """The coach's lines: lanes, traffic and coalescing; atomics where there are any; imbalance for a graph."""
    lines = [_lanes(f), _traffic(f, _is_tensor_core_puzzle(puzzle)), _coalescing(f)]
    if f.atomics:
        lines.append(_atomics(f))
    if _is_graph_puzzle(puzzle):
        lines.append(_imbalance(f))
    return lines


def _is_graph_puzzle(puzzle) -> bool:
    """A puzzle whose cases are graphs (chapter 3, and puzzle 13), where the work per program follows the degree."""
    return any(case.graph is not None for case in puzzle.cases)


def _is_tensor_core_puzzle(puzzle) -> bool:
    """A puzzle whose lesson is tl.dot on tensor cores (a Dots budget): its time is set by multiply-adds."""
    return any(type(budget).__name__ == "Dots" for budget in puzzle.budgets)


def summary(cases, puzzle) -> dict | None:
    """The coach for --json: the chosen case's name, whether it passed, its figures and the lines; None where no
    case has a record (a native run)."""
    found = chosen(cases)
    if found is None:
        return None
    case, f = found
    return {"case": case.name, "passed": case.passed, "figures": f.to_json(), "lines": advice(f, puzzle)}
