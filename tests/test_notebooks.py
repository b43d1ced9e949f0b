"""The chapter notebooks run top to bottom.

Each notebook is executed twice, in a fresh kernel with the interpreter forced: with every exercise
cell holding its stub, where every check reports "not started", and with every exercise cell
replaced by its reference solution, where every check reports "Solved". The cells are set by the
test, so a learner's own work in the notebooks does not change the result. That the committed
cells equal the stubs, without outputs, is checked by `python -m grader.stubs` (CI runs it).

    pytest -m notebook
"""

import re
from pathlib import Path

import pytest
from helpers import requires_interpreter

from grader import registry
from grader.stubs import code_part, make_stub

nbformat = pytest.importorskip("nbformat", reason="running the notebooks needs nbformat")
nbclient = pytest.importorskip("nbclient", reason="running the notebooks needs nbclient")
pytest.importorskip("ipykernel", reason="running the notebooks needs ipykernel")

from ipykernel.kernelspec import RESOURCES, get_kernel_dict  # noqa: E402
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager  # noqa: E402
from jupyter_client.manager import KernelManager  # noqa: E402

pytestmark = pytest.mark.notebook

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
CELL_TIMEOUT = 600  # seconds, for a slow machine: the slowest cell takes a few seconds here
CHECK = re.compile(r"^grader\.check\((\d+), (\w+)\);$")


class ThisPython(KernelSpecManager):
    """Always the ipykernel of the Python running pytest, whatever kernels are installed elsewhere:
    a "python3" kernelspec of another environment would lack this one's torch and triton."""

    def get_kernel_spec(self, kernel_name):
        return KernelSpec(resource_dir=RESOURCES, **get_kernel_dict())


def solution(number: int) -> str:
    return (ROOT / "solutions" / f"{registry.find(number).module}.py").read_text()


def puzzles_of(chapter: str):
    return [p for p in registry.PUZZLES if p.notebook == chapter]


# One parameter per notebook, carrying the markers of its puzzles: `pytest -m puzzle5` runs chapter 2 too.
CHAPTERS = [pytest.param(chapter, marks=[getattr(pytest.mark, f"puzzle{p.number}") for p in puzzles_of(chapter)],
                         id=chapter) for chapter in dict.fromkeys(p.notebook for p in registry.PUZZLES)]


def read(chapter: str):
    return nbformat.read(NOTEBOOKS / f"{chapter}.ipynb", as_version=4)


def exercise_cells(notebook) -> dict:
    """{puzzle number: its exercise cell}, from the tags exercise and puzzle-N."""
    cells = {}
    for cell in notebook.cells:
        tags = cell.metadata.get("tags", [])
        if "exercise" in tags:
            number = next(int(t.removeprefix("puzzle-")) for t in tags if t.startswith("puzzle-"))
            assert number not in cells, f"two exercise cells for puzzle {number}"
            cells[number] = cell
    return cells


def check_outputs(notebook) -> dict[int, str]:
    """{puzzle number: everything its grader.check cell printed}."""
    outputs = {}
    for cell in notebook.cells:
        found = CHECK.match(cell.source.strip()) if cell.cell_type == "code" else None
        if found:
            texts = [o.get("text", "") for o in cell.outputs if o.output_type == "stream"]
            texts += ["\n".join(o.get("traceback", [])) for o in cell.outputs if o.output_type == "error"]
            outputs[int(found[1])] = "".join(texts)
    return outputs


def execute(notebook, monkeypatch):
    # Forced so that a GPU machine runs the same interpreter checks (and skips the benchmark cell).
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    manager = KernelManager(kernel_name="python3", kernel_spec_manager=ThisPython())
    client = nbclient.NotebookClient(notebook, km=manager, timeout=CELL_TIMEOUT,
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()  # raises CellExecutionError, with the cell and its traceback, if any cell fails
    return check_outputs(notebook)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_each_puzzle_has_an_exercise_cell_and_a_check(chapter):
    notebook = read(chapter)
    assert sorted(exercise_cells(notebook)) == [p.number for p in puzzles_of(chapter)]
    checks = {int(m[1]): m[2] for c in notebook.cells if c.cell_type == "code" and (m := CHECK.match(c.source))}
    assert checks == {p.number: p.launcher for p in puzzles_of(chapter)}


def _with_exercises(chapter, code_for):
    notebook = read(chapter)
    for number, cell in exercise_cells(notebook).items():
        cell.source = code_for(number)
    return notebook


@requires_interpreter
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_notebook_with_stubs_reports_not_started(chapter, monkeypatch):
    notebook = _with_exercises(chapter, lambda n: code_part(make_stub(solution(n), n)))
    outputs = execute(notebook, monkeypatch)
    assert sorted(outputs) == [p.number for p in puzzles_of(chapter)]
    for number, text in outputs.items():
        assert "not started" in text and "Traceback" not in text, f"puzzle {number}:\n{text}"


@requires_interpreter
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_notebook_with_solutions_solves_every_puzzle(chapter, monkeypatch):
    outputs = execute(_with_exercises(chapter, lambda n: code_part(solution(n))), monkeypatch)
    assert sorted(outputs) == [p.number for p in puzzles_of(chapter)]
    for number, text in outputs.items():
        assert "Solved" in text, f"puzzle {number}:\n{text}"
