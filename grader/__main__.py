"""python -m grader: see grader/cli.py, or run it with --help."""

import sys

from .cli import main

sys.exit(main())
