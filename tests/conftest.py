"""Test setup: in-process grading uses the interpreter, and each puzzle gets a pytest marker.

`pytest -m puzzle4` runs every test about puzzle 4; the markers come from the registry.
"""

import os

os.environ["TRITON_INTERPRET"] = "1"  # before grader (and so triton) is imported

import pytest  # noqa: E402

from grader.course.registry import PUZZLES  # noqa: E402


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Under `-n`, tests marked `xdist_group` share a worker; the rest are dealt out one at a time as with `load`.

    A module whose fixture runs one costly child process (every solution on the stock interpreter, every docstring
    snippet compiled) marks its tests with one group, so that child runs once in the session and not on each worker.
    """
    if config.option.dist == "load":
        from xdist.scheduler import LoadGroupScheduling
        return LoadGroupScheduling(config, log)
    return None


def pytest_configure(config):
    for puzzle in PUZZLES:
        config.addinivalue_line("markers", f"puzzle{puzzle.number}: tests of puzzle {puzzle.number} ({puzzle.slug})")
