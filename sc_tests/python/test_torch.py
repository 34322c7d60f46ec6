"""tpbsim.torch (SPEC §16, docs/PYTHON.md "PyTorch"): converted nn.Linear layers
against an oracle built here from reference.py's format definitions (BF16 then
MXFP8 E4M3 activations, the weights' MX quantization from the OCP rule, the FP32
k-ascending sum, the bias added in FP32), bit for bit, on 3-D inputs with odd K
and N, with and without bias, on both arches; convert / profile; the
straight-through backward; bad input named."""

import json
import os

import numpy as np
import pytest

import reference as ref
import tpbsim

torch = pytest.importorskip("torch")
import tpbsim.torch as tt  # noqa: E402  (needs torch)

OCP_EMAX = {"mxfp8": ("e4m3", 8), "mxfp4": ("fp4_e2m1", 2)}


@pytest.fixture(autouse=True)
def _release():
    yield
    tt.release()


def _pad(n, to):
    return -(-n // to) * to


def oracle(x, weight, bias, weights):
    """The layer's output from the format definitions: x [..., K] float32 tensor,
    weight [N][K] (torch's layout), bias [N] or None."""
    k = x.shape[-1]
    n = weight.shape[0]
    kpad = _pad(k, 128)
    a = np.zeros((int(np.prod(x.shape[:-1])), kpad), np.float32)
    a[:, :k] = x.detach().reshape(-1, k).numpy()
    # Activations: BF16 (RNE), then QuantizeMX's blocks of 32 k of a row, E4M3, emax 8.
    ab = ref.decode("bf16", ref.encode_bf16(a)).astype(np.float32)
    a_used = mx_along_k(ab, "e4m3", 8)
    # Weights: W^T (K x N), MX along k straight from FP32.
    w = np.zeros((kpad, n), np.float32)
    w[:k] = weight.detach().numpy().T
    code, emax = OCP_EMAX[weights]
    w_used = mx_along_k(w.T.copy(), code, emax).T
    c = ref.matmul_fp32(a_used.T, w_used)          # FP32 k-ascending sum
    if bias is not None:
        c = (c + bias.detach().numpy().astype(np.float32)).astype(np.float32)
    return c.reshape(*x.shape[:-1], n)


def mx_along_k(v, code, emax):
    """[R][K] float32, blocks of 32 along each row: scale = largest biased exponent -
    emax (clamped), codes RNE saturating, value code x 2^(s-127) in FP32."""
    r, k = v.shape
    bexp = ((v.view(np.uint32) >> 23) & 0xFF).astype(np.int64).reshape(r, k // 32, 32)
    s = np.repeat(np.clip(bexp.max(axis=2) - emax, 0, 254), 32, axis=1)
    codes = ref.encode(code, v.astype(np.float64) * np.exp2(127.0 - s))
    return (ref.decode(code, codes).astype(np.float32) *
            np.exp2(s - 127.0).astype(np.float32)).astype(np.float32)


@pytest.mark.parametrize("arch", ["mariana", "maverick"])
@pytest.mark.parametrize("weights", ["mxfp8", "mxfp4"])
def test_converted_layers_equal_the_oracle_bit_for_bit(arch, weights):
    torch.manual_seed(4)
    model = torch.nn.Sequential(torch.nn.Linear(77, 45), torch.nn.GELU(),
                                torch.nn.Linear(45, 13, bias=False))
    x = torch.randn(3, 5, 77) * 4
    h_in = x
    tt.convert(model, weights=weights, arch=arch)
    y = model(x).detach()
    assert y.dtype == torch.float32 and tuple(y.shape) == (3, 5, 13)
    h = oracle(h_in, model[0].weight, model[0].bias, weights)
    np.testing.assert_array_equal(model[0](x).detach().numpy().view(np.uint32), h.view(np.uint32))
    g = torch.nn.functional.gelu(torch.from_numpy(h))
    want = oracle(g, model[2].weight, None, weights)
    np.testing.assert_array_equal(y.numpy().view(np.uint32), want.view(np.uint32))


def test_linear_is_an_nn_linear_with_any_leading_shape_and_the_module_dtype():
    torch.manual_seed(1)
    lin = tt.Linear(33, 7, weights="mxfp8", arch="maverick")
    assert isinstance(lin, torch.nn.Linear)
    for shape in [(33,), (4, 33), (2, 3, 33), (2, 1, 3, 33), (0, 33)]:
        y = lin(torch.randn(*shape))
        assert tuple(y.shape) == shape[:-1] + (7,)
    x = torch.randn(6, 33)
    with torch.no_grad():
        np.testing.assert_array_equal(lin(x).numpy(), oracle(x, lin.weight, lin.bias, "mxfp8"))
    lin64 = tt.Linear(33, 7, weights="mxfp8", dtype=torch.float64)
    y = lin64(torch.randn(2, 33, dtype=torch.float64))
    assert y.dtype == torch.float64


def test_convert_swaps_in_place_shares_parameters_and_quantizes_once(monkeypatch):
    torch.manual_seed(2)
    model = torch.nn.Sequential(torch.nn.Linear(16, 24), torch.nn.ReLU(),
                                torch.nn.Sequential(torch.nn.Linear(24, 8), torch.nn.Linear(8, 4)))
    w0 = model[0].weight
    keys = list(model.state_dict())
    calls = []
    orig = tpbsim.kernels.gemm.quantize
    monkeypatch.setattr(tpbsim.kernels.gemm, "quantize",
                        lambda *a, **k: calls.append(a[1:]) or orig(*a, **k))
    out = tt.convert(model, weights="mxfp4", layers=["0", "2.1"])
    assert out is model and isinstance(model[0], tt.Linear) and isinstance(model[2][1], tt.Linear)
    assert type(model[2][0]) is torch.nn.Linear           # not selected
    assert model[0].weight is w0 and list(model.state_dict()) == keys
    assert len(calls) == 2                                  # at conversion
    x = torch.randn(5, 16)
    model(x)
    model(x)
    assert len(calls) == 2                                  # not per call
    with torch.no_grad():
        model[0].weight.mul_(2)                             # an in-place update
    model(x)
    assert len(calls) == 3                                  # quantized again, once
    # A function selects too; a layer converted before is converted again.
    tt.convert(model, weights="mxfp8", layers=lambda name, m: name.startswith("2."))
    assert model[2][0].weights == "mxfp8" and model[2][1].weights == "mxfp8"
    assert model[0].weights == "mxfp4"
    # A layer used twice is swapped for one converted layer, still shared.
    shared = torch.nn.Linear(8, 8)
    twice = torch.nn.Sequential(shared, torch.nn.ReLU(), shared)
    tt.convert(twice, weights="mxfp8")
    assert isinstance(twice[0], tt.Linear) and twice[0] is twice[2]
    # A model that is an nn.Linear comes back converted.
    lin = tt.convert(torch.nn.Linear(8, 3), weights="mxfp8")
    assert isinstance(lin, tt.Linear)


def test_profile_lists_every_layer_call_and_one_perfetto_timeline(tmp_path, capsys):
    torch.manual_seed(3)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
    x = torch.randn(32, 64)
    tt.convert(model, weights="mxfp8", arch="mariana")
    prof = tt.profile(model, x, perfetto=tmp_path / "t.json")
    assert [p["name"] for p in prof.layers] == ["0", "2"]
    assert [(p["m"], p["k"], p["n"]) for p in prof.layers] == [(32, 64, 128), (32, 128, 10)]
    for p in prof.layers:
        assert {"name", "m", "k", "n", "weights", "simulated_ns", "achieved_tflops", "bound_by",
                "hbm_bytes"} <= set(p)
        assert p["simulated_ns"] > 0 and p["hbm_bytes"] > 0
    assert prof.total_ns == sum(p["simulated_ns"] for p in prof.layers)
    np.testing.assert_array_equal(prof.output.numpy(), model(x).detach().numpy())
    out = capsys.readouterr().out
    assert "simulated us" in out and "total" in out
    ev = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    spans = [e for e in ev if e.get("pid") == 0 and e.get("ph") == "X"]
    assert [s["name"] for s in spans] == ["0", "2"]
    assert spans[1]["ts"] >= spans[0]["ts"] + spans[0]["dur"]   # one timeline, in order
    assert any(e.get("name") == "matmul_mx" for e in ev)


def test_backward_is_straight_through():
    torch.manual_seed(5)
    lin = torch.nn.Linear(40, 12)
    ref_lin = torch.nn.Linear(40, 12)
    ref_lin.load_state_dict(lin.state_dict())
    conv = tt.convert(lin, weights="mxfp8")
    x = torch.randn(2, 3, 40, requires_grad=True)
    x2 = x.detach().clone().requires_grad_()
    gy = torch.randn(2, 3, 12)
    conv(x).backward(gy)
    ref_lin(x2).backward(gy)
    assert torch.equal(x.grad, x2.grad)
    assert torch.equal(conv.weight.grad, ref_lin.weight.grad)
    assert torch.equal(conv.bias.grad, ref_lin.bias.grad)


def test_bad_input_is_named():
    lin = tt.Linear(16, 4, weights="mxfp8")
    cases = [
        (torch.ones(2, 16, dtype=torch.int32), r"input: a int32 tensor; the layer takes real"),
        (torch.ones(2, 16, dtype=torch.complex64), r"input: a complex64 tensor"),
        (torch.ones(2, 16, device="meta"), r"input: a tensor on meta; .*x\.cpu\(\)"),
        (torch.ones(2, 15), r"input is 2 x 15: its last dimension must be in_features = 16"),
        (torch.full((2, 16), float("nan")), r"input holds nan at \(0, 0\)"),
        (torch.full((2, 16), float("-inf")), r"input holds -inf at \(0, 0\)"),
        (np.ones((2, 16), np.float32), r"input: a ndarray, not a torch.Tensor"),
    ]
    for x, msg in cases:
        with pytest.raises(tpbsim.InputError, match=r"^tpbsim.torch.Linear\(16, 4\): " + msg):
            lin(x)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8))
    tt.convert(model, weights="mxfp8")
    with pytest.raises(tpbsim.InputError, match=r"^layer 0: input is 3 x 9: its last dimension"):
        model(torch.ones(3, 9))
    # convert: an nn.Linear subclass, no Linear, not a model, unknown names, bad formats.
    mha = torch.nn.Sequential(torch.nn.MultiheadAttention(8, 2))
    with pytest.raises(tpbsim.InputError, match=r"^module '0.out_proj' is a .*"
                                                r"NonDynamicallyQuantizableLinear, a subclass of "
                                                r"nn.Linear .* layers="):
        tt.convert(mha)
    with pytest.raises(tpbsim.InputError, match=r"^model \(ReLU\) has no nn.Linear layers"):
        tt.convert(torch.nn.ReLU())
    with pytest.raises(tpbsim.InputError, match=r"^model: a list, not a torch.nn.Module"):
        tt.convert([torch.nn.Linear(2, 2)])
    seq = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
    with pytest.raises(tpbsim.InputError, match=r"^layers: the model has no module 'fc' .*: 0\)"):
        tt.convert(seq, layers=["fc"])
    with pytest.raises(tpbsim.InputError, match=r"^layers: '1' is a ReLU, not an nn.Linear"):
        tt.convert(seq, layers=["1"])
    with pytest.raises(tpbsim.InputError, match=r"^weights='fp32': not a weight format"):
        tt.convert(seq, weights="fp32")
    with pytest.raises(tpbsim.InputError, match=r"^arch='cayman': CAYMAN"):
        tt.convert(seq, arch="cayman")
    bad = torch.nn.Linear(8, 8)
    with torch.no_grad():
        bad.weight[1, 2] = float("inf")
    with pytest.raises(tpbsim.InputError, match=r"^layer Linear: weight holds inf at \(1, 2\)"):
        tt.convert(bad)
    with pytest.raises(tpbsim.InputError, match=r"no tpbsim.torch.Linear layer: convert it first"):
        tt.profile(torch.nn.Sequential(torch.nn.Linear(2, 2)), torch.ones(1, 2))


