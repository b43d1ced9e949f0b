#!/usr/bin/env bash
# Check the course on a CUDA machine. Each step has a time limit, so a run fits one 10-minute command; everything
# lands in $OUT (default /tmp/gpu-check):
#   summary.txt       date, GPU, versions; each step's exit status and seconds
#   native.txt        python -m grader --all --impl solutions (every solution natively, with the interpreter's
#                     checks beside the GPU's run), then the puzzle 5 stub
#   pytest_quick.log  pytest -m gpu_quick: one known-wrong kernel per native reason, one file of
#                     tests/expected_verdicts.py per puzzle and reason (STEPS=full grades every cheat), an illegal
#                     address, a stub, the bench smoke (tests/test_gpu.py, tests/test_gpu_verdicts.py)
#   pytest_gpu.log    pytest -m gpu: every GPU test (STEPS=full)
#   latency.md        scripts/latency.py --native (STEPS=latency)
#   bench.md, bench.json, bench.log   the bench of $BENCH (STEPS=bench; scripts/gpu_perf.sh records every puzzle)
#
#   bash scripts/gpu_check.sh                          # the quick set: grade + quick (3 minutes on an H200)
#   STEPS="grade full" bash scripts/gpu_check.sh       # some of: grade quick full latency bench
# The interpreter's checks need numpy < 2.4 with triton 3.6; on a machine with a newer numpy, install one first
# (the device README's wheels: pip install --target /tmp/site numpy==2.3.5, then PYTHONPATH=/tmp/site), or the
# report says that they were skipped and why.
set -u
OUT=${OUT:-/tmp/gpu-check}
STEPS=${STEPS:-grade quick}
WORKERS=${WORKERS:-8}
KILL_AFTER=10
source "$(dirname "$0")/gpu_common.sh"  # step, wants, machine_header; $summary

machine_header name,driver_version,clocks.sm,clocks.mem > "$summary" 2>&1
workers=""
python3 -c "import xdist" 2> /dev/null && workers="-n $WORKERS"
tests_env="env GRADER_WORKERS=${GRADER_WORKERS:-1}"  # the tests' gradings run side by side: one worker of each kind

if wants grade; then
  step "native grading of every solution" "${GRADE_LIMIT:-120}" python3 -m grader --all --impl solutions \
    > "$OUT/native.txt" 2>&1
  step "native grading of the puzzle 5 stub" 30 python3 -m grader 5 >> "$OUT/native.txt" 2>&1
  echo "  ('not started' lines: $(grep -c 'not started' "$OUT/native.txt"))" >> "$summary"
fi

if wants quick; then  # the solutions were graded above: their test is left out here
  # shellcheck disable=SC2086
  # -v: each test's verdict as it ends, so a step cut short by its limit still names what failed
  step "pytest -m gpu_quick" "${QUICK_LIMIT:-150}" $tests_env python3 -m pytest -m gpu_quick -v -rs -p no:cacheprovider \
    -W ignore $workers -k "not test_every_solution_passes_natively" > "$OUT/pytest_quick.log" 2>&1
  echo "  $(tail -n 1 "$OUT/pytest_quick.log")" >> "$summary"
fi

if wants full; then
  # shellcheck disable=SC2086
  # --durations: where the suite's time goes (2026-12-04: 272 tests in 513 s on 14 workers, against 8 minutes)
  step "pytest -m gpu" "${TESTS_LIMIT:-540}" $tests_env python3 -m pytest -m gpu -v -rs -p no:cacheprovider -W ignore \
    --durations=30 $workers > "$OUT/pytest_gpu.log" 2>&1
  echo "  $(tail -n 1 "$OUT/pytest_gpu.log")" >> "$summary"
fi

if wants latency; then
  # shellcheck disable=SC2086
  step "latency" "${LATENCY_LIMIT:-400}" python3 scripts/latency.py --native ${LATENCY_PUZZLES:-} --markdown "$OUT/latency.md" \
    > "$OUT/latency.log" 2>&1
fi

if wants bench; then
  compile_flag=""
  [ "${NO_COMPILE:-0}" = 1 ] && compile_flag="--no-compile"
  # shellcheck disable=SC2086
  step bench "${BENCH_LIMIT:-240}" python3 -m grader bench ${BENCH:-1 2 3 4 5 6} $compile_flag \
    --markdown "$OUT/bench.md" --json "$OUT/bench.json" > "$OUT/bench.log" 2>&1
fi

cat "$summary"
[ -f "$OUT/native.txt" ] && grep -E "✗|Solved|cases pass|not run|skipped" "$OUT/native.txt"
for log in "$OUT"/pytest_*.log; do
  [ -f "$log" ] && grep -E "^(FAILED|ERROR)| FAILED | ERROR " "$log" | cut -c1-300
done
true
