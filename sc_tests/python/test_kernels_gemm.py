"""python3 -m tpbsim.kernels gemm (docs/KERNELS.md): the generated, tiled program
runs bit-exact for every weight format on both MX generations (ragged shapes
included); what the hardware is handed decodes, by reference.py's independent
format definitions, to a_used / w_used; a program with one semaphore wait
removed is a race and most such change C; the report's invariants hold; bad
requests exit 1 naming what is wrong."""

import json
import re
import os
import subprocess
import sys

import numpy as np
import pytest

import reference as ref
from tpbsim.kernels import gemm, quant

FORMATS = list(quant.WEIGHT_FORMATS)
ARCHS = ["mariana", "maverick"]
# (M, K, N): one whole tile; ragged in every dimension (K and N padded); several
# tiles in every dimension with a short last K-tile (32 partitions) and PSUM
# groups alternating halves.
SHAPES = [(128, 512, 512), (100, 300, 200), (130, 1060, 600)]

# How close w_used must be to W (relative Frobenius error): a loose bound that a
# quantizer that drops scales, swaps lanes or columns cannot meet.
W_ERR = {"mxfp8": 0.06, "mxfp4": 0.25, "bf16": 0.06, "fp4": 0.25, "int4": 0.2, "nf4": 0.2,
         "fp6": 0.08}


