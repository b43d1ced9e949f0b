# The helpers scripts/gpu_check.sh, gpu_perf.sh and gpu_ch5_part2.sh share; sourced by each, after it sets OUT (the
# folder every file lands in), STEPS (the steps to run) and KILL_AFTER (seconds from a step's SIGTERM to its SIGKILL):
#   source "$(dirname "$0")/gpu_common.sh"
# It makes $OUT, goes to the repository's root and names $OUT/summary.txt as $summary.
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.." || exit 2
summary="$OUT/summary.txt"

# A Python that writes no bytecode (PYTHONDONTWRITEBYTECODE, as on the H200 machine we are lent) compiles torch's
# 1,000-odd modules again in every process: 4.3 s of each grading worker's start, where a pip-installed machine
# (pip writes bytecode as it installs) reads them compiled. So, once, the installed packages' bytecode goes to a
# cache of its own (PYTHONPYCACHEPREFIX), as a GPU owner's machine has it. sympy too: torch.autograd.grad with
# grad_outputs imports it, so chapter 5's references (the judge's first backward) compiled its 500-odd modules in
# every grading: 3.7 s of puzzle 16's 5.8 s (H100 machine, 2026-12-06, cProfile of a native grading).
if python3 -c "import sys; sys.exit(0 if sys.flags.dont_write_bytecode else 1)"; then
  export PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-/tmp/grader-pycache}
  bytecode_start=$SECONDS
  python3 -m compileall -q -j 0 $(python3 -c "import os, sys, importlib.util as u
print(' '.join(os.path.dirname(u.find_spec(m).origin) for m in ('torch', 'triton', 'numpy', 'sympy', 'mpmath', 'grader')
               if u.find_spec(m)))") > /dev/null 2>&1
  echo "bytecode: compiled into $PYTHONPYCACHEPREFIX (this Python writes none itself) in $((SECONDS - bytecode_start)) s"
fi

# machine_header FIELDS: the date, the GPU's nvidia-smi FIELDS (a --query-gpu list) and the versions that matter
machine_header() {
  date -u
  nvidia-smi --query-gpu="$1" --format=csv,noheader
  python3 -c "import sys, torch, triton, numpy; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__, 'numpy', numpy.__version__)"
}

# step NAME SECONDS COMMAND...: run it under a time limit (SIGTERM first: a bench writes the rows it finished), and
# note its exit status and how long it took in the summary
step() {
  local name=$1 limit=$2 start=$SECONDS
  shift 2
  timeout --kill-after="$KILL_AFTER" "$limit" "$@"
  echo "$name: exit $?, $((SECONDS - start)) s (limit $limit)" >> "$summary"
}

# wants WORD: whether STEPS names it
wants() { [[ " $STEPS " == *" $1 "* ]]; }
