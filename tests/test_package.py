"""The package: pyproject.toml's dependencies are requirements.txt's, the Python it claims is the one the README and
ruff name, the command triton-puzzles runs the grader, and an install without the repository says what it lacks.

`pip install -e ".[dev]"` (the README's) keeps the grader in the repository, beside puzzles/ and solutions/;
`pip install .` copies grader/ alone into site-packages, which a copy of the folder stands in for here.
"""

import os
import re
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from helpers import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]


def _installed() -> bool:
    try:
        return metadata.distribution(PROJECT["name"]) is not None
    except metadata.PackageNotFoundError:
        return False


requires_install = pytest.mark.skipif(not _installed(), reason='the package is not installed (pip install -e ".")')


def _names(requirements) -> list[str]:
    return [re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0].lower() for r in requirements]


def test_requirements_txt_has_the_ranges_of_the_dependencies_and_the_dev_extra():
    lines = [line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    listed = [line for line in lines if line]
    assert sorted(listed) == sorted(PROJECT["dependencies"] + PROJECT["optional-dependencies"]["dev"])


def test_every_pinned_requirement_is_in_constraints_txt():
    """The pinned path installs exactly what CI tested: every direct requirement has its pin."""
    pinned = {line.split("==")[0].lower().replace("_", "-") for line in (ROOT / "constraints.txt").read_text().split()
              if "==" in line}
    needed = _names(PROJECT["dependencies"] + PROJECT["optional-dependencies"]["dev"])
    assert set(needed) <= pinned, set(needed) - pinned


def test_the_python_it_claims_is_the_one_the_readme_and_ruff_name():
    lowest = re.fullmatch(r">=3\.(\d+)", PROJECT["requires-python"])[1]
    assert PYPROJECT["tool"]["ruff"]["target-version"] == f"py3{lowest}"
    assert f"Python 3.{lowest} or newer" in (ROOT / "README.md").read_text()


def test_only_the_grader_is_a_package():
    assert PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"] == ["grader", "grader.*"]


@requires_install
def test_the_installed_grader_is_this_repositorys():
    """An editable install maps `grader` to this folder, from any working directory, so its ROOT finds puzzles/."""
    run = subprocess.run([sys.executable, "-c", "from grader import paths; print(paths.ROOT)"], cwd=Path.home(),
                         capture_output=True, text=True, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert run.returncode == 0 and Path(run.stdout.strip()) == ROOT, run.stderr


@requires_install
def test_the_command_triton_puzzles_is_python_m_grader():
    command = Path(sys.executable).parent / "triton-puzzles"
    assert command.is_file(), "the console script is not installed beside this Python"
    run = subprocess.run([str(command), "sofmax"], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 2 and "Did you mean softmax_online?" in run.stderr


@pytest.fixture
def grader_alone(tmp_path):
    """The grader as `pip install .` leaves it: grader/ in a folder of packages, without the repository; run from
    another folder."""
    site = tmp_path / "site-packages"
    shutil.copytree(ROOT / "grader", site / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "work").mkdir()
    shutil.copy(ROOT / "solutions" / "p01_add.py", tmp_path / "work")
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TRITON_INTERPRET")}
    environment.update(PYTHONPATH=str(site), TRITON_INTERPRET="1", GRADER_RESULTS=str(tmp_path / "results.json"))

    def run(*args):
        return subprocess.run([sys.executable, "-m", "grader", *args], cwd=tmp_path / "work", capture_output=True,
                              text=True, env=environment, timeout=300)
    return run


@pytest.mark.parametrize("args", [(), ("4",), ("1", "--impl", "solutions"), ("1", "--file", "p01_add.py"),
                                  ("bench", "--recorded", "4")])
def test_without_its_repository_the_grader_says_what_is_missing(grader_alone, args):
    run = grader_alone(*args)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "installed without its repository" in run.stderr and "pip install -e ." in run.stderr
