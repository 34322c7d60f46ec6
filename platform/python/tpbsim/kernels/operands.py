"""The operands of a GEMM on the host (docs/KERNELS.md "The quantizer", "The
check"): arrays from NumPy, torch or lists, checked; the shape they imply;
W quantized once (Weights); what the hardware is handed and the values the
PE multiplies (prepare); C checked bit for bit against the FP32 k-ascending
sum of those values (check_result)."""

import sys
import time

import numpy as np

from . import quant
from .plan import GemmError, Plan, arg, check_int

CHECK_MODES = ("sample", "full")
#: Output elements the default check computes exactly (chosen with the run's seed).
CHECK_SAMPLES = 4096


FLOAT32_MAX = float(np.finfo(np.float32).max)


def _torch_array(x, what, grad):
    """A torch tensor as a NumPy array of its values (float32, or float64 kept
    for the range check), after the checks a tensor needs: dense, a real
    floating dtype, on the CPU, not requiring grad unless ``grad`` (the
    weights: an nn.Parameter is a layer's weight, read as data)."""
    torch = torch_module()
    dt = str(x.dtype).replace("torch.", "")
    if x.layout != torch.strided:
        raise GemmError(f"{what}: a {str(x.layout).replace('torch.', '')} tensor; the GEMM takes "
                        f"a dense one: pass {what}.to_dense()")
    if x.is_complex() or not x.is_floating_point():
        raise GemmError(f"{what}: a {dt} tensor; the GEMM takes real floating-point values "
                        "(float32; float16, bfloat16 and float64 are converted)")
    if x.device.type != "cpu":
        raise GemmError(f"{what}: a tensor on {x.device}; the modelled core reads host memory: "
                        f"pass {what}.cpu()")
    if x.requires_grad and not grad:
        raise GemmError(f"{what} requires grad: tpbsim.kernels.run is not part of autograd; pass "
                        f"{what}.detach() (tpbsim.torch.Linear has a straight-through backward)")
    x = x.detach()
    if x.dtype == torch.float64:
        return x.contiguous().numpy()
    return x.to(dtype=torch.float32).contiguous().numpy()


def torch_module():
    import torch
    return torch


def is_tensor(x):
    t = sys.modules.get("torch")
    return t is not None and isinstance(x, t.Tensor)


def operand_array(x, what, ndim=2, grad=False):
    """A given operand as a float32 NumPy array: an ndarray, a torch tensor (dense,
    on the CPU, a floating dtype, not requiring grad unless ``grad``) or anything
    NumPy takes (a list); float16 / bfloat16 / float64 are converted, a float64
    value past the float32 range refused. ndim: 2, or None for 2-D or more
    (activations of any leading shape)."""
    if x is None:
        return None
    if is_tensor(x):
        a = _torch_array(x, what, grad)
    else:
        try:
            a = np.asarray(x)
        except Exception as e:   # an object NumPy cannot read
            raise GemmError(f"{what}: a {type(x).__name__} that NumPy cannot read as an array "
                            f"({e})") from None
        if a.dtype.kind != "f" or a.dtype.itemsize > 8:
            raise GemmError(f"{what}: a {a.dtype} array; the GEMM takes float32 (float16 / "
                            "float64 are converted)")
    if ndim is None and a.ndim < 2:
        raise GemmError(f"{what}: {a.ndim}-D; the GEMM takes rows of K values (2-D, or more: "
                        "the leading dimensions are rows)")
    if ndim is not None and a.ndim != ndim:
        raise GemmError(f"{what}: {a.ndim}-D; the GEMM takes a 2-D array")
    if a.dtype.itemsize > 4:
        with np.errstate(invalid="ignore"):
            past = np.isfinite(a) & (np.abs(a) > FLOAT32_MAX)   # float32 cannot hold them
        if past.any():
            at = tuple(int(i) for i in np.argwhere(past)[0])
            raise GemmError(f"{what} holds {a[at]!r} at {at}: past the float32 range "
                            f"(+-{FLOAT32_MAX:.8g}); the GEMM takes float32 values")
    return a.astype(np.float32, copy=False)


def check_finite(x, what):
    if not np.isfinite(x).all():
        at = tuple(int(i) for i in np.argwhere(~np.isfinite(x))[0])
        raise GemmError(f"{what} holds {x[at]} at {at}: the inputs must be finite")


