#!/usr/bin/python3
"""The generated GEMM against its roofline over M (docs/KERNELS.md "Against the
roofline"): C = A @ W with K = N = 4096 on mariana, timing only, for M = 1, 2,
4, ..., 4096 and the MXFP8 and MXFP4 weight formats. Prints a Markdown table
and writes the plot.

    PYTHONPATH=build/python /usr/bin/python3 scripts/gemm_roofline.py \\
        --plot docs/img/gemm_roofline.png

The roofline of a shape is max(PE bound, DMA bound, HBM bound) of its report
(report.json's roofline_ns): flops over the PE's MX peak, and the HBM bytes
the kernel moves over the 16 DMA engines' bandwidth and over the core's HBM
share. Beside it, the busiest DMA engine's bound (dma_engine_bound_ns): its
partitions' bytes over its own bandwidth (MX scale rows load engines 0, 4, 8
and 12 more than the others)."""

import argparse
import sys

from tpbsim.kernels import gemm


def sweep(formats, ms, k, n, arch):
    rows = []
    for fmt in formats:
        for m in ms:
            r = gemm.run(m, k, n, fmt, arch=arch, timing_only=True, traces=False, log=None)
            rows.append({"weights": fmt, "m": m, "simulated_us": r["simulated_ns"] / 1e3,
                         "roofline_us": r["roofline_ns"] / 1e3,
                         "pe_us": r["pe_bound_ns"] / 1e3, "dma_us": r["dma_bound_ns"] / 1e3,
                         "engine_us": r["dma_engine_bound_ns"] / 1e3,
                         "tflops": r["achieved_tflops"], "bound_by": r["bound_by"],
                         "chain": (r["critical_chain"] or {}).get("summary", ""),
                         "races": (r["races"] or {}).get("count")})
    return rows


def table(rows):
    out = ["| weights | M | simulated (us) | roofline (us) | x roofline | busiest DMA engine (us) "
           "| x engine | TFLOPS | bound by | critical chain |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['weights']} | {r['m']} | {r['simulated_us']:.1f} | "
                   f"{r['roofline_us']:.1f} | {r['simulated_us'] / r['roofline_us']:.2f} | "
                   f"{r['engine_us']:.1f} | {r['simulated_us'] / r['engine_us']:.2f} | "
                   f"{r['tflops']:.1f} | {r['bound_by']} | {r['chain']} |")
    return "\n".join(out)


def plot(rows, path, k, n):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 5))
    for fmt, colour in (("mxfp8", "tab:blue"), ("mxfp4", "tab:orange")):
        rs = [r for r in rows if r["weights"] == fmt]
        if not rs:
            continue
        ms = [r["m"] for r in rs]
        ax.plot(ms, [r["simulated_us"] for r in rs], "o-", color=colour,
                label=f"{fmt}: simulated")
        ax.plot(ms, [r["roofline_us"] for r in rs], "--", color=colour,
                label=f"{fmt}: roofline max(PE, DMA, HBM)")
        ax.plot(ms, [1.3 * r["roofline_us"] for r in rs], ":", color=colour, alpha=0.6,
                label=f"{fmt}: 1.3 x roofline")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("M (rows of A)")
    ax.set_ylabel("simulated time (us)")
    ax.set_title(f"C = A @ W, K = {k}, N = {n}, mariana, timing only")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plot", help="write the plot here (PNG)")
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--arch", default="mariana")
    ap.add_argument("--formats", default="mxfp8,mxfp4")
    ap.add_argument("--max-m", type=int, default=4096)
    args = ap.parse_args()
    ms, m = [], 1
    while m <= args.max_m:
        ms.append(m)
        m *= 2
    rows = sweep(args.formats.split(","), ms, args.k, args.n, args.arch)
    print(table(rows))
    if args.plot:
        plot(rows, args.plot, args.k, args.n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
