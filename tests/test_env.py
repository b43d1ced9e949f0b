"""Start-up checks: the mode and the version combinations that cannot work are explained."""

import pytest

from grader import env


@pytest.mark.parametrize("text, release", [("3.6.0", (3, 6, 0)), ("2.13.0+cpu", (2, 13, 0)),
                                            ("3.10.0rc1", (3, 10, 0)), ("2.4", (2, 4))])
def test_release_parsing(text, release):
    assert env._release(text) == release


def _problems(monkeypatch, interpret, **found):
    versions = {"torch": "2.13.0", "triton": "3.9.0", "numpy": "2.4.6", "jaxtyping": "0.3.11", **found}
    monkeypatch.setattr(env, "versions", lambda: versions)
    return env.version_problems(env.Mode(interpret, ""))


def test_tested_combinations_are_fine(monkeypatch):
    assert _problems(monkeypatch, True) == []
    assert _problems(monkeypatch, True, triton="3.6.0", numpy="2.3.5") == []
    assert _problems(monkeypatch, False, triton="3.6.0", numpy="2.5.2", torch="2.11.0+cu130") == []


def test_triton_36_interpreter_with_numpy_24_is_explained(monkeypatch):
    (problem,) = _problems(monkeypatch, True, triton="3.6.0", numpy="2.4.6")
    assert "numpy < 2.4" in problem and "tl.range" in problem


def test_missing_and_too_old_packages_are_explained(monkeypatch):
    assert "triton is not installed" in _problems(monkeypatch, True, triton=None)[0]
    assert "older than 3.6" in _problems(monkeypatch, True, triton="3.5.1")[0]


def test_a_python_without_the_packages_gets_a_short_message(tmp_path):
    """`python -m grader` outside the virtual environment: the fix in one line, no ModuleNotFoundError traceback.
    A Python whose only module path is the repository (no site-packages) stands in for a bare one."""
    import subprocess
    import sys

    from helpers import ROOT

    run = subprocess.run([sys.executable, "-S", "-m", "grader"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 2, run.stderr
    assert "not installed" in run.stderr and "source .venv/bin/activate" in run.stderr
    assert "Traceback" not in run.stderr