def dims_text(x):
    return " x ".join(map(str, x.shape))


def infer_shape(m, k, n, a, w, w_layout):
    """(m, k, n) from the given sizes and operands (a: [M][K], W: [K][N] for
    w_layout "kn", [N][K] for "nk"), each given size checked against them; a W whose
    shape matches only the other layout is refused naming w_layout."""
    given = {"m": m, "k": k, "n": n}
    for name, v in given.items():
        if v is not None:
            given[name] = check_int(name, v)
    found = {}
    if a is not None:
        found["m"] = [(a.shape[0], arg("a"))]
        found["k"] = [(a.shape[1], arg("a"))]
    if w is not None:
        wk, wn = w.shape if w_layout == "kn" else w.shape[::-1]
        if a is not None and wk != a.shape[1] and wn == a.shape[1]:
            other = "nk" if w_layout == "kn" else "kn"
            raise GemmError(
                f"{arg('w')} is {dims_text(w)} and {arg('a')} has {a.shape[1]} columns: "
                f"{arg('w')} looks transposed for "
                f"{arg('w_layout', w_layout)} (W as K x N); for W stored "
                f"{'[N][K] (torch.nn.Linear.weight: [out, in])' if other == 'nk' else '[K][N]'}"
                f" pass {arg('w_layout', other)}")
        found.setdefault("k", []).append((wk, arg("w")))
        found["n"] = [(wn, arg("w"))]
    out = {}
    for name in ("m", "k", "n"):
        vals = found.get(name, [])
        want = given[name]
        if want is None and vals:
            want = vals[0][0]
        for v, src in vals:
            if v != want:
                layout = "" if src == arg("a") else f" ({arg('w_layout', w_layout)})"
                if name == "k" and given["k"] is None:
                    raise GemmError(f"{arg('a')} is {dims_text(a)} and {arg('w')} is "
                                    f"{dims_text(w)}{layout}: their K "
                                    f"differ ({a.shape[1]} and {v})")
                raise GemmError(f"{src} is {dims_text(a if src == arg('a') else w)}{layout}, the GEMM "
                                f"needs {name} = {want} ({arg(name, want)})")
        out[name] = want
    missing = [x for x in ("m", "k", "n") if out[x] is None]
    if missing:
        raise GemmError(f"{', '.join(arg(x) for x in missing)} needed (or the operands "
                        f"{arg('a')} / {arg('w')} to take them from)")
    return out["m"], out["k"], out["n"]


class Weights:
    """W quantized once, for any number of GEMMs C = A @ W with any M (what
    tpbsim.torch keeps per layer): ``quantize(w, weights, arch, w_layout)``.
    ``.k``, ``.n``, ``.weights``, ``.arch``, ``.used`` (the K x N float32 values the
    PE multiplies) and ``.qw`` (quant.QuantizedWeights of the padded K x N)."""

    def __init__(self, w, weights="mxfp4", arch="mariana", w_layout="kn"):
        if w_layout not in ("kn", "nk"):
            raise GemmError(f"{arg('w_layout', w_layout)}: 'kn' (W is K x N, C = A @ W) or "
                            "'nk' (W is N x K, torch's [out, in]: C = A @ W.T)")
        w = operand_array(w, arg("w"))
        plan = Plan(1, *(w.shape if w_layout == "kn" else w.shape[::-1]), weights, arch)
        check_finite(w, arg("w"))
        self.k, self.n, self.weights, self.arch = plan.k, plan.n, weights, arch
        self.kpad, self.npad = plan.kpad, plan.npad
        t0 = time.perf_counter()
        self.qw = _quantize_w(plan, w, w_layout)
        self.seconds = time.perf_counter() - t0

    @property
    def used(self):
        return self.qw.used[:self.k, :self.n]


def quantize(w, weights="mxfp4", arch="mariana", w_layout="kn"):
    """W quantized once (a Weights) for run(w=...): the host's work on the weights
    is not repeated per call. Raises GemmError naming what is wrong."""
    return Weights(w, weights, arch, w_layout)


def _quantize_w(plan, w, w_layout):
    if w_layout == "nk":
        w_pad = w if w.shape == (plan.npad, plan.kpad) else None
        if w_pad is None:
            w_pad = np.zeros((plan.npad, plan.kpad), dtype=np.float32)
            w_pad[:plan.n, :plan.k] = w
    else:
        w_pad = w if w.shape == (plan.kpad, plan.npad) else None
        if w_pad is None:
            w_pad = np.zeros((plan.kpad, plan.npad), dtype=np.float32)
            w_pad[:plan.k, :plan.n] = w
    return quant.quantize_weights(w_pad, plan.weights, w_layout)


