"""python -m grader, or the installed command triton-puzzles: see grader/show/cli.py, or run it with --help."""

import os
import sys

from grader.env import missing_packages


def _run() -> int:
    if missing_packages():  # before anything imports torch: a short message, not a ModuleNotFoundError traceback
        for line in missing_packages():
            print(f"error: {line}", file=sys.stderr)
        return 2
    from grader.show import quick

    answered = quick.answer(sys.argv[1:])  # the progress table, a stub's "not started": without torch or a worker
    if answered is not None:
        return answered
    from grader.show.cli import main as cli_main

    return cli_main()


def main() -> int:
    """The exit status of the command (`triton-puzzles` calls this; `python -m grader` runs it)."""
    try:
        code = _run()
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (`python -m grader | head`): no traceback for that
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 1
    except KeyboardInterrupt:  # Ctrl-C before the CLI could say more (grader.show.cli reports the usual cases)
        print("interrupted", file=sys.stderr)
        code = 130
    return code


if __name__ == "__main__":
    sys.exit(main())
