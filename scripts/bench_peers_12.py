"""Time variants of puzzle 12's tiled attention against SDPA and torch.compile on one GPU (issue 11).

Self-contained: it needs solutions/p12_attention.py next to it (or in ../solutions) and nothing of the grader,
so it can travel alone to a device machine. Every variant is checked first on fresh random data with a
NaN-poisoned output against a float64 reference (at each timed size and at a ragged one), then timed with
triton.testing.do_bench (median). SDPA is timed as PyTorch picks it and with each backend forced, which shows
the backend it picks. Prints a table last; --out DIR also writes every row as JSON. Round 2 also times candidate
solution files placed next to it, if there (p12_cand_b.py, p12_cand_c.py: the 2026-11-30 run's B is today's
solution, C masked only the last key block), through their own launchers.

    python scripts/bench_peers_12.py --out /tmp/peers [--round 2] [--no-compile]
"""

from __future__ import annotations

import argparse
import datetime
import functools
import importlib.util
import json
import math
import pathlib
import platform
import sys
import time

import torch
import triton
import triton.language as tl
import triton.testing

HERE = pathlib.Path(__file__).resolve().parent
SIZES = [(4096, 64), (8192, 64), (16384, 64), (4096, 128), (8192, 128), (16384, 128)]  # N = T, D; batch 1, 1 head


def _load(name: str):
    """A solution module, from next to this script or from ../solutions."""
    for folder in (HERE, HERE.parent / "solutions"):
        path = folder / f"{name}.py"
        if path.exists():
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    raise FileNotFoundError(name)


def median_us(fn) -> float:
    return 1000.0 * triton.testing.do_bench(fn, warmup=25, rep=150, return_mode="median")


def _scratch(size: int, alignment: int, stream):
    return torch.empty(size, dtype=torch.int8, device="cuda")


@triton.jit
def _step(q, k, v, acc, running_max, total, keys, T, c, MASK: tl.constexpr, FOLD: tl.constexpr, FMA: tl.constexpr):
    """One key block of the online softmax. FOLD: q already carries c = scale * log2(e); FMA: c is applied
    inside max and exp2 (one fused multiply-add per score) instead of a separate multiply."""
    scores = tl.dot(q, tl.trans(k))
    if not FOLD and not FMA:
        scores = scores * c
    if MASK:
        scores = tl.where((keys < T)[None, :], scores, float("-inf"))
    if FMA and not FOLD:
        new_max = tl.maximum(running_max, tl.max(scores, axis=1) * c)
        p = tl.exp2(scores * c - new_max[:, None])
    else:
        new_max = tl.maximum(running_max, tl.max(scores, axis=1))
        p = tl.exp2(scores - new_max[:, None])
    alpha = tl.exp2(running_max - new_max)
    total = total * alpha + tl.sum(p, axis=1)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    return acc, new_max, total


@triton.jit
def attn_variant_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, T, scale, D: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr,
                        SPLIT: tl.constexpr, FOLD: tl.constexpr, FMA: tl.constexpr, DESC: tl.constexpr,
                        WS: tl.constexpr = False):
    """The lesson's kernel with switches. SPLIT: full key blocks without masks, then one masked ragged block;
    WS: warp specialisation of the full-block loop."""
    LOG2E: tl.constexpr = 1.4426950408889634
    c = scale * LOG2E
    queries = tl.program_id(0) * BQ + tl.arange(0, BQ)
    feats = tl.arange(0, D)
    query_ok = queries < N
    q = tl.load(q_ptr + queries[:, None] * D + feats[None, :], mask=query_ok[:, None], other=0.0)
    if FOLD:
        q = (q * c).to(q_ptr.dtype.element_ty)
    running_max = tl.full([BQ], float("-inf"), dtype=tl.float32)
    total = tl.zeros([BQ], dtype=tl.float32)
    acc = tl.zeros([BQ, D], dtype=tl.float32)
    if DESC:
        k_desc = tl.make_tensor_descriptor(k_ptr, shape=[T, D], strides=[D, 1], block_shape=[BK, D])
        v_desc = tl.make_tensor_descriptor(v_ptr, shape=[T, D], strides=[D, 1], block_shape=[BK, D])
    full_end = T // BK * BK if SPLIT else 0
    for start in tl.range(0, full_end, BK, warp_specialize=WS):
        keys = start + tl.arange(0, BK)
        if DESC:
            k = k_desc.load([start, 0])
            v = v_desc.load([start, 0])
        else:
            k = tl.load(k_ptr + keys[:, None] * D + feats[None, :])
            v = tl.load(v_ptr + keys[:, None] * D + feats[None, :])
        acc, running_max, total = _step(q, k, v, acc, running_max, total, keys, T, c, False, FOLD, FMA)
    for start in tl.range(full_end, T, BK):
        keys = start + tl.arange(0, BK)
        if DESC:
            k = k_desc.load([start, 0])
            v = v_desc.load([start, 0])
        else:
            k = tl.load(k_ptr + keys[:, None] * D + feats[None, :], mask=(keys < T)[:, None], other=0.0)
            v = tl.load(v_ptr + keys[:, None] * D + feats[None, :], mask=(keys < T)[:, None], other=0.0)
        acc, running_max, total = _step(q, k, v, acc, running_max, total, keys, T, c, True, FOLD, FMA)
    tl.store(o_ptr + queries[:, None] * D + feats[None, :], acc / total[:, None], mask=query_ok[:, None])


