#!/usr/bin/python3
"""Generates the runnable workloads in traces/workloads/ (run with /usr/bin/python3).

Each workload directory holds:
  program.tpb   the program as `.raw` words (SPEC §9), one comment line per field
  input.npy     packed source words, u32 [channels, words]
  background.npy (some) bytes preloaded under the destination, u8 [channels, bytes]
  expected.npy  the destination region after the run, u8 [channels, bytes]
  cmd.txt       the `tpbsim run` arguments, paths relative to the directory
  expect.json   {"exit": code, "stderr": [substrings]} for the end-to-end tests

Everything here is written from the format definitions (SPEC §2, §3, §4, §5;
seed 000 §2, §4), independently of the C++ model. The numerics are the tests'
one oracle, sc_tests/python/reference.py (written from the OCP MX / IEEE 754
field layouts and QLoRA's NF4 table, NumPy only): codes decoded by it, scaled
by 2^(s-127) and rounded into FP8 (RNE, saturating); the MX block scale, the
MX values and the k-ascending FP32 matmul are its. Instruction words are
packed with struct.pack from the S3D3_TENS_DEQUANT layout of seed 000 §2.

Usage: /usr/bin/python3 scripts/gen_workloads.py [OUTDIR]   (default traces/workloads)
       /usr/bin/python3 scripts/gen_workloads.py --check-asm TPBSIM   (asm round trip)
"""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sc_tests",
                                "python"))
import reference  # noqa: E402  (the tests' oracle: sc_tests/python/reference.py)

# ---------------------------------------------------------------------------
# Number formats: reference.py's, from their definitions.

FP8_NAN = 0x7F  # the canonical NaN of both FP8 formats' outputs (docs/CONVENTIONS.md)


def round_fp8(x, fmt):
    """RNE of the exact value x into fmt, saturating (None: NaN)."""
    if x is None:
        return FP8_NAN
    return int(reference.encode_minifloat(fmt, x, saturate=True))


# DEQUANT_FMT (seed 000 §4): code width, decoder, output format.
FMTS = {
    1: ("e2m1", 4, "fp4_e2m1", "e5m2"),
    2: ("int4", 4, "int4", "e5m2"),
    3: ("nf4", 4, "nf4", "e4m3"),
    4: ("fp6", 6, "fp6_e2m3", "e4m3"),
}
FMT_ID = {v[0]: k for k, v in FMTS.items()}

_CODE_CACHE = {}


def dequant_code(fmt, code, scale):
    """Output FP8 byte of one code; scale None (group 0) or an E8M0 byte."""
    key = (fmt, code, scale)
    if key not in _CODE_CACHE:
        _, _, code_fmt, out = FMTS[fmt]
        if scale == 0xFF:
            r = FP8_NAN
        else:
            v = float(reference.decode(code_fmt, code))
            if scale is not None:
                v = v * 2.0 ** (scale - 127)  # exact in a double: |scale-127| <= 127
            r = round_fp8(v, out)
        _CODE_CACHE[key] = r
    return _CODE_CACHE[key]


