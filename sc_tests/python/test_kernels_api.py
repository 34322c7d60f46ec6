"""tpbsim.kernels.run from Python (SPEC §12, §16, docs/KERNELS.md "From Python"):
torch tensors and NumPy arrays alike, m / k / n from the operands, C as
``report.c``, the weight layout explicit, messages naming Python arguments;
the host's quantizers (the model's, compiled) against reference.py's
independent format definitions in either weight layout (a scale one binade
off fails); the sampled check."""

import os
import subprocess
import sys

import numpy as np
import pytest

import reference as ref
import tpbsim
from test_kernels_gemm import _cli, handed_values, ref_activations
from tpbsim.kernels import gemm, plan, quant

FORMATS = list(quant.WEIGHT_FORMATS)
# OCP MX v1.0: emax of each element format (the largest normal's exponent).
OCP_EMAX = {"e4m3": 8, "fp4_e2m1": 2, "fp6_e2m3": 2}
RUN = dict(traces=False, log=None)


def wide_weights(k, n, seed):
    """K x N float32 with a wide range per 32-k block: N(0, 1) x 2^e, e in -12..12
    per block, a zero block, a block of subnormals, one huge value."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((k, n)) * np.exp2(rng.integers(-12, 13, (k // 32, 1, n))).repeat(
        32, axis=0).reshape(k, n)
    w = w.astype(np.float32)
    w[:32, 0] = 0
    w[32:64, 1] = np.float32(1e-40) * np.arange(32)
    w[5, 2] = 3e38
    return w


def ref_mx_k(w, code):
    """MX along k (blocks of 32 k of a column), from the OCP rule: scale = largest
    biased FP32 exponent - emax, clamped to [0, 254]; codes RNE, saturating;
    values code x 2^(s-127) in FP32. w: [K][N] float32."""
    k, n = w.shape
    bexp = ((w.view(np.uint32) >> 23) & 0xFF).astype(np.int64).reshape(k // 32, 32, n)
    s = np.clip(bexp.max(axis=1) - OCP_EMAX[code], 0, 254)
    s_el = np.repeat(s, 32, axis=0)
    codes = ref.encode(code, w.astype(np.float64) * np.exp2(127.0 - s_el))
    used = (ref.decode(code, codes).astype(np.float32) *
            np.exp2(s_el - 127.0).astype(np.float32)).astype(np.float32)
    return codes, s, used


def ref_group8(w, fmt):
    """fp4 / int4 / nf4 from docs/KERNELS.md: a partition's stream (byte 4n + l =
    W[4p + l][n]) in groups of 8; fp4 the OCP rule (emax 2), int4 / nf4 the
    smallest power of two with |x| / 2^(s-127) <= 7 (resp. 1); POOL's value is
    RNE to its FP8 output of code x 2^(s-127). Returns (scales [K/4][N/2], values
    [K][N])."""
    k, n = w.shape
    code = {"fp4": "fp4_e2m1", "int4": "int4", "nf4": "nf4"}[fmt]
    out = {"fp4": "e5m2", "int4": "e5m2", "nf4": "e4m3"}[fmt]
    stream = w.reshape(k // 4, 4, n).transpose(0, 2, 1).reshape(k // 4, n // 2, 8)
    amax = np.abs(stream).max(axis=2).astype(np.float64)
    if fmt == "fp4":
        bexp = ((amax.astype(np.float32).view(np.uint32) >> 23) & 0xFF).astype(np.int64)
        s = np.clip(bexp - OCP_EMAX[code], 0, 254)
    else:
        top = 7.0 if fmt == "int4" else 1.0
        e = np.zeros(amax.shape)                 # the smallest e with amax <= top x 2^e
        for _ in range(300):
            e = np.where((amax > 0) & (amax > top * np.exp2(e)), e + 1, e)
            e = np.where((amax > 0) & (amax <= top * np.exp2(e - 1)), e - 1, e)
        s = np.clip(e + 127, 0, 254).astype(np.int64)
    s_el = np.repeat(s[:, :, None], 8, axis=2)
    codes = ref.encode(code, stream.astype(np.float64) * np.exp2(127.0 - s_el))
    v = ref.decode(code, codes) * np.exp2(s_el - 127.0)
    vals = ref.decode(out, ref.encode(out, v))     # the exact product, RNE, saturating
    return s, vals.reshape(k // 4, n, 4).transpose(0, 2, 1).reshape(k, n).astype(np.float32)


def chunk_scales(qw, k, n):
    """The E8M0 scales of the group-8 chunks (word 0 of every 5)."""
    w = qw.data.view("<u4").astype(np.int64).reshape(k // 4, n // 8, 5)
    return np.stack([(w[..., 0] >> (8 * g)) & 0xFF for g in range(4)], axis=2).reshape(k // 4,
                                                                                    n // 2)


def check_weights(plan, w, qw):
    """The quantized ``qw`` of padded W [Kpad][Npad] against reference.py's format
    definitions: its scales, the values the bytes it hands the hardware decode
    to, and its w_used."""
    fmt, (k, n) = plan.weights, w.shape
    got = handed_values(plan, qw)                 # decoded from the bytes, by reference.py
    spec = quant.WEIGHT_FORMATS[fmt]
    if spec["store"] == "mx" or fmt == "fp6":
        _, s, used = ref_mx_k(w, spec["code"])
        np.testing.assert_array_equal(qw.scales, s, err_msg=f"{fmt}: scales")
    elif fmt == "bf16":
        bits = ref.encode_bf16(w)
        lay = bits.reshape(k // 4, 4, n).transpose(0, 2, 1).reshape(k // 4, 4 * n)
        np.testing.assert_array_equal(qw.data.view("<u2"), lay, err_msg="bf16: BF16 codes")
        _, s, used = ref_mx_k(ref.decode("bf16", bits).astype(np.float32), "e4m3")
    else:
        s, used = ref_group8(w, fmt)
        np.testing.assert_array_equal(chunk_scales(qw, k, n), s, err_msg=f"{fmt}: scales")
    np.testing.assert_array_equal(got.view(np.uint32), used.view(np.uint32),
                                  err_msg=f"{fmt}: handed values")
    np.testing.assert_array_equal(qw.used.view(np.uint32), used.view(np.uint32),
                                  err_msg=f"{fmt}: w_used")


def check_weights_against_reference(fmt, k=256, n=64, seed=3):
    w = wide_weights(k, n, seed)
    check_weights(gemm.Plan(1, k, n, fmt, "mariana"), w, quant.quantize_weights(w, fmt))


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_weight_format_matches_the_format_definitions(fmt):
    check_weights_against_reference(fmt)


@pytest.mark.parametrize("fmt,key", [("mxfp4", "emax"), ("mxfp8", "emax"), ("fp6", "emax")])
def test_a_scale_one_binade_off_fails_the_reference_comparison(fmt, key, monkeypatch):
    """The mutation of issue 34 (MXFP4 emax 2 -> 1 in quant.py) must fail."""
    monkeypatch.setitem(quant.WEIGHT_FORMATS, fmt, {**quant.WEIGHT_FORMATS[fmt],
                                                    key: quant.WEIGHT_FORMATS[fmt][key] - 1})
    with pytest.raises(AssertionError):
        check_weights_against_reference(fmt)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("layout", ["kn", "nk"])
def test_the_host_side_matches_the_format_definitions_in_either_layout(fmt, layout):
    """prepare(): A's BF16 codes and the values the PE multiplies, and W
    quantized from either layout, against reference.py (ragged shapes padded,
    values over 40 binades, zero and subnormal blocks, a value near FLT_MAX)."""
    for m, k, n, arch in ((5, 300, 200, "mariana"), (130, 1060, 24, "maverick")):
        plan = gemm.Plan(m, k, n, fmt, arch)
        rng = np.random.default_rng(k)
        a = (rng.standard_normal((m, k)) * np.exp2(rng.integers(-20, 20, (m, k)))).astype(
            np.float32)
        w_pad = np.zeros((plan.kpad, plan.npad), np.float32)
        w_pad[:k, :n] = wide_weights(plan.kpad, plan.npad, n)[:k, :n]
        wl = w_pad[:k, :n] if layout == "kn" else np.ascontiguousarray(w_pad[:k, :n].T)
        a_bits, a_used, qw = gemm.prepare(plan, a, wl, layout)
        a_pad = np.zeros((m, plan.kpad), np.float32)
        a_pad[:, :k] = a
        bits, used = ref_activations(a_pad)
        np.testing.assert_array_equal(a_bits, bits)
        np.testing.assert_array_equal(a_used.view(np.uint32), used.view(np.uint32))
        check_weights(plan, w_pad, qw)


# ----------------------------------------------------------------- run() from Python

def test_numpy_and_torch_operands_alike_shapes_inferred_c_returned():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 7, 100)).astype(np.float32)
    w = rng.standard_normal((100, 45)).astype(np.float32)
    rn = gemm.run(a=a, w=w, weights="mxfp8", **RUN)
    assert isinstance(rn.c, np.ndarray) and rn.c.shape == (3, 7, 45)
    assert rn["shape"]["m"] == 21 and rn["shape"]["k"] == 100 and rn["shape"]["n"] == 45
    rt = gemm.run(a=torch.from_numpy(a), w=torch.from_numpy(w.T.copy()), w_layout="nk",
                  weights="mxfp8", **RUN)
    assert isinstance(rt.c, torch.Tensor) and tuple(rt.c.shape) == (3, 7, 45)
    np.testing.assert_array_equal(rt.c.numpy().view(np.uint32), rn.c.view(np.uint32))
    # C is the FP32 k-ascending sum of the quantized operands (reference.py's sum).
    want = ref.matmul_fp32(rn["_arrays"]["a_used_pad"].T, rn["_arrays"]["w_used_pad"])[:, :45]
    np.testing.assert_array_equal(rn.c_array.reshape(21, 45).view(np.uint32),
                                  want.view(np.uint32))
    assert rn.a_used.shape == (21, 100) and rn.w_used.shape == (100, 45)
    # float64 / float16 / bfloat16 are converted.
    r = gemm.run(a=torch.ones(4, 64, dtype=torch.bfloat16), w=np.ones((64, 8)), weights="mxfp4",
                 **RUN)
    assert r["check"]["bit_exact"] is True


def test_a_transposed_looking_w_is_refused_naming_w_layout():
    torch = pytest.importorskip("torch")
    a = np.ones((4, 64), np.float32)
    with pytest.raises(tpbsim.InputError, match=r"^w is 10 x 64 and a has 64 columns: w looks "
                                                r"transposed for w_layout='kn'.*pass "
                                                r"w_layout='nk'"):
        gemm.run(a=a, w=np.ones((10, 64), np.float32), weights="mxfp8", **RUN)
    with pytest.raises(gemm.GemmError, match=r"w looks transposed for w_layout='nk'.*"
                                             r"w_layout='kn'"):
        gemm.run(a=a, w=np.ones((64, 10), np.float32), w_layout="nk", weights="mxfp8", **RUN)
    # A square layer's weight cannot be told by its shape: a Parameter must say its layout.
    lin = torch.nn.Linear(64, 64)
    with pytest.raises(gemm.GemmError, match=r"^w is an nn.Parameter .* say w_layout='nk'"):
        gemm.run(a=a, w=lin.weight, weights="mxfp8", **RUN)
    r = gemm.run(a=a, w=lin.weight.detach(), w_layout="nk", weights="mxfp8", **RUN)
    assert r["w_layout"] == "nk"


def test_the_layouts_give_the_same_c_and_weights_quantized_once_too():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((40, 200)).astype(np.float32)
    w = rng.standard_normal((200, 72)).astype(np.float32)
    kn = gemm.run(a=a, w=w, weights="mxfp4", arch="maverick", **RUN)
    nk = gemm.run(a=a, w=w.T, w_layout="nk", weights="mxfp4", arch="maverick", **RUN)
    q = gemm.quantize(w.T, "mxfp4", "maverick", w_layout="nk")
    with tpbsim.Core("maverick") as core:
        once = [gemm.run(a=a, w=q, weights="mxfp4", arch="maverick", core=core, **RUN)
                for _ in range(2)]
    for r in (nk, *once):
        np.testing.assert_array_equal(r.c.view(np.uint32), kn.c.view(np.uint32))
    with pytest.raises(gemm.GemmError, match=r"^w was quantized for mxfp4 on maverick, the run "
                                             r"is weights='mxfp8' arch='mariana'"):
        gemm.run(a=a, w=q, weights="mxfp8", **RUN)


def test_format_names_say_what_runs():
    r = gemm.run(8, 64, 8, "bf16", **RUN)
    assert "MXFP8 E4M3 on the DVE" in r["weights_run_as"]
    assert "MXFP8 E4M3" in r["act_run_as"]
    for fmt in FORMATS:
        assert gemm.RUNS_AS[fmt]


def test_the_check_is_sampled_stated_seeded_and_full_on_request():
    r = gemm.run(200, 128, 512, "mxfp8", seed=5, **RUN)
    chk = r["check"]
    assert chk["mode"] == "sample" and chk["checked"] == gemm.CHECK_SAMPLES
    assert chk["of"] == 200 * 512 and chk["seed"] == 5 and chk["bit_exact"] is True
    assert "check_s" in r["wall"] and r["wall_seconds"] >= r["wall"]["check_s"]
    full = gemm.run(200, 128, 512, "mxfp8", check="full", **RUN)["check"]
    assert full["mode"] == "full" and full["checked"] == 200 * 512 and full["bit_exact"] is True
    small = gemm.run(8, 64, 8, "mxfp8", **RUN)["check"]
    assert small["mode"] == "full" and small["checked"] == 64
    assert gemm.run(8, 64, 8, "mxfp8", check=False, **RUN)["check"]["bit_exact"] is None
    # A wrong row is found by the sample (4096 of 102400 elements: about 20 in a row).
    c = r.c.copy()
    c[17] += 1
    bad = gemm.check_result(c, r["_arrays"]["a_used_pad"], r["_arrays"]["w_used_pad"], "sample",
                            seed=5)
    assert bad["bit_exact"] is False and bad["mismatches"] > 0
    assert all(row == 17 for row, _ in bad["first"])


def test_messages_name_python_arguments():
    torch = pytest.importorskip("torch")
    cases = [
        (dict(m=0, k=64, n=8), r"^m=0: must be a positive integer"),
        (dict(m=8, k=64), r"^n needed \(or the operands a / w"),
        (dict(m=8, k=64, n=8, weights="fp32"), r"^weights='fp32': not a weight format"),
        (dict(m=8, k=64, n=8, w_layout="t"), r"^w_layout='t': 'kn' .* or 'nk'"),
        (dict(m=8, k=64, n=8, check="most"), r"^check='most': "),
        (dict(m=8, k=64, n=8, out=""), r"^out='': an empty path"),
        (dict(m=8, k=64, n=8, timing="nope.json"), r"^timing='nope.json': no such file"),
        (dict(a=np.ones((4, 64)), m=5), r"^a is 4 x 64, the GEMM needs m = 5 \(m=5\)"),
        (dict(a=torch.ones(4, 64, dtype=torch.int64), n=8), r"^a: a int64 tensor; .*real "
                                                             r"floating-point"),
        (dict(a=torch.ones(4, 64, dtype=torch.complex64), n=8), r"^a: a complex64 tensor"),
        (dict(a=torch.ones(4, 64, device="meta"), n=8), r"^a: a tensor on meta; .*a\.cpu\(\)"),
        (dict(a=torch.ones(4, 64, requires_grad=True), n=8), r"^a requires grad: .*a\.detach\(\)"),
        (dict(a=torch.full((4, 64), float("inf")), n=8), r"^a holds inf at \(0, 0\)"),
        (dict(a=np.ones((4, 64)), w=np.full((64, 8), np.nan)), r"^w holds nan at \(0, 0\)"),
        (dict(a=np.ones(64), n=8), r"^a: 1-D; the GEMM takes rows of K values"),
        (dict(a=np.ones((4, 64)), w=np.ones((2, 64, 8))), r"^w: 3-D; the GEMM takes a 2-D"),
    ]
    for kw, msg in cases:
        with pytest.raises(tpbsim.InputError, match=msg):
            gemm.run(**{"weights": "mxfp8", **kw}, **RUN)
    with tpbsim.Core("mariana") as core:
        # Another core may be open: the run makes its own.
        assert gemm.run(8, 64, 8, "mxfp8", **RUN)["status"] == "ok"
        with pytest.raises(gemm.GemmError, match=r"^core is a mariana core, the run is "
                                                 r"arch='maverick'"):
            gemm.run(8, 64, 8, "mxfp8", arch="maverick", core=core, **RUN)
        assert gemm.run(8, 64, 8, "mxfp8", core=core, **RUN)["status"] == "ok"
        assert not core.closed   # a given core stays open


def test_the_command_line_still_names_flags(tmp_path):
    np.save(tmp_path / "w.npy", np.ones((10, 64), np.float32))
    np.save(tmp_path / "a.npy", np.ones((4, 64), np.float32))
    p = _cli(tmp_path, "gemm", "--a", "a.npy", "--w", "w.npy", "--weights", "mxfp8",
             "--no-traces")
    assert p.returncode == 1
    assert ("--w is 10 x 64 and --a has 64 columns: --w looks transposed for --w-layout 'kn'"
            in p.stderr and "pass --w-layout 'nk'" in p.stderr), p.stderr
    p = _cli(tmp_path, "gemm", "--a", "a.npy", "--w", "w.npy", "--w-layout", "nk", "--weights",
             "mxfp8", "--no-traces", "--check", "full", "--out", "o")
    assert "every element of out.npy equals" in p.stdout, (p.stdout, p.stderr)
    assert np.load(tmp_path / "o" / "out.npy").shape == (4, 10)
    # A of more than two dimensions: the leading ones are rows.
    np.save(tmp_path / "a3.npy", np.ones((2, 3, 64), np.float32))
    p = _cli(tmp_path, "gemm", "--a", "a3.npy", "--w", "w.npy", "--w-layout", "nk", "--weights",
             "mxfp4", "--no-traces", "--out", "o3")
    assert p.returncode in (0, 2) and "C = A @ W: 6 x 64 x 10" in p.stdout, p.stderr


def _cli_python(code):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(d) for d in
                                        env.get("PYTHONPATH", "").split(os.pathsep) if d)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)


def test_import_tpbsim_and_run_without_torch():
    code = ("import sys; sys.modules['torch'] = None\n"
            "import tpbsim, tpbsim.kernels\n"
            "r = tpbsim.kernels.run(8, 64, 8, 'mxfp4', traces=False, log=None)\n"
            "print(r['check']['bit_exact'])\n"
            "try:\n    import tpbsim.torch\nexcept ImportError as e:\n"
            "    assert 'python3-torch' in str(e), e\n    print('no torch')\n")
    p = _cli_python(code)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["True", "no", "torch"]


def test_an_interpreter_without_numpy_is_told_which_to_use():
    """A pyenv or venv python3 without NumPy (issue 34): one ImportError naming the
    interpreters that work, not `No module named 'numpy'` from inside the package."""
    p = _cli_python("import sys; sys.modules['numpy'] = None\nimport tpbsim\n")
    assert p.returncode == 1
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: tpbsim needs NumPy, which this interpreter")
    assert "/usr/bin/python3" in last and "build/tpbsim-python" in last


def test_default_capacities_are_the_generations_profiles():
    """gemm.DEFAULT_CAPACITIES (and default_capacities(arch)) read the model's own
    profile: the capacities a core of that generation has (CONVENTIONS.md: SBUF
    192 KiB on v2, 256 KiB on v4 / v5; PSUM 16 KiB; HBM 18 GiB on v4)."""
    assert gemm.DEFAULT_CAPACITIES == (256 * 1024, 16 * 1024, 18 * 2**30)
    for arch in tpbsim.ARCHS:
        with tpbsim.Core(arch) as core:
            assert plan.default_capacities(arch) == gemm.capacities(core), arch
    assert plan.default_capacities("sunda").sbuf == 192 * 1024
