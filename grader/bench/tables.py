"""The bench's tables: the peers table (per puzzle and size, the solution at its defaults against its fastest correct
peer), the Markdown of every row, and the table recorded on an H200 (``RECORDED``), which needs no GPU to show."""

from __future__ import annotations

import json
from pathlib import Path

from grader.bench.measure import MATMUL_SIZE
from grader.bench.timing import CUDA_GRAPH, OURS, SWEPT

OURS_AT = "defaults: the launcher called with no block-size arguments"  # the header's "ours", what OURS means

RECORDED = "docs/bench/peers.json"  # every puzzle's bench, one run on a GPU (docs/benchmarks.md says which)

TABLE_BEGIN, TABLE_END = "<!-- peers table: begin -->", "<!-- peers table: end -->"  # --recorded --markdown FILE



def _is_peer(row: dict, replayed: bool) -> bool:
    """A correct result of something other than our solution, timed as launched or replayed from a CUDA graph."""
    return (row["us"] is not None and row["correct"] and not row["impl"].startswith("triton (")
            and row["impl"].endswith(CUDA_GRAPH) == replayed)


def _ours_and_peer(group: list[dict]) -> tuple[dict | None, dict | None, bool]:
    """Our row and the fastest peer's, both launched, or both replayed from CUDA graphs where the bench replays
    them (kernels as short as their launch, where a launch's median is the host's time); whether replayed."""
    for replayed in (True, False):
        ours = next((r for r in group if r["impl"] == OURS + CUDA_GRAPH * replayed and r["us"] is not None), None)
        peer = min((r for r in group if _is_peer(r, replayed)), key=lambda r: r["us"], default=None)
        if replayed and ours is not None and peer is not None:
            return ours, peer, True
    return ours, peer, False


def comparisons_of(rows: list[dict]) -> list[tuple]:
    """(puzzle, size, ours, peer, replayed) per puzzle and size, in the rows' order: ``_ours_and_peer`` of each."""
    keys = dict.fromkeys((r["puzzle"], r["size"]) for r in rows)
    return [(number, size, *_ours_and_peer([r for r in rows if (r["puzzle"], r["size"]) == (number, size)]))
            for number, size in keys]


def peers_table(rows: list[dict], comparisons: list[tuple] | None = None) -> str:
    """One row per puzzle and size: our solution as a user calls it (no block-size arguments: the launcher's
    defaults), the fastest correct peer (eager, torch.compile, library call or baseline), peer µs / our µs (1 or
    more: ours is faster), and the share of the floor ours reaches; where the rows hold a sweep (``--sweep``), also
    the fastest correct setting swept, which the ratio does not use. Our variants are not peers. A launch is compared
    with a launch, except where the bench also replayed ours and a peer from CUDA graphs (puzzles 9 and 13): there
    the replays are compared. `comparisons`: ``comparisons_of(rows)``, where the caller has them already."""
    swept = any(r["impl"] == SWEPT for r in rows)
    lines = ["| puzzle | size | solution µs | best peer | peer µs | peer / ours | ours of floor |"
             + " best swept µs |" * swept, "|---|---|---:|---|---:|---:|---:|" + "---:|" * swept]
    wrong = {(r["puzzle"], r["size"]) for r in rows if r["impl"] == OURS and not r["correct"]}  # checked on launch
    for number, size, ours, peer, replayed in comparisons_of(rows) if comparisons is None else comparisons:
        ours_cells = ["—", "—"] if ours is None else [
            f"{ours['us']:.1f}" + " (CUDA graph)" * replayed + " WRONG RESULT" * ((number, size) in wrong),
            f"{ours['floor_us'] / ours['us']:.0%}"]
        peer_cells = ["—", "—"] if peer is None else [peer["impl"], f"{peer['us']:.1f}"]
        ratio = "—" if ours is None or peer is None else f"{peer['us'] / ours['us']:.2f}x"
        cells = [str(number), size, ours_cells[0], *peer_cells, ratio, ours_cells[1]]
        if swept:
            best = min((r for r in rows if (r["puzzle"], r["size"]) == (number, size) and r["impl"] == SWEPT
                        and r["us"] is not None and r["correct"]), key=lambda r: r["us"], default=None)
            cells.append("—" if best is None else f"{best['us']:.1f} ({best['note']})")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def recorded_rows(path=None) -> tuple[dict, list[dict]]:
    """(header, rows) of the recorded bench (default: the repository's RECORDED file)."""
    from grader.paths import ROOT

    recorded = json.loads((ROOT / RECORDED if path is None else Path(path)).read_text())
    return recorded["header"], recorded["rows"]