def variant(q, k, v, o, BQ, BK, w, s, split=False, fold=False, fma=False, desc=False, ws=False):
    (n, d), t = q.shape, k.shape[0]
    if desc:
        triton.set_allocator(_scratch)
    attn_variant_kernel[(triton.cdiv(n, BQ),)](q, k, v, o, n, t, d ** -0.5, D=d, BQ=BQ, BK=BK, SPLIT=split, FOLD=fold,
                                                FMA=fma, DESC=desc, WS=ws, num_warps=w, num_stages=s)


def solution(mod, q, k, v, o=None, **blocks):
    """A solution file's own launcher; o (for the checks) gets a copy, and is None when timed."""
    out = mod.attention(q, k, v, **blocks)
    if o is not None:
        o.copy_(out)


def variants(mod, d: int, round_: int) -> dict:
    """Round 1: the lesson kernel over launch settings, then the switches at the likely settings."""
    v = {}
    if round_ == 2:  # candidate solution files, through their own launchers, and the best round-1 variants
        candidates = {"sol A desc+fold": mod}
        for tag, name in (("sol B desc", "p12_cand_b"), ("sol C desc+fold+last-block mask", "p12_cand_c")):
            try:
                candidates[tag] = _load(name)
            except FileNotFoundError:
                pass
        for tag, module in candidates.items():
            settings = ((64, 128, 3), (64, 64, 3), (128, 128, 3), (128, 64, 3), (64, 128, 2), (64, 128, 4),
                        (128, 128, 2), (128, 128, 4))
            for bq, bk, st in settings if tag.startswith("sol A") else settings[:4]:
                blocks = dict(BQ=bq, BK=bk, num_stages=st)
                v[f"{tag} BQ={bq} BK={bk} stages={st}"] = (
                    lambda q, k, vv, o=None, m=module, b=blocks: solution(m, q, k, vv, o, **b))
        for cfg in ((64, 128, 4, 3), (128, 128, 8, 3)):
            v[f"split+fold+desc {cfg}"] = lambda q, k, vv, o, cfg=cfg: variant(q, k, vv, o, *cfg, split=True, fold=True,
                                                                                desc=True)
            v[f"split+fold+desc+ws {cfg}"] = lambda q, k, vv, o, cfg=cfg: variant(q, k, vv, o, *cfg, split=True,
                                                                                   fold=True, desc=True, ws=True)
        return v
    cfgs = [(64, 128, 4, 3), (64, 64, 4, 3), (128, 64, 8, 3), (128, 128, 8, 3), (128, 64, 8, 4), (128, 128, 8, 2),
            (32, 64, 2, 3), (64, 64, 4, 4)]
    for cfg in cfgs:
        v[f"lesson {cfg}"] = lambda q, k, vv, o, cfg=cfg: variant(q, k, vv, o, *cfg)
    for cfg in ((64, 128, 4, 3), (128, 64, 8, 3), (128, 128, 8, 3)):
        for kw in (dict(fma=True), dict(split=True, fma=True), dict(split=True, fold=True),
                   dict(split=True, fold=True, desc=True)):
            name = f"{'+'.join(kw)} {cfg}"
            v[name] = lambda q, k, vv, o, cfg=cfg, kw=kw: variant(q, k, vv, o, *cfg, **kw)
    return v


def reference(q, k, v):
    s = (q.double() @ k.double().T) / math.sqrt(q.shape[1])
    return (torch.softmax(s, dim=1) @ v.double()).float()


def check(fn, n: int, t: int, d: int) -> float:
    """Relative error (Frobenius) of fn on fresh random data, NaN-poisoned output; inf if anything is unwritten."""
    q, k, v = (torch.randn(m, d, device="cuda", dtype=torch.float16) for m in (n, t, t))
    o = torch.full((n, d), float("nan"), device="cuda")
    fn(q, k, v, o)
    torch.cuda.synchronize()
    if not torch.isfinite(o).all():
        return float("inf")
    ref = reference(q, k, v)
    return float((o - ref).norm() / ref.norm())


def spec(q, k, v):
    scores = q.float() @ k.float().T / q.shape[-1] ** 0.5
    return torch.softmax(scores, dim=1) @ v.float()


def sdpa(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q[None, None], k[None, None], v[None, None])[0, 0]


