"""Access budgets: limits on memory traffic that make a puzzle's lesson checkable.

A budget is checked against what the interpreter hook recorded (``instrument.Recorder``). It counts
unmasked lanes only, so masked-off padding is free, and each load counts the distinct elements it
touches, so duplicate lanes (clamped indices, a broadcast pointer) cost one read, as on a GPU, which
coalesces them. ``numel`` maps each input's name to its element count; ``dims`` holds the case's sizes
(N and E for a graph) and block sizes.

What counts as a read of an input (one design, chosen over tracking where each value came from):
- Loads from every tensor the spec did not name as an input count as reads of the budgeted input:
  a clone the launcher made, a scratch buffer a kernel filled, the output itself. So copying x once and
  reading the copy three times is four reads of x. Such a tensor counts toward every budget on inputs of
  its kind (floating point, or integer), as the hook cannot tell which input a copy came from; honest
  solutions load nothing but their inputs, so this costs them nothing.
- An index budget (``Loads`` on integer tensors) counts every integer load, named or not.
- A per-program budget is per unit of work: a program may read its input once for each block of the
  output it stores (``block``: the output, and the elements of one block as a formula in the case's
  sizes). A program that stores nothing may read nothing, so idle programs cannot dilute the budget,
  and a persistent program that loops over three query blocks may read the keys three times. Blocks are
  counted as ceil(elements it stored first / elements per block), so a block narrower than the case's
  still counts as one, and storing rows one at a time does not multiply the allowance.
- A per-program budget also holds between stores: what a program reads since its previous store into the output
  is at most `times` the input, whatever that store holds. Otherwise a program could take two query blocks, read
  the keys twice, and store both (its partner program idle): 1x per block, though each block took two passes.
  Pairing cannot halve what a pass costs; an honest program reads the keys once before each block it stores.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from grader.course.cases import evaluate_formula
from grader.paths import location


def _region(recorder, name):
    return next((r for r in recorder.regions if r.label == name and r.given), None) or \
        next((r for r in recorder.regions if r.label == name), None)


def _unnamed(recorder, floating: bool) -> list:
    """Tensors the spec did not name as inputs (copies, scratch, outputs) of one kind: their loads count
    against the budgets on inputs of that kind."""
    return [r for r in recorder.regions if not r.given and r.floating == floating]


def _not_inputs(regions) -> str:
    """'the tensor passed as dst_ptr, x_ptr (3000 loads)': by parameter, as such a tensor may share a label."""
    return "; ".join(f"the tensor passed as {', '.join(r.params) or r.label} ({r.loads} loads)" for r in regions)


def _copy_note(recorder, floating: bool) -> str:
    copies = [r for r in _unnamed(recorder, floating) if r.loads]
    return f" (including loads of tensors that are not inputs: {_not_inputs(copies)})" if copies else ""


@dataclass(frozen=True)
class Reads:
    """Each element of input `arg` is loaded at most `times` times: in all, per program (for each `block` of
    an output it stores), or per edge (for a per-node tensor gathered along edges: one row per edge).
    Loads of tensors that are not inputs count too (see the module docstring)."""
    arg: str
    times: float
    per: str = "all"  # all, program, edge
    lesson: str = ""  # why the limit exists, in the learner's terms
    block: tuple[str, str] = ()  # per program: (output, elements of one block of it, a formula: "BQ*D")

    def __post_init__(self):
        assert (self.per == "program") == bool(self.block), "a per-program budget names its output block"

    def describe(self) -> str:
        per = {"all": "", "edge": " per edge"}.get(self.per) or f" per block of {self.block[0]} a program stores"
        return f"{self.arg} read at most {self.times:g}x{per}"

    def check(self, recorder, numel: Mapping[str, int], dims: Mapping[str, int]) -> str | None:
        size = numel[self.arg]
        region = _region(recorder, self.arg)
        unit = size // max(dims.get("N", 1), 1) * dims.get("E", 0) if self.per == "edge" else size
        if unit and (region is None or not region.loads):
            return (f"{self.arg} was never loaded by a kernel: pass the input tensor itself "
                    "(not a copy) to the kernel")
        if not unit:
            return None
        if self.per == "program":
            return self._check_per_program(recorder, region, size, dims)
        loads = region.loads + sum(r.loads for r in _unnamed(recorder, region.floating))
        if loads <= self.times * unit:
            return None
        per = "" if self.per == "all" else f" of a row per edge ({dims.get('E', 0)} edges)"
        return (f"over budget: {self.arg} read {loads / unit:.2f}x{per}{_copy_note(recorder, region.floating)}, "
                f"the budget is {self.times:g}x. {self.lesson}").rstrip()

    def _check_per_program(self, recorder, region, size, dims) -> str | None:
        """Each program's reads of arg (and of non-inputs) against the blocks of the output it stored."""
        output = _region(recorder, self.block[0])
        block = max(int(evaluate_formula(self.block[1], dims)), 1)
        counted = [region, *_unnamed(recorder, region.floating)]
        worst = None  # (rate, program, reads, blocks)
        for program, loads in recorder.program_loads.items():
            reads = sum(loads.get(r, 0) for r in counted)
            blocks = math.ceil(recorder.program_stores.get(program, {}).get(output, 0) / block)
            rate = reads / (size * blocks) if blocks else math.inf if reads else 0.0
            if rate > self.times and (worst is None or rate > worst[0]):
                worst = (rate, program[1], reads, blocks)
        if worst is None:
            return self._check_between_stores(recorder, region, size, counted, output)
        rate, program, reads, blocks = worst
        name, unit = self.block[0], self.block[1]
        if not blocks:
            return (f"over budget: program {program} read {self.arg} ({reads} elements) but stored no element of "
                    f"{name}: a program reads {self.arg} only for the blocks of {name} it computes, so a program "
                    f"with nothing to store must not loop over {self.arg}. {self.lesson}").rstrip()
        return (f"over budget: {self.arg} read {rate:.2f}x per program, the budget is {self.times:g}x for each block "
                f"of {name} ({unit} = {block} elements) a program stores; program {program} read {reads} elements "
                f"of {self.arg}{_copy_note(recorder, region.floating)} for {blocks} block(s). {self.lesson}").rstrip()


    def _check_between_stores(self, recorder, region, size, counted, output) -> str | None:
        """Each program's reads of arg (and of non-inputs) between two of its stores into the output, against one
        pass (instrument.Recorder.program_segments)."""
        worst = None  # (rate, program, reads, the store's new elements)
        for program, segments in recorder.program_segments.items():
            for segment in segments:
                if segment.region is not output:
                    continue
                reads = sum(segment.loads.get(r, 0) for r in counted)
                rate = reads / size
                if rate > self.times and (worst is None or rate > worst[0]):
                    worst = (rate, program[1], reads, segment.new)
        if worst is None:
            return None
        rate, program, reads, new = worst
        name = self.block[0]
        return (f"over budget: program {program} read {self.arg} {rate:.2f}x ({reads:g} elements"
                f"{_copy_note(recorder, region.floating)}) before one store into {name} ({new} new elements), the "
                f"budget is {self.times:g}x between two stores: a program reads {self.arg} once for the block it "
                f"stores next, so two blocks take two passes, one before each store (not two passes, then both "
                f"blocks). {self.lesson}").rstrip()