def dequant_stream(fmt, group, words):
    """Transforms a stream of u32 source words into the stream of dst words (SPEC §3)."""
    out = bytearray()
    if fmt == 4:  # FP6: 3 words = 96-bit LE string of 16 codes
        assert group == 0 and len(words) % 3 == 0
        for i in range(0, len(words), 3):
            bits = words[i] | (words[i + 1] << 32) | (words[i + 2] << 64)
            out += bytes(dequant_code(fmt, (bits >> (6 * k)) & 0x3F, None) for k in range(16))
    elif group == 0:
        for w in words:
            out += bytes(dequant_code(fmt, (w >> (4 * k)) & 0xF, None) for k in range(8))
    else:  # group 8: [scales][4 code words] -> 32 bytes
        assert len(words) % 5 == 0
        for i in range(0, len(words), 5):
            scales = words[i]
            for j in range(4):
                w = words[i + 1 + j]
                for k in range(8):
                    s = (scales >> (8 * ((8 * j + k) // 8))) & 0xFF
                    out.append(dequant_code(fmt, (w >> (4 * k)) & 0xF, s))
    return list(struct.unpack("<%dI" % (len(out) // 4), bytes(out)))


# ---------------------------------------------------------------------------
# Instruction words (seed 000 §2; SPEC §2).

SBUF_PARTITION_SHIFT = 18


def sbuf(p, off):
    return (p << SBUF_PARTITION_SHIFT) | off


class T3:
    """TENSOR3D {u32 start_addr, i16 step[3], u16 num[3]}; offsets in bytes, steps in words."""

    def __init__(self, part, off, step, num):
        self.part, self.off = part, off
        self.step = list(step) + [0] * (3 - len(step))
        self.num = list(num) + [1] * (3 - len(num))

    raw_start = None  # an ADDR4 other than an immediate SBUF address

    def start(self):
        return self.raw_start if self.raw_start is not None else sbuf(self.part, self.off)

    def pack(self):
        return struct.pack("<I3h3H", self.start(), *self.step, *self.num)

    def count(self):
        return self.num[0] * self.num[1] * self.num[2]

    def offsets(self):
        """Byte offsets (within a partition) in pattern order, dim 0 innermost."""
        return [self.off + 4 * (i0 * self.step[0] + i1 * self.step[1] + i2 * self.step[2])
                for i2 in range(self.num[2]) for i1 in range(self.num[1])
                for i0 in range(self.num[0])]

    def mnemonic(self):
        """The docs/ASM.md form: t3d(ADDR, step=[..], num=[..])."""
        addr = ("reg(r%d)" % (self.raw_start & 31) if self.raw_start is not None
                else "sbuf(%d, 0x%x)" % (self.part, self.off))
        return "t3d(%s, step=[%d, %d, %d], num=[%d, %d, %d])" % (addr, *self.step, *self.num)

    def describe(self):
        where = ("ADDR_REG r%d" % (self.raw_start & 31) if self.raw_start is not None
                 else "sbuf p%d +0x%x" % (self.part, self.off))
        return "start 0x%08x (%s) step [%d,%d,%d] num [%d,%d,%d]" % (
            self.start(), where, *self.step, *self.num)


class Dequant:
    """One S3D3_TENS_DEQUANT word (opcode 0x7b)."""

    def __init__(self, fmt, group, channels, src, dst, wait=(0, 0), update=(0, 0), sem_value=0,
                 in_dtype=0x9, out_dtype=0x9):
        self.fmt, self.group, self.channels = fmt, group, channels
        self.src, self.dst = src, dst
        self.wait, self.update, self.sem_value = wait, update, sem_value
        self.in_dtype, self.out_dtype = in_dtype, out_dtype

    def fields(self):
        """(offset, bytes, comment) per field, in address order."""
        return [
            (0, struct.pack("<4B", 0x7B, 16, 0, 0),
             "header  opcode 0x7b TensorDequantize, inst_word_len 16, debug_cmd 0, debug_hint 0"),
            (4, struct.pack("<4BI", self.wait[0], self.wait[1], self.update[0], self.update[1],
                            self.sem_value),
             "events  wait_mode %d idx %d, update_mode %d idx %d, sem_value %d" % (
                 self.wait[0], self.wait[1], self.update[0], self.update[1], self.sem_value)),
            (12, self.src.pack(), "src     " + self.src.describe()),
            (28, bytes(4), "reserved0"),
            (32, struct.pack("<5B", self.in_dtype, self.out_dtype, self.channels, self.fmt,
                             self.group),
             "in_dtype 0x%x, out_dtype 0x%x, num_active_channels %d, dequant_fmt %d (%s), "
             "group_size %d" % (self.in_dtype, self.out_dtype, self.channels, self.fmt,
                                FMTS[self.fmt][0], self.group)),
            (37, bytes(7), "reserved1"),
            (44, self.dst.pack(), "dst     " + self.dst.describe()),
            (60, bytes(4), "reserved2"),
        ]

    def raw(self):
        b = b"".join(f[1] for f in self.fields())
        assert len(b) == 64
        return b

    def mnemonic(self):
        """The instruction in the mnemonic syntax of docs/ASM.md (written from that document,
        checked against these words by `--check-asm`)."""
        names = {1: "e2m1_to_e5m2", 2: "int4_to_e5m2", 3: "nf4_to_e4m3", 4: "e2m3_to_e4m3"}
        ev = ""
        if self.wait[0]:
            ev += " wait=%s(sem%d, %d)" % ({1: "eq", 2: "ge"}[self.wait[0]], self.wait[1],
                                           self.sem_value)
        if self.update[0]:
            ev += " update=" + {1: "inc(sem%d)" % self.update[1],
                                2: "dec(sem%d)" % self.update[1],
                                3: "set(sem%d, %d)" % (self.update[1], self.sem_value)}[
                self.update[0]]
        return ("tensor_dequantize fmt=%s group=%d channels=%d \\\n    src=%s \\\n"
                "    dst=%s%s\n" % (names[self.fmt], self.group, self.channels,
                                    self.src.mnemonic(), self.dst.mnemonic(), ev))

    def text(self, title):
        lines = ["# " + title]
        for off, b, comment in self.fields():
            lines.append("#   @%-2d %-48s %s" % (off, b.hex(" "), comment))
        lines.append(".raw " + "  ".join(f[1].hex(" ") for f in self.fields()))
        return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# Reference execution of a program on a model of the SBUF.

class Sbuf:
    def __init__(self):
        self.mem = {}  # partition -> bytearray

    def part(self, p):
        return self.mem.setdefault(p, bytearray(256 * 1024))

    def load(self, p0, off, arr):
        raw = np.ascontiguousarray(arr).view(np.uint8).reshape(arr.shape[0], -1)
        for r in range(raw.shape[0]):
            self.part(p0 + r)[off:off + raw.shape[1]] = raw[r].tobytes()

    def dump(self, p0, off, rows, cols):
        return np.array([list(self.part(p0 + r)[off:off + cols]) for r in range(rows)],
                        dtype=np.uint8)

    def run(self, inst):
        for c in range(inst.channels):
            sp, dp = self.part(inst.src.part + c), self.part(inst.dst.part + c)
            words = [struct.unpack_from("<I", sp, o)[0] for o in inst.src.offsets()]
            out = dequant_stream(inst.fmt, inst.group, words)
            offs = inst.dst.offsets()
            assert len(out) == len(offs)
            for o, w in zip(offs, out):
                struct.pack_into("<I", dp, o, w)


def traffic(insts):
    """What the stats must report for a list of instructions that all retire."""
    rd = sum(4 * i.src.count() * i.channels for i in insts)
    wr = sum(4 * i.dst.count() * i.channels for i in insts)
    q = [0, 0, 0, 0]
    for i in insts:
        for c in range(i.channels):
            q[(i.dst.part + c) // 32] += 4 * i.dst.count()
    return {"retired": len(insts), "pool_bytes_read": rd, "pool_bytes_written": wr,
            "sbuf_quadrant_bytes_written": q}


def footprint(t):
    offs = t.offsets()
    return min(offs), max(offs) + 4


# ---------------------------------------------------------------------------
# Inputs: every code of the format appears, MX scales cover the edge cases.

INTERESTING_SCALES = [127, 128, 126, 0, 1, 254, 0xFF, 100, 140, 134, 135, 142, 143, 112, 110, 104]


def make_input(rng, fmt, group, channels, words):
    a = rng.integers(0, 2 ** 32, size=(channels, words), dtype=np.uint64).astype(np.uint32)
    for ch in range(channels):
        if fmt == 4:  # first 3 x 4 words: the 64 FP6 codes in order, shifted per channel
            for t in range(min(4, words // 3)):
                bits = 0
                for k in range(16):
                    bits |= ((16 * t + k + ch) % 64) << (6 * k)
                for j in range(3):
                    a[ch, 3 * t + j] = (bits >> (32 * j)) & 0xFFFFFFFF
        elif group == 0:  # first two words: codes 0..15, rotated per channel
            for j in range(min(2, words)):
                a[ch, j] = sum((((8 * j + k + ch) % 16) << (4 * k)) for k in range(8))
        else:  # word 0 of each chunk: four scales from the interesting set and random ones
            for chunk in range(words // 5):
                sc = []
                for g in range(4):
                    i = (ch * 4 + chunk * 7 + g) % (2 * len(INTERESTING_SCALES))
                    sc.append(INTERESTING_SCALES[i] if i < len(INTERESTING_SCALES)
                              else int(rng.integers(0, 256)))
                a[ch, 5 * chunk] = sc[0] | sc[1] << 8 | sc[2] << 16 | sc[3] << 24
                if chunk == 0 and words >= 5:
                    for j in range(2):  # every code under scale 0 and 1
                        a[ch, 1 + j] = sum((((8 * j + k) % 16) << (4 * k)) for k in range(8))
    return a


# ---------------------------------------------------------------------------
# Workload definitions.

SRC_OFF = 0x0000
DST_OFF = 0x4000


def dequant_case(name, fmt_name, group, channels, p0, src_pat, dst_pat, title, bg=None):
    """src_pat/dst_pat: (step, num) with offsets relative to SRC_OFF / DST_OFF; dst_pat may
    give a start word index as a third element (for reversed patterns)."""
    fmt = FMT_ID[fmt_name]
    src = T3(p0, SRC_OFF, *src_pat)
    dst_start = dst_pat[2] if len(dst_pat) > 2 else 0
    dst = T3(p0, DST_OFF + 4 * dst_start, dst_pat[0], dst_pat[1])
    return dict(name=name, fmt=fmt, group=group, channels=channels, p0=p0, insts=[
        (Dequant(fmt, group, channels, src, dst), title)], bg=bg)


CASES = [
    # name, fmt, group, channels, start partition, src (step, num), dst (step, num[, start])
    dequant_case("e2m1_g0", "e2m1", 0, 128, 0, ([1], [4]), ([1], [8]),
                 "FP4 E2M1 -> E5M2, group 0, 128 channels, contiguous"),
    dequant_case("e2m1_g8", "e2m1", 8, 32, 40, ([1], [10]), ([1], [16]),
                 "FP4 E2M1 -> E5M2, MX group 8, 32 channels from partition 40 (crosses a "
                 "quadrant), contiguous"),
    dequant_case("int4_g0", "int4", 0, 1, 127, ([1, 4, 16], [2, 3, 2]), ([-1], [24], 23),
                 "INT4 -> E5M2, group 0, 1 channel at partition 127, 3-D strided src, "
                 "reversed dst"),
    dequant_case("int4_g8", "int4", 8, 128, 0, ([2], [5]), ([1], [8]),
                 "INT4 -> E5M2, MX group 8, 128 channels, src step 2 (gaps never read)"),
    dequant_case("nf4_g0", "nf4", 0, 32, 96, ([1], [6]), ([2], [12]),
                 "NF4 -> E4M3, group 0, 32 channels from partition 96, dst step 2 (gaps keep "
                 "the background)", bg=0xEE),
    dequant_case("nf4_g8", "nf4", 8, 32, 0, ([1, 8, 20], [5, 2, 2]), ([1, 16, 8], [8, 2, 2]),
                 "NF4 -> E4M3, MX group 8, 32 channels, 3-D src, 3-D dst in a different "
                 "order", bg=0x55),
    dequant_case("fp6_g0", "fp6", 0, 64, 16, ([1], [12]), ([1, -4], [4, 4], 12),
                 "FP6 E2M3 -> E4M3, group 0, 64 channels from partition 16, all 64 codes, "
                 "dst rows reversed"),
]


def src_words_needed(t):
    return (max(t.offsets()) - t.off) // 4 + 1


def build_dequant_workload(case, arch, rng):
    """Returns (program text, files dict, cmd args, expect)."""
    inst, title = case["insts"][0]
    nwords = src_words_needed(inst.src)
    inp = make_input(rng, inst.fmt, inst.group, inst.channels, nwords)
    mem = Sbuf()
    mem.load(inst.src.part, inst.src.off, inp)
    lo, hi = footprint(inst.dst)
    files = {"input.npy": inp}
    args = ["program.tpb",
            "--load sbuf:%d:%d=input.npy" % (inst.src.part, inst.src.off)]
    if case["bg"] is not None:
        bg = np.full((inst.channels, hi - lo), case["bg"], dtype=np.uint8)
        mem.load(inst.dst.part, lo, bg)
        files["background.npy"] = bg
        args.append("--load sbuf:%d:%d=background.npy" % (inst.dst.part, lo))
    mem.run(inst)
    files["expected.npy"] = mem.dump(inst.dst.part, lo, inst.channels, hi - lo)
    args.append("--dump sbuf:%d:%d:%dx%d:u8=out.npy" % (inst.dst.part, lo, inst.channels,
                                                         hi - lo))
    text = prog(arch, title, [(inst, "inst 0: " + title)])
    return text, files, args, dict(exit=0, stderr=[], **traffic([inst]))


def prog(arch, title, items, pre=""):
    """(raw form, mnemonic form) of a POOL program; items = [(Dequant, comment)]."""
    raw = header(arch, title) + pre + ".engine pool\n\n" + "\n".join(
        i.text(c) for i, c in items)
    mn = header(arch, title).replace("Fields of each .raw word are listed above it.",
                                     "Mnemonic form of program.tpb (docs/ASM.md).") + \
        pre + ".engine pool\n\n" + "\n".join("# %s\n%s" % (c, i.mnemonic()) for i, c in items)
    return raw, mn


def header(arch, title):
    return ("# %s\n# Generated by scripts/gen_workloads.py; expected.npy is computed there "
            "from the format\n# definitions. Fields of each .raw word are listed above it.\n"
            ".arch %s\n\n" % (title, arch))


def two_stream(rng):
    """Three dequants ordered by semaphores: inst 1 reads inst 0's output bytes as INT4 codes.
    The dumped region 0x40..0xD4 is covered with no gaps (A dst, B dst, C src, C dst)."""
    a = Dequant(1, 0, 8, T3(0, 0x00, [1], [4]), T3(0, 0x40, [1], [8]), update=(1, 2))
    b = Dequant(2, 0, 8, T3(0, 0x40, [1], [8]), T3(0, 0x60, [1], [16]),
                wait=(1, 2), sem_value=1, update=(1, 2))
    # wait sem[2] >= 2; the one sem_value field also gives the update: sem[9] = 2
    c = Dequant(3, 8, 8, T3(0, 0xA0, [1], [5]), T3(0, 0xB4, [1], [8]),
                wait=(2, 2), sem_value=2, update=(3, 9))
    inp = make_input(rng, 1, 0, 8, 4)
    inp_c = make_input(rng, 3, 8, 8, 5)
    mem = Sbuf()
    mem.load(0, 0x00, inp)
    mem.load(0, 0xA0, inp_c)
    for i in (a, b, c):
        mem.run(i)
    text = prog("mariana", "Three dequants chained by semaphores on the POOL queue", [
        (a, "inst 0: E2M1 g0 sbuf+0x0 -> +0x40; on retire sem[2] += 1"),
        (b, "inst 1: waits sem[2] == 1; INT4 g0 reads inst 0's output +0x40 -> +0x60; "
            "on retire sem[2] += 1"),
        (c, "inst 2: waits sem[2] >= 2; NF4 MX g8 +0xa0 -> +0xb4; on retire sem[9] = 2")])
    files = {"input.npy": inp, "input_c.npy": inp_c,
             "expected.npy": mem.dump(0, 0x40, 8, 0xD4 - 0x40)}
    args = ["program.tpb", "--load sbuf:0:0=input.npy", "--load sbuf:0:%d=input_c.npy" % 0xA0,
            "--dump sbuf:0:%d:8x%d:u8=out.npy" % (0x40, 0xD4 - 0x40)]
    return text, files, args, dict(exit=0, stderr=[], **traffic([a, b, c]))


class QuantizeMx:
    """One S3DMX1_QUANT word (opcode 0xe3, DVE; seed 003 §2.5, SPEC §4): FP16 source
    elements along a TENSOR3D, E4M3 x4 words along an MXTENSOR1D, E8M0 scales."""

    def __init__(self, channels, src, data_off, scale_off, num, wait, update, sem_value):
        self.channels, self.src = channels, src
        self.data_off, self.scale_off, self.num = data_off, scale_off, num
        self.wait, self.update, self.sem_value = wait, update, sem_value

    def fields(self):
        return [
            (0, struct.pack("<4B", 0xE3, 16, 0, 0), "header  opcode 0xe3 QuantizeMX, "
             "inst_word_len 16"),
            (4, struct.pack("<4BI", self.wait[0], self.wait[1], self.update[0], self.update[1],
                            self.sem_value),
             "events  wait_mode %d idx %d, update_mode %d idx %d, sem_value %d" % (
                 self.wait[0], self.wait[1], self.update[0], self.update[1], self.sem_value)),
            (12, bytes(4), "reserved0"),
            (16, self.src.pack(), "src     " + self.src.describe() + " (FP16 elements)"),
            (32, bytes(1), "reserved1"),
            (33, struct.pack("<3B", self.channels, 0x6, 0xE),
             "num_active_channels %d, in_dtype 0x6 FP16, out_dtype 0xe FP8_EXP4 (E4M3)" %
             self.channels),
            (36, bytes(12), "reserved2"),
            (48, struct.pack("<IIHbB4x", sbuf(0, self.data_off), sbuf(0, self.scale_off),
                             self.num, 1, 0),
             "dst     MXTENSOR1D data sbuf p0 +0x%x, scale sbuf p0 +0x%x, num %d x4 words, "
             "step 1, scale_pidx 0" % (self.data_off, self.scale_off, self.num)),
        ]

    def raw(self):
        b = b"".join(f[1] for f in self.fields())
        assert len(b) == 64
        return b

    def text(self, title):
        lines = ["# " + title]
        for off, b, comment in self.fields():
            lines.append("#   @%-2d %-48s %s" % (off, b.hex(" "), comment))
        lines.append(".raw " + "  ".join(f[1].hex(" ") for f in self.fields()))
        return "\n".join(lines) + "\n"

    def mnemonic(self):
        return ("quantize_mx channels=%d in_dtype=fp16 out_dtype=fp8_e4m3 \\\n    src=%s \\\n"
                "    dst=mx1d(data=sbuf(0, 0x%x), scale=sbuf(0, 0x%x), num=%d, step=1, "
                "scale_pidx=0) \\\n    wait=ge(sem%d, %d) update=inc(sem%d)\n" % (
                    self.channels, self.src.mnemonic(), self.data_off, self.scale_off, self.num,
                    self.wait[1], self.sem_value, self.update[1]))

    def run(self, mem):
        """SPEC §4 with the ocp emax (E4M3: 8): blocks of 8 partitions x 4 elements."""
        n = self.src.count()
        vals = []  # per partition: FP16 values in pattern order
        for c in range(self.channels):
            part = mem.part(self.src.part + c)
            offs = [self.src.off + 2 * (i0 * self.src.step[0] + i1 * self.src.step[1] +
                                        i2 * self.src.step[2])
                    for i2 in range(self.src.num[2]) for i1 in range(self.src.num[1])
                    for i0 in range(self.src.num[0])]
            vals.append([float(np.frombuffer(bytes(part[o:o + 2]), dtype="<f2")[0])
                         for o in offs])
        # FP16 widens exactly to FP32.
        codes, scales = reference.mx_quantize(np.array(vals, dtype=np.float32), "e4m3")
        for b in range(self.channels // 8):
            for j in range(n // 4):
                for r in range(8):
                    mem.part(8 * b + r)[self.data_off + 4 * j:self.data_off + 4 * j + 4] = \
                        bytes(int(c) for c in codes[8 * b + r, 4 * j:4 * j + 4])
                scale_part = 32 * (b // 4) + (b % 4)
                mem.part(scale_part)[self.scale_off + j] = int(scales[b, j])


def pool_dve_pipeline(rng):
    """POOL dequant -> DVE QuantizeMX -> POOL dequant, ordered only by semaphores.
    The DVE reads POOL's E5M2 bytes as FP16 elements; POOL reads the DVE's x4 words
    as FP4 codes. The dumped output depends on every bit of both earlier steps."""
    a = Dequant(1, 0, 32, T3(0, 0x000, [1], [16]), T3(0, 0x1000, [1], [32]), update=(1, 1))
    q = QuantizeMx(32, T3(0, 0x1000, [1], [64]), 0x2000, 0x3000, 16,
                   wait=(2, 1), update=(1, 2), sem_value=1)
    b = Dequant(1, 0, 32, T3(0, 0x2000, [1], [16]), T3(0, 0x4000, [1], [32]),
                wait=(2, 2), sem_value=1)
    inp = make_input(rng, 1, 0, 32, 16)
    mem = Sbuf()
    mem.load(0, 0x000, inp)
    mem.run(a)
    q.run(mem)
    mem.run(b)
    title = "POOL -> DVE -> POOL pipeline ordered only by semaphores (MARIANA)"
    raw = (header("mariana", title) + ".engine pool\n\n" +
           a.text("pool 0: E2M1 g0 sbuf+0x0 -> +0x1000 (E5M2); on retire sem[1] += 1") + "\n" +
           b.text("pool 1: waits sem[2] >= 1; E2M1 g0 reads the DVE's x4 words +0x2000 -> "
                  "+0x4000") + "\n.engine dve\n\n" +
           q.text("dve 0: waits sem[1] >= 1; +0x1000 as FP16 -> MXFP8 E4M3 x4 words +0x2000, "
                  "E8M0 scales +0x3000 of partitions 0..3; on retire sem[2] += 1"))
    mn = (header("mariana", title).replace("Fields of each .raw word are listed above it.",
                                           "Mnemonic form of program.tpb (docs/ASM.md).") +
          ".engine pool\n\n" + a.mnemonic() + b.mnemonic() + "\n.engine dve\n\n" +
          q.mnemonic())
    files = {"input.npy": inp, "expected.npy": mem.dump(0, 0x4000, 32, 128)}
    args = ["program.tpb", "--load sbuf:0:0=input.npy", "--dump sbuf:0:%d:32x128:u8=out.npy" %
            0x4000]
    t = traffic([a, b])
    # The DVE writes 16 x4 words per partition and 16 scale bytes per block row.
    t["sbuf_quadrant_bytes_written"][0] += 32 * 16 * 4 + 4 * 16
    t["pool_retired"] = 2
    t["retired"] = 3
    return (raw, mn), files, args, dict(exit=0, stderr=[], **t)


def pe_pipeline(rng):
    """POOL dequant -> DVE QuantizeMX -> PE matmul, ordered only by semaphores (MARIANA).

    K = 64 partitions (256 contraction values, k = 4p + lane), M = 64, N = 128.
    Weights are stored as MXFP4: E2M1 codes interleaved with zero codes, one E8M0
    scale per 8 codes; POOL dequantizes them to E5M2 bytes, which read as FP16 are
    exactly the weight values (the E5M2 byte is the high byte of an FP16 whose low
    byte is 0). The DVE quantizes the BF16 activations and the FP16 weights to
    MXFP8 E4M3; the PE loads the weights and multiplies; PSUM is dumped."""
    K, M, N = 64, 64, 128
    # Weights: per partition, 16 chunks of [scales word, 4 code words] = 80 words.
    wq = np.zeros((K, 80), dtype=np.uint32)
    for p in range(K):
        for c in range(16):
            sc = [int(rng.integers(124, 131)) for _ in range(4)]
            wq[p, 5 * c] = sc[0] | sc[1] << 8 | sc[2] << 16 | sc[3] << 24
            for j in range(4):  # code word j: 8 codes = one m: [0, c0, 0, c1, 0, c2, 0, c3]
                word = 0
                for lane in range(4):
                    word |= int(rng.integers(0, 16)) << (4 * (2 * lane + 1))
                wq[p, 5 * c + 1 + j] = word
    w16 = np.zeros((K, 4 * M), dtype=np.uint16)
    for p in range(K):
        out = dequant_stream(1, 8, [int(v) for v in wq[p]])
        w16[p] = np.frombuffer(struct.pack("<%dI" % len(out), *out), dtype="<u2")
    wvals = w16.view("<f2").astype(np.float64)  # [p][4m + lane]
    # Activations: BF16 [p][4n + lane] = X[4p + lane][n].
    xf = (rng.standard_normal((K, 4 * N)) * np.exp2(rng.integers(-3, 4, (K, 4 * N)))).astype(
        np.float32)
    x16 = (xf.view(np.uint32) >> 16).astype(np.uint16)
    xvals = (x16.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    # DVE QuantizeMX of both, then the PE's MX matmul.
    xc, xs = reference.mx_quantize(xvals, "e4m3")
    wc, ws = reference.mx_quantize(wvals, "e4m3")
    psum = reference.matmul_fp32(reference.mx_values(wc, ws, "e4m3"),
                                 reference.mx_values(xc, xs, "e4m3"))
    # The unquantized product in float64: W[k][m] = wvals[k // 4][4m + k % 4].
    wk = wvals.reshape(K, M, 4).transpose(0, 2, 1).reshape(4 * K, M)
    xk = xvals.reshape(K, N, 4).transpose(0, 2, 1).reshape(4 * K, N)
    exact = wk.T @ xk
    rel = float(np.linalg.norm(psum.astype(np.float64) - exact) / np.linalg.norm(exact))
    worst = float(np.max(np.abs(psum - exact)) / np.max(np.abs(exact)))
    title = "POOL dequant -> DVE QuantizeMX -> PE MX matmul, ordered only by semaphores (MARIANA)"
    prog_lines = [
        "# K = 64 partitions (256 contraction values), M = 64 weight columns, N = 128.",
        "",
        ".engine pool",
        "",
        "# MXFP4 weights (80 words / partition at +0x1000) -> E5M2 bytes = FP16 weights +0x2000",
        "tensor_dequantize fmt=e2m1_to_e5m2 group=8 channels=64 \\",
        "    src=t3d(sbuf(0, 0x1000), step=[1, 0, 0], num=[80, 1, 1]) \\",
        "    dst=t3d(sbuf(0, 0x2000), step=[1, 0, 0], num=[128, 1, 1]) update=inc(sem1)",
        "",
        ".engine dve",
        "",
        "# BF16 activations +0x0 -> MXFP8 E4M3 x4 words +0x3000, scales +0x3800",
        "quantize_mx channels=64 in_dtype=bf16 out_dtype=fp8_e4m3 \\",
        "    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[512, 1, 1]) \\",
        "    dst=mx1d(data=sbuf(0, 0x3000), scale=sbuf(0, 0x3800), num=128) update=inc(sem2)",
        "# FP16 weights (POOL's output) +0x2000 -> MXFP8 E4M3 x4 words +0x4000, scales +0x4800",
        "quantize_mx channels=64 in_dtype=fp16 out_dtype=fp8_e4m3 \\",
        "    src=t3d(sbuf(0, 0x2000), step=[1, 0, 0], num=[256, 1, 1]) \\",
        "    dst=mx1d(data=sbuf(0, 0x4000), scale=sbuf(0, 0x4800), num=64) \\",
        "    wait=ge(sem1, 1) update=inc(sem2)",
        "",
        ".engine pe",
        "",
        "# stationary MXFP8 weights: K = 64 rows, M = 64 columns",
        "ldweights_mx in_dtype=fp8_e4m3 rows=64 cols=64 \\",
        "    src=mx1d(data=sbuf(0, 0x4000), scale=sbuf(0, 0x4800), num=64) wait=ge(sem2, 2)",
        "# moving MXFP8 activations: N = 128 columns -> PSUM partitions 0..63, 128 FP32 each",
        "matmul_mx in_dtype=fp8_e4m3 rows=64 \\",
        "    src=mx1d(data=sbuf(0, 0x3000), scale=sbuf(0, 0x3800), num=128) \\",
        "    dst=t3d(psum(0, 0x0), step=[1, 0, 0], num=[128, 1, 1])",
    ]
    text = header("mariana", title).replace(
        "Fields of each .raw word are listed above it.",
        "Program text in the mnemonic syntax of docs/ASM.md.") + "\n".join(prog_lines) + "\n"
    files = {"activations.npy": x16, "weights_mxfp4.npy": wq, "expected.npy": psum}
    args = ["program.tpb", "--load sbuf:0:0=activations.npy",
            "--load sbuf:0:%d=weights_mxfp4.npy" % 0x1000,
            "--dump psum:0:0:%dx%d:f32=out.npy" % (M, N)]
    q = [0, 0, 0, 0]
    for part in range(K):  # POOL 512 B, DVE 512 + 256 B of x4 words per partition
        q[part // 32] += 512 + 512 + 256
    for b in range(K // 8):  # scale rows: N / 4... one byte per x4 column
        q[(32 * (b // 4) + b % 4) // 32] += N + M
    expect = {"exit": 0, "stderr": [], "retired": 5, "pool_retired": 1,
              "pool_bytes_read": 4 * 80 * K, "pool_bytes_written": 4 * 128 * K,
              "sbuf_quadrant_bytes_written": q}
    readme = (
        "# POOL dequant -> DVE QuantizeMX -> PE MX matmul (MARIANA)\n\n"
        "The default workload of `make demo` (scripts/demo.sh). Engines are ordered only by "
        "semaphores: POOL dequantizes MXFP4 weights (E2M1 codes interleaved with zero codes, "
        "MX group 8) to E5M2 bytes, which the DVE reads as FP16 weights (an E5M2 byte is the "
        "high byte of an FP16 of the same value); the DVE quantizes the BF16 activations and "
        "those FP16 weights to MXFP8 E4M3 with E8M0 scales (SPEC §4); the PE loads the "
        "weights (`ldweights_mx`, K = 64 partitions = 256 contraction values, M = 64) and "
        "multiplies the activations (`matmul_mx`, N = 128) into PSUM partitions 0..63, which "
        "are dumped as FP32 (`out.npy`, 64 x 128).\n\n"
        "`expected.npy` is computed by `scripts/gen_workloads.py` from the format definitions, "
        "not from the model: the dequant and QuantizeMX references of that script, E4M3 codes "
        "decoded by formula and scaled by 2^(s-127) in FP32, and the k-ascending FP32 "
        "accumulation with one rounding per multiply and per add (SPEC §5).\n\n"
        "Quantization error of the MX result against the unquantized product (the same BF16 "
        "activations and FP16 weights multiplied in float64):\n\n"
        "| measure | value |\n|---|---|\n"
        "| relative Frobenius error, \\|PSUM - W^T X\\| / \\|W^T X\\| | %.4f |\n"
        "| largest absolute error / largest magnitude | %.4f |\n" % (rel, worst))
    return (text, None), files, args, expect, readme


def bf16_rne_bits(f32):
    """FP32 -> BF16 bits, round to nearest even (finite inputs; SPEC §11 tensor_copy)."""
    assert np.all(np.isfinite(f32))
    out = reference.encode_bf16(f32).astype(np.uint16)
    # No value reaches the BF16 overflow range here (it would saturate to 0x7F7F).
    assert np.all((out & 0x7F80) != 0x7F80)
    return out


def hbm_pipeline():
    """HBM -> DMA (4 queues) -> POOL dequant -> DVE QuantizeMX -> PE MX matmul -> DVE
    tensor_copy (PSUM FP32 -> SBUF BF16) -> DMA (2 queues) -> HBM, ordered by semaphores.

    The inputs and the PSUM result are those of `pipeline` (the same generator and seed);
    the output is the PSUM rounded to BF16 (RNE), read back from HBM."""
    (_, _), files, _, _, _ = pe_pipeline(np.random.default_rng(2026))
    x16, wq, psum = files["activations.npy"], files["weights_mxfp4.npy"], files["expected.npy"]
    K, M, N = 64, 64, 128
    out = bf16_rne_bits(psum)
    X, W, O = 0x0, 0x10000, 0x20000  # HBM byte offsets: activations, weights, output
    xb, wb, ob = 4 * N * 2, 80 * 4, N * 2  # bytes per row
    title = ("HBM -> DMA -> POOL dequant -> DVE QuantizeMX -> PE MX matmul -> DVE tensor_copy "
             "-> DMA -> HBM, ordered by semaphores (MARIANA)")
    lines = [
        "# K = 64 partitions (256 contraction values), M = 64 weight columns, N = 128.",
        "# HBM: BF16 activations at 0x%x (%d B / row), MXFP4 weights at 0x%x (%d B / row),"
        % (X, xb, W, wb),
        "# the BF16 result at 0x%x (%d B / row)." % (O, ob),
        "",
        "# Activations in, two queues of 32 rows each -> sem3 = 2",
        ".engine dma0",
        "dma_copy rows=32 row_bytes=%d src=hbm(0x%x, stride=%d) dst=sbuf(0, 0x0) update=inc(sem3)"
        % (xb, X, xb),
        ".engine dma1",
        "dma_copy rows=32 row_bytes=%d src=hbm(0x%x, stride=%d) dst=sbuf(32, 0x0) update=inc(sem3)"
        % (xb, X + 32 * xb, xb),
        "# Weights in, two more queues -> sem4 = 2",
        ".engine dma2",
        "dma_copy rows=32 row_bytes=%d src=hbm(0x%x, stride=%d) dst=sbuf(0, 0x1000) "
        "update=inc(sem4)" % (wb, W, wb),
        ".engine dma3",
        "dma_copy rows=32 row_bytes=%d src=hbm(0x%x, stride=%d) dst=sbuf(32, 0x1000) "
        "update=inc(sem4)" % (wb, W + 32 * wb, wb),
        "",
        ".engine pool",
        "# MXFP4 weights +0x1000 -> E5M2 bytes = FP16 weights +0x2000",
        "tensor_dequantize fmt=e2m1_to_e5m2 group=8 channels=64 \\",
        "    src=t3d(sbuf(0, 0x1000), step=[1, 0, 0], num=[80, 1, 1]) \\",
        "    dst=t3d(sbuf(0, 0x2000), step=[1, 0, 0], num=[128, 1, 1]) wait=ge(sem4, 2) "
        "update=inc(sem1)",
        "",
        ".engine dve",
        "# BF16 activations +0x0 -> MXFP8 E4M3 x4 words +0x3000, scales +0x3800",
        "quantize_mx channels=64 in_dtype=bf16 out_dtype=fp8_e4m3 \\",
        "    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[512, 1, 1]) \\",
        "    dst=mx1d(data=sbuf(0, 0x3000), scale=sbuf(0, 0x3800), num=128) wait=ge(sem3, 2) "
        "update=inc(sem2)",
        "# FP16 weights (POOL's output) +0x2000 -> MXFP8 E4M3 x4 words +0x4000, scales +0x4800",
        "quantize_mx channels=64 in_dtype=fp16 out_dtype=fp8_e4m3 \\",
        "    src=t3d(sbuf(0, 0x2000), step=[1, 0, 0], num=[256, 1, 1]) \\",
        "    dst=mx1d(data=sbuf(0, 0x4000), scale=sbuf(0, 0x4800), num=64) \\",
        "    wait=ge(sem1, 1) update=inc(sem2)",
        "# PSUM evacuation: FP32 results -> BF16 +0x5000 (RNE)",
        "tensor_copy channels=64 in_dtype=fp32 out_dtype=bf16 \\",
        "    src=t3d(psum(0, 0x0), step=[1, 0, 0], num=[128, 1, 1]) \\",
        "    dst=t3d(sbuf(0, 0x5000), step=[1, 0, 0], num=[128, 1, 1]) wait=ge(sem5, 1) "
        "update=inc(sem6)",
        "",
        ".engine pe",
        "ldweights_mx in_dtype=fp8_e4m3 rows=64 cols=64 \\",
        "    src=mx1d(data=sbuf(0, 0x4000), scale=sbuf(0, 0x4800), num=64) wait=ge(sem2, 2)",
        "matmul_mx in_dtype=fp8_e4m3 rows=64 \\",
        "    src=mx1d(data=sbuf(0, 0x3000), scale=sbuf(0, 0x3800), num=128) \\",
        "    dst=t3d(psum(0, 0x0), step=[1, 0, 0], num=[128, 1, 1]) update=inc(sem5)",
        "",
        "# The result out, two queues",
        ".engine dma4",
        "dma_copy rows=32 row_bytes=%d src=sbuf(0, 0x5000) dst=hbm(0x%x, stride=%d) "
        "wait=ge(sem6, 1)" % (ob, O, ob),
        ".engine dma5",
        "dma_copy rows=32 row_bytes=%d src=sbuf(32, 0x5000) dst=hbm(0x%x, stride=%d) "
        "wait=ge(sem6, 1)" % (ob, O + 32 * ob, ob),
    ]
    text = header("mariana", title).replace(
        "Fields of each .raw word are listed above it.",
        "Program text in the mnemonic syntax of docs/ASM.md.") + "\n".join(lines) + "\n"
    files = {"activations.npy": x16, "weights_mxfp4.npy": wq, "expected.npy": out}
    args = ["program.tpb", "--load hbm:0x%x=activations.npy" % X,
            "--load hbm:0x%x=weights_mxfp4.npy" % W,
            "--dump hbm:0x%x:%dx%d:bf16=out.npy" % (O, M, N)]
    q = [0, 0, 0, 0]
    for part in range(K):  # DMA in (activations, weights), POOL, DVE x2, tensor_copy
        q[part // 32] += xb + wb + 512 + 512 + 256 + ob
    for b in range(K // 8):
        q[(32 * (b // 4) + b % 4) // 32] += N + M
    expect = {"exit": 0, "stderr": [], "retired": 12, "pool_retired": 1,
              "pool_bytes_read": 4 * 80 * K, "pool_bytes_written": 4 * 128 * K,
              "sbuf_quadrant_bytes_written": q}
    readme = (
        "# HBM -> DMA -> POOL -> DVE -> PE -> DVE -> DMA -> HBM (MARIANA)\n\n"
        "The `pipeline` workload as a kernel runs it: its inputs start in HBM (`--load hbm:`), "
        "four DMA queues (dma0..dma3) bring the BF16 activations and the MXFP4 weights into "
        "SBUF, POOL dequantizes the weights, the DVE quantizes both to MXFP8, the PE multiplies "
        "into PSUM, the DVE evacuates PSUM with `tensor_copy` (FP32 -> BF16, RNE) and two more "
        "DMA queues (dma4, dma5) write the result back to HBM, dumped as BF16 bits "
        "(`--dump hbm:`, `out.npy`, 64 x 128 u16). Every step waits on the semaphore the step "
        "before it sets.\n\n"
        "`expected.npy` is computed by `scripts/gen_workloads.py` (`hbm_pipeline`), not from "
        "the model: the `pipeline` workload's reference PSUM (format definitions, k-ascending "
        "FP32 accumulation) rounded to BF16 by integer round-to-nearest-even on the FP32 "
        "bits.\n\n"
        "The DMA time is the convention of SPEC §10: 1.3 us from the semaphore to the start "
        "of each descriptor, then bytes / min(38.4 GB/s, the queue's share of the HBM).\n")
    return (text, None), files, args, expect, readme


# ---------------------------------------------------------------------------
# SPEC §18 kernels: each instruction's result by reference.py, the
# convention of docs/CONVENTIONS.md ("Vector instructions"): every operator
# one FP32 rounding, a transcendental in double by the C library then one
# rounding, reductions in ascending index order, BF16 by RNE.

def mnemonic_workload(arch, title, lines):
    text = header(arch, title).replace(
        "Fields of each .raw word are listed above it.",
        "Program text in the mnemonic syntax of docs/ASM.md.") + "\n".join(lines) + "\n"
    return (text, None)


def softmax(arch):
    """Row softmax of x [128, 512] FP32: DVE max, ACT exp with the -max bias
    and the add reduce, DVE reciprocal, POOL multiply (the reciprocal
    broadcast along the row) into BF16; engines ordered by semaphores."""
    rng = np.random.default_rng(1818)
    P, N = 128, 512
    x = (rng.standard_normal((P, N)) * rng.uniform(0.5, 6, (P, 1))).astype(np.float32)
    alu = reference.alu
    nm = alu("multiply", reference.reduce_rows("maximum", x), np.float32(-1))  # DVE
    e = reference.activation_function(                                          # ACT
        "exp", alu("add", alu("multiply", x, np.float32(1)), nm[:, None]))
    rs = alu("reciprocal", reference.reduce_rows("add", e))                      # DVE
    out = bf16_rne_bits(alu("multiply", e, rs[:, None]))                         # POOL
    X, MX, NMX, SUM, RS, E, OUT = 0x0, 0x2000, 0x2004, 0x2008, 0x200C, 0x3000, 0x4000
    t = "step=[1, 0, 0], num=[%d, 1, 1]" % N
    lines = [
        ".engine dve",
        "# the row maximum, negated: the exp's bias",
        "tensor_reduce op=maximum channels=128 out_dtype=fp32 \\",
        "    src=t3d(sbuf(0, %#x), %s) dst=t3d(sbuf(0, %#x))" % (X, t, MX),
        "tensor_scalar op0=multiply operand0=-1.0 channels=128 out_dtype=fp32 \\",
        "    src=t3d(sbuf(0, %#x)) dst=t3d(sbuf(0, %#x)) update=inc(sem1)" % (MX, NMX),
        "",
        ".engine act",
        "# e = exp(x - max), and its row sum in the ACT's reduce registers",
        "activation func=exp scale=1.0 bias=sbuf(0, %#x) bias_dtype=fp32 channels=128 \\" % NMX,
        "    out_dtype=fp32 src=t3d(sbuf(0, %#x), %s) dst=t3d(sbuf(0, %#x), %s) \\"
        % (X, t, E, t),
        "    reduce_op=add reduce_cmd=reset_reduce reduce_dtype=fp32 reduce_res=sbuf(0, %#x) \\"
        % SUM,
        "    wait=ge(sem1, 1) update=inc(sem2)",
        "",
        ".engine dve",
        "reciprocal channels=128 out_dtype=fp32 src=t3d(sbuf(0, %#x)) dst=t3d(sbuf(0, %#x)) \\"
        % (SUM, RS),
        "    wait=ge(sem2, 1) update=inc(sem3)",
        "",
        ".engine pool",
        "# e x (1 / sum): the reciprocal broadcast along the row (step 0), into BF16",
        "tensor_tensor op=multiply channels=128 in_dtype=fp32 in1_dtype=fp32 out_dtype=bf16 \\",
        "    src=t3d(sbuf(0, %#x), %s) src1=t3d(sbuf(0, %#x), step=[0, 0, 0]) \\" % (E, t, RS),
        "    dst=t3d(sbuf(0, %#x), %s) wait=ge(sem3, 1)" % (OUT, t),
    ]
    title = "Row softmax of a [128, 512] FP32 tile into BF16 (%s)" % arch.upper()
    files = {"x.npy": x, "expected.npy": out}
    args = ["program.tpb", "--load sbuf:0:%d=x.npy" % X,
            "--dump sbuf:0:%d:%dx%d:u16=out.npy" % (OUT, P, N)]
    per_part = 4 + 4 + 4 * N + 4 + 4 + 2 * N  # every SBUF byte written, per partition
    expect = {"exit": 0, "stderr": [], "retired": 5, "pool_retired": 1,
              "pool_bytes_read": 4 * N * P, "pool_bytes_written": 2 * N * P,
              "sbuf_quadrant_bytes_written": [32 * per_part] * 4}
    fold = (" On MAVERICK the ACT's queue runs on the DVE (seed 003), after the DVE's own "
            "instructions in line order." if arch == "maverick" else "")
    readme = (
        "# %s\n\nsoftmax(x) = exp(x - max) / sum exp(x - max) per partition row: the DVE's "
        "tensor_reduce (max) and tensor_scalar (negate), the ACT's activation (exp with the "
        "per-partition bias, its add reduce giving the row sums), the DVE's reciprocal, and "
        "the POOL's tensor_tensor multiply with the reciprocal broadcast along the row "
        "(step 0), written as BF16 (`out.npy`, u16 codes).%s\n\n"
        "`expected.npy` is computed by `scripts/gen_workloads.py` (`softmax`), not from the "
        "model: NumPy FP32 arithmetic (one rounding per operator), exp in double by the C "
        "library then rounded once, the row sum in ascending order, BF16 by RNE from the FP32 "
        "bits (SPEC §18, docs/CONVENTIONS.md).\n" % (title, fold))
    return mnemonic_workload(arch, title, lines), files, args, expect, readme


def layernorm():
    """LayerNorm of x [128, 384] FP32 with gamma and beta (CAYMAN): DVE
    bn_stats / bn_aggr, var + eps, POOL rsqrt, DVE -mean x rstd, ACT
    x x rstd + (-mean x rstd), DVE gamma and beta into BF16."""
    rng = np.random.default_rng(1819)
    P, N = 128, 384
    x = (rng.standard_normal((P, N)) * rng.uniform(0.1, 8, (P, 1)) +
         rng.uniform(-4, 4, (P, 1))).astype(np.float32)
    g = np.broadcast_to(rng.uniform(0.5, 1.5, N).astype(np.float32), (P, N)).copy()
    b = np.broadcast_to(rng.uniform(-1, 1, N).astype(np.float32), (P, N)).copy()
    alu, f = reference.alu, np.float32
    mean, var = reference.bn_aggr_rows(reference.bn_stats_rows(x)).T                # DVE
    rstd = alu("rsqrt", alu("add", var, f(1e-5)))                                 # DVE, POOL
    nb = alu("multiply", alu("multiply", mean, rstd), f(-1))                      # DVE
    y = reference.activation_function(                                            # ACT
        "copy", alu("add", alu("multiply", x, rstd[:, None]), nb[:, None]))
    out = bf16_rne_bits(alu("add", alu("multiply", y, g), b))                     # DVE
    X, S, MV, VE, RSTD, NB, Y, G, B, Z, OUT = (0x0, 0x1000, 0x1020, 0x1028, 0x102C, 0x1030,
                                               0x2000, 0x3000, 0x4000, 0x5000, 0x6000)
    t = "step=[1, 0, 0], num=[%d, 1, 1]" % N
    lines = [
        ".engine dve",
        "# mean and variance per partition row",
        "bn_stats channels=128 out_dtype=fp32 src=t3d(sbuf(0, %#x), %s) \\" % (X, t),
        "    dst=t3d(sbuf(0, %#x), num=[6, 1, 1])" % S,
        "bn_aggr channels=128 out_dtype=fp32 src=t3d(sbuf(0, %#x), num=[6, 1, 1]) \\" % S,
        "    dst=t3d(sbuf(0, %#x), num=[2, 1, 1])" % MV,
        "tensor_scalar op0=add operand0=1e-05 channels=128 out_dtype=fp32 \\",
        "    src=t3d(sbuf(0, %#x)) dst=t3d(sbuf(0, %#x)) update=inc(sem1)" % (MV + 4, VE),
        "",
        ".engine pool",
        "# rstd = 1 / sqrt(var + eps) (GpSimd runs tensor_scalar's rsqrt)",
        "tensor_scalar op0=rsqrt channels=128 out_dtype=fp32 src=t3d(sbuf(0, %#x)) \\" % VE,
        "    dst=t3d(sbuf(0, %#x)) wait=ge(sem1, 1) update=inc(sem2)" % RSTD,
        "",
        ".engine dve",
        "# -mean x rstd: the activation's bias",
        "tensor_scalar op0=multiply operand0=sbuf(0, %#x) op1=multiply operand1=-1.0 \\" % RSTD,
        "    channels=128 out_dtype=fp32 src=t3d(sbuf(0, %#x)) dst=t3d(sbuf(0, %#x)) \\"
        % (MV, NB),
        "    wait=ge(sem2, 1) update=inc(sem3)",
        "",
        ".engine act",
        "# y = x x rstd + (-mean x rstd)",
        "activation func=copy scale=sbuf(0, %#x) bias=sbuf(0, %#x) bias_dtype=fp32 \\"
        % (RSTD, NB),
        "    channels=128 out_dtype=fp32 src=t3d(sbuf(0, %#x), %s) \\" % (X, t),
        "    dst=t3d(sbuf(0, %#x), %s) wait=ge(sem3, 1) update=inc(sem4)" % (Y, t),
        "",
        ".engine dve",
        "tensor_tensor op=multiply channels=128 out_dtype=fp32 src=t3d(sbuf(0, %#x), %s) \\"
        % (Y, t),
        "    src1=t3d(sbuf(0, %#x)) dst=t3d(sbuf(0, %#x), %s) wait=ge(sem4, 1)" % (G, Z, t),
        "tensor_tensor op=add channels=128 out_dtype=bf16 src=t3d(sbuf(0, %#x), %s) \\" % (Z, t),
        "    src1=t3d(sbuf(0, %#x)) dst=t3d(sbuf(0, %#x), %s)" % (B, OUT, t),
    ]
    title = "LayerNorm of a [128, 384] FP32 tile with gamma and beta into BF16 (CAYMAN)"
    files = {"x.npy": x, "gamma.npy": g, "beta.npy": b, "expected.npy": out}
    args = ["program.tpb", "--load sbuf:0:%d=x.npy" % X, "--load sbuf:0:%d=gamma.npy" % G,
            "--load sbuf:0:%d=beta.npy" % B,
            "--dump sbuf:0:%d:%dx%d:u16=out.npy" % (OUT, P, N)]
    per_part = 24 + 8 + 4 + 4 + 4 + 4 * N + 4 * N + 2 * N
    expect = {"exit": 0, "stderr": [], "retired": 8, "pool_retired": 1,
              "pool_bytes_read": 4 * P, "pool_bytes_written": 4 * P,
              "sbuf_quadrant_bytes_written": [32 * per_part] * 4}
    readme = (
        "# %s\n\ny = (x - mean) / sqrt(var + 1e-5) x gamma + beta per partition row: the "
        "DVE's bn_stats and bn_aggr (mean and variance), tensor_scalar (+ eps), the POOL's "
        "tensor_scalar rsqrt, the DVE's -mean x rstd, the ACT's activation (copy with the "
        "per-partition scale rstd and bias -mean x rstd), the DVE's tensor_tensor multiply "
        "(gamma) and add (beta) into BF16 (`out.npy`, u16 codes); engines ordered by "
        "semaphores.\n\n"
        "`expected.npy` is computed by `scripts/gen_workloads.py` (`layernorm`), not from the "
        "model: NumPy FP32 arithmetic, one rounding per operator, bn_stats / bn_aggr by the "
        "formulas of docs/CONVENTIONS.md (sums ascending), 1 / sqrt in double then one "
        "rounding, BF16 by RNE from the FP32 bits (SPEC §18).\n" % title)
    return mnemonic_workload("cayman", title, lines), files, args, expect, readme


def invalid():
    # FP6 with group 8 (counts in the 8:5 ratio): fails has_valid_dequant_fmt_group_size.
    i = Dequant(4, 8, 1, T3(0, 0, [1], [5]), T3(0, 0x100, [1], [8]))
    text = prog("mariana", "Invalid: FP6 E2M3 with group_size 8 (FP6 can never be MX, "
                "seed 000 §5)", [(i, "inst 0: FP6 group 8")])
    return text, {}, ["program.tpb"], {"exit": 2,
                                       "stderr": ["has_valid_dequant_fmt_group_size"],
                                       "retired": 0}


def invalid_addr():
    # CAYMAN SBUF is 224 KiB per partition: a dst ending past 0x38000 is an address error.
    i = Dequant(1, 0, 1, T3(0, 0, [1], [4]), T3(0, 0x38000 - 16, [1], [8]))
    text = prog("cayman", "Invalid: dst runs past the 224 KiB CAYMAN partition",
                [(i, "inst 0: dst 0x37ff0 .. 0x38010")])
    return text, {}, ["program.tpb"], {"exit": 2, "stderr": ["tensor3d_valid"],
                                       "retired": 0}


def runtime_addr():
    # The src address rides engine register r3 (ADDR4 top byte 0x80, SPEC §2), so no static
    # check can see it: r3 = p0 +0x3fff8 and 4 words run past the 256 KiB MARIANA partition.
    src = T3(0, 0, [1], [4])
    src.raw_start = 0x80000003
    i = Dequant(1, 0, 1, src, T3(0, 0x100, [1], [8]))
    text = prog("mariana", "Runtime address error: src from register r3 runs past the "
                "256 KiB partition", [(i, "inst 0: src = r3 (0x3fff8 .. 0x40008)")],
                pre=".reg pool r3 = 0x0003fff8\n")
    return text, {}, ["program.tpb"], {"exit": 2, "stderr": ["address"], "retired": 0}


def deadlock():
    i = Dequant(1, 0, 1, T3(0, 0, [1], [4]), T3(0, 0x100, [1], [8]), wait=(1, 5), sem_value=1)
    text = prog("mariana", "Deadlock: waits on sem[5] == 1, which nothing sets",
                [(i, "inst 0: waits sem[5] == 1")])
    return text, {}, ["program.tpb"], {"exit": 3, "stderr": [], "retired": 0}


def write_dir(root, name, text, files, args, expect, readme=None):
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "program.tpb"), "w") as f:
        f.write(text[0])
    if text[1] is not None:
        with open(os.path.join(d, "program.mnemonic.tpb"), "w") as f:
            f.write(text[1])
    for fn, arr in files.items():
        np.save(os.path.join(d, fn), arr)
    with open(os.path.join(d, "cmd.txt"), "w") as f:
        f.write("# tpbsim run arguments, paths relative to this directory\n")
        f.write("\n".join(args) + "\n")
    with open(os.path.join(d, "expect.json"), "w") as f:
        json.dump(expect, f)
        f.write("\n")
    if readme:
        with open(os.path.join(d, "README.md"), "w") as f:
            f.write(readme)


def generate(root):
    rng = np.random.default_rng(20261130)
    listing = []
    if os.path.isdir(root):
        for n in os.listdir(root):
            p = os.path.join(root, n)
            if os.path.isdir(p):
                shutil.rmtree(p)
    os.makedirs(root, exist_ok=True)
    for case in CASES:
        state = rng.bit_generator.state
        for arch in ("cayman", "mariana"):
            rng.bit_generator.state = state  # identical inputs on both generations
            text, files, args, expect = build_dequant_workload(case, arch, rng)
            name = "%s_%s" % (case["name"], arch)
            write_dir(root, name, text, files, args, expect)
            listing.append((name, case["insts"][0][1] + " (" + arch + ")"))
    text, files, args, expect = pool_dve_pipeline(np.random.default_rng(7))
    write_dir(root, "demo", text, files, args, expect,
              readme="# POOL -> DVE -> POOL pipeline ordered only by semaphores, MARIANA\n\n"
                     "The default workload of `make demo` (scripts/demo.sh): POOL dequantizes "
                     "FP4 E2M1 to E5M2, the DVE quantizes those bytes (read as FP16) to MXFP8 "
                     "E4M3 with E8M0 scales, POOL dequantizes the DVE's words again. Each "
                     "engine waits on the semaphore the other sets on retire.\n")
    listing.append(("demo", "POOL dequant -> DVE QuantizeMX -> POOL dequant, ordered by "
                            "semaphores (mariana); make demo"))
    text, files, args, expect, readme = pe_pipeline(np.random.default_rng(2026))
    write_dir(root, "pipeline", text, files, args, expect, readme=readme)
    listing.append(("pipeline", "POOL dequant -> DVE QuantizeMX (activations and weights) -> "
                                "PE ldweights_mx / matmul_mx, PSUM dumped as FP32 (mariana); "
                                "make demo"))
    text, files, args, expect, readme = hbm_pipeline()
    write_dir(root, "hbm_pipeline", text, files, args, expect, readme=readme)
    listing.append(("hbm_pipeline", "HBM -> DMA (dma0..dma3) -> POOL -> DVE QuantizeMX -> PE -> "
                                    "DVE tensor_copy PSUM -> BF16 -> DMA (dma4, dma5) -> HBM, "
                                    "dumped with --dump hbm: (mariana); make demo"))
    for name, fn, desc in (
            ("two_stream", lambda: two_stream(np.random.default_rng(11)),
             "three POOL dequants ordered by semaphore waits/updates; inst 1 reads inst 0's "
             "output"),
            ("invalid", invalid, "FP6 with group 8: exit 2, has_valid_dequant_fmt_group_size"),
            ("invalid_addr", invalid_addr,
             "dst past the 224 KiB CAYMAN partition: exit 2, tensor3d_valid"),
            ("runtime_addr", runtime_addr,
             "src address from an engine register past the partition: exit 2, address error"),
            ("deadlock", deadlock, "waits on sem[5] == 1 that nothing sets: exit 3")):
        write_dir(root, name, *fn())
        listing.append((name, desc))
    for name, fn, desc in (
            ("softmax", lambda: softmax("mariana"),
             "row softmax of [128, 512] FP32 into BF16: DVE max, ACT exp with bias and add "
             "reduce, DVE reciprocal, POOL broadcast multiply (mariana; SPEC §18)"),
            ("softmax_maverick", lambda: softmax("maverick"),
             "the same softmax on MAVERICK, where the ACT's queue runs on the DVE (seed 003)"),
            ("layernorm", layernorm,
             "LayerNorm of [128, 384] FP32 with gamma / beta into BF16: DVE bn_stats / bn_aggr, "
             "POOL rsqrt, ACT scale and bias, DVE tensor_tensor (cayman; SPEC §18)")):
        text, files, args, expect, readme = fn()
        write_dir(root, name, text, files, args, expect, readme=readme)
        listing.append((name, desc))
    with open(os.path.join(root, "README.md"), "w") as f:
        f.write(README_HEAD)
        for name, desc in listing:
            f.write("| `%s` | %s |\n" % (name, desc))


README_HEAD = """# Workloads

Generated by `/usr/bin/python3 scripts/gen_workloads.py` (do not edit by hand).
Each directory holds `program.tpb` (`.raw` words with one comment line per
field), `input.npy` (u32 [channels, words]), optionally `background.npy` (u8
bytes preloaded under a destination with gaps), `expected.npy` (u8 [channels,
bytes] of the dumped region), `cmd.txt` (the `tpbsim run` arguments, paths
relative to the directory; `#` lines are comments) and `expect.json` (exit
code and stderr substrings, used by `sc_tests/e2e/test_run_workloads.cpp`).

`expected.npy` is computed from the format definitions by the tests' oracle,
`sc_tests/python/reference.py` (FP4 / INT4 / NF4 / FP6 E2M3 codes decoded from
their field layouts and QLoRA's table, E8M0 scales 2^(s-127) with 0xFF -> NaN
0x7F, RNE into E5M2 / E4M3 from the exact value, ties to the even code,
saturating to +-57344 / +-448) — not from the C++ model.

Run one by hand:

    cd traces/workloads/e2m1_g8_mariana
    ../../../build/tpbsim run $(grep -v '^#' cmd.txt)
    /usr/bin/python3 -c "import numpy as np; print((np.load('out.npy') == np.load('expected.npy')).all())"

| workload | what it exercises |
|---|---|
"""


def check_asm(tpbsim, root):
    """Assembles every program.tpb (and its mnemonic form, if present) and compares the
    bytes with the words the generator packed."""
    bad = 0
    for name in sorted(os.listdir(root)):
        prog = os.path.join(root, name, "program.tpb")
        if not os.path.isfile(prog):
            continue
        want = b"".join(bytes.fromhex(l[4:].replace(" ", "")) for l in open(prog)
                        if l.startswith(".raw"))
        if not want:  # a program written in mnemonics only (pipeline): nothing to compare
            continue
        for src in (prog, os.path.join(root, name, "program.mnemonic.tpb")):
            if not os.path.isfile(src):
                continue
            with tempfile.TemporaryDirectory() as t:
                out = os.path.join(t, "out.bin")
                r = subprocess.run([tpbsim, "asm", src, "-o", out], capture_output=True, text=True)
                got = open(out, "rb").read() if r.returncode == 0 else None
            ok = got == want
            bad += not ok
            print("%-4s %s%s" % ("ok" if ok else "FAIL", src, "" if ok else " " + r.stderr.strip()))
    return bad


if __name__ == "__main__":
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if len(sys.argv) > 2 and sys.argv[1] == "--check-asm":
        sys.exit(1 if check_asm(sys.argv[2], os.path.join(here, "traces", "workloads")) else 0)
    generate(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "traces", "workloads"))
