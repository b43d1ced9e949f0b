"""python -m grader: see grader/cli.py, or run it with --help."""

import sys

from .env import missing_packages

if missing_packages():  # before anything imports torch: a short message, not a ModuleNotFoundError traceback
    for line in missing_packages():
        print(f"error: {line}", file=sys.stderr)
    sys.exit(2)

from .cli import main  # noqa: E402

sys.exit(main())
