#!/usr/bin/python3
"""Records the GEMM generator's outputs and times over a set of requests, and
compares two records (docs/KERNELS.md): a change to the generator that must
keep its values is checked so.

    scripts/compare_gemm.py record /work/baseline/build/python /tmp/gemm-before
    scripts/compare_gemm.py record build/python /tmp/gemm-after
    scripts/compare_gemm.py compare /tmp/gemm-before /tmp/gemm-after

`record` runs ``python3 -m tpbsim.kernels gemm`` (the interpreter with NumPy,
/usr/bin/python3, with PYTHONPATH the given package directory) for every case
below: every weight format on both MX generations over ragged and multi-tile
shapes, the tail shapes (narrow last panels, one store of C), the SBUF
placement, C over 2, 3 and 4 cores (with values), and the validation points of
docs/KERNELS.md timing-only (4096^3 on one core and eight, M = 512..2048, the
GEMVs). Each case keeps out.npy, a_used.npy, w_used.npy and report.json
(and the program text: program.tpb, program_N.tpb over several cores).

`compare` prints one Markdown row per case: whether out.npy, a_used.npy and
w_used.npy are byte-identical, the simulated time of each side and their
ratio; exit 0 only when every array the before's build wrote is identical
(an array only the after's wrote is "new").
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys

FORMATS = ["mxfp4", "mxfp8", "bf16", "nf4", "int4", "fp4", "fp6"]
ARCHS = ["mariana", "maverick"]


def cases():
    """(name, arguments of `gemm`)."""
    out = []
    for fmt in FORMATS:
        for arch in ARCHS:
            for m, k, n in ((128, 512, 512), (100, 300, 200), (130, 1060, 600), (5, 31, 4097),
                            (130, 600, 2600)):
                out.append((f"{fmt}-{arch}-{m}x{k}x{n}",
                            ["--m", m, "--k", k, "--n", n, "--weights", fmt, "--arch", arch,
                             "--seed", m + k]))
    for m, k, n, fmt, arch in ((300, 1100, 2600, "mxfp8", "mariana"),
                               (5, 2048, 5000, "mxfp4", "maverick"),
                               (1, 4096, 3000, "int4", "mariana"),
                               (256, 1024, 1024, "nf4", "mariana")):
        out.append((f"tail-{fmt}-{arch}-{m}x{k}x{n}",
                    ["--m", m, "--k", k, "--n", n, "--weights", fmt, "--arch", arch]))
    for fmt, arch in (("mxfp8", "maverick"), ("fp6", "mariana")):
        out.append((f"sbuf-{fmt}-{arch}", ["--m", 100, "--k", 300, "--n", 200, "--weights", fmt,
                                           "--arch", arch, "--placement", "sbuf"]))
    for fmt, arch, cores in (("mxfp4", "mariana", 2), ("nf4", "mariana", 4),
                             ("mxfp8", "maverick", 3), ("bf16", "mariana", 2),
                             ("fp6", "mariana", 4)):
        out.append((f"cores{cores}-{fmt}-{arch}",
                    ["--m", 300, "--k", 1000, "--n", 1500, "--weights", fmt, "--arch", arch,
                     "--cores", cores]))
    timing = []
    for fmt in ("mxfp8", "mxfp4"):
        timing.append((f"t-{fmt}-4096^3", ["--m", 4096, "--k", 4096, "--n", 4096,
                                            "--weights", fmt]))
        timing.append((f"t-{fmt}-4096^3-8cores", ["--m", 4096, "--k", 4096, "--n", 4096,
                                                   "--weights", fmt, "--cores", 8]))
        timing.append((f"t-{fmt}-gemv", ["--m", 1, "--k", 4096, "--n", 4096, "--weights", fmt]))
        for m in (512, 1024, 2048):
            timing.append((f"t-{fmt}-{m}x4096x4096", ["--m", m, "--k", 4096, "--n", 4096,
                                                      "--weights", fmt]))
    return out + [(name, args + ["--timing-only"]) for name, args in timing]


def record(package, out, only=None):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(package))
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name, args in cases():
        if only and only not in name:
            continue
        d = out / name
        if (d / "report.json").exists():
            continue
        p = subprocess.run(["/usr/bin/python3", "-m", "tpbsim.kernels", "gemm", *map(str, args),
                            "--no-traces", "--out", str(d)], env=env, capture_output=True,
                           text=True)
        (out / f"{name}.log").write_text(f"exit {p.returncode}\n{p.stdout}{p.stderr}")
        print(f"{name}: exit {p.returncode}", flush=True)


def _same(a, b):
    """Whether file a (before) and b (after) hold the same bytes: "same",
    "DIFFERS", "-" (neither written), "new" (after only: the before's build
    did not write it), "MISSING" (before only)."""
    if not a.exists() and not b.exists():
        return "-"
    if not b.exists():
        return "MISSING"
    if not a.exists():
        return "new"
    return "same" if a.read_bytes() == b.read_bytes() else "DIFFERS"


def compare(before, after):
    before, after = pathlib.Path(before), pathlib.Path(after)
    bad = 0
    print("| case | out.npy | a_used.npy | w_used.npy | before (us) | after (us) "
          "| after / before |")
    print("|---|---|---|---|---|---|---|")
    for name, _ in cases():
        rb, ra = before / name / "report.json", after / name / "report.json"
        if not (rb.exists() and ra.exists()):
            print(f"| {name} | not recorded on both sides | | | | | |")
            bad += 1
            continue
        same = [_same(before / name / f, after / name / f)
                for f in ("out.npy", "a_used.npy", "w_used.npy")]
        bad += sum(s in ("DIFFERS", "MISSING") for s in same)
        tb = json.loads(rb.read_text())["simulated_ns"] / 1e3
        ta = json.loads(ra.read_text())["simulated_ns"] / 1e3
        print(f"| {name} | {' | '.join(same)} | {tb:.3f} | {ta:.3f} | "
              f"{ta / tb if tb else 0:.4f} |")
    return 1 if bad else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record", help="run every case with one build's package")
    r.add_argument("package", help="the directory holding tpbsim (a build's python/)")
    r.add_argument("out")
    r.add_argument("--only", help="only the cases whose name holds this")
    c = sub.add_parser("compare", help="compare two records")
    c.add_argument("before")
    c.add_argument("after")
    a = ap.parse_args(argv)
    if a.cmd == "record":
        record(a.package, a.out, a.only)
        return 0
    return compare(a.before, a.after)


if __name__ == "__main__":
    sys.exit(main())
