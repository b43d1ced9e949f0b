"""Time the chapter-3 solution kernels over launch settings on a GPU, to choose the launchers' defaults.

    python3 scripts/explore_graph_kernels.py        prints one line per (puzzle, batch, setting)
The launchers fix num_warps and num_stages; this calls the kernels directly to vary them.
"""

import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.testing  # noqa: E402

from grader.bench import _inputs, settings_of  # noqa: E402
from grader.course import registry  # noqa: E402
from grader.worker import loader  # noqa: E402


def launch(puzzle, module, inputs, block_e, warps, stages):
    if puzzle.number == 8:
        v, s, col_ptr, edge_id = (inputs[k] for k in ("v_scaled", "score", "col_ptr", "edge_id"))
        n, (_, h, d) = col_ptr.numel() - 1, v.shape
        out = torch.empty((n, h, d), device=v.device)
        return lambda: module.csc_gather_kernel[(n,)](v, s, col_ptr, edge_id, out, n, h, d, BLOCK_E=block_e,
                                                      NODES_PER_PROGRAM=1, H_PAD=h, D_PAD=d, num_warps=warps,
                                                      num_stages=stages)
    q, k, v, e = (inputs[x] for x in ("q", "k", "v", "e"))
    n, h, d = q.shape
    out, e_out = torch.empty_like(q), torch.empty_like(e)
    return lambda: module.graph_attention_kernel[(n,)](q, k, v, e, inputs["col_ptr"], inputs["row_idx"],
                                                       inputs["edge_id"], out, e_out, n, h, d, d ** -0.5,
                                                       BLOCK_E=block_e, NODES_PER_PROGRAM=1, H_PAD=h, D_PAD=d,
                                                       num_warps=warps, num_stages=stages)


def main():
    for number in (8, 10):
        puzzle = registry.find(number)
        module = sys.modules[loader.load_launcher(puzzle, "solutions").__module__]
        for case in settings_of(puzzle).sizes[2:]:  # batches 64, 512, 4096
            inputs, dims = _inputs(puzzle, case)
            results = []
            for block_e, warps, stages in itertools.product((8, 16, 32), (1, 2, 4, 8), (1, 2, 3)):
                try:
                    fn = launch(puzzle, module, inputs, block_e, warps, stages)
                    us = 1000 * triton.testing.do_bench(fn, warmup=10, rep=50, return_mode="median")
                except Exception as exc:
                    print(f"  {number} BLOCK_E={block_e} warps={warps} stages={stages}: {type(exc).__name__}")
                    continue
                results.append((us, block_e, warps, stages))
            results.sort()
            for us, block_e, warps, stages in results[:5]:
                print(f"p{number} {case.name}: {us:8.1f} us  BLOCK_E={block_e} num_warps={warps} num_stages={stages}",
                      flush=True)
            default = [r for r in results if r[1:] == (16, 4, 3)]
            print(f"p{number} {case.name}: default (16, 4 warps, 3 stages) {default[0][0]:.1f} us", flush=True)
            del inputs
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
