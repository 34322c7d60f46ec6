#!/usr/bin/python3
"""The v3 kernel-optimization tutorial's FP32 GEMM as generated programs.

TIMING.md [N] (nki/guides/tutorials/kernel-optimization) profiles an FP32
matrix multiplication, lhsT [K, M] x rhs [K, N] with M = 4096, K = N = 8192,
on one NeuronCore-v3, in NKI forms whose engine-active figures it publishes:

  tiled    a load of both tiles before every nc_matmul (the k loop inside
           m, n): TensorE active 87.28%, DMA 99.93%
  hoisted  the K // 128 lhsT tiles of an M-tile loaded once per m, the rhs
           tiles of an N-tile once per n: TensorE 99.85%, DMA 99.73%

Until the NKI front end of SPEC §17 runs the tutorial's kernels themselves,
this script writes the same instruction streams by hand, as that front end
lowers them (docs/KERNELS.md "The v3 tutorial GEMM"), on cayman (v3): every
nc_matmul an LDWEIGHTS of the 128 x 128 lhsT tile and a plain MATMUL of the
128 x 512 rhs tile accumulating into one PSUM bank (FP32 inputs), a
tensor_copy PSUM -> SBUF on the Vector engine and a store per output tile.
Tiles made inside a loop body are double-buffered
(the result tile in PSUM and SBUF too); tiles kept in Python lists are
distinct. The loads alternate, in program order, over the two queues of
the v3 hardware descriptor-generation engines (TIMING.md [B]: two DGE
instances, commanded from the Sync and the Scalar engine; [J]: the queue
follows the trigger engine), dma0 and dma1; the stores go on dma2.

Semaphores, written by hand: every DMA queue counts its transfers on a
semaphore of its own (a queue completes in order), the PE its LDWEIGHTS and
MATMULs on two more, the Vector engine its copies on one. An instruction
waits on one semaphore; where one must wait on two, a nop (the wait-only
instruction, docs/ASM.md) before it takes the second wait, as the NKI front
end does: before a MATMUL that starts a new output tile (the copy that
emptied its PSUM bank two tiles before) and before a copy (the store that
emptied its SBUF slot).

Clocks and bandwidths are v3's: cayman's default profile.

  tutorial_gemm.py FORM [--m M] [--n N] [--k K] [-o FILE]    write the program
  tutorial_gemm.py FORM --run TPBSIM [--m M ...] [--timing-only]
                                     run it, print the engine-active figures
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

TILE_K, TILE_M, TILE_N = 128, 128, 512
FP32 = 4
FULL = dict(m=4096, n=8192, k=8192)
# The representative slice the tests run (docs/TIMING.md): 2 of the 32
# M-tiles with all of N and K. The kernel repeats one M-tile's work 32 times;
# only the first loads and the last store stand outside the repetition.
SLICE = dict(m=256, n=8192, k=8192)

ARCH = "cayman"
SBUF_BYTES = 224 << 10  # per partition on v3 (TIMING.md [B])

TILED_DEPTH = 4
LOAD_QUEUES = (0, 1)  # the two hardware DGE queues, in turn
STORE_QUEUE = 2
# Semaphores.
S_Q = {0: 0, 1: 1, 2: 2}  # each DMA queue's transfers
S_LW, S_MM, S_CP = 3, 4, 5


class Program:
    """The instruction streams of one kernel, per engine, with the semaphore
    counts each queue has reached so far."""

    def __init__(self, m, n, k):
        for name, v, t in (("m", m, TILE_M), ("n", n, TILE_N), ("k", k, TILE_K)):
            if v <= 0 or v % t:
                raise ValueError(f"{name} = {v} is not a positive multiple of {t}")
        self.mt, self.nt, self.kt = m // TILE_M, n // TILE_N, k // TILE_K
        self.m, self.n, self.k = m, n, k
        self.lines = {}
        self.count = {q: 0 for q in S_Q}  # transfers issued per DMA queue
        self.next_load = 0
        self.lw = self.mm = self.copies = 0
        # HBM: lhsT [K, M], rhs [K, N], result [M, N], FP32 row-major.
        self.hbm_lhs = 0
        self.hbm_rhs = k * m * FP32
        self.hbm_out = self.hbm_rhs + k * n * FP32

    def emit(self, engine, text):
        self.lines.setdefault(engine, []).append(text)

    def load(self, src_off, row_bytes, stride, dst_off, wait=None):
        """A load of 128 partitions on the next DGE queue: (queue, its count
        once this transfer is done)."""
        q = LOAD_QUEUES[self.next_load % len(LOAD_QUEUES)]
        self.next_load += 1
        w = f" wait=ge(sem{wait[0]}, {wait[1]})" if wait and wait[1] > 0 else ""
        self.emit(f"dma{q}", f"dma_copy rows=128 row_bytes={row_bytes} "
                             f"src=hbm({src_off:#x}, stride={stride}) dst=sbuf(0, {dst_off:#x})"
                             f"{w} update=inc(sem{S_Q[q]})")
        self.count[q] += 1
        return q, self.count[q]

    def load_lhs(self, mi, ki, slot_off, wait):
        src = self.hbm_lhs + (ki * TILE_K * self.m + mi * TILE_M) * FP32
        return self.load(src, TILE_M * FP32, self.m * FP32, slot_off, wait)

    def load_rhs(self, ni, ki, slot_off, wait):
        src = self.hbm_rhs + (ki * TILE_K * self.n + ni * TILE_N) * FP32
        return self.load(src, TILE_N * FP32, self.n * FP32, slot_off, wait)

    def ldweights(self, slot_off, ready):
        self.emit("pe", f"ldweights in_dtype=fp32 rows=128 cols={TILE_M} "
                        f"src=t3d(sbuf(0, {slot_off:#x}), step=[1, 0, 0], num=[{TILE_M}, 1, 1]) "
                        f"wait=ge(sem{S_Q[ready[0]]}, {ready[1]}) update=inc(sem{S_LW})")
        self.lw += 1

    def matmul(self, slot_off, bank, first, wait):
        self.emit("pe", f"matmul in_dtype=fp32 rows=128 acc={0 if first else 1} "
                        f"src=t3d(sbuf(0, {slot_off:#x}), step=[1, 0, 0], num=[{TILE_N}, 1, 1]) "
                        f"dst=t3d(psum(0, {bank * 2048:#x}), step=[1, 0, 0], num=[{TILE_N}, 1, 1]) "
                        f"wait=ge(sem{wait[0]}, {wait[1]}) update=inc(sem{S_MM})")
        self.mm += 1

    def nop(self, engine, wait):
        """The wait-only instruction: `engine`'s next instruction also waits for `wait`."""
        if wait[1] > 0:
            self.emit(engine, f"nop wait=ge(sem{wait[0]}, {wait[1]})")

    def text(self):
        out = [f".arch {ARCH}"]
        for engine in ["pe", "dve"] + [f"dma{q}" for q in sorted(S_Q)]:
            if engine in self.lines:
                out.append(f".engine {engine}")
                out += self.lines[engine]
        return "\n".join(out) + "\n"


