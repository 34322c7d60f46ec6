"""C = A @ W over the cores of a device (SPEC §15, docs/KERNELS.md "Over several
cores"): C split into a grid of blocks by rows, columns or both, one block per
core, each core its own program (the one-core kernel of gemm.py on its block:
its own DMA queues, engines and SBUF), the operands and C in the device's one
HBM, every core's range its own. The values are those of the one-core GEMM:
A's quantization is per row, W's per column, so a block of C is the block the
one-core kernel computes, bit for bit."""

import json
import os
import time

import numpy as np

from ..device import Device
from ..errors import Deadlock, Error, Fault
from . import gemm
from .gemm import GemmError, MTILE, NTILE, Plan, _ceil
from .report import SATURATED_PCT


def _splits(total, parts, unit, gran):
    """Block sizes of `total` in `parts` blocks: multiples of `unit` when every block
    is then non-empty, else of the granule `gran` (4200 columns in 8: blocks of
    1024 would leave the last ones empty, so 525 each); None when `parts` blocks
    cannot each be non-empty."""
    for step in ((unit, gran) if total >= parts * unit else (gran,)):
        size = _ceil(_ceil(total, parts), step) * step
        if (parts - 1) * size < total:
            return [min(size, total - i * size) for i in range(parts)]
    return None


def choose_grid(m, k, n, weights, arch, cores, timing, caps):
    """(rows, cols, reason): the grid of C blocks (rows x cols = cores) with the
    least estimated time per core: max(the block's PE bound plus its fill, its
    HBM bytes over its 16 DMA engines, the device's HBM bytes over the device's
    bandwidth). A
    row split repeats W in every row of cores, a column split A; the fill (the
    first weight panel's arrival, less the matmuls of the first M-tile meanwhile)
    is added."""
    peak = gemm.peak_tflops(timing) * 1e12
    dma = timing["dma"]["engines"] * timing["dma"]["mbytes_per_s"] * 1e6
    hbm = cores * timing["hbm"]["mbytes_per_s"] * 1e6
    gran = max(gemm.quant.WEIGHT_FORMATS[weights].get("ncols", 1), 2 if arch == "maverick" else 1)
    best, refused = None, None
    for gm in range(1, cores + 1):
        if cores % gm:
            continue
        gn = cores // gm
        rows, cols = _splits(m, gm, MTILE, 1), _splits(n, gn, NTILE, gran)
        if rows is None or cols is None:
            continue
        try:   # the panel width the block's kernel will have (check_sizes)
            plan = gemm.check_sizes(Plan(rows[0], k, cols[0], weights, arch), caps, values=False)
        except GemmError as e:
            refused = refused or e
            continue
        # The PE cannot start faster than the first weight panel arrives: its
        # first M-tile waits for the panel's K-tiles (the fill), less the
        # matmuls it does meanwhile.
        c_bytes = 4 * plan.m * plan.npad
        w_bytes = max(0, plan.hbm_bytes() - c_bytes - 2 * plan.m * plan.kpad)
        panel_cols = plan.group_cols(0)
        fill = max(0.0, w_bytes * panel_cols / plan.npad / dma
                   - 2.0 * min(MTILE, plan.m) * k * panel_cols / peak)
        per_core = max(2.0 * rows[0] * k * cols[0] / peak + fill, plan.hbm_bytes() / dma)
        device = gm * gn * plan.hbm_bytes() / hbm
        est = max(per_core, device)
        key = (est, gn)   # a tie: rows (W once per row of cores is the smaller operand)
        if best is None or key < best[0]:
            best = (key, gm, gn, rows, cols, per_core, device)
    if best is None:
        if refused:
            raise refused
        raise GemmError(f"C of {m} x {n} cannot be split into {cores} non-empty blocks")
    _, gm, gn, rows, cols, per_core, device = best
    why = (f"{gm} x {gn} blocks of {rows[0]} x {cols[0]}: each core's bound "
           f"{per_core * 1e6:.1f} us (its PE or its DMA engines, and the fill), the device's HBM "
           f"{device * 1e6:.1f} us; the least of the {cores}-core grids")
    return gm, gn, rows, cols, why


