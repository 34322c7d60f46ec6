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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tutorial_gemm  # noqa: E402  (scripts/tutorial_gemm.py)

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
        return 150 + max(n, n // s * d) + 60

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

    return make, lambda n: max(64, n / 4) + 60


def matmul_mx(in_dtype):
    def make(n, p):
        prog = f""".arch mariana
.engine pe
ldweights_mx in_dtype={in_dtype} rows={p} cols=128 \\
    src=mx1d(data=sbuf(0, 0x0), scale=sbuf(0, 0x1000), num=128) update=inc(sem0)
matmul_mx in_dtype={in_dtype} rows={p} \\
    src=mx1d(data=sbuf(0, 0x2000), scale=sbuf(0, 0x3000), num={n}) \\
    dst=t3d(psum(0, 0x0), step=[1, 0, 0], num=[{n}, 1, 1]) wait=ge(sem0, 1)
"""
        return prog, [], 1

    return make, lambda n: max(64, n) + 2 * 128 + 64


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
ldweights in_dtype={dt} rows={p} cols=128 src={src_w} update=inc(sem0)
matmul in_dtype={dt} rows={p} src={src_m} \\
    dst=t3d(psum(0, 0x0), step=[1, 0, 0], num=[{n}, 1, 1]) wait=ge(sem0, 1)
"""
        return prog, [], 1

    return make, lambda n: max(64, n) + 2 * 128 + 64


def tensor_copy(src, in_dtype, out_dtype):
    def make(n, p):
        prog = f""".arch mariana
.engine dve
tensor_copy channels={p} in_dtype={in_dtype} out_dtype={out_dtype} \\
    src=t3d({src}(0, 0x0), step=[1, 0, 0], num=[{n}, 1, 1]) \\
    dst=t3d(sbuf(0, 0x20000), step=[1, 0, 0], num=[{n}, 1, 1])
"""
        return prog, [], 0

    return make, lambda n: max(64, n) + 60


def tquant():
    def make(n, p):
        prog = f""".arch mariana
BSTART.SFU TQUANT, FP32; B.DATR S8, RNE, Sat=1; B.DIM LB0={n}; B.DIM LB1={p}; B.IOT T1, mask=1111, <last>, ->T0<{max(1, (n * p + 1023) // 1024)}>; BSTOP
"""
        return prog, [("tile1", p, n)], 0

    return make, lambda n: max(64, n) + 60


def t3d(region, off, n):
    return f"t3d({region}(0, 0x{off:x}), step=[1, 0, 0], num=[{n}, 1, 1])"


def one(arch, engine, line):
    """One instruction, `line(n, p)`, alone on `engine`."""
    def make(n, p):
        return f".arch {arch}\n.engine {engine}\n{line(n, p)}\n", [], 0
    return make


def vec(arch, engine, line, formula):
    return one(arch, engine, line), formula


def activation(reduce=False):
    red = " reduce_op=add reduce_cmd=reset_reduce reduce_dtype=fp32 reduce_res=sbuf(0, 0x30000)" \
        if reduce else ""
    return lambda n, p: (f"activation func=exp channels={p} out_dtype=bf16 "
                         f"src={t3d('sbuf', 0, n)} dst={t3d('sbuf', 0x10000, n)}{red}")


def tensor_tensor(op, dtype, src1="sbuf"):
    return lambda n, p: (f"tensor_tensor op={op} channels={p} in_dtype={dtype} in1_dtype={dtype} "
                         f"out_dtype={dtype} src={t3d('sbuf', 0, n)} "
                         f"src1=t3d({src1}(0, 0x{0 if src1 == 'psum' else 0x10000:x})) "
                         f"dst={t3d('sbuf', 0x20000, n)}")


def tensor_scalar(two, op0="multiply"):
    second = " op1=add operand1=0.5" if two else ""
    return lambda n, p: (f"tensor_scalar op0={op0} operand0=2.0{second} channels={p} "
                         f"in_dtype=fp32 out_dtype=fp32 src={t3d('sbuf', 0, n)} "
                         f"dst={t3d('sbuf', 0x10000, n)}")


def tensor_reduce(op, dtype):
    return lambda n, p: (f"tensor_reduce op={op} channels={p} in_dtype={dtype} out_dtype={dtype} "
                         f"src={t3d('sbuf', 0, n)} dst={t3d('sbuf', 0x20000, 1)}")


def scan():
    return lambda n, p: (f"tensor_tensor_scan op0=multiply op1=add initial=0.0 channels={p} "
                         f"in_dtype=fp32 out_dtype=fp32 src={t3d('sbuf', 0, n)} "
                         f"src1=t3d(sbuf(0, 0x4000)) dst={t3d('sbuf', 0x8000, n)}")


def memset(value, dtype):
    return lambda n, p: (f"memset value={value} channels={p} out_dtype={dtype} "
                         f"dst={t3d('sbuf', 0, n)}")


def unary(mnemonic, out_n=lambda n: n, dtype="fp32"):
    return lambda n, p: (f"{mnemonic} channels={p} in_dtype={dtype} out_dtype={dtype} "
                         f"src={t3d('sbuf', 0, n)} dst={t3d('sbuf', 0x20000, out_n(n))}")


def iota():
    return lambda n, p: (f"iota step=[1, 0, 0] num=[{n}, 1, 1] channel_multiplier={n} "
                         f"channels={p} out_dtype=fp32 dst={t3d('sbuf', 0, n)}")


def copy_line(in_dtype, out_dtype):
    return lambda n, p: (f"tensor_copy channels={p} in_dtype={in_dtype} out_dtype={out_dtype} "
                         f"src={t3d('sbuf', 0, n)} dst={t3d('sbuf', 0x20000, n)}")


def matmul_plain(arch, dtype):
    def make(n, p):
        prog = f""".arch {arch}
.engine pe
ldweights in_dtype={dtype} rows={p} cols=128 src={t3d('sbuf', 0, 128)} update=inc(sem0)
matmul in_dtype={dtype} rows={p} src={t3d('sbuf', 0x1000, n)} \\
    dst={t3d('psum', 0, n)} wait=ge(sem0, 1)
"""
        return prog, [], 1

    scale = 4 if dtype == "fp32" else 1
    return make, lambda n: max(64, scale * n) + 2 * 128 + 64


def pe_transpose(arch, dtype, cols):
    """The PE's transpose of a [N partitions, cols] tile: a matmul in
    transpose mode of the loaded tile by an N x N identity (N moving columns)."""
    def make(n, p):
        prog = f""".arch {arch}
.engine pe
ldweights in_dtype={dtype} rows={n} cols={cols} src={t3d('sbuf', 0, cols)} update=inc(sem0)
matmul in_dtype={dtype} rows={n} transpose=1 out_dtype={dtype} src={t3d('sbuf', 0x1000, n)} \\
    dst={t3d('psum', 0, n)} wait=ge(sem0, 1)
"""
        return prog, [], 1

    return make, lambda n: max(min(64, cols), n) + 2 * 128 + 64


def ldweights_plain(arch, dtype):
    def make(m, p):
        return (f".arch {arch}\n.engine pe\nldweights in_dtype={dtype} rows={p} cols={m} "
                f"src={t3d('sbuf', 0, m)}\n"), [], 0

    return make, lambda m: 64 + 64 + m / 4


def nop(engine):
    def make(n, p):
        return f".arch mariana\n.engine {engine}\nnop\n", [], 0

    # SPEC §18's wait-only instruction: one issue cycle of its engine, no front
    # end and no startup (a convention, docs/CONVENTIONS.md: no public cost).
    return make, lambda n: 1


SIZES = [512, 1024, 2048, 4096]
CASES = [
    # name, engine, formula text, source, band, sizes, partitions, (make, formula)
    ("tensor_dequantize e2m1 group 0", "pool", "150 + max(words read, words written) + 60", "A, E",
     BAND_POOL, SIZES, [1, 32, 128], dequant("e2m1_to_e5m2", 0, (1, 2))),
    ("tensor_dequantize int4 group 0", "pool", "150 + max(words read, words written) + 60", "A, E",
     BAND_POOL, SIZES, [128], dequant("int4_to_e5m2", 0, (1, 2))),
    ("tensor_dequantize nf4 group 0", "pool", "150 + max(words read, words written) + 60", "A, E",
     BAND_POOL, SIZES, [128], dequant("nf4_to_e4m3", 0, (1, 2))),
    ("tensor_dequantize fp6 e2m3 group 0", "pool", "150 + max(words read, words written) + 60",
     "A, E", BAND_POOL, [510, 1020, 2040, 4095], [128], dequant("e2m3_to_e4m3", 0, (3, 4))),
    ("tensor_dequantize e2m1 group 8", "pool", "150 + max(words read, words written) + 60", "A, E",
     BAND_POOL, [510, 1020, 2045, 4095], [32, 128], dequant("e2m1_to_e5m2", 8, (5, 8))),
    ("tensor_dequantize int4 group 8", "pool", "150 + max(words read, words written) + 60", "A, E",
     BAND_POOL, [510, 1020, 2045, 4095], [128], dequant("int4_to_e5m2", 8, (5, 8))),
    ("tensor_dequantize nf4 group 8", "pool", "150 + max(words read, words written) + 60", "A, E",
     BAND_POOL, [510, 1020, 2045, 4095], [128], dequant("nf4_to_e4m3", 8, (5, 8))),
    ("quantize_mx fp32", "dve", "max(64, N / 4) + 60", "C, G, I", BAND_TIGHT, SIZES, [32, 128],
     quantize_mx("fp32")),
    ("quantize_mx bf16", "dve", "max(64, N / 4) + 60", "C, G, I", BAND_TIGHT, SIZES, [32, 128],
     quantize_mx("bf16")),
    ("quantize_mx fp16", "dve", "max(64, N / 4) + 60", "C, G, I", BAND_TIGHT, SIZES, [128],
     quantize_mx("fp16")),
    ("matmul_mx fp8_e4m3 (v4)", "pe", "max(64, N moving columns) + 2 x 128 + 64", "A, E, C, H",
     BAND_TIGHT, [128, 256, 512], [32, 128], matmul_mx("fp8_e4m3")),
    ("matmul_mx fp4_e2m1 (v4)", "pe", "max(64, N moving columns) + 2 x 128 + 64", "A, E, C, H",
     BAND_TIGHT, [128, 256, 512], [128], matmul_mx("fp4_e2m1")),
    ("ldweights_mx fp8_e4m3 (v4)", "pe", "64 + 64 + M / 4", "A, D, E", BAND_TIGHT,
     [32, 64, 128],
     [32, 128], ldweights_mx("fp8_e4m3")),
    ("matmul MX mode (v5)", "pe", "max(64, N moving columns) + 2 x 128 + 64", "A, E, C, H", BAND_TIGHT,
     [128, 256, 512], [128], matmul_v5("mx")),
    ("matmul bf16 (v5)", "pe", "max(64, N moving columns) + 2 x 128 + 64", "A, E", BAND_TIGHT,
     [128, 256, 512], [128], matmul_v5("plain")),
    ("tensor_copy psum fp32 -> sbuf bf16", "dve", "max(64, N) + 60 (one input stream)", "A, E, M",
     BAND_TIGHT, SIZES, [1, 32, 128], tensor_copy("psum", "fp32", "bf16")),
    ("tensor_copy psum fp32 -> sbuf fp8_e4m3", "dve", "max(64, N) + 60 (one input stream)",
     "A, E, M", BAND_TIGHT, SIZES, [128], tensor_copy("psum", "fp32", "fp8_e4m3")),
    ("tensor_copy sbuf bf16 -> sbuf bf16", "dve", "max(64, N) + 60 (one input stream)", "A, E, M",
     BAND_TIGHT, SIZES, [128], tensor_copy("sbuf", "bf16", "bf16")),
    *[(f"nop ({e})", e, "1 (one issue cycle, no front end: a convention)", "conv.", BAND_TIGHT,
       [1], [1], nop(e)) for e in ("pool", "dve", "pe", "sfu", "act")],
    # The tile file holds 256 KiB: source (4 B) and destination (1 B) must fit.
    ("tquant s8", "sfu", "max(64, N) + 60 (one input stream)", "A, E", BAND_TIGHT, SIZES, [1],
     tquant()),
    ("tquant s8 (32 rows)", "sfu", "max(64, N) + 60 (one input stream)", "A, E", BAND_TIGHT,
     [512, 1024], [32], tquant()),
    ("tquant s8 (64 rows)", "sfu", "max(64, N) + 60 (one input stream)", "A, E", BAND_TIGHT, [512],
     [64], tquant()),
    # SPEC §18: the instructions kernels use beyond the seeds, TIMING.md [O].
    # The ACT's latency past its II: about 200 ([D]: dependent 1-element
    # activations 264 cycles apart, MIN_II 64 of them).
    ("activation exp", "act", "max(64, N) + 200", "O, D", BAND_TIGHT, SIZES, [1, 32, 128],
     vec("mariana", "act", activation(), lambda n: max(64, n) + 200)),
    ("activation exp with an add reduce", "act", "max(64, N) + 64 + 200", "O, D", BAND_TIGHT,
     SIZES, [128], vec("mariana", "act", activation(True), lambda n: max(64, n) + 64 + 200)),
    ("activation exp (v2)", "act", "max(64, N) + 200", "O, D", BAND_TIGHT, SIZES, [128],
     vec("sunda", "act", activation(), lambda n: max(64, n) + 200)),
    ("activation exp (v5: on the DVE)", "dve", "max(64, N) + 60", "O, seed 003", BAND_TIGHT,
     SIZES, [128], vec("maverick", "act", activation(), lambda n: max(64, n) + 60)),
    ("tensor_tensor add bf16 sbuf + sbuf", "dve", "max(64, N) + 60", "O", BAND_TIGHT, SIZES,
     [1, 32, 128], vec("mariana", "dve", tensor_tensor("add", "bf16"), lambda n: max(64, n) + 60)),
    ("tensor_tensor multiply fp32 sbuf + sbuf", "dve", "max(64, 2N) + 60", "O", BAND_TIGHT, SIZES,
     [128], vec("mariana", "dve", tensor_tensor("multiply", "fp32"),
                lambda n: max(64, 2 * n) + 60)),
    ("tensor_tensor add fp32 sbuf + psum", "dve", "max(64, N) + 60", "O", BAND_TIGHT,
     SIZES, [128], vec("mariana", "dve", tensor_tensor("add", "fp32", "psum"),
                       lambda n: max(64, n) + 60)),
    ("tensor_tensor add fp32 (pool)", "pool", "150 + 2N (words read) + 60", "A, E", BAND_POOL,
     SIZES, [128], vec("mariana", "pool", tensor_tensor("add", "fp32"),
                       lambda n: 150 + 2 * n + 60)),
    ("tensor_scalar multiply", "dve", "max(64, N) + 60", "O", BAND_TIGHT, SIZES, [1, 128],
     vec("mariana", "dve", tensor_scalar(False), lambda n: max(64, n) + 60)),
    ("tensor_scalar multiply, add", "dve", "max(64, N) + 60 (two operators as one)", "O",
     BAND_TIGHT, SIZES, [128], vec("mariana", "dve", tensor_scalar(True),
                                   lambda n: max(64, n) + 60)),
    ("tensor_scalar multiply, add (act)", "act", "max(64, N) + 200", "O, D", BAND_TIGHT, SIZES,
     [128], vec("mariana", "act", tensor_scalar(True), lambda n: max(64, n) + 200)),
    ("tensor_scalar rsqrt (pool)", "pool", "150 + N + 60", "O, A, E", BAND_POOL, SIZES,
     [128], vec("mariana", "pool", tensor_scalar(False, "rsqrt"), lambda n: 150 + n + 60)),
    ("tensor_reduce add bf16", "dve", "max(64, N / 2) + 60", "O", BAND_TIGHT, SIZES, [1, 128],
     vec("mariana", "dve", tensor_reduce("add", "bf16"), lambda n: max(64, n / 2) + 60)),
    ("tensor_reduce maximum fp32", "dve", "max(64, N) + 60", "O", BAND_TIGHT, SIZES, [128],
     vec("mariana", "dve", tensor_reduce("maximum", "fp32"), lambda n: max(64, n) + 60)),
    ("tensor_tensor_scan multiply, add fp32", "dve", "max(64, 2N) + 60", "O", BAND_TIGHT,
     [512, 1024, 2048], [1, 128], vec("mariana", "dve", scan(), lambda n: max(64, 2 * n) + 60)),
    ("memset 0 bf16", "dve", "max(64, N / 2) + 60", "O", BAND_TIGHT, SIZES, [1, 128],
     vec("mariana", "dve", memset(0, "bf16"), lambda n: max(64, n / 2) + 60)),
    ("memset 1.0 fp32", "dve", "max(64, N) + 60", "O", BAND_TIGHT, SIZES, [128],
     vec("mariana", "dve", memset("0x3f800000", "fp32"), lambda n: max(64, n) + 60)),
    ("memset 1.0 fp32 (pool)", "pool", "150 + N + 60", "O, A, E", BAND_POOL, SIZES, [128],
     vec("mariana", "pool", memset("0x3f800000", "fp32"), lambda n: 150 + n + 60)),
    ("iota fp32", "pool", "150 + N + 60", "O", BAND_POOL, SIZES, [1, 128],
     vec("mariana", "pool", iota(), lambda n: 150 + n + 60)),
    ("reciprocal fp32", "dve", "max(64, 8N) + 60", "O", BAND_TIGHT, SIZES, [1, 128],
     vec("mariana", "dve", unary("reciprocal"), lambda n: max(64, 8 * n) + 60)),
    ("bn_stats fp32", "dve", "max(64, N) + 60", "O", BAND_TIGHT, [128, 256, 512], [1, 128],
     vec("mariana", "dve", unary("bn_stats", lambda n: 6), lambda n: max(64, n) + 60)),
    ("bn_aggr fp32", "dve", "max(64, 13 N / 3) + 60", "O", BAND_TIGHT, [48, 96, 384, 1536],
     [1, 128], vec("mariana", "dve", unary("bn_aggr", lambda n: 2),
                   lambda n: max(64, 13 * n / 3) + 60)),
    # At most 32 x 32: below MIN_II alone (the stream rows below hold its II).
    ("nc_transpose fp32 (Vector, 32 x N)", "dve", "max(64, N) + 60", "O", BAND_TIGHT,
     [24, 32], [32], vec("mariana", "dve", unary("nc_transpose", lambda n: 32),
                         lambda n: max(64, n) + 60)),
    ("tensor_copy bf16 -> bf16 (act)", "act", "max(64, N) + 200", "M, O, D", BAND_TIGHT, SIZES,
     [128], vec("mariana", "act", copy_line("bf16", "bf16"), lambda n: max(64, n) + 200)),
    ("tensor_copy fp32 -> fp32 (pool)", "pool", "150 + N + 60", "M, A, E", BAND_POOL, SIZES,
     [128], vec("mariana", "pool", copy_line("fp32", "fp32"), lambda n: 150 + n + 60)),
    ("matmul bf16 (v2)", "pe", "max(64, N moving columns) + 2 x 128 + 64", "O, A, E", BAND_TIGHT,
     [128, 256, 512], [128], matmul_plain("sunda", "bf16")),
    ("matmul fp8_e4m3_legacy (v3)", "pe", "max(64, N moving columns) + 2 x 128 + 64", "O, B",
     BAND_TIGHT, [128, 256, 512], [32, 128], matmul_plain("cayman", "fp8_e4m3_legacy")),
    ("matmul bf16 (v4)", "pe", "max(64, N moving columns) + 2 x 128 + 64", "O, C", BAND_TIGHT,
     [128, 256, 512], [128], matmul_plain("mariana", "bf16")),
    ("matmul fp32 (v4)", "pe", "max(64, 4 N moving columns) + 2 x 128 + 64", "O", BAND_TIGHT,
     [128, 256, 512], [128], matmul_plain("mariana", "fp32")),
    ("nc_transpose on the PE: matmul transpose mode bf16, [N, 128] (v4)", "pe",
     "max(min(64, F), N) + 2 x 128 + 64", "O", BAND_TIGHT, [32, 64, 128], [128],
     pe_transpose("mariana", "bf16", 128)),
    ("ldweights bf16 (v3)", "pe", "64 + 64 + M / 4", "A, D, E", BAND_TIGHT, [32, 64, 128],
     [32, 128], ldweights_plain("cayman", "bf16")),
]


# ---------------------------------------------------------------------------
# Whole sequences (TIMING.md "Validation points"): streams of instructions,
# where the initiation interval, the interlock, the background
# LoadStationary and the DMA engines and queues show. Each case makes a
# program, runs it and measures one number from its retires or stats.

def pe_stream(arch, pairs, ls_cols, n, reload_each, acc=1):
    """An LS (ls_cols columns), then `pairs` matmuls of N moving columns (a new
    LS before each when reload_each), accumulating into PSUM bank 0."""
    if arch == "maverick":
        ls = (f"ldweights in_dtype=fp8_e4m3 rows=128 cols={ls_cols} "
              f"src=mx(data=sbuf(0, 0x0), scale=sbuf(0, 0x1000), num=[{ls_cols}, 1])")
        mm = (f"matmul in_dtype=fp8_e4m3 rows=128 acc={acc} "
              f"src=mx(data=sbuf(0, 0x2000), scale=sbuf(0, 0x3000), num=[{min(n, 128)}, {max(1, n // 128)}], "
              f"step_data={min(n, 128)}, step_scale={min(n, 128)}) "
              f"dst=t3d(psum(0, 0x0), step=[1, 0, 0], num=[{n}, 1, 1])")
    else:
        ls = (f"ldweights_mx in_dtype=fp8_e4m3 rows=128 cols={ls_cols} "
              f"src=mx1d(data=sbuf(0, 0x0), scale=sbuf(0, 0x1000), num={ls_cols})")
        mm = (f"matmul_mx in_dtype=fp8_e4m3 rows=128 acc={acc} "
              f"src=mx1d(data=sbuf(0, 0x2000), scale=sbuf(0, 0x3000), num={n}) "
              f"dst=t3d(psum(0, 0x0), step=[1, 0, 0], num=[{n}, 1, 1])")
    lines = [f".arch {arch}", ".engine pe", ls]
    for i in range(pairs):
        if reload_each and i > 0:
            lines.append(ls)
        lines.append(mm)
    return "\n".join(lines) + "\n"


def dve_copies(arch, count, n, dependent):
    """`count` tensor_copy FP32 -> FP32 SBUF -> SBUF of N elements per
    partition on 128 partitions; each reads the previous one's output when
    dependent, else a region of its own."""
    lines = [f".arch {arch}", ".engine dve"]
    span = n * 4
    for i in range(count):
        if dependent:
            src, dst = (0x0, span) if i % 2 == 0 else (span, 0x0)
        else:
            src, dst = 0x0, span * (1 + i % 16)
        lines.append(f"tensor_copy channels=128 in_dtype=fp32 out_dtype=fp32 "
                     f"src=t3d(sbuf(0, 0x{src:x}), step=[1, 0, 0], num=[{n}, 1, 1]) "
                     f"dst=t3d(sbuf(0, 0x{dst:x}), step=[1, 0, 0], num=[{n}, 1, 1])")
    return "\n".join(lines) + "\n"


def dma_stream(arch, count, rows, row_bytes, queues=(0,)):
    """`count` HBM -> SBUF transfers of `rows` partitions x row_bytes, dealt
    over `queues` in turn."""
    lines = [f".arch {arch}"]
    for i in range(count):
        lines.append(f".engine dma{queues[i % len(queues)]}")
        lines.append(f"dma_copy rows={rows} row_bytes={row_bytes} "
                     f"src=hbm(0x{i * rows * row_bytes:x}, stride={row_bytes}) dst=sbuf(0, 0x0)")
    return "\n".join(lines) + "\n"


def run_program(tpbsim, workdir, prog, extra=()):
    d = pathlib.Path(tempfile.mkdtemp(dir=workdir))
    (d / "p.tpb").write_text(prog)
    args = [tpbsim, "run", str(d / "p.tpb"), "-q", "--stats", str(d / "s.json"), "--retire",
            str(d / "r.txt"), *extra]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"tpbsim failed ({r.returncode}): {r.stderr.strip()}\n{prog}")
    stats = json.loads((d / "s.json").read_text())
    retires = []
    for line in (d / "r.txt").read_text().splitlines():
        f = line.split()
        retires.append((int(f[0]), f[1], int(f[2]), f[4]))
    return stats, retires


def clock(stats, engine):
    return next(e for e in stats["engines"] if e["name"] == engine)["clock_mhz"]


def steady_interval(retires, engine, mnemonic, stats, skip=2):
    """Mean engine cycles between consecutive retires of `mnemonic` on
    `engine`, the first `skip` left out (the pipeline filling)."""
    ends = [t for t, e, _, m in retires if e == engine and m == mnemonic]
    ends = ends[skip:]
    ps = (ends[-1] - ends[0]) / (len(ends) - 1)
    return ps * clock(stats, engine) / 1e6


def seq_pe(arch, pairs, ls_cols, n, reload_each):
    def run(tpbsim, work):
        stats, ret = run_program(tpbsim, work, pe_stream(arch, pairs, ls_cols, n, reload_each))
        mm = "matmul" if arch == "maverick" else "matmul_mx"
        return steady_interval(ret, "pe", mm, stats)
    return run


def seq_dve(arch, n, dependent, minus_independent=False):
    def run(tpbsim, work):
        stats, ret = run_program(tpbsim, work, dve_copies(arch, 32, n, dependent))
        dep = steady_interval(ret, "dve", "tensor_copy", stats)
        if not minus_independent:
            return dep
        stats, ret = run_program(tpbsim, work, dve_copies(arch, 32, n, False))
        return dep - steady_interval(ret, "dve", "tensor_copy", stats)
    return run


def dve_pattern_copies(arch, count, n, src):
    """`count` independent tensor_copy FP32 of N elements on 128 partitions
    from the source operand `src` (a t3d(...) text) into regions of their own."""
    lines = [f".arch {arch}", ".reg dve r3 = 0x100", ".engine dve"]
    for i in range(count):
        lines.append(f"tensor_copy channels=128 in_dtype=fp32 out_dtype=fp32 src={src} "
                     f"dst=t3d(sbuf(0, 0x{0x10000 + (i % 8) * n * 4:x}), step=[1, 0, 0], "
                     f"num=[{n}, 1, 1])")
    return "\n".join(lines) + "\n"


def seq_dve_strided(arch, n, stride):
    """Independent copies whose source steps `stride` elements, against the
    same copies of a contiguous source: the ratio of their intervals."""
    def run(tpbsim, work):
        def interval(step):
            prog = dve_pattern_copies(arch, 32, n, f"t3d(sbuf(0, 0x0), step=[{step}, 0, 0], "
                                                    f"num=[{n}, 1, 1])")
            stats, ret = run_program(tpbsim, work, prog)
            return steady_interval(ret, "dve", "tensor_copy", stats)
        return interval(stride) / interval(1)
    return run


def seq_dve_dynamic(arch, n):
    """Independent copies whose source address is a register's (ADDR_REG)."""
    def run(tpbsim, work):
        prog = dve_pattern_copies(arch, 32, n, f"t3d(reg(r3), step=[1, 0, 0], num=[{n}, 1, 1])")
        stats, ret = run_program(tpbsim, work, prog)
        return steady_interval(ret, "dve", "tensor_copy", stats)
    return run


def seq_dma_alone(arch, rows, row_bytes):
    def run(tpbsim, work):
        stats, ret = run_program(tpbsim, work, dma_stream(arch, 1, rows, row_bytes))
        return ret[-1][0] / 1000.0  # ns from the run's start
    return run


def seq_dma_engines(arch, rows, row_bytes):
    def run(tpbsim, work):
        stats, _ = run_program(tpbsim, work, dma_stream(arch, 1, rows, row_bytes))
        return sum(1 for e in stats["engines"] if e["name"].startswith("dma_engine"))
    return run


def dma_throughput(tpbsim, work, arch, row_bytes, rows=128, queues=(0,)):
    stats, ret = run_program(tpbsim, work, dma_stream(arch, 16, rows, row_bytes, queues))
    return 16 * rows * row_bytes / max(t for t, *_ in ret)  # bytes per ps


def seq_dma_curve(arch, row_bytes, rows=128, queues=(0,)):
    def run(tpbsim, work):
        return 100.0 * dma_throughput(tpbsim, work, arch, row_bytes, rows, queues) / \
            dma_throughput(tpbsim, work, arch, 32768, rows, queues)
    return run


def seq_tutorial(form, what):
    """The v3 tutorial GEMM's slice (scripts/tutorial_gemm.py), timing only:
    the engine-active fraction of `what` ("pe", "dma")."""
    def run(tpbsim, work):
        sl = tutorial_gemm.SLICE
        st = tutorial_gemm.run(tpbsim, form, sl["m"], sl["n"], sl["k"], workdir=work)
        return st["engine_active"][what]
    return run


def gemm_report(tpbsim, work, m, k, n, weights):
    """The generated MX GEMM (python3 -m tpbsim.kernels gemm, docs/KERNELS.md)
    on v4, timing only: its report.json. The interpreter is the one built
    beside `tpbsim` (build/tpbsim-python)."""
    out = pathlib.Path(tempfile.mkdtemp(dir=work)) / "gemm"
    py = os.path.join(os.path.dirname(tpbsim), "tpbsim-python")
    r = subprocess.run([py, "-m", "tpbsim.kernels", "gemm", "--m", str(m), "--k", str(k),
                        "--n", str(n), "--weights", weights, "--arch", "mariana",
                        "--timing-only", "--no-traces", "--out", str(out)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"the GEMM generator failed ({r.returncode}): {r.stderr.strip()}")
    return json.loads((out / "report.json").read_text())


# v4's PE peak (TIMING.md [C, H, L]: 315 TFLOPS, 128 x 128 PEs x 4 MX MACs x 2
# flops at 2.4 GHz) and the GEMV's bound: 16 DMA engines x 33 B/ns (528 GB/s,
# TIMING.md [A, J, K]) below the core's HBM share (612.5 GB/s, [L]).
PEAK_FLOPS_V4 = 2 * 128 * 128 * 4 * 2.4e9
GEMV_BYTES_PER_NS = min(16 * 33.0, 612.5)


def seq_gemm_peak(weights):
    """4096^3 GEMM: achieved flops over v4's PE peak, from the simulated time."""
    def run(tpbsim, work):
        r = gemm_report(tpbsim, work, 4096, 4096, 4096, weights)
        return 2 * 4096 ** 3 / (r["simulated_ns"] * 1e-9) / PEAK_FLOPS_V4
    return run


def seq_gemv():
    """M = 1, K = N = 4096, MXFP8 weights: ns of the run."""
    return lambda tpbsim, work: gemm_report(tpbsim, work, 1, 4096, 4096, "mxfp8")["simulated_ns"]


def seq_stream(arch, engine, mnemonic, line, count=32, head=()):
    """`count` instructions `line(i)` on `engine` after the lines `head`: the
    engine cycles between consecutive retires of `mnemonic`."""
    def run(tpbsim, work):
        lines = [f".arch {arch}", *head, f".engine {engine}"] + [line(i) for i in range(count)]
        stats, ret = run_program(tpbsim, work, "\n".join(lines) + "\n")
        return steady_interval(ret, "dve" if arch == "maverick" and engine == "act" else engine,
                               mnemonic, stats)
    return run


def act_line(n, dependent):
    """An activation of N elements per partition on 128 partitions: reading
    the previous one's output when dependent, else a region of its own."""
    def line(i):
        src, dst = ((0, 0x4000) if i % 2 == 0 else (0x4000, 0)) if dependent else \
            (0, 0x4000 * (1 + i % 8))
        return (f"activation func=exp channels=128 in_dtype=fp32 out_dtype=fp32 "
                f"src={t3d('sbuf', src, n)} dst={t3d('sbuf', dst, n)}")
    return line


def plain_mm_line(dtype, n):
    return lambda i: (f"matmul in_dtype={dtype} rows=128 acc=1 src={t3d('sbuf', 0x2000, n)} "
                      f"dst={t3d('psum', 0, n)}")


def plain_ls(dtype, cols):
    return f".engine pe\nldweights in_dtype={dtype} rows=128 cols={cols} src={t3d('sbuf', 0, cols)}"


def seq_two_engines(arch, n):
    """Time to run 32 activations on the ACT and 32 tensor_copy on the DVE,
    both N elements, over the time of the activations alone: about 1 where
    the two engines run at once, about 2 on MAVERICK (ACT folded into the DVE)."""
    def run(tpbsim, work):
        acts = [".engine act"] + [act_line(n, False)(i) for i in range(32)]
        copies = [".engine dve"] + [
            f"tensor_copy channels=128 in_dtype=fp32 out_dtype=fp32 src={t3d('sbuf', 0x30000, n)} "
            f"dst={t3d('sbuf', 0x30000 + n * 4 * (1 + i % 4), n)}" for i in range(32)]
        _, both = run_program(tpbsim, work, "\n".join([f".arch {arch}", *acts, *copies]) + "\n")
        _, alone = run_program(tpbsim, work, "\n".join([f".arch {arch}", *acts]) + "\n")
        return max(t for t, *_ in both) / max(t for t, *_ in alone)
    return run


# The cost model's DMA stream in closed form (docs/CONVENTIONS.md "DMA"), one
# engine's view: `transfers` transfers dealt over `queues` in turn, each 8
# partitions x row_bytes; a queue starts one per F on the engine, the engine
# pays C when it turns to another queue's transfer, then moves the bytes;
# the first starts after the start latency. The throughput at row_bytes
# relative to 32 KiB, %.
DMA_F_NS, DMA_C_NS, DMA_LATENCY_NS = 840, 115, 1300


def dma_curve_model(row_bytes, bytes_per_ns, queues=1, transfers=16):
    def thr(b):
        data = 8 * b / bytes_per_ns
        free, t, last = [0.0] * queues, 0.0, None
        for k in range(transfers):
            q = k % queues
            start = max(DMA_LATENCY_NS, t, free[q])
            free[q] = start + DMA_F_NS
            t = start + (DMA_C_NS if q != last else 0.0) + data
            last = q
        return transfers * b / t
    return 100.0 * thr(row_bytes) / thr(32768)


# Each validation point: (point, name, what is measured, expected, band kind,
# band, source, run). The point names its ctest (TimingValidation.POINT).
#   band kind "ratio": measured / expected in [lo, hi]; "delta": measured -
#   expected in [lo, hi]; "range": the measured value in [lo, hi].
DMA_CURVE = [(512, 21), (1024, 42), (2048, 81), (4096, 97), (8192, 98), (16384, 99)]
# [N]'s engine-active figures (kernel-optimization tutorial, v3).
TUTORIAL = {"tiled": {"pe": 0.8728, "dma": 0.9993}, "hoisted": {"pe": 0.9985, "dma": 0.9973}}

SEQUENCES = [
    ("pe_back_to_back", "back-to-back matmul_mx N=512, one stationary, accumulating (v4)",
     "PE cycles between matmuls", 512, "ratio", (0.9, 1.15), "A, E",
     seq_pe("mariana", 32, 128, 512, False)),
    ("pe_back_to_back", "back-to-back matmul N=512 in MX mode (v5)",
     "PE cycles between matmuls", 512, "ratio", (0.9, 1.15), "A, E",
     seq_pe("maverick", 32, 128, 512, False)),
    ("pe_back_to_back", "back-to-back matmul_mx N=256 (v4)",
     "PE cycles between matmuls", 256, "ratio", (0.9, 1.15), "A, E",
     seq_pe("mariana", 32, 128, 256, False)),
    ("pe_back_to_back", "back-to-back matmul N=128 in MX mode (v5)",
     "PE cycles between matmuls", 128, "ratio", (0.9, 1.15), "A, E",
     seq_pe("maverick", 32, 128, 128, False)),
    ("pe_short_moving", "short moving: ldweights_mx 128 columns / matmul_mx N=64 (v4)",
     "PE cycles between matmuls", 64, "ratio", (0.8, 1.5), "A, D",
     seq_pe("mariana", 32, 128, 64, True)),
    ("pe_short_stationary", "short stationary: ldweights_mx 32 columns / matmul_mx N=128 (v4)",
     "PE cycles between matmuls", 128, "ratio", (0.8, 1.5), "A, D",
     seq_pe("mariana", 32, 32, 128, True)),
    ("pe_ls_mm_stream", "LS/MM stream: ldweights_mx 128 columns / matmul_mx N=512 (v4)",
     "PE cycles between pairs", 512, "ratio", (0.9, 1.2), "A", seq_pe("mariana", 32, 128, 512, True)),
    ("pe_ls_mm_stream", "LS/MM stream: ldweights 128 columns / matmul N=512 in MX mode (v5)",
     "PE cycles between pairs", 512, "ratio", (0.9, 1.2), "A", seq_pe("maverick", 32, 128, 512, True)),
    ("pe_ls_mm_stream", "LS/MM stream: ldweights_mx 64 columns / matmul_mx N=256 (v4)",
     "PE cycles between pairs", 256, "ratio", (0.9, 1.2), "A", seq_pe("mariana", 32, 64, 256, True)),
] + [
    ("pe_small_stationary",
     f"32 matmul_mx N=16 after one ldweights_mx of {m} columns (v4)",
     "PE cycles between matmuls", m, "ratio", (0.8, 1.5), "O", seq_pe("mariana", 32, m, 16, False))
    for m in (32, 16)
] + [
    # A small stationary loads in M / 4 cycles, in the background: a new one
    # before every matmul does not slow the stream.
    ("pe_small_stationary",
     f"alternating ldweights_mx of {m} columns / matmul_mx N=16 (v4)",
     "PE cycles between matmuls", m, "ratio", (0.8, 1.5), "O, A", seq_pe("mariana", 32, m, 16, True))
    for m in (32, 16)
] + [
    ("dve_independent", "32 independent tensor_copy FP32 N=512 (v4)",
     "DVE cycles between copies", 512, "ratio", (0.8, 1.3), "A", seq_dve("mariana", 512, False)),
    ("dve_independent", "32 independent tensor_copy FP32 N=1024 (v3)",
     "DVE cycles between copies", 1024, "ratio", (0.8, 1.3), "A", seq_dve("cayman", 1024, False)),
    ("dve_dependent", "32 dependent tensor_copy FP32 N=512, each reading the previous output (v4)",
     "DVE cycles more apart than independent ones", 100, "delta", (-50, 100), "A, D",
     seq_dve("mariana", 512, True, True)),
    ("dve_dependent", "32 dependent tensor_copy FP32 N=256 (v3)",
     "DVE cycles more apart than independent ones", 100, "delta", (-50, 100), "A, D",
     seq_dve("cayman", 256, True, True)),
    ("dve_dependent_short", "32 dependent tensor_copy FP32 N=64 (v4)",
     "DVE cycles between copies", 164, "ratio", (0.7, 1.7), "A, D", seq_dve("mariana", 64, True)),
    ("dve_dependent_short", "32 dependent tensor_copy FP32 N=64 (v2)",
     "DVE cycles between copies", 164, "ratio", (0.7, 1.7), "A, D", seq_dve("sunda", 64, True)),
    ("dve_wide_stride", "32 tensor_copy FP32 N=512, source stride 32 bytes, against contiguous (v2)",
     "ratio of the copies' intervals", 2.0, "range", (1.6, 2.4), "A",
     seq_dve_strided("sunda", 512, 8)),
    ("dve_wide_stride", "32 tensor_copy FP32 N=512, source stride 32 bytes, against contiguous (v4)",
     "ratio of the copies' intervals", 2.0, "range", (1.6, 2.4), "A",
     seq_dve_strided("mariana", 512, 8)),
    ("dve_wide_stride", "32 tensor_copy FP32 N=512, source stride 16 bytes, against contiguous (v2)",
     "ratio of the copies' intervals", 1.0, "range", (0.95, 1.05), "A",
     seq_dve_strided("sunda", 512, 4)),
    ("dve_dynamic", "32 tensor_copy FP32 N=64 from a register-addressed source (v2)",
     "DVE cycles between copies", 600, "ratio", (0.8, 1.3), "O", seq_dve_dynamic("sunda", 64)),
    ("dve_dynamic", "32 tensor_copy FP32 N=1024 from a register-addressed source (v2)",
     "DVE cycles between copies", 1024, "ratio", (0.8, 1.3), "O", seq_dve_dynamic("sunda", 1024)),
    ("dma_profile", "one DMA A[4, 4096] BF16 HBM -> SBUF (v3)",
     "ns to completion: 32 KiB at 23 B/ns + 1,300 ns", 32768 / 23 + 1300, "ratio", (0.7, 1.5),
     "J, K", seq_dma_alone("cayman", 4, 8192)),
    ("dma_profile", "one DMA A[4, 4096] BF16 HBM -> SBUF (v4)",
     "ns to completion: 32 KiB at 33 B/ns + 1,300 ns", 32768 / 33 + 1300, "ratio", (0.7, 1.5),
     "J, K", seq_dma_alone("mariana", 4, 8192)),
    ("dma_profile", "one DMA A[4, 4096] BF16: DMA engines active (v3)",
     "engines", 1, "delta", (0, 0), "J", seq_dma_engines("cayman", 4, 8192)),
    ("dma_profile", "one DMA A[128, 128] BF16: DMA engines active (v3)",
     "engines", 16, "delta", (0, 0), "J", seq_dma_engines("cayman", 128, 256)),
    ("dma_profile", "one DMA A[128, 128] BF16: DMA engines active (v4)",
     "engines", 16, "delta", (0, 0), "J", seq_dma_engines("mariana", 128, 256)),
] + [
    ("dma_curve", f"16 transfers of 128 partitions x {b} B on one queue (v3)",
     "throughput, % of the 32 KiB point", pct, "delta", (-15, 15), "J", seq_dma_curve("cayman", b))
    for b, pct in DMA_CURVE
] + [
    # v4: the same per-transfer costs over faster engines (33 B/ns): the curve
    # the cost model gives, not the v3 figure.
    ("dma_curve", f"16 transfers of 128 partitions x {b} B on one queue (v4, the cost model's curve)",
     "throughput, % of the 32 KiB point", dma_curve_model(b, 33), "delta", (-15, 15), "J, K",
     seq_dma_curve("mariana", b))
    for b, _ in DMA_CURVE
] + [
    # Fewer partitions: fewer engines, the same curve per engine.
    ("dma_curve", f"16 transfers of 64 partitions x {b} B on one queue (v3)",
     "throughput, % of the 32 KiB point", pct, "delta", (-15, 15), "J",
     seq_dma_curve("cayman", b, rows=64))
    for b, pct in DMA_CURVE[:4]
] + [
    # Two queues in turn: each queue's per-transfer cost overlaps the other's
    # transfers (the structure [N]'s GEMM asks for); the cost model's figure.
    ("dma_curve", f"16 transfers of 128 partitions x {b} B over two queues (v3, the cost model's)",
     "throughput, % of the 32 KiB point", dma_curve_model(b, 23, queues=2), "delta", (-15, 15),
     "J, N", seq_dma_curve("cayman", b, queues=(0, 5)))
    for b, _ in DMA_CURVE[:4]
] + [
    ("tutorial_tiled", "v3 tutorial GEMM, tiled (a load of both tiles per matmul): TensorE active",
     "fraction of the kernel", TUTORIAL["tiled"]["pe"], "range", (0.80, 0.95), "N",
     seq_tutorial("tiled", "pe")),
    ("tutorial_tiled", "v3 tutorial GEMM, tiled: DMA active",
     "fraction of the kernel", TUTORIAL["tiled"]["dma"], "range", (0.95, 1.0), "N",
     seq_tutorial("tiled", "dma")),
    ("tutorial_hoisted", "v3 tutorial GEMM, hoisted loads: TensorE active",
     "fraction of the kernel", TUTORIAL["hoisted"]["pe"], "range", (0.95, 1.0), "N",
     seq_tutorial("hoisted", "pe")),
    ("tutorial_hoisted", "v3 tutorial GEMM, hoisted loads: DMA active",
     "fraction of the kernel", TUTORIAL["hoisted"]["dma"], "range", (0.90, 1.0), "N",
     seq_tutorial("hoisted", "dma")),
    # Whole generated kernels (docs/KERNELS.md "Against the roofline").
    ("gemm_peak", "tuned MX GEMM 4096 x 4096 x 4096, MXFP8 weights (v4)",
     "fraction of the PE peak (315 TFLOPS)", 0.995, "range", (0.85, 1.0), "C, H, L",
     seq_gemm_peak("mxfp8")),
    ("gemm_peak", "tuned MX GEMM 4096 x 4096 x 4096, MXFP4 weights (v4)",
     "fraction of the PE peak (315 TFLOPS)", 0.995, "range", (0.85, 1.0), "C, H, L",
     seq_gemm_peak("mxfp4")),
    ("gemv_bound", "memory-bound GEMV M=1, K = N = 4096, MXFP8 weights (v4)",
     "ns: weight bytes / min(HBM share, 16 x 33 B/ns)",
     (4096 * 4096 + 4096 * 4096 // 32) / GEMV_BYTES_PER_NS, "ratio", (1.0, 1.3), "A, J, K, L",
     seq_gemv()),
    # SPEC §18's instructions (TIMING.md [O] and its validation points).
    ("pe_small_stationary", "32 plain matmuls BF16 N=16 after one ldweights of 32 columns (v3)",
     "PE cycles between matmuls", 32, "ratio", (0.8, 1.5), "O",
     seq_stream("cayman", "pe", "matmul", plain_mm_line("bf16", 16), head=[plain_ls("bf16", 32)])),
    ("pe_small_stationary", "32 plain matmuls BF16 N=16 after one ldweights of 16 columns (v3)",
     "PE cycles between matmuls", 16, "ratio", (0.8, 1.5), "O",
     seq_stream("cayman", "pe", "matmul", plain_mm_line("bf16", 16), head=[plain_ls("bf16", 16)])),
    ("pe_back_to_back",
     "back-to-back plain matmul BF16 N=512, one stationary, accumulating (v4)",
     "PE cycles between matmuls", 512, "ratio", (0.9, 1.15), "O",
     seq_stream("mariana", "pe", "matmul", plain_mm_line("bf16", 512),
                head=[plain_ls("bf16", 128)])),
    ("pe_back_to_back", "back-to-back plain matmul FP32 N=128 (v2: 4x)",
     "PE cycles between matmuls", 512, "ratio", (0.9, 1.15), "O",
     seq_stream("sunda", "pe", "matmul", plain_mm_line("fp32", 128),
                head=[plain_ls("fp32", 128)])),
    ("act_independent", "32 independent activations FP32 N=512 (v4)",
     "ACT cycles between activations", 512, "ratio", (0.8, 1.3), "O",
     seq_stream("mariana", "act", "activation", act_line(512, False))),
    ("act_dependent_short",
     "32 dependent 1-element activations, each reading the previous output (v2)",
     "ACT cycles between activations", 264, "ratio", (0.6, 1.5), "D",
     seq_stream("sunda", "act", "activation", act_line(1, True))),
    ("act_independent", "32 independent activations FP32 N=512 on MAVERICK (on the DVE)",
     "DVE cycles between activations", 512, "ratio", (0.8, 1.3), "O, seed 003",
     seq_stream("maverick", "act", "activation", act_line(512, False))),
    ("vector_streams", "32 independent tensor_tensor multiply FP32 N=512 (v4)",
     "DVE cycles between instructions", 1024, "ratio", (0.8, 1.3), "O",
     seq_stream("mariana", "dve", "tensor_tensor",
                lambda i: tensor_tensor("multiply", "fp32")(512, 128))),
    ("vector_streams", "32 independent tensor_scalar FP32 N=512 on the ACT (v3)",
     "ACT cycles between instructions", 512, "ratio", (0.8, 1.3), "O",
     seq_stream("cayman", "act", "tensor_scalar", lambda i: tensor_scalar(True)(512, 128))),
    # [O] gives max(MIN_II, N) = 64; [A] adds its static overhead (about 100)
    # to runs of short instructions (N < 128): 164. The band spans both.
    ("vector_streams", "32 independent nc_transpose 32 x 32 FP32 (Vector, v4)",
     "DVE cycles between transposes", 64, "ratio", (0.8, 2.6), "O, A",
     seq_stream("mariana", "dve", "nc_transpose",
                lambda i: (f"nc_transpose channels=32 in_dtype=fp32 out_dtype=fp32 "
                           f"src={t3d('sbuf', 0, 32)} dst={t3d('sbuf', 0x1000 * (1 + i % 8), 32)}"))),
    ("engines_at_once",
     "32 activations on the ACT and 32 tensor_copy on the DVE at once, N=512 (v4)",
     "run time over the activations' alone", 1, "ratio", (0.95, 1.1), "seed 001 (engines)",
     seq_two_engines("mariana", 512)),
    ("engines_at_once", "the same on MAVERICK (ACT folded into the DVE)",
     "run time over the activations' alone", 2, "ratio", (0.85, 1.1), "seed 003",
     seq_two_engines("maverick", 512)),
]
POINTS = sorted({s[0] for s in SEQUENCES})


def run_sequences(tpbsim, point=None):
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for pt, name, what, want, kind, band, src, run in SEQUENCES:
            if point is not None and pt != point:
                continue
            got = run(tpbsim, work)
            value = (got / want if kind == "ratio" else got - want if kind == "delta" else got)
            rows.append(dict(point=pt, name=name, what=what, want=want, got=got, kind=kind,
                             band=band, source=src, value=value,
                             ok=band[0] <= value <= band[1]))
    return rows


def fmt_num(v):
    return f"{v:.0f}" if abs(v) >= 10 else f"{v:.3g}"


def render_sequences(rows):
    out = ["## Whole sequences (TIMING.md \"Validation points\")", "",
           "Streams of instructions on the default profile: the initiation interval, the",
           "interlock of dependent instructions, the background LoadStationary, the DMA",
           "engines and queues, the access patterns, and the v3 tutorial GEMM",
           "(`scripts/tutorial_gemm.py`: its slice of 2 of the 32 M-tiles with all of N and",
           "K, timing only; engine active as `--stats` `engine_active` reports it; generated",
           "programs until the NKI front end lowers `nc_matmul`, then the tutorial's kernels",
           "in examples/nki/: docs/KERNELS.md \"The v3 tutorial GEMM\"), and the generated",
           "MX GEMM and GEMV of `python3 -m tpbsim.kernels gemm` (timing only; docs/KERNELS.md",
           "\"Against the roofline\"). Each",
           "point is the ctest `TimingValidation.POINT`. `ratio` is measured / expected,",
           "`delta` measured - expected (cycles, engines or throughput points), `range`",
           "the measured value itself. One profile for every row: each generation's",
           "default, so the single-queue curve and the tutorial GEMM's figures (both",
           "cayman's) hold together (docs/CONVENTIONS.md \"DMA\").", "",
           "| point | sequence | measured | expected | got | check | band | source |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["kind"] == "ratio":
            check, band = f"x{r['value']:.2f}", f"x{r['band'][0]}-{r['band'][1]}"
        elif r["kind"] == "delta":
            check, band = f"{r['value']:+.0f}", f"{r['band'][0]:+d} .. {r['band'][1]:+d}"
        else:
            check, band = f"{r['value']:.3f}", f"{r['band'][0]}-{r['band'][1]}"
        out.append(f"| {r['point']} | {r['name']} | {r['what']} | {fmt_num(r['want'])} | "
                   f"{fmt_num(r['got'])} | {check} | {band} | {r['source']} |")
    out.append("")
    return "\n".join(out)


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
           "`--check`. Two parts: instructions run alone, against the latency column of",
           "the public cost model of `../shared/spec/TIMING.md` (sources [A]..[N] there),",
           "and whole sequences against its validation points. The MAVERICK (v5) profile",
           "equals MARIANA's (v4) wherever nothing public says otherwise: every number of",
           "`models/timing/profiles/maverick.json` is v4's, each source saying so.", "",
           "## Instructions alone", "",
           "Each row is one instruction run alone on MARIANA (MAVERICK for v5) with the",
           "default profile: the model's busy cycles (engine cycles from its issue to its",
           "completion, its fetch included) against the latency: the initiation interval",
           "plus the SBUF/PSUM access (about 60 cycles) or, for the PE, the array's",
           "fill/drain (about 2 x 128 + 64). N is the free size: source words per",
           "partition (dequant), source elements per partition (QuantizeMX, tensor_copy,",
           "the SPEC §18 instructions: TIMING.md [O]), moving columns (matmul; the",
           "partitions transposed for the PE's transpose), stationary columns (ldweights),",
           "ValidCol (TQUANT); P the active partitions (rows). The ACT's latency is its II",
           "plus about 200 (TIMING.md [D]: dependent 1-element activations 264 cycles",
           "apart). Bands: x0.7-1.5, POOL x0.5-2.", ""]
    by_name = {}
    for r in rows:
        by_name.setdefault(r["name"], []).append(r)
    for name, rs in by_name.items():
        r0 = rs[0]
        out += [f"### {name} ({r0['engine']})", "",
                f"Formula: `{r0['formula']}` [{r0['source']}]; band x{r0['band'][0]}-{r0['band'][1]}.",
                "", "| N | P | model cycles | formula | ratio |", "|---|---|---|---|---|"]
        for r in rs:
            out.append(f"| {r['n']} | {r['p']} | {r['cycles']} | {r['want']:.0f} | {r['ratio']:.2f} |")
        out.append("")
    return "\n".join(out)


def print_sequences(seqs):
    for r in seqs:
        print(f"{r['point']:<20} {r['name']:<84} {r['got']:>9.3f} vs {r['want']:>8.3f} "
              f"{'ok' if r['ok'] else 'OUT OF BAND'}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tpbsim")
    ap.add_argument("--write", metavar="FILE")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--compare", metavar="FILE")
    ap.add_argument("--point", choices=POINTS,
                    help="run one validation point's sequences only (its ctest)")
    ap.add_argument("--list-points", action="store_true")
    a = ap.parse_args()
    if a.list_points:
        print("\n".join(POINTS))
        return 0
    tpbsim = os.path.abspath(a.tpbsim)
    if a.point:
        seqs = run_sequences(tpbsim, a.point)
        print_sequences(seqs)
        return 1 if a.check and not all(r["ok"] for r in seqs) else 0
    rows = run_all(tpbsim)
    bad = [r for r in rows if not (r["band"][0] <= r["ratio"] <= r["band"][1])]
    for r in rows:
        mark = "" if r in bad else "ok"
        print(f"{r['name']:<36} N={r['n']:<5} P={r['p']:<4} {r['cycles']:>7} / "
              f"{r['want']:>7.0f} = {r['ratio']:.2f} {mark or 'OUT OF BAND'}")
    seqs = run_sequences(tpbsim)
    print_sequences(seqs)
    bad += [r for r in seqs if not r["ok"]]
    rows_n = len(rows) + len(seqs)
    text = render(rows) + "\n" + render_sequences(seqs)
    if a.write:
        pathlib.Path(a.write).write_text(text)
    stale = a.compare is not None and pathlib.Path(a.compare).read_text() != text
    if stale:
        print(f"{a.compare} is stale: regenerate it with `scripts/calibrate.py build/tpbsim "
              f"--write {a.compare}`")
    print(f"calibration: {rows_n} points, {len(bad)} out of band")
    return 1 if (a.check and bad) or stale else 0


if __name__ == "__main__":
    sys.exit(main())
