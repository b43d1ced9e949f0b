"""Time variants of puzzle 6's scalar FlashAttention against torch.compile and eager PyTorch on one GPU (issue 11).

Self-contained: it needs solutions/p06_flash_attention.py next to it (or in ../solutions) and nothing of the
grader, so it can travel alone to a device machine. Every variant is checked first on fresh random data with a
NaN-poisoned output against a float64 reference (at the timed size and at a ragged one), then timed with
triton.testing.do_bench (median). Prints a table last, each kernel's exp2 instruction (already .ftz from tl.exp2)
and the solution's layouts; --out DIR also writes every row as JSON.
--profile launches the solution and one transposed variant once each, for ncu to read.

    python scripts/bench_peers_6.py --out /tmp/peers [--round 2] [--no-compile]
    ncu --clock-control none --launch-count 2 -k regex:'flash_attention_kernel|fa_trans' \
        python scripts/bench_peers_6.py --profile
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

HERE = pathlib.Path(__file__).resolve().parent
N0 = T = 16384
RAGGED = (1000, 3001)  # neither a multiple of any block: masks exercised


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
    return 1000.0 * triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")


@triton.jit
def _exp2(x, FTZ: tl.constexpr):
    """2**x; FTZ: the hardware instruction alone, subnormal results flushed to 0 (they are weights below 2**-126)."""
    if FTZ:
        return tl.inline_asm_elementwise("ex2.approx.ftz.f32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True,
                                         pack=1)
    else:
        return tl.exp2(x)


@triton.jit
def fa_rows_kernel(q_ptr, k_ptr, v_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr, SPLIT: tl.constexpr,
                   FTZ: tl.constexpr):
    """The lesson's [B0, B1] scores (queries down, keys across), q pre-scaled by log2(e). SPLIT: full key blocks
    without masks, then one masked ragged block."""
    LOG2E: tl.constexpr = 1.4426950408889634
    queries = tl.program_id(0) * B0 + tl.arange(0, B0)
    q = tl.load(q_ptr + queries, mask=queries < N0, other=0.0) * LOG2E
    m = tl.full([B0], float("-inf"), dtype=tl.float32)
    d = tl.zeros([B0], dtype=tl.float32)
    acc = tl.zeros([B0], dtype=tl.float32)
    full_end = T // B1 * B1 if SPLIT else 0
    for start in tl.range(0, full_end, B1):
        keys = start + tl.arange(0, B1)
        k = tl.load(k_ptr + keys)
        v = tl.load(v_ptr + keys)
        s = q[:, None] * k[None, :]
        new_m = tl.maximum(m, tl.max(s, axis=1))
        alpha = _exp2(m - new_m, FTZ)
        p = _exp2(s - new_m[:, None], FTZ)
        d = d * alpha + tl.sum(p, axis=1)
        acc = acc * alpha + tl.sum(p * v[None, :], axis=1)
        m = new_m
    for start in tl.range(full_end, T, B1):
        keys = start + tl.arange(0, B1)
        k = tl.load(k_ptr + keys, mask=keys < T, other=0.0)
        v = tl.load(v_ptr + keys, mask=keys < T, other=0.0)
        s = tl.where((keys < T)[None, :], q[:, None] * k[None, :], float("-inf"))
        new_m = tl.maximum(m, tl.max(s, axis=1))
        alpha = _exp2(m - new_m, FTZ)
        p = _exp2(s - new_m[:, None], FTZ)
        d = d * alpha + tl.sum(p, axis=1)
        acc = acc * alpha + tl.sum(p * v[None, :], axis=1)
        m = new_m
    tl.store(z_ptr + queries, acc / d, mask=queries < N0)


@triton.jit
def fa_trans_kernel(q_ptr, k_ptr, v_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr, FOLD: tl.constexpr,
                    SPLIT: tl.constexpr, FTZ: tl.constexpr, EVICT: tl.constexpr):
    """Scores as [B1, B0] (keys down, queries across), sums over axis 0. Triton spreads a 2-D block's threads
    along its last axis first, so here a thread owns a query's column of keys and the three sums are mostly
    within one thread, where the lesson's [B0, B1] spreads every row over a warp (five shuffles per sum)."""
    LOG2E: tl.constexpr = 1.4426950408889634
    queries = tl.program_id(0) * B0 + tl.arange(0, B0)
    q = tl.load(q_ptr + queries, mask=queries < N0, other=0.0)
    if FOLD:
        q = q * LOG2E
    m = tl.full([B0], float("-inf"), dtype=tl.float32)
    d = tl.zeros([B0], dtype=tl.float32)
    acc = tl.zeros([B0], dtype=tl.float32)
    full_end = T // B1 * B1 if SPLIT else 0
    for start in tl.range(0, full_end, B1):
        keys = start + tl.arange(0, B1)
        if EVICT:
            k = tl.load(k_ptr + keys, eviction_policy="evict_last")
            v = tl.load(v_ptr + keys, eviction_policy="evict_last")
        else:
            k = tl.load(k_ptr + keys)
            v = tl.load(v_ptr + keys)
        s = k[:, None] * q[None, :]
        new_m = tl.maximum(m, tl.max(s, axis=0))
        if FOLD:
            alpha = _exp2(m - new_m, FTZ)
            p = _exp2(s - new_m[None, :], FTZ)
        else:
            alpha = _exp2((m - new_m) * LOG2E, FTZ)
            p = _exp2((s - new_m[None, :]) * LOG2E, FTZ)
        d = d * alpha + tl.sum(p, axis=0)
        acc = acc * alpha + tl.sum(p * v[:, None], axis=0)
        m = new_m
    for start in tl.range(full_end, T, B1):
        keys = start + tl.arange(0, B1)
        k = tl.load(k_ptr + keys, mask=keys < T, other=0.0)
        v = tl.load(v_ptr + keys, mask=keys < T, other=0.0)
        s = tl.where((keys < T)[:, None], k[:, None] * q[None, :], float("-inf"))
        new_m = tl.maximum(m, tl.max(s, axis=0))
        if FOLD:
            alpha = _exp2(m - new_m, FTZ)
            p = _exp2(s - new_m[None, :], FTZ)
        else:
            alpha = _exp2((m - new_m) * LOG2E, FTZ)
            p = _exp2((s - new_m[None, :]) * LOG2E, FTZ)
        d = d * alpha + tl.sum(p, axis=0)
        acc = acc * alpha + tl.sum(p * v[:, None], axis=0)
        m = new_m
    tl.store(z_ptr + queries, acc / d, mask=queries < N0)


