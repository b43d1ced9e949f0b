"""Time puzzle 13's sparse attention and its variants against the CSR CUDA-core baseline on one GPU (issue 11).

Runs from the repository root or from a copy of it (it imports grader.course.graphs and grader.bench.baselines, and the
solution from solutions/ or from the folder named by --solution-dir). Every variant is checked first against the
unfused float32 reference on the benchmark's graphs, then timed with triton.testing.do_bench (median).
Variants: the solution's kernel at each (num_warps, num_stages); kernels that take two or G TCBs per step; a
split kernel (each window's TCBs shared by S programs, flash-decoding style) with a combine kernel.
--profile launches the solution, the CSR kernel and the variants once each on the N=16384 random graph, for ncu.

    python scripts/bench_peers_13.py --out /tmp/peers13 [--profile]
"""

from __future__ import annotations

import argparse
import datetime
import functools
import importlib.util
import json
import pathlib
import platform
import sys

import torch
import triton
import triton.language as tl
import triton.testing

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from grader.bench import baselines  # noqa: E402
from grader.course import graphs  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _load_solution(folder: pathlib.Path):
    path = folder / "p13_sparse_attention.py"
    spec = importlib.util.spec_from_file_location("p13_sparse_attention", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def median_us(fn) -> float:
    return 1000.0 * triton.testing.do_bench(fn, warmup=25, rep=150, return_mode="median")


@triton.jit
def pair_kernel(q_ptr, k_ptr, v_ptr, window_ptr_ptr, tcb_col_ptr, tcb_mask_ptr, window_order_ptr, o_ptr, N, scale,
                D: tl.constexpr):
    """The solution's loop with two TCBs (32 columns) per step: one [16, 32] score tile, one [32, D] gather each."""
    window = tl.load(window_order_ptr + tl.program_id(0))
    rows = window * 16 + tl.arange(0, 16)
    slots = tl.arange(0, 16)
    pair = tl.arange(0, 32)
    feats = tl.arange(0, D)
    row_ok = rows < N
    q = tl.load(q_ptr + rows[:, None] * D + feats[None, :], mask=row_ok[:, None], other=0.0)
    running_max = tl.full([16], float("-inf"), dtype=tl.float32)
    total = tl.zeros([16], dtype=tl.float32)
    acc = tl.zeros([16, D], dtype=tl.float32)
    first = tl.load(window_ptr_ptr + window)
    last = tl.load(window_ptr_ptr + window + 1)
    for tcb in tl.range(first, last, 2):
        ok = tcb + pair // 16 < last
        cols = tl.load(tcb_col_ptr + tcb * 16 + pair, mask=ok, other=0)
        bits_a = tl.load(tcb_mask_ptr + tcb * 16 + slots)
        bits_b = tl.load(tcb_mask_ptr + tcb * 16 + 16 + slots, mask=tcb + 1 + slots * 0 < last, other=0)
        bits = tl.where(pair[None, :] < 16, bits_a[:, None], bits_b[:, None])
        edge = ((bits >> (pair[None, :] % 16)) & 1) != 0
        k = tl.load(k_ptr + cols[:, None] * D + feats[None, :], mask=ok[:, None], other=0.0)
        v = tl.load(v_ptr + cols[:, None] * D + feats[None, :], mask=ok[:, None], other=0.0)
        scores = tl.dot(q, tl.trans(k)) * (scale * 1.4426950408889634)
        scores = tl.where(edge, scores, float("-inf"))
        new_max = tl.maximum(running_max, tl.max(scores, axis=1))
        base = tl.where(new_max == float("-inf"), 0.0, new_max)
        alpha = tl.exp2(running_max - base)
        p = tl.exp2(scores - base[:, None])
        total = total * alpha + tl.sum(p, axis=1)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        running_max = new_max
    out = acc / tl.where(total > 0, total, 1.0)[:, None]
    tl.store(o_ptr + rows[:, None] * D + feats[None, :], out, mask=row_ok[:, None])


@triton.jit
def group_kernel(q_ptr, k_ptr, v_ptr, window_ptr_ptr, tcb_col_ptr, tcb_mask_ptr, window_order_ptr, o_ptr, N, scale,
                 D: tl.constexpr, G: tl.constexpr):
    """G TCBs (16 G columns) per step; each (row, column) reads its TCB's mask word, a gather the L1 serves."""
    window = tl.load(window_order_ptr + tl.program_id(0))
    rows = window * 16 + tl.arange(0, 16)
    lanes = tl.arange(0, 16 * G)
    feats = tl.arange(0, D)
    row_ok = rows < N
    q = tl.load(q_ptr + rows[:, None] * D + feats[None, :], mask=row_ok[:, None], other=0.0)
    running_max = tl.full([16], float("-inf"), dtype=tl.float32)
    total = tl.zeros([16], dtype=tl.float32)
    acc = tl.zeros([16, D], dtype=tl.float32)
    first = tl.load(window_ptr_ptr + window)
    last = tl.load(window_ptr_ptr + window + 1)
    for tcb in tl.range(first, last, G):
        ok = tcb + lanes // 16 < last
        cols = tl.load(tcb_col_ptr + tcb * 16 + lanes, mask=ok, other=0)
        bits = tl.load(tcb_mask_ptr + (tcb + lanes[None, :] // 16) * 16 + tl.arange(0, 16)[:, None],
                       mask=ok[None, :], other=0)
        edge = ((bits >> (lanes[None, :] % 16)) & 1) != 0
        k = tl.load(k_ptr + cols[:, None] * D + feats[None, :], mask=ok[:, None], other=0.0)
        v = tl.load(v_ptr + cols[:, None] * D + feats[None, :], mask=ok[:, None], other=0.0)
        scores = tl.dot(q, tl.trans(k)) * (scale * 1.4426950408889634)
        scores = tl.where(edge, scores, float("-inf"))
        new_max = tl.maximum(running_max, tl.max(scores, axis=1))
        base = tl.where(new_max == float("-inf"), 0.0, new_max)
        alpha = tl.exp2(running_max - base)
        p = tl.exp2(scores - base[:, None])
        total = total * alpha + tl.sum(p, axis=1)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        running_max = new_max
    out = acc / tl.where(total > 0, total, 1.0)[:, None]
    tl.store(o_ptr + rows[:, None] * D + feats[None, :], out, mask=row_ok[:, None])


@triton.jit
def split_kernel(q_ptr, k_ptr, v_ptr, window_ptr_ptr, tcb_col_ptr, tcb_mask_ptr, window_order_ptr,
                 part_acc_ptr, part_max_ptr, part_total_ptr, N, scale, D: tl.constexpr, S: tl.constexpr):
    """Program (i, s) takes the s-th of S equal shares of window window_order[i]'s TCBs and writes its
    unnormalised acc, running max (log2 units) and total for the combine."""
    window = tl.load(window_order_ptr + tl.program_id(0))
    share = tl.program_id(1)
    rows = window * 16 + tl.arange(0, 16)
    slots = tl.arange(0, 16)
    feats = tl.arange(0, D)
    row_ok = rows < N
    q = tl.load(q_ptr + rows[:, None] * D + feats[None, :], mask=row_ok[:, None], other=0.0)
    running_max = tl.full([16], float("-inf"), dtype=tl.float32)
    total = tl.zeros([16], dtype=tl.float32)
    acc = tl.zeros([16, D], dtype=tl.float32)
    first = tl.load(window_ptr_ptr + window)
    last = tl.load(window_ptr_ptr + window + 1)
    chunk = tl.cdiv(last - first, S)
    lo = first + share * chunk
    hi = tl.minimum(lo + chunk, last)
    for tcb in tl.range(lo, hi):
        cols = tl.load(tcb_col_ptr + tcb * 16 + slots)
        bits = tl.load(tcb_mask_ptr + tcb * 16 + slots)
        edge = ((bits[:, None] >> slots[None, :]) & 1) != 0
        k = tl.load(k_ptr + cols[:, None] * D + feats[None, :])
        v = tl.load(v_ptr + cols[:, None] * D + feats[None, :])
        scores = tl.dot(q, tl.trans(k)) * (scale * 1.4426950408889634)
        scores = tl.where(edge, scores, float("-inf"))
        new_max = tl.maximum(running_max, tl.max(scores, axis=1))
        base = tl.where(new_max == float("-inf"), 0.0, new_max)
        alpha = tl.exp2(running_max - base)
        p = tl.exp2(scores - base[:, None])
        total = total * alpha + tl.sum(p, axis=1)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        running_max = new_max
    part_rows = share * N + rows
    tl.store(part_acc_ptr + part_rows[:, None] * D + feats[None, :], acc, mask=row_ok[:, None])
    tl.store(part_max_ptr + part_rows, running_max, mask=row_ok)
    tl.store(part_total_ptr + part_rows, total, mask=row_ok)


@triton.jit
def combine_kernel(part_acc_ptr, part_max_ptr, part_total_ptr, o_ptr, N, D: tl.constexpr, S: tl.constexpr):
    rows = tl.program_id(0) * 16 + tl.arange(0, 16)
    feats = tl.arange(0, D)
    row_ok = rows < N
    best = tl.full([16], float("-inf"), dtype=tl.float32)
    for s in tl.static_range(S):
        best = tl.maximum(best, tl.load(part_max_ptr + s * N + rows, mask=row_ok, other=float("-inf")))
    base = tl.where(best == float("-inf"), 0.0, best)
    total = tl.zeros([16], dtype=tl.float32)
    acc = tl.zeros([16, D], dtype=tl.float32)
    for s in tl.static_range(S):
        weight = tl.exp2(tl.load(part_max_ptr + s * N + rows, mask=row_ok, other=float("-inf")) - base)
        total += weight * tl.load(part_total_ptr + s * N + rows, mask=row_ok, other=0.0)
        part = tl.load(part_acc_ptr + (s * N + rows)[:, None] * D + feats[None, :], mask=row_ok[:, None], other=0.0)
        acc += weight[:, None] * part
    out = acc / tl.where(total > 0, total, 1.0)[:, None]
    tl.store(o_ptr + rows[:, None] * D + feats[None, :], out, mask=row_ok[:, None])


def run_solution(p13, warps, stages):
    def launch(q, k, v, window_ptr, tcb_col, tcb_mask, window_order):
        n, d = q.shape
        o = torch.empty((n, d), dtype=torch.float32, device=q.device)
        p13.sparse_attention_kernel[(window_order.numel(),)](q, k, v, window_ptr, tcb_col, tcb_mask, window_order,
                                                             o, n, d ** -0.5, D=d, num_warps=warps, num_stages=stages)
        return o
    return launch


def run_pair(warps, stages):
    def launch(q, k, v, window_ptr, tcb_col, tcb_mask, window_order):
        n, d = q.shape
        o = torch.empty((n, d), dtype=torch.float32, device=q.device)
        pair_kernel[(window_order.numel(),)](q, k, v, window_ptr, tcb_col, tcb_mask, window_order, o, n, d ** -0.5,
                                             D=d, num_warps=warps, num_stages=stages)
        return o
    return launch


def run_group(groups, warps, stages):
    def launch(q, k, v, window_ptr, tcb_col, tcb_mask, window_order):
        n, d = q.shape
        o = torch.empty((n, d), dtype=torch.float32, device=q.device)
        group_kernel[(window_order.numel(),)](q, k, v, window_ptr, tcb_col, tcb_mask, window_order, o, n, d ** -0.5,
                                              D=d, G=groups, num_warps=warps, num_stages=stages)
        return o
    return launch


def run_split(shares, warps, stages):
    def launch(q, k, v, window_ptr, tcb_col, tcb_mask, window_order):
        n, d = q.shape
        o = torch.empty((n, d), dtype=torch.float32, device=q.device)
        part_acc = torch.empty((shares, n, d), dtype=torch.float32, device=q.device)
        part_max = torch.empty((shares, n), dtype=torch.float32, device=q.device)
        part_total = torch.empty((shares, n), dtype=torch.float32, device=q.device)
        windows = window_order.numel()
        split_kernel[(windows, shares)](q, k, v, window_ptr, tcb_col, tcb_mask, window_order, part_acc, part_max,
                                        part_total, n, d ** -0.5, D=d, S=shares, num_warps=warps, num_stages=stages)
        combine_kernel[(windows,)](part_acc, part_max, part_total, o, n, D=d, S=shares, num_warps=2)
        return o
    return launch


def _csr(csr, setting, *bsb_inputs):
    """The CSR baseline on its own (untimed) CSR; the BSB arguments are ignored."""
    return baselines.csr_attention(**csr, **setting)


def variants(p13):
    out = {}
    for warps in (1, 2, 4):
        for stages in (1, 2, 3, 4, 5, 6):
            out[f"solution kernel, warps={warps}, stages={stages}"] = run_solution(p13, warps, stages)
    for warps in (1, 2, 4):
        for stages in (2, 3, 4, 5, 6):
            out[f"two TCBs per step, warps={warps}, stages={stages}"] = run_pair(warps, stages)
    for groups in (2, 4):
        for stages in (3, 4, 5):
            out[f"G={groups} TCBs per step (mask gather), warps=1, stages={stages}"] = run_group(groups, 1, stages)
    for shares in (2, 4, 8):
        for stages in (2, 3):
            out[f"split S={shares}, warps=1, stages={stages}"] = run_split(shares, 1, stages)
    return out


def problems(sizes):
    g = torch.Generator().manual_seed(0)
    for n in sizes:
        yield f"random, 32 neighbours, N={n}", graphs.random_graph(n, 32, g)
        yield f"banded, 32 within 32, N={n}", graphs.banded(n, 32, g, width=32)
        yield f"molecules, batch {n // 100}", graphs.molecules(n // 100, g, nodes=100, in_degree=10)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=pathlib.Path)
    parser.add_argument("--solution-dir", type=pathlib.Path, default=ROOT / "solutions")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="check every variant on small graphs, time nothing")
    parser.add_argument("--only", default="", help="comma-separated variant names (default: all)")
    args = parser.parse_args()
    p13 = _load_solution(args.solution_dir)
    chosen = variants(p13)
    chosen["solution launcher (as committed)"] = p13.sparse_attention
    if args.only:
        keep = set(args.only.split(";"))
        chosen = {name: fn for name, fn in chosen.items() if name in keep or name.startswith("solution launcher")}
    sizes = (16384,) if args.profile else (16384, 65536)
    if args.smoke:  # the interpreter: small graphs, no timing
        sizes = (300,)
    rows = []
    for graph_name, graph in problems(sizes):
        bsb = graph.bsb
        stats = graphs.bsb_stats(bsb)
        n, d = graph.num_nodes, 64
        gen = torch.Generator(device=DEVICE).manual_seed(1)
        q, k, v = (torch.randn((n, d), generator=gen, device=DEVICE).to(torch.float16) for _ in range(3))
        arrays = [t.to(DEVICE) for t in bsb]
        inputs = dict(q=q, k=k, v=v, **dict(zip(graphs.BSB._fields, arrays)))
        csr = baselines.csr_from_bsb(inputs)
        e_rows, e_cols = graphs.bsb_edges(*arrays[:3])
        from grader.bench.settings import unfused_attention
        reference = unfused_attention(q.float(), k.float(), v.float(), e_rows.to(DEVICE), e_cols.to(DEVICE))
        print(f"== {graph_name}: {stats}", flush=True)
        if args.profile:
            if "random" in graph_name:
                for fn in chosen.values():
                    fn(q, k, v, *arrays)
                baselines.csr_attention(**csr, BLOCK_E=16, num_warps=1)
                torch.cuda.synchronize()
            continue
        timed = dict(chosen)
        for setting in (dict(BLOCK_E=16, num_warps=1), dict(BLOCK_E=32, num_warps=2), dict(BLOCK_E=32, num_warps=4),
                        dict(BLOCK_E=64, num_warps=4)):
            timed[f"CSR baseline, {setting}"] = functools.partial(_csr, csr, setting)
        for name, fn in timed.items():
            try:
                got = fn(q, k, v, *arrays)
                err = float((got.float() - reference).abs().max())
                ok = err < 2e-2
                us = None if args.smoke else median_us(functools.partial(fn, q, k, v, *arrays)) if ok else None
            except Exception as exc:  # a variant that fails to compile is a row too
                err, ok, us = None, False, None
                print(f"   {name}: {type(exc).__name__}: {str(exc)[:200]}")
            rows.append(dict(graph=graph_name, fill=stats.fill, tcbs=stats.tcbs, implementation=name, us=us,
                             max_abs_err=err, correct=ok))
            print(f"   {name:45s} {us if us is None else round(us, 1)!s:>8} µs  err {err}", flush=True)
    if args.out and rows:
        args.out.mkdir(parents=True, exist_ok=True)
        device = torch.cuda.get_device_name() if DEVICE == "cuda" else "cpu"
        meta = dict(date=datetime.date.today().isoformat(), device=device,
                    torch=torch.__version__, triton=triton.__version__, python=platform.python_version())
        (args.out / "peers_13.json").write_text(json.dumps(dict(meta=meta, rows=rows), indent=1))


if __name__ == "__main__":
    main()
