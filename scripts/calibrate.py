#!/usr/bin/python3
"""Calibration of the model's cycles against the public NeuronCore cost model.

For every modelled instruction and several free sizes and partition counts it
writes a one-instruction program, runs `tpbsim run` on it, reads the
instruction's busy cycles (engine cycles from its issue to its retire, fetch
included) and divides them by the public formula of ../shared/spec/TIMING.md.

  calibrate.py TPBSIM --write docs/TIMING.md   the table, generated
  calibrate.py TPBSIM --check                  exit 1 when a ratio leaves its band
  calibrate.py TPBSIM --check --compare docs/TIMING.md
                                               also exit 1 when the file is not what
                                               --write would write (stale)

The formulas and bands are TIMING.md's "Public cost model"; the sources are
its [A]..[M]. No numpy: the few .npy inputs are written by hand.
"""
import argparse
import json
import os
import pathlib
import struct
import subprocess
import sys
import tempfile

BAND_TIGHT = (0.7, 1.5)  # DVE, PE, SFU
BAND_POOL = (0.5, 2.0)  # GpSimd: "irregular"


def npy_f32(path, rows, cols, value=1.5):
    """A C-order float32 .npy of rows x cols, every element `value`."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<f", value) * (rows * cols))


# ---------------------------------------------------------------------------
# The cases: (instruction, engine, formula text, source, band, sizes, make)
# make(N, P) -> (program text, extra args, setup instructions on the engine)


def dequant(fmt, group, src_per_dst):
    s, d = src_per_dst

    def make(n, p):
        dst = n // s * d
        prog = f""".arch mariana
.engine pool
tensor_dequantize fmt={fmt} group={group} channels={p} \\
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[{n}, 1, 1]) \\
    dst=t3d(sbuf(0, 0x10000), step=[1, 0, 0], num=[{dst}, 1, 1])
"""
        return prog, [], 0

    def formula(n):
        return 150 + max(n, n // s * d)

    return make, formula


def quantize_mx(in_dtype):
    def make(n, p):
        prog = f""".arch mariana
