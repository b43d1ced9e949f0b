"""Time the chapter-4 solutions' kernels at several launch settings on a GPU (how their defaults were chosen).

    python3 scripts/explore_tensor_core_kernels.py        # prints one line per setting, fastest first per problem

Not part of the tests: it needs CUDA, and its numbers are recorded in docs/benchmarks.md.
"""

import functools
import importlib.util
import itertools
import sys
from pathlib import Path

import torch
import triton
import triton.testing

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.course import graphs  # noqa: E402


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "solutions" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _us(fn) -> float:
    return 1000.0 * triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def _report(title, rows):
    print(f"\n## {title}")
    for us, setting in sorted(rows, key=lambda r: r[0]):
        print(f"  {us:9.1f} us  {setting}")


def matmul(p11):
    for m, k, n in ((4096, 4096, 4096), (8192, 8192, 8192)):
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        c = torch.empty(m, n, device="cuda", dtype=torch.float32)
        triton.set_allocator(p11._scratch)
        rows = [(_us(functools.partial(torch.matmul, a, b)), "torch.matmul (fp16 out)")]
        for bm, bn, bk, warps, stages in itertools.product((128,), (128, 256), (64,), (4, 8), (3, 4)):
            grid = (triton.cdiv(m, bm), triton.cdiv(n, bn))
            try:
                run = functools.partial(p11.matmul_kernel[grid], a, b, c, m, n, k, BM=bm, BN=bn, BK=bk,
                                        num_warps=warps, num_stages=stages)
                run()
                ok = torch.allclose(c, a.float() @ b.float(), rtol=1e-2, atol=1e-1)
                setting = f"BM={bm} BN={bn} BK={bk} warps={warps} stages={stages}"
                rows.append((_us(run), setting + ("" if ok else " WRONG")))
            except Exception as exc:
                print(f"  BM={bm} BN={bn} warps={warps} stages={stages}: {type(exc).__name__} {str(exc)[:100]}")
        flops = 2 * m * n * k
        _report(f"matmul {m}x{k}x{n} (TFLOP/s = {flops:.3g} / us / 1e6)", rows)


def attention(p12):
    for n, d in ((4096, 64), (16384, 64), (8192, 128)):
        q, k, v = (torch.randn(n, d, device="cuda", dtype=torch.float16) for _ in range(3))
        o = torch.empty(n, d, device="cuda", dtype=torch.float32)
        sdpa = functools.partial(torch.nn.functional.scaled_dot_product_attention, q[None, None], k[None, None],
                                 v[None, None])
        rows = [(_us(sdpa), "scaled_dot_product_attention")]
        for bq, bk, warps, stages in itertools.product((64, 128), (32, 64, 128), (4, 8), (2, 3)):
            try:
                run = functools.partial(p12.attention_kernel[(triton.cdiv(n, bq),)], q, k, v, o, n, n, d ** -0.5,
                                        D=d, BQ=bq, BK=bk, num_warps=warps, num_stages=stages)
                run()
                rows.append((_us(run), f"BQ={bq} BK={bk} warps={warps} stages={stages}"))
            except Exception as exc:
                print(f"  BQ={bq} BK={bk} warps={warps}: {type(exc).__name__} {str(exc)[:100]}")
        _report(f"attention N=T={n}, D={d} (TFLOP/s = {4 * n * n * d:.3g} / us / 1e6)", rows)


def sparse(p13):
    g = torch.Generator().manual_seed(0)
    problems = {
        "random 16384x32": graphs.random_graph(16384, 32, g),
        "banded 16384x32 (width 32)": graphs.banded(16384, 32, g, width=32),
        "molecules 164x100, in-degree 10": graphs.molecules(164, g, nodes=100, in_degree=10),
    }
    for name, graph in problems.items():
        bsb = graph.bsb
        stats = graphs.bsb_stats(bsb)
        n, d = graph.num_nodes, 64
        q, k, v = (torch.randn(n, d, device="cuda", dtype=torch.float16) for _ in range(3))
        arrays = [t.cuda() for t in bsb]
        o = torch.empty(n, d, device="cuda", dtype=torch.float32)
        reference = p13.sparse_attention(q, k, v, *arrays)
        rows = []
        for warps, stages in itertools.product((1, 2, 4), (1, 2, 3)):
            run = functools.partial(p13.sparse_attention_kernel[(arrays[3].numel(),)], q, k, v, *arrays, o, n,
                                    d ** -0.5, D=d, num_warps=warps, num_stages=stages)
            run()
            ok = torch.allclose(o, reference, rtol=1e-3, atol=1e-3)
            rows.append((_us(run), f"warps={warps} stages={stages}{'' if ok else ' WRONG'}"))
        _report(f"sparse attention, {name}: {stats}", rows)


if __name__ == "__main__":
    torch.manual_seed(0)
    which = sys.argv[1:] or ["11", "12", "13"]
    if "13" in which:
        sparse(_load("p13_sparse_attention"))
    if "12" in which:
        attention(_load("p12_attention"))
    if "11" in which:
        matmul(_load("p11_matmul"))
