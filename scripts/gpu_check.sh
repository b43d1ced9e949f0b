#!/usr/bin/env bash
# Check the course on a CUDA machine: grade every solution natively (values on the GPU, and the interpreter's
# checks of the same kernels), run the GPU tests (known-wrong kernels fail natively for the interpreter's
# reasons, a fault is one message, gradings side by side agree), and time some benchmarks. Each step has a time
# limit, so the whole stays inside one 10-minute command. Everything lands in $OUT (default /tmp/gpu-check):
#   summary.txt   date, GPU, versions; each step's exit status and seconds
#   native.txt    python -m grader --all --impl solutions, then the puzzle 5 stub
#   pytest_gpu.log  pytest -m gpu (tests/test_gpu.py, tests/test_gpu_verdicts.py)
#   bench.md, bench.json, bench.log   the bench of $BENCH (scripts/gpu_perf.sh records every puzzle)
#   STEPS="grade tests" bash scripts/gpu_check.sh       # some of: grade tests bench
# The interpreter's checks need numpy < 2.4 with triton 3.6; on a machine with a newer numpy, install one first
# (the device README's wheels: pip install --target /tmp/site numpy==2.3.5, then PYTHONPATH=/tmp/site), or the
# report says that they were skipped and why.
set -u
OUT=${OUT:-/tmp/gpu-check}
STEPS=${STEPS:-grade tests bench}
KILL_AFTER=10
source "$(dirname "$0")/gpu_common.sh"  # step, wants, machine_header; $summary

machine_header name,driver_version,clocks.sm,clocks.mem > "$summary" 2>&1

if wants grade; then
  step "native grading of every solution" "${GRADE_LIMIT:-200}" python3 -m grader --all --impl solutions \
    > "$OUT/native.txt" 2>&1
  step "native grading of the puzzle 5 stub" 30 python3 -m grader 5 >> "$OUT/native.txt" 2>&1
  echo "  ('not started' lines: $(grep -c 'not started' "$OUT/native.txt"))" >> "$summary"
fi

if wants tests; then
  workers=""
  python3 -c "import xdist" 2> /dev/null && workers="-n 8"
  # shellcheck disable=SC2086
  step "pytest -m gpu" "${TESTS_LIMIT:-240}" python3 -m pytest -m gpu -q -rs -p no:cacheprovider -W ignore $workers \
    > "$OUT/pytest_gpu.log" 2>&1
  echo "  $(tail -n 1 "$OUT/pytest_gpu.log")" >> "$summary"
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
[ -f "$OUT/pytest_gpu.log" ] && grep -E "^(FAILED|ERROR)" "$OUT/pytest_gpu.log" | cut -c1-300
true
