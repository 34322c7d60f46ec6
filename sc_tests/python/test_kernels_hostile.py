"""python3 -m tpbsim.kernels gemm against hostile inputs (docs/BAD_INPUT.md
"The GEMM generator"): every weight format across the N-group boundaries is
bit-exact and its program runs with no race (SPEC §14's race check); a
program with a missing wait is a race; the bytes the generator declares for
each instruction are the bytes the model moves; sizes are refused before
anything is allocated; --out holds only this run's files; every bad argument
is one line naming it, exit 1."""

import json
import os
import random
import resource
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import tpbsim
from conftest import WORKLOADS
from tpbsim.kernels import gemm, quant
from tpbsim.program import Builder, regions

FORMATS = list(quant.WEIGHT_FORMATS)
ARCHS = ["mariana", "maverick"]
# N across the group boundaries: a group is 4 N-tiles of 512 columns (2048).
N_EDGES = [2047, 2048, 2049, 4097, 6145]


def _env():
    """This environment, its PYTHONPATH absolute (the command runs elsewhere)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(d) for d in
                                        env.get("PYTHONPATH", "").split(os.pathsep) if d)
    return env


def _cli(cwd, *args, timeout=300, **kw):
    return subprocess.run([sys.executable, "-m", "tpbsim.kernels", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=_env(), timeout=timeout,
                          **kw)


def _start(cwd, *args):
    """The command started in the background (a Popen), for a signal mid-run."""
    return subprocess.Popen([sys.executable, "-m", "tpbsim.kernels", *map(str, args)], cwd=cwd,
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(proc, ready, step=0.05):
    """Waits (up to 240 s, the process alive) until ``ready()``."""
    deadline = time.monotonic() + 240
    while not ready() and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(step)


# A run long enough to be stopped in the middle (its program is made in a few
# seconds, its run takes longer).
LONG = ["gemm", "--m", 1024, "--k", 4096, "--n", 8192, "--weights", "mxfp4", "--timing-only"]


def _kernel(m, k, n, fmt, arch, placement="dma", **kw):
    plan = gemm.Plan(m, k, n, fmt, arch)
    return gemm.make_kernel(plan, gemm.DEFAULT_CAPACITIES, placement=placement, **kw)


# ----------------------------------------------------------------- item 1: ordering

@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_is_bit_exact_across_n_group_boundaries(fmt, arch):
    """From one tile (1 x 1) and the issue's 5 x 31 up to two M- and K-tiles: the
    run's C is the reference bit for bit and the race check finds no access
    its semaphores leave unordered."""
    shapes = [(5, 31, n) for n in N_EDGES] + [(1, 1, 2049), (130, 600, 4097)]
    for i, (m, k, n) in enumerate(shapes):
        rep = gemm.run(m, k, n, fmt, "bf16", arch, seed=i, traces=False, log=None)
        where = (m, k, n, fmt, arch)
        assert rep["status"] == "ok", where
        assert rep["check"]["bit_exact"] is True, (where, rep["check"])
        assert rep["races"]["count"] == 0, (where, rep["races"]["first"])
        assert rep["ordering"]["dependences"] > 0


def _race_free(cases, core_of):
    """Runs each (m, k, n, fmt, arch, placement) timing-only with the race check
    on the core of its arch; the count of programs run (a shape the SBUF
    placement cannot hold is refused, naming the KiB)."""
    ran = 0
    for m, k, n, fmt, arch, placement in cases:
        try:
            rep = gemm.run(m, k, n, fmt, arch=arch, placement=placement, timing_only=True,
                           traces=False, check=None, log=None, core=core_of[arch])
        except gemm.GemmError as e:
            assert placement == "sbuf" and "per SBUF partition" in str(e), e
            continue
        assert rep["status"] == "ok" and rep["races"]["count"] == 0, \
            ((m, k, n, fmt, arch, placement), rep["races"]["first"][:3])
        ran += 1
    return ran


def test_programs_of_a_grid_of_shapes_run_without_a_race():
    """Every format, arch and placement over N, M and K edges (tiles of 512
    columns, groups of 2048, M-tiles of 128, K-tiles of 512 with 32..128
    partitions): a random sample of the grid (a fixed seed), each program run
    timing-only with the race check, none unordered."""
    ns = [1, 8, 511, 512, 513, 2047, 2048, 2049, 4095, 4097, 6145, 8193]
    ms = [1, 5, 127, 128, 129, 300]
    ks = [1, 31, 128, 129, 511, 512, 513, 1100]
    grid = [(m, k, n, f, a, p) for m in ms for k in ks for n in ns for f in FORMATS
            for a in ARCHS for p in ("dma", "sbuf")]
    rng = random.Random(30)
    sample = [g for g in grid if g[0] <= 5 and g[1] <= 31] + rng.sample(grid, 150)
    with tpbsim.Core("mariana") as mariana, tpbsim.Core("maverick") as maverick:
        core_of = {"mariana": mariana, "maverick": maverick}
        assert _race_free(sample, core_of) > 150
        # C's rows far apart (N of 500000: 2 MB between the rows of a store).
        assert _race_free([(200, 40, 500000, "mxfp8", "maverick", "dma")], core_of) == 1


@pytest.mark.parametrize("fmt,arch", [("fp4", "mariana"), ("mxfp8", "maverick"),
                                      ("bf16", "mariana"), ("fp6", "maverick")])
def test_every_wait_removed_is_a_race(fmt, arch):
    """Each wait of a program (nops included) left out in turn: the race check
    names a race every time (the builder makes no wait the program could do
    without)."""
    with tpbsim.Core(arch) as core:
        rep = gemm.run(130, 600, 2600, fmt, arch=arch, timing_only=True, traces=False,
                       log=None, core=core)
        waits = rep["_kernel"].waits()
        assert len(waits) >= 10 and rep["races"]["count"] == 0
        for i in waits:
            r = gemm.run(130, 600, 2600, fmt, arch=arch, timing_only=True, traces=False,
                         log=None, core=core, drop_wait=i)
            assert r["races"]["count"] > 0, (i, rep["_kernel"].builder.instrs[i].fields)


def _footprints(monkeypatch):
    """[(queue, reads, writes)] of every instruction the builder takes from now on."""
    seen = []
    add = Builder.add

    def recording(self, queue, mnemonic, fields, reads=(), writes=(), loc=None, after=()):
        seen.append((queue, reads, writes))
        return add(self, queue, mnemonic, fields, reads, writes, loc, after)

    monkeypatch.setattr(Builder, "add", recording)
    return seen


def _region_bytes(r):
    """The bytes of a region: its partitions x its rows' bytes."""
    return (r[2] - r[1]) * (r[4] - r[3]) * r[6]