def output_tile(p, b, mi, ni, res_base):
    """The end of output tile b = (mi, ni): its copy out of PSUM bank b % 2
    into SBUF slot b % 2 (after the store that emptied the slot) and its
    store."""
    slot = res_base + (b % 2) * TILE_N * FP32
    p.nop("dve", (S_Q[STORE_QUEUE], b - 1))  # store b - 2 done
    p.emit("dve", f"tensor_copy channels=128 in_dtype=fp32 out_dtype=fp32 "
                  f"src=t3d(psum(0, {(b % 2) * 2048:#x}), step=[1, 0, 0], num=[{TILE_N}, 1, 1]) "
                  f"dst=t3d(sbuf(0, {slot:#x}), step=[1, 0, 0], num=[{TILE_N}, 1, 1]) "
                  f"wait=ge(sem{S_MM}, {p.mm}) update=inc(sem{S_CP})")
    p.copies += 1
    dst = p.hbm_out + (mi * TILE_M * p.n + ni * TILE_N) * FP32
    p.emit(f"dma{STORE_QUEUE}", f"dma_copy rows=128 row_bytes={TILE_N * FP32} "
                                f"src=sbuf(0, {slot:#x}) dst=hbm({dst:#x}, stride={p.n * FP32}) "
                                f"wait=ge(sem{S_CP}, {p.copies}) update=inc(sem{S_Q[STORE_QUEUE]})")
    p.count[STORE_QUEUE] += 1


def tiled(m, n, k, depth=None):
    """The tutorial's tiled kernel: for m, for n, for k: load lhsT[k, m] and
    rhs[k, n], nc_matmul into the PSUM tile; copy it out and store it. The
    tiles of the k loop body rotate through `depth` buffers each."""
    depth = depth or TILED_DEPTH
    p = Program(m, n, k)
    lhs_base, rhs_base = 0, depth * TILE_M * FP32
    res_base = rhs_base + depth * TILE_N * FP32
    lw_of, mm_of, slots = [], [], []  # per matmul: (queue, count) of its tiles, their slots
    for mi in range(p.mt):
        for ni in range(p.nt):
            for ki in range(p.kt):
                i = len(lw_of)
                # Slot i % depth, free once matmul i - depth has read it (its
                # LDWEIGHTS, its MATMUL).
                slots.append((lhs_base + (i % depth) * TILE_M * FP32,
                              rhs_base + (i % depth) * TILE_N * FP32))
                lw_of.append(p.load_lhs(mi, ki, slots[i][0], (S_LW, i - depth + 1)))
                mm_of.append(p.load_rhs(ni, ki, slots[i][1], (S_MM, i - depth + 1)))
    emit_pe_and_dve(p, lw_of, mm_of, slots, res_base)
    return p


