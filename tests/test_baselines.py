"""The benchmark's baselines and tables, checked on the CPU: puzzle 13's CSR kernel (in the interpreter),
its unfused PyTorch path and FlexAttention's mask against the spec, and the Markdown of every kind of table.

The timings themselves need a GPU (`python -m grader bench 11 12 13`); here `bench_size` runs with the
timer replaced, so everything but the clock is exercised. Run: `python -m pytest tests/test_baselines.py -q`.
"""

import dataclasses
import json
import warnings

import pytest
import torch

from grader.bench import launches, measure, plots, tables, timing
from grader.bench import settings as bench_settings
from grader.course import graphs, registry, specs
from grader.course.cases import Case, make_inputs, reference
from grader.paths import ROOT
from grader.worker import loader

pytestmark = pytest.mark.puzzle13

SPARSE = registry.find(13)
SPARSE_BENCH = bench_settings.BENCHES[SPARSE.slug]
CSR = next(b for name, b in SPARSE_BENCH.baselines.items() if "CSR" in name)


def _inputs(build, d=64, fill=None):
    case = Case("baseline", dict(D=d), graph=build, **({"fill": fill} if fill else {}))
    return make_inputs(specs.sparse_attention, case, seed=0)[0]


GRAPHS = [
    pytest.param(lambda g: graphs.molecules(1, g), 64, id="a molecule, D=64"),
    pytest.param(lambda g: graphs.with_isolated(graphs.molecules(1, g), 9), 16, id="rows with no neighbour, D=16"),
    pytest.param(lambda g: graphs.with_self_loops(graphs.with_duplicates(graphs.molecules(1, g), 40, g), 10, g), 64,
                 id="duplicate edges and self loops, D=64"),
    pytest.param(lambda g: graphs.with_hub(graphs.random_graph(40, 3, g), 0.6, g, hub=5), 32,
                 id="a hub row of many steps, D=32"),
]


@pytest.mark.parametrize("build, d", GRAPHS)
@pytest.mark.slow
def test_csr_kernel_matches_the_spec_at_every_launch_setting(build, d):
    inputs = _inputs(build, d)
    expected = reference(specs.sparse_attention, inputs)[0]
    prepared = CSR.prepare(inputs)
    # num_warps means nothing to the interpreter: one setting per BLOCK_E, and 4, where most rows take several steps.
    for settings in {s["BLOCK_E"]: s for s in (*CSR.settings, dict(BLOCK_E=4, num_warps=1))}.values():
        out = CSR.run(**prepared, **settings)
        assert out.dtype == torch.float32
        worst = (out.double() - expected).abs().max().item()
        assert torch.allclose(out.double(), expected, rtol=1e-4, atol=1e-5), f"{settings}: off by up to {worst:.3g}"


def test_csr_kernel_rescales_when_the_max_arrives_late():
    """k grows with the column, so each row's max sits in its last block of neighbours."""
    keys = lambda name, shape, gen: torch.linspace(-4, 4, shape[0], dtype=torch.float64)[:, None].expand(shape)
    inputs = _inputs(lambda g: graphs.banded(60, 20, g, width=24), 32,
                     fill=lambda name, shape, gen: keys(name, shape, gen) if name == "k" else
                     0.5 + torch.rand(shape, generator=gen, dtype=torch.float64))
    out = CSR.run(**CSR.prepare(inputs), BLOCK_E=4)
    assert torch.allclose(out.double(), reference(specs.sparse_attention, inputs)[0], rtol=1e-4, atol=1e-5)


def test_csr_kernel_leaves_rows_with_no_neighbour_at_zero():
    inputs = _inputs(lambda g: graphs.with_isolated(graphs.molecules(1, g), 9), 16)
    out = CSR.run(**CSR.prepare(inputs))
    assert torch.equal(out[-9:], torch.zeros(9, 16))


@pytest.mark.parametrize("build, d", GRAPHS[:3])
def test_unfused_pytorch_matches_the_spec(build, d):
    inputs = _inputs(build, d)
    unfused = bench_settings.unfused_attention(**bench_settings.bsb_edges_kept(inputs))
    expected = reference(specs.sparse_attention, inputs)[0]
    assert unfused.dtype == torch.float32
    assert torch.allclose(unfused.double(), expected, rtol=1e-2, atol=1e-2)  # float16 products


