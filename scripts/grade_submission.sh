#!/usr/bin/env bash
# Grade one student's submission and write Gradescope's results.json: one test per puzzle, its
# points when every case passes (or a share per case with --partial), the puzzle's report as output.
#
#   scripts/grade_submission.sh [options] [SUBMISSION_DIR [RESULTS_JSON]]
#
#   SUBMISSION_DIR    default /autograder/submission. pNN_<anything>.py is graded as puzzle NN
#                     (p04_softmax.py -> puzzle 4); other files are ignored.
#   RESULTS_JSON      default /autograder/results/results.json
#   --puzzles "1 2"   the assignment's puzzles (default: all); a puzzle with no file scores 0
#   --partial         per-case partial credit: a puzzle scores its weight times the share of cases passed
#   --weights "4=2"   points per puzzle (default 1 each)
#   --visibility V    Gradescope's visibility of the tests: visible (default), hidden, after_due_date, ...
#   --docker IMAGE    grade each file in a fresh container of IMAGE (a Python with requirements.txt)
#   --docker-args A   more `docker run` options, e.g. "--gpus all --memory 16g"
#   --user NAME       who runs the graded code when this script runs as root (default: nobody)
#   --python PATH     the Python with torch and triton (default: this checkout's .venv, else python3)
#   --limit S         wall-clock seconds per file, start-up included (default: 900)
#   --timeout S, --interpret     passed to the grader
#   --own-launcher    grade each file's own launcher too (practice; not with --docker)
#
# On Gradescope, put this checkout with an installed Python in the autograder zip, and have
# run_autograder call:   /autograder/source/scripts/grade_submission.sh --puzzles "1 2 3"
#
# What protects the score (README, "Instructors"):
#  - Kernel-only grading (the default): the grader reads each file's @triton.jit functions, literal
#    constants and triton imports with ast; none of the file's Python runs; its kernels run under the
#    puzzle's own launcher, after an allowlist and a compile for the GPU.
#  - The judge and the graded code are different users. As root, the judge (the grader's parent
#    process, which writes the results) runs as root; its worker, which runs the kernels, runs as --user
#    with no capabilities, in new network, PID and mount namespaces: no network, this checkout read-only
#    with everything but grader/ and the venv hidden, no view of other processes; it cannot write the
#    parts or results, the repository or the venv, nor signal the judge. Every process it leaves is
#    killed. A part is deleted before its puzzle is graded and kept only when the judge ended cleanly.
#  - Each puzzle is scored on its own: a file that stops the grader without a verdict (a crash, more than
#    --limit seconds) scores 0 with that reason, and the other files are graded. The setup failing (the
#    worker's Python not runnable by --user, a worker that cannot start, the grader refusing its
#    arguments) is not a score: the script exits 2 and writes no results.json.
#  - With --docker: each file is graded in a fresh container, as user 65534 with no capabilities, no
#    network, a read-only root, grader/ and solutions/ mounted read-only (the judge builds the puzzle's
#    launcher from solutions/; no submitted Python runs to read them) and a copy of the submission.
#    Judge and worker are one user there: the container and kernel-only grading are the boundary.
#  - Not root, no docker: the graded code runs as you, in namespaces where unprivileged user
#    namespaces are allowed; else with no isolation at all, and a warning.
# What is not limited: memory, disk and processes beyond the time limits (give docker --memory and
# --pids-limit, or rely on Gradescope's container), and the GPU, which a native kernel uses directly.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SUBMISSION=/autograder/submission
RESULTS=/autograder/results/results.json
PUZZLES=""
DOCKER_IMAGE=""
DOCKER_ARGS=""
RUN_AS=nobody
PYTHON=""
LIMIT=900
GRADER_ARGS=()
JOIN_ARGS=()
OWN_LAUNCHER=0

usage() {
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
  [ -n "${1:-}" ] && echo "error: $1" >&2
  exit 2
}