@dataclass(frozen=True)
class Writes:
    """Each element of output `arg` is stored at most `times` times."""
    arg: str
    times: float = 1
    lesson: str = ""

    def describe(self) -> str:
        return f"{self.arg} written at most {self.times:g}x"

    def check(self, recorder, numel: Mapping[str, int], dims: Mapping[str, int]) -> str | None:
        region = _region(recorder, self.arg)
        if region is None or region.stores <= self.times * region.numel:
            return None
        return (f"over budget: {self.arg} written {region.stores / region.numel:.2f}x, the budget is "
                f"{self.times:g}x. {self.lesson}").rstrip()


@dataclass(frozen=True)
class Loads:
    """Elements loaded from `args` together, at most `limit`, a formula in the case's sizes ("E + 3*N").
    On integer tensors it is an index budget and counts every integer load; on floating-point tensors
    it also counts loads of tensors that are not inputs (see the module docstring)."""
    args: tuple[str, ...]
    limit: str
    lesson: str = ""
    says: str = ""  # the formula in words, where it names a case's own count (puzzle 17's rows per walk)

    def describe(self) -> str:
        return f"{' + '.join(self.args)} loads at most {self.says or self.limit}"

    def check(self, recorder, numel: Mapping[str, int], dims: Mapping[str, int]) -> str | None:
        named = [r for r in (_region(recorder, a) for a in self.args) if r is not None]
        floating = all(r.floating for r in named)
        if floating:
            counted = named + [r for r in _unnamed(recorder, True) if r not in named]
        else:
            counted = [r for r in recorder.regions if not r.floating]
        loaded = sum(r.loads for r in counted)
        limit = evaluate_formula(self.limit, dims)
        if loaded <= limit:
            return None
        others = [r for r in counted if r.loads and r not in named]
        also = f" (counting {_not_inputs(others)} too)" if others else ""
        return (f"over budget: {loaded} elements of {', '.join(self.args)} loaded{also}, the budget is "
                f"{self.says or self.limit} = {limit}. {self.lesson}").rstrip()


