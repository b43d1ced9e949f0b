"""Test setup: in-process grading uses the interpreter, and each puzzle gets a pytest marker.

`pytest -m puzzle4` runs every test about puzzle 4; the markers come from the registry.
"""

import os

os.environ["TRITON_INTERPRET"] = "1"  # before grader (and so triton) is imported

import pytest  # noqa: E402

from grader.course.registry import PUZZLES  # noqa: E402


def pytest_configure(config):
    """Puzzle markers; and under `-n` (xdist's `load`), distribute as `loadgroup`: tests marked `xdist_group` share
    a worker, the rest are dealt out one at a time as with `load`. A module whose fixture runs one costly child
    process (every solution on the stock interpreter, every docstring snippet compiled, a notebook run) marks its
    tests with one group, so that the child runs once in the session and not on each worker; the fixture is
    session-scoped (or keeps its result), as pytest ends a module-scoped one whenever another module's test runs
    between."""
    if getattr(config.option, "dist", None) == "load":  # the controller: schedule by group
        config.option.dist = "loadgroup"
    for puzzle in PUZZLES:
        config.addinivalue_line("markers", f"puzzle{puzzle.number}: tests of puzzle {puzzle.number} ({puzzle.slug})")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Tests marked `heavy` first, the rest in their order: xdist deals tests (and groups) out in collection order,
    so a long one collected last ran alone on one core while the other had nothing left to do.
    In an xdist worker, a test marked `xdist_group` gets its group after an @ in its id, which is what the
    controller's loadgroup scheduler reads (xdist adds it only under an explicit `--dist loadgroup`, and in a
    way pytest 9.2's ids no longer see)."""
    items.sort(key=lambda item: item.get_closest_marker("heavy") is None)  # stable: the same order on every worker
    if not hasattr(config, "workerinput"):
        return
    for item in items:
        groups = sorted({str(mark.args[0]) for mark in item.iter_markers("xdist_group") if mark.args})
        if groups and "@" not in item.nodeid:
            grouped = f"{item.nodeid}@{'_'.join(groups)}"
            if hasattr(item, "_id"):  # pytest 9.2 keeps a structured id, which xdist 3.8's suffix misses
                from _pytest.nodeid import NodeId
                item._id = NodeId.parse(grouped)
            else:
                item._nodeid = grouped
