"""Access maps: which program loaded and stored each element of each tensor, drawn as text or a PNG.

The interpreter hook (``instrument.recording(maps=True)``) keeps, per tensor, who read and wrote each element;
this module turns that record into small pictures a beginner reads at a glance:

    python -m grader 1 --map                  the first failing case (else the first), as text
    python -m grader 4 --map ragged --heat    how often each element of case "ragged" was read
    python -m grader 2 --map tile.png         the PNG too
    grader.show(2, outer_add)                 in a notebook: the picture (the text map in a terminal)

A picture is plain numpy arrays (``grader.map_transfer.Picture``), one cell per block of elements, at most
ROWS x COLUMNS cells per tensor, recorded in the worker (``grader.worker.recording``). The CLI runs the case in a
worker process, as grading does (``runner.map_case``), which sends the pictures back as JSON; they are checked on
arrival (``Maps.from_json``). A crash or a hang costs the map, never the grader; an out-of-bounds kernel,
a Python error or a timeout inside the case still shows what happened up to the failure.
"""

from __future__ import annotations

import io
import math
import os
import sys
import textwrap
from dataclasses import dataclass

import numpy as np

from grader.map_transfer import NEEDS_INTERPRETER, Maps, Picture
from grader.worker.recording import record_case  # also worker/__main__.py's, until it imports it from there

SHOWN_PROGRAMS = 12  # programs named in a legend; the rest share its colours
# One character per program (no m, which marks masked-off lanes): distinct without colour for 60 programs.
_PROGRAM_CHARS = "abcdefghijklnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
# ANSI 256-colour codes far apart from each other and from the marks' colours (red, grey, yellow)
_PALETTE = (39, 46, 201, 214, 33, 118, 93, 208, 51, 165, 154, 27, 213, 35, 129, 220)
_MARK_COLOURS = {"!": 196, "?": 226, "m": 244, ".": 240}


# -- text ---------------------------------------------------------------------------------------------------

def use_colour(stream=None) -> bool:
    """Colour for a terminal that shows it: a tty, and NO_COLOR unset (https://no-color.org)."""
    stream = stream or sys.stdout
    return hasattr(stream, "isatty") and stream.isatty() and "NO_COLOR" not in os.environ


def _painted(chars: list[str], colours: list[int | None], colour: bool) -> str:
    if not colour:
        return "".join(chars)
    out, current = [], None
    for char, code in zip(chars, colours):
        if code != current:
            out.append("\x1b[0m" if code is None else f"\x1b[1;38;5;{code}m")
            current = code
        out.append(char)
    return "".join(out) + ("\x1b[0m" if current is not None else "")


def cell_chars(picture: Picture) -> np.ndarray:
    """One character per cell: the program's letter; '!' a race; '?' an output element never written; 'm' only
    masked-off lanes pointed there; '.' nothing touched it; ' ' no element (the end of a wrapped 1-D tensor)."""
    letters = np.array(list(_PROGRAM_CHARS))
    chars = np.where(picture.owner >= 0, letters[np.maximum(picture.owner, 0) % len(letters)], ".")
    untouched = (picture.reads == 0) & (picture.writes == 0)
    chars = np.where(untouched & picture.masked, "m", chars)
    chars = np.where(picture.unwritten, "?", chars)
    chars = np.where(picture.raced, "!", chars)
    return np.where(picture.present, chars, " ")


def _colour_of(char: str, owner: int) -> int | None:
    if char in _MARK_COLOURS:
        return _MARK_COLOURS[char]
    return None if char == " " else _PALETTE[owner % len(_PALETTE)]


