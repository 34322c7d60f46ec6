"""C = A @ W on the modelled core: tiling, the program, the run and its check
(SPEC §12, docs/KERNELS.md).

Orientation: the PE's stationary operand is a tile of A^T (K rows on the
partitions, up to 128 columns m), the moving operand a tile of W (K rows, up
to 512 columns n), so PSUM[m][n] = C[m][n] and the result leaves PSUM row by
row. One K-tile is 512 contraction values: 128 partitions x 4 lanes of an x4
word (SPEC §5).
"""

import json
import math
import os
import time

import numpy as np

from .. import numerics
from ..core import Core
from ..errors import Deadlock, Error, Fault
from . import quant
from .sched import Schedule

ARCHS = ("mariana", "maverick")
KTILE, MTILE, NTILE, GROUP = 512, 128, 512, 4   # contraction, stationary, moving, PSUM banks
PSUM_BANK = 2048
ENGINE_SEMS = {"pool": 0, "dve": 1, "pe": 2, "sfu": 3, **{f"dma{q}": 4 + q for q in range(16)}}
UNIT_SCALE = 127                                # E8M0 2^0


class GemmError(Exception):
    """A request the kernel cannot run: the message says why (exit 1)."""


def _ceil(a, b):
    return -(-a // b)


class Plan:
    """The tiling of one GEMM (all sizes after padding)."""

    def __init__(self, m, k, n, weights, arch):
        if weights not in quant.WEIGHT_FORMATS:
            raise GemmError(f"--weights {weights}: not a weight format "
                            f"({'|'.join(quant.WEIGHT_FORMATS)})")
        if arch not in ARCHS:
            why = {"sunda": "SUNDA (v2) has none of the MX instructions",
                   "cayman": "CAYMAN (v3) has no MX matmul and no QuantizeMX"}.get(arch)
            if why:
                raise GemmError(f"--arch {arch}: {why}; the MX GEMM runs on mariana "
                                "(LdweightsMX / MatmulMX) or maverick (LDWEIGHTS / MATMUL in MX "
                                "mode)")
            raise GemmError(f"--arch {arch}: not a generation (mariana|maverick)")
        for name, v in (("m", m), ("k", k), ("n", n)):
            if not isinstance(v, (int, np.integer)) or v < 1:
                raise GemmError(f"--{name} {v}: must be a positive integer")
        self.m, self.k, self.n, self.weights, self.arch = int(m), int(k), int(n), weights, arch
        self.spec = quant.WEIGHT_FORMATS[weights]
        # K: whole groups of 32 partitions (QuantizeMX and the matmul take 32, 64, 96
        # or 128 rows); N: the format's column granule (POOL chunks), even on
        # maverick (the MXTENSOR_V2 column count n0 x n1 with n0, n1 <= 255).
        self.kpad = _ceil(self.k, 128) * 128
        gran = self.spec.get("ncols", 1)
        if arch == "maverick":
            gran = max(gran, 2)
        self.npad = _ceil(self.n, gran) * gran
        self.kt = [min(128, (self.kpad - KTILE * t) // 4) for t in range(_ceil(self.kpad, KTILE))]
        self.mt = [min(MTILE, self.m - MTILE * t) for t in range(_ceil(self.m, MTILE))]
        self.nt = [min(NTILE, self.npad - NTILE * t) for t in range(_ceil(self.npad, NTILE))]
        self.groups = [list(range(g, min(g + GROUP, len(self.nt))))
                       for g in range(0, len(self.nt), GROUP)]
        self.padding = []
        if self.kpad != self.k:
            self.padding.append(f"K {self.k} -> {self.kpad} (zero rows of W, zero columns of A: "
                                "K-tiles hold 32, 64, 96 or 128 partitions of 4 values)")
        if self.npad != self.n:
            self.padding.append(f"N {self.n} -> {self.npad} (zero columns of W, cut from C: "
                                f"{weights} on {arch} takes columns in multiples of {gran})")

    def group_cols(self, g):
        return sum(self.nt[t] for t in self.groups[g])


class Layout:
    """A bump allocator of SBUF byte offsets (the same in every partition)."""

    def __init__(self, capacity):
        self.top, self.capacity, self.regions = 0, capacity, []

    def take(self, nbytes, what):
        off = self.top
        self.top = _ceil(off + int(math.ceil(nbytes)), 64) * 64
        self.regions.append((what, off, nbytes))
        return off


# ----------------------------------------------------------------- instructions

def _qmx(kp, src, n, dst, dst_s):
    return (f"quantize_mx channels={kp} in_dtype=bf16 out_dtype=fp8_e4m3 "
            f"src=t3d(sbuf(0, {src:#x}), step=[1, 0, 0], num=[{4 * n}, 1, 1]) "
            f"dst=mx1d(data=sbuf(0, {dst:#x}), scale=sbuf(0, {dst_s:#x}), num={n})")


def _cols(n):
    """MXTENSOR_V2 column count n as [n0, n1] with n0, n1 <= 255."""
    if n <= 255:
        return n, 1
    for n1 in (2, 4):
        if n % n1 == 0 and n // n1 <= 255:
            return n // n1, n1
    raise GemmError(f"{n} moving columns cannot be written as n0 x n1 <= 255 x 255")


def _ldweights(arch, kp, mw, data, scale):
    if arch == "mariana":
        return (f"ldweights_mx in_dtype=fp8_e4m3 rows={kp} cols={mw} "
                f"src=mx1d(data=sbuf(0, {data:#x}), scale=sbuf(0, {scale:#x}), num={mw})")
    return (f"ldweights in_dtype=fp8_e4m3 rows={kp} cols={mw} "
            f"src=mx(data=sbuf(0, {data:#x}), scale=sbuf(0, {scale:#x}), num=[{mw}, 1], "
            f"step_data={mw}, step_scale={mw})")


def _matmul(arch, dtype, kp, nw, acc, data, scale, psum):
    dst = f"dst=t3d(psum(0, {psum:#x}), step=[1, 0, 0], num=[{nw}, 1, 1])"
    if arch == "mariana":
        return (f"matmul_mx in_dtype={dtype} rows={kp} acc={acc} "
                f"src=mx1d(data=sbuf(0, {data:#x}), scale=sbuf(0, {scale:#x}), num={nw}) {dst}")
    n0, n1 = _cols(nw)
    return (f"matmul in_dtype={dtype} rows={kp} acc={acc} "
            f"src=mx(data=sbuf(0, {data:#x}), scale=sbuf(0, {scale:#x}), num=[{n0}, {n1}], "
            f"step_data={n0}, step_scale={n0}) {dst}")


# ----------------------------------------------------------------- the program

class Kernel:
    """The program of one GEMM with its data placement.

    Data movement is a layer: `HostPlacement` puts every input tile in SBUF
    before the run (core.write) and reads the results from SBUF after it; the
    compute pipeline (POOL widening, DVE QuantizeMX, PE loads and matmuls, PSUM
    accumulation, DVE evacuation) is the same whatever places the data.
    """

    def __init__(self, plan, capacity, lookahead=2):
        self.plan = plan
        self.lookahead = lookahead
        self.sched = Schedule(ENGINE_SEMS)
        self.lay = Layout(capacity)
        self._place()
        self._build()

    # Placement of every buffer (host placement: inputs and outputs resident).
    def _place(self):
        p, lay, spec = self.plan, self.lay, self.plan.spec
        self.abf = {(mt, kt): lay.take(8 * mw, f"A bf16 ({mt},{kt})")
                    for mt, mw in enumerate(p.mt) for kt in range(len(p.kt))}
        self.ra = self.lookahead + 1
        self.aq = [(lay.take(4 * MTILE, f"A mx slot {r}"), lay.take(MTILE, f"A scales slot {r}"))
                   for r in range(self.ra)]
        self.wraw, self.wq, self.ws = {}, {}, {}
        unit = None
        if spec["store"] == "packed" and spec["group"] == 8:
            unit = lay.take(NTILE, "unit E8M0 scales")
        self.unit_scales = unit
        for kt in range(len(p.kt)):
            for nt, nw in enumerate(p.nt):
                key = (kt, nt)
                if spec["store"] == "mx":
                    self.wq[key] = lay.take(spec["word_bytes"] * nw, f"W mx {key}")
                    self.ws[key] = lay.take(nw, f"W scales {key}")
                elif spec["store"] == "bf16":
                    self.wraw[key] = lay.take(8 * nw, f"W bf16 {key}")
                    self.wq[key] = lay.take(4 * nw, f"W mx {key}")
                    self.ws[key] = lay.take(nw, f"W scales {key}")
                else:
                    cb = 2.5 if spec["group"] == 8 else 3
                    self.wraw[key] = lay.take(cb * nw, f"W packed {key}")
                    self.wq[key] = lay.take(4 * nw, f"W fp8 {key}")
                    self.ws[key] = unit if unit is not None else lay.take(nw, f"W scales {key}")
        self.cout = {(mt, g): lay.take(4 * p.group_cols(g), f"C ({mt},{g})")
                     for mt in range(len(p.mt)) for g in range(len(p.groups))}
        if lay.top > lay.capacity:
            raise GemmError(
                f"the {p.m} x {p.k} x {p.n} GEMM needs {lay.top // 1024} KiB per SBUF partition "
                f"with every tile resident (host placement, no DMA), {lay.capacity // 1024} KiB "
                "exist: a smaller shape, or the DMA placement once the core has DMA queues")

    def _build(self):
        p, s, spec = self.plan, self.sched, self.plan.spec
        units = [(g, mt, kt) for g in range(len(p.groups)) for mt in range(len(p.mt))
                 for kt in range(len(p.kt))]
        prepared = set()

        def prep(u):
            g, mt, kt = units[u]
            kp, mw = p.kt[kt], p.mt[mt]
            r = u % self.ra
            aq, aqs = self.aq[r]
            s.add("dve", _qmx(kp, self.abf[(mt, kt)], mw, aq, aqs), "quantize_mx",
                  reads=[("abf", mt, kt)], writes=[("aq", r)])
            for nt in p.groups[g]:
                key = (kt, nt)
                if key in prepared or spec["store"] == "mx":
                    continue
                prepared.add(key)
                nw = p.nt[nt]
                if spec["store"] == "bf16":
                    s.add("dve", _qmx(kp, self.wraw[key], nw, self.wq[key], self.ws[key]),
                          "quantize_mx", reads=[("wraw", key)], writes=[("wq", key)])
                else:
                    words = (5 * nw // 8) if spec["group"] == 8 else (3 * nw // 4)
                    s.add("pool",
                          f"tensor_dequantize fmt={spec['dq']} group={spec['group']} "
                          f"channels={kp} src=t3d(sbuf(0, {self.wraw[key]:#x}), step=[1, 0, 0], "
                          f"num=[{words}, 1, 1]) dst=t3d(sbuf(0, {self.wq[key]:#x}), "
                          f"step=[1, 0, 0], num=[{nw}, 1, 1])",
                          "tensor_dequantize", reads=[("wraw", key)], writes=[("wq", key)])

        la = self.lookahead
        for u in range(min(la, len(units))):
            prep(u)
        for u, (g, mt, kt) in enumerate(units):
            if u + la < len(units):
                prep(u + la)
            kp, mw = p.kt[kt], p.mt[mt]
            aq, aqs = self.aq[u % self.ra]
            s.add("pe", _ldweights(p.arch, kp, mw, aq, aqs), "ldweights",
                  reads=[("aq", u % self.ra)])
            gi = g * len(p.mt) + mt
            half = gi % 2
            for j, nt in enumerate(p.groups[g]):
                key = (kt, nt)
                s.add("pe", _matmul(p.arch, spec["pe"], kp, p.nt[nt], int(kt > 0), self.wq[key],
                                    self.ws[key], 8192 * half + PSUM_BANK * j), "matmul",
                      reads=[("wq", key)] + ([("psum", half)] if kt else []),
                      writes=[("psum", half)])
            if kt == len(p.kt) - 1:
                cols = p.group_cols(g)
                s.add("dve", f"tensor_copy channels={mw} in_dtype=fp32 out_dtype=fp32 "
                      f"src=t3d(psum(0, {8192 * half:#x}), step=[1, 0, 0], num=[{cols}, 1, 1]) "
                      f"dst=t3d(sbuf(0, {self.cout[(mt, g)]:#x}), step=[1, 0, 0], "
                      f"num=[{cols}, 1, 1])", "tensor_copy",
                      reads=[("psum", half)], writes=[("c", mt, g)])
        s.assign_waits()

    def program(self, drop_wait=None):
        p = self.plan
        head = [f"C = A @ W: M {p.m}, K {p.k}, N {p.n}, weights {p.weights}, act bf16, {p.arch}",
                "generated by python3 -m tpbsim.kernels gemm (docs/KERNELS.md); every "
                "instruction increments its engine's semaphore (pool sem0, dve sem1, pe sem2)"]
        head += [f"padding: {x}" for x in p.padding]
        return self.sched.emit(p.arch, drop_wait=drop_wait, header=head)

    # Host placement: the SBUF image of the inputs, and the result read back.
    def sbuf_image(self, a_bits, qw):
        p, spec = self.plan, self.plan.spec
        img = np.zeros((128, self.lay.top), dtype=np.uint8)
        for (mt, kt), off in self.abf.items():
            m0, k0, mw, kp = MTILE * mt, KTILE * kt, p.mt[mt], p.kt[kt]
            sub = a_bits[m0:m0 + mw, k0:k0 + 4 * kp].reshape(mw, kp, 4).transpose(1, 0, 2)
            img[:kp, off:off + 8 * mw] = np.ascontiguousarray(sub).astype("<u2").view(
                np.uint8).reshape(kp, 8 * mw)
        if self.unit_scales is not None:
            for q in range(4):
                img[32 * q:32 * q + 4, self.unit_scales:self.unit_scales + NTILE] = UNIT_SCALE
        for (kt, nt), off in self.wq.items():
            kp, nw, n0, r0 = p.kt[kt], p.nt[nt], NTILE * nt, 128 * kt
            if spec["store"] == "mx":
                cb = spec["word_bytes"]
                img[:kp, off:off + cb * nw] = qw.data[r0:r0 + kp, cb * n0:cb * (n0 + nw)]
            else:
                cb = qw.col_bytes
                lo, hi = int(cb * n0), int(cb * (n0 + nw))
                img[:kp, self.wraw[(kt, nt)]:self.wraw[(kt, nt)] + hi - lo] = qw.data[r0:r0 + kp,
                                                                                     lo:hi]
            if qw.scales is not None:
                so = self.ws[(kt, nt)]
                for b in range(kp // 8):
                    part = 32 * (b // 4) + b % 4
                    img[part, so:so + nw] = qw.scales[16 * kt + b, n0:n0 + nw]
        return img

    def read_c(self, core):
        p = self.plan
        c = np.empty((p.m, p.npad), dtype=np.float32)
        for (mt, g), off in self.cout.items():
            cols = p.group_cols(g)
            n0 = NTILE * p.groups[g][0]
            c[MTILE * mt:MTILE * mt + p.mt[mt], n0:n0 + cols] = core.read(
                "sbuf", 0, off, (p.mt[mt], cols), "f32")
        return c[:, :p.n]


# ----------------------------------------------------------------- the run

def operands(plan, a=None, w=None, seed=0):
    """A (M x K) and W (K x N) float32: given, or random (A ~ N(0, 1), W ~ N(0, 1/K))."""
    rng = np.random.default_rng(seed)
    if a is None:
        a = rng.standard_normal((plan.m, plan.k)).astype(np.float32)
    if w is None:
        w = (rng.standard_normal((plan.k, plan.n)) / np.sqrt(plan.k)).astype(np.float32)
    for name, x, shape in (("--a", a, (plan.m, plan.k)), ("--w", w, (plan.k, plan.n))):
        if x.ndim != 2 or x.shape != shape:
            raise GemmError(f"{name} is {' x '.join(map(str, x.shape))}, the GEMM needs "
                            f"{shape[0]} x {shape[1]} (--m {plan.m} --k {plan.k} --n {plan.n})")
        bad = np.argwhere(~np.isfinite(x))
        if len(bad):
            raise GemmError(f"{name} holds {x[tuple(bad[0])]} at {tuple(int(i) for i in bad[0])}: "
                            "the inputs must be finite")
    return a.astype(np.float32), w.astype(np.float32)


def prepare(plan, a, w):
    """The host side: padded operands, what the hardware is handed and the values
    the PE multiplies. Returns (a_bits [M][Kpad] bf16 codes, a_used [M][Kpad],
    QuantizedWeights of [Kpad][Npad])."""
    a_pad = np.zeros((plan.m, plan.kpad), dtype=np.float32)
    a_pad[:, :plan.k] = a
    w_pad = np.zeros((plan.kpad, plan.npad), dtype=np.float32)
    w_pad[:plan.k, :plan.n] = w
    a_bits, a_vals = quant.bf16(a_pad)
    # The DVE's view: partition p, element 4m + l = A[m][4p + l]; blocks of 32 k.
    kp4 = plan.kpad // 4
    src = a_vals.reshape(plan.m, kp4, 4).transpose(1, 0, 2).reshape(kp4, 4 * plan.m)
    codes, s = quant.quantize_mx_dve(src)
    vals = quant.mx_values(codes, np.repeat(np.repeat(s, 8, axis=0), 4, axis=1), "e4m3")
    a_used = vals.reshape(kp4, plan.m, 4).transpose(1, 0, 2).reshape(plan.m, plan.kpad)
    return a_bits, a_used, quant.quantize_weights(w_pad, plan.weights)


def peak_tflops(timing):
    """The PE's MX peak: 128 x 128 PEs x 4 contraction values (pe_mx_row_pump
    'none') x 2 flops per cycle at the PE clock."""
    pump = timing["pe_mx_row_pump"]["none"]
    return 2 * 128 * 128 * pump * timing["clocks_mhz"]["pe"] * 1e6 / 1e12


def run(m, k, n, weights="mxfp4", act="bf16", arch="mariana", a=None, w=None, out=None,
        timing=None, timing_only=False, seed=0, drop_wait=None, traces=True, check=True,
        lookahead=2, log=print):
    """Runs one GEMM; returns its report (a dict) and writes the files into out."""
    if act != "bf16":
        raise GemmError(f"--act {act}: the activations are BF16 (quantized to MXFP8 E4M3 on the "
                        "DVE); no other activation path is modelled")
    plan = Plan(m, k, n, weights, arch)
    a, w = operands(plan, a, w, seed)
    wall0 = time.perf_counter()
    try:
        core = Core(arch, timing)
    except Error as e:
        raise GemmError(f"--timing: {e}") from None
    with core:
        kernel = Kernel(plan, core.partition_bytes("sbuf"), lookahead)
        a_bits, a_used, qw = prepare(plan, a, w)
        text = kernel.program(drop_wait)
        if out:
            os.makedirs(out, exist_ok=True)
            with open(os.path.join(out, "program.tpb"), "w") as f:
                f.write(text)
        run_kw = {}
        if timing_only:
            import inspect
            if "timing_only" not in inspect.signature(core.run).parameters:
                raise GemmError("--timing-only: this build of tpbsim has no timing-only run mode")
            run_kw["timing_only"] = True
        if out and traces:
            run_kw.update(stats=os.path.join(out, "stats.json"),
                          retire=os.path.join(out, "retire.txt"),
                          perfetto=os.path.join(out, "trace.perfetto.json"))
        core.write("sbuf", 0, 0, kernel.sbuf_image(a_bits, qw))
        for i in range(len(core.semaphores)):
            core.set_semaphore(i, 0)
        status = "ok"
        try:
            result = core.run(text, name="gemm.tpb", **run_kw)
        except Deadlock as e:
            status, result = "deadlock", e.result
        except Fault as e:
            status, result = "fault", e.result
            log(f"fault: {e}")
        c = kernel.read_c(core) if status == "ok" and not timing_only else None
        timing_profile = core.timing
    wall = time.perf_counter() - wall0

    report = make_report(plan, kernel, result, timing_profile, status, wall, timing_only)
    if c is not None and check:
        want = quant.fp32_ksum(a_used, qw.used)[:, :plan.n]
        same = np.array_equal(c.view(np.uint32), want.view(np.uint32))
        report["check"] = {
            "bit_exact": bool(same),
            "mismatches": int(np.count_nonzero(c.view(np.uint32) != want.view(np.uint32))),
            "reference": "FP32 sum over k ascending of a_used x w_used, one rounding per "
                         "multiply and per add (NumPy)"}
    elif timing_only:
        report["check"] = {"bit_exact": None, "reference": "timing-only run: no values"}
    else:
        report["check"] = {"bit_exact": False, "reason": status}
    if result is not None and status == "ok":
        report["ordering"] = ordering(kernel, result)
    if out:
        np.save(os.path.join(out, "a_used.npy"), a_used[:, :plan.k])
        np.save(os.path.join(out, "w_used.npy"), qw.used[:plan.k, :plan.n])
        if c is not None:
            np.save(os.path.join(out, "out.npy"), c)
        with open(os.path.join(out, "report.json"), "w") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
        if result is not None and traces:
            from .report import plot
            plot(report, result.retires, os.path.join(out, "report.png"))
    report["_arrays"] = dict(c=c, a_used=a_used[:, :plan.k], w_used=qw.used[:plan.k, :plan.n],
                             a_used_pad=a_used, w_used_pad=qw.used)
    report["_kernel"] = kernel
    return report


def ordering(kernel, result):
    """Every cross-engine hazard of the schedule checked on the retire records: the
    producer retired no later than the consumer issued. A missing or wrong wait
    shows here even when the race happened not to change a value."""
    ops = kernel.sched.ops
    rec = {(r.engine, r.index): r for r in result.retires}
    checked, bad = 0, []
    for i, op in enumerate(ops):
        c = rec.get((op.engine, op.pos))
        for d in op.deps:
            prod = ops[d]
            if prod.engine == op.engine:
                continue
            p = rec.get((prod.engine, prod.pos))
            checked += 1
            if c is None or p is None or p.end_ps > c.start_ps:
                bad.append(f"{op.engine}[{op.pos}] {op.kind} issued at "
                           f"{c.start_ps if c else '?'} ps before {prod.engine}[{prod.pos}] "
                           f"{prod.kind} retired at {p.end_ps if p else '?'} ps")
    return {"hazards_checked": checked, "violations": len(bad), "first": bad[:5]}


def make_report(plan, kernel, result, timing, status, wall, timing_only):
    from .report import engine_table, bound_by
    dur_ps = result.duration_ps if result is not None else 0
    flops = 2.0 * plan.m * plan.n * plan.k
    peak = peak_tflops(timing)
    achieved = flops / (dur_ps * 1e-12) / 1e12 if dur_ps else 0.0
    engines = engine_table(result, kernel) if result is not None else {}
    hbm_bytes = 0
    hbm_share = timing["hbm"]["mbytes_per_s"] / 1e3
    rep = {
        "command": "gemm",
        "shape": {"m": plan.m, "k": plan.k, "n": plan.n, "k_padded": plan.kpad,
                  "n_padded": plan.npad},
        "weights": plan.weights, "act": "bf16", "arch": plan.arch,
        "placement": "host (inputs written into SBUF before the run, results read from SBUF; "
                     "no DMA)",
        "padding": plan.padding,
        "status": status,
        "timing_only": bool(timing_only),
        "simulated_ns": dur_ps / 1000,
        "flops": flops,
        "achieved_tflops": achieved,
        "peak_tflops": peak,
        "pe_bound_ns": flops / (peak * 1e12) * 1e9,
        "hbm_bytes": hbm_bytes,
        "hbm_gbps": hbm_bytes / (dur_ps * 1e-12) / 1e9 if dur_ps else 0.0,
        "hbm_share_gbps": hbm_share,
        "engines": engines,
        "instructions": {e: sum(1 for op in kernel.sched.ops if op.engine == e)
                         for e in ENGINE_SEMS if any(op.engine == e for op in kernel.sched.ops)},
        "wall_seconds": wall,
    }
    rep["bound_by"], rep["bound_reason"] = bound_by(rep)
    return rep
