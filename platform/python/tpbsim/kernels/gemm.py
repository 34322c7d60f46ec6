"""C = A @ W on the modelled core, or over the cores of a device: the run of a
GEMM request, its check and its report (SPEC §12, §15, docs/KERNELS.md). One
path for one core or many: the request (request.py's Gemm) checked whole,
--out inspected, the blocks of C over the device's cores (grid.py; one core:
one block) planned and their sizes checked, their programs made, then each
block's operands placed, every program run together (with the race check),
C read back, checked and reported.

The tiling is plan.py's, the program program.py's (on tpbsim.program's
builder), the placement placement.py's, the operands operands.py's, the split
grid.py's, --out outputs.py's, the report report.py's; the names this module
had before they moved are kept here for scripts."""

import collections
import inspect
import os
import time

import numpy as np

from .._machine import turn
from ..device import Device
from ..errors import Deadlock, Error, Fault
from . import grid, quant
from .operands import (CHECK_MODES, CHECK_SAMPLES, Weights, check_result, infer_shape,
                       operand_array, operands, prepare, quantize, torch_module)
from .outputs import OUTPUT_FILES, OutputDir, program_files
from .plan import (A_CHUNK, A_RAW_BYTES, A_RESIDENT_BYTES, A_RING, ARCHS, C_RING, GROUP, KTILE,
                   MAX_INSTRUCTIONS, MTILE, NTILE, PLACEMENTS, PROGRAM_BYTES_PER_INSTRUCTION,
                   PSUM_BANK, PSUM_BANKS, W_CHUNK, DEFAULT_CAPACITIES, Capacities, GemmError,
                   Plan, arg, capacities, check_sizes, host_bytes, host_memory_available,
                   peak_tflops, size_text)
from .program import A_QUEUES, C_QUEUES, UNIT_SCALE, W_QUEUES, Kernel, Layout, make_kernel
from .report import (ACT_RUNS_AS, RUNS_AS, CoreRun, device_report, make_report, ordering, plot,
                     plot_cores, races)
from .request import Gemm

# The names of this module before the tiling, the program, the operands and
# the report moved to modules of their own: scripts import them from here.
__all__ = [
    "A_CHUNK", "A_QUEUES", "A_RAW_BYTES", "A_RESIDENT_BYTES", "A_RING", "ACT_RUNS_AS", "ARCHS",
    "C_QUEUES", "C_RING", "CHECK_MODES", "CHECK_SAMPLES", "Capacities", "DEFAULT_CAPACITIES",
    "GROUP", "Gemm", "GemmError", "KTILE", "Kernel", "Layout", "MAX_INSTRUCTIONS", "MTILE",
    "NTILE", "OUTPUT_FILES", "OutputDir", "PLACEMENTS", "PROGRAM_BYTES_PER_INSTRUCTION",
    "PSUM_BANK", "PSUM_BANKS", "Plan", "RUNS_AS", "Report", "UNIT_SCALE", "W_CHUNK", "W_QUEUES",
    "Weights", "arg", "capacities", "check_result", "check_sizes", "execute", "host_bytes",
    "host_memory_available", "infer_shape", "make_kernel", "make_report", "operand_array",
    "operands", "ordering", "peak_tflops", "prepare", "quantize", "races", "run", "size_text",
]


class _Target:
    """Where a GEMM runs: a device of its own (one core, or ``cores``), made and
    closed here, or the Core given (one of its own, or a core of a Device),
    kept open; ``views``: the Cores its blocks run on."""

    def __init__(self, r):
        self.device = None
        if r.core is not None:
            self.views = [r.core]
            return
        try:
            self.device = Device(r.arch, r.cores, r.timing)
        except Error as e:
            if r.timing is None:
                what = (f"a {r.arch} core" if r.cores == 1 else
                        f"a device of {r.cores} {r.arch} cores")
                raise GemmError(f"cannot make {what}: {e}") from None
            if isinstance(r.timing, dict):
                raise GemmError(f"timing overrides: {e}") from None
            raise GemmError(f"{arg('timing', os.fspath(r.timing), r=False)}: {e}") from None
        self.views = [self.device.core(i) for i in range(r.cores)]

    @property
    def first(self):
        return self.views[0].index

    @property
    def hbm(self):
        """The HBM the GEMM may take (a grid.Hbm): its own device's (the C++
        device's, every core's pooled), or the profile's hbm.bytes of the core
        given."""
        if self.device is not None:
            return grid.Hbm(self.device.hbm_bytes, self.device.hbm_bytes_per_s)
        return grid.Hbm(capacities(self.views[0]).hbm)

    def view(self, core):
        return self.views[core - self.first]

    def run(self, sp, **options):
        if self.device is None:
            return self.views[0].run(sp.blocks[0].text, **options)
        return self.device.run({b.core: b.text for b in sp.blocks}, **options)

    def close(self):
        if self.device is not None:
            self.device.close()


