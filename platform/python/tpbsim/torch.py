"""tpbsim.torch: a PyTorch model's Linear layers on the modelled core (SPEC §16,
docs/PYTHON.md "PyTorch"). Needs torch (Debian's python3-torch); ``import
tpbsim`` does not import it.

    import tpbsim.torch
    model = tpbsim.torch.convert(model, weights="mxfp8", arch="mariana")
    prof = tpbsim.torch.profile(model, x)      # prints the per-layer table
    y = prof.output

What runs where:

* The matmul of each converted layer runs on the modelled core (the GEMM
  generator, tpbsim.kernels.run): activations rounded to BF16 and quantized to
  MXFP8 E4M3 by the DVE, weights in the layer's format (``weights=``), FP32
  accumulation in PSUM, FP32 out. The result is checked against the FP32
  k-ascending sum of the quantized operands (sampled, as the gemm command).
* On the host: the weights are transposed and quantized once, at conversion
  (again only if the weight tensor is changed in place, e.g. by an optimizer
  step); the bias is added in FP32 and the result cast to the layer's dtype.
* The converted layers share one core of their own (:func:`core`), remade only
  when a layer of another arch or timing runs; :func:`release` closes it.
  Other tpbsim.Core objects may be open beside it (any number per process,
  docs/PYTHON.md).
* ``backward()`` is straight-through: the gradients are those of the FP32
  ``nn.Linear`` (grad_input = grad_output @ W, grad_W = grad_output^T @ input),
  as if the quantization were the identity.

Bad input (a tensor of an integer or complex dtype, on another device, with
NaN / Inf, of the wrong feature size; a module convert cannot swap) raises a
:class:`tpbsim.InputError` naming the tensor or module and what is wrong.
"""

import atexit
import hashlib
import json
import os
import shutil
import tempfile
import threading

import numpy as np

try:
    import torch
    from torch import nn
except ImportError as e:   # torch missing (or blocked): say what to install
    raise ImportError(f"tpbsim.torch needs PyTorch ({e}): Debian's python3-torch "
                      "(scripts/install-deps.sh); import tpbsim works without it") from e

from . import _args, _tpbsim
from .core import Core
from .errors import Error, InputError, OutputError
from .kernels import gemm

__all__ = ["Linear", "convert", "profile", "Profile", "release", "core"]

_CORE = {"core": None, "key": None}
# Held by a layer's run on the layers' core (and by core() / release()): layers
# called from several threads take turns on it, never close it under another.
_LAYERS = threading.RLock()


def core(arch="mariana", timing=None):
    """The process's core for converted layers: made on first use, remade (the
    previous one closed) when a layer of another arch or timing runs."""
    key = (arch, repr(timing))
    with _LAYERS:
        c = _CORE["core"]
        if c is not None and not c.closed and _CORE["key"] == key:
            return c
        release()
        c = Core(arch, timing)
        _CORE["core"], _CORE["key"] = c, key
        return c


def release():
    """Closes the converted layers' core (the next forward makes it again).
    Returns whether one was open. Other cores may be open beside it (any
    number per process, docs/PYTHON.md)."""
    with _LAYERS:
        c = _CORE["core"]
        _CORE["core"], _CORE["key"] = None, None
        if c is not None and not c.closed:
            c.close()
            return True
        return False


atexit.register(release)

# The profile this thread records (profile()): per-layer dicts, and the
# private directory of the layers' traces.
_RECORD = threading.local()


def _check_input(x, layer):
    what = f"{layer._tpbsim_label()}: input"
    if not isinstance(x, torch.Tensor):
        raise InputError(f"{what}: a {type(x).__name__}, not a torch.Tensor")
    dt = str(x.dtype).replace("torch.", "")
    if x.is_complex() or not x.is_floating_point():
        raise InputError(f"{what}: a {dt} tensor; the layer takes real floating-point values "
                         "(float32, float16, bfloat16, float64)")
    if x.device.type != "cpu":
        raise InputError(f"{what}: a tensor on {x.device}; the modelled core takes CPU tensors "
                         "(x.cpu())")
    if x.dim() < 1 or x.shape[-1] != layer.in_features:
        shape = " x ".join(map(str, x.shape)) or "a scalar"
        raise InputError(f"{what} is {shape}: its last dimension must be in_features = "
                         f"{layer.in_features}")
    if not torch.isfinite(x).all():
        bad = tuple(int(i) for i in torch.nonzero(~torch.isfinite(x))[0])
        raise InputError(f"{what} holds {x[bad].item()} at {bad}: the inputs must be finite")