.engine dve
quantize_mx channels={p} in_dtype={in_dtype} out_dtype=fp8_e4m3 \\
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[{n}, 1, 1]) \\
    dst=mx1d(data=sbuf(0, 0x30000), scale=sbuf(0, 0x38000), num={n // 4}, step=1, scale_pidx=0)
"""
        return prog, [], 0

    return make, lambda n: 64 + n / 4


def matmul_mx(in_dtype):
    def make(n, p):
        prog = f""".arch mariana
.engine pe
ldweights_mx in_dtype={in_dtype} rows={p} cols=128 \\
    src=mx1d(data=sbuf(0, 0x0), scale=sbuf(0, 0x1000), num=128)
matmul_mx in_dtype={in_dtype} rows={p} \\
    src=mx1d(data=sbuf(0, 0x2000), scale=sbuf(0, 0x3000), num={n}) \\
    dst=t3d(psum(0, 0x0), step=[1, 0, 0], num=[{n}, 1, 1])
"""
        return prog, [], 1

    return make, lambda n: 64 + max(64, n)


def ldweights_mx(in_dtype):
    def make(m, p):
        prog = f""".arch mariana
.engine pe
ldweights_mx in_dtype={in_dtype} rows={p} cols={m} \\
    src=mx1d(data=sbuf(0, 0x0), scale=sbuf(0, 0x1000), num={m})
"""
        return prog, [], 0

    # TIMING.md: about M / 4 + fill; fill = MM_INIT_LATENCY 64 [A, E], after
    # the fixed per-instruction overhead of 64 that every instruction pays.
    return make, lambda m: 64 + 64 + m / 4


def matmul_v5(mode):
    def make(n, p):
        if mode == "mx":
            src_w = "mx(data=sbuf(0, 0x0), scale=sbuf(0, 0x1000), num=[128, 1])"
            # num is u8 per dimension: N = 128 x (N / 128) columns, contiguous.
            src_m = (f"mx(data=sbuf(0, 0x2000), scale=sbuf(0, 0x3000), num=[128, {n // 128}], "
                     "step_data=128, step_scale=128)")
            dt = "fp8_e4m3"
        else:
            src_w = "t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[128, 1, 1])"
            src_m = f"t3d(sbuf(0, 0x2000), step=[1, 0, 0], num=[{n}, 1, 1])"
            dt = "bf16"
        prog = f""".arch maverick
.engine pe
ldweights in_dtype={dt} rows={p} cols=128 src={src_w}
matmul in_dtype={dt} rows={p} src={src_m} \\
    dst=t3d(psum(0, 0x0), step=[1, 0, 0], num=[{n}, 1, 1])
"""
        return prog, [], 1

    return make, lambda n: 64 + max(64, n)


def tensor_copy(src, in_dtype, out_dtype):
    def make(n, p):
        prog = f""".arch mariana
.engine dve
tensor_copy channels={p} in_dtype={in_dtype} out_dtype={out_dtype} \\
    src=t3d({src}(0, 0x0), step=[1, 0, 0], num=[{n}, 1, 1]) \\
    dst=t3d(sbuf(0, 0x20000), step=[1, 0, 0], num=[{n}, 1, 1])
"""
        return prog, [], 0

    return make, lambda n: max(64, n)


def tquant():
    def make(n, p):
        prog = f""".arch mariana
BSTART.SFU TQUANT, FP32; B.DATR S8, RNE, Sat=1; B.DIM LB0={n}; B.DIM LB1={p}; B.IOT T1, mask=1111, <last>, ->T0<{max(1, (n * p + 1023) // 1024)}>; BSTOP
"""
        return prog, [("tile1", p, n)], 0

    return make, lambda n: max(64, n)


SIZES = [512, 1024, 2048, 4096]
CASES = [
    # name, engine, formula text, source, band, sizes, partitions, (make, formula)
    ("tensor_dequantize e2m1 group 0", "pool", "150 + max(words read, words written)", "A, E",
     BAND_POOL, SIZES, [1, 32, 128], dequant("e2m1_to_e5m2", 0, (1, 2))),
    ("tensor_dequantize int4 group 0", "pool", "150 + max(words read, words written)", "A, E",
     BAND_POOL, SIZES, [128], dequant("int4_to_e5m2", 0, (1, 2))),
    ("tensor_dequantize nf4 group 0", "pool", "150 + max(words read, words written)", "A, E",
     BAND_POOL, SIZES, [128], dequant("nf4_to_e4m3", 0, (1, 2))),
    ("tensor_dequantize fp6 e2m3 group 0", "pool", "150 + max(words read, words written)",
     "A, E", BAND_POOL, [510, 1020, 2040, 4095], [128], dequant("e2m3_to_e4m3", 0, (3, 4))),
    ("tensor_dequantize e2m1 group 8", "pool", "150 + max(words read, words written)", "A, E",
     BAND_POOL, [510, 1020, 2045, 4095], [32, 128], dequant("e2m1_to_e5m2", 8, (5, 8))),
    ("tensor_dequantize int4 group 8", "pool", "150 + max(words read, words written)", "A, E",
     BAND_POOL, [510, 1020, 2045, 4095], [128], dequant("int4_to_e5m2", 8, (5, 8))),
    ("tensor_dequantize nf4 group 8", "pool", "150 + max(words read, words written)", "A, E",
     BAND_POOL, [510, 1020, 2045, 4095], [128], dequant("nf4_to_e4m3", 8, (5, 8))),
    ("quantize_mx fp32", "dve", "64 + N / 4", "C, G, I", BAND_TIGHT, SIZES, [32, 128],
     quantize_mx("fp32")),
    ("quantize_mx bf16", "dve", "64 + N / 4", "C, G, I", BAND_TIGHT, SIZES, [32, 128],
     quantize_mx("bf16")),
    ("quantize_mx fp16", "dve", "64 + N / 4", "C, G, I", BAND_TIGHT, SIZES, [128],
     quantize_mx("fp16")),
    ("matmul_mx fp8_e4m3 (v4)", "pe", "64 + max(64, N moving columns)", "A, E, C, H",
     BAND_TIGHT, [128, 256, 512], [32, 128], matmul_mx("fp8_e4m3")),
    ("matmul_mx fp4_e2m1 (v4)", "pe", "64 + max(64, N moving columns)", "A, E, C, H",
     BAND_TIGHT, [128, 256, 512], [128], matmul_mx("fp4_e2m1")),
    ("ldweights_mx fp8_e4m3 (v4)", "pe", "64 + 64 + M / 4", "A, D, E", BAND_TIGHT,
     [32, 64, 128],
     [32, 128], ldweights_mx("fp8_e4m3")),
    ("matmul MX mode (v5)", "pe", "64 + max(64, N moving columns)", "A, E, C, H", BAND_TIGHT,
     [128, 256, 512], [128], matmul_v5("mx")),
    ("matmul bf16 (v5)", "pe", "64 + max(64, N moving columns)", "A, E", BAND_TIGHT,
     [128, 256, 512], [128], matmul_v5("plain")),
    ("tensor_copy psum fp32 -> sbuf bf16", "dve", "max(64, N) (one input stream)", "A, E, M",
     BAND_TIGHT, SIZES, [1, 32, 128], tensor_copy("psum", "fp32", "bf16")),
    ("tensor_copy psum fp32 -> sbuf fp8_e4m3", "dve", "max(64, N) (one input stream)",
     "A, E, M", BAND_TIGHT, SIZES, [128], tensor_copy("psum", "fp32", "fp8_e4m3")),
    ("tensor_copy sbuf bf16 -> sbuf bf16", "dve", "max(64, N) (one input stream)", "A, E, M",
     BAND_TIGHT, SIZES, [128], tensor_copy("sbuf", "bf16", "bf16")),
    # The tile file holds 256 KiB: source (4 B) and destination (1 B) must fit.
    ("tquant s8", "sfu", "max(64, N) (one input stream)", "A, E", BAND_TIGHT, SIZES, [1],
     tquant()),
    ("tquant s8 (32 rows)", "sfu", "max(64, N) (one input stream)", "A, E", BAND_TIGHT,
     [512, 1024], [32], tquant()),
    ("tquant s8 (64 rows)", "sfu", "max(64, N) (one input stream)", "A, E", BAND_TIGHT, [512],
     [64], tquant()),
]


def measure(tpbsim, workdir, engine, prog, loads, setup):
    """Busy engine cycles of the last instruction of `engine`'s stream."""
    d = pathlib.Path(tempfile.mkdtemp(dir=workdir))
    (d / "p.tpb").write_text(prog)
    args = [tpbsim, "run", str(d / "p.tpb"), "-q", "--stats", str(d / "s.json"), "--retire",
            str(d / "r.txt")]
    for name, rows, cols in loads:
        f = d / (name + ".npy")
        npy_f32(f, rows, cols)
        args += ["--load", f"tile:{name[4:]}={f}"]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"tpbsim failed ({r.returncode}): {r.stderr.strip()}\n{prog}")
    stats = json.loads((d / "s.json").read_text())
    eng = next(e for e in stats["engines"] if e["name"] == engine)
    ends = [int(line.split()[0]) for line in (d / "r.txt").read_text().splitlines()
            if line.split()[1] == engine]
    if setup == 0:
        return eng["busy_cycles"]
    # Per-instruction: the last retire minus the one before (fetch included),
    # in engine cycles.
    ps = ends[-1] - ends[-2]
    return round(ps * eng["clock_mhz"] / 1e6)


def run_all(tpbsim):
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name, engine, ftext, src, band, sizes, parts, (make, formula) in CASES:
            for p in parts:
                for n in sizes:
                    prog, loads, setup = make(n, p)
                    cycles = measure(tpbsim, work, engine, prog, loads, setup)
                    want = formula(n)
                    rows.append(dict(name=name, engine=engine, formula=ftext, source=src,
                                     band=band, n=n, p=p, cycles=cycles, want=want,
                                     ratio=cycles / want))
    return rows


def render(rows):
    out = ["# Timing calibration (generated)", "",
           "Generated by `scripts/calibrate.py build/tpbsim --write docs/TIMING.md`; the",
           "ctest `TimingCalibration.EveryRatioInItsBand` runs the same cases with",
           "`--check`. Each row is one instruction run alone on MARIANA (MAVERICK",
           "for v5) with the default profile: the model's busy cycles (engine",
           "cycles, fetch included) against the public formula of",
           "`../shared/spec/TIMING.md` (sources [A]..[M] there). N is the free size:",
           "source words per partition (dequant), source elements per partition",
           "(QuantizeMX, tensor_copy), moving columns (matmul), stationary columns (ldweights),",
           "ValidCol (TQUANT); P the active partitions (rows). Bands: x0.7-1.5,",
           "POOL x0.5-2.", ""]
    by_name = {}
    for r in rows:
        by_name.setdefault(r["name"], []).append(r)
    for name, rs in by_name.items():
        r0 = rs[0]
        out += [f"## {name} ({r0['engine']})", "",
                f"Formula: `{r0['formula']}` [{r0['source']}]; band x{r0['band'][0]}-{r0['band'][1]}.",
                "", "| N | P | model cycles | formula | ratio |", "|---|---|---|---|---|"]
        for r in rs:
            out.append(f"| {r['n']} | {r['p']} | {r['cycles']} | {r['want']:.0f} | {r['ratio']:.2f} |")
        out.append("")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tpbsim")
    ap.add_argument("--write", metavar="FILE")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--compare", metavar="FILE")
    a = ap.parse_args()
    rows = run_all(os.path.abspath(a.tpbsim))
    bad = [r for r in rows if not (r["band"][0] <= r["ratio"] <= r["band"][1])]
    for r in rows:
        mark = "" if r in bad else "ok"
        print(f"{r['name']:<36} N={r['n']:<5} P={r['p']:<4} {r['cycles']:>7} / "
              f"{r['want']:>7.0f} = {r['ratio']:.2f} {mark or 'OUT OF BAND'}")
    text = render(rows)
    if a.write:
        pathlib.Path(a.write).write_text(text)
    stale = a.compare is not None and pathlib.Path(a.compare).read_text() != text
    if stale:
        print(f"{a.compare} is stale: regenerate it with `scripts/calibrate.py build/tpbsim "
              f"--write {a.compare}`")
    print(f"calibration: {len(rows)} points, {len(bad)} out of band")
    return 1 if (a.check and bad) or stale else 0


if __name__ == "__main__":
    sys.exit(main())