def sdpa_kernel_names(q, k, v) -> str:
    """The CUDA kernels SDPA launches as PyTorch picks it: they name the backend."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        sdpa(q, k, v)
        torch.cuda.synchronize()
    return "; ".join(sorted({e.key[:90] for e in prof.key_averages()}))


def peer_rows(n: int, d: int, q, k, v, use_compile: bool) -> list[dict]:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    size = f"N={n} D={d}"
    flops = 4 * n * n * d
    rows = []
    ref = reference(q, k, v)
    peers = {"SDPA (PyTorch's pick)": functools.partial(sdpa, q, k, v)}
    for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION):
        def forced(backend=backend):
            with sdpa_kernel([backend]):
                return sdpa(q, k, v)
        peers[f"SDPA {backend.name}"] = forced
    if use_compile:
        compiled = torch.compile(spec, dynamic=False)
        peers["torch.compile (spec)"] = functools.partial(compiled, q, k, v)
    for name, fn in peers.items():
        try:
            out = fn()
            torch.cuda.synchronize()
            err = float((out.float() - ref).norm() / ref.norm())
            us = median_us(fn)
        except Exception as exc:
            print(f"  {name}: {type(exc).__name__}: {str(exc)[:160]}", flush=True)
            rows.append(dict(size=size, impl=name, us=None, error=str(exc)[:200]))
            continue
        rows.append(dict(size=size, impl=name, us=us, tflops=flops / us / 1e6, rel_err=err, ok=err < 1e-2))
        print(f"{size} {name}: {us:.1f} us  rel_err={err:.1e}", flush=True)
    rows.append(dict(size=size, impl="SDPA kernels", note=sdpa_kernel_names(q, k, v)))
    print(f"{size} SDPA kernels: {rows[-1]['note']}", flush=True)
    return rows


def run(rows: list[dict], round_: int, use_compile: bool, budget_s: float, save) -> None:
    """Appends every row to rows, saving after each size (a run killed at its time limit keeps what it did)."""
    mod = _load("p12_attention")
    started = time.time()
    for n, d in SIZES:
        size = f"N={n} D={d}"
        flops = 4 * n * n * d
        q, k, v = (torch.randn(n, d, device="cuda", dtype=torch.float16) for _ in range(3))
        rows += peer_rows(n, d, q, k, v, use_compile and time.time() - started < budget_s)
        o = torch.empty((n, d), device="cuda")
        for name, fn in variants(mod, d, round_).items():
            try:
                # and a ragged size (divisible by 16, so no new compile, but not by 32): masks exercised
                err = max(check(fn, n, n, d), check(fn, 3024, 3024 + 16, d))
                us = median_us(functools.partial(fn, q, k, v, None if name.startswith("sol") else o))
            except Exception as exc:  # a setting this GPU cannot run: record it and go on
                print(f"  {name}: {type(exc).__name__}: {str(exc)[:160]}", flush=True)
                rows.append(dict(size=size, impl=name, us=None, error=str(exc)[:200]))
                continue
            rows.append(dict(size=size, impl=name, us=us, tflops=flops / us / 1e6, rel_err=err, ok=err < 1e-2))
            print(f"  {name}: {us:.1f} us  rel_err={err:.1e}", flush=True)
        del q, k, v, o
        torch.cuda.empty_cache()
        save()


def table(rows: list[dict]) -> str:
    """Per size: the six fastest rows, then the best correct variant of ours against the fastest peer."""
    lines = []
    for size in dict.fromkeys(r["size"] for r in rows):
        group = [r for r in rows if r["size"] == size and r.get("us")]
        peers = sorted((r for r in group if r["impl"].startswith(("SDPA", "torch.compile"))), key=lambda r: r["us"])
        ours = sorted((r for r in group if r not in peers and r.get("ok")), key=lambda r: r["us"])
        lines.append(f"== {size}")
        for r in sorted(group, key=lambda r: r["us"])[:7]:
            lines.append(f"   {r['us']:7.1f} us  {r['impl']}{'' if r.get('ok', True) else '  WRONG'}")
        if ours and peers:
            lines.append(f"   best ours {ours[0]['impl']} {ours[0]['us']:.1f} vs {peers[0]['impl']} "
                         f"{peers[0]['us']:.1f}: {peers[0]['us'] / ours[0]['us']:.2f}x")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=None)
    parser.add_argument("--no-compile", action="store_true")
    parser.add_argument("--round", type=int, default=1, help="1: the variant sweep; 2: the solution's launcher")
    parser.add_argument("--compile-budget-s", type=float, default=150.0, help="stop compiling peers after this")
    args = parser.parse_args()
    header = dict(device=torch.cuda.get_device_name(), torch=torch.__version__, triton=triton.__version__,
                  python=platform.python_version(), date=datetime.date.today().isoformat())
    print(header, flush=True)
    rows = []

    def save():
        if args.out:
            pathlib.Path(args.out).mkdir(parents=True, exist_ok=True)
            with open(pathlib.Path(args.out) / f"peers_12_round{args.round}.json", "w") as f:
                json.dump({"header": header, "rows": rows}, f, indent=1)

    try:
        run(rows, args.round, not args.no_compile, args.compile_budget_s, save)
    finally:
        save()
        print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