# Kernels by everything they depend on, so that a run of the same shape on a
# given core (a torch layer called again) does not generate its program again.
_KERNELS = collections.OrderedDict()
_KERNELS_KEEP = 32


def _kernel_maker(r, caps):
    """kernel_of(plan, hbm capacity, hbm base) -> (kernel, text) for
    grid.make_blocks: cached for a given core (one core for many GEMMs)."""
    def kernel_of(plan, hbm_capacity, hbm_base):
        key = (plan.m, plan.k, plan.n, plan.weights, plan.arch, plan.group, caps, hbm_capacity,
               hbm_base, r.lookahead, r.placement, r.queues_key(), r.drop_wait)
        hit = _KERNELS.get(key) if r.core is not None else None
        if hit is not None:
            _KERNELS.move_to_end(key)
            return hit
        kernel = Kernel(plan, caps.sbuf, r.lookahead, r.placement, hbm_capacity, r.queues,
                        hbm_base=hbm_base)
        made = (kernel, kernel.program(r.drop_wait))
        if r.core is not None:
            _KERNELS[key] = made
            while len(_KERNELS) > _KERNELS_KEEP:
                _KERNELS.popitem(last=False)
        return made

    return kernel_of


def run(*args, **kwargs):
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
    * ``racecheck``: the run checks every access against the semaphore ordering
      (SPEC §14); report["races"] says what it found, whatever the timing.
    * emit_only: writes a workload directory instead (program.tpb and cmd.txt,
      which `tpbsim run` and `tpbsim sweep` take; with values, the HBM image it
      loads and the C it dumps) and runs nothing.

    * ``cores``: more than 1 (up to 32) runs C split over that many cores of a
      device of its own (docs/KERNELS.md "Over several cores"): the same run,
      files and Report, which gains ``split``, ``per_core`` and
      ``scaling_efficiency``; the DMA placement, no ``core=``; ``emit_only``
      writes a timing-only workload.

    Every argument is checked before anything is made (GemmError, a
    tpbsim.InputError, naming it), every size the whole GEMM implies (HBM,
    SBUF, PSUM, instructions, host memory) before anything is allocated, and
    ``out`` whole before anything in it is touched (outputs.OutputDir); the
    files an earlier GEMM run wrote there are removed once this run starts
    writing. A KeyboardInterrupt leaves this run's files written so far,
    listed in the exception's ``gemm_written`` (``gemm_removed``: the earlier
    run's it removed); any other error leaves none of them."""
    try:
        request = Gemm(*args, **kwargs)
    except TypeError as e:
        raise TypeError(str(e).replace("Gemm.__init__()", "run()")) from None
    return execute(request)


run.__signature__ = inspect.signature(Gemm)


def execute(request):
    """Runs a Gemm request (run() builds one from its keywords): the Report."""
    r = request.checked()
    outs = OutputDir(r.out, r.planned())
    wall0 = time.perf_counter()
    target = _Target(r)
    try:
        return _run(r, target, outs, wall0)
    except KeyboardInterrupt as e:
        outs.abort(keep_written=True)
        e.gemm_written, e.gemm_removed, e.gemm_earlier, e.gemm_out = \
            list(outs.written), list(outs.removed), outs.earlier, r.out
        raise
    except BaseException:
        outs.abort(keep_written=False)
        raise
    finally:
        target.close()


def _run(r, target, outs, wall0):
    """The blocks planned and made, then emitted or run."""
    times = {}
    t0 = time.perf_counter()
    view = target.views[0]
    prof, caps = view.timing, capacities(view)
    sp = grid.split(r.plan, r.cores, prof, caps, target.hbm, r.values, r.placement, r.lookahead,
                    target.first)
    grid.make_blocks(sp, sp.hbm.bytes, _kernel_maker(r, caps))
    times["generate_s"] = time.perf_counter() - t0
    if r.values:
        a, w = operands(r.plan, r.a, r.w, r.seed, r.w_layout)
    else:
        if r.a is not None or r.w is not None:   # given ones are checked all the same
            operands(r.plan, r.a if r.a is not None else np.zeros((r.m, r.k), np.float32),
                     r.w if r.w is not None else np.zeros((r.k, r.n), np.float32),
                     w_layout=r.w_layout if r.w is not None else "kn")
        a = w = None
    outs.open()
    if r.emit_only:
        return _emit(r, sp, outs, a, w)
    with turn():   # a core given may be another thread's too: its data, run and C ours
        t0 = time.perf_counter()
        a_used, w_used = _place(r, target, sp, a, w) if r.values else (None, None)
        times["host_data_s"] = time.perf_counter() - t0
        for name, b in zip(program_files(len(sp.blocks)), sp.blocks):
            outs.text(name, b.text)
        t0 = time.perf_counter()
        result, status, message = _execute(r, target, sp, outs)
        times["run_s"] = time.perf_counter() - t0
        c = _read_c(r, target, sp) if status == "ok" and r.values else None
    rep = _report(r, sp, result, status, prof, time.perf_counter() - wall0)
    rep["wall"] = times
    if message:
        rep["message"] = message
    rep["check"] = _check(r, c, a_used, w_used, status, times)
    rep["races"] = races(result)
    if sp.several and status == "ok":
        _scaling(r, rep, times)
    return _finish(r, sp, rep, outs, result, c, a_used, w_used, wall0)