def ref_activations(a_pad):
    """What the DVE makes of A [M][Kpad] (float32), by reference.py: the BF16
    codes of A and reference.py's QuantizeMX of their values in the DVE's
    partition layout (partition p, element 4m + l = A[m][4p + l]), as the
    values the PE multiplies [M][Kpad]."""
    m, kpad = a_pad.shape
    bits = ref.encode_bf16(a_pad)
    src = ref.decode("bf16", bits).astype(np.float32)
    src = src.reshape(m, kpad // 4, 4).transpose(1, 0, 2).reshape(kpad // 4, 4 * m)
    codes, s = ref.mx_quantize(src, "e4m3")
    return bits, ref.mx_values(codes, s, "e4m3").T


def handed_values(plan, qw):
    """The weight values the PE multiplies, decoded from what the host hands the
    hardware with reference.py (not the quantizer): [Kpad][Npad] float32."""
    spec = quant.WEIGHT_FORMATS[plan.weights]
    k, n = plan.kpad, plan.npad
    data = qw.data
    if spec["store"] == "mx" or plan.weights == "fp6":
        if plan.weights == "mxfp8":
            words = data.view("<u4").astype(np.int64)                    # [K/4][N]
            lanes = np.stack([(words >> (8 * l)) & 0xFF for l in range(4)], axis=1)
            fmt = "e4m3"
        elif plan.weights == "mxfp4":
            words = data.view("<u2").astype(np.int64)
            lanes = np.stack([(words >> (4 * l)) & 0xF for l in range(4)], axis=1)
            fmt = "fp4_e2m1"
        else:  # fp6: 96-bit strings of 16 codes, stream byte 4n + l
            w32 = data.view("<u4").astype(object).reshape(k // 4, -1, 3)
            big = w32[..., 0] | (w32[..., 1] << 32) | (w32[..., 2] << 64)
            codes = np.array([[[(int(v) >> (6 * t)) & 0x3F for t in range(16)] for v in row]
                              for row in big], dtype=np.int64).reshape(k // 4, n, 4)
            lanes = codes.transpose(0, 2, 1)
            fmt = "fp6_e2m3"
        codes = lanes.reshape(k, n)                                      # k = 4p + l
        s = np.repeat(qw.scales.astype(np.int64), 32, axis=0)
        return (ref.decode(fmt, codes).astype(np.float32) *
                np.exp2(s - 127.0).astype(np.float32)).astype(np.float32)
    if spec["store"] == "bf16":
        bits = data.view("<u2").astype(np.int64)                         # [K/4][4N]
        vals = ref.decode("bf16", bits).astype(np.float32)
        codes, s = ref.mx_quantize(vals, "e4m3")                         # per 128-row tile
        return ref.mx_values(codes, s, "e4m3")
    # Group-8 chunks: word 0 four scales, words 1..4 32 codes (8 per word).
    w = data.view("<u4").astype(np.int64).reshape(k // 4, n // 8, 5)
    scales = np.stack([(w[..., 0] >> (8 * g)) & 0xFF for g in range(4)], axis=2)
    codes = np.stack([(w[..., 1 + i] >> (4 * j)) & 0xF for i in range(4) for j in range(8)],
                     axis=2)                                             # [K/4][N/8][32]
    s_el = np.repeat(scales, 8, axis=2)
    names = {"fp4": "fp4_e2m1", "int4": "int4", "nf4": "nf4"}
    v = ref.decode(names[plan.weights], codes) * np.exp2(s_el - 127.0)
    out = spec["out"]
    v = ref.decode(out, ref.encode(out, v))   # POOL: the exact product, RNE, saturating
    return v.reshape(k // 4, n, 4).transpose(0, 2, 1).reshape(k, n).astype(np.float32)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_is_bit_exact_on_a_grid_of_shapes(fmt, arch):
    for i, (m, k, n) in enumerate(SHAPES):
        rep = gemm.run(m, k, n, fmt, "bf16", arch, seed=7 * i + 1, traces=False, log=None)
        assert rep["status"] == "ok"
        # Every access ordered by the semaphores (SPEC §14): no race, whatever the timing.
        assert rep["races"] == {"count": 0, "first": []}
        arrs = rep["_arrays"]
        plan = gemm.Plan(m, k, n, fmt, arch)
        a, w = gemm.operands(plan, seed=7 * i + 1)
        # The activations: reference.py's QuantizeMX of the BF16 A.
        a_pad = np.zeros((m, plan.kpad), np.float32)
        a_pad[:, :k] = a
        _, a_ref = ref_activations(a_pad)                                # [M][Kpad]
        np.testing.assert_array_equal(arrs["a_used_pad"], a_ref)
        # The weights: decoded from the bytes the hardware is handed.
        w_pad = np.zeros((plan.kpad, plan.npad), np.float32)
        w_pad[:k, :n] = w
        qw = quant.quantize_weights(w_pad, fmt)
        w_ref = handed_values(plan, qw)
        np.testing.assert_array_equal(arrs["w_used_pad"].view(np.uint32), w_ref.view(np.uint32))
        err = np.linalg.norm(w_ref[:k, :n] - w) / np.linalg.norm(w)
        assert err < W_ERR[fmt], (fmt, err)
        # The result: reference.py's FP32 k-ascending sum, bit for bit.
        want = ref.matmul_fp32(a_ref.T, w_ref)[:, :n]
        assert rep["check"]["bit_exact"] is True
        np.testing.assert_array_equal(arrs["c"].view(np.uint32), want.view(np.uint32))
        assert arrs["c"].shape == (m, n)
        if (m, k, n) != SHAPES[0]:
            assert rep["padding"]


@pytest.mark.parametrize("m,k,n,fmt,arch", [(300, 1100, 2600, "mxfp8", "mariana"),
                                             (5, 2048, 5000, "mxfp4", "maverick"),
                                             (1, 4096, 3000, "int4", "mariana")])
def test_narrow_last_panels_and_one_store_of_c_are_bit_exact(m, k, n, fmt, arch):
    """The tail shapes of docs/KERNELS.md "Data placement": the last weight panel
    in panels of one N-tile (A resident, several M-tiles), C in one store (fewer
    than 8 rows), the last panel's last transfer in single K-tiles."""
    plan = gemm.check_sizes(gemm.Plan(m, k, n, fmt, arch), gemm.DEFAULT_CAPACITIES)
    assert plan.tail_nt > 0 if m > 128 else plan.c_merged()
    rep = gemm.run(m, k, n, fmt, "bf16", arch, seed=3, traces=False, log=None, check="full")
    assert rep["status"] == "ok" and rep["races"]["count"] == 0
    arrs = rep["_arrays"]
    want = ref.matmul_fp32(arrs["a_used_pad"].T, arrs["w_used_pad"])[:, :n]
    np.testing.assert_array_equal(arrs["c"].view(np.uint32), want.view(np.uint32))


def _race_key(message):
    """A race message's two sides (engine and mnemonic, without index, line and
    DMA engines) and its bytes, whichever side it names first: the report names
    them in the order their accesses ran (issue 40), which the timing decides."""
    m = (re.match(r"no semaphore orders (.*) after (.*?): [A-Z+]+ on (.*)$", message) or
         re.match(r"(.*) is not ordered after (.*?): a DMA queue .*: [A-Z+]+ on (.*)$", message))
    assert m, message

    def side(s):
        return re.sub(r"\[\d+\] (\S+) \([^)]*\)", r" \1", s)

    return tuple(sorted((side(m.group(1)), side(m.group(2))))) + (m.group(3),)


def test_every_removed_wait_is_a_race_in_any_timing_and_most_change_c():
    """Each wait of a small generated program (nops included) left out in turn:
    the race check (SPEC §14) catches it in one run whatever the timing — the
    same first race with a normal DVE and with one 100 times slower (two equal
    loads on two queues can end together and hide it from any check of the
    retire records) — and at least half of them give a wrong C in one of the
    two timings (the waits are there for the values). A on one DMA queue, W
    and C on another."""
    m, k, n = 96, 1024, 1024
    one_queue = {"a": (0,), "w": (1,), "c": (1,)}
    rep = gemm.run(m, k, n, "fp4", "bf16", "mariana", traces=False, log=None, queues=one_queue)
    assert rep["races"]["count"] == 0 and rep["check"]["bit_exact"] is True
    waits = rep["_kernel"].waits()
    assert len(waits) >= 8 and rep["ordering"]["waits"] == len(waits)
    wrong = set()
    for i in waits:
        fast, slow = (gemm.run(m, k, n, "fp4", "bf16", "mariana", drop_wait=i, traces=False,
                               log=None, queues=one_queue, timing=t)
                      for t in (None, {"clocks_mhz.dve": 20}))
        assert fast["status"] == slow["status"] == "ok"
        assert fast["races"]["count"] > 0 and slow["races"]["count"] > 0, i
        # The same unordered producer and bytes; which of the consumer engine's
        # instructions is named with it is the last that read or wrote them
        # before the producer in that run (docs/CONVENTIONS.md "which pairs").
        assert _race_key(fast["races"]["first"][0]) == _race_key(slow["races"]["first"][0]), i
        if False in (fast["check"]["bit_exact"], slow["check"]["bit_exact"]):
            wrong.add(i)
    assert len(wrong) >= len(waits) // 2, (sorted(wrong), waits)


def test_a_removed_wait_gives_a_wrong_result_when_engines_interleave_finely():
    """With a 1 ns quantum the engines' memory accesses interleave in simulated-time
    order, so the PE's first load without its wait reads the stationary tile
    before the DVE has quantized it: a wrong result, not only a race in the trace."""
    # In a process of its own: the quantum is fixed when the process elaborates
    # the core (a later Core's quantum_ns override does not change it).
    script = """
import json
from tpbsim.kernels import gemm
plan = gemm.Plan(96, 1024, 1024, "fp4", "mariana")
k = gemm.Kernel(plan, 256 * 1024)
b = k.builder
first = next(i for i in k.waits() if b.queues[b.instrs[i].queue] == "pe")
r = gemm.run(96, 1024, 1024, "fp4", "bf16", "mariana", drop_wait=first, traces=False,
             log=None, timing={"quantum_ns": 1})
print(json.dumps([r["check"]["mismatches"], r["races"]["count"]]))
"""
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    mismatches, races = json.loads(p.stdout)
    assert mismatches > 0 and races >= 1


@pytest.mark.parametrize("fmt,arch", [("mxfp4", "mariana"), ("bf16", "maverick"),
                                      ("nf4", "mariana")])
def test_report_invariants_and_files(tmp_path, fmt, arch):
    out = tmp_path / "run"
    p = _cli(tmp_path, "gemm", "--m", 256, "--k", 1024, "--n", 1024, "--weights", fmt,
             "--arch", arch, "--out", out)
    assert p.returncode == 0, p.stderr
    for f in ("report.json", "report.png", "out.npy", "a_used.npy", "w_used.npy",
              "program.tpb", "stats.json", "retire.txt", "trace.perfetto.json"):
        assert (out / f).stat().st_size > 0, f
    j = json.loads((out / "report.json").read_text())
    for key in ("simulated_ns", "achieved_tflops", "peak_tflops", "bound_by", "engines",
                "hbm_bytes", "hbm_gbps"):
        assert key in j
    # The PE's MX peak from its clock: 128 x 128 x 4 MACs x 2 flops x 2.4 GHz.
    assert j["peak_tflops"] == pytest.approx(2 * 128 * 128 * 4 * 2.4e9 / 1e12)
    # Never faster than the PE's peak or the HBM share.
    assert j["achieved_tflops"] <= j["peak_tflops"]
    assert j["simulated_ns"] >= 2 * 256 * 1024 * 1024 / (j["peak_tflops"] * 1e3)
    assert j["hbm_gbps"] <= j["hbm_share_gbps"]
    assert j["hbm_bound_ns"] <= j["simulated_ns"]
    assert j["hbm_bound_ns"] == pytest.approx(j["hbm_bytes"] / j["hbm_share_gbps"])
    # The HBM bytes, counted from the shapes: A (BF16) once per weight panel, the
    # weights as handed (codes, scales) once, C (FP32) once.
    spec = quant.WEIGHT_FORMATS[fmt]
    cb = {"mxfp4": 2, "bf16": 8, "nf4": 2.5}[fmt]
    w_bytes = 1024 / 4 * 1024 * cb + (1024 / 32 * 1024 if spec["store"] == "mx" else 0)
    unit = 4 * 4 * 512 if fmt == "nf4" else 0
    assert j["hbm_bytes"] == 256 * 1024 * 2 + w_bytes + unit + 256 * 1024 * 4
    queues = [e for e in j["engines"] if e.startswith("dma") and e[3:].isdigit()]
    # Each stream on its own queues (activations, weight panels, results).
    used = {int(q[3:]) for q in queues}
    for stream in (gemm.A_QUEUES, gemm.W_QUEUES, gemm.C_QUEUES):
        assert used & set(stream), (stream, queues)
    # The DMA engines that moved the transfers (SPEC §10), 16 with 128-row tiles.
    assert len([e for e in j["engines"] if e.startswith("dma_engine")]) == 16
    assert sum(j["engines"][q]["hbm_bytes"] for q in queues) == j["hbm_bytes"]
    assert j["achieved_tflops"] == pytest.approx(2 * 256 * 1024 * 1024 / j["simulated_ns"] / 1e3)
    for name, e in j["engines"].items():
        assert 0 <= e["busy_pct"] <= 100, name
    assert j["bound_by"] in list(j["engines"]) + ["dma", "hbm", "latency"]
    assert j["bound_reason"]
    # The engines the format needs are the ones that work.
    assert j["engines"]["pe"]["instructions"] == 2 * 2 * (1 + 2)     # 2 m x 2 k x (ld + 2 mm)
    assert ("pool" in j["engines"] and j["engines"]["pool"]["instructions"] > 0) == (fmt == "nf4")
    c = np.load(out / "out.npy")
    want = quant.fp32_ksum(np.load(out / "a_used.npy"), np.load(out / "w_used.npy"))
    np.testing.assert_array_equal(c.view(np.uint32), want.view(np.uint32))


def _cli(tmp_path, *args):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(d) for d in
                                        env.get("PYTHONPATH", "").split(os.pathsep) if d)
    return subprocess.run([sys.executable, "-m", "tpbsim.kernels", *map(str, args)],
                          capture_output=True, text=True, cwd=tmp_path, env=env)


def test_cli_runs_checks_and_says_so(tmp_path):
    p = _cli(tmp_path, "gemm", "--m", 64, "--k", 200, "--n", 100, "--weights", "int4",
             "--arch", "maverick", "--out", tmp_path / "o")
    assert p.returncode == 0, p.stderr
    assert "bit for bit" in p.stdout and "padded: K 200 -> 256" in p.stdout
    assert "dependences between queues" in p.stdout and "race check: every access" in p.stdout
    assert np.load(tmp_path / "o" / "out.npy").shape == (64, 100)


@pytest.mark.parametrize("args,msg", [
    (["--m", 8, "--k", 64, "--n", 8, "--weights", "mxfp4", "--arch", "cayman"],
     "CAYMAN (v3) has no MX matmul"),
    (["--m", 8, "--k", 64, "--n", 8, "--weights", "mxfp9"], "not a weight format"),
    (["--m", 8, "--k", 64, "--n", 8, "--weights", "bf16", "--act", "fp32"], "activations"),
    (["--m", 8, "--k", 64, "--weights", "bf16"], "--n needed"),
    (["--m", 0, "--k", 64, "--n", 8, "--weights", "bf16"], "positive"),
    (["--m", 4096, "--k", 4096, "--n", 4096, "--weights", "mxfp8", "--placement", "sbuf"],
     "per SBUF partition"),
    (["--m", 2**21, "--k", 4096, "--n", 512, "--weights", "mxfp4"],
     "needs 20.00 GiB (21475950592 bytes) of HBM"),
    (["--m", 128, "--k", 65536, "--n", 512, "--weights", "bf16"], "K is too deep"),
    (["--m", 8, "--k", 64, "--n", 8, "--weights", "mxfp4", "--placement", "psum"],
     "invalid choice"),
    (["--m", 8, "--k", 64, "--n", 8, "--weights", "bf16", "--timing", "nope.json"],
     "no such file"),
    (["--m", "x", "--weights", "bf16"], "argument --m: 'x' is not an integer"),
])
def test_bad_requests_exit_1_with_a_message(tmp_path, args, msg):
    p = _cli(tmp_path, "gemm", *args)
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert msg in p.stderr and "Traceback" not in p.stderr


def test_mismatched_and_bad_operand_files(tmp_path):
    np.save(tmp_path / "a.npy", np.ones((16, 64), np.float32))
    np.save(tmp_path / "w.npy", np.ones((32, 8), np.float32))
    p = _cli(tmp_path, "gemm", "--a", "a.npy", "--w", "w.npy", "--weights", "mxfp8")
    assert p.returncode == 1 and "--a is 16 x 64 and --w is 32 x 8" in p.stderr
    assert "their K differ (64 and 32)" in p.stderr
    bad = np.ones((16, 64), np.float32)
    bad[3, 5] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    p = _cli(tmp_path, "gemm", "--a", "nan.npy", "--n", 8, "--weights", "mxfp8")
    assert p.returncode == 1 and "(3, 5)" in p.stderr and "finite" in p.stderr
    np.save(tmp_path / "i.npy", np.ones((16, 64), np.int32))
    p = _cli(tmp_path, "gemm", "--a", "i.npy", "--n", 8, "--weights", "mxfp8")
    assert p.returncode == 1 and "int32" in p.stderr
    p = _cli(tmp_path, "gemm", "--a", "missing.npy", "--n", 8, "--weights", "mxfp8")
    assert p.returncode == 1 and "missing.npy" in p.stderr and "Traceback" not in p.stderr
    # Given files are what is multiplied: W = I gives C = the quantized A.
    np.save(tmp_path / "eye.npy", np.eye(64, dtype=np.float32))
    p = _cli(tmp_path, "gemm", "--a", "a.npy", "--w", "eye.npy", "--weights", "bf16",
             "--out", "o")
    assert p.returncode == 0, p.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "out.npy"), np.ones((16, 64)))


def test_sbuf_placement_is_bit_exact_too():
    for fmt, arch in (("mxfp8", "maverick"), ("fp6", "mariana")):
        rep = gemm.run(100, 300, 200, fmt, "bf16", arch, traces=False, log=None,
                       placement="sbuf")
        assert rep["check"]["bit_exact"] is True and rep["hbm_bytes"] == 0
        assert rep["placement"].startswith("sbuf")
        assert not any(e.startswith("dma") for e in rep["engines"])


def test_timing_only_times_as_the_full_run_and_checks_nothing(tmp_path):
    full = gemm.run(256, 1536, 2560, "mxfp4", "bf16", "mariana", traces=False, log=None)
    p = _cli(tmp_path, "gemm", "--m", 256, "--k", 1536, "--n", 2560, "--weights", "mxfp4",
             "--timing-only", "--out", tmp_path / "t")
    assert p.returncode == 0, p.stderr
    assert "not checked: a timing-only run computes no values" in p.stdout
    j = json.loads((tmp_path / "t" / "report.json").read_text())
    assert j["timing_only"] is True and j["check"]["bit_exact"] is None
    assert not (tmp_path / "t" / "out.npy").exists()
    assert json.loads((tmp_path / "t" / "stats.json").read_text())["mode"] == "timing-only"
    # Time does not depend on the values: the same simulated time, busy shares, HBM bytes.
    assert j["simulated_ns"] == full["simulated_ns"]
    assert j["hbm_bytes"] == full["hbm_bytes"] > 0
    assert {e: v["busy_cycles"] for e, v in j["engines"].items()} == \
        {e: v["busy_cycles"] for e, v in full["engines"].items()}
    assert j["bound_by"] == full["bound_by"]


def test_an_emitted_workload_runs_in_tpbsim_run_and_tpbsim_sweep(tmp_path):
    """--emit-only writes a workload directory: tpbsim run of its cmd.txt dumps the C
    that expected.npy holds (bit for bit), and tpbsim sweep takes it as a workload."""
    wl = tmp_path / "gemm"
    p = _cli(tmp_path, "gemm", "--m", 100, "--k", 300, "--n", 200, "--weights", "fp6",
             "--arch", "maverick", "--emit-only", "--out", wl)
    assert p.returncode == 0, p.stderr
    assert {"program.tpb", "cmd.txt", "hbm_inputs.npy", "expected.npy"} <= set(os.listdir(wl))
    tpbsim_bin = os.environ.get("TPBSIM_BIN")
    if not tpbsim_bin:
        pytest.skip("TPBSIM_BIN (the tpbsim binary) is not set")
    args = [a for x in (wl / "cmd.txt").read_text().split("\n") if x and not x.startswith("#")
            for a in x.split()]
    r = subprocess.run([tpbsim_bin, "run", *args], cwd=wl, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got, want = np.load(wl / "out.npy"), np.load(wl / "expected.npy")
    assert got.shape == want.shape == (100, 200)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    # The reference is independent of the run: the k-ascending FP32 sum of the
    # values the run command's own check uses.
    rep = gemm.run(100, 300, 200, "fp6", "bf16", "maverick", traces=False, log=None)
    np.testing.assert_array_equal(rep["_arrays"]["c"].view(np.uint32), got.view(np.uint32))
    (tmp_path / "sweep.json").write_text(json.dumps({
        "workloads": ["gemm"],
        "parameters": [{"key": "clocks_mhz.dve", "values": [300, 1200]}]}))
    r = subprocess.run([tpbsim_bin, "sweep", tmp_path / "sweep.json", "--out", tmp_path / "sw",
                        "--jobs", "2"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = (tmp_path / "sw" / "results.csv").read_text().splitlines()
    head = rows[0].split(",")
    ns = [float(x.split(",")[head.index("simulated_ns")]) for x in rows[1:]]
    assert len(ns) == 2 and ns[0] > ns[1] > 0   # a slower DVE, a longer run


def test_a_narrow_hbm_bounds_the_run_and_the_report_says_so():
    """At 8 GB/s of HBM the run cannot be shorter than its HBM bytes at that rate,
    and the report names the HBM; at the default bandwidth the same program is
    faster and not bound by it."""
    args = (256, 1024, 2560, "mxfp4", "bf16", "mariana")
    slow = gemm.run(*args, traces=False, log=None, timing_only=True,
                    timing={"hbm.mbytes_per_s": 8000})
    fast = gemm.run(*args, traces=False, log=None, timing_only=True)
    assert slow["hbm_bytes"] == fast["hbm_bytes"] > 0
    assert slow["hbm_share_gbps"] == 8.0
    assert slow["simulated_ns"] >= slow["hbm_bytes"] / 8.0 == slow["hbm_bound_ns"]
    assert slow["hbm_gbps"] <= 8.0
    assert slow["bound_by"] == "hbm" and "HBM" in slow["bound_reason"]
    assert fast["simulated_ns"] < slow["simulated_ns"] / 4
    assert fast["bound_by"] != "hbm"


# ---------------------------------------------------------------------------
# Whole GEMMs against the roofline (issue: the generator tuned for the
# pipelined core; docs/KERNELS.md "Against the roofline"). Timing only: the
# times do not depend on the values (SPEC §13).

DMA_GBPS_MARIANA = 16 * 33.0   # TIMING.md: 16 DMA engines x 33 B/ns on v4
PEAK_TFLOPS_MARIANA = 2 * 128 * 128 * 4 * 2.4e9 / 1e12


@pytest.mark.parametrize("fmt", ["mxfp8", "mxfp4"])
def test_the_4096_cubed_gemm_reaches_85_percent_of_the_pe_peak(fmt):
    r = gemm.run(4096, 4096, 4096, fmt, timing_only=True, traces=False, log=None)
    assert r["status"] == "ok" and r["races"]["count"] == 0
    flops = 2 * 4096 ** 3
    # Achieved TFLOPS from the simulated time, not from busy shares.
    assert flops / (r["simulated_ns"] * 1e-9) / 1e12 >= 0.85 * PEAK_TFLOPS_MARIANA
    assert r["bound_by"] == "pe"
    chain = r["critical_chain"]
    assert max(chain["time_ns"], key=chain["time_ns"].get) == "pe matmul"


def test_the_roofline_keys_follow_the_profile():
    r = gemm.run(256, 1024, 2048, "mxfp8", timing_only=True, traces=False, log=None)
    assert r["dma_gbps"] == pytest.approx(DMA_GBPS_MARIANA)
    assert r["dma_bound_ns"] == pytest.approx(r["hbm_bytes"] / DMA_GBPS_MARIANA)
    assert r["pe_bound_ns"] == pytest.approx(2 * 256 * 1024 * 2048 / PEAK_TFLOPS_MARIANA / 1e3)
    assert r["roofline_ns"] == max(r["pe_bound_ns"], r["dma_bound_ns"], r["hbm_bound_ns"])
    assert r["simulated_ns"] >= r["roofline_ns"]
    # The critical chain covers the run from its first start to its end.
    chain = r["critical_chain"]
    assert chain["instructions"] >= 2
    assert sum(chain["time_ns"].values()) == pytest.approx(
        r["simulated_ns"] - chain["start_ns"], rel=1e-6)


@pytest.mark.parametrize("m", [512, 1024, 2048])
@pytest.mark.parametrize("fmt", ["mxfp8", "mxfp4"])
def test_large_m_runs_within_1_3x_of_the_roofline(fmt, m):
    r = gemm.run(m, 4096, 4096, fmt, timing_only=True, traces=False, log=None)
    assert r["simulated_ns"] <= 1.3 * r["roofline_ns"], r["simulated_ns"] / r["roofline_ns"]


def test_a_gemv_is_bound_by_the_dma_engines_near_the_weight_bytes():
    """M = 1, K = N = 4096, MXFP8: every weight byte crosses the 16 DMA
    engines once; the run is within 1.3x of the weight bytes over their
    bandwidth (docs/KERNELS.md "Against the roofline")."""
    r = gemm.run(1, 4096, 4096, "mxfp8", timing_only=True, traces=False, log=None)
    w_bytes = 4096 * 4096 + 4096 * 4096 // 32      # FP8 codes + E8M0 scales
    assert r["hbm_bytes"] >= w_bytes
    assert r["simulated_ns"] >= w_bytes / DMA_GBPS_MARIANA
    assert r["simulated_ns"] <= 1.3 * w_bytes / DMA_GBPS_MARIANA
    assert r["bound_by"] == "dma"


@pytest.mark.parametrize("fmt,code_bytes", [("mxfp8", 4), ("mxfp4", 2)])
def test_a_gemv_is_near_its_busiest_dma_engine(fmt, code_bytes):
    """The busiest DMA engine's bytes, from SPEC §10 and §4 alone: engine e
    carries SBUF partitions 8e..8e+7; a K-tile holds 4 k per partition (an x4
    word of `code_bytes` per column) and its E8M0 scale rows sit in partitions
    32q..32q+3, so engine 0 carries 8 partitions of codes and 4 scale rows per
    K-tile, A's 8 partitions (8 bytes per K-tile: 4 BF16) and C's one row (FP32).
    docs/KERNELS.md "Known limits": why MXFP4's GEMV cannot come within 1.3x of
    the bytes over all 16 engines."""
    k = n = 4096
    r = gemm.run(1, k, n, fmt, timing_only=True, traces=False, log=None)
    kt = k // 512
    engine0 = kt * (8 * code_bytes * n + 4 * n) + 8 * 8 * kt + 4 * n
    assert r["dma_engine_bound_ns"] == pytest.approx(engine0 / 33.0)
    assert r["dma_engine_bound_ns"] > r["dma_bound_ns"]
    # Its bytes, then at least the start latency before them (TIMING.md: 1.3 us).
    assert r["simulated_ns"] >= engine0 / 33.0 + 1300
    assert r["simulated_ns"] <= 1.35 * engine0 / 33.0


# ---------------------------------------------------------------------------
# The GEMM over the cores of a device (SPEC §15, docs/KERNELS.md "Over
# several cores").

@pytest.mark.parametrize("fmt,arch,cores", [("mxfp4", "mariana", 2), ("nf4", "mariana", 4),
                                            ("mxfp8", "maverick", 3), ("bf16", "mariana", 2),
                                            ("fp6", "mariana", 4)])
def test_a_gemm_over_cores_is_the_one_core_gemm_bit_for_bit(fmt, arch, cores):
    m, k, n = 300, 1000, 1500
    rng = np.random.default_rng(7)
    a = rng.standard_normal((m, k)).astype(np.float32)
    w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    one = gemm.run(a=a, w=w, weights=fmt, arch=arch, traces=False, log=None, check="full")
    many = gemm.run(a=a, w=w, weights=fmt, arch=arch, log=None, check="full", cores=cores)
    assert many["status"] == "ok" and many["check"]["bit_exact"] is True
    assert many["races"]["count"] == 0
    assert np.array_equal(many.c_array.view(np.uint32), one.c_array.view(np.uint32))
    # Every element of C in exactly one core's block.
    cover = np.zeros((m, n), np.int32)
    for p in many["per_core"]:
        cover[p["rows"][0]:p["rows"][1], p["cols"][0]:p["cols"][1]] += 1
    assert (cover == 1).all()
    assert many["split"]["rows"] * many["split"]["cols"] == cores
    assert 0 < many["scaling_efficiency"] <= 1.0 + 1e-9
    assert many["one_core_ns"] == pytest.approx(one["simulated_ns"])


def test_columns_that_round_past_n_still_split_over_every_core():
    """4200 columns over 8 cores: blocks of whole N-tiles (1024) would leave the
    last cores nothing, so the blocks are 525 columns each; bit for bit the
    one-core C."""
    m, k, n = 3, 64, 4200
    rng = np.random.default_rng(3)
    a = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((k, n)).astype(np.float32)
    one = gemm.run(a=a, w=w, weights="mxfp8", traces=False, log=None, check="full")
    many = gemm.run(a=a, w=w, weights="mxfp8", log=None, check="full", cores=8)
    assert many["status"] == "ok" and many["check"]["bit_exact"] is True
    assert (many["split"]["rows"], many["split"]["cols"]) == (1, 8)
    assert [p["cols"][1] - p["cols"][0] for p in many["per_core"]] == [525] * 8
    assert np.array_equal(many.c_array.view(np.uint32), one.c_array.view(np.uint32))


@pytest.mark.parametrize("fmt", ["mxfp8", "mxfp4"])
def test_the_4096_cubed_gemm_scales_over_eight_cores(fmt):
    r = gemm.run(4096, 4096, 4096, fmt, timing_only=True, log=None, cores=8)
    assert r["status"] == "ok" and r["races"]["count"] == 0
    assert r["scaling_efficiency"] >= 0.80, r["scaling_efficiency"]
    assert r["hbm_gbps"] <= r["hbm_share_gbps"] == pytest.approx(8 * 612.5)
    assert len(r["per_core"]) == 8


def test_cores_cli_and_bad_counts(tmp_path):
    out = tmp_path / "o"
    p = _cli(tmp_path, "gemm", "--m", 256, "--k", 512, "--n", 1024, "--weights", "mxfp8",
             "--cores", 2, "--out", out)
    assert p.returncode == 0, p.stderr
    assert "2 cores" in p.stdout and "scaling" in p.stdout
    j = json.loads((out / "report.json").read_text())
    assert j["cores"] == 2 and j["check"]["bit_exact"] is True
    for bad in ("0", "-1", "x"):
        p = _cli(tmp_path, "gemm", "--m", 8, "--k", 64, "--n", 8, "--weights", "mxfp8",
                 "--cores", bad, "--out", out)
        assert p.returncode != 0 and "--cores" in p.stderr, p.stderr
    with pytest.raises(gemm.GemmError, match="cores"):
        gemm.run(8, 64, 8, "mxfp8", cores=2, placement="sbuf", log=None)
    # Fewer rows and columns than cores in every grid: refused naming the shape.
    with pytest.raises(gemm.GemmError, match=r"C of 1 x 4 cannot be split into 8 non-empty"):
        gemm.run(1, 64, 4, "mxfp8", cores=8, timing_only=True, log=None)
    p = _cli(tmp_path, "gemm", "--m", 8, "--k", 64, "--n", 8, "--weights", "mxfp8",
             "--cores", 20, "--timing-only", "--out", out)
    assert p.returncode == 1 and "C of 8 x 8 cannot be split into 20 non-empty blocks" in p.stderr
