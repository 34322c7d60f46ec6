#!/usr/bin/env python3
"""Draws a run's Perfetto trace (the Chrome-trace JSON of --perfetto, the
file ui.perfetto.dev opens) as a timeline picture: one row per track, in
the trace's own track order (process, then thread sort index), each
instruction a box named by its mnemonic, the bundles under it as a thin
strip, semaphore counters as steps. For documents and reviews on a machine
with no browser: the boxes are the trace's own "X" events, nothing else.

  trace_picture.py TRACE.json -o PICTURE.png [--title T] [--from US --to US]
"""
import argparse
import json
import sys
from collections import defaultdict


def read_tracks(events):
    """The trace's tracks in display order: a list of dicts with name,
    instructions [(ts, dur, name)], bundles [(ts, dur)], counters
    {name: [(ts, value)]}. An instruction is an "X" event with an `index`
    argument (the retired instruction); any other "X" event is a bundle."""
    proc_name, proc_sort, names, sorts = {}, {}, {}, {}
    for e in events:
        if e.get("ph") != "M":
            continue
        key, args = (e.get("pid"), e.get("tid")), e.get("args", {})
        if e["name"] == "process_name":
            proc_name[e.get("pid")] = args.get("name", "")
        elif e["name"] == "process_sort_index":
            proc_sort[e.get("pid")] = args.get("sort_index", 0)
        elif e["name"] == "thread_name":
            names[key] = args.get("name", "")
        elif e["name"] == "thread_sort_index":
            sorts[key] = args.get("sort_index", 0)
    tracks = defaultdict(lambda: {"instructions": [], "bundles": [], "counters": defaultdict(list)})
    for e in events:
        ph, key = e.get("ph"), (e.get("pid"), e.get("tid"))
        if ph == "X":
            item = (float(e["ts"]), float(e.get("dur", 0.0)))
            if "index" in e.get("args", {}):
                tracks[key]["instructions"].append(item + (e.get("name", ""),))
            else:
                tracks[key]["bundles"].append(item)
        elif ph == "C":
            for name, value in e.get("args", {}).items():
                tracks[key]["counters"][name].append((float(e["ts"]), float(value)))

    def order(key):
        return (proc_sort.get(key[0], 0), key[0], sorts.get(key, 0), key[1])

    out = []
    for key in sorted(tracks, key=order):
        t = tracks[key]
        label = names.get(key, f"tid {key[1]}")
        if len(proc_name) > 1:
            label = f"{proc_name.get(key[0], key[0])}: {label}"
        out.append({"name": label, "instructions": sorted(t["instructions"]),
                    "bundles": sorted(t["bundles"]), "counters": dict(t["counters"])})
    return out


def clip(tracks, lo, hi):
    """The tracks with only what overlaps [lo, hi] microseconds."""
    def keep(ts, dur):
        return ts + dur >= lo and ts <= hi

    out = []
    for t in tracks:
        out.append({**t,
                    "instructions": [i for i in t["instructions"] if keep(i[0], i[1])],
                    "bundles": [b for b in t["bundles"] if keep(b[0], b[1])],
                    "counters": {k: [p for p in v if lo <= p[0] <= hi]
                                 for k, v in t["counters"].items()}})
    return [t for t in out if t["instructions"] or t["bundles"] or
            any(t["counters"].values())]


def draw(tracks, path, title=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import colormaps

    mnemonics = sorted({i[2] for t in tracks for i in t["instructions"]})
    colours = colormaps["tab20"]
    colour = {m: colours(k % 20) for k, m in enumerate(mnemonics)}
    fig, ax = plt.subplots(figsize=(13, 0.32 * len(tracks) + 1.4))
    for row, t in enumerate(tracks):
        y = len(tracks) - 1 - row
        for ts, dur, name in t["instructions"]:
            ax.broken_barh([(ts, max(dur, 1e-6))], (y - 0.38, 0.6),
                           facecolors=colour[name], edgecolors="black", linewidths=0.3)
        if t["bundles"]:
            ax.broken_barh([(ts, max(dur, 1e-6)) for ts, dur in t["bundles"]], (y - 0.46, 0.07),
                           facecolors="dimgray")
        for name, points in t["counters"].items():
            if points:
                top = max(v for _, v in points) or 1.0
                xs = [p[0] for p in points]
                ys = [y - 0.38 + 0.6 * p[1] / top for p in points]
                ax.step(xs, ys, where="post", linewidth=0.8, label=None)
    ax.set_yticks(range(len(tracks)))
    ax.set_yticklabels([t["name"] for t in reversed(tracks)], fontsize=8)
    ax.set_ylim(-0.7, len(tracks) - 0.3)
    ax.set_xlabel("simulated time (us)")
    ax.grid(axis="x", linewidth=0.3)
    handles = [plt.Rectangle((0, 0), 1, 1, facecolor=colour[m]) for m in mnemonics]
    if handles:
        ax.legend(handles, mnemonics, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
                  frameon=False)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("-o", "--out", required=True, help="the picture (PNG)")
    ap.add_argument("--title")
    ap.add_argument("--from", dest="lo", type=float, help="start (us)")
    ap.add_argument("--to", dest="hi", type=float, help="end (us)")
    a = ap.parse_args(argv)
    try:
        with open(a.trace) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"trace_picture.py: {a.trace}: {e}")
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    tracks = read_tracks(events)
    if a.lo is not None or a.hi is not None:
        tracks = clip(tracks, a.lo if a.lo is not None else float("-inf"),
                      a.hi if a.hi is not None else float("inf"))
    if not tracks:
        sys.exit(f"trace_picture.py: {a.trace}: no event to draw")
    draw(tracks, a.out, a.title)
    print(f"{a.out}: {len(tracks)} tracks, "
          f"{sum(len(t['instructions']) for t in tracks)} instructions")


if __name__ == "__main__":
    main()
