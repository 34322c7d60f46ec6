"""The GEMM report: busy time per engine and per DMA queue, what bounds the run,
and report.png, a per-engine utilisation timeline (docs/KERNELS.md "The report");
over several cores each core's busy shares and the device's HBM ("Over several
cores"). A core's part of a device's run is read through CoreRun."""

import collections

import numpy as np

from .plan import A_CHUNK, W_CHUNK, peak_tflops

SATURATED_PCT = 70.0   # below this no engine is said to bound the run
ENGINE_ORDER = ["pe", "dve", "pool", "sfu"] + [f"dma{q}" for q in range(16)]
NAMES = {"pe": "PE", "dve": "DVE", "pool": "POOL", "sfu": "SFU"}


def _name(e):
    return NAMES.get(e, e.upper())


# A retired instruction of one core, its engine named without the core.
CoreRetire = collections.namedtuple("CoreRetire", "start_ps end_ps engine index opcode mnemonic")


class CoreRun:
    """Core ``core``'s part of a run's tpbsim.Result, as the report reads a run of
    one core: its engines (``coreN.`` dropped when the device has several), its
    retires, busy fractions; the run's time, and its races (the device's)."""

    def __init__(self, result, core):
        self.result = result
        tables = result.cores
        self.prefix = f"core{core}." if len(tables) > 1 else ""
        self.engines = tables[core] if self.prefix else result.engines
        self.duration_ps, self.start_ps = result.duration_ps, result.start_ps
        self.races, self.race_count = result.races, result.race_count
        self._retires = None

    @property
    def retires(self):
        if not self.prefix:
            return self.result.retires
        if self._retires is None:
            cut = len(self.prefix)
            self._retires = [CoreRetire(r.start_ps, r.end_ps, r.engine[cut:], r.index, r.opcode,
                                        r.mnemonic)
                             for r in self.result.retires if r.engine.startswith(self.prefix)]
        return self._retires

    def busy_fraction(self, engine):
        return self.result.busy_fraction(self.prefix + engine)

    @property
    def engine_active(self):
        """The core's engine-active figures (Result.engine_active)."""
        n = len(self.prefix)
        return {e[n:]: v for e, v in self.result.engine_active.items()
                if e.startswith(self.prefix)}


def engine_table(result, kernel):
    """{engine: {busy_pct, instructions, busy_cycles, stall_cycles, clock_mhz,
    by_kind: {mnemonic: busy_pct}}} for every engine or queue the program uses."""
    used = set(kernel.builder.queues)
    dur = result.duration_ps
    by_kind = {}
    for r in result.retires:
        d = by_kind.setdefault(r.engine, {})
        d[r.mnemonic] = d.get(r.mnemonic, 0) + (r.end_ps - r.start_ps)
    out = {}
    for name, e in result.engines.items():
        if name not in used and not e["instructions"] and not name.startswith("dma_engine"):
            continue
        out[name] = {
            "busy_pct": 100.0 * result.busy_fraction(name),
            "instructions": e["instructions"],
            "busy_cycles": e["busy_cycles"],
            "stall_cycles": e["stall_cycles"],
            "clock_mhz": e["clock_mhz"],
            "by_kind": {k: 100.0 * v / dur if dur else 0.0
                        for k, v in sorted(by_kind.get(name, {}).items())},
        }
        cnt = e.get("counters", {}) or {}
        if name.startswith("dma") and not name.startswith("dma_engine"):
            out[name]["hbm_bytes"] = int(cnt.get("hbm_read_bytes", 0)) + int(
                cnt.get("hbm_write_bytes", 0))
            out[name]["dma_bytes"] = int(cnt.get("dma_bytes", 0))
    return out