@dataclass(frozen=True)
class Scratch:
    """Elements stored into tensors that are neither inputs nor `outputs` (what one kernel leaves for the next),
    at most `limit`, a formula in the case's sizes: an N x T matrix of probabilities in memory shows here."""
    outputs: tuple[str, ...]
    limit: str
    lesson: str = ""

    def describe(self) -> str:
        return f"at most {self.limit} elements written besides {', '.join(self.outputs)}"

    def check(self, recorder, numel: Mapping[str, int], dims: Mapping[str, int]) -> str | None:
        scratch = [r for r in recorder.regions if not r.given and r.label not in self.outputs and r.stores]
        stored = sum(r.stores for r in scratch)
        limit = evaluate_formula(self.limit, dims)
        if stored <= limit:
            return None
        where = "; ".join(f"the tensor passed as {', '.join(r.params) or r.label} ({r.stores} stores)" for r in scratch)
        return (f"over budget: {stored} elements stored besides {', '.join(self.outputs)} ({where}), the budget is "
                f"{self.limit} = {limit}. {self.lesson}").rstrip()


@dataclass(frozen=True)
class NoAtomics:
    lesson: str = ""

    def describe(self) -> str:
        return "no atomics"

    def check(self, recorder, numel: Mapping[str, int], dims: Mapping[str, int]) -> str | None:
        used = {r.label: r.atomics for r in recorder.regions if r.atomics}
        if not used:
            return None
        where = ", ".join(f"{n} ({k})" for n, k in used.items())
        return f"over budget: atomics on {where}; this puzzle allows none. {self.lesson}".rstrip()