def _header(picture: Picture) -> str:
    shape = "x".join(str(d) for d in picture.shape) or "scalar"
    grid = ""
    if len(picture.shape) > 2:  # drawn as (all but the last dimension) rows x the last one
        grid = f", drawn as {'·'.join(str(d) for d in picture.shape[:-1])} rows of {picture.shape[-1]}"
    scale = "1 cell = 1 element" if picture.cell == (1, 1) else (
        f"1 cell = {picture.cell[1]} consecutive elements" if len(picture.shape) <= 1
        else f"1 cell = {picture.cell[0]} row{'s' * (picture.cell[0] > 1)} x {picture.cell[1]} "
             f"element{'s' * (picture.cell[1] > 1)}")
    return f"{picture.label} ({picture.role}, {shape}{grid}; {scale})"


def _row_labels(picture: Picture) -> list[str]:
    """The first element of each row of cells: its index (1-D), its row (2-D), or its leading indices (N-D:
    '38,3' is v_scaled[38, 3, :])."""
    down = picture.present.shape[0]
    if len(picture.shape) <= 1:
        return [str(r * picture.cell[1] * picture.present.shape[1]) for r in range(down)]
    lead = tuple(picture.shape[:-1])
    rows = [r * picture.cell[0] for r in range(down)]
    if len(lead) == 1 or not all(lead):
        return [str(r) for r in rows]
    return [",".join(str(int(i)) for i in np.unravel_index(min(r, int(np.prod(lead)) - 1), lead)) for r in rows]


def render_text(maps: Maps, colour: bool = False) -> str:
    """Every tensor's picture (one character per cell, a colour per program with `colour`), the legend and a
    summary line per tensor."""
    lines = [maps.title] if maps.title else []
    if maps.note:
        lines += textwrap.wrap(f"stopped: {maps.note}", 110, subsequent_indent="  ")
    used = set()
    for picture in maps.pictures:
        chars = cell_chars(picture)
        labels = _row_labels(picture)
        width = max(len(label) for label in labels)
        lines.append(_header(picture))
        for row, label in enumerate(labels):
            row_chars = list(chars[row])
            row_colours = [_colour_of(c, o) for c, o in zip(row_chars, picture.owner[row])]
            lines.append(f"  {label:>{width}} |{_painted(row_chars, row_colours, colour)}|")
        used |= set(np.unique(chars).tolist())
        used |= {f"#{o}" for o in np.unique(picture.owner[(picture.owner >= 0) & picture.present]).tolist()}
    lines += _legend(maps, used, colour)
    lines += ["", *(p.summary for p in maps.pictures)]
    return "\n".join(lines)


def _legend(maps: Maps, used: set, colour: bool) -> list[str]:
    owners = sorted(int(u[1:]) for u in used if u.startswith("#"))
    entries, launch = [], None
    for owner in owners[:SHOWN_PROGRAMS]:
        char = _PROGRAM_CHARS[owner % len(_PROGRAM_CHARS)]
        name, _, of_launch = maps.programs[owner].partition(" of launch ")
        # several launches: "launch 2:" once before its first program, not "of launch 2" in every entry
        first = f"launch {of_launch}: " if of_launch and of_launch != launch else ""
        launch = of_launch or launch
        entries.append(f"{first}{_painted([char], [_colour_of(char, owner)], colour)} program {name}")
    if len(owners) > SHOWN_PROGRAMS:
        entries.append(f"... {len(maps.programs)} programs ran (letters and colours repeat)")
    marks = {"m": "masked-off lane (nothing else touched it)", "!": "race", "?": "output never written",
             ".": "not touched"}
    entries += [f"{_painted([m], [_MARK_COLOURS[m]], colour)} {what}" for m, what in marks.items() if m in used]
    per_line = 4
    return [("legend: " if start == 0 else "        ") + ";  ".join(entries[start:start + per_line])
            for start in range(0, len(entries), per_line)]


_HEAT_COLOURS = (236, 24, 31, 37, 71, 107, 143, 179, 208, 196)  # 0 reads, then dark blue to red


