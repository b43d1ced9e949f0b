"""The order a recorded launch runs its programs in: drawn, never the ids' (issue 26, "trust").

Triton's interpreter runs a launch's programs one after another in id order (x outermost, z innermost); a GPU runs
them in any order, at once. A kernel that relies on the id order (tickets from `tl.atomic_add` taken to be the
program ids, a program that reads through an atomic the sums lower ids are assumed to have finished) would be
graded by the order no GPU keeps. So while a launch is recorded (grader.worker.instrument), its programs run in
an order drawn here, the same for the same grading seed, case, launch and grid, and never the id order where
there are two programs or more: such a kernel fails on every case with two programs, not by chance.
"""

from __future__ import annotations

import math
import zlib

import numpy as np

_seed = 0  # the grading's seed and the case's place (reseed); 0 outside a grading (a notebook's recording)


def reseed(seed: int) -> None:
    """Draw the orders of the launches that follow from `seed` (grader.worker.execute: per grading seed and case)."""
    global _seed
    _seed = seed


class ProgramOrder:
    """One launch's programs: the one that runs at each place, and each one's place in id order."""

    def __init__(self, grid: tuple[int, int, int], launch: int, first: int = 0):
        """The order of launch number `launch` (from 1) of a recording; `first`: the number of programs of the
        recording's launches before it (its first program's ordinal)."""
        self.grid, self.first = grid, first
        draw = np.random.default_rng(zlib.crc32(f"{_seed}/{launch}/{grid}".encode()))  # the same for the same
        # seed, launch and grid
        self.flat = draw.permutation(math.prod(grid))
        if self.flat.size > 1 and bool((np.diff(self.flat) == 1).all()):  # never the id order: reversed, it is not
            self.flat = self.flat[::-1]

    def program(self, place: int, given: tuple) -> tuple:
        """The program that runs `place`-th (from 0): the interpreter would have run `given` there."""
        if place >= self.flat.size:  # a loop the interpreter changed: its own program, as it asks
            return given
        _, ny, nz = self.grid
        flat = int(self.flat[place])
        return (flat // (ny * nz), flat // nz % ny, flat % nz)

    def ordinal(self, program: tuple) -> int:
        """The program's number in the recording: `first` plus its place in id order (x outermost, z innermost, as
        the interpreter's loops nest)."""
        _, ny, nz = self.grid
        x, y, z = (int(i) for i in program)
        return self.first + (x * ny + y) * nz + z

    def in_id_order(self) -> list[tuple]:
        """Every program of the launch, in id order."""
        nx, ny, nz = self.grid
        return [(x, y, z) for x in range(nx) for y in range(ny) for z in range(nz)]
