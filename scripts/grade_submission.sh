#!/usr/bin/env bash
# Grade one student's submission and write Gradescope's results.json: one test per puzzle, 1 point
# when every case passes, the puzzle's report as the test's output.
#
#   scripts/grade_submission.sh [options] [SUBMISSION_DIR [RESULTS_JSON]]
#
#   SUBMISSION_DIR    default /autograder/submission. pNN_<anything>.py is graded as puzzle NN
#                     (p04_softmax.py -> puzzle 4); other files are ignored.
#   RESULTS_JSON      default /autograder/results/results.json
#   --puzzles "1 2"   the assignment's puzzles (default: all); a puzzle with no file scores 0
#   --docker IMAGE    grade each file in a fresh container of IMAGE (a Python with requirements.txt)
#   --docker-args A   more `docker run` options, e.g. "--gpus all --memory 16g"
#   --user NAME       who runs the submission when this script runs as root (default: nobody)
#   --python PATH     the Python with torch and triton (default: this checkout's .venv, else python3)
#   --limit S         wall-clock seconds per file, start-up included (default: 900)
#   --timeout S, --interpret     passed to the grader
#
# On Gradescope, put this checkout with an installed Python in the autograder zip, and have
# run_autograder call:   /autograder/source/scripts/grade_submission.sh --puzzles "1 2 3"
#
# What is protected, best isolation first (the script says on stderr which it could not apply):
#  - With --docker: each file runs in a fresh container, as user 65534 with no capabilities, no
#    network, a read-only root, only grader/ mounted (read-only: no solutions, tests or .git), and
#    a copy of the submission. The container is the real boundary.
#  - As root without docker (Gradescope runs run_autograder as root): the grader runs as --user
#    (no capabilities, no_new_privs) in new network, PID and mount namespaces: no network; this
#    checkout read-only, with everything but grader/ and the venv hidden (the reference solutions
#    too); no view of other processes, and every process the submission leaves is killed when its
#    file is done. Its home, caches and temporary files live in a scratch folder deleted at the end.
#  - As another user without docker: the same namespaces where unprivileged user namespaces are
#    allowed (then the submission runs as you); else no isolation at all, only a warning.
# What is not protected:
#  - The score of the submission itself. The grader's static check (refusing a file that imports
#    grader or reaches into sys.modules, inspect, ctypes, ...) and its worker process are speed
#    bumps, not a sandbox: the submission runs as the same user as the grader that judges it, so a
#    determined one can forge its own result. The boundary protects the host, the grader and other
#    submissions; read the code of a submission whose score is surprising.
#  - Resources: only the time limits bound it; give docker --memory and --pids-limit, or rely on
#    Gradescope's container limits. Files it writes to world-writable folders (/tmp, /dev/shm)
#    outside docker stay until the container ends.
#  - The GPU: a native kernel has the device to itself, and may read memory that an earlier process
#    left on it.
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
trusted_python() {
  if [ -n "$DOCKER_IMAGE" ]; then
    docker run --rm --network none --user "$(id -u):$(id -g)" -e TRITON_INTERPRET=1 \
      -v "$ROOT/grader:/grader/grader:ro" -v "$WORK:$WORK" -w /grader "$DOCKER_IMAGE" python "$@"
  else
    (cd "$ROOT" && TRITON_INTERPRET=1 "$PYTHON" "$@")
  fi
}