def heat_chars(picture: Picture) -> tuple[np.ndarray, int]:
    """One character per cell for how often its most-read element was loaded: '.' never, digits 1-9 that many
    times, or, beyond 9, digits 1-9 as ninths of the maximum; and reads per digit step (1 when exact)."""
    most = int(picture.reads.max()) if picture.reads.size else 0
    step = max(1, math.ceil(most / 9))
    levels = np.ceil(picture.reads / step).astype(int)
    chars = np.where(picture.reads > 0, levels.astype(str), ".")
    return np.where(picture.present, chars, " "), step


def render_heat(maps: Maps, colour: bool = False) -> str:
    """Per tensor, how often each element was read (the most in each cell), with its scale."""
    lines = [maps.title] if maps.title else []
    if maps.note:
        lines += textwrap.wrap(f"stopped: {maps.note}", 110, subsequent_indent="  ")
    for picture in maps.pictures:
        most = int(picture.reads.max()) if picture.reads.size else 0
        if most == 0:
            lines.append(f"{picture.label}: not read")
            continue
        chars, step = heat_chars(picture)
        scale = ("digit = times read" if step == 1 else f"digit d = up to d x {step} reads") + f"; at most {most}"
        lines.append(f"{_header(picture)}: reads per element ({scale}; . never)")
        labels = _row_labels(picture)
        width = max(len(label) for label in labels)
        for row, label in enumerate(labels):
            row_chars = list(chars[row])
            row_colours = [None if c == " " else _HEAT_COLOURS[0 if c == "." else int(c)] for c in row_chars]
            lines.append(f"  {label:>{width}} |{_painted(row_chars, row_colours, colour)}|")
    return "\n".join(lines)


# -- PNG ------------------------------------------------------------------------------------------------------

def drawn(maps: Maps, heat: bool = False) -> list[Picture]:
    """The pictures a figure has a panel for: every one, or in a heat map those of the tensors that were read."""
    return [p for p in maps.pictures if not heat or p.reads.any()]


def figure(maps: Maps, heat: bool = False):
    """A matplotlib Figure of the maps, one panel per tensor drawn (imported here: the grader starts without it)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    pictures = drawn(maps, heat)
    heights = [p.present.shape[0] + 3 for p in pictures] or [3]  # a panel's rows of cells, and its title
    fig = Figure(figsize=(9, 2 + 0.13 * sum(heights)), layout="constrained")
    axes = fig.subplots(len(heights), 1, squeeze=False, height_ratios=heights)[:, 0]
    palette = [np.array(_xterm_rgb(code)) for code in _PALETTE]
    for ax, picture in zip(axes, pictures):
        ax.set_title(picture.summary if len(picture.summary) < 110 else picture.summary[:107] + "...", fontsize=8,
                     loc="left")
        ax.set_xticks([])
        ax.set_yticks([])
        if heat:
            shown = np.where(picture.present, picture.reads, np.nan)
            image = ax.imshow(shown, cmap="viridis", aspect="auto", interpolation="nearest", vmin=0)
            fig.colorbar(image, ax=ax, label="reads")
            continue
        ax.imshow(_rgb(picture, palette), aspect="auto", interpolation="nearest")
    if not heat:
        owners = sorted({int(o) for p in maps.pictures for o in np.unique(p.owner[p.owner >= 0])})
        handles = [Patch(color=palette[o % len(palette)], label=f"program {maps.programs[o]}")
                   for o in owners[:SHOWN_PROGRAMS]]
        used = {str(c) for p in maps.pictures for c in np.unique(cell_chars(p)[p.present])}
        handles += [Patch(color=np.array(_xterm_rgb(_MARK_COLOURS[m])), label=what) for m, what in
                    (("m", "masked-off lane"), ("!", "race"), ("?", "output never written"), (".", "not touched"))
                    if m in used]
        fig.legend(handles=handles, loc="outside lower center", ncols=4, fontsize=7)
    if maps.title or maps.note:
        said = [maps.title, *textwrap.wrap(f"stopped: {maps.note}" if maps.note else "", 110)]
        fig.suptitle("\n".join(filter(None, said)), fontsize=9)
    return fig


def _rgb(picture: Picture, palette: list) -> np.ndarray:
    image = np.ones(picture.owner.shape + (3,))
    chars = cell_chars(picture)
    for index, colour in enumerate(palette):
        image[(picture.owner % len(palette) == index) & (picture.owner >= 0)] = colour
    for mark, code in _MARK_COLOURS.items():
        image[chars == mark] = _xterm_rgb(code)
    return image


def _xterm_rgb(code: int) -> tuple[float, float, float]:
    """An ANSI 256-colour code (16..255) as RGB in [0, 1], so the PNG matches the terminal."""
    if code >= 232:
        grey = (8 + 10 * (code - 232)) / 255
        return grey, grey, grey
    steps = (0, 95, 135, 175, 215, 255)
    code -= 16
    return tuple(steps[v] / 255 for v in (code // 36, code // 6 % 6, code % 6))


def save_png(maps: Maps, path: str, heat: bool = False) -> str:
    """Write the PNG; what to tell the user (where it went, or why there is none)."""
    try:
        figure(maps, heat).savefig(path, dpi=120)
    except OSError as exc:
        return f"no PNG written: {path}: {exc.strerror or exc}"
    return f"map written to {path}"


def png_problem(path: str) -> str | None:
    """Why a PNG cannot be written at `path` (checked before the case runs), or None."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        return f"--map {path} is a directory; name the PNG file to write"
    if not os.path.isdir(folder):
        return f"--map {path}: the folder {folder} does not exist"
    if not os.access(folder, os.W_OK):
        return f"--map {path}: the folder {folder} is not writable"
    return None