def make_blocks(m, k, n, weights, arch, cores, prof, caps, values):
    """(grid rows, grid cols, reason, blocks): C's blocks, one per core, each with
    its kernel (sizes checked, HBM from where the previous core's ends, inside
    the device's cores x hbm.bytes) and its program, checked against its own
    accesses (gemm.Kernel.verify)."""
    gm, gn, rows, cols, why = choose_grid(m, k, n, weights, arch, cores, prof, caps)
    blocks, base = [], 0
    for i, mr in enumerate(rows):
        for j, nc in enumerate(cols):
            plan = gemm.check_sizes(Plan(mr, k, nc, weights, arch), caps, "dma", 2, values)
            kern = gemm.Kernel(plan, caps.sbuf, 2, "dma", cores * caps.hbm, None, hbm_base=base)
            base = _ceil(kern.hbm.top, 4096) * 4096
            text = kern.program()
            verdict = kern.verify(text)
            if not verdict.ok:
                raise gemm.ProgramCheckError("the generated program of core "
                                             f"{len(blocks)} fails its own hazard check: "
                                             + "; ".join(verdict.problems[:3]))
            blocks.append({"core": len(blocks), "r0": sum(rows[:i]), "rows": mr,
                           "c0": sum(cols[:j]), "cols": nc, "kernel": kern, "text": text})
    return gm, gn, why, blocks


def emit_cores(m, k, n, weights, arch, cores, out):
    """A timing-only workload directory of the GEMM over `cores` cores (as
    traces/workloads/ hold them, docs/SWEEPS.md): program_I.tpb per core and
    cmd.txt (`--cores N program_0.tpb ... --timing-only`); runs nothing."""
    from ..core import Core
    with Core(arch) as c:
        prof, caps = c.timing, gemm.capacities(c)
    _, _, why, blocks = make_blocks(m, k, n, weights, arch, cores, prof, caps, False)
    os.makedirs(out, exist_ok=True)
    names = [f"program_{b['core']}.tpb" for b in blocks]
    for name, b in zip(names, blocks):
        with open(os.path.join(out, name), "w") as f:
            f.write(b["text"])
    with open(os.path.join(out, "cmd.txt"), "w") as f:
        f.write("# tpbsim run arguments, paths relative to this directory\n"
                f"# C = A @ W {m} x {k} x {n}, {weights} weights, {arch}, over {cores} cores "
                f"({why}), generated by python3 -m tpbsim.kernels gemm --cores {cores} "
                "--emit-only --timing-only\n"
                f"--cores {cores}\n" + "".join(f"{x}\n" for x in names) + "--timing-only\n")
    return {"emitted": out, "files": names + ["cmd.txt"], "split": why,
            "shape": f"{m} x {k} x {n}, {weights} weights, {arch}, {cores} cores"}


def run_cores(m, k, n, weights="mxfp4", arch="mariana", cores=2, a=None, w=None, out=None,
              timing=None, timing_only=False, seed=0, check="sample",
              check_samples=gemm.CHECK_SAMPLES, log=print, racecheck=True,
              scaling=True, emit_only=False):
    """Runs the GEMM over `cores` cores of one device; returns its report (a dict,
    report.json's keys) and writes report.json (and out.npy with values) into
    `out`. `scaling`: also time the one-core run (timing only) for the scaling
    efficiency. `emit_only` (with timing_only): emit_cores instead."""
    if isinstance(cores, bool) or not isinstance(cores, int) or cores < 1:
        raise GemmError(f"cores {cores!r}: a count of cores (1 or more)")
    if emit_only:
        if not timing_only or out is None or timing is not None:
            raise GemmError("emit_only over several cores writes a timing-only workload: it "
                            "needs timing_only, an out directory and no timing")
        return emit_cores(m, k, n, weights, arch, cores, out)
    wall0 = time.perf_counter()
    try:
        dev = Device(arch, cores=cores, timing=timing)
    except Error as e:
        raise GemmError(f"cannot make a device of {cores} {arch} cores: {e}") from None
    try:
        return _run(dev, m, k, n, weights, arch, cores, a, w, out, timing, timing_only, seed,
                    check, check_samples, log, racecheck, scaling, wall0)
    finally:
        dev.close()


