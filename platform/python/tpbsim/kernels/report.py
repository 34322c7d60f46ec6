"""The GEMM report: busy time per engine and per DMA queue, what bounds the run,
and report.png, a per-engine utilisation timeline (docs/KERNELS.md "The report")."""

import numpy as np

SATURATED_PCT = 70.0   # below this no engine is said to bound the run
ENGINE_ORDER = ["pe", "dve", "pool", "sfu"] + [f"dma{q}" for q in range(16)]
NAMES = {"pe": "PE", "dve": "DVE", "pool": "POOL", "sfu": "SFU"}


def _name(e):
    return NAMES.get(e, e.upper())


def engine_table(result, kernel):
    """{engine: {busy_pct, instructions, busy_cycles, stall_cycles, clock_mhz,
    by_kind: {mnemonic: busy_pct}}} for every engine or queue the program uses."""
    used = {op.engine for op in kernel.sched.ops}
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
    ops = kernel.sched.ops
    rec = {(r.engine, r.index): r for r in result.retires} if result is not None else {}
    if not rec:
        return None
    by_engine = {}
    for i, op in enumerate(ops):
        by_engine.setdefault(op.engine, []).append(i)
    index = {(op.engine, op.pos): i for i, op in enumerate(ops)}
    last = max(rec.values(), key=lambda r: (r.end_ps, r.start_ps))
    i = index.get((last.engine, last.index))
    chain = []
    while i is not None:
        op = ops[i]
        r = rec.get((op.engine, op.pos))
        if r is None:
            break
        chain.append((i, r))
        prev = by_engine[op.engine][op.pos - 1] if op.pos else None
        waited = by_engine[op.wait[0]][op.wait[1] - 1] if op.wait else None
        rw = rec.get((ops[waited].engine, ops[waited].pos)) if waited is not None else None
        rp = rec.get((ops[prev].engine, ops[prev].pos)) if prev is not None else None
        # The wait held it when its producer completed after the engine's
        # previous instruction started (the earliest the engine could issue).
        if rw is not None and (rp is None or rw.end_ps >= rp.start_ps) and \
                rw.end_ps <= r.start_ps + 1:
            i = waited
        else:
            i = prev
    chain.reverse()
    time_ns = {}
    for n, (i, r) in enumerate(chain):
        op = ops[i]
        until = chain[n + 1][1].start_ps if n + 1 < len(chain) else r.end_ps
        key = f"{op.engine} {op.kind}"
        time_ns[key] = time_ns.get(key, 0.0) + max(0, until - r.start_ps) / 1000
    top = sorted(time_ns.items(), key=lambda kv: -kv[1])
    total = sum(time_ns.values()) or 1.0
    summary = ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in top[:4])
    return {"instructions": len(chain), "start_ns": chain[0][1].start_ps / 1000,
            "time_ns": dict(top), "summary": summary}


def plot(rep, retires, path):
    """report.png: one row per engine / queue, each instruction a bar coloured by
    its mnemonic; below, each engine's busy share over time."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:  # a missing matplotlib costs the picture only
        rep.setdefault("notes", []).append(f"report.png not written: {e}")
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