def _digest(w):
    """SHA-256 of a tensor's bytes (its values as stored, any floating dtype)."""
    t = w.detach().contiguous()
    if t.dtype in (torch.bfloat16, torch.float16):
        t = t.view(torch.int16)
    return hashlib.sha256(t.numpy()).digest()


class _StraightThrough(torch.autograd.Function):
    """The layer's forward on the core; backward as the FP32 linear layer's."""

    @staticmethod
    def forward(ctx, x, weight, bias, layer):
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        return layer._simulate(x)

    @staticmethod
    def backward(ctx, gy):
        x, weight = ctx.saved_tensors
        g = gy.to(weight.dtype)
        gx = g @ weight if ctx.needs_input_grad[0] else None
        gw = (g.reshape(-1, g.shape[-1]).T @ x.reshape(-1, x.shape[-1]).to(weight.dtype)
              if ctx.needs_input_grad[1] else None)
        gb = g.reshape(-1, g.shape[-1]).sum(0) if ctx.has_bias and ctx.needs_input_grad[2] \
            else None
        return gx, gw, gb, None


class Linear(nn.Linear):
    """An ``nn.Linear`` whose matmul runs on the modelled core (SPEC §16).

    ``Linear(in_features, out_features, bias=True, weights="mxfp4",
    arch="mariana", timing=None, check=True, device=None, dtype=None)``

    * ``weights``: the weight format of tpbsim.kernels.run (mxfp4, mxfp8, bf16
      (quantized to MXFP8 on the DVE), nf4, int4, fp4, fp6).
    * ``arch``: mariana or maverick; ``timing``: a timing profile or overrides.
    * ``check``: the result check of each call (True: sampled, "full", False).

    The weight ([out, in], torch's layout) is transposed and quantized once, the
    first time it is needed after it changed (at conversion, and after an
    in-place update such as an optimizer step). Inputs of any leading shape
    (batch x seq x in_features); the output has the same leading shape and the
    layer's dtype. ``last_report`` is the tpbsim.kernels report of the last call.
    """

    def __init__(self, in_features, out_features, bias=True, weights="mxfp4", arch="mariana",
                 timing=None, check=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device=device, dtype=dtype)
        self._tpbsim_setup(weights, arch, timing, check)

    def _tpbsim_setup(self, weights, arch, timing, check):
        gemm.Plan(1, self.in_features, self.out_features, weights, arch)   # names bad ones
        if not (check is None or isinstance(check, bool) or check in gemm.CHECK_MODES):
            raise InputError(f"check={check!r}: True / 'sample', 'full', False")
        self.weights, self.arch, self.timing, self.check = weights, arch, timing, check
        self.last_report = None
        self._tpbsim_path = None
        self._q = None
        self._q_key = None

    @classmethod
    def from_linear(cls, lin, weights="mxfp4", arch="mariana", timing=None, check=True,
                    name=None):
        """A tpbsim Linear sharing ``lin``'s weight and bias Parameters (so a
        state_dict, an optimizer and tied weights keep working); quantizes the
        weight now."""
        new = cls.__new__(cls)
        nn.Module.__init__(new)
        new.in_features, new.out_features = lin.in_features, lin.out_features
        new.register_parameter("weight", lin.weight)
        new.register_parameter("bias", lin.bias)
        new._tpbsim_setup(weights, arch, timing, check)
        new._tpbsim_path = name
        new.train(lin.training)
        new.quantize()
        return new

    def _tpbsim_label(self):
        return f"layer {self._tpbsim_path}" if self._tpbsim_path else \
            f"tpbsim.torch.Linear({self.in_features}, {self.out_features})"

    def quantize(self):
        """Transposes and quantizes the weight (done when needed: at conversion,
        and after the weight changed); returns the tpbsim.kernels.Weights.

        A change is seen by the weight's contents: a SHA-256 of its bytes, taken
        at every call (an in-place change through ``.data``, a NumPy view or
        ``torch.no_grad()`` leaves torch's version counter as it was; the hash
        costs about 4 ms a MiB, a small part of any simulated forward)."""
        w = self.weight
        label = f"{self._tpbsim_label()}: weight"
        if w.device.type != "cpu":
            raise InputError(f"{label} is on {w.device}; the modelled core takes CPU tensors "
                             "(model.cpu())")
        if w.is_complex() or not w.is_floating_point():
            raise InputError(f"{label} is {str(w.dtype).replace('torch.', '')}, not a "
                             "floating-point tensor")
        key = (tuple(w.shape), w.dtype, _digest(w))
        if self._q is not None and self._q_key == key:
            return self._q
        wf = w.detach().to(torch.float32).numpy()
        if not np.isfinite(wf).all():
            bad = tuple(int(i) for i in np.argwhere(~np.isfinite(wf))[0])
            raise InputError(f"{label} holds {wf[bad]} at {bad}: the weights must be finite")
        self._q = gemm.quantize(wf, self.weights, self.arch, "nk")
        self._q_key = key
        return self._q

    def _simulate(self, x):
        """The layer on the core (no autograd): FP32 C from the core, + bias in FP32,
        cast to the layer's dtype. Layers of several threads take turns."""
        with _LAYERS:
            q = self.quantize()
            lead = x.shape[:-1]
            a = x.detach().reshape(-1, self.in_features).to(torch.float32).numpy()
            out_dtype = self.weight.dtype
            if a.shape[0] == 0:
                return torch.zeros(*lead, self.out_features, dtype=out_dtype)
            rec = getattr(_RECORD, "layers", None)
            perfetto = None
            if rec is not None and _RECORD.traces is not None:
                perfetto = os.path.join(_RECORD.traces, f"layer{len(rec)}.json")
            try:
                rep = gemm.run(a=a, w=q, weights=self.weights, arch=self.arch,
                               core=core(self.arch, self.timing), traces=False, log=None,
                               check=self.check, perfetto=perfetto)
            except gemm.GemmError as e:
                raise InputError(f"{self._tpbsim_label()}: {e}") from None
        if rep["status"] != "ok":
            raise Error(f"{self._tpbsim_label()}: the run ended in a {rep['status']}: "
                        f"{rep.get('message', '')}")
        if rep["check"]["bit_exact"] is False:
            raise Error(f"{self._tpbsim_label()}: the core's result differs from the FP32 "
                        f"k-ascending sum of its quantized operands at {rep['check']['first']}")
        self.last_report = rep
        if rec is not None:
            rec.append(self._profile_row(rep, perfetto))
        y = torch.from_numpy(np.ascontiguousarray(rep.c_array))
        if self.bias is not None:
            y = y + self.bias.detach().to(torch.float32)
        return y.reshape(*lead, self.out_features).to(out_dtype)

    def _profile_row(self, rep, perfetto):
        return {"name": self._tpbsim_path or self._tpbsim_label(), "m": rep["shape"]["m"],
                "k": rep["shape"]["k"], "n": rep["shape"]["n"], "weights": self.weights,
                "arch": self.arch, "simulated_ns": rep["simulated_ns"],
                "achieved_tflops": rep["achieved_tflops"], "bound_by": rep["bound_by"],
                "hbm_bytes": rep["hbm_bytes"], "wall_seconds": rep["wall_seconds"],
                "weights_run_as": rep["weights_run_as"],
                "start_ps": rep.result.start_ps if rep.result is not None else 0,
                "perfetto": perfetto}

    def forward(self, x):
        _check_input(x, self)
        if torch.is_grad_enabled() and (x.requires_grad or self.weight.requires_grad or (
                self.bias is not None and self.bias.requires_grad)):
            return _StraightThrough.apply(x, self.weight, self.bias, self)
        return self._simulate(x)

    def extra_repr(self):
        return (f"{super().extra_repr()}, weights={self.weights}, arch={self.arch} "
                "(tpbsim: the matmul on the modelled core)")