def hoisted(m, n, k):
    """The tutorial's hoisted-load kernel: for m: load every lhsT[k, m]; for
    n: load every rhs[k, n], then the K // 128 matmuls; copy out, store."""
    p = Program(m, n, k)
    lhs_base = 0
    rhs_base = p.kt * TILE_M * FP32
    res_base = rhs_base + p.kt * TILE_N * FP32
    if res_base + 2 * TILE_N * FP32 > SBUF_BYTES:
        raise ValueError(f"k = {k}: the hoisted tiles need {res_base + 2 * TILE_N * FP32} "
                         "bytes per partition")
    lw_of, mm_of, slots = [], [], []
    lhs_ready = []
    for mi in range(p.mt):
        # Slot ki, free once the last matmul of the previous M-tile that read
        # it has loaded it (its LDWEIGHTS: the matmul index of (mi - 1, last n, ki)).
        lhs_ready = [p.load_lhs(mi, ki, lhs_base + ki * TILE_M * FP32,
                                (S_LW, ((mi - 1) * p.nt + p.nt - 1) * p.kt + ki + 1 if mi else 0))
                     for ki in range(p.kt)]
        for ni in range(p.nt):
            b = mi * p.nt + ni
            for ki in range(p.kt):
                # Slot ki, free once matmul (b - 1, ki) has read it.
                mm_of.append(p.load_rhs(ni, ki, rhs_base + ki * TILE_N * FP32,
                                        (S_MM, (b - 1) * p.kt + ki + 1 if b else 0)))
                lw_of.append(lhs_ready[ki])
                slots.append((lhs_base + ki * TILE_M * FP32, rhs_base + ki * TILE_N * FP32))
    emit_pe_and_dve(p, lw_of, mm_of, slots, res_base)
    return p


def emit_pe_and_dve(p, lw_of, mm_of, slots, res_base):
    """The PE's LDWEIGHTS / MATMUL pairs and the Vector engine's copies, in the
    order the kernel issues them."""
    for b in range(p.mt * p.nt):
        mi, ni = divmod(b, p.nt)
        for ki in range(p.kt):
            i = b * p.kt + ki
            p.ldweights(slots[i][0], lw_of[i])
            if ki == 0:
                p.nop("pe", (S_CP, b - 1))  # tile b writes bank b % 2: copy b - 2 done
            p.matmul(slots[i][1], b % 2, ki == 0, (S_Q[mm_of[i][0]], mm_of[i][1]))
        output_tile(p, b, mi, ni, res_base)


FORMS = {"tiled": tiled, "hoisted": hoisted}


def engine_active(stats):
    """{engine: fraction of the run it was active} from a --stats dict."""
    return dict(stats.get("engine_active", {}))


def run(tpbsim, form, m, n, k, timing_only=True, extra=(), workdir=None):
    """Runs the program on `tpbsim`: the --stats dict."""
    prog = FORMS[form](m, n, k).text()
    with tempfile.TemporaryDirectory(dir=workdir) as d:
        d = pathlib.Path(d)
        (d / "p.tpb").write_text(prog)
        args = [tpbsim, "run", str(d / "p.tpb"), "-q", "--stats", str(d / "s.json"), *extra]
        if timing_only:
            args.append("--timing-only")
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"tpbsim failed ({r.returncode}): {r.stderr.strip()}")
        return json.loads((d / "s.json").read_text())


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("form", choices=sorted(FORMS))
    ap.add_argument("--m", type=int, default=SLICE["m"])
    ap.add_argument("--n", type=int, default=SLICE["n"])
    ap.add_argument("--k", type=int, default=SLICE["k"])
    ap.add_argument("--full", action="store_true", help="the tutorial's whole 4096 x 8192 x 8192")
    ap.add_argument("-o", "--out", help="write the program here (default: stdout)")
    ap.add_argument("--run", metavar="TPBSIM", help="run it and print the engine-active figures")
    ap.add_argument("--timing-only", action="store_true")
    a = ap.parse_args()
    if a.full:
        a.m, a.n, a.k = FULL["m"], FULL["n"], FULL["k"]
    if a.run:
        st = run(os.path.abspath(a.run), a.form, a.m, a.n, a.k, a.timing_only)
        act = engine_active(st)
        print(f"{a.form} {a.m} x {a.n} x {a.k}: {st['simulated_ns'] / 1e3:.1f} us; "
              + ", ".join(f"{e} {100 * v:.2f}%" for e, v in sorted(act.items())))
        return 0
    text = FORMS[a.form](a.m, a.n, a.k).text()
    if a.out:
        pathlib.Path(a.out).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