def bound_by(rep):
    """(bound_by, one line of reasoning) from the busy shares and the HBM's."""
    engines = rep["engines"]
    if not engines:
        return "none", "the run did not complete"
    # The resources: the compute engines, the DMA engines (a queue is not one:
    # its busy time is transfers in flight, waiting or not) and the HBM. The
    # DMA engines count as their busiest: a transfer's partitions fix its
    # engines (SPEC §10), so the 4 engines of the MX scale rows' partitions
    # can bound a run while the others idle.
    cands = {e: v["busy_pct"] for e, v in engines.items() if not e.startswith("dma")}
    dma = {e: v["busy_pct"] for e, v in engines.items() if e.startswith("dma_engine")}
    if dma:
        cands["dma"] = max(dma.values())
    if rep["hbm_bytes"]:
        cands["hbm"] = 100.0 * rep["hbm_gbps"] / rep["hbm_share_gbps"]
    order = sorted(cands, key=lambda e: -cands[e])
    top = order[0]
    # A DMA engine's busy time includes its wait for the HBM's bandwidth: when
    # the HBM is as busy, it is the limit.
    if top == "dma" and cands.get("hbm", 0) >= cands["dma"] - 2.0:
        top = "hbm"
        order.remove("hbm")
        order.insert(0, "hbm")
    shown = ", ".join(f"{_name(e)} {cands[e]:.0f}%" for e in order[:4])
    what = {"pe": "the PE's matmuls bound it",
            "dve": "the DVE bounds it",
            "pool": "POOL's widening bounds it",
            "hbm": "the HBM bandwidth bounds it"}.get(top, f"{_name(top)} bounds it")
    if top == "dma":
        busiest = max(dma, key=dma.get)
        what = (f"the DMA engines bound it (the busiest, {busiest.replace('dma_engine', 'engine ')}; "
                f"mean {sum(dma.values()) / len(dma):.0f}%: their bandwidth, dma.mbytes_per_s, "
                "and their costs per transfer, dma.transfer_cost_ns and dma.engine_cost_ns)")
    if top == "dve":
        kinds = engines["dve"]["by_kind"]
        if kinds:
            k = max(kinds, key=kinds.get)
            what = {"quantize_mx": "QuantizeMX on the DVE bounds it",
                    "tensor_copy": "the DVE's PSUM evacuation (tensor_copy) bounds it"}.get(
                        k, what)
            what += " (" + ", ".join(f"{n} {v:.0f}%" for n, v in kinds.items()) + ")"
    if cands[top] < SATURATED_PCT:
        return "latency", (f"{shown} busy: no engine is saturated; fixed costs and the "
                           "dependencies between engines (pipeline fill and drain) bound it")
    return ("hbm" if top == "hbm" else top), f"{shown} busy: {what}"


def critical_chain(result, kernel):
    """The chain of instructions that bounds the run, walked back from the one
    that completes last: an instruction started when the instruction its
    semaphore wait names completed (a wait), or else when its engine's
    previous instruction let it issue. {"instructions", "time_ns": {what: ns},
    "summary"}: the run's time from the chain's first start to its end, split
    by what held the chain (an engine's instructions of one kind, or a wait on
    another engine); None without retire records."""
    rec = {(r.engine, r.index): r for r in result.retires} if result is not None else {}
    if not rec:
        return None
    chain = _chain(kernel.builder, rec)
    b = kernel.builder
    time_ns = {}
    for n, (i, r) in enumerate(chain):
        inst = b.instrs[i]
        until = chain[n + 1][1].start_ps if n + 1 < len(chain) else r.end_ps
        key = f"{b.queues[inst.queue]} {_KIND.get(inst.mnemonic, inst.mnemonic)}"
        time_ns[key] = time_ns.get(key, 0.0) + max(0, until - r.start_ps) / 1000
    top = sorted(time_ns.items(), key=lambda kv: -kv[1])
    total = sum(time_ns.values()) or 1.0
    summary = ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in top[:4])
    return {"instructions": len(chain), "start_ns": chain[0][1].start_ps / 1000,
            "time_ns": dict(top), "summary": summary}


# The chain names an instruction by its kind, the same on both generations:
# the mnemonic, v4's MX forms by the plain name v5 uses.
_KIND = {"ldweights_mx": "ldweights", "matmul_mx": "matmul"}


def _chain(b, rec):
    """[(instruction index, its retire record)] of the critical chain, first to
    last (critical_chain)."""
    index = {(b.queues[inst.queue], inst.pos): i for i, inst in enumerate(b.instrs)}
    by_queue = {}
    for i, inst in enumerate(b.instrs):
        by_queue.setdefault(inst.queue, []).append(i)
    last = max(rec.values(), key=lambda r: (r.end_ps, r.start_ps))
    i = index.get((last.engine, last.index))
    chain = []
    while i is not None:
        inst = b.instrs[i]
        r = rec.get((b.queues[inst.queue], inst.pos))
        if r is None:
            break
        chain.append((i, r))
        prev = by_queue[inst.queue][inst.pos - 1] if inst.pos else None
        waited = by_queue[inst.wait[0]][inst.wait[1]] if inst.wait else None
        rw = rp = None
        if waited is not None:
            rw = rec.get((b.queues[inst.wait[0]], inst.wait[1]))
        if prev is not None:
            rp = rec.get((b.queues[inst.queue], inst.pos - 1))
        # The wait held it when its producer completed after the engine's
        # previous instruction started (the earliest the engine could issue).
        if rw is not None and (rp is None or rw.end_ps >= rp.start_ps) and \
                rw.end_ps <= r.start_ps + 1:
            i = waited
        else:
            i = prev
    chain.reverse()
    return chain


