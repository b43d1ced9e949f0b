"""python -m grader, or the installed command triton-puzzles: see grader/show/cli.py, or run it with --help."""

import sys


def main() -> int:
    from grader.env import missing_packages

    if missing_packages():  # before anything imports torch: a short message, not a ModuleNotFoundError traceback
        for line in missing_packages():
            print(f"error: {line}", file=sys.stderr)
        return 2
    from grader.show.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
