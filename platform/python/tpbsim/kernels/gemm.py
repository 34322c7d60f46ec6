"""C = A @ W on the modelled core: the run of a GEMM, its check and its report
(SPEC §12, docs/KERNELS.md). The tiling is plan.py's, the program
program.py's, the operands operands.py's, the report report.py's; the names
this module had before they moved are kept here."""

import collections
import os
import time

import numpy as np

from .. import _args
from ..core import Core
from ..errors import Deadlock, Error, Fault
from . import quant
from .operands import (CHECK_MODES, CHECK_SAMPLES, ShapeOnly, Weights, check_result, dims_text,
                       infer_shape, is_tensor, operand_array, operands, prepare, quantize,
                       torch_module)
from .outputs import OUTPUT_FILES, OutputDir
from .plan import (A_CHUNK, A_RAW_BYTES, A_RESIDENT_BYTES, A_RING, ARCHS, C_RING, GROUP, KTILE,
                   MAX_INSTRUCTIONS, MTILE, NTILE, PLACEMENTS, PROGRAM_BYTES_PER_INSTRUCTION,
                   PSUM_BANK, PSUM_BANKS, W_CHUNK, DEFAULT_CAPACITIES, Capacities, GemmError,
                   Plan, arg, capacities, check_sizes, host_bytes, host_memory_available,
                   peak_tflops, size_text)
from .program import (A_QUEUES, C_QUEUES, ENGINE_SEMS, UNIT_SCALE, W_QUEUES, Kernel, Layout,
                      ProgramCheckError, make_kernel)
from .report import ACT_RUNS_AS, RUNS_AS, make_report, ordering, races

# The names of this module before the tiling, the program, the operands and
# the report moved to modules of their own: scripts import them from here.
__all__ = [
    "A_CHUNK", "A_QUEUES", "A_RAW_BYTES", "A_RESIDENT_BYTES", "A_RING", "ACT_RUNS_AS", "ARCHS",
    "C_QUEUES", "C_RING", "CHECK_MODES", "CHECK_SAMPLES", "Capacities", "DEFAULT_CAPACITIES",
    "ENGINE_SEMS", "GROUP", "GemmError", "KTILE", "Kernel", "Layout", "MAX_INSTRUCTIONS", "MTILE",
    "NTILE", "OUTPUT_FILES", "OutputDir", "PLACEMENTS", "PROGRAM_BYTES_PER_INSTRUCTION",
    "PSUM_BANK", "PSUM_BANKS", "Plan", "ProgramCheckError", "RUNS_AS", "Report", "UNIT_SCALE",
    "W_CHUNK", "W_QUEUES", "Weights", "arg", "capacities", "check_result", "check_sizes",
    "host_bytes", "host_memory_available", "infer_shape", "make_kernel", "make_report",
    "operand_array", "operands", "ordering", "peak_tflops", "prepare", "quantize", "races", "run",
    "size_text",
]

def _check_args(act, placement, seed, threads, out, timing, lookahead, check=True,
                check_samples=CHECK_SAMPLES):
    if act != "bf16":
        raise GemmError(f"{arg('act', act)}: the activations are BF16 (quantized to MXFP8 E4M3 "
                        "on the DVE); no other activation path is modelled")
    if placement not in PLACEMENTS:
        raise GemmError(f"{arg('placement', placement)}: dma | sbuf")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise GemmError(f"{arg('seed', seed)}: not a seed (a non-negative integer)")
    if threads is not None:
        try:
            _args.threads(threads)
        except Error as e:
            raise GemmError(f"{arg('threads')}: {e}") from None
    if out is not None:
        if not isinstance(out, (str, os.PathLike)):
            raise GemmError(f"{arg('out')}: a path, not {type(out).__name__}")
        if os.fspath(out) == "":
            raise GemmError(f"{arg('out', '')}: an empty path (give a directory)")
    if timing is not None and not isinstance(timing, dict):
        if not isinstance(timing, (str, os.PathLike)):
            raise GemmError(f"{arg('timing')}: a profile path or a dict of overrides, not "
                            f"{type(timing).__name__}")
        t = os.fspath(timing)
        if t == "":
            raise GemmError(f"{arg('timing', '')}: an empty path (give a timing profile)")
        if not os.path.exists(t):
            raise GemmError(f"{arg('timing', t, r=False)}: no such file")
        if os.path.isdir(t):
            raise GemmError(f"{arg('timing', t, r=False)}: is a directory, not a timing profile")
    if isinstance(lookahead, bool) or not isinstance(lookahead, int) or lookahead < 0:
        raise GemmError(f"{arg('lookahead', lookahead)}: a count of units (0 or more)")
    if not (check is None or isinstance(check, bool) or check in CHECK_MODES):
        raise GemmError(f"{arg('check', check)}: True or 'sample' (the default: "
                        f"{arg('check_samples')} output elements chosen with the seed), 'full' "
                        "(every element), False or None (none)")
    if (isinstance(check_samples, bool) or not isinstance(check_samples, (int, np.integer))
            or check_samples < 1):
        raise GemmError(f"{arg('check_samples', check_samples)}: a count of output elements "
                        "(1 or more)")