@dataclass(frozen=True)
class Dots:
    """tl.dot does at least `work` multiply-adds in all, a formula in the case's sizes ("2*N*T*D"): the
    products must run on tensor cores, not as broadcast multiplies and sums. Counting work rather than
    calls means one product on tensor cores cannot stand in for two. A dot of a partial block counts in
    full, so the formula may round the sizes that the blocks tile up to whole blocks (every program's dots
    cover its whole block), and keeps exact the size the kernel loops over (its step is the kernel's to
    choose): then the last, partial step of that loop cannot run on CUDA cores unseen.

    The blocks the formula rounds to are those the kernel's dots used (`launched`: a block and the dimension of
    tl.dot that is its size, "M" or "N", the smallest seen), so a tile smaller than the case's needs less padding
    and passes ("smaller is fine"). Only real work counts: a dot whose result never reaches a store (multiplied
    by zero, overwritten) is dead, so is one whose result, perturbed, moves no store (cancelled, as d - d, however
    written: instrument.DotShadows), and so is one the GPU compiler removes. A puzzle with this budget also holds
    every tl.dot to 16-bit operands (``instrument.DotNot16Bit``): a float32 operand would run as TF32, which
    float16 inputs pass exactly, so only a rule can see it.

    Live tl.dot work is not enough: a tl.dot whose result enters what is stored only through a gate (a residual
    d - cuda kept where it is over a tolerance that rounding never passes but any perturbation does) looks live,
    while the products stored are computed on CUDA cores. So the float operations outside tl.dot are counted too
    (``grader.worker.cuda_cores``), and a kernel whose CUDA-core float work reaches the multiply-adds of one of the
    puzzle's `products` (CUDA_CORE_SHARE of them) has moved products off the tensor cores: a product there costs a
    multiply and an add per multiply-add, while the work around honest products (a softmax, scaling) is a fraction
    of that."""
    work: str
    lesson: str = ""
    says: str = ""  # the formula in words, where it rounds sizes up to blocks ("M*N*K, M and N in whole blocks")
    launched: tuple[tuple[str, str], ...] = ()  # (block, "M" or "N"): the block is the dots' own size
    products: int = 1  # the products the formula counts (q k^T and p v: 2); their tl.dot work is shared evenly

    def describe(self) -> str:
        return f"tl.dot does at least {self.says or self.work} multiply-adds"

    def least(self, recorder, dims: Mapping[str, int]) -> int:
        """The floor for this case, with each `launched` block the smallest one the kernel's dots used."""
        used = dict(dims)
        for block, side in self.launched:
            sizes = [m if side == "M" else n for _, _, m, n in recorder.dot_calls]
            if sizes:
                used[block] = min(sizes)
        return evaluate_formula(self.work, used)

    def check(self, recorder, numel: Mapping[str, int], dims: Mapping[str, int]) -> str | None:
        """Only dots whose results reach a store, and that are left in the compiled kernel, count. The worker puts
        what its GPU compile found on the recorder as a value, as budgets never import the worker:
        ``recorder.kept_dots``, the (file, line) of every tl.dot left in the compiled kernels
        (``grader.worker.gpu_compile.dot_lines``), or None when that is not known (then every dot counts)."""
        kept = recorder.kept_dots  # None before the worker has compiled the launches (a watchdog's look)
        least = self.least(recorder, dims)
        live = [(line, work) for index, (line, work, _, _) in enumerate(recorder.dot_calls)
                if recorder.dot_is_live(index)]
        dropped = {line for line, _ in live if kept is not None and line not in kept}
        work = sum(w for line, w in live if line not in dropped)
        if work >= least:
            return self._on_cuda_cores(recorder, work)
        formula = self.says or self.work
        message = (f"over budget: tl.dot did {work / least:.0%} of the multiply-adds ({work} of {formula} = {least}, "
                   f"in {sum(1 for line, _ in live if line not in dropped)} calls).")
        dead = recorder.dead_dot_work()
        if dead:
            message += (f" {dead} multiply-adds of tl.dot never reached a stored value: a product multiplied by "
                        "zero, overwritten before it is stored, cancelled (d - d: what is stored does not move when "
                        "the tl.dot's result is perturbed), used only in a mask, a pointer or a condition, or a "
                        "product of blocks that no input's values fill (a tl.dot of ones), is dead work and does not "
                        "count.")
        if dropped:
            where = ", ".join(location(file, line) for file, line in sorted(dropped))
            removed = sum(w for line, w in live if line in dropped)
            message += (f" The tl.dot at {where} is not in the compiled kernel: its result is never used, so the GPU "
                        f"compiler removes it and its {removed} multiply-adds do not count.")
        return f"{message} {self.lesson}".rstrip()

    def _on_cuda_cores(self, recorder, work: int) -> str | None:
        """The report of products moved to CUDA cores beside live tl.dot work (see the class), or None."""
        flops, share = getattr(recorder, "float_ops", 0), work / self.products
        if not work or flops < CUDA_CORE_SHARE * share:
            return None
        each = f"{share:.0f} for each of the puzzle's {self.products} products" if self.products > 1 else "one product"
        return (f"over budget: {flops} float operations ran outside tl.dot against {work} multiply-adds in tl.dot "
                f"({each}): the products must run through tl.dot, not as a broadcast multiply and tl.sum. A product "
                "on CUDA cores costs a multiply and an add per multiply-add, whatever tl.dot computes beside it (a "
                "tl.dot whose result only corrects the CUDA-core one where they differ does not make it a "
                f"tensor-core product); the work around honest products (scaling, a softmax) is a fraction of that. "
                f"{self.lesson}").rstrip()


# The CUDA-core float operations (grader.worker.cuda_cores: an add, multiply or division per element, an fma two, a
# sum one per element summed) a kernel may do per multiply-add of one product's tl.dot calls (Dots._on_cuda_cores).
# Measured over every case (float operations x products / live tl.dot multiply-adds): the correct kernels of
# puzzles 11, 12, 13, 17 and 18 (solutions, lesson forms, beyond-the-lesson paths, tests/kernels/right/) reach 0
# (11), 0.26 (12), 0.26 (13), 0.50 (17: D=16, where a softmax's few operations per score weigh most against 16
# multiply-adds, and Δ = rowsum(o dO) runs on CUDA cores by design) and 0.44 (18); the cheats with products on CUDA
# cores beside gated, live tl.dot calls are at least 2.15 (17, dv alone), 2.13 (12: zero queries) and 2.0 (11),
# except 1.06 on puzzle 11's case with K smaller than a block, where the tl.dot's padding to BK doubles its work.
# A block of no work (all zeros, or all -inf: a padded tile's) counts nothing (p12_rows_in_eight_tiles, its
# products on tensor cores, reached 1.15 on one key before; 0.14 at most now). Counting only
# operations between values that move with the inputs (not `s * scale`) and leaving out exp and log brought puzzle
# 17 down from 0.82; a product on CUDA cores still costs two per multiply-add however it is written.
CUDA_CORE_SHARE = 1.0