def _place(r, target, sp, a, w):
    """Each block's operands prepared on the host (quantized) and written where its
    program expects them; (a_used, w_used): the values the PE multiplies, the
    whole GEMM's (padded K)."""
    if not sp.several:
        b = sp.blocks[0]
        a_bits, a_used, qw = prepare(b.plan, a, w, r.w_layout)
        b.kernel.place(target.view(b.core), a_bits, qw)
        return a_used, qw.used
    a_used = np.zeros((r.m, r.plan.kpad), np.float32)
    w_used = np.zeros((r.plan.kpad, r.n), np.float32)
    for b in sp.blocks:
        wb = w[:, b.c0:b.c0 + b.cols] if r.w_layout == "kn" else w[b.c0:b.c0 + b.cols]
        a_bits, au, qw = prepare(b.plan, a[b.r0:b.r0 + b.rows], wb, r.w_layout)
        b.kernel.place(target.view(b.core), a_bits, qw)
        a_used[b.r0:b.r0 + b.rows] = au
        w_used[:, b.c0:b.c0 + b.cols] = qw.used[:, :b.cols]
    return a_used, w_used


def _execute(r, target, sp, outs):
    """Every block's program run together from zeroed semaphores: (result, status,
    message); a fault or a deadlock is a run that ended, reported."""
    options = {"timing_only": r.timing_only, "threads": r.threads, "racecheck": r.racecheck,
               "name": "gemm.tpb"}
    traced = bool(outs) and r.traces
    if traced:
        options.update(stats=outs.staged("stats.json"), retire=outs.staged("retire.txt"),
                       perfetto=outs.staged("trace.perfetto.json"))
    if r.perfetto is not None:
        options["perfetto"] = r.perfetto
    for b in sp.blocks:
        view = target.view(b.core)
        for i in range(len(view.semaphores)):
            view.set_semaphore(i, 0)
    status, message = "ok", ""
    try:
        result = target.run(sp, **options)
    except Deadlock as e:
        status, result, message = "deadlock", e.result, e.message
    except Fault as e:
        status, result, message = "fault", e.result, e.message
        if r.log:
            r.log(f"fault: {e}")
    if traced:
        for name in ("stats.json", "retire.txt", "trace.perfetto.json"):
            outs.made(name)
    return result, status, message


def _read_c(r, target, sp):
    if not sp.several:
        b = sp.blocks[0]
        return b.kernel.read_c(target.view(b.core))
    c = np.empty((r.m, r.n), np.float32)
    for b in sp.blocks:
        c[b.r0:b.r0 + b.rows, b.c0:b.c0 + b.cols] = b.kernel.read_c(target.view(b.core))
    return c


def _report(r, sp, result, status, prof, wall):
    """The report of the run: one block's (make_report) or a device's."""
    runs = [CoreRun(result, b.core) if result is not None else None for b in sp.blocks]
    if sp.several:
        return Report(device_report(r.plan, sp, runs, prof, status, r.timing_only))
    b = sp.blocks[0]
    rep = Report(make_report(b.plan, b.kernel, runs[0], prof, status, wall, r.timing_only))
    rep["weights_run_as"] = RUNS_AS[r.weights]
    rep["act_run_as"] = ACT_RUNS_AS
    rep["w_layout"] = r.w_layout
    rep["ordering"] = ordering(b.kernel)
    return rep


def _check(r, c, a_used, w_used, status, times):
    """The report's "check": C against the FP32 k-ascending sum of the values the
    PE multiplied, or why there is none."""
    if c is not None and r.check:
        t0 = time.perf_counter()
        got = check_result(c, a_used, w_used, "full" if r.check == "full" else "sample",
                           int(r.check_samples), int(r.seed))
        times["check_s"] = time.perf_counter() - t0
        return got
    if r.timing_only:
        why = ("not checked: a timing-only run computes no values (out.npy, a_used.npy, "
               "w_used.npy not written)")
    elif not r.check:
        why = f"not checked ({arg('check', r.check)})"
    else:
        why = f"not checked: the run ended in a {status} (out.npy not written)"
    return {"bit_exact": None, "reason": why}


