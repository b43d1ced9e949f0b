"""Make the learner's stubs from the solutions, so the two can never drift apart.

In a solution, the code the learner writes sits between two marker lines:

    # >>> solution: about 6 lines
    ...
    # <<< solution

The stub keeps everything else and puts a short placeholder in its place: ``pass`` in a kernel
(it stores nothing, so the grader reports "not started"), or ``raise NotImplementedError`` where
the marker says ``# >>> solution (launcher): ...``.

A solution may also go past its puzzle's lesson (a faster schedule, say) between

    # >>> beyond the lesson: what it does and why
    ...
    # <<< beyond the lesson

The stub leaves such a section out altogether: the learner is not asked to write it, and the
stub's launcher is the lesson's. ``lesson_form`` keeps the solution regions and drops these
sections, which is the solution a learner would write (the tests grade it too).

The notebooks' exercise cells hold the same stub code (the puzzle file after its docstring), and
are committed without outputs; this module checks and writes those too. So it does the first lines of
each notebook's setup cell (``SETUP``), which find the course or, in Colab, clone and install it. The
other cells keep their stored outputs (tests/test_notebooks.py checks that those are current).

    python -m grader.course.stubs           exit 1 if puzzles/ or a notebook differs from the stubs (CI runs this)
    python -m grader.course.stubs --write   rewrite them from solutions/ (maintainers: it overwrites your work!)
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import tomllib
from typing import NamedTuple

from grader.paths import ROOT

_BEGIN = re.compile(r"^(?P<indent>\s*)# >>> solution(?P<launcher> \(launcher\))?: (?P<size>.+)$")
_END = re.compile(r"^\s*# <<< solution\s*$")
_BEYOND_BEGIN = re.compile(r"^\s*# >>> beyond the lesson: .+$")
_BEYOND_END = re.compile(r"^\s*# <<< beyond the lesson\s*$")


def _rewrite(solution: str, number: int, keep_solution: bool) -> str:
    """The solution without its "beyond the lesson" sections, and without its solution regions too
    (a placeholder in each) unless keep_solution."""
    out, inside = [], None  # inside: the match of the open region's first line
    for lineno, line in enumerate(solution.splitlines(keepends=True), 1):
        text = line.rstrip("\n")
        begin = _BEGIN.match(text) or _BEYOND_BEGIN.match(text)
        end = _END.match(text) or _BEYOND_END.match(text)
        if begin:
            if inside is not None:
                raise ValueError(f"line {lineno}: a region opened inside another (line {inside.lineno})")
            inside = _Open(begin, lineno)
            if begin.re is _BEGIN and not keep_solution:
                indent = begin["indent"]
                out.append(f"{indent}# Your code here: {begin['size']}.\n")
                if begin["launcher"]:
                    out.append(f'{indent}raise NotImplementedError("puzzle {number}: write the launcher")\n')
                else:
                    out.append(f"{indent}pass\n")
        elif end:
            if inside is None or (end.re is _END) != (inside.match.re is _BEGIN):
                raise ValueError(f"line {lineno}: {text.strip()!r} closes a region that is not open")
            inside = None
        elif inside is None or (keep_solution and inside.match.re is _BEGIN):
            out.append(line)
    if inside is not None:
        raise ValueError(f"line {inside.lineno}: this region is never closed")
    return "".join(out).rstrip("\n") + "\n"  # a section left out at the end leaves no blank lines behind


class _Open(NamedTuple):
    """A region's opening marker and its line number."""
    match: re.Match
    lineno: int


def make_stub(solution: str, number: int) -> str:
    """The learner's stub: a placeholder for each solution region, no "beyond the lesson" section."""
    return _rewrite(solution, number, keep_solution=False)


def lesson_form(solution: str, number: int) -> str:
    """The solution as its puzzle asks for it: solution regions kept, "beyond the lesson" sections left out."""
    return _rewrite(solution, number, keep_solution=True)


def code_part(text: str) -> str:
    """A puzzle or solution module without its docstring: what a notebook's exercise cell holds."""
    docstring = ast.parse(text).body[0]
    return "\n".join(text.splitlines()[docstring.end_lineno:]).strip()