def operands(plan, a=None, w=None, seed=0, w_layout="kn"):
    """A (M x K) and W (K x N, or N x K for w_layout "nk") float32: given, or
    random (A ~ N(0, 1), W ~ N(0, 1/K)), checked finite. A given Weights is
    returned as it is."""
    rng = np.random.default_rng(seed)
    if a is None:
        a = rng.standard_normal((plan.m, plan.k)).astype(np.float32)
    if w is None:
        w = (rng.standard_normal((plan.k, plan.n)) / np.sqrt(plan.k)).astype(np.float32)
        w_layout = "kn"
    a = operand_array(a, arg("a"), ndim=None)
    a = a.reshape(-1, a.shape[-1])
    if a.shape != (plan.m, plan.k):
        raise GemmError(f"{arg('a')} is {dims_text(a)}, the GEMM needs {plan.m} x {plan.k}")
    check_finite(a, arg("a"))
    if isinstance(w, Weights):
        return a, w
    w = operand_array(w, arg("w"))
    shape = (plan.k, plan.n) if w_layout == "kn" else (plan.n, plan.k)
    if w.shape != shape:
        raise GemmError(f"{arg('w')} is {dims_text(w)}, the GEMM needs {shape[0]} x {shape[1]} "
                        f"({arg('w_layout', w_layout)})")
    check_finite(w, arg("w"))
    return a, w


def prepare(plan, a, w, w_layout="kn"):
    """The host side: padded operands, what the hardware is handed and the values
    the PE multiplies (the model's quantizers, quant.py). Returns (a_bits [M][Kpad]
    bf16 codes, a_used [M][Kpad], QuantizedWeights of [Kpad][Npad]). w: K x N
    ("kn"), N x K ("nk") or a Weights (quantized once)."""
    if a.shape[1] == plan.kpad and a.dtype == np.float32:
        a_pad = a
    else:
        a_pad = np.zeros((plan.m, plan.kpad), dtype=np.float32)
        a_pad[:, :plan.k] = a
    if isinstance(w, Weights):
        qw = w.qw
    else:
        qw = _quantize_w(plan, w, w_layout)
    a_bits, a_used = quant.quantize_activations(a_pad)
    return a_bits, a_used, qw


class ShapeOnly:
    """The shape of a quantized W for infer_shape."""

    def __init__(self, shape):
        self.shape = shape


def check_result(c, a_used, w_used, mode="sample", samples=CHECK_SAMPLES, seed=0):
    """C against the FP32 k-ascending sum of a_used x w_used (padded K: the PE's
    sum), bit for bit: every element ("full", or when C has no more than
    `samples`), else `samples` distinct elements chosen with
    numpy.random.default_rng(seed). Returns the report's "check" dict."""
    m, n = c.shape
    ref = ("FP32 sum over k ascending of a_used x w_used, one rounding per multiply and per "
           "add (NumPy)")
    if mode == "full" or m * n <= samples:
        want = quant.fp32_ksum(a_used, w_used)[:, :n]
        bad = c.view(np.uint32) != want.view(np.uint32)
        where = [tuple(int(i) for i in x) for x in np.argwhere(bad)[:5]]
        return {"bit_exact": not bad.any(), "mode": "full", "checked": m * n, "of": m * n,
                "mismatches": int(np.count_nonzero(bad)), "first": where, "reference": ref}
    rng = np.random.default_rng(seed)
    flat = np.sort(rng.choice(m * n, size=samples, replace=False))
    rows, cols = flat // n, flat % n
    want = quant.fp32_ksum_at(a_used, w_used, rows, cols)
    got = c[rows, cols]
    bad = got.view(np.uint32) != want.view(np.uint32)
    where = [(int(rows[i]), int(cols[i])) for i in np.flatnonzero(bad)[:5]]
    return {"bit_exact": not bad.any(), "mode": "sample", "checked": int(samples), "of": m * n,
            "seed": int(seed), "mismatches": int(np.count_nonzero(bad)), "first": where,
            "reference": ref + f"; {samples} elements chosen with numpy.random.default_rng(seed)"
                               " (check='full': every element)"}
