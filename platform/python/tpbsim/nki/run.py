"""Tracing a kernel call, lowering it and running it on a modelled core
(SPEC §17: simulate, profile, the report)."""

import inspect
import json
import os
import pathlib
import shlex
import time
import warnings

import numpy as np

from ..core import Core
from ..errors import OutputError
from . import dtypes, host, lower
from .errors import NKIError, mark_if_kernel_raised
from .tensor import HBM, NkiTensor
from .trace import Trace

DEFAULT_ARCH = "mariana"
KEEP_RETIRES = 200000      # a longer program's Result keeps no retire list (memory)
# --dump DTYPE of an output's elements (the raw bits where --dump has no such type).
_DUMP = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int8": "i8", "uint8": "u8",
         "uint16": "u16", "uint32": "u32", "int32": "u32", "int16": "u16", "bool_": "u8",
         "float8_e4m3fn": "u8", "float8_e5m2": "u8", "float8_e4m3": "u8",
         "float8_e8m0fnu": "u8", "float8_e4m3fn_x4": "u32", "float8_e5m2_x4": "u32",
         "float4_e2m1fn_x4": "u16"}


def resolve_arch(arch):
    """The generation: `arch` when given, else NEURON_PLATFORM_TARGET_OVERRIDE
    (trn1/inf2/gen2 sunda, trn2/gen3 cayman, trn3/gen4 mariana), else mariana."""
    if arch is not None:
        if arch in dtypes.ARCH_VERSION:
            return arch
        if arch in dtypes.TARGETS:
            return dtypes.TARGETS[arch]
        raise NKIError("arch", f"{arch!r} is not a generation ({', '.join(dtypes.ARCH_VERSION)}) "
                       f"nor a target ({', '.join(dtypes.TARGETS)})")
    env = os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE")
    if env:
        if env not in dtypes.TARGETS and env not in dtypes.ARCH_VERSION:
            raise NKIError("arch", f"NEURON_PLATFORM_TARGET_OVERRIDE={env!r} is not one of "
                           f"{', '.join(dtypes.TARGETS)}")
        return dtypes.TARGETS.get(env, env)
    return DEFAULT_ARCH


# ------------------------------------------------------------------ tracing

class Traced:
    """A traced call: the trace, its inputs (HostArray per argument that is an
    array) and its outputs (storages, in the order the kernel returned them)."""

    def __init__(self, trace, inputs, outputs, shape_of_return):
        self.trace, self.inputs, self.outputs, self.ret = trace, inputs, outputs, shape_of_return


def _check_annotation(fn, name, h, ann):
    want = getattr(ann, "_nki_shape", None)
    if want is None:
        return
    loc = (fn.__code__.co_filename, fn.__code__.co_firstlineno)
    if tuple(want) != tuple(h.shape):
        raise NKIError("input shape", f"input {name!r} has shape {tuple(h.shape)}; the kernel "
                       f"declares {tuple(want)}", loc)
    dt = getattr(ann, "_nki_dtype", None)
    if dt is not None and dt is not h.dtype:
        raise NKIError("input dtype", f"input {name!r} is {h.dtype.name}; the kernel declares "
                       f"{dt.name}", loc)


def trace_call(fn, arch, args, kwargs, progress=None):
    """Runs the kernel function on traced tensors; returns a Traced."""
    sig = inspect.signature(fn)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise NKIError("arguments", f"{fn.__name__}: {e}",
                       (fn.__code__.co_filename, fn.__code__.co_firstlineno)) from None
    inputs = []
    t = Trace(arch, fn.__name__)
    t.progress = progress
    for name, value in list(bound.arguments.items()):
        if host.is_array(value):
            h = host.host_array(name, value)
            param = sig.parameters[name]
            _check_annotation(fn, name, h, param.annotation)
            dtypes.check_arch(h.dtype, arch, f"input {name!r}",
                              (fn.__code__.co_filename, fn.__code__.co_firstlineno))
            st = t.new_storage(HBM, h.shape or (1,), h.dtype, name, None, "input")
            st.host = h
            inputs.append(h)
            bound.arguments[name] = NkiTensor(st)
    with t:
        try:
            ret = fn(*bound.args, **bound.kwargs)
        except NKIError:
            raise
        except Exception as e:
            raise mark_if_kernel_raised(e, fn.__code__)
    outputs = []
    for r in (ret if isinstance(ret, (tuple, list)) else (ret,)):
        if r is None:
            continue
        if not isinstance(r, NkiTensor) or r.storage.on_chip:
            raise NKIError("kernel output", f"{fn.__name__} returns {r!r}: a kernel returns HBM "
                           "tensors (nl.ndarray(..., buffer=nl.shared_hbm))",
                           (fn.__code__.co_filename, fn.__code__.co_firstlineno))
        if r.storage.kind in ("hbm", "scratch"):
            r.storage.kind = "output"
            if r.storage.name.startswith("hbm") and r.storage.name[3:].isdigit():
                r.storage.name = f"out{len(outputs)}"
        outputs.append(r)
    kind = "tuple" if isinstance(ret, tuple) else "list" if isinstance(ret, list) else (
        "none" if ret is None else "one")
    return Traced(t, inputs, outputs, kind)