def _make_core(arch, timing):
    # A run without core= makes a core of its own; any number may be open in a
    # process (docs/PYTHON.md), tpbsim.torch's layers' core among them.
    try:
        return Core(arch, timing)
    except Error as e:
        if timing is None:
            raise GemmError(f"cannot make a {arch} core: {e}") from None
        if isinstance(timing, dict):
            raise GemmError(f"timing overrides: {e}") from None
        raise GemmError(f"{arg('timing', os.fspath(timing), r=False)}: {e}") from None


class Report(dict):
    """What run() returns: the report (a dict, report.json's keys) and the run's
    arrays as attributes.

    * ``.c``: C = A @ W, float32, M x N (the leading shape of ``a`` kept: a of
      B x S x K gives B x S x N); a torch tensor when ``a`` was one, else a
      NumPy array. ``.c_array`` is always the NumPy array.
    * ``.a_used`` / ``.w_used``: the float32 values the PE multiplied (M x K,
      K x N), after every quantization.
    * ``.result``: the tpbsim.Result of the run; ``.kernel``: the generator's
      Kernel (its program and placement).
    """

    @property
    def c_array(self):
        c = self["_arrays"]["c"]
        shape = self.get("_lead")
        return c if c is None or shape is None else c.reshape(*shape, c.shape[-1])

    @property
    def c(self):
        c = self.c_array
        if c is not None and self.get("_torch"):
            return torch_module().from_numpy(np.ascontiguousarray(c))
        return c

    @property
    def a_used(self):
        return self["_arrays"]["a_used"]

    @property
    def w_used(self):
        return self["_arrays"]["w_used"]

    @property
    def result(self):
        return self.get("_result")

    @property
    def kernel(self):
        return self.get("_kernel")


# Kernels by everything they depend on, so that a run of the same shape (a torch
# layer called again) does not generate and verify its program again.
_KERNELS = collections.OrderedDict()
_KERNELS_KEEP = 32


def _kernel_for(plan, core, lookahead, placement, queues, values, drop_wait):
    caps = capacities(core)
    key = (plan.m, plan.k, plan.n, plan.weights, plan.arch, caps, lookahead, placement,
           None if queues is None else tuple(sorted((k, tuple(v)) for k, v in queues.items())),
           values, drop_wait)
    hit = _KERNELS.get(key)
    if hit is not None:
        _KERNELS.move_to_end(key)
        return hit
    kernel = make_kernel(plan, caps, lookahead, placement, queues, values)
    text = kernel.program(drop_wait)
    verdict = kernel.verify(text)
    _KERNELS[key] = (kernel, text, verdict)
    while len(_KERNELS) > _KERNELS_KEEP:
        _KERNELS.popitem(last=False)
    return kernel, text, verdict