def _select(model, layers):
    """The (qualified name, module) pairs convert swaps."""
    named = dict(model.named_modules())
    if layers is None:
        chosen = [(name, m) for name, m in named.items() if isinstance(m, nn.Linear)]
    elif callable(layers):
        chosen = [(name, m) for name, m in named.items()
                  if isinstance(m, nn.Linear) and layers(name, m)]
    else:
        if isinstance(layers, str):
            layers = [layers]
        try:
            layers = list(layers)
        except TypeError:
            raise InputError(f"layers={layers!r}: None (every nn.Linear), a list of module "
                             "names (model.named_modules()) or a function (name, module) -> "
                             "bool") from None
        chosen = []
        for name in layers:
            if not isinstance(name, str):
                raise InputError(f"layers: {name!r} is not a module name (str)")
            if name not in named:
                linear = [n for n, m in named.items() if isinstance(m, nn.Linear)]
                raise InputError(f"layers: the model has no module {name!r} (its nn.Linear "
                                 f"modules: {', '.join(linear) or 'none'})")
            if not isinstance(named[name], nn.Linear):
                raise InputError(f"layers: {name!r} is a {type(named[name]).__name__}, not an "
                                 "nn.Linear")
            chosen.append((name, named[name]))
    for name, m in chosen:
        if type(m) is not nn.Linear and not isinstance(m, Linear):
            raise InputError(
                f"module {name or 'model'!r} is a {type(m).__module__}.{type(m).__name__}, a "
                "subclass of nn.Linear whose forward tpbsim cannot know (a parent such as "
                "nn.MultiheadAttention may not even call it): leave it out with layers=")
    return chosen