# ------------------------------------------------------------------ the result

class Profile:
    """What :func:`profile` returns: ``outputs`` (as the kernel returned them, of
    the inputs' kind; None in a timing-only run), ``simulated_ns``, ``engines``
    ({engine: {busy_pct, instructions}} for every compute engine, DMA queue and
    DMA engine that ran), ``engine_active`` ({engine: fraction 0..1 of the
    kernel it had an instruction in flight, and ``dma``: any DMA engine moving
    data}, the Neuron profiler's "engine active", TIMING.md [N]), ``program``
    (the program text), ``result`` (the run's tpbsim.Result), ``races``, ``arch``, ``command`` (the ``tpbsim run``
    arguments that rerun it, see :meth:`write`), ``stats`` (the lowering's
    counts) and ``wall`` (seconds per phase)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self):
        return (f"<tpbsim.nki.Profile {self.kernel} on {self.arch}: {self.simulated_ns:.1f} ns "
                f"simulated, {self.stats['instructions']} instructions>")

    def report(self):
        """The report.json dict."""
        return {"kernel": self.kernel, "arch": self.arch, "simulated_ns": self.simulated_ns,
                "timing_only": self.timing_only, "engines": self.engines,
                "engine_active": self.engine_active, "bound_by": self.bound_by, "races": self.races, "program": self.stats,
                "wall_seconds": self.wall}

    def summary(self):
        """A table of the engines: busy % and instructions."""
        rows = [f"{self.kernel} on {self.arch}: {self.simulated_ns / 1000:.3f} us simulated, "
                f"{self.stats['instructions']} instructions ({self.stats['calls']} isa calls)"]
        for name, e in self.engines.items():
            rows.append(f"  {name:<12} {e['busy_pct']:6.1f}% busy  {e['instructions']:>8} instr")
        active = ", ".join(f"{k} {100 * v:.1f}%" for k, v in self.engine_active.items() if v > 0)
        if active:
            rows.append(f"  engine active: {active}")
        return "\n".join(rows)

    def write(self, out, traces=True):
        """Writes DIR: program.tpb, inputs/*.npy, outputs/*.npy, report.json, and
        rerun.sh (the ``tpbsim run`` command line with its --load / --dump)."""
        d = pathlib.Path(out)
        (d / "inputs").mkdir(parents=True, exist_ok=True)
        (d / "outputs").mkdir(exist_ok=True)
        (d / "program.tpb").write_text(self.program)
        args = ["tpbsim", "run", "program.tpb", "--arch", self.arch, "--mx-emax", self.mx_emax]
        if isinstance(self.timing, (str, os.PathLike)):
            args += ["--timing", os.path.abspath(self.timing)]
        elif self.timing:
            (d / "timing.json").write_text(json.dumps(_nested(self.timing), indent=2) + "\n")
            args += ["--timing", "timing.json"]
        for name, addr, raw in self.hbm_loads:
            np.save(d / "inputs" / f"{name}.npy", raw)
            args += ["--load", f"hbm:{addr:#x}=inputs/{name}.npy"]
        for name, addr, rows, cols, dt in self.hbm_dumps:
            args += ["--dump", f"hbm:{addr:#x}:{rows}x{cols}:{dt}=rerun/{name}.npy"]
        args += ["--stats", "rerun/stats.json"]
        if self.outputs_dict is not None:
            for name, a in self.outputs_dict.items():
                np.save(d / "outputs" / f"{name}.npy", _numpy(a))
        (d / "report.json").write_text(json.dumps(self.report(), indent=2) + "\n")
        (d / "rerun.sh").write_text("#!/bin/sh\n# Reruns the kernel's program: the same "
                                    "outputs (rerun/*.npy, raw dumps) and cycles (rerun/stats.json)."
                                    "\ncd \"$(dirname \"$0\")\" && mkdir -p rerun && "
                                    + " ".join(shlex.quote(a) for a in args) + "\n")
        os.chmod(d / "rerun.sh", 0o755)
        return d


def _nested(overrides):
    """Timing overrides with dotted keys ({"clocks_mhz.dve": 2400}) as the nested
    object a profile file holds."""
    out = {}
    for key, v in overrides.items():
        node, parts = out, key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = _nested(v) if isinstance(v, dict) else v
    return out


def _numpy(a):
    return a.detach().float().numpy() if hasattr(a, "detach") and str(a.dtype) == "torch.bfloat16" \
        else (a.numpy() if hasattr(a, "detach") else np.asarray(a))


def _engines(result):
    out = {}
    for name, e in result.engines.items():
        out[name] = {"busy_pct": round(100 * result.busy_fraction(name), 2),
                     "instructions": e["instructions"]}
    return out


def _bound_by(engines):
    """The busiest resource: a compute engine, or "dma" (the busiest of the 16
    DMA engines, which the queues share)."""
    busy = {k: v["busy_pct"] for k, v in engines.items() if not k.startswith("dma")}
    dma = [v["busy_pct"] for k, v in engines.items() if k.startswith("dma_engine")]
    if dma:
        busy["dma"] = max(dma)
    return max(busy, key=busy.get) if busy else None


# ------------------------------------------------------------------ simulate / profile

def run_kernel(fn, args, kwargs, arch=None, timing=None, perfetto=None, vcd=None, racecheck=True,
               timing_only=False, mx_emax="neuron-alt", progress=None, kernel_name=None):
    """Trace, lower and run one kernel call; returns a Profile."""
    arch = resolve_arch(arch)
    wall = {}
    t0 = time.perf_counter()
    traced = trace_call(fn, arch, args, kwargs, progress)
    wall["trace"] = time.perf_counter() - t0
    if progress:
        progress(f"traced {len(traced.trace.calls)} isa calls")
    core = Core(arch, timing, mx_emax=mx_emax)
    try:
        t1 = time.perf_counter()
        lw = lower.Lowering(traced.trace, core.partition_bytes("sbuf"),
                            core.partition_bytes("psum"), progress, core.hbm_bytes()).run()
        program = lw.builder.text(header=(f"{traced.trace.kernel_name}: generated by tpbsim.nki "
                                          f"from {len(traced.trace.calls)} isa calls",))
        wall["lower"] = time.perf_counter() - t1
        if progress:
            progress(f"program: {len(lw.builder.instrs)} instructions "
                     f"({lw.builder.nops} nop), running")
        loads = []
        for st in lw.hbm:
            raw = host_bytes(st)
            if raw is not None:
                core.write("hbm", 0, st.addr, raw)
                loads.append((st.name, st.addr, raw))
        t2 = time.perf_counter()
        outs = {}
        if vcd:
            outs["vcd"] = vcd
        if perfetto:
            outs["perfetto"] = perfetto
        result = core.run(program, name=f"{traced.trace.kernel_name}.tpb", racecheck=racecheck,
                          timing_only=timing_only,
                          keep_retires=len(lw.builder.instrs) <= KEEP_RETIRES, **outs)
        wall["run"] = time.perf_counter() - t2
        try:
            outputs, outputs_dict, dumps = _read_outputs(core, traced, timing_only)
        except MemoryError:
            big = max(traced.outputs, key=lambda v: v.storage.nbytes).storage
            raise OutputError(f"the kernel's outputs do not fit in this host's memory ("
                              f"{big.describe()}: {big.nbytes} bytes); timing_only=True "
                              "(--timing-only) reads none back", result) from None
    finally:
        core.close()
    races = result.races if racecheck else None
    if races:
        warnings.warn(f"tpbsim.nki: the generated program of {traced.trace.kernel_name} has "
                      f"{len(races)} race(s): {races[0]['message']}", RuntimeWarning, 3)
    engines = _engines(result)
    b = lw.builder
    stats = {"calls": len(traced.trace.calls), "instructions": len(b.instrs), "nops": b.nops,
             "waits": len(b.waits()), "queues": b.queue_counts(),
             "sbuf_tiles": sum(1 for s in traced.trace.storages if s.buffer.kind == "sbuf"),
             "psum_tiles": sum(1 for s in traced.trace.storages if s.buffer.kind == "psum")}
    return Profile(kernel=kernel_name or traced.trace.kernel_name, arch=arch,
                   outputs=outputs, outputs_dict=outputs_dict,
                   simulated_ns=result.simulated_ps / 1000, engines=engines,
                   engine_active=result.engine_active, bound_by=_bound_by(engines),
                   program=program, result=result, races=races, stats=stats, wall=wall,
                   timing_only=timing_only, mx_emax=mx_emax,
                   timing=timing,
                   hbm_loads=loads, hbm_dumps=dumps)


def host_bytes(st):
    """The bytes the host writes to a storage before the run (inputs, constants),
    or None."""
    if st.kind == "input":
        return st.host.raw
    if st.kind == "const":
        h = st.host
        if isinstance(h, np.ndarray) and h.dtype == np.uint8 and h.ndim == 1:
            return h
        return _encode_const(h, st.dtype)
    return None


def _encode_const(arr, dt):
    from .. import numerics
    a = np.asarray(arr)
    if dt.np is not None:
        return np.ascontiguousarray(a.astype(dt.np)).view(np.uint8).reshape(-1)
    codes = numerics.convert("fp32", dt.fmt, a.astype(np.float32).reshape(-1))
    return np.ascontiguousarray(np.asarray(codes).astype(dt.bits)).view(np.uint8).reshape(-1)


def _read_outputs(core, traced, timing_only):
    """The outputs (as the kernel returned them), a {name: array} of them, and
    their --dump specs; written inputs copied back into the caller's arrays."""
    kind = host.output_kind(traced.inputs)
    dumps, arrays = [], []
    seen = set()
    for v in traced.outputs:
        st = v.storage
        if st.id not in seen:
            seen.add(st.id)
            cols = st.shape[-1] if st.shape else 1
            dumps.append((st.name, st.addr, st.nbytes // (cols * st.dtype.itemsize), cols,
                          _DUMP.get(st.dtype.name, "u8")))
        if timing_only:
            arrays.append(None)
            continue
        raw = core.read("hbm", 0, st.addr, st.nbytes, "u8")
        arrays.append(host.to_host(_view_bytes(v, raw), v.dtype, v.shape, kind))
    if not timing_only:
        for h in traced.inputs:
            st = next(s for s in traced.trace.storages if s.host is h)
            if st.written:
                host.copy_back(h, core.read("hbm", 0, st.addr, st.nbytes, "u8"))
    names = [v.storage.name for v in traced.outputs]
    outputs_dict = None if timing_only else dict(zip(names, arrays))
    if timing_only:
        return None, None, dumps
    if traced.ret == "one":
        return arrays[0], outputs_dict, dumps
    if traced.ret == "none":
        return None, outputs_dict, dumps
    return (tuple(arrays) if traced.ret == "tuple" else arrays), outputs_dict, dumps


def _view_bytes(v, raw):
    """The bytes of view v (in its order) out of its storage's bytes."""
    es = v.dtype.itemsize
    raw = np.asarray(raw).reshape(-1)
    if v.is_contiguous() and not v.storage.on_chip:
        return raw[v.offset * es:(v.offset + v.size) * es]
    idx = np.full((), v.offset, dtype=np.int64)
    for s, n in v.dims:
        idx = idx[..., None] + s * np.arange(n, dtype=np.int64)
    b = (idx.reshape(-1)[:, None] * es + np.arange(es)).reshape(-1)
    return np.asarray(raw).reshape(-1)[b]