def test_flex_attention_mask_reads_the_adjacency_the_right_way_round():
    """The block mask from the BSB, run through FlexAttention's eager path (the GPU runs it compiled)."""
    from torch.nn.attention.flex_attention import flex_attention

    from grader.bench import baselines

    inputs = _inputs(lambda g: graphs.with_isolated(graphs.power_law(150, 600, g), 7), 16)
    prepared = baselines.flex_from_bsb({k: v.float() if v.is_floating_point() else v for k, v in inputs.items()})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "flex_attention called without torch.compile"
        out = flex_attention(prepared["q"], prepared["k"], prepared["v"], block_mask=prepared["block_mask"])[0, 0]
    assert torch.allclose(out.double(), reference(specs.sparse_attention, inputs)[0], rtol=1e-4, atol=1e-5)
    assert baselines.flex_blocks_note(prepared) == "100.0% of 128x128 blocks computed"  # 157 nodes: 2 x 2 blocks


def test_flex_attention_is_not_run_where_n_squared_passes_int32():
    """At N=65536 FlexAttention's indices overflow: wrong results, or an illegal access that ends the bench run."""
    from grader.bench import baselines

    big = {name: torch.zeros(46341, 16, dtype=torch.float16) for name in "qkv"}  # 46341^2 > 2^31
    with pytest.raises(ValueError, match="not run: N\\^2 = 2,147,488,281 is past int32"):
        baselines.flex_from_bsb(big)


def test_a_bench_result_is_correct_where_the_grader_would_pass_it():
    """GraderCheck: the puzzle's own tolerance against the spec in float64. A softmax backward's dx cancels (the row
    sums to 0), so a flat share of the largest |value| called PyTorch's own backward wrong at 4096 x 32768."""
    puzzle = registry.find(14)
    gen = torch.Generator().manual_seed(0)
    y = torch.softmax(torch.randn(8, 4096, generator=gen), dim=1)
    dy = torch.randn(8, 4096, generator=gen)
    check = measure.GraderCheck(puzzle, {"y": y, "dy": dy})
    eager = torch.func.vjp(lambda x: torch.softmax(x, dim=1), torch.log(y))[1](dy)[0]  # PyTorch's own, float32
    assert check.accepts(eager) and check.accepts(puzzle.spec(y=y, dy=dy))
    assert not check.accepts(eager * 1.01) and not check.accepts(torch.full_like(eager, torch.nan))
    assert not check.accepts(eager[:, :-1]) and not check.accepts((eager, eager))


# -- Markdown -----------------------------------------------------------------------------------------------

HEADER = dict(device="GPU", torch="2", triton="3", numpy="2", python="3.12", date="today", copy_bps=4e12,
              copy_gbps=4000.0, exp2_rate=2e12, matmul_flops=800e12)


def _row(puzzle, size, impl, us, note="", correct=True, **extra):
    return dict(puzzle=puzzle, size=size, impl=impl, us=us, note=note, correct=correct,
                gbps=1e3 if us else None, floor_us=10.0, compulsory_us=5.0, **extra)


def _table(text: str, number: int) -> list[list[str]]:
    """The cells of puzzle `number`'s table, header row first."""
    block = text.split(f"### Puzzle {number}\n\n")[1].split("\n\n")[0]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in block.splitlines() if line]


def test_markdown_shows_tflops_and_the_share_of_the_matmul_rate():
    rows = [_row(11, "M=64", "triton (ours)", 100.0, "BM=128", tflops=400.0, flop_floor_us=50.0),
            _row(11, "M=64", "eager PyTorch (spec)", 400.0, tflops=100.0, flop_floor_us=50.0),
            _row(11, "M=64", "torch.matmul (float16)", 80.0, correct=False, tflops=500.0, flop_floor_us=50.0),
            _row(11, "M=64", "torch.compile (spec)", None, "failed: RuntimeError", tflops=None, flop_floor_us=50.0)]
    text = tables.markdown(rows, HEADER)
    assert "float16 matmul rate (torch.matmul, 8192^3): 800 TFLOP/s" in text
    table = _table(text, 11)
    assert "TFLOP/s" in table[0] and "of matmul rate" in table[0]
    assert all(len(line) == len(table[0]) for line in table), table
    ours = dict(zip(table[0], table[2]))
    assert ours["TFLOP/s"] == "400" and ours["of matmul rate"] == "50%" and ours["vs eager"] == "4.00x"
    assert "WRONG RESULT" in table[4][-1] and table[5][-1] == "failed: RuntimeError"