def _run(dev, m, k, n, weights, arch, cores, a, w, out, timing, timing_only, seed, check,
         check_samples, log, racecheck, scaling, wall0):
    prof = dev.timing
    full = Plan(m, k, n, weights, arch)
    caps = gemm.capacities(dev.core(0))   # a core's; the HBM is the device's: cores x it
    t0 = time.perf_counter()
    gm, gn, why, blocks = make_blocks(m, k, n, weights, arch, cores, prof, caps,
                                      not timing_only)
    times = {"generate_s": time.perf_counter() - t0}
    a_used = w_used = None
    t0 = time.perf_counter()
    if not timing_only:
        a, w = gemm.operands(full, a, w, seed)
        a_used = np.zeros((m, full.kpad), np.float32)
        w_used = np.zeros((full.kpad, n), np.float32)
        for b in blocks:
            kern = b["kernel"]
            ab, au, qw = gemm.prepare(kern.plan, a[b["r0"]:b["r0"] + b["rows"]],
                                      w[:, b["c0"]:b["c0"] + b["cols"]])
            kern.place(dev, ab, qw)
            a_used[b["r0"]:b["r0"] + b["rows"]] = au
            w_used[:, b["c0"]:b["c0"] + b["cols"]] = qw.used[:, :b["cols"]]
    times["host_data_s"] = time.perf_counter() - t0
    status, message = "ok", ""
    t0 = time.perf_counter()
    try:
        result = dev.run([b["text"] for b in blocks], timing_only=bool(timing_only),
                         racecheck=bool(racecheck), name="gemm.tpb")
    except (Deadlock, Fault) as e:
        status, result, message = type(e).__name__.lower(), e.result, e.message
        if log:
            log(f"{status}: {e}")
    times["run_s"] = time.perf_counter() - t0

    c = None
    if status == "ok" and not timing_only:
        c = np.empty((m, n), np.float32)
        for b in blocks:
            c[b["r0"]:b["r0"] + b["rows"], b["c0"]:b["c0"] + b["cols"]] = \
                b["kernel"].read_c(dev)
    rep = _report(full, blocks, gm, gn, why, result, prof, status, timing_only, cores)
    rep["wall"] = times
    if message:
        rep["message"] = message
    if c is not None and check:
        t0 = time.perf_counter()
        rep["check"] = gemm.check_result(c, a_used, w_used, "full" if check == "full"
                                         else "sample", check_samples, seed)
        times["check_s"] = time.perf_counter() - t0
    else:
        rep["check"] = {"bit_exact": None,
                        "reason": "not checked: " + ("a timing-only run computes no values"
                                                     if timing_only else
                                                     f"the run ended in a {status}"
                                                     if status != "ok" else "check=None")}
    if result is not None and result.races is not None:
        rep["races"] = {"count": result.race_count,
                        "first": [r["message"] for r in result.races[:5]]}
    if scaling and status == "ok":
        t0 = time.perf_counter()
        one = gemm.run(m, k, n, weights, arch=arch, timing=timing, timing_only=True,
                       traces=False, check=None, racecheck=False, log=None)
        rep["one_core_ns"] = one["simulated_ns"]
        rep["scaling_efficiency"] = (one["simulated_ns"] / (cores * rep["simulated_ns"])
                                     if rep["simulated_ns"] else 0.0)
        times["one_core_s"] = time.perf_counter() - t0
    rep["wall_seconds"] = time.perf_counter() - wall0
    if out is not None:
        os.makedirs(out, exist_ok=True)
        files = ["report.json"]
        if c is not None:
            np.save(os.path.join(out, "out.npy"), c)
            files.append("out.npy")
        if _plot(rep, os.path.join(out, "report.png")):
            files.append("report.png")
        rep["files"] = files
        with open(os.path.join(out, "report.json"), "w") as f:
            json.dump(rep, f, indent=1)
    rep["_c"] = c
    rep["_result"] = result
    return rep


