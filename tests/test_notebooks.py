"""The chapter notebooks run top to bottom, and their stored outputs are current.

Each notebook is executed twice, in a fresh kernel with the interpreter forced: with every exercise
cell holding its stub, where every check reports "not started", and with every exercise cell
replaced by its reference solution, where every check reports "Solved". The cells are set by the
test, so a learner's own work in the notebooks does not change the result. That the committed
cells equal the stubs, with no output in an exercise cell, is checked by `python -m grader.course.stubs`
(CI runs it).

Every other code cell keeps its output in the committed notebook, so that the figures and tables
show on GitHub without a run. The run with stubs is the notebook as committed, so its outputs are
the ones to store; the same run checks them (no third execution). Text must match exactly: streams,
and text, HTML and SVG data. Left out of the comparison: execution counts, memory addresses
(`0x` and 8 or more hex digits), and binary images (a matplotlib plot, where matplotlib is installed:
its bytes change with the library's version). In a cell tagged `numbers-vary`, digits are left out
too, and only the words and layout must match: its printed errors come from float32 sums and
products whose last bits depend on the CPU's vector width and BLAS library. No cell prints a timing
or an unseeded random number; a GPU-only cell prints, here, that it skipped, and the GPU results a
notebook shows come from the JSON files recorded in docs/bench/. After changing a notebook, store
its outputs with

    STORE_NOTEBOOK_OUTPUTS=1 pytest tests/test_notebooks.py -k stored_outputs

    pytest -m notebook
"""

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from helpers import requires_interpreter

from grader.course import registry, stubs
from grader.course.stubs import code_part, make_stub

nbformat = pytest.importorskip("nbformat", reason="running the notebooks needs nbformat")
nbclient = pytest.importorskip("nbclient", reason="running the notebooks needs nbclient")
pytest.importorskip("ipykernel", reason="running the notebooks needs ipykernel")

from ipykernel.kernelspec import RESOURCES, get_kernel_dict  # noqa: E402
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager  # noqa: E402
from jupyter_client.manager import KernelManager  # noqa: E402

pytestmark = [pytest.mark.notebook, pytest.mark.heavy]  # a notebook's run: up to minutes of one core

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
CELL_TIMEOUT = 600  # seconds, for a slow machine: the slowest cell takes a few seconds here
CHECK = re.compile(r"^grader\.check\((\d+), (\w+)\);$")
STORE = os.environ.get("STORE_NOTEBOOK_OUTPUTS") == "1"  # write fresh outputs instead of comparing them
ADDRESS = re.compile(r"0x[0-9a-f]{8,}")  # an object's id, as in "<function f at 0x7f3a2c1b5e40>"
BINARY_IMAGES = ("image/png", "image/jpeg", "image/gif")
DIGITS = re.compile(r"\d")


class ThisPython(KernelSpecManager):
    """Always the ipykernel of the Python running pytest, whatever kernels are installed elsewhere:
    a "python3" kernelspec of another environment would lack this one's torch and triton."""

    def get_kernel_spec(self, kernel_name):
        return KernelSpec(resource_dir=RESOURCES, **get_kernel_dict())


def solution(number: int) -> str:
    return (ROOT / "solutions" / f"{registry.find(number).module}.py").read_text()


def puzzles_of(chapter: str):
    return [p for p in registry.PUZZLES if p.notebook == chapter]