def test_markdown_of_a_sparse_row_gives_the_fill_note_once_per_size():
    size = "random (D=64, N=16384, E=524288)"
    rows = [_row(13, size, "triton (ours)", 40.0, size_note="fill 6.3%, 32.1 TCBs/window"),
            _row(13, size, "eager PyTorch (spec)", 2000.0, size_note="fill 6.3%, 32.1 TCBs/window"),
            _row(13, size, "FlexAttention (dense adjacency mask_mod)", 300.0, "100.0% of 128x128 blocks computed",
                 correct=False, size_note="fill 6.3%, 32.1 TCBs/window")]
    text = tables.markdown(rows, {k: v for k, v in HEADER.items() if k != "matmul_flops"})
    table = _table(text, 13)
    assert "GB/s" in table[0] and "of copy BW" in table[0] and "TFLOP/s" not in table[0]
    assert all(len(line) == len(table[0]) for line in table), table
    assert table[2][0] == f"{size}; fill 6.3%, 32.1 TCBs/window" and table[3][0] == table[4][0] == size
    assert table[4][-1] == "100.0% of 128x128 blocks computed WRONG RESULT"
    assert "matmul rate" not in text


def test_peers_table_compares_the_solution_with_its_fastest_correct_peer():
    """Faster rows that are not peers stand beside the real one: our variant, a peer's CUDA-graph replay where ours
    was not replayed, a wrong result; a failed peer has no time. A size where ours failed still gets its row."""
    rows = [_row(9, "small", "triton (ours)", 8.0, "BLOCK_E=8"),
            _row(9, "small", "triton (coo_scan)", 2.0),
            _row(9, "small", "eager PyTorch (spec)", 180.0),
            _row(9, "small", "eager PyTorch (spec), CUDA graph", 1.0),
            _row(9, "small", "PyG scatter (slots kept)", 4.0, correct=False),
            _row(9, "small", "torch.compile (spec)", None, "failed: RuntimeError"),
            _row(9, "small", "vectorised index_add_ (slots kept)", 26.0),
            _row(9, "large", "triton (ours)", None, "failed: OutOfResources"),
            _row(9, "large", "eager PyTorch (spec)", 300.0),
            _row(13, "random", "triton (ours)", 40.0),
            _row(13, "random", "eager PyTorch (spec)", 900.0),
            _row(13, "random", "Triton CSR, CUDA cores (one program per row)", 25.0)]
    table = [[cell.strip() for cell in line.strip("|").split("|")] for line in tables.peers_table(rows).splitlines()]
    assert table[0] == ["puzzle", "size", "solution µs", "best peer", "peer µs", "peer / ours", "ours of floor"]
    assert table[2:] == [["9", "small", "8.0", "vectorised index_add_ (slots kept)", "26.0", "3.25x", "125%"],
                         ["9", "large", "—", "eager PyTorch (spec)", "300.0", "—", "—"],
                         ["13", "random", "40.0", "Triton CSR, CUDA cores (one program per row)", "25.0", "0.62x",
                          "25%"]]
    text = tables.markdown(rows, HEADER)
    assert text.index("### Peers\n\n| puzzle |") < text.index("### Puzzle 9")


def test_peers_table_compares_replays_where_ours_and_a_peer_were_both_replayed():
    """Kernels as short as a launch: the launch medians are the host's; the CUDA-graph replays are the GPU's."""
    replayed = [_row(13, "banded", "triton (ours)", 22.8), _row(13, "banded", "triton (ours), CUDA graph", 6.3),
                _row(13, "banded", "triton (pairs), CUDA graph", 1.0),
                _row(13, "banded", "CSR", 20.9), _row(13, "banded", "CSR, CUDA graph", 15.2),
                _row(13, "banded", "unfused, CUDA graph", 2.0, correct=False)]
    assert "| 13 | banded | 6.3 (CUDA graph) | CSR, CUDA graph | 15.2 | 2.41x |" in tables.peers_table(replayed)
    no_peer_replayed = [r for r in replayed if r["impl"] != "CSR, CUDA graph"]
    assert "| 13 | banded | 22.8 | CSR | 20.9 | 0.92x |" in tables.peers_table(no_peer_replayed)


def test_peers_table_marks_a_wrong_solution():
    rows = [_row(4, "N0=4", "triton (ours)", 5.0, correct=False), _row(4, "N0=4", "eager PyTorch (spec)", 10.0)]
    assert "| 4 | N0=4 | 5.0 WRONG RESULT | eager PyTorch (spec) | 10.0 | 2.00x | 200% |" in tables.peers_table(rows)