def convert(model, weights="mxfp4", arch="mariana", layers=None, timing=None, check=True):
    """Swaps ``model``'s ``nn.Linear`` modules in place for tpbsim Linear layers
    sharing their Parameters (as microxcaling's mx_mapping swaps modules); the
    weights are transposed and quantized now. Returns the model (a model that is
    itself an nn.Linear is returned converted, as it cannot be swapped in place).

    ``layers``: None (every nn.Linear), a list of module names as
    ``model.named_modules()`` gives them, or a function (name, module) -> bool.
    A layer converted before is converted again with the new arguments. Raises
    tpbsim.InputError for a model with no nn.Linear, an nn.Linear subclass
    (whose forward tpbsim cannot know), an unknown name."""
    if not isinstance(model, nn.Module):
        raise InputError(f"model: a {type(model).__name__}, not a torch.nn.Module")
    gemm.Plan(1, 1, 1, weights, arch)   # names a bad format or arch before anything
    chosen = _select(model, layers)
    if not chosen:
        raise InputError(f"model ({type(model).__name__}) has no nn.Linear layers to convert"
                         if layers is None else
                         f"layers={layers!r} selects no nn.Linear of the model")
    swap = {id(m): Linear.from_linear(m, weights, arch, timing, check,
                                      name or type(m).__name__) for name, m in chosen}
    if id(model) in swap:
        return swap[id(model)]
    # Every place a chosen module is held (a module used twice is swapped for one
    # converted module, still shared).
    for parent in list(model.modules()):
        for child, m in list(parent._modules.items()):
            if m is not None and id(m) in swap:
                parent._modules[child] = swap[id(m)]
    return model


class Profile:
    """What profile() returns: ``layers`` (one dict per simulated layer call, in
    execution order: name, m, k, n, weights, arch, simulated_ns,
    achieved_tflops, bound_by, hbm_bytes, wall_seconds), ``total_ns``,
    ``output`` (the forward's result) and ``perfetto`` (the trace's path or
    None). ``str(prof)`` is the table profile() prints."""

    def __init__(self, layers, output, perfetto):
        self.layers, self.output, self.perfetto = layers, output, perfetto
        self.total_ns = sum(x["simulated_ns"] for x in layers)

    def table(self):
        rows = [("layer", "m", "k", "n", "weights", "simulated us", "TFLOPS", "bound by",
                 "HBM MB")]
        for x in self.layers:
            rows.append((x["name"], str(x["m"]), str(x["k"]), str(x["n"]), x["weights"],
                         f"{x['simulated_ns'] / 1000:.3f}", f"{x['achieved_tflops']:.2f}",
                         x["bound_by"], f"{x['hbm_bytes'] / 1e6:.3f}"))
        rows.append(("total", "", "", "", "", f"{self.total_ns / 1000:.3f}", "", "", ""))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) if i in (0, 4, 7) else c.rjust(w)
                           for i, (c, w) in enumerate(zip(r, widths))).rstrip() for r in rows]
        return "\n".join(lines)

    __str__ = table