def _pyplot(rep):
    """matplotlib's pyplot (Agg), or None, noted in the report: a missing
    matplotlib costs the picture only."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        rep.setdefault("notes", []).append(f"report.png not written: {e}")
        return None
    return plt


def plot(rep, retires, path):
    """report.png: one row per engine / queue, each instruction a bar coloured by
    its mnemonic; below, each engine's busy share over time."""
    plt = _pyplot(rep)
    if plt is None:
        return
    engines = [e for e in ENGINE_ORDER if e in rep["engines"]]
    end_ns = max(rep["simulated_ns"], 1e-3)
    kinds = sorted({r.mnemonic for r in retires})
    cmap = plt.get_cmap("tab10")
    colour = {k: cmap(i % 10) for i, k in enumerate(kinds)}
    start0 = min((r.start_ps for r in retires), default=0)
    fig, (ax, au) = plt.subplots(2, 1, figsize=(12, 2.2 + 0.55 * len(engines) + 2.6),
                                 gridspec_kw={"height_ratios": [len(engines) + 1, 3]},
                                 sharex=True)
    for row, e in enumerate(engines):
        for k in kinds:
            bars = [((r.start_ps - start0) / 1000, (r.end_ps - r.start_ps) / 1000)
                    for r in retires if r.engine == e and r.mnemonic == k]
            if bars:
                ax.broken_barh(bars, (row - 0.38, 0.76), facecolors=colour[k], linewidth=0)
    ax.set_yticks(range(len(engines)))
    ax.set_yticklabels([f"{_name(e)} {rep['engines'][e]['busy_pct']:.0f}%" for e in engines])
    ax.invert_yaxis()
    ax.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=colour[k]) for k in kinds],
              labels=kinds, loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=len(kinds),
              fontsize=8, frameon=False)
    s = rep["shape"]
    ax.set_title(f"C = A @ W  {s['m']} x {s['k']} x {s['n']}, {rep['weights']} weights, "
                 f"{rep['arch']}:\n{rep['simulated_ns'] / 1000:.2f} us, "
                 f"{rep['achieved_tflops']:.1f} of {rep['peak_tflops']:.0f} TFLOPS; "
                 f"bound by {rep['bound_by']}", fontsize=10)
    bins = 200
    edges = np.linspace(0, end_ns, bins + 1)
    width = edges[1] - edges[0]
    def busy_of(names):
        busy = np.zeros(bins)
        for r in retires:
            if r.engine not in names:
                continue
            a, b = (r.start_ps - start0) / 1000, (r.end_ps - start0) / 1000
            i0, i1 = int(a // width), min(int(b // width), bins - 1)
            for i in range(i0, i1 + 1):
                busy[i] += max(0.0, min(b, edges[i + 1]) - max(a, edges[i]))
        return 100 * busy / width / len(names)

    # The compute engines one line each, the DMA queues as their mean.
    curves = [(_name(e), [e]) for e in engines if not e.startswith("dma")]
    dmas = [e for e in engines if e.startswith("dma") and not e.startswith("dma_engine")]
    if dmas:
        curves.append((f"DMA queues, transfers in flight (mean of {len(dmas)})", dmas))
    for label, names in curves:
        au.step(edges[:-1], busy_of(names), where="post", label=label, linewidth=1.2)
    au.set_ylim(0, 105)
    au.set_ylabel("busy %")
    au.set_xlabel("simulated time (ns)")
    au.set_xlim(0, end_ns)
    au.legend(loc="lower right", fontsize=8, ncol=min(len(curves), 5))
    au.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# What each format runs as (SPEC §12): the names say the storage, this says what
# the hardware is handed and what the PE multiplies.
RUNS_AS = {
    "mxfp8": "MXFP8 E4M3 (x4 words + E8M0 scales per 32 k) stored in HBM, multiplied as "
             "they are",
    "mxfp4": "MXFP4 E2M1 (x4 words + E8M0 scales per 32 k) stored in HBM, multiplied as "
             "they are",
    "bf16": "BF16 stored in HBM, quantized to MXFP8 E4M3 on the DVE (QuantizeMX, scales per "
            "32 k): the PE multiplies MXFP8",
    "fp4": "FP4 E2M1 packed with a scale per 8 codes, widened to FP8 E5M2 by POOL "
           "TensorDequantize: the PE multiplies FP8 E5M2 with unit scales",
    "int4": "INT4 packed with a scale per 8 codes, widened to FP8 E5M2 by POOL: the PE "
            "multiplies FP8 E5M2 with unit scales",
    "nf4": "NF4 packed with a scale per 8 codes, widened to FP8 E4M3 by POOL: the PE "
           "multiplies FP8 E4M3 with unit scales",
    "fp6": "FP6 E2M3 packed, widened exactly to FP8 E4M3 by POOL: the PE multiplies MXFP8 "
           "E4M3 with E8M0 scales per 32 k",
}
ACT_RUNS_AS = "BF16, quantized to MXFP8 E4M3 on the DVE (QuantizeMX, scales per 32 k)"


def races(result):
    """The race check's verdict on the run (SPEC §14): every access of every
    instruction and DMA transfer against the semaphore ordering, so a missing wait
    shows whatever the timing (None: not checked)."""
    if result is None or result.races is None:
        return None
    return {"count": result.race_count, "first": [r["message"] for r in result.races[:5]]}


def ordering(kernel):
    """How the program is ordered (tpbsim.program's builder): the dependences
    between queues it derived from the instructions' bytes, the waits and the
    wait-only nops that carry them. The race check (races) is what checks
    them in the run."""
    b = kernel.builder
    deps = sum(len(d) for i in range(len(b.instrs)) if (d := b.deps(i)))
    return {"dependences": deps, "waits": len(b.waits()), "nops": b.nops}


def make_report(plan, kernel, result, timing, status, wall, timing_only):
    dur_ps = result.duration_ps if result is not None else 0
    flops = 2.0 * plan.m * plan.n * plan.k
    peak = peak_tflops(timing)
    achieved = flops / (dur_ps * 1e-12) / 1e12 if dur_ps else 0.0
    engines = engine_table(result, kernel) if result is not None else {}
    hbm_bytes = sum(v.get("hbm_bytes", 0) for v in engines.values())
    hbm_share = timing["hbm"]["mbytes_per_s"] / 1e3
    dma_gbps = timing["dma"]["engines"] * timing["dma"]["mbytes_per_s"] / 1e3
    if kernel.placement == "dma":
        qs = {k: ",".join(f"dma{q}" for q in v) for k, v in kernel.queues.items()}
        a_where = (f"resident in {kernel.ra} slots, loaded once for every weight panel in "
                   "the order the PE uses it"
                   if kernel.a_resident else
                   f"into a ring of {kernel.ra} slots, issued {max(1, kernel.ra - 2)} ahead")
        a_queues = f"dma{kernel.queues['w' if kernel.a_resident else 'a'][0]}"
        placement = (f"dma (A, W and C in HBM; A on {a_queues} in {kernel.n_a_loads} transfers "
                     f"of up to {A_CHUNK // 1024} KiB per partition {a_where}; W panels of "
                     f"{plan.group_nts(0)} N-tiles"
                     + (f" (the last {plan.tail_nt} in panels of one, A being resident)"
                        if plan.tail_nt else "")
                     + f" on dma{kernel.queues['w'][0]} in transfers "
                     f"of up to {W_CHUNK // 1024} KiB per partition, double-buffered; C from "
                     f"{kernel.rc} SBUF slots on {qs['c']})")
    else:
        placement = ("sbuf (inputs written into SBUF before the run, results read from SBUF; "
                     "no DMA)")
    rep = {
        "command": "gemm",
        "shape": {"m": plan.m, "k": plan.k, "n": plan.n, "k_padded": plan.kpad,
                  "n_padded": plan.npad},
        "weights": plan.weights, "act": "bf16", "arch": plan.arch,
        "placement": placement,
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
        "hbm_bound_ns": hbm_bytes / (hbm_share * 1e9) * 1e9 if hbm_share else 0.0,
        # The DMA engines together (dma.engines x dma.mbytes_per_s): every HBM
        # byte crosses one of them.
        "dma_gbps": dma_gbps,
        "dma_bound_ns": hbm_bytes / dma_gbps if dma_gbps else 0.0,
        # The busiest DMA engine alone: its partitions' bytes over its bandwidth
        # (a transfer is split by partition; MX scale rows sit in 4 partitions
        # per quadrant, so engines 0, 4, 8 and 12 carry more).
        "dma_engine_bound_ns": (max(kernel.dma_engine_bytes(timing["dma"]["engines"]))
                                / (timing["dma"]["mbytes_per_s"] / 1e3)
                                if kernel.placement == "dma" and dma_gbps else 0.0),
        "engines": engines,
        "engine_active": result.engine_active if result is not None else {},
        "instructions": _instructions(kernel.builder),
        "wall_seconds": wall,
    }
    rep["roofline_ns"] = max(rep["pe_bound_ns"], rep["hbm_bound_ns"], rep["dma_bound_ns"])
    rep["bound_by"], rep["bound_reason"] = bound_by(rep)
    rep["critical_chain"] = critical_chain(result, kernel) if result is not None else None
    return rep


def _instructions(b):
    """{queue: instructions} in the builder's queue order (nops included)."""
    counts = b.queue_counts()
    return {q: counts[q] for q in b.queue_order if q in counts}


def device_report(plan, sp, runs, timing, status, timing_only):
    """The report of a GEMM over several cores (its split, each core's busy
    shares and what bounds it, the device's HBM): ``runs`` the blocks' CoreRun
    (None when the run did not start)."""
    dur = runs[0].duration_ps if runs[0] is not None else 0
    cores = len(sp.blocks)
    flops = 2.0 * plan.m * plan.n * plan.k
    peak = peak_tflops(timing)
    per_core = [_core_row(b, run) for b, run in zip(sp.blocks, runs)]
    hbm_bytes = sum(p["hbm_bytes"] for p in per_core)
    dev_share = sp.hbm.bytes_per_s / 1e9   # the device's (every core's pooled), GB/s
    return {
        "command": "gemm", "cores": cores,
        "shape": {"m": plan.m, "k": plan.k, "n": plan.n},
        "weights": plan.weights, "arch": plan.arch, "status": status,
        "timing_only": bool(timing_only),
        "split": {"rows": sp.rows, "cols": sp.cols, "reason": sp.reason},
        "simulated_ns": dur / 1000, "flops": flops,
        "achieved_tflops": flops / (dur * 1e-12) / 1e12 if dur else 0.0,
        "peak_tflops": cores * peak, "pe_bound_ns": flops / (cores * peak * 1e12) * 1e9,
        "hbm_bytes": hbm_bytes,
        "hbm_gbps": hbm_bytes / (dur * 1e-12) / 1e9 if dur else 0.0,
        "hbm_share_gbps": dev_share,
        "hbm_bound_ns": hbm_bytes / dev_share if dev_share else 0.0,
        "per_core": per_core,
    }


def _core_row(b, run):
    """One core's row of a device report: its block, its busy shares of PE, DVE,
    POOL and its busiest DMA engine, its HBM bytes, when it ended, what bounds it."""
    eng = run.engines if run is not None else {}
    busy = {}
    for name in ("pe", "dve", "pool"):
        if name in eng and eng[name].get("instructions"):
            busy[name] = 100.0 * run.busy_fraction(name)
    dma = [100.0 * run.busy_fraction(e) for e in eng if e.startswith("dma_engine")]
    if dma:
        busy["dma"] = max(dma)
    qbytes = sum(int((v.get("counters") or {}).get("hbm_read_bytes", 0))
                 + int((v.get("counters") or {}).get("hbm_write_bytes", 0))
                 for e, v in eng.items() if e.startswith("dma") and e[3:].isdigit())
    ends = [r.end_ps for r in (run.retires if run is not None else [])]
    top = max(busy, key=busy.get) if busy else "none"
    return {"core": b.core, "rows": [b.r0, b.r0 + b.rows], "cols": [b.c0, b.c0 + b.cols],
            "simulated_ns": max(ends) / 1000 if ends else 0.0,
            "busy_pct": busy, "hbm_bytes": qbytes,
            "engine_active": run.engine_active if run is not None else {},
            "bound_by": top if busy and busy[top] >= SATURATED_PCT else "latency"}


def plot_cores(rep, path):
    """report.png of a GEMM over several cores: each core's busy share (PE, DVE,
    POOL, its busiest DMA engine) and the device's HBM bandwidth against its share."""
    plt = _pyplot(rep)
    if plt is None:
        return
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