# A scratch folder: a copy of the submission no one else can change, the parts the grader writes,
# and a home for the graded user's caches. All of it goes when the script ends.
WORK=$(mktemp -d /tmp/grade-submission.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
chmod 755 "$WORK"
mkdir -p "$WORK/submission" "$WORK/parts" "$WORK/kept" "$WORK/home/tmp"  # kept/: the caller's alone
for file in "$SUBMISSION"/p[0-9][0-9]_*.py; do
  [ -f "$file" ] && cp "$file" "$WORK/submission/" && chmod 644 "$WORK/submission/${file##*/}"
done
if [ -z "$PUZZLES" ]; then
  PUZZLES=$(trusted_python -c "from grader.course.registry import PUZZLES; print(*(p.number for p in PUZZLES))") ||
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
  for path in $(trusted_python -c "import sys; print(*sys.path, sys.prefix)"); do
    case "$path" in "$ROOT"/*) relative=${path#"$ROOT"/}; KEEP="$KEEP ${relative%%/*}" ;; esac
  done
fi

NAMESPACES=(unshare --net --pid --fork --kill-child --mount --propagation private --mount-proc)
ISOLATE=()
DROP=()
if [ -n "$DOCKER_IMAGE" ]; then
  chmod 777 "$WORK/parts" "$WORK/home" "$WORK/home/tmp"  # written by the container's user 65534
elif [ "$(id -u)" = 0 ]; then
  uid=$(id -u "$RUN_AS" 2>/dev/null) || usage "--user $RUN_AS: no such user"
  gid=$(id -g "$RUN_AS")
  [ "$uid" != 0 ] || usage "--user must not be root"
  chown -R "$uid:$gid" "$WORK/parts" "$WORK/home"
  if command -v setpriv > /dev/null; then
    DROP=(setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs)
  else
    DROP=(runuser -u "$RUN_AS" --)
  fi
  if "${NAMESPACES[@]}" sh -c "$HIDE_AND_RUN" sh "$ROOT" "$KEEP" true 2> /dev/null; then
    ISOLATE=("${NAMESPACES[@]}" sh -c "$HIDE_AND_RUN" sh "$ROOT" "$KEEP")
  else
    warn "cannot create namespaces here: the submission runs as $RUN_AS, with network, seeing this checkout"
  fi
  if "${DROP[@]}" test -w "$ROOT/grader"; then
    usage "$ROOT/grader is writable by $RUN_AS: a submission could change the grader"
  fi
else
  if "${NAMESPACES[@]}" --map-root-user sh -c "$HIDE_AND_RUN" sh "$ROOT" "$KEEP" true 2> /dev/null; then
    ISOLATE=("${NAMESPACES[@]}" --map-root-user sh -c "$HIDE_AND_RUN" sh "$ROOT" "$KEEP")
    # root only inside the namespace; without capabilities it cannot undo the mounts that hide the checkout
    command -v setpriv > /dev/null && DROP=(setpriv --inh-caps=-all --bounding-set=-all --no-new-privs)
    warn "not root: the submission runs as you, in namespaces (no network, checkout read-only)"
  else
    warn "not root and no user namespaces: NO isolation; grade untrusted code with --docker or as root"
  fi
fi

# Grade puzzle $1 from file $2 into $WORK/parts/p$1.json; the grader's report goes to stdout (the
# instructor's log on Gradescope).
grade_file() {
  local number=$1 name=${2##*/}
  if [ -n "$DOCKER_IMAGE" ]; then
    # shellcheck disable=SC2086  # DOCKER_ARGS is a list of options
    timeout --kill-after=10 "$LIMIT" docker run --rm --network none --user 65534:65534 --read-only \
      --cap-drop ALL --security-opt no-new-privileges --pids-limit 1024 --tmpfs /tmp:exec \
      -e HOME=/tmp -e TRITON_CACHE_DIR=/tmp/triton -e GRADER_RESULTS=/tmp/progress.json $DOCKER_ARGS \
      -v "$ROOT/grader:/grader/grader:ro" -v "$WORK/submission:/submission:ro" -v "$WORK/parts:/parts" \
      -w /grader "$DOCKER_IMAGE" python -m grader "$number" --file "/submission/$name" \
      --gradescope "/parts/p$number.json" "${GRADER_ARGS[@]}"
  else
    (cd "$ROOT" && timeout --kill-after=10 "$LIMIT" "${ISOLATE[@]}" "${DROP[@]}" env -i "${ENVIRONMENT[@]}" \
      "$PYTHON" -m grader "$number" --file "$WORK/submission/$name" --gradescope "$WORK/parts/p$number.json" \
      "${GRADER_ARGS[@]}")
  fi
}

# -- grade each puzzle's file, then join the parts ------------------------------------------------

why=()
for number in $PUZZLES; do
  padded=$(printf "%02d" "$((10#$number))")
  files=("$WORK/submission/p${padded}"_*.py)
  if [ ! -f "${files[0]}" ]; then
    why+=(--why "$number=no file p${padded}_*.py in the submission")
    continue
  fi
  [ ${#files[@]} -gt 1 ] && warn "several files for puzzle $number; grading ${files[0]##*/}"
  echo "== puzzle $number: ${files[0]##*/}"
  grade_file "$number" "${files[0]}"
  status=$?
  # Keep this puzzle's part where no later submission can write, and drop anything else it left in parts/.
  [ -s "$WORK/parts/p$number.json" ] && cp "$WORK/parts/p$number.json" "$WORK/kept/p$number.json"
  find "$WORK/parts" -mindepth 1 -delete 2> /dev/null
  if [ ! -s "$WORK/kept/p$number.json" ]; then
    case $status in
      124|137) reason="grading ${files[0]##*/} took longer than $LIMIT s" ;;
      *) reason="grading ${files[0]##*/} produced no result (the grader exited with status $status)" ;;
    esac
    why+=(--why "$number=$reason")
  fi
done

# The join runs as the caller, after every grading process is gone; it rebuilds each test in a fixed form.
# shellcheck disable=SC2086  # PUZZLES is a list of numbers
trusted_python -m grader.show.gradescope --out "$WORK/results.json" --expect "$(echo $PUZZLES | tr -s ' ' ',')" \
  "${why[@]}" "$WORK"/kept/p*.json &&
  cp "$WORK/results.json" "$RESULTS.partial" && mv "$RESULTS.partial" "$RESULTS" || { warn "could not write $RESULTS"; exit 2; }
echo "== wrote $RESULTS"
