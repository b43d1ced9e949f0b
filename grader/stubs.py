"""Make the learner's stubs from the solutions, so the two can never drift apart.

In a solution, the code the learner writes sits between two marker lines:

    # >>> solution: about 6 lines
    ...
    # <<< solution

The stub keeps everything else and puts a short placeholder in its place: ``pass`` in a kernel
(it stores nothing, so the grader reports "not started"), or ``raise NotImplementedError`` where
the marker says ``# >>> solution (launcher): ...``.

    python -m grader.stubs           exit 1 if puzzles/ differs from the stubs (CI runs this)
    python -m grader.stubs --write   rewrite puzzles/ from solutions/ (maintainers: it overwrites!)
"""

from __future__ import annotations

import argparse
import re
import sys

from .loader import ROOT
from .registry import PUZZLES

_BEGIN = re.compile(r"^(?P<indent>\s*)# >>> solution(?P<launcher> \(launcher\))?: (?P<size>.+)$")
_END = re.compile(r"^\s*# <<< solution\s*$")


def make_stub(solution: str, number: int) -> str:
    out, inside = [], None
    for lineno, line in enumerate(solution.splitlines(keepends=True), 1):
        begin = _BEGIN.match(line.rstrip("\n"))
        if begin:
            if inside is not None:
                raise ValueError(f"line {lineno}: solution block opened twice")
            inside = begin
            indent = begin["indent"]
            out.append(f"{indent}# Your code here: {begin['size']}.\n")
            if begin["launcher"]:
                out.append(f'{indent}raise NotImplementedError("puzzle {number}: write the launcher")\n')
            else:
                out.append(f"{indent}pass\n")
        elif _END.match(line):
            if inside is None:
                raise ValueError(f"line {lineno}: solution block closed but never opened")
            inside = None
        elif inside is None:
            out.append(line)
    if inside is not None:
        raise ValueError("a solution block is never closed")
    return "".join(out)


def expected_stubs() -> dict:
    """{path of the stub: its text} for every puzzle."""
    stubs = {}
    for puzzle in PUZZLES:
        solution = (ROOT / "solutions" / f"{puzzle.module}.py").read_text()
        stubs[ROOT / "puzzles" / f"{puzzle.module}.py"] = make_stub(solution, puzzle.number)
    return stubs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.stubs", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="overwrite puzzles/ with fresh stubs")
    args = parser.parse_args(argv)
    stubs = expected_stubs()
    stale = [path for path, text in stubs.items() if not path.is_file() or path.read_text() != text]
    for path in stale:
        if args.write:
            path.write_text(stubs[path])
            print(f"wrote {path.relative_to(ROOT)}")
        else:
            print(f"{path.relative_to(ROOT)} differs from its stub: python -m grader.stubs --write", file=sys.stderr)
    return 1 if stale and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
