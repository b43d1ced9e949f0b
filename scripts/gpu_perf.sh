#!/usr/bin/env bash
# Time every puzzle on a CUDA GPU as a user calls it, and profile the rows still behind a peer: the run that
# docs/bench/peers.json, docs/benchmarks.md and its figure are made from. About 8 minutes on an H200. Every file
# lands in $OUT (default /tmp/gpu-perf), six in all:
#   summary.txt  date, GPU, clocks, versions; each step's exit status and seconds; the peers table
#   peers.json   every puzzle's bench: the solution at its launcher's defaults, every peer, and the settings of each
#                puzzle's Bench.sweep (--sweep): the record, docs/bench/peers.json
#   bench.md     the same as Markdown, peers table first
#   bench.log    the bench's progress (a line per row) and any error
#   native.txt   puzzle 7 graded natively (its kernel changed last: relaxed atomics)
#   ncu.txt      ncu of the solution and its peers, one launch each, at the sizes where a peer was ahead: puzzle 7 at
#                batch 512, puzzle 11 at 5000 x 3000 x 4000, puzzle 12 at N=16384 with D=128
# Each step has a time limit, 580 s in all, so the whole stays under a 10-minute command (expect about 8); a bench
# stopped by its limit still writes the rows it finished (summary.txt then says "exit 124"): run it alone with a
# longer one.
#   bash scripts/gpu_perf.sh                               # everything
#   STEPS="bench" BENCH_LIMIT=580 bash scripts/gpu_perf.sh # some of: grade bench ncu
set -u
OUT=${OUT:-/tmp/gpu-perf}
STEPS=${STEPS:-grade bench ncu}
KILL_AFTER=20
source "$(dirname "$0")/gpu_common.sh"  # step, wants, machine_header; $summary

{
  machine_header name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu
  command -v ncu >/dev/null && ncu --version | tail -n 1
} > "$summary" 2>&1

if wants grade; then
  step "native grading of puzzle 7" "${GRADE_LIMIT:-60}" python3 -m grader 7 --impl solutions > "$OUT/native.txt" 2>&1
fi

if wants bench; then
  # every puzzle the registry has, in one run: the record must come from one run of one version of the code
  # (PUZZLES sets the order, for a run that may not finish: the rows it finished are kept; SWEEP=0 leaves the
  # block-size sweeps out)
  puzzles=${PUZZLES:-$(python3 -c "from grader.course import registry; print(*(p.number for p in registry.PUZZLES))")}
  sweep="--sweep"
  [ "${SWEEP:-1}" = 0 ] && sweep=""
  # shellcheck disable=SC2086
  step "bench $puzzles $sweep" "${BENCH_LIMIT:-400}" python3 -m grader bench $puzzles $sweep --json "$OUT/peers.json" \
    --markdown "$OUT/bench.md" > /dev/null 2> "$OUT/bench.log"
fi

if wants ncu; then
  # Only the kernels run between cudaProfilerStart and Stop (bench --once: each implementation once, after a warm-up
  # call that compiles it), under NVTX ranges named after each; the clocks as the card has them (leave them alone).
  ncu=(ncu --target-processes application-only --profile-from-start off --clock-control none --nvtx
       --print-summary none
       --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats
       --section MemoryWorkloadAnalysis --section InstructionStats)
  : > "$OUT/ncu.txt"
  step "ncu 7 (batch 512)" 50 "${ncu[@]}" python3 -m grader bench 7 --once --sizes "batch 512" >> "$OUT/ncu.txt" 2>&1
  step "ncu 11 (M=5000, K=3000, N=4000)" 35 "${ncu[@]}" python3 -m grader bench 11 --once --sizes "M=5000" \
    >> "$OUT/ncu.txt" 2>&1
  step "ncu 12 (N=16384, D=128)" 35 "${ncu[@]}" python3 -m grader bench 12 --once --sizes "N=16384, T=16384, D=128" \
    >> "$OUT/ncu.txt" 2>&1
fi

{
  echo
  python3 -c "
import json, sys
sys.path.insert(0, '.')
from grader.bench import tables
recorded = json.load(open('$OUT/peers.json'))
print(tables.peers_table(recorded['rows']))
" 2>&1 | tail -n 80
} >> "$summary"
cat "$summary"
