"""Test setup: in-process grading uses the interpreter, and each puzzle gets a pytest marker.

`pytest -m puzzle4` runs every test about puzzle 4; the markers come from the registry.
"""

import os

os.environ["TRITON_INTERPRET"] = "1"  # before grader (and so triton) is imported

from grader.course.registry import PUZZLES  # noqa: E402


def pytest_configure(config):
    for puzzle in PUZZLES:
        config.addinivalue_line("markers", f"puzzle{puzzle.number}: tests of puzzle {puzzle.number} ({puzzle.slug})")