def test_the_footprints_are_the_bytes_the_model_moves(monkeypatch):
    """The bytes the generator declares each instruction reads and writes (the
    footprints the builder derives the waits from) against the model's own
    counters: per engine and DMA queue, the SBUF, PSUM and HBM bytes equal the
    bytes the run's stats count."""
    for fmt, arch in (("nf4", "mariana"), ("mxfp4", "maverick"), ("bf16", "maverick"),
                      ("fp6", "mariana"), ("mxfp8", "mariana")):
        seen = _footprints(monkeypatch)
        rep = gemm.run(130, 600, 1100, fmt, "bf16", arch, traces=False, log=None)
        monkeypatch.undo()
        eng = rep["_result"].engines
        per = {}
        for queue, reads, writes in seen:
            d = per.setdefault(queue, {})
            for write, rs in ((False, reads), (True, writes)):
                for r in rs:
                    key = ("hbm" if r[0] == regions.HBM else "core", write)
                    d[key] = d.get(key, 0) + _region_bytes(r)
        assert len(per) >= 6   # pe, dve (pool), the A, W and two C queues
        dma_sbuf = 0
        for e, d in per.items():
            # SBUF and PSUM in bytes_read / bytes_written; a DMA queue's HBM side in its
            # counters, its SBUF side moved by the DMA engines (SPEC §10).
            cnt = eng[e].get("counters") or {}
            got = {("hbm", False): cnt.get("hbm_read_bytes", 0),
                   ("hbm", True): cnt.get("hbm_write_bytes", 0)}
            if e.startswith("dma"):
                dma_sbuf += d.get(("core", False), 0) + d.get(("core", True), 0)
            else:
                got.update({("core", False): eng[e]["bytes_read"],
                            ("core", True): eng[e]["bytes_written"]})
            for key, n in got.items():
                assert d.get(key, 0) == n, (fmt, arch, e, key, d.get(key, 0), n)
        # Every DMA byte crosses the SBUF once (HBM <-> SBUF): the engines' bytes.
        moved = sum(v["bytes_read"] for k, v in eng.items() if k.startswith("dma_engine"))
        assert dma_sbuf == moved, (fmt, arch, dma_sbuf, moved)