def _report(full, blocks, gm, gn, why, result, prof, status, timing_only, cores):
    dur = result.duration_ps if result is not None else 0
    flops = 2.0 * full.m * full.n * full.k
    peak = gemm.peak_tflops(prof)
    per_core, hbm_bytes = [], 0
    tables = result.cores if result is not None else [{} for _ in blocks]
    for b, eng in zip(blocks, tables):
        busy = {}
        for name in ("pe", "dve", "pool"):
            if name in eng and eng[name].get("instructions"):
                busy[name] = 100.0 * result.busy_fraction(f"core{b['core']}.{name}")
        dma = [100.0 * result.busy_fraction(f"core{b['core']}.{e}") for e in eng
               if e.startswith("dma_engine")]
        if dma:
            busy["dma"] = max(dma)
        qbytes = sum(int((v.get("counters") or {}).get("hbm_read_bytes", 0))
                     + int((v.get("counters") or {}).get("hbm_write_bytes", 0))
                     for e, v in eng.items() if e.startswith("dma") and e[3:].isdigit())
        hbm_bytes += qbytes
        ends = [r.end_ps for r in (result.retires if result is not None else [])
                if r.engine.startswith(f"core{b['core']}.")]
        top = max(busy, key=busy.get) if busy else "none"
        per_core.append({"core": b["core"], "rows": [b["r0"], b["r0"] + b["rows"]],
                         "cols": [b["c0"], b["c0"] + b["cols"]],
                         "simulated_ns": max(ends) / 1000 if ends else 0.0,
                         "busy_pct": busy, "hbm_bytes": qbytes,
                         "bound_by": top if busy and busy[top] >= SATURATED_PCT else "latency"})
    dev_share = cores * prof["hbm"]["mbytes_per_s"] / 1e3
    return {
        "command": "gemm", "cores": cores,
        "shape": {"m": full.m, "k": full.k, "n": full.n},
        "weights": full.weights, "arch": full.arch, "status": status,
        "timing_only": bool(timing_only),
        "split": {"rows": gm, "cols": gn, "reason": why},
        "simulated_ns": dur / 1000, "flops": flops,
        "achieved_tflops": flops / (dur * 1e-12) / 1e12 if dur else 0.0,
        "peak_tflops": cores * peak, "pe_bound_ns": flops / (cores * peak * 1e12) * 1e9,
        "hbm_bytes": hbm_bytes,
        "hbm_gbps": hbm_bytes / (dur * 1e-12) / 1e9 if dur else 0.0,
        "hbm_share_gbps": dev_share,
        "hbm_bound_ns": hbm_bytes / dev_share if dev_share else 0.0,
        "per_core": per_core,
        "engine_active": result.engine_active if result is not None else {},
    }


def _plot(rep, path):
    """report.png: each core's busy share (PE, DVE, POOL, its busiest DMA engine)
    and the device's HBM bandwidth against its share."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    pcs = rep["per_core"]
    kinds = ["pe", "dve", "pool", "dma"]
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(pcs) + 3), 4))
    width = 0.8 / len(kinds)
    for i, kind in enumerate(kinds):
        ax.bar([p["core"] + i * width for p in pcs], [p["busy_pct"].get(kind, 0) for p in pcs],
               width, label=kind.upper())
    ax.set_xticks([p["core"] + 0.4 - width / 2 for p in pcs])
    ax.set_xticklabels([f"core{p['core']}" for p in pcs])
    ax.set_ylim(0, 105)
    ax.set_ylabel("busy %")
    eff = rep.get("scaling_efficiency")
    ax.set_title(f"{rep['shape']['m']} x {rep['shape']['k']} x {rep['shape']['n']} "
                 f"{rep['weights']} over {rep['cores']} cores: {rep['simulated_ns'] / 1e3:.1f} us, "
                 f"HBM {rep['hbm_gbps']:.0f} of {rep['hbm_share_gbps']:.0f} GB/s"
                 + (f", scaling {100 * eff:.0f}%" if eff is not None else ""), fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True