def test_recorded_peers_shows_the_chosen_puzzles_under_where_they_were_measured(tmp_path):
    rows = [_row(4, "N0=4", "triton (ours)", 5.0), _row(4, "N0=4", "eager PyTorch (spec)", 10.0),
            _row(12, "N=64", "triton (ours)", 20.0), _row(12, "N=64", "eager PyTorch (spec)", 70.0)]
    path = tmp_path / "peers.json"
    path.write_text(json.dumps({"header": HEADER, "rows": rows}))
    text = tables.recorded_peers([12], path)
    assert "| 12 | N=64 | 20.0 | eager PyTorch (spec) | 70.0 | 3.50x | 50% |" in text and "N0=4" not in text
    assert "Of floor above 100%" not in text
    text = tables.recorded_peers([4], path)
    assert text.splitlines()[0].startswith(f"Recorded on {HEADER['device']}, {HEADER['date']} (torch")
    assert "| 4 | N0=4 | 5.0 | eager PyTorch (spec) | 10.0 | 2.00x |" in text and "N=64" not in text
    assert "Of floor above 100%: faster than the floor's model" in text  # puzzle 4's row: 200% of the floor
    assert tables.recorded_peers([7], path) == "peers.json holds no results for puzzle(s) 7"
    path.write_text("{not json")
    assert tables.recorded_peers([4], path) == "no recorded results to show (peers.json: JSONDecodeError)"
    assert "FileNotFoundError" in tables.recorded_peers([4], tmp_path / "absent.json")


@pytest.mark.parametrize("damage", [
    lambda r: r.pop("us"), lambda r: r.pop("impl"), lambda r: r.update(us="fast"), lambda r: r.update(us=0),
    lambda r: r.update(floor_us=None), lambda r: r.update(size=["a"]), lambda r: r.update(impl=None),
], ids=["no us", "no impl", "us text", "us 0", "floor null", "size list", "impl null"])
def test_recorded_peers_of_a_damaged_file_say_so(tmp_path, damage):
    rows = [_row(4, "N0=4", "triton (ours)", 5.0), _row(4, "N0=4", "eager PyTorch (spec)", 10.0)]
    damage(rows[0])
    path = tmp_path / "peers.json"
    path.write_text(json.dumps({"header": HEADER, "rows": rows}))
    assert tables.recorded_peers([4], path).startswith("no recorded results to show (peers.json: ")
    path.write_text(json.dumps({"header": {}, "rows": rows[1:]}))
    assert tables.recorded_peers([4], path) == "no recorded results to show (peers.json: KeyError)"


def test_the_recorded_peers_time_the_solution_as_a_user_calls_it():
    """The peers table's solution column is the launcher with no block-size arguments; the file says so, and each
    of our rows says what the launcher chose. A best-swept setting, where there is one, is its own row."""
    header, rows = tables.recorded_rows()
    assert header.get("ours") == tables.OURS_AT
    ours = [r for r in rows if r["impl"] == timing.OURS]
    assert ours and all(r["note"].startswith("defaults: ") and "[" in r["note"] for r in ours), \
        [r["note"] for r in ours if not r["note"].startswith("defaults: ")]
    ours_rows = (timing.OURS, timing.OURS + timing.CUDA_GRAPH, timing.SWEPT, timing.LESSON)
    assert all(r["impl"] in ours_rows or not r["impl"].startswith("triton (ours") for r in rows), \
        {r["impl"] for r in rows if r["impl"].startswith("triton (ours")}
    assert all(header.get(key) for key in ("device", "date", "torch", "triton", "numpy", "python", "command"))


def test_the_recorded_peers_cover_every_puzzle_and_every_bench_size():
    """docs/bench/peers.json is what the notebooks and `bench --recorded` show: one run per puzzle, no wrong result."""
    recorded = json.loads((ROOT / tables.RECORDED).read_text())
    for puzzle in registry.PUZZLES:
        ours = [r for r in recorded["rows"] if r["puzzle"] == puzzle.number and r["impl"] == timing.OURS]
        sizes = bench_settings.BENCHES[puzzle.slug].sizes
        assert len(ours) == len(sizes), puzzle.number
        assert all(r["correct"] and r["us"] for r in ours), puzzle.number
    table = tables.recorded_peers([p.number for p in registry.PUZZLES])
    rows = sum(len(b.sizes) for b in bench_settings.BENCHES.values())
    assert "WRONG" not in table and table.count("\n| ") == 1 + rows  # the header and one line per size


