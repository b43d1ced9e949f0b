#!/usr/bin/env bash
# Where a native grading's time goes (issue 25): imports, CUDA start, and a trace of every worker event
# (GRADER_TRACE) for puzzle 1 (kernel-only and solutions), 10 and 17, on a warm Triton cache (second run).
# Writes $OUT/profile.txt. A benchmark's tool, not a test.
set -u
OUT=${OUT:-/tmp/gpu-profile}; mkdir -p "$OUT"; cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
log="$OUT/profile.txt"
{
  nproc; python3 -c "import sys, torch, triton, numpy; print(sys.version.split()[0], torch.__version__, triton.__version__, numpy.__version__)"
  python3 -c "
import time; t=time.time(); import torch; a=time.time(); import triton, triton.language; b=time.time()
import grader.worker.execute, grader.worker.instrument; c=time.time()
print(f'import torch {a-t:.2f} s, triton {b-a:.2f} s, the worker modules {c-b:.2f} s; cuda initialised: {torch.cuda.is_initialized()}')
import os; pid = os.fork()
if pid == 0:
    t = time.time(); x = torch.ones(3, device='cuda'); print(f'forked child: cuda works, {x.sum().item()}, start {time.time()-t:.2f} s'); os._exit(0)
print('fork:', os.waitpid(pid, 0))"
} > "$log" 2>&1
cp solutions/p01_add.py /tmp/p01_add.py
grade() {  # label, args...
  local label=$1; shift
  rm -f /tmp/trace; local s; s=$(date +%s.%N)
  GRADER_TRACE=/tmp/trace python3 -m grader "$@" > "$OUT/$label.txt" 2>&1; local code=$?
  local e; e=$(date +%s.%N)
  echo "== $label (exit $code): $(python3 -c "print(round($e - $s, 2))") s" >> "$log"
  awk -v s="$s" '{printf "  %7.2f %s %s %s %s\n", $1 - s, $2, $3, $4, $5}' /tmp/trace | \
    awk 'NR<=4 || /done|ready/ {print} END {print "  (" NR " events)"}' >> "$log"
}
for round in cold warm; do
  grade "p1_file_$round" 1 --file /tmp/p01_add.py
done
grade p1_solutions 1 --impl solutions
grade p1_interpret 1 --file /tmp/p01_add.py --interpret
grade p10_warm 10 --impl solutions
grade p17_warm 17 --impl solutions
cp /tmp/trace "$OUT/p17_trace.txt"
# A native worker alone, under cProfile: where its first case's seconds go.
echo '{"puzzles":[{"puzzle":1,"cases":[0,1,2,3,4,5,6],"kernels":null}],"impl":"solutions","file":null,"seed":0,"interpret":false,"timeout":30}' \
  | GRADER_WORKER_INTERPRET=0 python3 -m cProfile -o "$OUT/worker.prof" -m grader.worker 3 3> /dev/null
python3 -c "import pstats; pstats.Stats('$OUT/worker.prof').sort_stats('cumulative').print_stats(40)" 2>&1 | tail -50 >> "$log"
# And puzzle 17's, whose native cases take most of a second each.
echo '{"puzzles":[{"puzzle":17,"cases":[0,1,2,3,4,5,6],"kernels":null}],"impl":"solutions","file":null,"seed":0,"interpret":false,"timeout":30}' \
  | GRADER_WORKER_INTERPRET=0 python3 -m cProfile -o "$OUT/worker17.prof" -m grader.worker 3 3> /dev/null
python3 -c "import pstats; pstats.Stats('$OUT/worker17.prof').sort_stats('tottime').print_stats(30)" 2>&1 | tail -40 >> "$log"
python3 -m cProfile -o "$OUT/cli.prof" -m grader 1 --file /tmp/p01_add.py > /dev/null 2>&1
python3 -c "import pstats; pstats.Stats('$OUT/cli.prof').sort_stats('cumulative').print_stats(25)" 2>&1 | tail -35 >> "$log"
cat "$log"
