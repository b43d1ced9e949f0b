#!/usr/bin/env bash
# Chapter 5, part 2 on a CUDA GPU (issue 22): grade puzzles 17 and 18 natively, show that the atomics variant of 17 is
# nondeterministic and the lesson form is not, and time both puzzles against their peers. At most 4 minutes: each
# step has a time limit (230 s in all); a bench stopped by its limit still writes the rows it finished. Every file
# lands in $OUT (default /tmp/gpu-ch5b):
#   summary.txt  date, GPU, versions; each step's exit status and seconds
#   native.txt   python -m grader 17 18 --impl solutions (the GPU's verdict and the interpreter's checks beside it)
#   repeat.txt   puzzle 17 at N = T = 4096, D = 64, run twice: the lesson form's bits, then the atomics variant's
#   bench.md, bench.json, bench.log   both puzzles at every bench size, without torch.compile or FlexAttention
#   sweep.md, sweep.json              puzzle 17's block sizes swept at one size (causal, N = 16384, D = 64)
#   flex.md, flex.json                puzzle 18 against FlexAttention and torch.compile (random graph, N = 16384)
#   capstone.txt the capstone's training step: the solutions' kernels against eager PyTorch (generated molecules)
#   OUT=/tmp/gpu-ch5b bash scripts/gpu_ch5_part2.sh
#   STEPS="repeat capstone" bash scripts/gpu_ch5_part2.sh   # some of: grade repeat bench sweep flex capstone
set -u
OUT=${OUT:-/tmp/gpu-ch5b}
STEPS=${STEPS:-grade repeat bench sweep flex capstone}
KILL_AFTER=5
source "$(dirname "$0")/gpu_common.sh"  # step, wants, machine_header; $summary

machine_header name,driver_version,clocks.sm,clocks.mem > "$summary" 2>&1

# Each step here is named by its word in STEPS, and runs only when STEPS names it
wanted_step() { if wants "$1"; then step "$@"; fi; }

wanted_step grade 65 python3 -m grader 17 18 --impl solutions > "$OUT/native.txt" 2>&1

wanted_step repeat 15 python3 - > "$OUT/repeat.txt" 2>&1 <<'EOF'
import sys

import torch
import triton.testing

from grader.course import registry
from grader.worker import loader

puzzle = registry.find(17)
launcher = loader.load_launcher(puzzle, "solutions")
atomics = vars(sys.modules[launcher.__module__])["attention_backward_atomics"]
gen = torch.Generator(device="cuda").manual_seed(0)
n, d = 4096, 64
q, k, v, do = (torch.randn(n, d, generator=gen, device="cuda", dtype=torch.float16) for _ in range(4))
scores = q.float() @ k.float().T * d ** -0.5
lse = torch.logsumexp(scores, dim=1)
o = (torch.softmax(scores, dim=1) @ v.float()).half()
for name, run in (("lesson form (no atomics)", launcher), ("atomics variant", atomics)):
    first, second = run(q, k, v, o, lse, do), run(q, k, v, o, lse, do)
    differ = [int((a.view(torch.int32) != b.view(torch.int32)).sum()) for a, b in zip(first, second)]
    us = 1000 * triton.testing.do_bench(lambda: run(q, k, v, o, lse, do), return_mode="median")
    print(f"{name}: elements of (dq, dk, dv) whose bits differ between two runs: {differ}; median {us:.1f} us")
EOF

wanted_step bench 70 python3 -m grader bench 17 18 --no-compile --markdown "$OUT/bench.md" --json "$OUT/bench.json" \
  > "$OUT/bench.log" 2>&1
wanted_step sweep 25 python3 -m grader bench 17 --no-compile --sweep --sizes "causal, N=16384, D=64" \
  --markdown "$OUT/sweep.md" --json "$OUT/sweep.json" >> "$OUT/bench.log" 2>&1
wanted_step flex 30 python3 -m grader bench 18 --sizes "random, 32 neighbours, N=16384" --markdown "$OUT/flex.md" \
  --json "$OUT/flex.json" >> "$OUT/bench.log" 2>&1
wanted_step capstone 25 env CAPSTONE_DATA=generated python3 -m grader.capstone_runner --time --no-compile \
  > "$OUT/capstone.txt" 2>&1

cat "$summary"
grep -sE "✗|Solved|cases pass|not run" "$OUT/native.txt"
cat "$OUT/repeat.txt" "$OUT/capstone.txt" 2>/dev/null
true