# -- running a case ---------------------------------------------------------------------------------------------

def _title(puzzle, index: int, seed: int) -> str:
    """Which puzzle and case, with every size (a graph's N and E too, drawn from the seed) and the seed, so the
    same case can be graded or drawn again (--seed)."""
    from grader.course.cases import make_inputs

    case = puzzle.cases[index]
    try:
        dims = make_inputs(puzzle.spec, case, seed)[1]
    except Exception:  # noqa: BLE001 -- a title never fails a map; the case's own sizes still say a lot
        dims = case.dims
    from grader.show.report import sizes_text

    sizes = sizes_text({**dims, **case.blocks})
    where = f" ({sizes})" if sizes else ""
    return f"puzzle {puzzle.number} ({puzzle.slug}), case {index + 1} \"{case.name}\"{where}, seed {seed}"


def find_case(puzzle, key: str) -> int:
    """A case's index by its name or its number (from 1, as the report lists them); KeyError with the choices."""
    names = [case.name for case in puzzle.cases]
    if key.isdigit() and 1 <= int(key) <= len(names):
        return int(key) - 1
    for wanted in (key, key.lower()):
        found = [i for i, name in enumerate(names) if (name if wanted == key else name.lower()) == wanted]
        if found:
            return found[0]
    choices = ", ".join(f"{i + 1} ({name})" for i, name in enumerate(names))
    raise KeyError(f"puzzle {puzzle.number} has no case {key!r}; choose one of: {choices}")


def map_isolated(puzzle, index: int, impl: str, file: str | None, seed: int, timeout: float,
                 own_launcher: bool = False) -> Maps:
    """The maps of one case, run in a worker process as grading runs one (``runner.map_case``): a crash or a hang
    costs the map, never the grader. What comes back is checked, and drawn as the submission's own record: a
    picture, not a verdict."""
    from grader.judge import runner

    sent, why = runner.map_case(puzzle, index, impl, file, seed, timeout, own_launcher=own_launcher)
    maps = Maps([], note=why)
    if sent is not None:
        try:
            maps = Maps.from_json(sent)
        except ValueError as exc:
            maps = Maps([], note=f"the case's process sent back {exc}: nothing to draw")
    maps.title = _title(puzzle, index, seed)
    return maps