def _merge_perfetto(layers, path):
    """One Perfetto (Chrome JSON) trace of every layer's run on one timeline (the
    core's time carries over from run to run), with a track naming the layers,
    written to ``path`` as a run's outputs are; the layers' own traces were in a
    private directory. OutputError naming ``path`` when it cannot be written."""
    events, seen = [], set()
    for x in layers:
        p = x.get("perfetto")
        if not p or not os.path.exists(p):
            continue
        with open(p) as f:
            d = json.load(f)
        for e in d.get("traceEvents", []):
            if e.get("ph") == "M":
                key = json.dumps(e, sort_keys=True)
                if key in seen:
                    continue
                seen.add(key)
            events.append(e)
    events.append({"ph": "M", "name": "process_name", "pid": 0, "tid": 0,
                   "args": {"name": "tpbsim.torch layers"}})
    for x in layers:
        events.append({"ph": "X", "pid": 0, "tid": 0, "ts": x["start_ps"] / 1e6,
                       "dur": x["simulated_ns"] / 1e3, "name": x["name"],
                       "args": {"m": x["m"], "k": x["k"], "n": x["n"], "weights": x["weights"]}})
    text = json.dumps({"traceEvents": events, "displayTimeUnit": "ns"})
    try:
        _tpbsim.write_output(path, text.encode())
    except Error as e:
        raise OutputError(f"perfetto: not written: {e}", None, [(os.fsdecode(path), str(e))]) \
            from None


def _perfetto_path(perfetto):
    """``profile``'s perfetto= checked before the model runs (as the run's outputs
    are): a path that can be written, else InputError naming it."""
    if perfetto is None:
        return None
    path = _args.path(perfetto, "perfetto")
    why = _tpbsim.output_problem(path)
    if why:
        raise InputError(f"perfetto {os.fsdecode(path)}: {why}")
    return path


def profile(model, inputs, perfetto=None, print_table=True):
    """Runs ``model(*inputs)`` (``inputs``: a tensor or a tuple of them) under
    torch.no_grad and returns a Profile: one row per converted layer call, with
    the simulated time, TFLOPS, what bounds it and its HBM bytes; printed unless
    ``print_table=False``. ``perfetto``: a path for one Perfetto trace of every
    layer on one timeline."""
    if not isinstance(model, nn.Module):
        raise InputError(f"model: a {type(model).__name__}, not a torch.nn.Module")
    if not any(isinstance(m, Linear) for m in model.modules()):
        raise InputError(f"model ({type(model).__name__}) has no tpbsim.torch.Linear layer: "
                         "convert it first (tpbsim.torch.convert)")
    args = inputs if isinstance(inputs, tuple) else (inputs,)
    if getattr(_RECORD, "layers", None) is not None:
        raise Error("profile() is already running (it does not nest)")
    path = _perfetto_path(perfetto)
    _RECORD.layers = []
    _RECORD.traces = None if path is None else tempfile.mkdtemp(prefix="tpbsim-profile-")
    try:
        with torch.no_grad():
            out = model(*args)
        layers = _RECORD.layers
        if path is not None:
            _merge_perfetto(layers, path)
    finally:
        if _RECORD.traces is not None:
            shutil.rmtree(_RECORD.traces, ignore_errors=True)
        _RECORD.layers, _RECORD.traces = None, None
    for x in layers:
        x.pop("perfetto", None)
    prof = Profile(layers, out, None if perfetto is None else str(perfetto))
    if print_table:
        print(prof.table())
    return prof