def run(m=None, k=None, n=None, weights="mxfp4", act="bf16", arch="mariana", a=None, w=None,
        out=None, timing=None, timing_only=False, seed=0, drop_wait=None, traces=True, check=True,
        lookahead=2, log=print, placement="dma", threads=None, queues=None, emit_only=False,
        racecheck=True, *, w_layout=None, core=None, check_samples=CHECK_SAMPLES, perfetto=None,
        cores=1):
    """Runs C = A @ W on the modelled core; returns a Report (a dict, the keys of
    report.json, with ``.c``, ``.a_used``, ``.w_used``) and writes the files into
    ``out`` (none when None).

    * ``a``: activations, M x K, or any leading shape x K (NumPy array, torch
      tensor on the CPU, or a list; float32, float16 / bfloat16 / float64
      converted). ``w``: weights, K x N (``w_layout="kn"``, the default) or N x K
      (``w_layout="nk"``, torch's ``nn.Linear.weight`` [out, in]), or a Weights
      from quantize() (quantized once). Random when not given (then ``m``, ``k``,
      ``n`` say the shape); given, ``m``, ``k``, ``n`` are taken from them. A W
      whose shape only fits the other layout is refused naming ``w_layout``; an
      ``nn.Parameter`` needs ``w_layout`` said.
    * ``weights``: mxfp4 | mxfp8 | bf16 | nf4 | int4 | fp4 | fp6 (report
      ``weights_run_as`` says what each runs as: bf16 becomes MXFP8 on the DVE).
    * ``check``: True / "sample" (default): CHECK_SAMPLES (``check_samples``)
      output elements, chosen with numpy.random.default_rng(seed), computed
      exactly as the FP32 k-ascending sum of a_used x w_used and compared bit for
      bit (every element when C has no more); "full": every element (slow for
      big shapes: NumPy); False / None: none.
    * ``core``: a tpbsim.Core to run on (kept open; its arch is the GEMM's, its
      timing the run's): one core for many GEMMs. None: a core is made and closed.
    * ``perfetto``: a path for the run's Perfetto trace (also without ``out``).
    * racecheck: the run checks every access against the semaphore ordering
      (SPEC §14); report["races"] says what it found, whatever the timing.
    * emit_only: writes a workload directory instead (program.tpb and cmd.txt,
      which `tpbsim run` and `tpbsim sweep` take; with values, the HBM image it
      loads and the C it dumps) and runs nothing.

    * ``cores``: more than 1 runs C split over that many cores of one device
      (tpbsim.kernels.gemm_cores.run_cores, docs/KERNELS.md "Over several
      cores"): the report gains ``split``, ``per_core`` and
      ``scaling_efficiency``; the DMA placement, no ``core=`` or ``emit_only``.

    Every argument is checked before anything is made (GemmError, a
    tpbsim.InputError, naming it), every size the shape implies (HBM, SBUF, PSUM,
    instructions, host memory) before anything is allocated. ``out`` is emptied
    of an earlier run's files first (OutputDir). A KeyboardInterrupt leaves only
    this run's files, listed in the exception's ``gemm_written``."""
    _check_args(act, placement, seed, threads, out, timing, lookahead, check, check_samples)
    if isinstance(cores, bool) or not isinstance(cores, (int, np.integer)) or cores < 1:
        raise GemmError(f"{arg('cores', cores)}: a count of cores (1 or more)")
    if cores > 1:
        if core is not None or placement != "dma" or drop_wait is not None:
            raise GemmError(f"{arg('cores', cores)} runs on a device of its own with the DMA "
                            f"placement: no {arg('core')}, {arg('placement', 'sbuf')} or "
                            "drop_wait with it")
        from .gemm_cores import run_cores
        if w is not None and w_layout == "nk":
            w = operand_array(w, arg("w")).T
        a2 = operand_array(a, arg("a"), ndim=None)
        if a2 is not None and a2.ndim > 2:
            a2 = a2.reshape(-1, a2.shape[-1])
        w2 = operand_array(w, arg("w")) if w is not None else None
        m, k, n = infer_shape(m, k, n, a2, w2, "kn")
        return run_cores(m, k, n, weights, arch, int(cores), a=a2, w=w2, out=out, timing=timing,
                         timing_only=timing_only, seed=seed, check=check,
                         check_samples=check_samples, log=log, racecheck=racecheck,
                         emit_only=emit_only)
    is_torch = is_tensor(a)
    if w_layout is None:
        if is_tensor(w) and isinstance(w, torch_module().nn.Parameter):
            raise GemmError("w is an nn.Parameter (a layer's weight, which torch stores [out, "
                            f"in] = N x K): say {arg('w_layout', 'nk')} (or "
                            f"{arg('w_layout', 'kn')} for K x N)")
        w_layout = "kn"
    if w_layout not in ("kn", "nk"):
        raise GemmError(f"{arg('w_layout', w_layout)}: 'kn' (W is K x N, C = A @ W) or 'nk' "
                        "(W is N x K, torch's [out, in]: C = A @ W.T)")
    a = operand_array(a, arg("a"), ndim=None)
    lead = None
    if a is not None and a.ndim > 2:
        lead = a.shape[:-1]
        a = a.reshape(-1, a.shape[-1])
    prepared = w if isinstance(w, Weights) else None
    if prepared is not None:
        if prepared.arch != arch or prepared.weights != weights:
            raise GemmError(f"{arg('w')} was quantized for {prepared.weights} on "
                            f"{prepared.arch}, the run "
                            f"is {arg('weights', weights)} {arg('arch', arch)}")
        wk, wn = prepared.k, prepared.n
        if a is not None and a.shape[1] != wk:
            raise GemmError(f"{arg('a')} is {dims_text(a)}, the quantized {arg('w')} is K x N = "
                            f"{wk} x {wn}: their K "
                            f"differ ({a.shape[1]} and {wk})")
        m, k, n = infer_shape(m, k, n, a, ShapeOnly((wk, wn)), "kn")
    else:
        w = operand_array(w, arg("w"))
        m, k, n = infer_shape(m, k, n, a, w, w_layout)
    if core is not None:
        if not isinstance(core, Core):
            raise GemmError(f"{arg('core')}: a tpbsim.Core, not {type(core).__name__}")
        if core.closed:
            raise GemmError(f"{arg('core')}: the core is closed")
        if core.arch != arch:
            raise GemmError(f"{arg('core')} is a {core.arch} core, the run is "
                            f"{arg('arch', arch)}")
        if timing is not None:
            raise GemmError(f"{arg('timing')} with {arg('core')}: the core has its timing "
                            "(give it to tpbsim.Core)")
    plan = Plan(m, k, n, weights, arch)
    values = not timing_only
    if emit_only and out is None:
        raise GemmError(f"{arg('emit_only')} needs {arg('out')} DIR")
    if emit_only and placement != "dma" and values:
        raise GemmError(f"{arg('emit_only')} with values needs the DMA placement (the inputs are "
                        f"one HBM image); add {arg('timing_only')} or drop "
                        f"{arg('placement', 'sbuf')}")
    wall0 = time.perf_counter()
    own = core is None
    if own:
        core = _make_core(arch, timing)
    times = {}
    outs = None
    try:
        try:
            t0 = time.perf_counter()
            if own:
                kernel = make_kernel(plan, core, lookahead, placement, queues, values)
                text = kernel.program(drop_wait)
                verdict = kernel.verify(text)
            else:   # one core for many GEMMs (tpbsim.torch): a shape's program made once
                kernel, text, verdict = _kernel_for(plan, core, lookahead, placement, queues,
                                                    values, drop_wait)
            plan = kernel.plan
            times["generate_s"] = time.perf_counter() - t0
            if not verdict.ok and drop_wait is None:
                raise ProgramCheckError(
                    "the generated program fails its own hazard check (a bug of the generator): "
                    + "; ".join(verdict.problems[:3])
                    + (f" (+{len(verdict.problems) - 3} more)" if len(verdict.problems) > 3
                       else ""))
            if values:
                a, w = operands(plan, a, w, seed, w_layout)
            elif a is not None or w is not None:
                operands(plan, a if a is not None else np.zeros((plan.m, plan.k), np.float32),
                         w if w is not None else np.zeros((plan.k, plan.n), np.float32),
                         w_layout=w_layout if w is not None else "kn")
            outs = OutputDir(out)
            if emit_only:
                return emit_workload(plan, kernel, text, outs, timing_only, a, w, w_layout)
            rep = _run_on(core, plan, kernel, text, verdict, outs, a, w, times, wall0,
                          timing_only, traces, check, log, threads, racecheck, w_layout,
                          check_samples, seed, perfetto)
            rep["_lead"] = lead
            rep["_torch"] = is_torch
            return rep
        finally:
            if own:
                core.close()
    except KeyboardInterrupt as e:
        e.gemm_written = list(outs.written) if outs else []
        e.gemm_out = out
        raise