def command(puzzles: list, targets: list[str], heat: bool, impl: str, file: str | None, seed: int, timeout: float,
            interpret: bool, own_launcher: bool = False) -> int:
    """``python -m grader N --map [CASE] [--map FILE.png] [--heat]``: print one case's maps; exit status 0 when the
    case ran to its end, 1 when it stopped early, 2 on a usage error or a PNG that could not be written."""
    if len(puzzles) != 1:
        print("error: --map draws one puzzle's case: python -m grader 4 --map", file=sys.stderr)
        return 2
    puzzle = puzzles[0]
    if not interpret:
        print(NEEDS_INTERPRETER.format(number=puzzle.number), file=sys.stderr)
        return 2
    pngs = [t for t in targets if t.lower().endswith(".png")]
    keys = [t for t in targets if t and t not in pngs]
    if len(keys) > 1 or len(pngs) > 1:
        print("error: --map takes one case and at most one FILE.png", file=sys.stderr)
        return 2
    problem = png_problem(pngs[0]) if pngs else None
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        index = find_case(puzzle, keys[0]) if keys else _first_failing(puzzle, impl, file, seed, timeout,
                                                                         own_launcher)
    except KeyError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    maps = map_isolated(puzzle, index, impl, file, seed, timeout, own_launcher)
    colour = use_colour()
    print(render_heat(maps, colour) if heat else render_text(maps, colour))
    said = save_png(maps, pngs[0], heat) if pngs else ""
    if said:
        print(said)
    sys.stdout.flush()
    if said.startswith("no PNG"):
        return 2  # the file asked for was not written
    return 1 if maps.note else 0


def _first_failing(puzzle, impl: str, file: str | None, seed: int, timeout: float, own_launcher: bool) -> int:
    """The index of the first case that fails when graded (in worker processes), else 0."""
    from grader.judge import runner

    result = runner.grade_isolated([puzzle], impl, file, seed, True, timeout, "interpreter",
                                   own_launcher=own_launcher)[0]
    names = [case.name for case in puzzle.cases]
    failing = [c.name for c in result.cases if not c.passed and c.reason != "skipped" and c.name in names]
    if failing:
        print(f"mapping case \"{failing[0]}\", the first that fails", file=sys.stderr)
    return names.index(failing[0]) if failing else 0


DISPLAY_DPI = 80  # a 9-inch-wide figure 720 pixels wide: the width of a notebook's output area


@dataclass
class Drawing:
    """One case's maps as ``grader.show`` gives them back: Jupyter shows the picture (``_repr_png_``), a terminal
    and ``print`` the text map."""
    maps: Maps
    heat: bool = False

    def __str__(self) -> str:
        return render_heat(self.maps) if self.heat else render_text(self.maps)

    __repr__ = __str__  # what a terminal's Python shows, and Jupyter's text/plain beside the PNG

    def _repr_png_(self) -> bytes | None:
        """The PNG of the figure; None, so that Jupyter shows the text, when there is nothing to draw (a map outside
        the interpreter, a heat map of a stub that read nothing)."""
        if not drawn(self.maps, self.heat):
            return None
        png = io.BytesIO()
        figure(self.maps, self.heat).savefig(png, format="png", dpi=DISPLAY_DPI)
        return png.getvalue()


def show(puzzle, launcher, case: int | str | None = None, heat: bool = False, seed: int = 0,
         timeout: float | None = None) -> Drawing:
    """Draw one case's maps in this process (``grader.show``). `case`: its name or number (from 1); the first case
    by default."""
    from grader import env
    from grader.course import registry

    puzzle = registry.find(puzzle)
    index = 0 if case is None else find_case(puzzle, str(case))
    maps = record_case(puzzle, launcher, puzzle.cases[index], seed, timeout or env.DEFAULT_TIMEOUT)
    maps.title = _title(puzzle, index, seed)
    return Drawing(maps, heat)
