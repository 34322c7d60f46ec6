#!/usr/bin/python3
"""Records every output of every workload and sweep example, and compares two records.

A change that must not alter behaviour (a refactoring) is checked so: record
with the tpbsim built before it, record with the one built after, compare.

    scripts/compare_outputs.py record BUILD_BEFORE/tpbsim /tmp/before
    scripts/compare_outputs.py record build/tpbsim /tmp/after
    scripts/compare_outputs.py compare /tmp/before /tmp/after

`record` runs each workload of traces/workloads/ (its cmd.txt, in a scratch
copy of its directory) three ways — as given, `--timing-only`, and `--cosim`
(a tpbsim without RTL records its refusal) — each with --retire, --stats,
--vcd (and its .gtkw), --perfetto and --dump-timing (and --cosim-vcd), and
keeps every file the run wrote, its stdout, stderr and exit code. Then every
sweep of traces/sweeps/ (--no-plot): results.csv, plan.json, commands.txt
and every point's files. What differs between two runs of one binary is
normalised: the host time (`wall_seconds`, the CSV's last column), the
record's own directory and the binary's path. `compare` lists every file
that is missing on one side or differs; exit 0 only when none does.
"""
import argparse
import csv
import filecmp
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODES = {
    "full": [],
    "timing_only": ["--timing-only"],
    "cosim": ["--cosim", "--cosim-vcd", "rtl.vcd"],
}
OUTPUTS = ["--retire", "retire.txt", "--stats", "stats.json", "--vcd", "trace.vcd",
           "--perfetto", "trace.json", "--dump-timing", "timing.json"]


def cmd_args(path):
    args = []
    for line in path.read_text().splitlines():
        if line.strip() and not line.strip().startswith("#"):
            args += line.split()
    return args


def zero_wall(obj):
    if isinstance(obj, dict):
        return {k: 0 if k == "wall_seconds" else zero_wall(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [zero_wall(v) for v in obj]
    return obj


def normalise(path, subs):
    """Rewrites one recorded file with what differs between runs taken out."""
    data = path.read_bytes()
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return
    for old, new in subs:
        text = text.replace(old, new)
    if path.suffix == ".json" and text.strip():
        try:
            text = json.dumps(zero_wall(json.loads(text)), indent=1, sort_keys=False) + "\n"
        except json.JSONDecodeError:
            pass
    if path.name == "results.csv":
        rows = list(csv.reader(io.StringIO(text)))
        if rows and rows[0][-1] == "wall_seconds":
            for r in rows[1:]:
                r[-1] = ""
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(rows)
        text = buf.getvalue()
    path.write_text(text)


def record_workload(tpbsim, wdir, out):
    for mode, extra in MODES.items():
        run_dir = out / "workloads" / wdir.name / mode
        shutil.copytree(wdir, run_dir)
        inputs = {p.name for p in run_dir.iterdir()}
        argv = [tpbsim, "run"] + cmd_args(wdir / "cmd.txt") + OUTPUTS + extra
        r = subprocess.run(argv, cwd=run_dir, capture_output=True, timeout=600)
        for name in inputs - {"out.npy"}:
            p = run_dir / name
            p.unlink() if p.is_file() else shutil.rmtree(p)
        (run_dir / "exit.txt").write_text(f"{r.returncode}\n")
        (run_dir / "stdout.txt").write_bytes(r.stdout)
        (run_dir / "stderr.txt").write_bytes(r.stderr)


def record_sweep(tpbsim, sweep, out):
    sweep_out = out / "sweeps" / sweep.parent.name
    argv = [tpbsim, "sweep", str(sweep), "--out", str(sweep_out), "--no-plot", "--jobs", "2"]
    r = subprocess.run(argv, capture_output=True, timeout=3600)
    (sweep_out / "exit.txt").write_text(f"{r.returncode}\n")
    (sweep_out / "stdout.txt").write_bytes(r.stdout)
    (sweep_out / "stderr.txt").write_bytes(r.stderr)


def record(tpbsim, out):
    tpbsim = str(pathlib.Path(tpbsim).resolve())
    out = pathlib.Path(out).resolve()
    if out.exists():
        sys.exit(f"{out} exists: record into a new directory")
    out.mkdir(parents=True)
    workloads = sorted(d for d in (ROOT / "traces/workloads").iterdir() if (d / "cmd.txt").is_file())
    for w in workloads:
        print(f"workload {w.name}", flush=True)
        record_workload(tpbsim, w, out)
    for s in sorted((ROOT / "traces/sweeps").glob("*/sweep.json")):
        print(f"sweep {s.parent.name}", flush=True)
        record_sweep(tpbsim, s, out)
    subs = [(str(out), "<OUT>"), (tpbsim, "<TPBSIM>"), (str(ROOT), "<ROOT>")]
    for p in sorted(out.rglob("*")):
        if p.is_file():
            normalise(p, subs)
    n = sum(1 for p in out.rglob("*") if p.is_file())
    print(f"recorded {n} files in {out}")


def compare(a, b):
    a, b = pathlib.Path(a), pathlib.Path(b)
    fa = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    fb = {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    bad = [f"only in {a}: {p}" for p in sorted(fa - fb)]
    bad += [f"only in {b}: {p}" for p in sorted(fb - fa)]
    same = 0
    for p in sorted(fa & fb):
        if filecmp.cmp(a / p, b / p, shallow=False):
            same += 1
        else:
            bad.append(f"differs: {p}")
    for line in bad:
        print(line)
    print(f"{same} files identical, {len(bad)} differ or are missing")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record", help="record every output of TPBSIM into OUT (a new directory)")
    r.add_argument("tpbsim")
    r.add_argument("out")
    c = sub.add_parser("compare", help="compare two records; exit 1 if any file differs")
    c.add_argument("a")
    c.add_argument("b")
    args = ap.parse_args()
    if args.cmd == "record":
        record(args.tpbsim, args.out)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
