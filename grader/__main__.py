"""python -m grader: see grader/show/cli.py, or run it with --help."""

import sys

from grader.env import missing_packages

if missing_packages():  # before anything imports torch: a short message, not a ModuleNotFoundError traceback
    for line in missing_packages():
        print(f"error: {line}", file=sys.stderr)
    sys.exit(2)

from grader.show import quick  # noqa: E402

answered = quick.answer(sys.argv[1:])  # a stub's "not started", without torch or a worker
if answered is not None:
    sys.exit(answered)

from grader.show.cli import main  # noqa: E402

sys.exit(main())