COMPILED = {}  # variant name -> the compiled kernel of its last launch, for its PTX


def rows_variant(q, k, v, z, B0, B1, w, split=True, ftz=False, name=""):
    n0, t = q.numel(), k.numel()
    COMPILED[name] = fa_rows_kernel[(triton.cdiv(n0, B0),)](q, k, v, z, n0, t, B0=B0, B1=B1, SPLIT=split, FTZ=ftz,
                                                             num_warps=w)


def trans_variant(q, k, v, z, B0, B1, w, fold=True, split=True, ftz=False, evict=False, name=""):
    n0, t = q.numel(), k.numel()
    COMPILED[name] = fa_trans_kernel[(triton.cdiv(n0, B0),)](q, k, v, z, n0, t, B0=B0, B1=B1, FOLD=fold, SPLIT=split,
                                                              FTZ=ftz, EVICT=evict, num_warps=w)


def solution(mod, q, k, v, z, **blocks):
    z.copy_(mod.flash_attention(q, k, v, **blocks)) if z is not None else mod.flash_attention(q, k, v, **blocks)


def variants(mod, round_: int) -> dict:
    """Round 1: the solution of 2026-11-29 and the switches; round 2: the adopted solution's launcher over
    block sizes, beside round 1's best variant."""
    v = {}
    if round_ == 2:
        for b0, b1 in ((32, 256), (64, 256), (32, 512), (16, 256), (32, 128), (64, 512)):
            v[f"sol B0={b0} B1={b1} (4 warps)"] = functools.partial(solution, mod, B0=b0, B1=b1)
        for b0, b1 in ((32, 256), (32, 512)):
            name = f"trans fold+split ({b0},{b1},4)"
            v[name] = functools.partial(trans_variant, B0=b0, B1=b1, w=4, name=name)
        return v
    for b0, b1 in ((64, 256), (128, 128), (256, 64)):  # the bench's block sizes, through the solution's launcher
        v[f"sol B0={b0} B1={b1} (4 warps)"] = functools.partial(solution, mod, B0=b0, B1=b1)
    rows = {"rows fold+split (64,256,4)": dict(B0=64, B1=256, w=4),
            "rows fold+split+ftz (64,256,4)": dict(B0=64, B1=256, w=4, ftz=True)}
    trans = {"trans plain (32,128,4)": dict(B0=32, B1=128, w=4, fold=False, split=False),
             "trans fold+split (32,128,4)": dict(B0=32, B1=128, w=4),
             "trans fold+split (32,256,4)": dict(B0=32, B1=256, w=4),
             "trans fold+split (32,256,8)": dict(B0=32, B1=256, w=8),
             "trans fold+split (64,128,4)": dict(B0=64, B1=128, w=4),
             "trans fold+split (16,128,2)": dict(B0=16, B1=128, w=2),
             "trans fold+split (32,64,1)": dict(B0=32, B1=64, w=1),
             "trans fold+split (128,64,4)": dict(B0=128, B1=64, w=4),
             "trans fold+split+ftz (32,128,4)": dict(B0=32, B1=128, w=4, ftz=True),
             "trans fold+split+ftz (32,256,8)": dict(B0=32, B1=256, w=8, ftz=True),
             "trans fold+split+evict (32,128,4)": dict(B0=32, B1=128, w=4, evict=True)}
    for name, kw in rows.items():
        v[name] = functools.partial(rows_variant, name=name, **kw)
    for name, kw in trans.items():
        v[name] = functools.partial(trans_variant, name=name, **kw)
    return v