def _scaling(r, rep, times):
    """The same GEMM on one core (timing only): the scaling efficiency."""
    t0 = time.perf_counter()
    one = execute(Gemm(r.m, r.k, r.n, r.weights, arch=r.arch, timing=r.timing,
                       timing_only=True, traces=False, check=None, racecheck=False, log=None))
    rep["one_core_ns"] = one["simulated_ns"]
    rep["scaling_efficiency"] = (one["simulated_ns"] / (r.cores * rep["simulated_ns"])
                                 if rep["simulated_ns"] else 0.0)
    times["one_core_s"] = time.perf_counter() - t0


def _finish(r, sp, rep, outs, result, c, a_used, w_used, wall0):
    """The files (values, C, the picture, report.json last) and the arrays."""
    if outs:
        if a_used is not None:
            outs.npy("a_used.npy", a_used[:, :r.k])
            outs.npy("w_used.npy", w_used[:r.k, :r.n])
        if c is not None:
            outs.npy("out.npy", c)
        if result is not None and r.traces:
            t0 = time.perf_counter()
            if sp.several:
                outs.png("report.png", lambda p: plot_cores(rep, p))
            else:
                outs.png("report.png", lambda p: plot(rep, CoreRun(result, sp.blocks[0].core)
                                                      .retires, p))
            rep["wall"]["plot_s"] = time.perf_counter() - t0
    rep["wall_seconds"] = time.perf_counter() - wall0
    if outs:
        rep["files"] = outs.written + ["report.json"]
        outs.json("report.json", dict(rep))
        outs.close()
    rep["_arrays"] = dict(
        c=c, a_used=None if a_used is None else a_used[:, :r.k],
        w_used=None if w_used is None else w_used[:r.k, :r.n], a_used_pad=a_used,
        w_used_pad=w_used)
    rep["_kernel"] = None if sp.several else sp.blocks[0].kernel
    rep["_result"] = result
    rep["_outputs"] = outs
    rep["_lead"] = r.lead
    rep["_torch"] = r.is_torch
    return rep


def _emit(r, sp, outs, a, w):
    """A workload directory as traces/workloads/ holds them (docs/SWEEPS.md): the
    program(s) and cmd.txt (tpbsim run's arguments); with values (one core), the
    HBM image it loads and the C its --dump writes. Runs nothing."""
    names = program_files(len(sp.blocks))
    for name, b in zip(names, sp.blocks):
        outs.text(name, b.text)
    p = r.plan
    shape = f"{p.m} x {p.k} x {p.n}, {p.weights} weights, {p.arch}"
    if sp.several:
        cores = len(sp.blocks)
        cmd = ("# tpbsim run arguments, paths relative to this directory\n"
               f"# C = A @ W {p.m} x {p.k} x {p.n}, {p.weights} weights, {p.arch}, over {cores} "
               f"cores ({sp.reason}), generated by python3 -m tpbsim.kernels gemm --cores {cores} "
               "--emit-only --timing-only\n"
               f"--cores {cores}\n" + "".join(f"{x}\n" for x in names) + "--timing-only\n")
        shape += f", {cores} cores"
    else:
        b = sp.blocks[0]
        lines = ["# tpbsim run arguments, paths relative to this directory",
                 f"# C = A @ W {shape}, generated by python3 -m tpbsim.kernels gemm --emit-only",
                 "program.tpb"]
        if r.timing_only:
            lines.append("--timing-only")
        else:
            a_bits, a_used, qw = prepare(b.plan, a, w, r.w_layout)
            outs.npy("hbm_inputs.npy", b.kernel.hbm_image(a_bits, qw))
            # C as the dump writes it (M x padded N), the reference of the check.
            outs.npy("expected.npy", quant.fp32_ksum(a_used, qw.used))
            lines += ["--load hbm:0x0=hbm_inputs.npy",
                      f"--dump hbm:{b.kernel.h_c:#x}:{p.m}x{b.plan.npad}:f32=out.npy"]
        cmd = "\n".join(lines) + "\n"
    outs.text("cmd.txt", cmd)
    outs.close()
    rep = Report({"emitted": outs.path, "files": sorted(outs.written), "shape": shape,
                  "instructions": sum(len(b.kernel.builder.instrs) for b in sp.blocks)})
    if sp.several:
        rep["split"] = sp.reason
    rep["_outputs"] = outs
    return rep


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

    def __reduce__(self):
        # A copy (copy.deepcopy, pickle, torch.save of a layer holding one) keeps
        # the report and its arrays; the run's Result, Kernel and --out are
        # left behind (a live core's, and big).
        kept = {k: v for k, v in self.items() if k not in ("_result", "_kernel", "_outputs")}
        return (Report, (kept,))