def test_the_table_in_the_benchmarks_page_is_the_recorded_one():
    """docs/benchmarks.md opens with `bench --recorded`'s table; after a new record:
    python -m grader bench --recorded --markdown docs/benchmarks.md --plot docs/benchmarks.png"""
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    shown = page.split(tables.TABLE_BEGIN + "\n")[1].split("\n" + tables.TABLE_END)[0]
    assert shown == tables.recorded_peers(), "python -m grader bench --recorded --markdown docs/benchmarks.md"


def test_the_benchmarks_figure_draws_the_recorded_numbers():
    """docs/benchmarks.png holds, in a PNG text chunk, the numbers it drew: they must be the recorded file's. After
    a new record: python -m grader bench --recorded --plot docs/benchmarks.png (needs matplotlib)"""
    drawn = plots.plotted_data(ROOT / "docs" / "benchmarks.png")
    assert drawn == plots.speedup_data(tables.recorded_rows()[1]), "python -m grader bench --recorded --plot FILE.png"


def test_the_speedup_figure_stores_what_it_drew(tmp_path):
    pytest.importorskip("matplotlib")
    rows = [_row(4, "N0=4, T=8", "triton (ours)", 5.0), _row(4, "N0=4, T=8", "eager PyTorch (spec)", 10.0),
            _row(4, "N0=4, T=8", "triton (ours), swept", 1.0),
            *[_row(13, f"random (D=64, {n})", impl, us) for n in ("N=16384", "N=65536")
              for impl, us in (("triton (ours)", 40.0), ("CSR", 30.0))]]
    drawn = plots.plot_speedups(rows, str(tmp_path / "speedups.png"))
    assert drawn == plots.plotted_data(tmp_path / "speedups.png") == plots.speedup_data(rows)
    assert [(d["puzzle"], d["peer"], d["peer_us"] / d["ours_us"]) for d in drawn] == [
        (4, "eager PyTorch (spec)", 2.0), (13, "CSR", 0.75), (13, "CSR", 0.75)]
    assert plots._short_sizes(["random (D=64, N=16384)", "random (D=64, N=65536)", "banded (D=64, N=16384)"]) == [
        "random, N=16384", "random, N=65536", "banded"]