def _run_on(core, plan, kernel, text, verdict, outs, a, w, times, wall0, timing_only, traces,
            check, log, threads, racecheck, w_layout="kn", check_samples=CHECK_SAMPLES, seed=0,
            perfetto=None):
    t0 = time.perf_counter()
    if timing_only:
        # No values: nothing to quantize or place (SPEC §13).
        a_used = qw = None
    else:
        a_bits, a_used, qw = prepare(plan, a, w, w_layout)
        kernel.place(core, a_bits, qw)
    times["host_data_s"] = time.perf_counter() - t0
    if outs:
        outs.text("program.tpb", text)
    run_kw = {"timing_only": bool(timing_only), "threads": threads,
              "racecheck": bool(racecheck)}
    if outs and traces:
        run_kw.update(stats=outs.file("stats.json"), retire=outs.file("retire.txt"),
                      perfetto=outs.file("trace.perfetto.json"))
    if perfetto is not None:
        run_kw["perfetto"] = perfetto
    for i in range(len(core.semaphores)):
        core.set_semaphore(i, 0)
    status, message = "ok", ""
    t0 = time.perf_counter()
    try:
        result = core.run(text, name="gemm.tpb", **run_kw)
    except Deadlock as e:
        status, result, message = "deadlock", e.result, e.message
    except Fault as e:
        status, result, message = "fault", e.result, e.message
        if log:
            log(f"fault: {e}")
    if outs and traces:
        for name in ("stats.json", "retire.txt", "trace.perfetto.json"):
            outs.made(name)
    times["run_s"] = time.perf_counter() - t0
    c = kernel.read_c(core) if status == "ok" and not timing_only else None
    timing_profile = core.timing
    wall = time.perf_counter() - wall0

    report = Report(make_report(plan, kernel, result, timing_profile, status, wall, timing_only))
    report["weights_run_as"] = RUNS_AS[plan.weights]
    report["act_run_as"] = ACT_RUNS_AS
    report["w_layout"] = w_layout
    report["wall"] = times
    if message:
        report["message"] = message
    if c is not None and check:
        t0 = time.perf_counter()
        report["check"] = check_result(c, a_used, qw.used, "full" if check == "full" else
                                       "sample", int(check_samples), int(seed))
        times["check_s"] = time.perf_counter() - t0
    elif timing_only:
        report["check"] = {"bit_exact": None,
                           "reason": "not checked: a timing-only run computes no values "
                                     "(out.npy, a_used.npy, w_used.npy not written)"}
    elif not check:
        report["check"] = {"bit_exact": None, "reason": f"not checked ({arg('check', check)})"}
    else:
        report["check"] = {"bit_exact": None,
                           "reason": f"not checked: the run ended in a {status} (out.npy not "
                                     "written)"}
    report["ordering"] = ordering(verdict, result if status == "ok" else None)
    report["races"] = races(result)
    if outs:
        if a_used is not None:
            outs.npy("a_used.npy", a_used[:, :plan.k])
            outs.npy("w_used.npy", qw.used[:plan.k, :plan.n])
        if c is not None:
            outs.npy("out.npy", c)
        if result is not None and traces:
            from .report import plot
            t0 = time.perf_counter()
            outs.png("report.png", lambda p: plot(report, result.retires, p))
            report["wall"]["plot_s"] = time.perf_counter() - t0
    report["wall_seconds"] = time.perf_counter() - wall0
    if outs:
        report["files"] = outs.written + ["report.json"]
        outs.json("report.json", report)
    report["_arrays"] = dict(
        c=c, a_used=None if a_used is None else a_used[:, :plan.k],
        w_used=None if qw is None else qw.used[:plan.k, :plan.n], a_used_pad=a_used,
        w_used_pad=None if qw is None else qw.used)
    report["_kernel"] = kernel
    report["_result"] = result
    report["_outputs"] = outs
    return report


