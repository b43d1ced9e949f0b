"""The bench's figures (matplotlib, imported when drawing): times over sizes per puzzle (``plot``), and the recorded
peers table as bars of speed-up (``plot_speedups``), whose numbers the PNG keeps in its text chunk ``PLOTTED``."""

from __future__ import annotations

import json
from pathlib import Path

from grader.bench.tables import comparisons_of

PLOTTED = "plotted data"  # the PNG text chunk that holds the numbers a --recorded --plot figure draws



def speedup_data(rows: list[dict]) -> list[dict]:
    """What the --recorded figure draws, per puzzle and size: our time, the best peer's (both rounded to 0.1 µs, as
    the table shows them), and the peer's name."""
    return [{"puzzle": number, "size": size, "ours_us": round(ours["us"], 1), "peer_us": round(peer["us"], 1),
             "peer": peer["impl"]}
            for number, size, ours, peer, _ in comparisons_of(rows) if ours is not None and peer is not None]


def _short_sizes(sizes: list[str]) -> list[str]:
    """Labels for one puzzle's sizes: a named size's name ('batch 512'), with its N where two names repeat; plain
    dims as they are."""
    names = [size.split(" (")[0] for size in sizes]
    return [f"{name}, {_dim(size, 'N')}" if names.count(name) > 1 else name for name, size in zip(names, sizes)]


def plot_speedups(rows: list[dict], path: str) -> list[dict]:
    """Bars of peer µs / our µs per puzzle and size (log scale, 1 = as fast as the best peer), each labelled with
    its ratio and its peer. The numbers drawn are stored in the PNG's text chunk PLOTTED as JSON, so that a test can
    check the figure is current without comparing pixels. Returns them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from grader.course import registry

    data = speedup_data(rows)
    labels = []
    for number in dict.fromkeys(d["puzzle"] for d in data):
        sizes = [d["size"] for d in data if d["puzzle"] == number]
        labels += [f"{number} {registry.find(number).slug}: {short}" for short in _short_sizes(sizes)]
    ratios = [d["peer_us"] / d["ours_us"] for d in data]
    fig, ax = plt.subplots(figsize=(12, 0.26 * len(data) + 1.2))
    positions = range(len(data))[::-1]  # the first puzzle on top
    for y, d in zip(positions, data):  # every other puzzle on a grey band
        if d["puzzle"] % 2 == 0:
            ax.axhspan(y - 0.5, y + 0.5, color="#f0f0f0", zorder=0)
    ax.barh(positions, ratios, color=["#2e7d32" if r >= 1 else "#c62828" for r in ratios], height=0.7, zorder=2)
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8, zorder=3)
    ticks = [t for t in (0.25, 0.5, 1, 2, 4, 8, 16, 32) if min(ratios + [1]) / 1.3 <= t <= max(ratios + [1]) * 1.3]
    ax.set_xticks(ticks, [f"{t:g}x" for t in ticks])
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_yticks(list(positions), labels, fontsize=8)
    ax.set_ylim(-0.6, len(data) - 0.4)
    for y, ratio, d in zip(positions, ratios, data):
        ax.text(ratio * 1.04, y, f"{ratio:.2f}x  vs {d['peer']}", va="center", fontsize=7, zorder=4)
    ax.set_xlim(min(ratios + [1.0]) / 1.3, max(ratios + [1.0]) * 7)
    ax.set_xlabel("best peer's median time / the solution's (log scale): right of 1x, the solution is faster")
    ax.set_title("Each solution against the fastest peer at each size", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={PLOTTED: json.dumps(data, ensure_ascii=True), "Software": None})
    plt.close(fig)
    return data


def plotted_data(path) -> list[dict] | None:
    """The numbers a --recorded figure drew (its PNG text chunk PLOTTED), or None if it has none. Reads the PNG's
    chunks itself: no image library needed."""
    import zlib

    data = Path(path).read_bytes()
    at = 8  # past the signature
    while at + 8 <= len(data):
        length = int.from_bytes(data[at:at + 4], "big")
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + length]
        if kind in (b"tEXt", b"zTXt"):
            key, _, text = body.partition(b"\0")
            if kind == b"zTXt":
                text = zlib.decompress(text[1:])  # past the compression-method byte
            if key.decode("latin-1") == PLOTTED:
                return json.loads(text.decode("latin-1"))
        at += 12 + length
    return None


def _dim(size: str, name: str) -> str:
    """'N=16384' out of a size label such as 'random (D=64, N=16384, E=524288)'; '' if it has none."""
    return next((part.strip(" ()") for part in size.split(",") if part.strip(" (").startswith(f"{name}=")), "")


def plot(rows: list[dict], path: str) -> None:
    """One panel per puzzle: bars of median µs per size, one bar per implementation."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    numbers = list(dict.fromkeys(r["puzzle"] for r in rows))
    columns = min(3, len(numbers))
    fig_rows = -(-len(numbers) // columns)
    fig, axes = plt.subplots(fig_rows, columns, figsize=(5.5 * columns, 4 * fig_rows), squeeze=False)
    for ax in axes.flat[len(numbers):]:
        ax.set_visible(False)
    for ax, number in zip(axes.flat, numbers):
        group = [r for r in rows if r["puzzle"] == number and r["us"]]
        sizes = list(dict.fromkeys(r["size"] for r in group))
        labels = [size.split(" (")[0] if " (" in size else "x".join(p.split("=")[1] for p in size.split(", "))
                  for size in sizes]
        if len(set(labels)) < len(labels):  # one graph at several sizes: its first word and N tell them apart
            labels = [f"{size.split(' (')[0].split(',')[0].split(' batch')[0]}\n{_dim(size, 'N')}" for size in sizes]
        impls = list(dict.fromkeys(r["impl"] for r in group))
        width = 0.8 / len(impls)
        for i, impl in enumerate(impls):
            points = [(sizes.index(r["size"]) + i * width, r["us"]) for r in group if r["impl"] == impl]
            ax.bar(*zip(*points), width=width, label=impl)
        ax.set_xticks([s + 0.4 - width / 2 for s in range(len(sizes))], labels, fontsize=8,
                      rotation=30 if len(sizes) > 2 else 0, ha="right" if len(sizes) > 2 else "center")
        times = [r["us"] for r in group]
        if max(times) > 20 * min(times):  # sizes far apart: only a log scale shows the small ones
            ax.set_yscale("log")
        if " (" not in sizes[0]:
            ax.set_xlabel(" x ".join(part.split("=")[0] for part in sizes[0].split(", ")))
        ax.set_ylabel("median µs (lower is better)")
        ax.set_title(f"puzzle {number}")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