def test_the_table_goes_between_its_markers(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(f"# Title\n\n{tables.TABLE_BEGIN}\nold table\n{tables.TABLE_END}\n\nProse.\n")
    tables.write_table(str(page), "| new |")
    assert page.read_text() == f"# Title\n\n{tables.TABLE_BEGIN}\n| new |\n{tables.TABLE_END}\n\nProse.\n"
    (tmp_path / "bare.md").write_text("no markers\n")
    with pytest.raises(ValueError, match="no <!-- peers table: begin -->"):
        tables.write_table(str(tmp_path / "bare.md"), "| new |")


def test_peers_table_shows_the_best_swept_setting_beside_the_defaults():
    rows = [_row(4, "N0=4", "triton (ours)", 5.0, "defaults: k[4](B1=16)"), _row(4, "N0=4", "eager", 10.0),
            _row(4, "N0=4", "triton (ours), swept", 6.0, "B1=16 (the defaults)"),
            _row(4, "N0=4", "triton (ours), swept", 4.0, "B1=32"),
            _row(4, "N0=4", "triton (ours), swept", 2.0, "B1=64", correct=False)]
    table = tables.peers_table(rows).splitlines()
    assert table[0].endswith("| ours of floor | best swept µs |")
    assert table[2] == "| 4 | N0=4 | 5.0 | eager | 10.0 | 2.00x | 200% | 4.0 (B1=32) |"  # the ratio is the defaults'
    assert "best swept" not in tables.peers_table(rows[:2])


# -- what a launcher launches, recorded without a GPU --------------------------------------------------------------

def _meta(*shape, dtype=torch.float32):
    return torch.empty(shape, dtype=dtype, device="meta")  # shapes only: the launches are recorded, not run


@pytest.mark.parametrize("number, args, expected", [
    (4, (_meta(4096, 32768),), "softmax_three_loop_kernel[4096](B0=1, B1=16384, num_warps=32)"),
    (5, (_meta(32768, 4096),), "softmax_online_kernel[32768](B0=1, B1=4096, num_warps=16)"),
    (3, (_meta(4096, 32768),), "row_sum_kernel[4096](B0=1, B1=1024)"),
    (11, (_meta(4096, 4096, dtype=torch.float16), _meta(4096, 4096, dtype=torch.float16)),
     "matmul_persistent_kernel[4](BM=128, BN=256, BK=64, GROUP_M=8, num_warps=8, num_stages=3)"),
    (12, (*[_meta(16384, 128, dtype=torch.float16)] * 3,),
     "attention_split_kernel[128](D=128, BQ=128, BK=128, num_warps=8, num_stages=3)"),
    (12, (*[_meta(8192, 128, dtype=torch.float16)] * 3,),
     "attention_split_kernel[128](D=128, BQ=64, BK=128, num_warps=4, num_stages=3)"),
], ids=["4 at 4096x32768", "5 at 32768x4096", "3 at 4096x32768", "11 at 4096^3", "12 at 16384, D=128",
        "12 at 8192, D=128"])
def test_the_solutions_defaults_are_the_tuned_settings(number, args, expected):
    """What each launcher picks from the problem's size, as `bench` reports it (the interpreter's 4 stand-in
    multiprocessors give puzzle 11 a grid of 4)."""
    launcher = loader.load_launcher(registry.find(number), "solutions")
    assert launches.launches_note(launches.launches_of(launcher, *args)) == expected


def test_the_lesson_form_is_timed_where_the_solution_goes_beyond_it():
    matmul = registry.find(11)
    lesson = timing.lesson_launcher(matmul, loader.load_launcher(matmul, "solutions"))
    a = _meta(4096, 4096, dtype=torch.float16)
    assert launches.launches_note(launches.launches_of(lesson, a, a)) == \
        "matmul_kernel[32x32](BM=128, BN=128, BK=64, num_warps=4, num_stages=4)"
    softmax = registry.find(5)
    assert timing.lesson_launcher(softmax, loader.load_launcher(softmax, "solutions")) is None


def test_a_swept_launch_setting_replays_the_recorded_launches_with_it(monkeypatch):
    """num_stages is no keyword of the launcher: the launches are recorded, then run again with it."""
    softmax = registry.find(5)
    launcher = loader.load_launcher(softmax, "solutions")
    x = torch.randn(3, 100)
    launched = []
    monkeypatch.setattr(timing, "median_us", lambda fn: (fn(), 1.0)[1])
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(timing, "replay", lambda launches, overrides: (launched.append(overrides),
                                                                       [launch.kernel[launch.grid](*launch.args,
                                                                                                   **launch.kwargs)
                                                                        for launch in launches])[0])
    us, failure, correct = timing._time_setting(launcher, [x], dict(B1=32, num_stages=2),
                                                measure.GraderCheck(softmax, {"x": x}))
    assert (us, failure, correct) == (1.0, "", True) and launched and all(o == {"num_stages": 2} for o in launched)
    assert timing._chosen(launcher, [x], dict(B1=32, num_stages=2)) == \
        "softmax_online_kernel[3](B0=1, B1=32, num_warps=1, num_stages=2)"


# -- bench_size without a GPU: the clock and the inputs' device replaced ----------------------------------------

@pytest.fixture
def cpu_bench(monkeypatch):
    """bench_size on CPU inputs with a fake clock (µs is the call's position, so the first setting wins) and
    torch.compile as the identity."""
    calls = iter(range(1, 10_000))
    monkeypatch.setattr(timing, "median_us", lambda fn: (fn(), float(next(calls)))[1])
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(torch, "compile", lambda fn, **options: fn)  # inductor on the CPU takes many seconds
    monkeypatch.setattr(timing, "_inputs", lambda puzzle, size: make_inputs(
        puzzle.spec, size if isinstance(size, Case) else Case("bench", size), seed=0))
    from grader.bench import baselines

    monkeypatch.setattr(baselines, "compiled_flex_attention", lambda: _eager_flex)
    return timing


def _eager_flex(q, k, v, block_mask, **options):
    from torch.nn.attention.flex_attention import flex_attention

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return flex_attention(q.float(), k.float(), v.float(), block_mask=block_mask, **options).to(q.dtype)


@pytest.mark.slow
def test_bench_size_of_puzzle_13_times_every_baseline_and_notes_the_fill(cpu_bench):
    size = Case("a molecule", dict(D=16), graph=lambda g: graphs.molecules(1, g, nodes=40))
    launcher = loader.load_launcher(SPARSE, "solutions")
    rows = cpu_bench.bench_size(SPARSE, launcher, size, 4e12, 2e12, use_compile=True)
    csr, unfused, flex = SPARSE_BENCH.baselines
    # The spec is not compiled (compile_spec=False), nor are the CSR kernel and FlexAttention (compile=False).
    # Each is also replayed from a CUDA graph (cuda_graph=True): the kernels are as short as a launch.
    graph = timing.CUDA_GRAPH
    assert [r["impl"] for r in rows] == ["triton (ours)", f"triton (ours){graph}", "eager PyTorch (spec)",
                                         f"eager PyTorch (spec){graph}", csr, f"{csr}{graph}", unfused,
                                         f"{unfused}{graph}", f"{unfused}, torch.compile", flex, f"{flex}{graph}"]
    assert all(r["correct"] for r in rows), [(r["impl"], r["note"]) for r in rows if not r["correct"]]
    assert all(r["size_note"].startswith("fill ") and "TCBs/window" in r["size_note"] for r in rows)
    by_impl = {r["impl"]: r for r in rows}
    assert by_impl["Triton CSR, CUDA cores (one program per row)"]["note"] == "BLOCK_E=16, num_warps=1"
    assert "of 128x128 blocks computed" in by_impl["FlexAttention (dense adjacency mask_mod)"]["note"]


def test_bench_size_of_puzzle_11_reports_tflops(cpu_bench):
    matmul = registry.find(11)
    settings = dataclasses.replace(bench_settings.BENCHES[matmul.slug], sweep=(dict(BM=32, BN=32, BK=16),))
    launcher = loader.load_launcher(matmul, "solutions")
    rows = cpu_bench.bench_size(matmul, launcher, dict(M=40, K=24, N=32), 4e12, 2e12, use_compile=False,
                                flop_rate=1e12, settings=settings, sweep=True,
                                lesson=cpu_bench.lesson_launcher(matmul, launcher))
    assert [r["impl"] for r in rows] == ["triton (ours)", "triton (lesson form)", "triton (ours), swept",
                                         "eager PyTorch (spec)", "torch.matmul (float16)", "torch.mm (float32 out)"]
    assert rows[0]["note"] == "defaults: matmul_persistent_kernel[1](BM=128, BN=256, BK=64, GROUP_M=8, num_warps=8, " \
                              "num_stages=3)"
    assert rows[1]["note"].startswith("defaults: matmul_kernel[1x1](BM=128, BN=128, BK=64")
    assert rows[2]["note"] == "BM=32, BN=32, BK=16" and all(r["correct"] for r in rows[:3])
    rows = [rows[0], *rows[3:]]
    assert rows[3]["us"] is not None or "mm.dtype" in rows[3]["note"]  # float32 out: a CUDA kernel only
    flops = 2 * 40 * 24 * 32
    assert rows[0]["tflops"] == pytest.approx(flops / 1e-6 / 1e12) and rows[0]["correct"] and rows[2]["correct"]
    assert rows[0]["floor_us"] == max(rows[0]["flop_floor_us"], rows[0]["compulsory_us"]) == flops / 1e12 * 1e6


def _backward_sizes():
    from grader.course.chapters import backward

    small_molecules = Case("two molecules", dict(H=3, D=8), graph=lambda g: graphs.molecules(2, g, nodes=12))
    return [pytest.param(14, Case("bench", dict(N0=3, T=300)), marks=pytest.mark.puzzle14, id="14"),
            pytest.param(15, backward.CROSS_ENTROPY_BACKWARD_CASES[0], marks=pytest.mark.puzzle15, id="15"),
            pytest.param(16, small_molecules, marks=pytest.mark.puzzle16, id="16"),
            pytest.param(17, Case("causal", dict(N=40, T=40, D=16, causal=True, scale=0.25)),
                         marks=pytest.mark.puzzle17, id="17"),
            pytest.param(18, Case("a molecule", dict(D=16), graph=lambda g: graphs.molecules(1, g, nodes=40)),
                         marks=pytest.mark.puzzle18, id="18")]


@pytest.mark.parametrize("number, size", _backward_sizes())
@pytest.mark.slow
def test_bench_size_of_a_backward_times_its_autograd_peers_not_its_spec(cpu_bench, number, size):
    """A backward's peers are autograd's backward passes, eager and compiled (here the identity), each given its
    forward's graph once; the spec, which runs the forward too, is not timed. Every result matches the spec."""
    puzzle = registry.find(number)
    settings = bench_settings.BENCHES[puzzle.slug]
    rows = cpu_bench.bench_size(puzzle, loader.load_launcher(puzzle, "solutions"), size, 4e12, 2e12,
                                use_compile=True, flop_rate=1e12)
    variants = [f"triton ({name})" for name in settings.variants]
    rows = [r for r in rows if not r["impl"].endswith(timing.CUDA_GRAPH)]  # puzzle 18 replays each from a CUDA graph
    assert [r["impl"] for r in rows] == ["triton (ours)", *variants, *settings.baselines]
    assert [r["impl"] for r in rows][len(variants) + 1].startswith("eager"), "vs eager needs an eager row"
    assert all(r["correct"] for r in rows), [r["impl"] for r in rows if not r["correct"]]


def test_the_class_ids_the_cross_entropy_bench_draws_are_targets_or_ignored():
    gen = torch.Generator().manual_seed(0)
    target = bench_settings._class_ids((10_000,), dict(N0=10_000, V=300), gen)
    ignored = target == specs.IGNORE_INDEX
    assert target.dtype == torch.int64 and 0.03 < float(ignored.double().mean()) < 0.07
    assert int(target[~ignored].min()) == 0 and int(target[~ignored].max()) == 299


def test_a_baseline_that_raises_is_reported_not_fatal(cpu_bench):
    def broken(**kwargs):
        raise RuntimeError("index out of range\nmore text")

    settings = dataclasses.replace(SPARSE_BENCH, baselines={
        "broken": bench_settings.Baseline(bench_settings.bsb_edges_kept, broken, compile=False)})
    rows = cpu_bench.bench_size(SPARSE, loader.load_launcher(SPARSE, "solutions"),
                                Case("empty", dict(D=16), graph=lambda g: graphs.empty(20)), 4e12, 2e12, False,
                                settings=settings)
    assert rows[-1]["impl"] == "broken" and rows[-1]["us"] is None
    assert rows[-1]["note"] == "failed: RuntimeError: index out of range"


def test_plot_draws_tensor_core_and_sparse_puzzles(tmp_path):
    pytest.importorskip("matplotlib")
    rows = [_row(11, "M=64, K=64, N=64", "triton (ours)", 10.0, tflops=1.0),
            _row(11, "M=64, K=64, N=64", "torch.compile (spec)", None, "failed: E", tflops=None),
            *[_row(13, f"random ({n})", impl, us, size_note="fill 6.2%") for n in ("N=16384", "N=65536")
              for impl, us in (("triton (ours)", 40.0), ("eager PyTorch (spec)", 900.0))]]
    plots.plot(rows, str(tmp_path / "bench.png"))
    assert (tmp_path / "bench.png").stat().st_size > 0


def test_run_once_runs_ours_and_each_peer_between_profiler_start_and_stop(cpu_bench, monkeypatch):
    """What `bench --once` does under ncu (--profile-from-start off): warm every implementation up, then run each
    once inside the profiled window, under an NVTX range named after it."""
    events = []
    monkeypatch.setattr(torch.cuda.profiler, "start", lambda: events.append("start"))
    monkeypatch.setattr(torch.cuda.profiler, "stop", lambda: events.append("stop"))
    monkeypatch.setattr(torch.cuda.nvtx, "range_push", events.append)
    monkeypatch.setattr(torch.cuda.nvtx, "range_pop", lambda: None)
    softmax = registry.find(4)
    ran = cpu_bench.run_once(softmax, loader.load_launcher(softmax, "solutions"), dict(N0=4, T=100), use_compile=True)
    assert ran == ["triton (ours)", "torch.compile (spec)", "torch.softmax"]
    assert events == ["start", *ran, "stop"]


def test_the_gpu_script_profiles_sizes_the_bench_has():
    """scripts/gpu_perf.sh names each ncu size by text: each must pick exactly one of its puzzle's bench sizes."""
    import re
    import subprocess

    script = ROOT / "scripts" / "gpu_perf.sh"
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    profiled = re.findall(r'grader bench (\d+) --once --sizes "([^"]+)"', script.read_text())
    assert len(profiled) == 3
    for number, text in profiled:
        labels = [timing.size_label(size) for size in bench_settings.BENCHES[registry.find(int(number)).slug].sizes]
        assert sum(text in label for label in labels) == 1, (number, text, labels)
