#!/usr/bin/python3
"""Plots a `tpbsim sweep` results CSV: a metric against the swept parameter.

Usage: /usr/bin/python3 platform/sweep/plot_sweep.py RESULTS.csv OUT.png --x KEY
           [--series KEY] [--metric COLUMN] [--title TEXT]

One line per value of --series (the sweep's second parameter), one panel per
workload; failed points are left out of the lines and counted in the title.
Called by `tpbsim sweep` after the points are collected (docs/SWEEPS.md).
"""
import argparse
import csv
import sys


def number(text):
    try:
        return float(text)
    except ValueError:
        return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("png")
    ap.add_argument("--x", required=True)
    ap.add_argument("--series", default="")
    ap.add_argument("--metric", default="simulated_ns")
    ap.add_argument("--title", default="sweep")
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        sys.exit(f"plot_sweep.py: matplotlib is missing ({e}); apt-get install python3-matplotlib")

    with open(a.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"plot_sweep.py: {a.csv}: no points")
    for col in [a.x, a.metric] + ([a.series] if a.series else []):
        if col not in rows[0]:
            sys.exit(f"plot_sweep.py: {a.csv}: no column '{col}'")

    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    failed = sum(1 for r in rows if r["status"] != "ok")
    fig, axes = plt.subplots(1, len(workloads), figsize=(6.4 * len(workloads), 4.6), squeeze=False)
    for ax, wl in zip(axes[0], workloads):
        mine = [r for r in rows if r["workload"] == wl and r["status"] == "ok"]
        series = list(dict.fromkeys(r[a.series] for r in mine)) if a.series else [None]
        for s in series:
            pts = sorted((number(r[a.x]), float(r[a.metric]))
                         for r in mine if s is None or r[a.series] == s)
            if not pts:
                continue
            label = f"{a.series} = {s}" if s is not None else a.metric
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        ax.set_title(wl)
        ax.set_xlabel(a.x)
        ax.set_ylabel(a.metric)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle(a.title + (f" ({failed} failed points not shown)" if failed else ""))
    fig.tight_layout()
    fig.savefig(a.png, dpi=100)


if __name__ == "__main__":
    main()