# One parameter per notebook, carrying the markers of its puzzles (`pytest -m puzzle5` runs chapter 2 too) and an
# xdist group, so that under -n a notebook's tests share the worker that holds its one run with stubs (run_with_stubs).
CHAPTERS = [pytest.param(chapter, marks=[*(getattr(pytest.mark, f"puzzle{p.number}") for p in puzzles_of(chapter)),
                                         pytest.mark.xdist_group(f"notebook_{chapter}")],
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
    # Chapter 5's capstone on generated molecules, with RDKit installed or not: its stored outputs are that run's.
    monkeypatch.setenv("CAPSTONE_DATA", "generated")
    manager = KernelManager(kernel_name="python3", kernel_spec_manager=ThisPython())
    client = nbclient.NotebookClient(notebook, km=manager, timeout=CELL_TIMEOUT, coalesce_streams=True,
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


_RUNS_WITH_STUBS: dict[str, tuple] = {}


@pytest.fixture(params=CHAPTERS)
def run_with_stubs(request):
    """(chapter, the executed notebook, its check outputs) with every exercise cell holding its stub: the
    notebook as committed. One execution per chapter, which the three tests below share (kept here, not in a
    module-scoped fixture: pytest ends those whenever another module's or chapter's test runs between, and
    under xdist the notebook then ran twice)."""
    if request.param not in _RUNS_WITH_STUBS:
        notebook = _with_exercises(request.param, lambda n: code_part(make_stub(solution(n), n)))
        with pytest.MonkeyPatch.context() as monkeypatch:
            checks = execute(notebook, monkeypatch)
        _RUNS_WITH_STUBS[request.param] = request.param, notebook, checks
    return _RUNS_WITH_STUBS[request.param]


@requires_interpreter
@pytest.mark.slow
def test_notebook_with_stubs_reports_not_started(run_with_stubs):
    chapter, _, outputs = run_with_stubs
    assert sorted(outputs) == [p.number for p in puzzles_of(chapter)]
    for number, text in outputs.items():
        assert "not started" in text and "Traceback" not in text, f"puzzle {number}:\n{text}"


@requires_interpreter
@pytest.mark.slow
def test_every_map_is_a_picture(run_with_stubs):
    """Each grader.show cell ends in the drawing, shown as a PNG; a heat map of a stub, which read nothing, as its
    text."""
    _, notebook, _ = run_with_stubs
    cells = [c for c in notebook.cells if c.cell_type == "code" and c.source.startswith("grader.show(")]
    for cell in cells:
        shown = [o.data for o in cell.outputs if o.output_type == "execute_result"]
        assert len(shown) == 1 and "text/plain" in shown[0], cell.source
        if "heat=True" not in cell.source:
            assert "image/png" in shown[0], cell.source


@requires_interpreter
def test_a_map_in_a_notebook_is_a_png(tmp_path):
    """grader.show in a notebook cell: Jupyter gets a PNG to show, and the text map beside it."""
    setup = next(c for c in read("01_warmup").cells if "setup" in c.metadata.get("tags", []))
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(setup.source),
        nbformat.v4.new_code_cell("from grader.course import registry\nfrom grader.worker import loader\n"
                                  "add = loader.load_launcher(registry.find(1), 'solutions')"),
        nbformat.v4.new_code_cell("grader.show(1, add)")])
    with pytest.MonkeyPatch.context() as monkeypatch:
        execute(notebook, monkeypatch)
    (shown,) = [o.data for o in notebook.cells[-1].outputs if o.output_type == "execute_result"]
    assert shown["image/png"].startswith("iVBORw0KGgo")  # base64 of the PNG signature
    assert "z: program (0,0,0) wrote z[0..31]" in shown["text/plain"]


def _setup_part(cell) -> str:
    return cell.source[:cell.source.index("import grader")]


def test_the_setup_cell_finds_the_course_or_clones_and_installs_it(tmp_path, monkeypatch):
    """The setup cell, as Colab runs it: from the repository it finds the course and runs nothing; opened alone, in
    an empty folder, it clones the release these notebooks belong to and installs it; run again after a restart, it
    finds that clone."""
    code = {chapter.id: _setup_part(next(c for c in read(chapter.id).cells if "setup" in c.metadata.get("tags", [])))
            for chapter in CHAPTERS}
    assert set(code.values()) == {stubs.setup_code()}, "python -m grader.course.stubs --write sets the setup cells"
    tag, repository = stubs.release()
    assert tag == "v" + tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    calls = []

    def run(command, check):
        assert check, "a failed clone or install must stop the notebook"
        calls.append(command)
        if command[:2] == ["git", "clone"]:  # the clone, with what the cell looks for
            for folder in ("grader", "puzzles"):
                (Path(command[-1]) / folder).mkdir(parents=True)
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setattr(sys, "path", list(sys.path))
    setup = stubs.setup_code()

    def run_cell(folder):
        monkeypatch.chdir(folder)
        namespace = {}
        exec(setup, namespace)
        return namespace["REPO_ROOT"]

    assert run_cell(NOTEBOOKS) == ROOT and calls == []
    clone = tmp_path / "triton-attention-puzzles"
    assert run_cell(tmp_path) == clone and sys.path[0] == str(clone)
    assert calls == [["git", "clone", "--quiet", "--depth=1", f"--branch={tag}", repository, str(clone)],
                     [sys.executable, "-m", "pip", "install", "--quiet", "--editable", str(clone)]]
    calls.clear()
    assert run_cell(tmp_path) == clone and calls == []


def test_the_readme_opens_each_notebook_in_colab_at_its_release():
    tag, repository = stubs.release()
    readme = (ROOT / "README.md").read_text()
    for chapter in CHAPTERS:
        link = f"{repository.replace('https://github.com/', 'https://colab.research.google.com/github/')}" \
               f"/blob/{tag}/notebooks/{chapter.id}.ipynb"
        assert link in readme, f"the README has no Colab badge for {chapter.id}: {link}"


def _lines(text):
    """Text as a list of lines, the way Jupyter writes it, so that a changed line is a one-line diff."""
    return text.splitlines(keepends=True) if isinstance(text, str) else text


def stored_form(outputs) -> list[dict]:
    """Outputs as the notebook stores them: plain dicts, text as lists of lines, no execution counts."""
    stored = []
    for output in outputs:
        output = json.loads(json.dumps(output))  # a NotebookNode as plain dicts
        if "text" in output:
            output["text"] = _lines(output["text"])
        for kind, value in output.get("data", {}).items():
            if kind.startswith("text/") or kind == "image/svg+xml":
                output["data"][kind] = _lines(value)
        if "execution_count" in output:
            output["execution_count"] = None
        stored.append(output)
    return stored


def comparable(outputs, tags=()) -> list:
    """What a fresh run must reproduce exactly: every text output, with memory addresses masked (and every
    digit, in a cell tagged numbers-vary)."""
    kept = []
    for output in stored_form(outputs):
        data = output.get("data", {})
        if any(kind in data for kind in BINARY_IMAGES):
            continue  # a matplotlib figure: its bytes depend on the library's version
        text = json.dumps({key: value for key, value in output.items() if key != "metadata"}, sort_keys=True)
        text = ADDRESS.sub("0x…", text)
        kept.append(DIGITS.sub("#", text) if "numbers-vary" in tags else text)
    return kept


def _first_line(cell) -> str:
    return "".join(cell["source"]).strip().splitlines()[0]


def _store(path: Path, committed: dict, fresh) -> None:
    for cell, ran in zip(committed["cells"], fresh.cells):
        if cell["cell_type"] == "code" and "exercise" not in cell["metadata"].get("tags", []):
            cell["outputs"] = stored_form(ran.outputs)
    # The layout `python -m grader.course.stubs` writes, so that the two never disagree about a notebook's text.
    path.write_text(json.dumps(committed, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


@requires_interpreter
@pytest.mark.slow
def test_stored_outputs_are_current(run_with_stubs):
    chapter, fresh, _ = run_with_stubs
    path = NOTEBOOKS / f"{chapter}.ipynb"
    committed = json.loads(path.read_text())
    assert len(committed["cells"]) == len(fresh.cells)
    if STORE:
        _store(path, committed, fresh)
        return
    stale = []
    for index, (cell, ran) in enumerate(zip(committed["cells"], fresh.cells)):
        if cell["cell_type"] != "code":
            continue
        tags = cell["metadata"].get("tags", [])
        if "exercise" in tags:
            assert not cell["outputs"], f"cell {index} is an exercise cell: it is committed without output"
        elif comparable(cell["outputs"], tags) != comparable(ran.outputs, tags):
            stale.append(f"cell {index} ({_first_line(cell)})")
    assert not stale, (f"{path.name}: the stored outputs of {', '.join(stale)} differ from a fresh run; store them "
                       "with STORE_NOTEBOOK_OUTPUTS=1 pytest tests/test_notebooks.py -k stored_outputs")


@requires_interpreter
@pytest.mark.parametrize("chapter", CHAPTERS)
@pytest.mark.slow
def test_notebook_with_solutions_solves_every_puzzle(chapter, monkeypatch):
    outputs = execute(_with_exercises(chapter, lambda n: code_part(solution(n))), monkeypatch)
    assert sorted(outputs) == [p.number for p in puzzles_of(chapter)]
    for number, text in outputs.items():
        assert "Solved" in text, f"puzzle {number}:\n{text}"


def test_the_comparison_ignores_counts_addresses_and_plots_but_not_text():
    stored = [{"output_type": "execute_result", "execution_count": None, "metadata": {},
               "data": {"text/plain": ["<function f at 0x7f3a2c1b5e40>"]}},
              {"output_type": "stream", "name": "stdout", "text": ["row 16   0x0018\n", "row 17   0x0027\n"]}]
    fresh = [{"output_type": "execute_result", "execution_count": 7, "metadata": {},
              "data": {"text/plain": "<function f at 0x7f00dd2e1a30>"}},
             {"output_type": "display_data", "metadata": {},
              "data": {"image/png": "iVBOR...", "text/plain": "<Figure>"}},
             {"output_type": "stream", "name": "stdout", "text": "row 16   0x0018\nrow 17   0x0027\n"}]
    assert comparable(stored) == comparable(fresh)
    fresh[2]["text"] = "row 16   0x0018\nrow 17   0x0028\n"  # one tcb_mask value changed: a stale table
    assert comparable(stored) != comparable(fresh)
    assert comparable(stored, ["numbers-vary"]) == comparable(fresh, ["numbers-vary"])
    fresh[2]["text"] = "row 16   0x0018\nrow 17 = 0x0027\n"  # but words and layout still count
    assert comparable(stored, ["numbers-vary"]) != comparable(fresh, ["numbers-vary"])


@pytest.mark.parametrize("chapter, cell_id, figure", [("04_tensor_cores", "bsb-picture", "bsb_format.svg"),
                                                     ("05_backward", "transposed-picture", "transposed_graph.svg")])
def test_a_figure_is_the_notebooks_own_drawing(chapter, cell_id, figure):
    """notebooks/figures/FIGURE is what the cell that draws it stored, plus a <title>: the picture in the text cannot
    drift from the code that draws it (`test_stored_outputs_are_current` keeps that output current)."""
    cell = next(c for c in read(chapter).cells if c.get("id") == cell_id)
    drawn = "".join(next(o for o in cell.outputs if "image/svg+xml" in o.get("data", {}))["data"]["image/svg+xml"])
    stored = (NOTEBOOKS / "figures" / figure).read_text()
    assert re.sub(r"<title>.*</title>\n", "", stored).strip() == drawn.strip(), (
        f"figures/{figure} differs from the output of the notebook's {cell_id} cell: copy that output into it "
        "(keeping the <title> line)")