def spec(q, k, v):
    scores = q[:, None] * k[None, :]
    weights = torch.softmax(scores, dim=1)
    return weights @ v


def fresh(n0: int, t: int):
    return 3 * torch.randn(n0, device="cuda"), torch.randn(t, device="cuda"), torch.randn(t, device="cuda")


def check(fn, n0: int, t: int) -> float:
    """Max error over max |reference| on fresh random data, NaN-poisoned output; inf if anything is unwritten."""
    q, k, v = fresh(n0, t)
    z = torch.full((n0,), float("nan"), device="cuda")
    fn(q, k, v, z)
    torch.cuda.synchronize()
    if not torch.isfinite(z).all():
        return float("inf")
    ref = spec(q.double(), k.double(), v.double())
    return float((z.double() - ref).abs().max() / ref.abs().max())


def ptx_ex2(compiled) -> str:
    """The first exp2 instruction of a kernel's PTX: whether tl.exp2 already flushes subnormals (.ftz)."""
    return next((line.strip() for line in compiled.asm["ptx"].splitlines() if "ex2" in line), "")


def run(rows: list[dict], use_compile: bool, round_: int) -> None:
    mod = _load("p06_flash_attention")
    q, k, v = fresh(N0, T)
    size = f"N0={N0} T={T}"
    exps = N0 * T
    peers = {"eager PyTorch (spec)": functools.partial(spec, q, k, v)}
    if use_compile:
        peers["torch.compile (spec)"] = functools.partial(torch.compile(spec, dynamic=False), q, k, v)
    ref = spec(q.double(), k.double(), v.double())
    for name, fn in peers.items():
        err = float((fn().double() - ref).abs().max() / ref.abs().max())
        us = median_us(fn)
        rows.append(dict(size=size, impl=name, us=us, gexp_s=exps / us / 1e3, err=err, ok=err < 1e-4))
        print(f"{name}: {us:.1f} us  err={err:.1e}", flush=True)
    z = torch.empty_like(q)
    for name, fn in variants(mod, round_).items():
        try:
            err = max(check(fn, N0, T), check(fn, *RAGGED))
            us = median_us(functools.partial(fn, q, k, v, z if not name.startswith("sol") else None))
        except Exception as exc:  # a setting this GPU cannot run: record it and go on
            print(f"  {name}: {type(exc).__name__}: {str(exc)[:160]}", flush=True)
            rows.append(dict(size=size, impl=name, us=None, error=str(exc)[:200]))
            continue
        row = dict(size=size, impl=name, us=us, gexp_s=exps / us / 1e3, err=err, ok=err < 1e-4)
        if name in COMPILED:
            row["ptx_ex2"] = ptx_ex2(COMPILED[name])
        rows.append(row)
        print(f"  {name}: {us:.1f} us  err={err:.1e}  {row.get('ptx_ex2', '')}", flush=True)
    sol = mod.flash_attention_kernel[(N0 // 64,)](q, k, v, z, N0, T, B0=64, B1=256)
    print("solution", ptx_ex2(sol), [ln for ln in sol.asm["ttgir"].splitlines() if ln.startswith("#blocked")])


def profile() -> None:
    """One launch of the solution and one of the transposed variant, for ncu (a compile launches nothing)."""
    mod = _load("p06_flash_attention")
    q, k, v = fresh(N0, T)
    z = torch.empty_like(q)
    mod.flash_attention(q, k, v)
    trans_variant(q, k, v, z, 32, 128, 4)
    torch.cuda.synchronize()


def table(rows: list[dict]) -> str:
    timed = sorted((r for r in rows if r.get("us")), key=lambda r: r["us"])
    lines = [f"   {r['us']:7.1f} us  {r['gexp_s']:6.0f} G exp/s  {r['impl']}{'' if r.get('ok') else '  WRONG'}"
             for r in timed]
    peers = [r for r in timed if "PyTorch" in r["impl"] or "compile" in r["impl"]]
    ours = [r for r in timed if r not in peers and r.get("ok")]
    if ours and peers:
        lines.append(f"   best ours {ours[0]['impl']} {ours[0]['us']:.1f} vs {peers[0]['impl']} {peers[0]['us']:.1f}: "
                     f"{peers[0]['us'] / ours[0]['us']:.2f}x")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=None)
    parser.add_argument("--no-compile", action="store_true")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--round", type=int, default=1, help="1: the variant sweep; 2: the solution's launcher")
    args = parser.parse_args()
    if args.profile:
        profile()
        return 0
    header = dict(device=torch.cuda.get_device_name(), torch=torch.__version__, triton=triton.__version__,
                  python=platform.python_version(), date=datetime.date.today().isoformat())
    print(header, flush=True)
    rows = []
    try:
        run(rows, not args.no_compile, args.round)
    finally:
        if args.out:
            pathlib.Path(args.out).mkdir(parents=True, exist_ok=True)
            with open(pathlib.Path(args.out) / f"peers_6_round{args.round}.json", "w") as f:
                json.dump({"header": header, "rows": rows}, f, indent=1)
        print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