positional=()
while [ $# -gt 0 ]; do
  case "$1" in
    --puzzles) [ $# -ge 2 ] || usage "--puzzles needs a list"; PUZZLES=$2; shift 2 ;;
    --docker) [ $# -ge 2 ] || usage "--docker needs an image"; DOCKER_IMAGE=$2; shift 2 ;;
    --docker-args) [ $# -ge 2 ] || usage "--docker-args needs options"; DOCKER_ARGS=$2; shift 2 ;;
    --user) [ $# -ge 2 ] || usage "--user needs a name"; RUN_AS=$2; shift 2 ;;
    --python) [ $# -ge 2 ] || usage "--python needs a path"; PYTHON=$2; shift 2 ;;
    --limit) [ $# -ge 2 ] || usage "--limit needs seconds"; LIMIT=$2; shift 2 ;;
    --timeout) [ $# -ge 2 ] || usage "--timeout needs seconds"; GRADER_ARGS+=(--timeout "$2"); shift 2 ;;
    --interpret) GRADER_ARGS+=(--interpret); shift ;;
    --own-launcher) GRADER_ARGS+=(--own-launcher); OWN_LAUNCHER=1; shift ;;
    --partial) JOIN_ARGS+=(--partial); shift ;;
    --weights) [ $# -ge 2 ] || usage "--weights needs a list"; JOIN_ARGS+=(--weights "$2"); shift 2 ;;
    --visibility) [ $# -ge 2 ] || usage "--visibility needs a value"; JOIN_ARGS+=(--visibility "$2"); shift 2 ;;
    -h|--help) usage ;;
    -*) usage "unknown option $1" ;;
    *) positional+=("$1"); shift ;;
  esac