def test_an_emitted_workload_of_a_group_boundary_runs_right_in_tpbsim_run(tmp_path):
    """--emit-only of the issue's shape: tpbsim run of its cmd.txt dumps expected.npy."""
    tpbsim_bin = os.environ.get("TPBSIM_BIN")
    if not tpbsim_bin:
        pytest.skip("TPBSIM_BIN (the tpbsim binary) is not set")
    for fmt in ("nf4", "bf16"):
        wl = tmp_path / fmt
        p = _cli(tmp_path, "gemm", "--m", 5, "--k", 31, "--n", 4097, "--weights", fmt,
                 "--emit-only", "--out", wl)
        assert p.returncode == 0, p.stderr
        args = [a for x in (wl / "cmd.txt").read_text().split("\n")
                if x and not x.startswith("#") for a in x.split()]
        r = subprocess.run([tpbsim_bin, "run", *args], cwd=wl, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        got, want = np.load(wl / "out.npy"), np.load(wl / "expected.npy")
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


# ----------------------------------------------------------------- item 2: sizes

def test_sizes_match_the_layouts_they_stand_for():
    """The closed-form sizes check_sizes judges are the layouts' and the program's."""
    for m, k, n, fmt, arch in [(5, 31, 4097, "nf4", "mariana"), (130, 600, 2600, "fp6", "maverick"),
                               (300, 1100, 513, "mxfp4", "mariana"), (1, 1, 1, "bf16", "maverick"),
                               (129, 2048, 6145, "int4", "mariana"),
                               # narrow last panels; one store of C; a split last chunk
                               (300, 1100, 2600, "mxfp8", "mariana"),
                               (1, 4096, 4096, "mxfp4", "mariana")]:
        kern = _kernel(m, k, n, fmt, arch)
        p = kern.plan
        assert p.hbm_bytes() == kern.hbm.top, (m, k, n, fmt)
        assert p.sbuf_bytes("dma") == kern.lay.top, (m, k, n, fmt)
        assert p.instructions("dma") == kern.instructions(), (m, k, n, fmt)
        try:
            ks = _kernel(m, k, n, fmt, arch, "sbuf")
        except gemm.GemmError:
            continue
        assert ks.plan.sbuf_bytes("sbuf") == ks.lay.top
        assert ks.plan.instructions("sbuf") == ks.instructions()


@pytest.mark.parametrize("args,msg", [
    (["--m", 1, "--k", 32, "--n", 10**10, "--weights", "mxfp4"], "GiB (", ),
    (["--m", 1, "--k", 32, "--n", 10**10, "--weights", "nf4", "--timing-only"], "of HBM"),
    (["--m", 10**12, "--k", 10**12, "--n", 10**12, "--weights", "bf16"], "per SBUF partition"),
    (["--m", 2**40, "--k", 128, "--n", 8, "--weights", "fp6"], "of HBM"),
])
def test_huge_sizes_are_refused_at_once(tmp_path, args, msg):
    t0 = time.monotonic()
    p = _cli(tmp_path, "gemm", *args, "--out", tmp_path / "o", timeout=60)
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert msg in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert time.monotonic() - t0 < 30
    assert not (tmp_path / "o").exists()


def test_the_instruction_count_is_refused_before_the_program_is_made():
    """A 1 TiB HBM holds C of 256000 x 1024000, a program of millions of matmuls."""
    p = gemm.Plan(256000, 128, 1024000, "mxfp4", "mariana")
    caps = gemm.Capacities(256 * 1024, 16 * 1024, 2**40)
    t0 = time.monotonic()
    with pytest.raises(gemm.GemmError, match=r"program of \d+ instructions, more than"):
        gemm.check_sizes(p, caps, values=False)
    assert time.monotonic() - t0 < 5
    assert "nt" not in p.__dict__          # no tile list was made


def test_host_memory_is_checked_under_a_memory_limit(tmp_path):
    """Under ulimit -v of 7 GiB, with a profile of 2 GiB of HBM (the core reserves
    its HBM's address space), an 8192 x 8192 x 16384 GEMM's values (about 7 GB
    on the host) are refused at once naming the GiB, exit 1, where they used to
    grow until a MemoryError traceback."""
    limit = 7 << 30

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    (tmp_path / "hbm.json").write_text(json.dumps({"hbm": {"bytes": 2 << 30}}))
    args = ["gemm", "--m", 8192, "--k", 8192, "--n", 16384, "--weights", "mxfp4", "--out",
            tmp_path / "o", "--no-traces", "--timing", tmp_path / "hbm.json"]
    t0 = time.monotonic()
    p = _cli(tmp_path, *args, preexec_fn=cap, timeout=120)
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert "of host memory" in p.stderr and "GiB" in p.stderr and "Traceback" not in p.stderr
    assert time.monotonic() - t0 < 60
    assert not (tmp_path / "o").exists()
    sizes = gemm.Plan(8192, 8192, 16384, "mxfp4", "mariana")
    assert gemm.host_bytes(sizes, "dma") > limit - (2 << 30)


# ----------------------------------------------------------------- item 3: --out

OURS = set(gemm.OUTPUT_FILES)


def test_a_timing_only_run_removes_an_earlier_runs_values(tmp_path):
    out = tmp_path / "o"
    p = _cli(tmp_path, "gemm", "--m", 64, "--k", 256, "--n", 256, "--weights", "mxfp8", "--out",
             out)
    assert p.returncode == 0, p.stderr
    assert {"out.npy", "a_used.npy", "w_used.npy"} <= set(os.listdir(out))
    (out / "mine.txt").write_text("the user's")
    p = _cli(tmp_path, "gemm", "--m", 64, "--k", 256, "--n", 256, "--weights", "mxfp8", "--out",
             out, "--timing-only", "--no-traces")
    assert p.returncode == 0, p.stderr
    # Beside the run's files, the manifest of what it wrote (.gemm-files).
    left = {x for x in os.listdir(out) if x != ".gemm-files"}
    assert left == {"report.json", "program.tpb", "mine.txt"}, left
    rep = json.loads((out / "report.json").read_text())
    assert set(rep["files"]) == left - {"mine.txt"}
    assert "replaced an earlier run's" in p.stdout and "a_used.npy" in p.stdout
    assert "not written by this run: mine.txt" in p.stdout
    assert (out / "mine.txt").read_text() == "the user's"


def test_an_emit_only_run_leaves_no_earlier_report(tmp_path):
    out = tmp_path / "o"
    assert _cli(tmp_path, "gemm", "--m", 8, "--k", 64, "--n", 64, "--weights", "int4", "--out",
                out).returncode == 0
    p = _cli(tmp_path, "gemm", "--m", 8, "--k", 64, "--n", 64, "--weights", "int4", "--out",
             out, "--emit-only", "--timing-only")
    assert p.returncode == 0, p.stderr
    assert set(os.listdir(out)) == {"program.tpb", "cmd.txt", ".gemm-files"}


def test_ctrl_c_leaves_only_this_runs_files_and_says_so(tmp_path):
    out = tmp_path / "o"
    assert _cli(tmp_path, "gemm", "--m", 8, "--k", 64, "--n", 64, "--weights", "mxfp4",
                "--out", out).returncode == 0
    proc = _start(tmp_path, *LONG, "--out", out)
    # This run's program.tpb: written after the earlier run's files were removed.
    _wait_for(proc, lambda: not (out / "report.json").exists() and (out / "program.tpb").exists())
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "this run's program.tpb" in err and "Traceback" not in err
    left = set(os.listdir(out))
    assert "report.json" not in left and "out.npy" not in left, left
    assert left <= OURS, left


# ----------------------------------------------------------------- item 4: arguments

def _npz(tmp_path):
    np.savez(tmp_path / "x.npz", a=np.ones((4, 4), np.float32))
    return "x.npz"


BASE = ["--m", 8, "--k", 64, "--n", 8, "--weights", "bf16"]
BAD_ARGS = [
    (["--seed", -1], "--seed"), (["--seed", "x"], "--seed"), (["--seed", ""], "--seed"),
    (["--seed", 2**64], "--seed"),
    (["--a", "x.npz"], "--a x.npz: a .npz archive"), (["--w", "x.npz"], "--w x.npz"),
    (["--a", ""], "--a ''"), (["--w", ""], "--w ''"), (["--a", "."], "--a .: is a directory"),
    (["--out", ""], "--out ''"), (["--out", "file.txt"], "--out file.txt: is a file"),
    (["--timing", ""], "--timing ''"), (["--timing", "."], "--timing .: is a directory"),
    (["--timing", "nope.json"], "no such file"),
    (["--threads", ""], "--threads"), (["--threads", 0], "--threads"),
    (["--threads", 1025], "--threads"), (["--threads", "x"], "--threads"),
    (["--threads", -2], "--threads"),
    (["--m", ""], "--m"), (["--m", -1], "--m"), (["--m", 0], "--m"), (["--m", "1.5"], "--m"),
    (["--k", "x"], "--k"), (["--n", ""], "--n"), (["--n", 0], "--n"),
    (["--weights", ""], "--weights ''"), (["--weights", "x"], "--weights 'x'"),
    (["--act", ""], "--act ''"), (["--act", "fp32"], "--act 'fp32'"),
    (["--arch", ""], "--arch ''"), (["--arch", "x"], "--arch 'x'"),
    (["--arch", "cayman"], "--arch cayman"),
    (["--placement", ""], "--placement"), (["--placement", "psum"], "--placement"),
]


@pytest.mark.parametrize("extra,msg", BAD_ARGS)
def test_every_bad_argument_is_one_line_naming_it(tmp_path, extra, msg):
    _npz(tmp_path)
    (tmp_path / "file.txt").write_text("x")
    args = list(BASE)
    for k, v in zip(extra[::2], extra[1::2]):
        if k in args:
            args[args.index(k) + 1] = v
        else:
            args += [k, v]
    p = _cli(tmp_path, "gemm", *args)
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert msg in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not p.stdout


def test_the_python_entry_point_checks_its_arguments_too():
    good = dict(m=8, k=64, n=8, weights="bf16", act="bf16", arch="mariana", traces=False,
                log=None, timing_only=True)
    bad = [dict(m=True), dict(m=8.0), dict(m="8"), dict(weights=3), dict(arch=None),
           dict(act=None), dict(seed=-1), dict(seed=1.5), dict(threads=0), dict(threads="2"),
           dict(out=""), dict(out=5), dict(timing=""), dict(timing=3), dict(placement=None),
           dict(a="x"), dict(a=np.ones((2, 2, 2), np.float32)), dict(a=np.ones((8, 64), int)),
           dict(lookahead=-1)]
    for b in bad:
        with pytest.raises(gemm.GemmError):
            gemm.run(**{**good, **b})
    rep = gemm.run(**{**good, "threads": np.int64(2), "seed": np.uint64(3)})
    assert rep["status"] == "ok"


def test_operands_from_other_array_types():
    """A torch tensor (or a list) is read through NumPy; a non-finite value is
    named with its place, from any array type."""
    w = [[0.5] * 8 for _ in range(64)]
    rep = gemm.run(8, 64, 8, "mxfp8", w=w, traces=False, log=None)
    assert rep["check"]["bit_exact"] is True

    class Tensorish:
        """What a torch tensor offers NumPy (__array__), and an indexing that
        takes no NumPy integers (where the error path used to fail)."""

        def __init__(self, a):
            self.a = a

        def __array__(self, dtype=None):
            return self.a if dtype is None else self.a.astype(dtype)

        def __getitem__(self, i):
            raise IndexError("only tensors of the same kind index this")

    a = np.ones((8, 64), np.float32)
    a[3, 5] = np.inf
    with pytest.raises(gemm.GemmError, match=r"^a holds inf at \(3, 5\)"):
        gemm.run(8, 64, 8, "mxfp8", a=Tensorish(a), traces=False, log=None)
    a[3, 5] = 2.0
    rep = gemm.run(8, 64, 8, "mxfp8", a=Tensorish(a), traces=False, log=None)
    assert rep["check"]["bit_exact"] is True


def test_operands_from_a_torch_tensor():
    torch = pytest.importorskip("torch")
    a = torch.ones((8, 64), dtype=torch.float32)
    rep = gemm.run(8, 64, 8, "mxfp8", a=a, traces=False, log=None)
    assert rep["check"]["bit_exact"] is True
    a[3, 5] = float("nan")
    with pytest.raises(gemm.GemmError, match=r"^a holds nan at \(3, 5\)"):
        gemm.run(8, 64, 8, "mxfp8", a=a, traces=False, log=None)
    with pytest.raises(gemm.GemmError, match="float32"):
        gemm.run(8, 64, 8, "mxfp8", a=torch.ones((8, 64), dtype=torch.int32), traces=False,
                 log=None)


# ----------------------------------------------------------------- item 5: messages

def test_core_failures_say_what_failed(make_core):
    # Issue 32: a Core open in the process no longer keeps the generator from
    # making its own (each is a core of its own).
    core = make_core("mariana")
    gemm.run(8, 64, 8, "bf16", traces=False, log=None)
    core.close()
    with pytest.raises(gemm.GemmError, match=r"^timing overrides: "):
        gemm.run(8, 64, 8, "bf16", timing={"clocks_mhz.pe": "fast"}, traces=False, log=None)


def test_small_capacities_are_named_in_bytes_and_refused_before_the_run():
    with pytest.raises(gemm.GemmError, match=r"needs 456\.00 KiB \(466944 bytes\) of HBM .*, "
                                             r"the core has 64\.00 KiB \(65536 bytes\)"):
        gemm.run(64, 512, 512, "mxfp8", timing={"hbm.bytes": 65536}, traces=False, log=None)
    with pytest.raises(gemm.GemmError, match=r"16\.00 KiB \(16384 bytes\) of PSUM per partition.*"
                                             r"the core has 4\.00 KiB \(4096 bytes\)"):
        gemm.run(64, 512, 4096, "mxfp8", timing={"psum_bytes_per_partition": 4096},
                 traces=False, log=None)
    # One group of 512 columns fits in 4 KiB of PSUM (2 KiB + the other half's 2 KiB: no,
    # one half of 2 KiB when there is one group and one M-tile).
    rep = gemm.run(64, 512, 512, "mxfp8", timing={"psum_bytes_per_partition": 4096},
                   traces=False, log=None)
    assert rep["check"]["bit_exact"] is True


def test_huge_weights_print_no_numpy_warning(tmp_path):
    w = np.full((64, 16), 1e38, np.float32)
    w[::2] = -3e38
    np.save(tmp_path / "w.npy", w)
    np.save(tmp_path / "a.npy", np.full((8, 64), 1.5, np.float32))
    for fmt in FORMATS:
        p = _cli(tmp_path, "gemm", "--a", "a.npy", "--w", "w.npy", "--weights", fmt, "--out",
                 tmp_path / fmt, "--no-traces")
        assert "Warning" not in p.stderr, (fmt, p.stderr)
        assert p.returncode == 0, (fmt, p.stdout, p.stderr)
        assert "bit for bit" in p.stdout


def test_a_fault_is_reported_as_a_fault_not_a_check(tmp_path, monkeypatch):
    """A run that faults says so (status, message) and checks nothing."""
    orig = gemm.Kernel.program

    def broken(self, drop_wait=None):   # a QuantizeMX of 100 channels: invalid, a fault
        return orig(self, drop_wait).replace("quantize_mx channels=128", "quantize_mx channels=100",
                                             1)

    monkeypatch.setattr(gemm.Kernel, "program", broken)
    rep = gemm.run(128, 512, 512, "mxfp8", traces=False, log=None, out=tmp_path / "o")
    assert rep["status"] == "fault" and rep["message"]
    assert rep["check"]["bit_exact"] is None and "fault" in rep["check"]["reason"]
    assert "out.npy" not in os.listdir(tmp_path / "o")


# ----------------------------------------------------------------- random arguments

def test_random_argument_lists_exit_0_1_or_2_and_never_a_traceback(tmp_path, capsys):
    """A fuzz of the command's arguments (fixed seed): each option absent, right,
    empty, negative, huge, of the wrong type or garbage, in random combinations;
    every outcome is an exit status of the command's (a one-line message for 1),
    never another exception."""
    from tpbsim.kernels.__main__ import main
    np.save(tmp_path / "a.npy", np.ones((4, 40), np.float32))
    np.save(tmp_path / "bad.npy", np.ones((4, 40), np.int16))
    np.savez(tmp_path / "z.npz", a=np.ones(3))
    (tmp_path / "t.json").write_text(json.dumps({"clocks_mhz": {"pe": 1000}}))
    (tmp_path / "junk.json").write_text("{not json")
    junk = ["", "-1", "0", "x", "1e3", "2**64", str(2**70), "-", "--", " ", "\t", "nan", "1.5",
            "\u00e9", "0x10"]
    values = {
        "--m": ["1", "4", "129"], "--k": ["1", "40", "513"], "--n": ["1", "8", "2049"],
        "--weights": FORMATS, "--act": ["bf16"], "--arch": ARCHS,
        "--a": ["a.npy", "a.npy", "bad.npy", "z.npz", "missing.npy", "."],
        "--w": ["missing.npy", "z.npz"], "--out": ["o1", "o2/deeper", "o1", "a.npy"],
        "--timing": ["t.json", "t.json", "junk.json", "missing.json", "."],
        "--placement": ["dma", "sbuf"], "--threads": ["1", "2", "1024"],
        "--seed": ["0", "7", str(2**64 - 1)],
    }
    flags = ["--timing-only", "--emit-only", "--no-traces"]
    rng = random.Random(3030)
    outcomes = {}
    rare = {"--a": 0.85, "--w": 0.9, "--timing": 0.85, "--m": 0.1, "--k": 0.1,
            "--n": 0.1}                     # how often an option is absent
    for _ in range(200):
        argv = ["gemm"]
        for opt, good in values.items():
            if rng.random() < rare.get(opt, 0.4):
                continue
            argv += [opt, rng.choice(good) if rng.random() < 0.88 else rng.choice(junk)]
        if "--weights" not in argv and rng.random() < 0.9:
            argv += ["--weights", rng.choice(FORMATS)]
        argv += [f for f in flags if rng.random() < 0.5]
        if "--timing-only" not in argv:      # keep runs short: values only for tiny shapes
            argv += ["--timing-only"] if rng.random() < 0.7 else []
        old = os.getcwd()
        os.chdir(tmp_path)
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code
        finally:
            os.chdir(old)
        out = capsys.readouterr()
        if isinstance(code, str):        # sys.exit(message): exit 1 with one line
            assert "\n" not in code.strip() and code.startswith(("gemm: error: ",
                                                                  "python3 -m tpbsim.kernels")), \
                (argv, code)
            code = 1
        assert code in (0, 1, 2), (argv, code, out.err)
        assert "Traceback" not in out.err, (argv, out.err)
        outcomes[code] = outcomes.get(code, 0) + 1
    assert outcomes.get(0, 0) >= 10 and outcomes.get(1, 0) >= 50, outcomes


# ----------------------------------------------------------------- issue 40: --out, --cores

SMALL = ["--m", 64, "--k", 256, "--n", 1024, "--weights", "mxfp8"]


def _listing(out):
    """--out's entries but the manifest of what the last run wrote."""
    return {x for x in os.listdir(out) if x != ".gemm-files"}


def _snapshot(out):
    return {x: (out / x).read_bytes() for x in os.listdir(out) if (out / x).is_file()}


def test_a_run_over_cores_and_an_emit_leave_no_earlier_runs_file(tmp_path):
    """Issue 40 item 5: a one-core run, then `--cores 2 --timing-only` into the same
    --out left the old out.npy (a_used.npy, w_used.npy) beside the new report; an
    --emit-only left a full run's files and the other way round. One path for
    --out: what is there after a run is that run's, and report.json / the
    manifest list it."""
    out = tmp_path / "o"
    assert _cli(tmp_path, "gemm", *SMALL, "--out", out).returncode == 0
    p = _cli(tmp_path, "gemm", *SMALL, "--cores", 2, "--timing-only", "--out", out)
    assert p.returncode == 0, p.stderr
    rep = json.loads((out / "report.json").read_text())
    assert rep["cores"] == 2
    assert _listing(out) == set(rep["files"]), (_listing(out), rep["files"])
    assert not {"out.npy", "a_used.npy", "w_used.npy", "program.tpb"} & _listing(out)
    assert "replaced an earlier run's" in p.stdout and "out.npy" in p.stdout
    p = _cli(tmp_path, "gemm", *SMALL, "--emit-only", "--timing-only", "--out", out)
    assert p.returncode == 0, p.stderr
    assert _listing(out) == {"program.tpb", "cmd.txt"}
    p = _cli(tmp_path, "gemm", *SMALL, "--cores", 2, "--emit-only", "--timing-only", "--out",
             out)
    assert p.returncode == 0, p.stderr
    assert _listing(out) == {"program_0.tpb", "program_1.tpb", "cmd.txt"}
    p = _cli(tmp_path, "gemm", *SMALL, "--no-traces", "--out", out)
    assert p.returncode == 0, p.stderr
    assert _listing(out) == {"program.tpb", "report.json", "out.npy", "a_used.npy",
                             "w_used.npy"}


def test_ctrl_c_of_a_run_over_cores_says_what_out_holds(tmp_path):
    """Issue 40 item 5: Ctrl-C of a --cores run said "an earlier run's files were
    removed" while they were all still there; what it says is what is there."""
    out = tmp_path / "o"
    assert _cli(tmp_path, "gemm", *SMALL, "--out", out).returncode == 0
    earlier = _listing(out)
    proc = _start(tmp_path, *LONG, "--cores", 2, "--out", out)
    _wait_for(proc, (out / "program_1.tpb").exists)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "this run's program_0.tpb program_1.tpb" in err and "Traceback" not in err, err
    left = _listing(out)
    done = set(err.split("holds this run's ")[1].split(" only")[0].split())
    removed = set(err.split("an earlier run's ")[1].split(" were removed")[0].split())
    assert "report.json" not in left and done == left, (done, left)
    assert removed == earlier and not (removed - done) & left, (removed, left)


def test_the_whole_problems_sizes_are_refused_at_once_over_cores(tmp_path):
    """Issue 40 item 6: `--m 1 --k 32 --n 4380000000 --weights mxfp4 --cores 32
    --timing-only` was refused only after 128 s and 2.8 GB (each block's program
    checked, then made, one after another); the whole problem's closed-form
    sizes refuse it at once, naming it and the device."""
    t0 = time.monotonic()
    p = _cli(tmp_path, "gemm", "--m", 1, "--k", 32, "--n", 4380000000, "--weights", "mxfp4",
             "--cores", 32, "--timing-only", "--out", tmp_path / "o", timeout=60)
    took = time.monotonic() - t0
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert "the 1 x 32 x 4380000000 GEMM over 32 cores" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    assert took < 30 and not (tmp_path / "o").exists()
    # The device's HBM is named as the device's.
    with pytest.raises(gemm.GemmError, match=r"over 2 cores needs .* of HBM .*, the device of 2 "
                                             r"cores has 36\.00 GiB"):
        gemm.run(1, 32, 10_000_000_000, "mxfp4", cores=2, timing_only=True, log=None)


def test_staging_names_cannot_be_planted(tmp_path):
    """Issue 40 item 7: --out DIR staged at DIR/.gemm-tmp<PID>.<name>: a link
    planted there after the start was followed (a file outside --out
    overwritten, the outputs links to it). Staging is a mkdtemp directory of
    the run's own; a link at a name is replaced, never followed."""
    out = tmp_path / "o"
    out.mkdir()
    victims = tmp_path / "victims"
    victims.mkdir()
    proc = _start(tmp_path, "gemm", "--m", 512, "--k", 2048, "--n", 2048, "--weights", "mxfp8",
                  "--out", out)
    # After the start: once the run wrote its first file, a link at each name
    # the old staging would use next.
    _wait_for(proc, (out / "program.tpb").exists, 0.01)
    for name in gemm.OUTPUT_FILES:
        (out / f".gemm-tmp{proc.pid}.{name}").symlink_to(victims / name)
    _, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    assert os.listdir(victims) == []
    for name in _listing(out):
        if not name.startswith(".gemm-tmp"):   # the links planted, left alone
            assert (out / name).is_file() and not (out / name).is_symlink(), name


def test_a_refused_run_touches_nothing(tmp_path):
    """Issue 40 item 10: --out holding an earlier run and a directory named
    stats.json gave exit 1 "... before anything is made or written", but six
    of the earlier files were already gone. Everything is checked first."""
    out = tmp_path / "o"
    assert _cli(tmp_path, "gemm", *SMALL, "--no-traces", "--out", out).returncode == 0
    (out / "stats.json").mkdir()
    before = _snapshot(out)
    p = _cli(tmp_path, "gemm", *SMALL, "--out", out)
    assert p.returncode == 1 and "stats.json is a directory" in p.stderr, p.stderr
    assert _snapshot(out) == before
    for args in (["--m", 1, "--k", 32, "--n", 10**10, "--weights", "mxfp4"],
                 ["--m", 8, "--k", 64, "--n", 8, "--weights", "mxfp8", "--cores", 20],
                 [*SMALL, "--timing", tmp_path / "missing.json"]):
        (out / "stats.json").rmdir()
        p = _cli(tmp_path, "gemm", *args, "--out", out)
        assert p.returncode == 1, p.stderr
        (out / "stats.json").mkdir()
        assert _snapshot(out) == before, args


def test_a_workload_directory_is_not_taken_for_an_earlier_run(tmp_path):
    """Issue 40 item 11: `gemm --out .` in a workload directory deleted its
    cmd.txt and expected.npy and replaced program.tpb, calling them "an earlier
    run's". Only what a GEMM run wrote (its manifest, or an older run's
    report.json) is removed; anything else of an output's name is refused."""
    import shutil
    wl = tmp_path / "wl"
    shutil.copytree(WORKLOADS / "hbm_pipeline", wl)
    before = _snapshot(wl)
    p = _cli(wl, "gemm", *SMALL, "--out", ".")
    assert p.returncode == 1, p.stderr
    assert "which no GEMM run wrote there" in p.stderr and "cmd.txt" in p.stderr, p.stderr
    assert _snapshot(wl) == before and set(os.listdir(wl)) == set(before)
    # An older version's run (no manifest; report.json lists its files) is ours.
    out = tmp_path / "o"
    assert _cli(tmp_path, "gemm", *SMALL, "--no-traces", "--out", out).returncode == 0
    (out / ".gemm-files").unlink()
    p = _cli(tmp_path, "gemm", *SMALL, "--timing-only", "--no-traces", "--out", out)
    assert p.returncode == 0, p.stderr
    assert _listing(out) == {"program.tpb", "report.json"}


def test_a_run_killed_outright_leaves_what_the_next_run_removes(tmp_path):
    """Issue 40: SIGKILL while the generator wrote left a partial hidden
    .gemm-tmp<PID>.w_used.npy. A killed run leaves at most its staging
    directory and files of its manifest; the next run into the directory
    removes them and leaves only its own."""
    out = tmp_path / "o"
    proc = _start(tmp_path, *LONG, "--out", out)
    _wait_for(proc, (out / "program.tpb").exists)
    proc.kill()
    proc.communicate(timeout=60)
    left = set(os.listdir(out))
    manifest = json.loads((out / ".gemm-files").read_text())
    assert left - {".gemm-files"} <= set(manifest["files"]) | set(manifest["staging"]), left
    p = _cli(tmp_path, "gemm", *SMALL, "--no-traces", "--timing-only", "--out", out)
    assert p.returncode == 0, p.stderr
    assert set(os.listdir(out)) == {"program.tpb", "report.json", ".gemm-files"}


def test_a_run_that_fails_to_start_leaves_nothing(tmp_path):
    """Issue 40: under a tight ulimit -v the generator printed a RuntimeError
    traceback (SystemC's E518 from core.write) and left program.tpb: a clean
    one-line error, nothing left behind (or, with room enough, a run)."""
    limit = 4_000_000 * 1024   # ulimit -v 4000000: 32 cores' stacks did not fit

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    p = _cli(tmp_path, "gemm", "--m", 8, "--k", 64, "--n", 4096, "--weights", "mxfp8", "--cores",
             32, "--timing-only", "--no-traces", "--out", tmp_path / "o", preexec_fn=cap,
             timeout=240)
    assert "Traceback" not in p.stderr, p.stderr
    if p.returncode != 0:
        assert p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert not (tmp_path / "o").exists()


def test_gemm_cores_messages_name_what_exists(tmp_path):
    """Issue 40: --cores said 1..1024 (a device has 1..32), named flags that do
    not exist (--core, drop_wait) on the command line and Python names there."""
    p = _cli(tmp_path, "gemm", *SMALL, "--cores", 33, "--out", tmp_path / "o")
    assert p.returncode == 1 and "33 is not a count of cores (1..32" in p.stderr, p.stderr
    p = _cli(tmp_path, "gemm", *SMALL, "--cores", 2, "--placement", "sbuf", "--out",
             tmp_path / "o")
    assert p.returncode == 1 and "--cores 2" in p.stderr and "--placement 'sbuf'" in p.stderr
    assert "--core," not in p.stderr and "drop_wait" not in p.stderr and "=" not in p.stderr
    p = _cli(tmp_path, "gemm", *SMALL, "--cores", 2, "--emit-only", "--out", tmp_path / "o")
    assert p.returncode == 1 and "add --timing-only" in p.stderr, p.stderr
    with tpbsim.Core() as c:
        with pytest.raises(gemm.GemmError, match=r"cores=2 runs on a device of its own: no "
                                                 r"core= with it"):
            gemm.run(8, 64, 8, "mxfp8", cores=2, core=c, log=None)
    with pytest.raises(gemm.GemmError, match=r"cores=33: a count of cores \(1\.\.32"):
        gemm.run(8, 64, 8, "mxfp8", cores=33, log=None)


def test_kernels_run_over_cores_or_on_a_devices_core_returns_its_report():
    """Issue 40: kernels.run(cores=N) returned a plain dict without .c; run(core=
    dev.core(i)) ran and then failed with IndexError in critical_chain."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((40, 300)).astype(np.float32)
    w = rng.standard_normal((300, 700)).astype(np.float32)
    one = tpbsim.kernels.run(a=a, w=w, weights="mxfp8", log=None, traces=False)
    many = tpbsim.kernels.run(a=a, w=w, weights="mxfp8", log=None, cores=2)
    assert isinstance(many, gemm.Report) and many["check"]["bit_exact"] is True
    np.testing.assert_array_equal(many.c.view(np.uint32), one.c.view(np.uint32))
    assert many.a_used.shape == (40, 300) and many.w_used.shape == (300, 700)
    with tpbsim.Device(cores=2) as dev:
        on1 = tpbsim.kernels.run(a=a, w=w, weights="mxfp8", log=None, core=dev.core(1))
    assert on1["status"] == "ok" and on1["check"]["bit_exact"] is True
    assert on1["critical_chain"]["instructions"] > 0 and "pe" in on1["engines"]
    np.testing.assert_array_equal(on1.c.view(np.uint32), one.c.view(np.uint32))


def test_operands_torch_cannot_hand_over_are_named():
    """Issue 40: a sparse tensor raised a raw TypeError; float64 values past the
    float32 range printed NumPy's overflow warning; an nn.Parameter with
    w_layout="nk", as the error advises, then failed "w requires grad"."""
    import warnings
    torch = pytest.importorskip("torch")
    a = torch.randn(4, 64)
    w = torch.randn(64, 8)
    with pytest.raises(gemm.GemmError, match=r"a: a sparse_coo tensor; .* a\.to_dense\(\)"):
        gemm.run(a=a.to_sparse(), w=w, weights="mxfp8", log=None)
    big = np.ones((4, 64))
    big[2, 3] = 1e39
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(gemm.GemmError, match=r"a holds 1e\+39 at \(2, 3\): past the float32"):
            gemm.run(a=big, w=w.numpy(), weights="mxfp8", log=None)
        with pytest.raises(gemm.GemmError, match=r"w holds .* past the float32"):
            gemm.run(a=a, w=torch.from_numpy(big.T.copy()), weights="mxfp8", log=None,
                     w_layout="kn")
    lin = torch.nn.Linear(64, 8)
    with pytest.raises(gemm.GemmError, match="say w_layout='nk'"):
        gemm.run(a=a, w=lin.weight, weights="mxfp8", log=None)
    r = gemm.run(a=a, w=lin.weight, w_layout="nk", weights="mxfp8", log=None)
    assert r["check"]["bit_exact"] is True and r.c.shape == (4, 8)


def test_a_directory_another_run_is_writing_is_refused(tmp_path):
    """Two runs into one --out at once: the second removed the first's files
    under it. The manifest names the writing run: the second is refused, the
    first completes."""
    out = tmp_path / "o"
    proc = _start(tmp_path, *LONG, "--out", out)
    _wait_for(proc, (out / "program.tpb").exists)
    with pytest.raises(gemm.GemmError, match=r"another GEMM run \(process \d+\) is writing"):
        gemm.run(8, 64, 64, "mxfp8", out=out, log=None)
    _, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    assert set(json.loads((out / "report.json").read_text())["files"]) == _listing(out)