def recorded_peers(numbers=None, path=None) -> str:
    """The peers table of the puzzles `numbers` (default: all) as recorded in `path` (default: the repository's
    RECORDED file), under a line saying where and when: what the notebooks show where there is no GPU."""
    from grader.paths import ROOT

    path = ROOT / RECORDED if path is None else Path(path)
    try:
        header, rows = recorded_rows(path)
        rows = [r for r in rows if numbers is None or r["puzzle"] in set(numbers)]
        if not rows:
            return f"{path.name} holds no results for puzzle(s) {', '.join(map(str, numbers))}"
        comparisons = comparisons_of(rows)
        table = peers_table(rows, comparisons)
        beyond = any(ours and ours["floor_us"] > ours["us"] for _, _, ours, _, _ in comparisons)
        where = (f"Recorded on {header['device']}, {header['date']} (torch {header['torch']}, triton "
                 f"{header['triton']}); the solution {_ours_at(header)}")
    except (OSError, ValueError, KeyError, TypeError, AttributeError, ZeroDivisionError) as exc:  # a damaged file
        return f"no recorded results to show ({path.name}: {type(exc).__name__})"
    return (f"{where}; median µs, peer / ours of 1 or more means the solution is faster:\n\n" + table
            + ("\n\nOf floor above 100%: faster than the floor's model, which counts re-reads at DRAM speed that came "
               "from L2 (puzzles 4 and 5), writes at a copy's read-and-write speed (2), or flops at the float16 rate "
               "torch.matmul reached at 8192^3 (11)." if beyond else ""))


def _ours_at(header: dict) -> str:
    """How the recorded file timed the solution: at its defaults, or (files before that rule) its best setting."""
    if header.get("ours") == OURS_AT:
        return "as a user calls it (its launcher's defaults)"
    return "at the fastest of its bench's block settings"


def write_table(path: str, table: str) -> None:
    """Put `table` into the Markdown file `path` between the lines TABLE_BEGIN and TABLE_END (a new file holds just
    the table between them)."""
    file = Path(path)
    text = file.read_text() if file.exists() else f"{TABLE_BEGIN}\n{TABLE_END}\n"
    before, begin, rest = text.partition(TABLE_BEGIN + "\n")
    _, end, after = rest.partition(TABLE_END)
    if not begin or not end:
        raise ValueError(f"{path} has no {TABLE_BEGIN} ... {TABLE_END} lines to put the table between")
    file.write_text(f"{before}{TABLE_BEGIN}\n{table}\n{TABLE_END}{after}")


def markdown(rows: list[dict], header: dict) -> str:
    rates = f"exp2 rate: {header['exp2_rate'] / 1e9:.0f} G/s."
    if "matmul_flops" in header:
        rates += (f" float16 matmul rate (torch.matmul, {MATMUL_SIZE}^3): "
                  f"{header['matmul_flops'] / 1e12:.0f} TFLOP/s.")
    lines = [f"Device: {header['device']}; torch {header['torch']}, triton {header['triton']}, "
             f"numpy {header['numpy']}, Python {header['python']}; {header['date']}.",
             f"Copy bandwidth (device-to-device, read + write): {header['copy_gbps']:.0f} GB/s. {rates}", ""]
    if rows:
        lines += ["### Peers", "", peers_table(rows), ""]
    for number in dict.fromkeys(r["puzzle"] for r in rows):
        group = [r for r in rows if r["puzzle"] == number]
        compute_bound = "gexp_per_s" in group[0]
        tensor_cores = "tflops" in group[0]
        columns = 10 if tensor_cores else 8 if compute_bound else 9
        lines += [f"### Puzzle {number}", ""]
        if tensor_cores:
            lines += ["| size | implementation | median µs | vs eager | TFLOP/s | of matmul rate | GB/s | floor µs "
                      "| of floor | note |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
        elif compute_bound:
            lines += ["| size | implementation | median µs | vs eager | G exp/s | floor µs (exp2) | of floor | note |",
                      "|---|---|---:|---:|---:|---:|---:|---|"]
        else:
            lines += ["| size | implementation | median µs | vs eager | GB/s | of copy BW | floor µs | of floor "
                      "| note |", "|---|---|---:|---:|---:|---:|---:|---:|---|"]
        sizes_seen = set()
        for r in group:
            # the first row of the size whose implementation is eager PyTorch: the spec, or a backward's autograd
            eager = next((e["us"] for e in group if e["size"] == r["size"] and e["impl"].startswith("eager")), None)
            speedup = f"{eager / r['us']:.2f}x" if eager and r["us"] else "—"
            note = r["note"] + ("" if r["correct"] else " WRONG RESULT")
            size = r["size"]
            if r.get("size_note") and size not in sizes_seen:  # said once, on the size's first row
                size = f"{size}; {r['size_note']}"
            sizes_seen.add(r["size"])
            if r["us"] is None:
                cells = ["—"] + [""] * (columns - 4)
            elif tensor_cores:
                cells = [f"{r['us']:.1f}", speedup, f"{r['tflops']:.0f}",
                         f"{r['tflops'] * 1e12 / header['matmul_flops']:.0%}", f"{r['gbps']:.0f}",
                         f"{r['floor_us']:.1f}", f"{r['floor_us'] / r['us']:.0%}"]
            elif compute_bound:
                cells = [f"{r['us']:.1f}", speedup, f"{r['gexp_per_s']:.0f}", f"{r['floor_us']:.1f}",
                         f"{r['floor_us'] / r['us']:.0%}"]
            else:
                cells = [f"{r['us']:.1f}", speedup, f"{r['gbps']:.0f}",
                         f"{r['gbps'] * 1e9 / header['copy_bps']:.0%}", f"{r['floor_us']:.1f}",
                         f"{r['floor_us'] / r['us']:.0%}"]
            lines.append("| " + " | ".join([size, r["impl"], *cells, note]) + " |")
        lines.append("")
    return "\n".join(lines)