done
[ ${#positional[@]} -le 2 ] || usage "give at most SUBMISSION_DIR and RESULTS_JSON"
[ ${#positional[@]} -ge 1 ] && SUBMISSION=${positional[0]}
[ ${#positional[@]} -ge 2 ] && RESULTS=${positional[1]}
[ -d "$SUBMISSION" ] || usage "no submission folder $SUBMISSION"
[ -d "$(dirname "$RESULTS")" ] || usage "the folder of $RESULTS does not exist"
[[ "$LIMIT" =~ ^[0-9]+$ ]] && [ "$LIMIT" -gt 0 ] || usage "--limit takes a whole number of seconds"
if [ -n "$DOCKER_IMAGE" ]; then
  [ "$OWN_LAUNCHER" = 0 ] || usage "--own-launcher runs a file's Python; grade it without --docker, as root"
  docker info > /dev/null 2>&1 || usage "--docker: docker is not usable here (is the daemon running?)"
else
  if [ -z "$PYTHON" ]; then
    if [ -x "$ROOT/.venv/bin/python" ]; then PYTHON=$ROOT/.venv/bin/python; else PYTHON=$(command -v python3); fi
  fi
  [ -n "$PYTHON" ] && [ -x "$PYTHON" ] || usage "no Python found; give --python"
  [[ "$PYTHON" = /* ]] || PYTHON=$(command -v "$PYTHON")
fi

warn() { echo "grade_submission: $*" >&2; }

# Run trusted grader code (no submission involved): listing the puzzles, joining the parts. With
# --docker it runs in the image, which has the Python; $WORK is mounted at the same path.
# `python -P`, the repository appended to sys.path: nothing planted at its root (a triton/ folder) shadows a
# package. Call it as: trusted_python MODULE ARGS...
BOOT='import runpy, sys; sys.path.append(sys.argv.pop(1)); module = sys.argv.pop(1); sys.argv[0] = module; runpy.run_module(module, run_name="__main__", alter_sys=True)'
trusted_python() {
  if [ -n "$DOCKER_IMAGE" ]; then
    docker run --rm --network none --user "$(id -u):$(id -g)" -e TRITON_INTERPRET=1 \
      -v "$ROOT/grader:/grader/grader:ro" -v "$WORK:$WORK" -w / "$DOCKER_IMAGE" python -P -c "$BOOT" /grader "$@"
  else
    (cd "$ROOT" && TRITON_INTERPRET=1 "$PYTHON" -P -c "$BOOT" "$ROOT" "$@")
  fi
}

# A scratch folder: a copy of the submission no one else can change, the parts the grader writes,
# and a home for the graded user's caches. All of it goes when the script ends.
WORK=$(mktemp -d /tmp/grade-submission.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
chmod 755 "$WORK"
mkdir -p "$WORK/submission" "$WORK/parts" "$WORK/kept" "$WORK/home/tmp" "$WORK/home/cache" "$WORK/home/triton"
# parts/ and kept/ are the caller's alone: the graded user (--user) writes only its caches and its worker folder
links=" "  # the links' puzzle numbers, so that results.json says why their puzzles score 0
for file in "$SUBMISSION"/p[0-9][0-9]_*.py; do
  if [ -L "$file" ]; then  # copied as the caller, a link would show the student what it points to (/etc/passwd)
    warn "${file##*/} is a symbolic link: not graded (submit the file itself)"
    name=${file##*/}; links+="$((10#${name:1:2})) "; continue
  fi
  [ -f "$file" ] && cp "$file" "$WORK/submission/" && chmod 644 "$WORK/submission/${file##*/}"
done
if [ -z "$PUZZLES" ]; then
  PUZZLES=$(trusted_python grader.course.registry) ||
    usage "cannot list the puzzles with $PYTHON"
fi
for number in $PUZZLES; do [[ "$number" =~ ^[0-9]+$ ]] || usage "--puzzles takes numbers, not $number"; done

# -- how to run one grader command ----------------------------------------------------------------

ENVIRONMENT=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8
             HOME="$WORK/home" TMPDIR="$WORK/home/tmp" XDG_CACHE_HOME="$WORK/home/cache"
             TRITON_CACHE_DIR="$WORK/home/triton" GRADER_RESULTS="$WORK/home/progress.json"
             PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1)
for name in LD_LIBRARY_PATH CUDA_VISIBLE_DEVICES TRITON_INTERPRET; do
  [ -n "${!name:-}" ] && ENVIRONMENT+=("$name=${!name}")
done

# Inside the new mount namespace: the checkout read-only, every top-level entry but those kept hidden.
HIDE_AND_RUN='root=$1; keep=$2; shift 2
mount --bind "$root" "$root" && mount -o remount,bind,ro "$root" || exit 97
for entry in "$root"/* "$root"/.[!.]*; do
  [ -e "$entry" ] && [ ! -L "$entry" ] || continue  # a mount over a link would hide its target instead
  case " $keep " in *" ${entry##*/} "*) continue ;; esac
  if [ -d "$entry" ]; then mount -t tmpfs -o ro,size=4k tmpfs "$entry"; else mount --bind /dev/null "$entry"; fi || exit 97
done
exec "$@"'
KEEP="grader"
if [ -z "$DOCKER_IMAGE" ]; then  # a venv inside the checkout (sys.prefix, or a path in sys.path) stays visible
  for path in $(cd / && "$PYTHON" -P -c "import sys; print(*sys.path, sys.prefix)"); do
    case "$path" in "$ROOT"/*) relative=${path#"$ROOT"/}; KEEP="$KEEP ${relative%%/*}" ;; esac
  done
fi

# The worker (the process that runs the kernels) runs under WORKER_PREFIX: namespaces, then another user. The
# judge, its parent, runs as the caller and passes the prefix on (GRADER_WORKER_PREFIX, a JSON list).
NAMESPACES=(unshare --net --pid --fork --kill-child --mount --propagation private --mount-proc)
WORKER_PREFIX=()
DROP=()
OWNER=""
if [ -n "$DOCKER_IMAGE" ]; then
  chmod 777 "$WORK/parts" "$WORK/home" "$WORK/home/tmp"  # written by the container's user 65534
elif [ "$(id -u)" = 0 ]; then
  uid=$(id -u "$RUN_AS" 2>/dev/null) || usage "--user $RUN_AS: no such user"
  gid=$(id -g "$RUN_AS")
  [ "$uid" != 0 ] || usage "--user must not be root"
  OWNER="$uid:$gid"
  chown -R "$OWNER" "$WORK/home/cache" "$WORK/home/triton"
  chmod 755 "$WORK/home" "$WORK/home/tmp"  # the worker's folders under tmp/ are made its own by the judge
  if command -v setpriv > /dev/null; then
    DROP=(setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs)
  else
    DROP=(runuser -u "$RUN_AS" --)
  fi
  "${DROP[@]}" "$PYTHON" -P -c "import torch, triton" 2> /dev/null ||
    usage "$PYTHON cannot be run by $RUN_AS with torch and triton (give --python a Python $RUN_AS can run)"
  if "${DROP[@]}" test -w "$ROOT/grader"; then
    usage "$ROOT/grader is writable by $RUN_AS: a submission could change the grader"
  fi
  if "${NAMESPACES[@]}" sh -c "$HIDE_AND_RUN" sh "$ROOT" "$KEEP" true 2> /dev/null; then
    WORKER_PREFIX=("${NAMESPACES[@]}" sh -c "$HIDE_AND_RUN" sh "$ROOT" "$KEEP" "${DROP[@]}")
  else
    WORKER_PREFIX=("${DROP[@]}")
    warn "cannot create namespaces here: the graded code runs as $RUN_AS, with network, seeing this checkout"
  fi
else
  if "${NAMESPACES[@]}" --map-root-user sh -c "$HIDE_AND_RUN" sh "$ROOT" "$KEEP" true 2> /dev/null; then
    # root only inside the namespace; without capabilities it cannot undo the mounts that hide the checkout
    command -v setpriv > /dev/null && DROP=(setpriv --inh-caps=-all --bounding-set=-all --no-new-privs)
    WORKER_PREFIX=("${NAMESPACES[@]}" --map-root-user sh -c "$HIDE_AND_RUN" sh "$ROOT" "$KEEP" "${DROP[@]}")
    warn "not root: the graded code runs as you, in namespaces (no network, checkout read-only)"
  else
    warn "not root and no user namespaces: NO isolation of the graded code; grade as root or with --docker"
  fi
fi
prefix_json=$(cd / && "${PYTHON:-python3}" -P -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "${WORKER_PREFIX[@]}")

# Grade puzzle $1 from file $2 into $WORK/parts/p$1.json; the grader's report goes to stdout (the
# instructor's log on Gradescope). Its exit status: 0 or 1 when the judge ended cleanly.
grade_file() {
  local number=$1 name=${2##*/}
  if [ -n "$DOCKER_IMAGE" ]; then
    # shellcheck disable=SC2086  # DOCKER_ARGS is a list of options
    timeout --kill-after=10 "$LIMIT" docker run --rm --network none --user 65534:65534 --read-only \
      --cap-drop ALL --security-opt no-new-privileges --pids-limit 1024 --tmpfs /tmp:exec \
      -e HOME=/tmp -e TRITON_CACHE_DIR=/tmp/triton -e GRADER_RESULTS=/tmp/progress.json $DOCKER_ARGS \
      -v "$ROOT/grader:/grader/grader:ro" -v "$ROOT/solutions:/grader/solutions:ro" \
      -v "$WORK/submission:/submission:ro" -v "$WORK/parts:/parts" \
      -w / "$DOCKER_IMAGE" python -P -c "$BOOT" /grader grader "$number" --file "/submission/$name" \
      --gradescope "/parts/p$number.json" "${GRADER_ARGS[@]}"
  else
    (cd "$ROOT" && timeout --kill-after=10 "$LIMIT" env -i "${ENVIRONMENT[@]}" GRADER_WORKER_PREFIX="$prefix_json" \
      GRADER_WORKER_OWNER="$OWNER" "$PYTHON" -P -c "$BOOT" "$ROOT" grader "$number" --file "$WORK/submission/$name" \
      --gradescope "$WORK/parts/p$number.json" "${GRADER_ARGS[@]}")
  fi
}

# -- grade each puzzle's file, then join the parts ------------------------------------------------

why=()
for number in $PUZZLES; do
  padded=$(printf "%02d" "$((10#$number))")
  files=("$WORK/submission/p${padded}"_*.py)
  if [ ! -f "${files[0]}" ]; then
    if [[ "$links" == *" $((10#$number)) "* ]]; then
      why+=(--why "$number=p${padded}_*.py is a symbolic link: not graded (submit the file itself)")
    else
      why+=(--why "$number=no file p${padded}_*.py in the submission")
    fi
    continue
  fi
  [ ${#files[@]} -gt 1 ] && warn "several files for puzzle $number; grading ${files[0]##*/}"
  echo "== puzzle $number: ${files[0]##*/}"
  find "$WORK/parts" -mindepth 1 -delete 2> /dev/null  # a part comes from this grading alone
  grade_file "$number" "${files[0]}"
  status=$?
  if [ "$status" = 2 ] || [ "$status" = 3 ]; then
    # The setup failed (the grader's arguments or course, or a worker that could not start before any of the file
    # was read): no score for anyone, rather than 0.
    [ "$status" = 3 ] && what="could not start its worker (see the message above)" ||
      what="refused its arguments or could not find the course (see the message above)"
    warn "the grader failed on ${files[0]##*/}: it $what. No results were written; fix the setup and grade again."
    exit 2
  fi
  if [ "$status" != 0 ] && [ "$status" != 1 ] || [ ! -s "$WORK/parts/p$number.json" ]; then
    # This file stopped the grader without a verdict: this puzzle scores 0 with the reason, and the other files are
    # graded on their own (the part of each puzzle comes from its own grading).
    case $status in
      124|137) what="took longer than $LIMIT s" ;;
      *) what="exited with status $status without a result" ;;
    esac
    warn "the grader stopped on ${files[0]##*/}: it $what. Puzzle $number scores 0; the other puzzles are graded."
    why+=(--why "$number=the grader stopped on ${files[0]##*/} without a verdict (it $what); the file scores 0")
    continue
  fi
  cp "$WORK/parts/p$number.json" "$WORK/kept/p$number.json"
done

# The join runs as the caller, after every grading process is gone; it rebuilds each test in a fixed form.
# shellcheck disable=SC2086  # PUZZLES is a list of numbers
trusted_python grader.show.gradescope --out "$WORK/results.json" --expect "$(echo $PUZZLES | tr -s ' ' ',')" \
  "${JOIN_ARGS[@]}" "${why[@]}" "$WORK"/kept/p*.json &&
  cp "$WORK/results.json" "$RESULTS.partial" && mv "$RESULTS.partial" "$RESULTS" || { warn "could not write $RESULTS"; exit 2; }
echo "== wrote $RESULTS"