def _cell_lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines:
        lines[-1] = lines[-1].rstrip("\n")
    return lines


# The first lines of every notebook's cell tagged "setup", up to its `import grader`. Opened from the repository, a
# notebook finds it; opened alone (Colab), it clones the repository at the release it belongs to and installs it.
# {release} and {repository} come from pyproject.toml: a new version moves every notebook to its tag.
SETUP = """\
import subprocess
import sys
from pathlib import Path

# The course is the folder that holds grader/ and puzzles/: the notebook's folder or one above it. Opened on its own
# (in Colab, say), the notebook clones the course at the release it belongs to, and installs it.
RELEASE, REPOSITORY = "{release}", "{repository}"
places = [Path.cwd(), *Path.cwd().parents, Path.cwd() / "{folder}"]
REPO_ROOT = next((p for p in places if (p / "grader").is_dir() and (p / "puzzles").is_dir()), None)
if REPO_ROOT is None:
    REPO_ROOT = places[-1]
    print(f"cloning the course ({{RELEASE}}) into {{REPO_ROOT}} and installing it: a minute or two")
    subprocess.run(["git", "clone", "--quiet", "--depth=1", f"--branch={{RELEASE}}", REPOSITORY, str(REPO_ROOT)],
                   check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--editable", str(REPO_ROOT)], check=True)
if str(REPO_ROOT) not in sys.path:  # the grader imports from there, installed or not (this kernel started first)
    sys.path.insert(0, str(REPO_ROOT))

"""


def release() -> tuple[str, str]:
    """(the release's tag, the repository's address), from pyproject.toml: v{version} and its Source URL."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return f"v{project['version']}", project["urls"]["Source"]


def setup_code() -> str:
    """The lines `SETUP` puts at the top of each notebook's setup cell, for this release."""
    tag, repository = release()
    return SETUP.format(release=tag, repository=repository, folder=repository.rstrip("/").rsplit("/", 1)[-1])


def _notebook_text(path, stubs: dict) -> str:
    """The notebook at `path` with every exercise cell set to its stub and its setup cell's first lines to
    `SETUP`, without outputs."""
    notebook = json.loads(path.read_text())
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        cell["execution_count"] = None
        tags = cell.get("metadata", {}).get("tags", [])
        if "setup" in tags:
            source = "".join(cell["source"])
            start = re.search(r"^import grader\b", source, re.MULTILINE)
            cell["source"] = _cell_lines(setup_code() + (source[start.start():] if start else ""))
        number = next((int(t.removeprefix("puzzle-")) for t in tags if t.startswith("puzzle-")), None)
        if "exercise" in tags:
            cell["outputs"] = []  # the learner's work: never committed with a result
            if number in stubs:
                cell["source"] = _cell_lines(code_part(stubs[number]))
    return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def expected_files() -> dict:
    """{path: the text it should have}: every puzzle stub, and every notebook with stub cells."""
    from grader.course.registry import PUZZLES

    files, stubs = {}, {}
    for puzzle in PUZZLES:
        path = ROOT / "solutions" / f"{puzzle.module}.py"
        try:
            stubs[puzzle.number] = make_stub(path.read_text(), puzzle.number)
        except ValueError as exc:
            raise ValueError(f"{path.relative_to(ROOT)}, {exc}") from None
        files[ROOT / "puzzles" / f"{puzzle.module}.py"] = stubs[puzzle.number]
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        files[path] = _notebook_text(path, stubs)
    return files


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.course.stubs", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="overwrite puzzles/ with fresh stubs")
    args = parser.parse_args(argv)
    try:
        files = expected_files()
    except ValueError as exc:  # a broken region marker in a solution
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stale = [path for path, text in files.items() if not path.is_file() or path.read_text() != text]
    for path in stale:
        if args.write:
            path.write_text(files[path])
            print(f"wrote {path.relative_to(ROOT)}")
        else:
            print(f"{path.relative_to(ROOT)} differs from the stubs (or an exercise cell has outputs): "
                  "python -m grader.course.stubs --write",
                  file=sys.stderr)
    return 1 if stale and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
