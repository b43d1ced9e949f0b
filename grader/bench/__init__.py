"""GPU benchmarks: ``python -m grader bench N [N ...]``.

For every size in the puzzle's ``Bench`` entry this times, with ``triton.testing.do_bench``
medians (the L2 cache is flushed before each run):
- the graded implementation (the solution by default) as a user calls it, with no block-size arguments, so at
  the launcher's own defaults; the note says what the launcher chose (each kernel's grid, block sizes, warps and
  stages). With ``--sweep``, also every candidate setting of the puzzle's ``Bench.sweep``: the fastest is the
  peers table's "best swept" column. Where the solution goes beyond its lesson, its lesson form (what a learner's
  own solved puzzle runs) too;
- the spec in eager PyTorch, the spec under ``torch.compile``, and the library call a
  practitioner would use instead.

It reports microseconds, speed-up over eager, and GB/s of compulsory traffic (every input read
once, every output written once) against a device-to-device copy measured in the same run. The
floor is the traffic the puzzle's algorithm must move (compulsory plus its re-reads) over that
copy bandwidth; "of floor" is floor time / measured time. For the tensor-core puzzles (a Bench
with ``flops``) it also reports TFLOP/s against torch.matmul's float16 rate, measured in the same
run, and the floor is the larger of the memory floor and the FLOPs at that rate. The Markdown opens with
the peers table (``peers_table``): per puzzle and size, the solution at its defaults against its fastest correct
peer.

    python -m grader bench 11 12 13 --sweep --markdown bench.md --json bench.json
    python -m grader bench --recorded                  # the table recorded on an H200 (docs/bench/peers.json)
    python -m grader bench --recorded --plot docs/benchmarks.png --markdown docs/benchmarks.md
    ncu --profile-from-start off python -m grader bench 12 --once --sizes "N=16384, T=16384, D=128"

The package, one module a job: ``settings`` (every puzzle's sizes, sweeps and peers), ``baselines`` (peers written
for the bench), ``measure`` (do_bench medians, the GPU's ceilings, ``GraderCheck``), ``launches`` (what a launcher
launches, noted and replayed), ``timing`` (the rows of one puzzle's sizes), ``tables`` (the peers table, the
Markdown, the recorded table), ``plots`` (the figures) and ``cli`` (the command).
"""

from grader.bench.cli import main
from grader.bench.tables import recorded_peers

__all__ = ["main", "recorded_peers"]