def wide_tile(lesson_blocks: tuple[str, ...], blocks: Mapping[str, int], recorder) -> str | None:
    """The report of a block wider than the case's blocks, where blocks are the lesson (Puzzle.lesson_blocks), or
    None. Widths are read at trace time (instrument.Recorder.tile_limit): every tl.arange and block shape that ran,
    in helpers and from local constexprs too, whatever the kernel's parameters say."""
    if recorder.wide_tile is None:
        return None
    width, where, code = recorder.wide_tile
    asked = ", ".join(f"{b}={blocks[b]}" for b in lesson_blocks if b in blocks)
    if isinstance(width, tuple):  # a tile of tiles: three axes, or more elements than two blocks hold
        shape, most = width
        what = ("three or more axes of blocks where the lesson's tiles have two" if sum(n > 1 for n in shape) > 2
                else f"{math.prod(shape)} elements, more than a tile of the launcher's blocks holds ({most})")
        return (f"over budget: this case asks for {asked}; your kernel made a block of shape "
                f"[{', '.join(map(str, shape))}], {what}: it covers more of a row than one block of the "
                f"launcher's\n  at {where}: {code}\n  Use tiles of the blocks the launcher gives, two axes at most, "
                "so the kernel loops over blocks as the lesson asks.")
    return (f"over budget: this case asks for {asked}; your kernel made a block {width} wide, wider than every block "
            f"the launcher gives ({max(blocks.values())} at most) and than every size of the case\n  at {where}: "
            f"{code}\n  Use blocks the launcher gives (smaller is fine), so the kernel loops over blocks as the "
            "lesson asks.")


def tile_limit(lesson_blocks: tuple[str, ...], blocks: Mapping[str, int], dims: Mapping[str, int]):
    """What instrument.Recorder.tile_limit holds for a case: the widest block it gives, the sizes a block may
    equal (D=64 in puzzle 12 is a dimension, not a tile), and the most elements one block may hold: the two largest
    blocks multiplied ([B0, B1]), so that [B1, B1] cannot hold a whole row with no axis wider than B1 (it can where
    B1 is 16 or less: other cases catch it); None where no block is the lesson."""
    if not any(b in blocks for b in lesson_blocks):
        return None
    # Each at least 16: a tl.dot pads a narrower block to 16 lanes (puzzle 3's float32 dot with a [B1, 16] block of
    # 1s). None where tiles have a D axis (12, 17): there tl.dot takes the keys on one axis, which the width check
    # holds, and a [BQ, BK, D] product on CUDA cores is the dot budget's to name.
    widths = sorted(max(16, w) for w in blocks.values())
    most = None if "D" in dims else widths[-1] * (widths[-2] if len(widths) > 1 else 1)
    return max(blocks.values()), frozenset(v for v in dims.values() if isinstance(v, int)), most


WATCH_MARGIN = 2  # a running kernel is stopped once it is this many times over a budget


def _relaxed(budget):
    """The budget WATCH_MARGIN times as generous (None for one that is not watched while kernels run)."""
    if isinstance(budget, (Reads, Writes)) and getattr(budget, "per", "all") != "program":
        return replace(budget, times=budget.times * WATCH_MARGIN)
    if isinstance(budget, Loads):
        return replace(budget, limit=f"{WATCH_MARGIN} * ({budget.limit})")
    return None


def exceeded_so_far(budgets, recorder, numel: Mapping[str, int], dims: Mapping[str, int]) -> str | None:
    """The first budget the counts recorded so far exceed WATCH_MARGIN times over, while kernels still run: the
    report of a kernel far over budget (an O(N x E) scan) instead of a timeout.

    Only budgets whose counts can only grow are watched (reads in all or per edge, index loads, writes), so one
    exceeded now stays exceeded and stopping early changes no verdict. The margin leaves a kernel slightly over
    budget to finish, so that a worse fault further on (an out-of-bounds access) is the one reported. Per-program
    reads (a program may store its blocks later) and the tl.dot floor wait for the end. Atomics where a puzzle allows
    none come first: an atomic also reads, so an atomic scatter would otherwise be reported as a read budget."""
    for budget in budgets:
        if isinstance(budget, NoAtomics):
            problem = budget.check(recorder, numel, dims)
            if problem:
                return problem
    for budget in budgets:
        relaxed = _relaxed(budget)
        problem = relaxed.check(recorder, numel, dims) if relaxed is not None else None
        if problem and problem.startswith("over budget"):  # not "never loaded": loads may still come
            return budget.check(recorder, numel, dims)  # in the budget's own terms
    return None