def emit_workload(plan, kernel, text, outs, timing_only, a, w, w_layout="kn"):
    """A workload directory as traces/workloads/ holds them (docs/SWEEPS.md)."""
    outs.text("program.tpb", text)
    shape = f"{plan.m} x {plan.k} x {plan.n}, {plan.weights} weights, {plan.arch}"
    lines = ["# tpbsim run arguments, paths relative to this directory",
             f"# C = A @ W {shape}, generated by python3 -m tpbsim.kernels gemm --emit-only",
             "program.tpb"]
    if timing_only:
        lines.append("--timing-only")
    else:
        a_bits, a_used, qw = prepare(plan, a, w, w_layout)
        outs.npy("hbm_inputs.npy", kernel.hbm_image(a_bits, qw))
        # C as the dump writes it (M x padded N), the reference of the check.
        outs.npy("expected.npy", quant.fp32_ksum(a_used, qw.used))
        lines += ["--load hbm:0x0=hbm_inputs.npy",
                  f"--dump hbm:{kernel.h_c:#x}:{plan.m}x{plan.npad}:f32=out.npy"]
    outs.text("cmd.txt", "\n".join(lines) + "\n")
    return {"emitted": outs.path, "files": sorted(outs.written), "shape": shape,
            "instructions": len(kernel.sched.ops), "_outputs": outs}