def test_the_layers_core_lives_beside_a_core_of_ones_own():
    """Any number of cores per process (docs/PYTHON.md): the layers' core stays
    open beside a user's Core and beside the one tpbsim.kernels.run makes, and
    release() closes it (the next forward makes it again)."""
    lin = tt.Linear(16, 4, weights="mxfp8")
    want = lin(torch.ones(2, 16))
    layers_core = tt.core("mariana")
    with tpbsim.Core("mariana") as mine:
        assert mine is not layers_core and not layers_core.closed
        assert torch.equal(lin(torch.ones(2, 16)), want)
    assert tpbsim.kernels.run(8, 64, 8, "mxfp8", traces=False, log=None)["status"] == "ok"
    assert tt.core("mariana") is layers_core and not layers_core.closed
    assert tt.release() is True and layers_core.closed
    assert torch.equal(lin(torch.ones(2, 16)), want)


def test_the_digits_example_runs_and_keeps_its_accuracy():
    """examples/python/digits_mlp.py (docs/PYTHON.md "PyTorch"): trains, converts,
    profiles and checks itself; its accuracy lines and profiles are there."""
    pytest.importorskip("sklearn")
    import os
    import pathlib
    import re
    import subprocess
    import sys
    src = pathlib.Path(os.environ.get("TPB_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(d) for d in
                                        env.get("PYTHONPATH", "").split(os.pathsep) if d)
    p = subprocess.run([sys.executable, str(src / "examples" / "python" / "digits_mlp.py")],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, (p.stdout, p.stderr)
    fp32 = float(re.search(r"FP32 on the host: ([\d.]+)% of 450", p.stdout).group(1))
    accs = [float(x) for x in re.findall(r"^accuracy ([\d.]+)%", p.stdout, re.M)]
    assert fp32 > 95 and len(accs) == 2
    assert fp32 - accs[0] <= 1.0 and fp32 - accs[1] <= 3.0
    assert p.stdout.count("total") == 2 and "bound by" in p.stdout


@pytest.mark.parametrize("weights", ["bf16", "fp6", "fp4", "int4", "nf4"])
def test_every_other_weight_format_equals_its_oracle(weights):
    """The other formats through tpbsim.torch: W^T quantized by test_kernels_api's
    reference quantizers (the format definitions), the activations and the sum as
    above; maverick, 3-D input, odd K and N, bias."""
    from test_kernels_api import ref_group8, ref_mx_k
    torch.manual_seed(6)
    lin = torch.nn.Linear(91, 19)
    x = torch.randn(2, 3, 91) * 3
    conv = tt.convert(lin, weights=weights, arch="maverick")
    with torch.no_grad():
        y = conv(x)
    k, n = 91, 19
    kpad, npad = _pad(k, 128), _pad(n, 8)
    w = np.zeros((kpad, npad), np.float32)
    w[:k, :n] = lin.weight.detach().numpy().T
    if weights == "bf16":
        w_used = ref_mx_k(ref.decode("bf16", ref.encode_bf16(w)).astype(np.float32), "e4m3")[2]
    elif weights == "fp6":
        w_used = ref_mx_k(w, "fp6_e2m3")[2]
    else:
        w_used = ref_group8(w, weights)[1]
    a = np.zeros((6, kpad), np.float32)
    a[:, :k] = x.reshape(6, k).numpy()
    a_used = mx_along_k(ref.decode("bf16", ref.encode_bf16(a)).astype(np.float32), "e4m3", 8)
    want = (ref.matmul_fp32(a_used.T, w_used)[:, :n] + lin.bias.detach().numpy()).astype(
        np.float32)
    np.testing.assert_array_equal(y.reshape(6, n).numpy().view(np.uint32), want.view(np.uint32))


# ----------------------------------------------------------------- issue 40

def _fresh(layer, weights):
    """A new tpbsim layer holding `layer`'s present weight and bias."""
    ref_lin = torch.nn.Linear(layer.in_features, layer.out_features)
    with torch.no_grad():
        ref_lin.weight.copy_(layer.weight)
        ref_lin.bias.copy_(layer.bias)
    return tt.Linear.from_linear(ref_lin, weights=weights)


IN_PLACE = {
    "data.mul_": lambda w: w.data.mul_(2),
    "data.copy_": lambda w: w.data.copy_(torch.linspace(-1, 1, w.numel()).reshape(w.shape)),
    "data[0, 0] =": lambda w: w.data.__setitem__((0, 0), 5.0),
    "a NumPy view": lambda w: w.detach().numpy().__setitem__((1, 2), -7.0),
}


@pytest.mark.parametrize("change", list(IN_PLACE))
def test_an_in_place_change_of_the_weight_is_seen(change):
    """Issue 40 item 3: after one forward, `weight.data.mul_(2)`, `.data.copy_`,
    `.data[0, 0] = v` and a write through a NumPy view left the layer computing
    with the old quantized weight (torch's version counter does not move for
    them); bit-equal to a fresh layer of the changed weight, also in a model."""
    torch.manual_seed(11)
    x = torch.randn(3, 64)
    layer = tt.Linear.from_linear(torch.nn.Linear(64, 24), weights="mxfp8")
    model = tt.convert(torch.nn.Sequential(torch.nn.Linear(64, 16), torch.nn.ReLU()),
                       weights="mxfp4")
    with torch.no_grad():
        before = layer(x)
        model(x)
        IN_PLACE[change](layer.weight)
        IN_PLACE[change](model[0].weight)
        after = layer(x)
        assert not torch.equal(after, before)
        assert torch.equal(after, _fresh(layer, "mxfp8")(x))
        assert torch.equal(model(x), torch.relu(_fresh(model[0], "mxfp4")(x)))


def test_a_converted_model_copies_pickles_and_saves_after_a_forward(tmp_path):
    """Issue 40: copy.deepcopy, pickle and torch.save of a converted model failed
    after one forward (the layer's last report held the run's Result); the copies
    compute the same."""
    import copy
    import pickle
    torch.manual_seed(12)
    model = tt.convert(torch.nn.Sequential(torch.nn.Linear(32, 16), torch.nn.ReLU(),
                                           torch.nn.Linear(16, 4)), weights="mxfp8")
    x = torch.randn(2, 32)
    with torch.no_grad():
        y = model(x)
        assert model[0].last_report.result is not None
        for other in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
            assert torch.equal(other(x), y)
            assert other[0].last_report["simulated_ns"] > 0
        torch.save(model, tmp_path / "m.pt")
        assert torch.equal(torch.load(tmp_path / "m.pt")(x), y)


def test_profile_touches_nothing_but_its_perfetto_file(tmp_path):
    """Issue 40 item 8: profile(perfetto=P) wrote and then deleted P.layer0.json,
    P.layer1.json, ...: a user's file of that name was deleted, a link planted
    there followed. The layers' traces are in a private directory; only P is
    written (as a run's outputs are: staged, renamed into place)."""
    torch.manual_seed(13)
    model = tt.convert(torch.nn.Sequential(torch.nn.Linear(32, 16), torch.nn.ReLU(),
                                           torch.nn.Linear(16, 4)), weights="mxfp8")
    x = torch.randn(2, 32)
    p = tmp_path / "t.json"
    (tmp_path / "t.json.layer0.json").write_text("the user's")
    (tmp_path / "t.json.layer1.json").symlink_to(tmp_path / "victim")
    prof = tt.profile(model, x, perfetto=p, print_table=False)
    assert len(prof.layers) == 2
    assert (tmp_path / "t.json.layer0.json").read_text() == "the user's"
    assert (tmp_path / "t.json.layer1.json").is_symlink() and not (tmp_path / "victim").exists()
    assert sorted(os.listdir(tmp_path)) == ["t.json", "t.json.layer0.json", "t.json.layer1.json"]
    spans = [e for e in json.loads(p.read_text())["traceEvents"] if e.get("ph") == "X"]
    assert [s["name"] for s in spans if s.get("pid") == 0] == ["0", "2"]


def test_profile_paths_that_cannot_be_written_are_tpbsim_errors(tmp_path):
    """Issue 40: profile(perfetto=".") / "/dev/full" / "" raised raw OSError
    tracebacks; a bad path is refused before the model runs, a failed write is
    an OutputError, each naming the path."""
    model = tt.convert(torch.nn.Sequential(torch.nn.Linear(8, 4)), weights="mxfp8")
    x = torch.randn(1, 8)
    for path, kind, says in ((".", tpbsim.InputError, "perfetto .: is a directory"),
                             ("", tpbsim.InputError, "perfetto: an empty path"),
                             (tmp_path / "no" / "t.json", tpbsim.InputError, "cannot create"),
                             ("/dev/full", tpbsim.OutputError, "/dev/full: cannot write")):
        with pytest.raises(kind, match=says):
            tt.profile(model, x, perfetto=path, print_table=False)
    assert tt.profile(model, x, perfetto="/dev/null", print_table=False).layers


def test_layers_in_two_threads_take_turns():
    """Issue 40: torch layers forwarded from two threads raised InputError (the
    layers' one core touched while another ran); they take turns."""
    import threading
    torch.manual_seed(14)
    layers = [tt.Linear.from_linear(torch.nn.Linear(64, 16), weights="mxfp8")
              for _ in range(2)]
    x = torch.randn(4, 64)
    with torch.no_grad():
        want = [lay(x) for lay in layers]
    got, errors = {}, []

    def work(i):
        try:
            with torch.no_grad():
                got[i] = [layers[i % 2](x) for _ in range(4)]
        except Exception as e:  # noqa: BLE001 (the test reports any)
            errors.append(f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for i, ys in got.items():
        assert all(torch.equal(y, want[i % 2]) for y in ys)
