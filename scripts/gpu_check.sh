#!/usr/bin/env bash
# Check the course on a CUDA machine: grade every solution natively (values on the GPU, and the interpreter's
# checks of the same kernels), run the GPU tests (known-wrong kernels fail natively for the interpreter's
# reasons, gradings side by side agree), and time the benchmarks. Everything lands in $OUT (default
# /tmp/gpu-check): summary.txt, native.txt, pytest_gpu.log, bench.md, bench.json, bench.png, bench.log.
#   BENCH="4 5" NO_COMPILE=1 SKIP_TESTS=1 SKIP_BENCH=1 bash scripts/gpu_check.sh     # a quicker run
set -u
OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
summary="$OUT/summary.txt"

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  python3 -c "import sys, torch, triton, numpy; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__, 'numpy', numpy.__version__)"
} > "$summary" 2>&1

start=$(date +%s)
python3 -m grader --all --impl solutions > "$OUT/native.txt" 2>&1
echo "native grading of every solution: exit $? ($(( $(date +%s) - start )) s)" >> "$summary"
python3 -m grader 5 >> "$OUT/native.txt" 2>&1
echo "native grading of the puzzle 5 stub: exit $? ($(grep -c 'not started' "$OUT/native.txt") 'not started')" >> "$summary"

if [ "${SKIP_TESTS:-0}" != 1 ]; then
  workers=""
  python3 -c "import xdist" 2> /dev/null && workers="-n 8"
  # shellcheck disable=SC2086
  python3 -m pytest -m gpu -q -rs -p no:cacheprovider $workers > "$OUT/pytest_gpu.log" 2>&1
  echo "pytest -m gpu: exit $? ($(tail -n 1 "$OUT/pytest_gpu.log"))" >> "$summary"
fi

if [ "${SKIP_BENCH:-0}" = 1 ]; then
  cat "$summary"
  grep -E "✗|Solved|cases pass" "$OUT/native.txt"
  exit 0
fi
compile_flag=""
[ "${NO_COMPILE:-0}" = 1 ] && compile_flag="--no-compile"
# shellcheck disable=SC2086
python3 -m grader bench ${BENCH:-1 2 3 4 5 6 14 15 16} $compile_flag --markdown "$OUT/bench.md" --json "$OUT/bench.json" \
  --plot "$OUT/bench.png" > "$OUT/bench.log" 2>&1
echo "bench: exit $?" >> "$summary"
cat "$summary"
grep -E "✗|Solved|cases pass" "$OUT/native.txt"
cat "$OUT/bench.md" 2>/dev/null || tail -n 30 "$OUT/bench.log"
