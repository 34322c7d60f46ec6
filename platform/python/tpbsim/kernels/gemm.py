"""C = A @ W on the modelled core: tiling, the program, the run and its check
(SPEC §12, docs/KERNELS.md).

Orientation: the PE's stationary operand is a tile of A^T (K rows on the
partitions, up to 128 columns m), the moving operand a tile of W (K rows, up
to 512 columns n), so PSUM[m][n] = C[m][n] and the result leaves PSUM row by
row. One K-tile is 512 contraction values: 128 partitions x 4 lanes of an x4
word (SPEC §5).
"""

import collections
import contextvars
import functools
import itertools
import json
import math
import os
import re
import sys
import time

import numpy as np

from ..core import Core
from ..errors import Deadlock, Error, Fault, InputError
from . import access, quant
from .sched import Schedule

ARCHS = ("mariana", "maverick")
KTILE, MTILE, NTILE, GROUP = 512, 128, 512, 4   # contraction, stationary, moving, PSUM banks
PSUM_BANK, PSUM_BANKS = 2048, 8   # a PSUM partition: 8 banks of 512 FP32 (16 KiB)
ENGINE_SEMS = {"pool": 0, "dve": 1, "pe": 2, "sfu": 3, **{f"dma{q}": 4 + q for q in range(16)}}
UNIT_SCALE = 127                                # E8M0 2^0


class GemmError(InputError):
    """A request the kernel cannot run: the message says why, naming the argument as
    the caller wrote it (``a``, ``w_layout=`` from Python, ``--a`` on the command
    line). A tpbsim.InputError (and so a ValueError); exit 1 on the command line."""


# Whether messages name the command line's flags (python3 -m tpbsim.kernels sets
# it) or run()'s Python arguments (the default).
_CLI = contextvars.ContextVar("tpbsim_kernels_cli", default=False)
_NO_VALUE = object()


def arg(name, value=_NO_VALUE, r=True):
    """An argument as a message names it: ``--name VALUE`` on the command line,
    ``name=VALUE`` from Python (``r``: the value's repr, else its str)."""
    if _CLI.get():
        flag = "--" + name.replace("_", "-")
        return flag if value is _NO_VALUE else f"{flag} {value!r}" if r else f"{flag} {value}"
    return name if value is _NO_VALUE else f"{name}={value!r}"


def _ceil(a, b):
    return -(-a // b)


def _c64(nbytes):
    """A Layout.take of `nbytes`: whole 64-byte lines."""
    return _ceil(int(math.ceil(nbytes)), 64) * 64


def _tiles(total, size):
    """The tile sizes of `total` in tiles of `size`: [(count, size)], the last
    tile short when `size` does not divide `total`."""
    full, last = divmod(total, size)
    return ([(full, size)] if full else []) + ([(1, last)] if last else [])


def size_text(nbytes):
    """A size for a message: GiB, MiB or KiB with the exact bytes, bytes when small."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.2f} {unit} ({nbytes} bytes)"
    return f"{nbytes} bytes"


def _check_int(name, v):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise GemmError(f"{arg(name, v)}: must be a positive integer, not "
                        f"{type(v).__name__}")
    if v < 1:
        raise GemmError(f"{arg(name, v)}: must be a positive integer")
    return int(v)


class Plan:
    """The tiling of one GEMM (all sizes after padding). The counts and sizes are
    arithmetic on the shape; the tile lists (kt, mt, nt, groups) are made when
    first used, after the sizes were checked (check_sizes)."""

    def __init__(self, m, k, n, weights, arch, group=GROUP):
        if not isinstance(weights, str) or weights not in quant.WEIGHT_FORMATS:
            raise GemmError(f"{arg('weights', weights)}: not a weight format "
                            f"({'|'.join(quant.WEIGHT_FORMATS)})")
        if not isinstance(arch, str) or arch not in ARCHS:
            why = {"sunda": "SUNDA (v2) has none of the MX instructions",
                   "cayman": "CAYMAN (v3) has no MX matmul and no QuantizeMX"}.get(arch)
            if why:
                raise GemmError(f"{arg('arch', arch, r=False)}: {why}; the MX GEMM runs on mariana "
                                "(LdweightsMX / MatmulMX) or maverick (LDWEIGHTS / MATMUL in MX "
                                "mode)")
            raise GemmError(f"{arg('arch', arch)}: not a generation with an MX GEMM "
                            "(mariana|maverick)")
        m, k, n = _check_int("m", m), _check_int("k", k), _check_int("n", n)
        self.m, self.k, self.n, self.weights, self.arch = m, k, n, weights, arch
        self.spec = quant.WEIGHT_FORMATS[weights]
        self.group = group
        # K: whole groups of 32 partitions (QuantizeMX and the matmul take 32, 64, 96
        # or 128 rows); N: the format's column granule (POOL chunks), even on
        # maverick (the MXTENSOR_V2 column count n0 x n1 with n0, n1 <= 255).
        self.kpad = _ceil(self.k, 128) * 128
        gran = self.spec.get("ncols", 1)
        if arch == "maverick":
            gran = max(gran, 2)
        self.npad = _ceil(self.n, gran) * gran
        self.n_kt, self.n_mt = _ceil(self.kpad, KTILE), _ceil(self.m, MTILE)
        self.n_nt = _ceil(self.npad, NTILE)
        self.n_groups = _ceil(self.n_nt, group)
        # The last panel in panels of one N-tile when A is resident and there are
        # several M-tiles (docs/KERNELS.md "Data placement"): every M-tile of the
        # last panel runs after its last byte lands, so a narrow last panel
        # shortens the tail; the extra panels fetch nothing again.
        self.n_head, self.tail_nt = self.n_groups, 0
        if group > 1 and self.n_mt > 1 and self.n_groups > 1 and self.a_ring()[2]:
            self.n_head = self.n_groups - 1
            self.tail_nt = self.n_nt - group * self.n_head
            self.n_groups = self.n_head + self.tail_nt
        self.padding = []
        if self.kpad != self.k:
            self.padding.append(f"K {self.k} -> {self.kpad} (zero rows of W, zero columns of A: "
                                "K-tiles hold 32, 64, 96 or 128 partitions of 4 values)")
        if self.npad != self.n:
            self.padding.append(f"N {self.n} -> {self.npad} (zero columns of W, cut from C: "
                                f"{weights} on {arch} takes columns in multiples of {gran})")

    def regroup(self, group):
        """The same GEMM with `group` N-tiles per weight panel."""
        return Plan(self.m, self.k, self.n, self.weights, self.arch, group)

    @functools.cached_property
    def kt(self):
        """Partitions of each K-tile (128, the last 32, 64, 96 or 128)."""
        return [min(128, (self.kpad - KTILE * t) // 4) for t in range(self.n_kt)]

    @functools.cached_property
    def mt(self):
        return [min(MTILE, self.m - MTILE * t) for t in range(self.n_mt)]

    @functools.cached_property
    def nt(self):
        return [min(NTILE, self.npad - NTILE * t) for t in range(self.n_nt)]

    @functools.cached_property
    def groups(self):
        """The N-tiles of each weight panel."""
        return [list(range(self.group_start(g), self.group_start(g) + self.group_nts(g)))
                for g in range(self.n_groups)]

    def group_start(self, g):
        """The first N-tile of panel g."""
        return g * self.group if g < self.n_head else self.n_head * self.group + g - self.n_head

    def group_nts(self, g):
        """N-tiles of panel g."""
        return min(self.group if g < self.n_head else 1, self.n_nt - self.group_start(g))

    def group_cols(self, g):
        return min(self.group_nts(g) * NTILE, self.npad - NTILE * self.group_start(g))

    def panel_tiles(self):
        """The columns of the weight panels, [(count, columns)] as _tiles gives
        them (closed form: the panels are not listed)."""
        head = self.n_head * self.group * NTILE
        if not self.tail_nt:
            return _tiles(self.npad, self.group * NTILE)
        return _tiles(head, self.group * NTILE) + _tiles(self.npad - head, NTILE)

    # ---------------------------------------------------------------- sizes
    # Each of these is what the Kernel's layouts and program come to, in closed
    # form: checked before a list is made (tests compare them with the Kernel's).

    @property
    def n_full_kt(self):
        """K-tiles of 128 partitions (every one but a shorter last)."""
        return self.kpad // KTILE

    def _chunk(self, per_kt, target):
        """Full K-tiles per transfer: up to `target` bytes per partition."""
        return max(1, min(self.n_full_kt, target // per_kt)) if self.n_full_kt else 1

    def k_chunks(self, per_kt, target):
        """The K-tiles moved together, [(kt0, kt1)]: consecutive full K-tiles up to
        `target` bytes per partition (`per_kt` each), the shorter last one alone
        (a transfer's rows are one count of partitions)."""
        nf, j = self.n_full_kt, self._chunk(per_kt, target)
        out = [(t, min(t + j, nf)) for t in range(0, nf, j)]
        if self.n_kt > nf:
            out.append((nf, self.n_kt))
        return out

    def n_k_chunks(self, per_kt, target):
        """len(k_chunks(...)) in closed form (sizes are checked before lists exist)."""
        return _ceil(self.n_full_kt, self._chunk(per_kt, target)) + (self.n_kt > self.n_full_kt)

    def a_chunks(self, mw):
        """K-tile chunks of one activation transfer, for an M-tile of mw rows."""
        return self.k_chunks(8 * mw, A_CHUNK)

    def a_ring(self):
        """(slot bytes, slots, resident) of the ring the activation transfers land
        in. Resident: A's chunks all fit in A_RESIDENT_BYTES, one slot each,
        loaded once for every weight panel (a decode-shaped GEMM's few rows
        are not fetched again per panel)."""
        slot = max(_c64(8 * mw * max(self._chunk(8 * mw, A_CHUNK), 1))
                   for _, mw in _tiles(self.m, MTILE))
        per_group = sum(c * self.n_k_chunks(8 * mw, A_CHUNK) for c, mw in _tiles(self.m, MTILE))
        if self.n_groups > 1 and per_group * slot <= A_RESIDENT_BYTES:
            return slot, per_group, True
        return slot, max(3, min(A_RING, A_RAW_BYTES // slot)), False

    def a_mx_slots(self):
        """Slots of quantized (MXFP8) activation tiles: with A resident, one per
        (M-tile, K-tile), quantized once for every weight panel; else a ring of
        A_RING, quantized again for each panel."""
        return self.n_mt * self.n_kt if self.a_ring()[2] else A_RING

    def w_chunks(self, rb, g):
        """K-tile chunks of panel g's transfers (rb bytes per K-tile): the last
        panel's last chunk in single K-tiles when each is still W_CHUNK / 2 per
        partition (4 KiB: 97% of the DMA rate, TIMING.md's curve), so that the
        matmuls left after the run's last weight byte lands are one K-tile's."""
        chunks = self.k_chunks(rb, W_CHUNK)
        if g == self.n_groups - 1 and 2 * rb >= W_CHUNK:
            k0, k1 = chunks[-1]
            chunks[-1:] = [(t, t + 1) for t in range(k0, k1)]
        return chunks

    def _w_tail_extra(self, rb):
        """Transfers the last panel's split adds (w_chunks), in closed form: its
        last chunk's K-tiles less one (a shorter last K-tile is a chunk alone)."""
        if self.n_kt > self.n_full_kt or not self.n_full_kt or 2 * rb < W_CHUNK:
            return 0
        j = self._chunk(rb, W_CHUNK)
        return self.n_full_kt - j * (_ceil(self.n_full_kt, j) - 1) - 1

    def _w_layout(self):
        spec = self.spec
        host_scales = spec["store"] == "mx" or (spec["store"] == "packed" and spec["group"] == 0)
        raw_cb = {"mx": spec.get("word_bytes"), "bf16": 8}.get(
            spec["store"], 2.5 if spec.get("group") == 8 else 3)
        unit = spec["store"] == "packed" and spec["group"] == 8
        return host_scales, raw_cb, unit

    def hbm_bytes(self):
        """HBM of the DMA placement: every A tile, every weight panel slice (and
        its scale rows), the unit scales, C."""
        host_scales, raw_cb, unit = self._w_layout()
        nf, kl = self.n_full_kt, self.kpad // 4 - 128 * self.n_full_kt

        def full_and_last(per_partition, scales=False):
            # [partition][K-tile][bytes] of the full K-tiles, then the last's rows
            # (scale rows: one per 8 partitions).
            rows = (16 * nf, kl // 8) if scales else (128 * nf, kl)
            return (_c64(rows[0] * per_partition) if nf else 0) + \
                (_c64(rows[1] * per_partition) if kl else 0)

        a = sum(cm * full_and_last(8 * mw) for cm, mw in _tiles(self.m, MTILE))
        w = sum(cg * (full_and_last(int(raw_cb * cols))
                      + (full_and_last(cols, True) if host_scales else 0))
                for cg, cols in self.panel_tiles())
        return a + w + (_c64(4 * NTILE) if unit else 0) + _c64(4 * self.m * self.npad)

    def hbm_input_bytes(self):
        """The HBM image the host writes (everything but C)."""
        return self.hbm_bytes() - _c64(4 * self.m * self.npad)

    def sbuf_bytes(self, placement, lookahead=2):
        """Bytes per SBUF partition of the placement's buffers."""
        spec = self.spec
        host_scales, raw_cb, unit = self._w_layout()
        if placement == "dma":
            gc = min(self.group * NTILE, self.npad)
            per_kt = ((_c64(4 * gc) if spec["store"] != "mx" else 0)
                      + (_c64(gc) if spec["store"] == "bf16" else 0))
            bank = (_c64(self.n_kt * int(raw_cb * gc))
                    + (_c64(self.n_kt * gc) if host_scales else 0) + self.n_kt * per_kt)
            slot, ra, _ = self.a_ring()
            return (ra * slot + self.a_mx_slots() * (_c64(4 * MTILE) + _c64(MTILE))
                    + (_c64(NTILE) if unit else 0)
                    + min(2, self.n_groups) * bank
                    + (_c64(4 * self.npad) if self.c_merged()
                       else min(C_RING, self.n_groups * self.n_mt) * _c64(4 * gc)))
        a = self.n_kt * sum(c * _c64(8 * mw) for c, mw in _tiles(self.m, MTILE))
        ring = (lookahead + 1) * (_c64(4 * MTILE) + _c64(MTILE))

        def per_nt(nw):
            if spec["store"] == "mx":
                return _c64(spec["word_bytes"] * nw) + _c64(nw)
            if spec["store"] == "bf16":
                return _c64(8 * nw) + _c64(4 * nw) + _c64(nw)
            return _c64(raw_cb * nw) + _c64(4 * nw) + (0 if unit else _c64(nw))

        w = self.n_kt * sum(c * per_nt(nw) for c, nw in _tiles(self.npad, NTILE))
        cout = self.n_mt * sum(c * _c64(4 * cols) for c, cols in self.panel_tiles())
        return a + ring + (_c64(NTILE) if unit else 0) + w + cout

    def c_merged(self):
        """C stored in one transfer after the last copy: one M-tile of at most 8
        rows (its stores all go to DMA engine 0, partitions 0-7, each paying the
        per-transfer cost on the engine that also carries scale rows) whose
        panels each have a C slot of their own."""
        return self.n_mt == 1 and self.m <= 8 and self.n_groups <= C_RING

    def psum_slots(self):
        """Accumulators in the PSUM ring: one per (group, M-tile) in flight, each a
        group's banks (the PE fills one while the DVE empties the others)."""
        return max(1, min(PSUM_BANKS // self.group, self.n_groups * self.n_mt))

    def psum_bytes(self):
        """Bytes per PSUM partition: the ring's slots, the last as wide as a group."""
        gc = min(self.group * NTILE, self.npad)
        return (self.psum_slots() - 1) * self.group * PSUM_BANK + 4 * gc

    def instructions(self, placement):
        """The program's instructions."""
        host_scales, _, unit = self._w_layout()
        units = self.n_groups * self.n_mt * self.n_kt
        widen = self.n_kt * self.n_nt if self.spec["store"] != "mx" else 0
        mm = self.n_mt * self.n_kt * self.n_nt
        if placement != "dma":
            return 2 * units + widen + mm + self.n_groups * self.n_mt
        kl = self.kpad // 4 - 128 * self.n_full_kt
        scale_loads = ((4 if self.n_full_kt else 0) + kl // 32) if host_scales else 0
        a_loads = sum(c * self.n_k_chunks(8 * mw, A_CHUNK) for c, mw in _tiles(self.m, MTILE))
        raw_cb = self._w_layout()[1]
        w_loads = sum(c * self.n_k_chunks(int(raw_cb * cols), W_CHUNK)
                      for c, cols in self.panel_tiles())
        w_loads += self._w_tail_extra(int(raw_cb * self.panel_tiles()[-1][1]))
        a_loads *= 1 if self.a_ring()[2] else self.n_groups
        quantize = self.n_mt * self.n_kt if self.a_ring()[2] else units
        return ((min(4, self.kpad // 128) if unit else 0)
                + w_loads + self.n_groups * scale_loads + a_loads
                + units + quantize + widen + mm
                + self.n_groups * self.n_mt + self.group_nts(self.n_groups - 1) - 1
                + (1 if self.c_merged() else self.n_groups * self.n_mt))


class Layout:
    """A bump allocator of SBUF byte offsets (the same in every partition)."""

    def __init__(self, capacity, base=0):
        self.top, self.capacity, self.regions = base, capacity, []

    def take(self, nbytes, what):
        off = self.top
        self.top = _ceil(off + int(math.ceil(nbytes)), 64) * 64
        self.regions.append((what, off, nbytes))
        return off


# ----------------------------------------------------------------- instructions

def _qmx(kp, src, n, dst, dst_s):
    return (f"quantize_mx channels={kp} in_dtype=bf16 out_dtype=fp8_e4m3 "
            f"src=t3d(sbuf(0, {src:#x}), step=[1, 0, 0], num=[{4 * n}, 1, 1]) "
            f"dst=mx1d(data=sbuf(0, {dst:#x}), scale=sbuf(0, {dst_s:#x}), num={n})")


def _cols(n):
    """MXTENSOR_V2 column count n as [n0, n1] with n0, n1 <= 255."""
    if n <= 255:
        return n, 1
    for n1 in (2, 4):
        if n % n1 == 0 and n // n1 <= 255:
            return n // n1, n1
    raise GemmError(f"{n} moving columns cannot be written as n0 x n1 <= 255 x 255")


def _ldweights(arch, kp, mw, data, scale):
    if arch == "mariana":
        return (f"ldweights_mx in_dtype=fp8_e4m3 rows={kp} cols={mw} "
                f"src=mx1d(data=sbuf(0, {data:#x}), scale=sbuf(0, {scale:#x}), num={mw})")
    return (f"ldweights in_dtype=fp8_e4m3 rows={kp} cols={mw} "
            f"src=mx(data=sbuf(0, {data:#x}), scale=sbuf(0, {scale:#x}), num=[{mw}, 1], "
            f"step_data={mw}, step_scale={mw})")


def _matmul(arch, dtype, kp, nw, acc, data, scale, psum):
    dst = f"dst=t3d(psum(0, {psum:#x}), step=[1, 0, 0], num=[{nw}, 1, 1])"
    if arch == "mariana":
        return (f"matmul_mx in_dtype={dtype} rows={kp} acc={acc} "
                f"src=mx1d(data=sbuf(0, {data:#x}), scale=sbuf(0, {scale:#x}), num={nw}) {dst}")
    n0, n1 = _cols(nw)
    return (f"matmul in_dtype={dtype} rows={kp} acc={acc} "
            f"src=mx(data=sbuf(0, {data:#x}), scale=sbuf(0, {scale:#x}), num=[{n0}, {n1}], "
            f"step_data={n0}, step_scale={n0}) {dst}")


# ----------------------------------------------------------------- the program

# DMA placement (docs/KERNELS.md "Data placement"): the queues of each stream
# (the loads use the first of theirs: one transfer of 128 partitions keeps every
# DMA engine busy; the stores take theirs in turn), the depths of the quantized
# activation ring and of the result ring.
A_QUEUES, W_QUEUES, C_QUEUES = (0,), (6,), tuple(range(10, 16))
A_RING, C_RING = 12, 6
# DMA transfers (docs/KERNELS.md "Data placement"): a DMA engine moves a
# transfer's 8 partitions at its full bandwidth once they hold at least its
# per-transfer cost's worth of bytes (dma.transfer_cost_ns x the engine's
# bandwidth: 3.4 KiB per partition on mariana), so the activations of
# consecutive K-tiles go in one transfer of about A_CHUNK bytes per partition
# (into a ring of A_RAW_BYTES), the weight panel's K-tiles in transfers of
# about W_CHUNK, and a panel's scale rows in one transfer per quadrant.
A_CHUNK, W_CHUNK, A_RAW_BYTES, A_RESIDENT_BYTES = 4096, 8192, 16384, 32768
PLACEMENTS = ("dma", "sbuf")


_DMA_RE = re.compile(r"dma_copy rows=(\d+) row_bytes=(\d+) .*?sbuf\((\d+),")


def _dma(rows, row_bytes, src, dst):
    return f"dma_copy rows={rows} row_bytes={row_bytes} src={src} dst={dst}"


def _hbm(off, stride):
    return f"hbm({off:#x}, stride={stride})"


def _sb(part, off):
    return f"sbuf({part}, {off:#x})"


class Kernel:
    """The program of one GEMM with its data placement.

    Data movement is a layer. `placement="dma"`: A, W and C live in HBM; the
    DMA queues bring A and W into SBUF tile by tile (a ring of activation slots,
    two weight panels) and write C back. `placement="sbuf"`: every input tile is
    written into SBUF before the run (core.write) and C is read from SBUF after
    it. The compute pipeline (POOL widening, DVE QuantizeMX, PE loads and
    matmuls, PSUM accumulation, DVE evacuation) is the same for both.
    """

    def __init__(self, plan, capacity, lookahead=2, placement="dma", hbm_capacity=None,
                 queues=None, hbm_base=0):
        if placement not in PLACEMENTS:
            raise GemmError(f"--placement {placement}: dma | sbuf")
        self.plan = plan
        self.placement = placement
        self.lookahead = lookahead
        # The DMA queues of each stream: activations, weight panels, results.
        self.queues = {"a": A_QUEUES, "w": W_QUEUES, "c": C_QUEUES, **(queues or {})}
        self.sched = Schedule(ENGINE_SEMS)
        self.lay = Layout(capacity)
        # HBM from hbm_base on (a device's cores each their own range, run_cores).
        self.hbm = Layout(hbm_capacity or 2**40, hbm_base)
        self.hbm_base = hbm_base
        spec = plan.spec
        self.host_scales = spec["store"] == "mx" or (spec["store"] == "packed"
                                                     and spec["group"] == 0)
        self.raw_cb = {"mx": spec.get("word_bytes"), "bf16": 8}.get(
            spec["store"], 2.5 if spec.get("group") == 8 else 3)
        if placement == "dma":
            self._place_dma()
            self._build_dma()
        else:
            self._place()
            self._build()

    # ------------------------------------------------------------ host placement
    def _place(self):
        p, lay, spec = self.plan, self.lay, self.plan.spec
        self.abf = {(mt, kt): lay.take(8 * mw, f"A bf16 ({mt},{kt})")
                    for mt, mw in enumerate(p.mt) for kt in range(len(p.kt))}
        self.ra = self.lookahead + 1
        self.aq = [(lay.take(4 * MTILE, f"A mx slot {r}"), lay.take(MTILE, f"A scales slot {r}"))
                   for r in range(self.ra)]
        self.wraw, self.wq, self.ws = {}, {}, {}
        unit = None
        if spec["store"] == "packed" and spec["group"] == 8:
            unit = lay.take(NTILE, "unit E8M0 scales")
        self.unit_scales = unit
        for kt in range(len(p.kt)):
            for nt, nw in enumerate(p.nt):
                key = (kt, nt)
                if spec["store"] == "mx":
                    self.wq[key] = lay.take(spec["word_bytes"] * nw, f"W mx {key}")
                    self.ws[key] = lay.take(nw, f"W scales {key}")
                elif spec["store"] == "bf16":
                    self.wraw[key] = lay.take(8 * nw, f"W bf16 {key}")
                    self.wq[key] = lay.take(4 * nw, f"W mx {key}")
                    self.ws[key] = lay.take(nw, f"W scales {key}")
                else:
                    self.wraw[key] = lay.take(self.raw_cb * nw, f"W packed {key}")
                    self.wq[key] = lay.take(4 * nw, f"W fp8 {key}")
                    self.ws[key] = unit if unit is not None else lay.take(nw, f"W scales {key}")
        self.cout = {(mt, g): lay.take(4 * p.group_cols(g), f"C ({mt},{g})")
                     for mt in range(len(p.mt)) for g in range(len(p.groups))}
        if lay.top > lay.capacity:
            raise GemmError(
                f"the {p.m} x {p.k} x {p.n} GEMM needs {lay.top // 1024} KiB per SBUF partition "
                f"with every tile resident (--placement sbuf), {lay.capacity // 1024} KiB "
                "exist: a smaller shape, or the DMA placement (the default)")

    def _prep_w(self, s, key, kp, raw, wq, ws):
        """The widening of one weight tile (bf16 on the DVE, packed on POOL)."""
        spec, nw = self.plan.spec, self.plan.nt[key[1]]
        if spec["store"] == "bf16":
            s.add("dve", _qmx(kp, raw, nw, wq, ws), "quantize_mx")
        else:
            words = (5 * nw // 8) if spec["group"] == 8 else (3 * nw // 4)
            s.add("pool",
                  f"tensor_dequantize fmt={spec['dq']} group={spec['group']} "
                  f"channels={kp} src=t3d(sbuf(0, {raw:#x}), step=[1, 0, 0], "
                  f"num=[{words}, 1, 1]) dst=t3d(sbuf(0, {wq:#x}), "
                  f"step=[1, 0, 0], num=[{nw}, 1, 1])",
                  "tensor_dequantize")

    def _units(self):
        p = self.plan
        return [(g, mt, kt) for g in range(len(p.groups)) for mt in range(len(p.mt))
                for kt in range(len(p.kt))]

    def _build(self):
        p, s, spec = self.plan, self.sched, self.plan.spec
        units = self._units()
        prepared = set()

        def prep(u):
            g, mt, kt = units[u]
            kp, mw = p.kt[kt], p.mt[mt]
            r = u % self.ra
            aq, aqs = self.aq[r]
            s.add("dve", _qmx(kp, self.abf[(mt, kt)], mw, aq, aqs), "quantize_mx")
            for nt in p.groups[g]:
                key = (kt, nt)
                if key in prepared or spec["store"] == "mx":
                    continue
                prepared.add(key)
                self._prep_w(s, key, kp, self.wraw[key], self.wq[key], self.ws[key])

        la = self.lookahead
        for u in range(min(la, len(units))):
            prep(u)
        for u, (g, mt, kt) in enumerate(units):
            if u + la < len(units):
                prep(u + la)
            kp, mw = p.kt[kt], p.mt[mt]
            aq, aqs = self.aq[u % self.ra]
            s.add("pe", _ldweights(p.arch, kp, mw, aq, aqs), "ldweights")
            gi = g * len(p.mt) + mt
            for j, nt in enumerate(p.groups[g]):
                key = (kt, nt)
                s.add("pe", _matmul(p.arch, spec["pe"], kp, p.nt[nt], int(kt > 0), self.wq[key],
                                    self.ws[key], self._psum(gi, j)), "matmul")
            if kt == len(p.kt) - 1:
                self._evacuate(s, g, mt, gi, self.cout[(mt, g)])
        s.assign_waits()

    def _psum(self, gi, j=0):
        """PSUM offset of N-tile j of the accumulator of (group, M-tile) number gi."""
        p = self.plan
        return (gi % p.psum_slots()) * p.group * PSUM_BANK + PSUM_BANK * j

    def _evacuate(self, s, g, mt, gi, dst, j=None):
        """The DVE copy of an accumulator (its N-tile j alone when given) from PSUM
        into SBUF at dst."""
        p = self.plan
        cols = p.group_cols(g) if j is None else p.nt[p.groups[g][j]]
        j = j or 0
        s.add("dve", f"tensor_copy channels={p.mt[mt]} in_dtype=fp32 out_dtype=fp32 "
              f"src=t3d(psum(0, {self._psum(gi, j):#x}), step=[1, 0, 0], num=[{cols}, 1, 1]) "
              f"dst=t3d(sbuf(0, {dst + 4 * NTILE * j:#x}), step=[1, 0, 0], "
              f"num=[{cols}, 1, 1])", "tensor_copy")

    # ------------------------------------------------------------ DMA placement
    def _place_dma(self):
        """SBUF: a ring of activation slots (BF16 in: one transfer's K-tiles each;
        A_RING MXFP8 slots out), two weight panels (a group's K x group-columns,
        the next group's loading while this one is used), C_RING result slots.
        HBM, for one transfer per chunk of K-tiles: per M-tile A as [partition]
        [K-tile][8 mw] bytes, per group W as [partition][K-tile][row bytes] and
        its scale rows as [quadrant][row][K-tile][columns] (the full K-tiles; the
        shorter last K-tile's rows after them), the unit scales, C row-major."""
        p, lay, spec = self.plan, self.lay, self.plan.spec
        slot, self.ra, self.a_resident = p.a_ring()
        self.araw = [lay.take(slot, f"A bf16 slot {r}") for r in range(self.ra)]
        self.aq = [(lay.take(4 * MTILE, f"A mx slot {r}"), lay.take(MTILE, f"A scales slot {r}"))
                   for r in range(p.a_mx_slots())]
        gc = max(p.group_cols(g) for g in range(len(p.groups)))
        self.unit_scales = None
        if spec["store"] == "packed" and spec["group"] == 8:
            self.unit_scales = lay.take(NTILE, "unit E8M0 scales")
        nkt = len(p.kt)
        self.banks = []
        for b in range(min(2, len(p.groups))):
            # raw: [K-tile][row bytes of the group], sc: [K-tile][columns].
            bank = {"raw": lay.take(nkt * int(self.raw_cb * gc), f"W panel {b} raw"),
                    "sc": lay.take(nkt * gc, f"W panel {b} scales") if self.host_scales
                    else None, "wq": [], "ws": []}
            for kt in range(nkt):
                bank["wq"].append(None if spec["store"] == "mx" else
                                  lay.take(4 * gc, f"W panel {b} fp8 {kt}"))
                bank["ws"].append(lay.take(gc, f"W panel {b} DVE scales {kt}")
                                  if spec["store"] == "bf16" else None)
            self.banks.append(bank)
        ngi = len(p.groups) * len(p.mt)
        self.rc = min(C_RING, ngi)
        if p.c_merged():
            # One store of all of C: the panels' slots side by side, one row.
            row = lay.take(4 * p.npad, "C row")
            self.cslot = [row + 4 * NTILE * p.group_start(g) for g in range(p.n_groups)]
        else:
            self.cslot = [lay.take(4 * gc, f"C slot {c}") for c in range(self.rc)]
        if lay.top > lay.capacity:
            raise GemmError(
                f"the {p.m} x {p.k} x {p.n} GEMM's DMA buffers need {lay.top // 1024} KiB per "
                f"SBUF partition ({len(p.groups[0])} N-tiles per weight panel, K {p.kpad}), "
                f"{lay.capacity // 1024} KiB exist: K is too deep for a double-buffered weight "
                "panel")
        hb, nf = self.hbm, p.n_full_kt
        kl = p.kt[-1] if len(p.kt) > nf else 0

        def full_and_last(per_partition, what, scales=False):
            """(offset of the full K-tiles' block, of the last's rows); scale rows:
            one per 8 partitions."""
            rows = (16 * nf, kl // 8) if scales else (128 * nf, kl)
            full = hb.take(rows[0] * per_partition, f"{what} full K-tiles") if nf else None
            last = hb.take(rows[1] * per_partition, f"{what} last K-tile") if kl else None
            return full, last

        self.h_a = {mt: full_and_last(8 * mw, f"A {mt}") for mt, mw in enumerate(p.mt)}
        self.h_w = {}
        for g in range(len(p.groups)):
            cols = p.group_cols(g)
            d = full_and_last(int(self.raw_cb * cols), f"W {g}")
            sc = full_and_last(cols, f"W scales {g}", True) if self.host_scales else None
            self.h_w[g] = (d, sc)
        self.h_unit = self.hbm.take(4 * NTILE, "unit scales") if self.unit_scales is not None \
            else None
        self.h_in_end = self.hbm.top
        self.h_c = self.hbm.take(4 * p.m * p.npad, "C")
        if hb.top > hb.capacity:
            raise GemmError(
                f"the {p.m} x {p.k} x {p.n} GEMM needs {hb.top / 2**30:.2f} GiB of HBM (A, W "
                f"and C in their tiled layouts), the core has {hb.capacity / 2**30:.2f} GiB")

    def _rb(self, g):
        """Bytes per partition of one K-tile of group g's raw weights."""
        return int(self.raw_cb * self.plan.group_cols(g))

    def _tile_w(self, g, j, kt):
        """(data, scales) SBUF offsets of weight tile j of group g, K-tile kt."""
        p, spec = self.plan, self.plan.spec
        bank, cols = self.banks[g % 2], p.group_cols(g)
        if spec["store"] == "mx":
            wq = bank["raw"] + kt * self._rb(g) + spec["word_bytes"] * NTILE * j
        else:
            wq = bank["wq"][kt] + 4 * NTILE * j
        if self.host_scales:
            ws = bank["sc"] + kt * cols + NTILE * j
        elif spec["store"] == "bf16":
            ws = bank["ws"][kt] + NTILE * j
        else:
            ws = self.unit_scales
        return wq, ws

    def _aq(self, u):
        """(data, scales) SBUF offsets of unit u's quantized activation tile."""
        _, mt, kt = self.units[u]
        return self.aq[mt * self.plan.n_kt + kt if self.a_resident else u % A_RING]

    def _a_src(self, mt, kt0):
        """(HBM offset, stride) of A rows of M-tile mt from K-tile kt0 on."""
        p = self.plan
        full, last = self.h_a[mt]
        per = 8 * p.mt[mt]
        if kt0 < p.n_full_kt:
            return full + kt0 * per, p.n_full_kt * per
        return last, per

    def _build_dma(self):
        p, s, spec = self.plan, self.sched, self.plan.spec
        units = self.units = self._units()
        nmt = len(p.mt)
        # The C stores take the result queues in turn (each waits for its
        # evacuation); the loads keep to one queue each (below).
        c_queues = itertools.cycle(f"dma{q}" for q in self.queues["c"])

        # The activation transfers: one per chunk of K-tiles of a (group, M-tile).
        # Resident A (Plan.a_ring): the first panel's loads serve every panel.
        achunks, chunk_of, first = [], [], {}
        for g, mt, kt in units:
            for k0, k1 in p.a_chunks(p.mt[mt]):
                if k0 <= kt < k1:
                    if self.a_resident and (mt, k0) in first:
                        chunk_of.append(first[(mt, k0)])
                    else:
                        if kt == k0:
                            achunks.append((g, mt, k0, k1))
                            first[(mt, k0)] = len(achunks) - 1
                        chunk_of.append(len(achunks) - 1)
                    break
        self.n_a_loads = len(achunks)
        loaded = set()

        def load_panel(g, before=None):
            """The weight panel of group g into bank g % 2, once: its K-tiles in
            transfers of about W_CHUNK bytes per partition, its scale rows in one
            transfer per quadrant (4 partitions) for the full K-tiles and one for
            the last. Every panel on one queue: each transfer of 128 partitions
            keeps the 16 DMA engines busy alone, and one queue lands the K-tiles
            in order, the panels one after another (the PE starts on the first
            K-tile while the rest stream in; a second queue would share the
            engines and land both panels late)."""
            if g in loaded:
                return
            loaded.add(g)
            bank, cols, rb, nf = self.banks[g % 2], p.group_cols(g), self._rb(g), p.n_full_kt
            (hd, hdl), hsc = self.h_w[g]
            for k0, k1 in p.w_chunks(rb, g):
                if before:
                    before(k1)
                kp, q = p.kt[k0], f"dma{self.queues['w'][0]}"
                src = _hbm(hd + k0 * rb, nf * rb) if k0 < nf else _hbm(hdl, rb)
                s.add(q, _dma(kp, (k1 - k0) * rb, src, _sb(0, bank["raw"] + k0 * rb)),
                      "dma_copy")
                if not self.host_scales:
                    continue
                hs, hsl = hsc
                # The scale rows go with the first transfer of their K-tiles.
                if k0 == 0 and nf:
                    for q4 in range(4):
                        s.add(q, _dma(4, nf * cols, _hbm(hs + 4 * q4 * nf * cols, nf * cols),
                                      _sb(32 * q4, bank["sc"])), "dma_copy")
                if k0 == nf:
                    for q4 in range(kp // 32):
                        s.add(q, _dma(4, cols, _hbm(hsl + 4 * q4 * cols, cols),
                                      _sb(32 * q4, bank["sc"] + nf * cols)), "dma_copy")

        def load_a(ci):
            g, mt, k0, k1 = achunks[ci]
            kp, mw = p.kt[k0], p.mt[mt]
            src, stride = self._a_src(mt, k0)
            # Resident A goes on the weight queue, in the order the PE needs it
            # (below); a ring's loads wait for their slot, on queues of their own.
            q = f"dma{self.queues['w'][0]}" if self.a_resident else f"dma{self.queues['a'][0]}"
            s.add(q, _dma(kp, 8 * mw * (k1 - k0), _hbm(src, stride),
                       _sb(0, self.araw[ci % self.ra])), "dma_copy")

        prepared = set()

        def prep(u):
            g, mt, kt = units[u]
            kp, mw = p.kt[kt], p.mt[mt]
            ci = chunk_of[u]
            araw = self.araw[ci % self.ra] + 8 * mw * (kt - achunks[ci][2])
            if g == 0 or not self.a_resident:
                s.add("dve", _qmx(kp, araw, mw, *self._aq(u)), "quantize_mx")
            if spec["store"] == "mx":
                return
            # The widening reads the group's panel: its load comes first.
            load_panel(g)
            raw = self.banks[g % 2]["raw"] + kt * self._rb(g)
            for j, nt in enumerate(p.groups[g]):
                if (kt, nt) in prepared:
                    continue
                prepared.add((kt, nt))
                wq, ws = self._tile_w(g, j, kt)
                self._prep_w(s, (kt, nt), kp, raw + int(self.raw_cb * NTILE * j), wq, ws)

        la = self.lookahead
        # Activation chunks in flight ahead of the one in use: the ring holds
        # them, the one in use and the one just left (whose slot the next load
        # reuses once its QuantizeMX ran).
        ahead = len(achunks) if self.a_resident else max(1, self.ra - 2)
        nprep, nload = 0, 0

        def prep_through(last, group):
            """Prepares the units up to `last` that belong to groups up to `group`:
            the panel of group g + 2 goes into the bank group g reads, so no work
            of it may come before group g's last matmul."""
            nonlocal nprep
            while nprep < len(units) and nprep <= last and units[nprep][0] <= group:
                prep(nprep)
                nprep += 1

        def load_a_through(ci):
            nonlocal nload
            while nload <= min(ci, len(achunks) - 1):
                load_a(nload)
                nload += 1

        if self.unit_scales is not None:
            # The scale rows of the deepest K-tile (SPEC §4: 4 per 32 partitions).
            for q4 in range(max(p.kt) // 32):
                s.add(f"dma{self.queues['w'][0]}", _dma(4, NTILE, _hbm(self.h_unit, NTILE),
                                                _sb(32 * q4, self.unit_scales)), "dma_copy")
        if self.a_resident:
            # One queue, in the order of first use: the first M-tile's A chunk
            # before the weight K-tiles that use it, then the rest of A (the
            # queue runs ahead freely: nothing of it waits).
            def a_before(kt_end):
                while nload < len(achunks) and achunks[nload][1] == 0 and \
                        achunks[nload][2] < kt_end:
                    load_a_through(nload)
            load_panel(0, a_before)
            load_a_through(len(achunks) - 1)
        else:
            load_panel(0)
        load_a_through(ahead)
        prep_through(la - 1, 1)
        store = {}   # C slot -> the op of the store that last read it
        for u, (g, mt, kt) in enumerate(units):
            load_a_through(chunk_of[u] + ahead)
            if mt == min(1, nmt - 1) and kt == 0 and g + 1 < len(p.groups):
                # The next panel streams in while this one is used (from the second
                # M-tile on, not competing with this panel's own loads).
                load_panel(g + 1)
            prep_through(u + la, g + 1)
            kp, mw = p.kt[kt], p.mt[mt]
            aq, aqs = self._aq(u)
            gi = g * nmt + mt
            c = gi % self.rc
            # The result slot is free again once its previous store retired: the
            # M-tile's first ldweights takes that wait, so that the evacuation
            # into the slot (which waits for the PE) needs no second one.
            after = [store[c]] if kt == 0 and c in store else []
            s.add("pe", _ldweights(p.arch, kp, mw, aq, aqs), "ldweights", after=after)
            for j, nt in enumerate(p.groups[g]):
                wq, ws = self._tile_w(g, j, kt)
                s.add("pe", _matmul(p.arch, spec["pe"], kp, p.nt[nt], int(kt > 0), wq, ws,
                                    self._psum(gi, j)), "matmul")
            if kt == len(p.kt) - 1:
                # The last accumulator is copied by N-tile, each as its last matmul
                # retires (the run's tail is one N-tile's copy, not the panel's).
                last = u == len(units) - 1
                for j in range(len(p.groups[g])) if last else (None,):
                    self._evacuate(s, g, mt, gi, self.cslot[c], j)
                cols, n0 = p.group_cols(g), NTILE * p.groups[g][0]
                if p.c_merged():
                    # C's panels side by side in the slots: one store of all of C.
                    if not last:
                        continue
                    c, cols, n0 = 0, p.npad, 0
                store[c] = s.add(next(c_queues),
                                 _dma(mw, 4 * cols, _sb(0, self.cslot[c]),
                                      _hbm(self.h_c + 4 * (MTILE * mt * p.npad + n0), 4 * p.npad)),
                                 "dma_copy")
        s.assign_waits()

    def dma_engine_bytes(self, engines):
        """Bytes each of the core's `engines` DMA engines carries (SPEC §10: a
        transfer is split by SBUF partition, engine e taking the partitions
        e x 128 / engines on), from the program's transfers."""
        per = [0] * engines
        width = 128 // engines
        for op in self.sched.ops:
            m = _DMA_RE.match(op.text) if op.engine.startswith("dma") else None
            if m:
                rows, row_bytes, part = (int(x) for x in m.groups())
                for q in range(part, part + rows):
                    per[q // width] += row_bytes
        return per

    def host_accesses(self):
        """(writes, reads): the bytes the host writes before the run and reads after
        it, as access.verify takes them."""
        p = self.plan
        if self.placement == "dma":
            return ([("hbm", access.hbm_rect(self.hbm_base, self.h_in_end))],
                    [("hbm", access.hbm_rect(self.h_c, self.h_c + 4 * p.m * p.npad))])
        reads = [("sbuf", access.rect(0, p.mt[mt], off, off + 4 * p.group_cols(g)))
                 for (mt, g), off in self.cout.items()]
        return [("sbuf", access.rect(0, 128, 0, self.lay.top))], reads

    def verify(self, text):
        """The program text checked against its own accesses (access.verify): no
        race, no read of bytes nothing wrote, no write nothing reads."""
        writes, reads = self.host_accesses()
        return access.verify(text, writes, reads)

    def program(self, drop_wait=None):
        p = self.plan
        dma = ", dma queue q sem(4 + q)" if self.placement == "dma" else ""
        head = [f"C = A @ W: M {p.m}, K {p.k}, N {p.n}, weights {p.weights}, act bf16, {p.arch}",
                "generated by python3 -m tpbsim.kernels gemm (docs/KERNELS.md); every "
                f"instruction increments its engine's semaphore (pool sem0, dve sem1, pe sem2{dma})"]
        head += [f"padding: {x}" for x in p.padding]
        return self.sched.emit(p.arch, drop_wait=drop_wait, header=head)

    # ------------------------------------------------------------ the data
    def _a_tiles(self, a_bits):
        """{(mt, kt): [kp][8 mw] uint8}: A's BF16 codes in the DVE's source layout."""
        p = self.plan
        out = {}
        for mt, mw in enumerate(p.mt):
            rows = a_bits[MTILE * mt:MTILE * mt + mw]
            for kt, kp in enumerate(p.kt):
                sub = rows[:, KTILE * kt:KTILE * kt + 4 * kp].reshape(mw, kp, 4).transpose(1, 0, 2)
                out[(mt, kt)] = np.ascontiguousarray(sub).astype("<u2").view(np.uint8).reshape(
                    kp, 8 * mw)
        return out

    def _scale_rows(self, qw, kt, n0, cols):
        """The E8M0 scale rows of K-tile kt, columns n0.., in partition order
        (block b at partition 32 (b // 4) + b % 4)."""
        return qw.scales[16 * kt:16 * kt + self.plan.kt[kt] // 8, n0:n0 + cols]

    def sbuf_image(self, a_bits, qw):
        p, spec = self.plan, self.plan.spec
        img = np.zeros((128, self.lay.top), dtype=np.uint8)
        for (mt, kt), t in self._a_tiles(a_bits).items():
            off = self.abf[(mt, kt)]
            img[:t.shape[0], off:off + t.shape[1]] = t
        if self.unit_scales is not None:
            for q in range(4):
                img[32 * q:32 * q + 4, self.unit_scales:self.unit_scales + NTILE] = UNIT_SCALE
        for (kt, nt), off in self.wq.items():
            kp, nw, n0, r0 = p.kt[kt], p.nt[nt], NTILE * nt, 128 * kt
            if spec["store"] == "mx":
                cb = spec["word_bytes"]
                img[:kp, off:off + cb * nw] = qw.data[r0:r0 + kp, cb * n0:cb * (n0 + nw)]
            else:
                cb = qw.col_bytes
                lo, hi = int(cb * n0), int(cb * (n0 + nw))
                img[:kp, self.wraw[(kt, nt)]:self.wraw[(kt, nt)] + hi - lo] = qw.data[r0:r0 + kp,
                                                                                     lo:hi]
            if qw.scales is not None:
                so = self.ws[(kt, nt)]
                for b, row in enumerate(self._scale_rows(qw, kt, n0, nw)):
                    img[32 * (b // 4) + b % 4, so:so + nw] = row
        return img

    def hbm_image(self, a_bits, qw):
        """The inputs' bytes in HBM from hbm_base (DMA placement), in the layouts
        of _place_dma."""
        p = self.plan
        nf = p.n_full_kt
        o = self.hbm_base
        img = np.zeros(self.h_in_end - o, dtype=np.uint8)

        def put(offsets, per_kt):
            """per_kt: {kt: [rows][bytes]} -> the full K-tiles' [partition][K-tile]
            block and the last K-tile's rows."""
            full, last = offsets
            if nf:
                blk = np.stack([per_kt[kt] for kt in range(nf)], axis=1)  # [128][nf][b]
                img[full - o:full - o + blk.size] = blk.reshape(-1)
            if last is not None:
                t = np.ascontiguousarray(per_kt[nf])
                img[last - o:last - o + t.size] = t.reshape(-1)

        tiles = self._a_tiles(a_bits)
        for mt in range(len(p.mt)):
            put(self.h_a[mt], {kt: tiles[(mt, kt)] for kt in range(len(p.kt))})
        cb = self.raw_cb
        for g, (hd, hs) in self.h_w.items():
            n0, cols = NTILE * p.groups[g][0], p.group_cols(g)
            put(hd, {kt: qw.data[128 * kt:128 * kt + kp, int(cb * n0):int(cb * (n0 + cols))]
                     for kt, kp in enumerate(p.kt)})
            if hs is not None:
                # [quadrant][row][K-tile][columns]: scale row b of a K-tile (block
                # b, at partition 32 (b // 4) + b % 4) in quadrant b // 4, row b % 4.
                full, last = hs
                if nf:
                    rows = np.stack([self._scale_rows(qw, kt, n0, cols) for kt in range(nf)],
                                    axis=1)                            # [16][nf][cols]
                    img[full - o:full - o + rows.size] = np.ascontiguousarray(rows).reshape(-1)
                if last is not None:
                    sr = np.ascontiguousarray(self._scale_rows(qw, nf, n0, cols))
                    img[last - o:last - o + sr.size] = sr.reshape(-1)
        if self.h_unit is not None:
            img[self.h_unit - o:self.h_unit - o + 4 * NTILE] = UNIT_SCALE
        return img

    def place(self, core, a_bits, qw):
        """Writes the inputs where the program expects them."""
        if self.placement == "dma":
            core.write("hbm", 0, self.hbm_base, self.hbm_image(a_bits, qw))
        else:
            core.write("sbuf", 0, 0, self.sbuf_image(a_bits, qw))

    def read_c(self, core):
        p = self.plan
        if self.placement == "dma":
            return core.read("hbm", 0, self.h_c, (p.m, p.npad), "f32")[:, :p.n]
        c = np.empty((p.m, p.npad), dtype=np.float32)
        for (mt, g), off in self.cout.items():
            cols = p.group_cols(g)
            n0 = NTILE * p.groups[g][0]
            c[MTILE * mt:MTILE * mt + p.mt[mt], n0:n0 + cols] = core.read(
                "sbuf", 0, off, (p.mt[mt], cols), "f32")
        return c[:, :p.n]


# ----------------------------------------------------------------- the run

def _torch_array(x, what):
    """A torch tensor as a float32 NumPy array (its own memory when it can), after
    the checks a tensor needs: a real floating dtype, on the CPU, not requiring grad."""
    dt = str(x.dtype).replace("torch.", "")
    if x.is_complex() or not x.is_floating_point():
        raise GemmError(f"{what}: a {dt} tensor; the GEMM takes real floating-point values "
                        "(float32; float16, bfloat16 and float64 are converted)")
    if x.device.type != "cpu":
        raise GemmError(f"{what}: a tensor on {x.device}; the modelled core reads host memory: "
                        f"pass {what}.cpu()")
    if x.requires_grad:
        raise GemmError(f"{what} requires grad: tpbsim.kernels.run is not part of autograd; pass "
                        f"{what}.detach() (tpbsim.torch.Linear has a straight-through backward)")
    return x.detach().to(dtype=_torch().float32).contiguous().numpy()


def _torch():
    import torch
    return torch


def _is_tensor(x):
    t = sys.modules.get("torch")
    return t is not None and isinstance(x, t.Tensor)


def operand_array(x, what, ndim=2):
    """A given operand as a float32 NumPy array: an ndarray, a torch tensor (CPU, a
    floating dtype, not requiring grad) or anything NumPy takes (a list);
    float16 / bfloat16 / float64 are converted. ndim: 2, or None for 2-D or more
    (activations of any leading shape)."""
    if x is None:
        return None
    if _is_tensor(x):
        a = _torch_array(x, what)
    else:
        try:
            a = np.asarray(x)
        except Exception as e:   # an object NumPy cannot read
            raise GemmError(f"{what}: a {type(x).__name__} that NumPy cannot read as an array "
                            f"({e})") from None
        if a.dtype.kind != "f" or a.dtype.itemsize > 8:
            raise GemmError(f"{what}: a {a.dtype} array; the GEMM takes float32 (float16 / "
                            "float64 are converted)")
    if ndim is None and a.ndim < 2:
        raise GemmError(f"{what}: {a.ndim}-D; the GEMM takes rows of K values (2-D, or more: "
                        "the leading dimensions are rows)")
    if ndim is not None and a.ndim != ndim:
        raise GemmError(f"{what}: {a.ndim}-D; the GEMM takes a 2-D array")
    return a.astype(np.float32, copy=False)


def _finite(x, what):
    if not np.isfinite(x).all():
        at = tuple(int(i) for i in np.argwhere(~np.isfinite(x))[0])
        raise GemmError(f"{what} holds {x[at]} at {at}: the inputs must be finite")


def _dims(x):
    return " x ".join(map(str, x.shape))


def infer_shape(m, k, n, a, w, w_layout):
    """(m, k, n) from the given sizes and operands (a: [M][K], W: [K][N] for
    w_layout "kn", [N][K] for "nk"), each given size checked against them; a W whose
    shape matches only the other layout is refused naming w_layout."""
    given = {"m": m, "k": k, "n": n}
    for name, v in given.items():
        if v is not None:
            given[name] = _check_int(name, v)
    found = {}
    if a is not None:
        found["m"] = [(a.shape[0], arg("a"))]
        found["k"] = [(a.shape[1], arg("a"))]
    if w is not None:
        wk, wn = w.shape if w_layout == "kn" else w.shape[::-1]
        if a is not None and wk != a.shape[1] and wn == a.shape[1]:
            other = "nk" if w_layout == "kn" else "kn"
            raise GemmError(
                f"{arg('w')} is {_dims(w)} and {arg('a')} has {a.shape[1]} columns: "
                f"{arg('w')} looks transposed for "
                f"{arg('w_layout', w_layout)} (W as K x N); for W stored "
                f"{'[N][K] (torch.nn.Linear.weight: [out, in])' if other == 'nk' else '[K][N]'}"
                f" pass {arg('w_layout', other)}")
        found.setdefault("k", []).append((wk, arg("w")))
        found["n"] = [(wn, arg("w"))]
    out = {}
    for name in ("m", "k", "n"):
        vals = found.get(name, [])
        want = given[name]
        if want is None and vals:
            want = vals[0][0]
        for v, src in vals:
            if v != want:
                layout = "" if src == arg("a") else f" ({arg('w_layout', w_layout)})"
                if name == "k" and given["k"] is None:
                    raise GemmError(f"{arg('a')} is {_dims(a)} and {arg('w')} is "
                                    f"{_dims(w)}{layout}: their K "
                                    f"differ ({a.shape[1]} and {v})")
                raise GemmError(f"{src} is {_dims(a if src == arg('a') else w)}{layout}, the GEMM "
                                f"needs {name} = {want} ({arg(name, want)})")
        out[name] = want
    missing = [x for x in ("m", "k", "n") if out[x] is None]
    if missing:
        raise GemmError(f"{', '.join(arg(x) for x in missing)} needed (or the operands "
                        f"{arg('a')} / {arg('w')} to take them from)")
    return out["m"], out["k"], out["n"]


class Weights:
    """W quantized once, for any number of GEMMs C = A @ W with any M (what
    tpbsim.torch keeps per layer): ``quantize(w, weights, arch, w_layout)``.
    ``.k``, ``.n``, ``.weights``, ``.arch``, ``.used`` (the K x N float32 values the
    PE multiplies) and ``.qw`` (quant.QuantizedWeights of the padded K x N)."""

    def __init__(self, w, weights="mxfp4", arch="mariana", w_layout="kn"):
        if w_layout not in ("kn", "nk"):
            raise GemmError(f"{arg('w_layout', w_layout)}: 'kn' (W is K x N, C = A @ W) or "
                            "'nk' (W is N x K, torch's [out, in]: C = A @ W.T)")
        w = operand_array(w, arg("w"))
        plan = Plan(1, *(w.shape if w_layout == "kn" else w.shape[::-1]), weights, arch)
        _finite(w, arg("w"))
        self.k, self.n, self.weights, self.arch = plan.k, plan.n, weights, arch
        self.kpad, self.npad = plan.kpad, plan.npad
        t0 = time.perf_counter()
        self.qw = _quantize_w(plan, w, w_layout)
        self.seconds = time.perf_counter() - t0

    @property
    def used(self):
        return self.qw.used[:self.k, :self.n]


def quantize(w, weights="mxfp4", arch="mariana", w_layout="kn"):
    """W quantized once (a Weights) for run(w=...): the host's work on the weights
    is not repeated per call. Raises GemmError naming what is wrong."""
    return Weights(w, weights, arch, w_layout)


def _quantize_w(plan, w, w_layout, fast=True):
    if w_layout == "nk":
        w_pad = w if w.shape == (plan.npad, plan.kpad) else None
        if w_pad is None:
            w_pad = np.zeros((plan.npad, plan.kpad), dtype=np.float32)
            w_pad[:plan.n, :plan.k] = w
    else:
        w_pad = w if w.shape == (plan.kpad, plan.npad) else None
        if w_pad is None:
            w_pad = np.zeros((plan.kpad, plan.npad), dtype=np.float32)
            w_pad[:plan.k, :plan.n] = w
    return quant.quantize_weights(w_pad, plan.weights, w_layout, fast=fast)


def operands(plan, a=None, w=None, seed=0, w_layout="kn"):
    """A (M x K) and W (K x N, or N x K for w_layout "nk") float32: given, or
    random (A ~ N(0, 1), W ~ N(0, 1/K)), checked finite. A given Weights is
    returned as it is."""
    rng = np.random.default_rng(seed)
    if a is None:
        a = rng.standard_normal((plan.m, plan.k)).astype(np.float32)
    if w is None:
        w = (rng.standard_normal((plan.k, plan.n)) / np.sqrt(plan.k)).astype(np.float32)
        w_layout = "kn"
    a = operand_array(a, arg("a"), ndim=None)
    a = a.reshape(-1, a.shape[-1])
    if a.shape != (plan.m, plan.k):
        raise GemmError(f"{arg('a')} is {_dims(a)}, the GEMM needs {plan.m} x {plan.k}")
    _finite(a, arg("a"))
    if isinstance(w, Weights):
        return a, w
    w = operand_array(w, arg("w"))
    shape = (plan.k, plan.n) if w_layout == "kn" else (plan.n, plan.k)
    if w.shape != shape:
        raise GemmError(f"{arg('w')} is {_dims(w)}, the GEMM needs {shape[0]} x {shape[1]} "
                        f"({arg('w_layout', w_layout)})")
    _finite(w, arg("w"))
    return a, w


def prepare(plan, a, w, w_layout="kn", fast=True):
    """The host side: padded operands, what the hardware is handed and the values
    the PE multiplies. Returns (a_bits [M][Kpad] bf16 codes, a_used [M][Kpad],
    QuantizedWeights of [Kpad][Npad]). w: K x N ("kn"), N x K ("nk") or a Weights
    (quantized once). fast=False: the NumPy quantizers (the tests' second
    implementation of the same rules)."""
    if a.shape[1] == plan.kpad and a.dtype == np.float32:
        a_pad = a
    else:
        a_pad = np.zeros((plan.m, plan.kpad), dtype=np.float32)
        a_pad[:, :plan.k] = a
    if isinstance(w, Weights):
        qw = w.qw
    else:
        qw = _quantize_w(plan, w, w_layout, fast)
    if fast:
        a_bits, a_used = quant.quantize_activations(a_pad)
        return a_bits, a_used, qw
    a_bits, a_vals = quant.bf16(a_pad)
    # The DVE's view: partition p, element 4m + l = A[m][4p + l]; blocks of 32 k.
    kp4 = plan.kpad // 4
    src = a_vals.reshape(plan.m, kp4, 4).transpose(1, 0, 2).reshape(kp4, 4 * plan.m)
    codes, s = quant.quantize_mx_dve(src)
    vals = quant.mx_values(codes, np.repeat(np.repeat(s, 8, axis=0), 4, axis=1), "e4m3")
    a_used = vals.reshape(kp4, plan.m, 4).transpose(1, 0, 2).reshape(plan.m, plan.kpad)
    return a_bits, a_used, qw


def peak_tflops(timing):
    """The PE's MX peak: 128 x 128 PEs x 4 contraction values (pe_mx_row_pump
    'none') x 2 flops per cycle at the PE clock."""
    pump = timing["pe_mx_row_pump"]["none"]
    return 2 * 128 * 128 * pump * timing["clocks_mhz"]["pe"] * 1e6 / 1e12


# The most instructions a generated program may hold: the generator orders and
# checks each with its accesses in Python (minutes for a million), and holds
# about PROGRAM_BYTES_PER_INSTRUCTION of host memory for each meanwhile.
MAX_INSTRUCTIONS = 1_000_000
PROGRAM_BYTES_PER_INSTRUCTION = 6 * 1024


def _proc_kib(path, key):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def host_memory_available():
    """Bytes this process may still allocate: MemAvailable, and under a limit of
    the address space (ulimit -v) or of the data segment (ulimit -d) what is left
    of it; None when unknown."""
    avail = _proc_kib("/proc/meminfo", "MemAvailable:")
    import resource
    for limit, used_key in ((resource.RLIMIT_AS, "VmSize:"), (resource.RLIMIT_DATA, "VmData:")):
        soft = resource.getrlimit(limit)[0]
        used = _proc_kib("/proc/self/status", used_key)
        if soft != resource.RLIM_INFINITY and used is not None:
            left = max(0, soft - used)
            avail = left if avail is None else min(avail, left)
    return avail


def host_bytes(plan, placement):
    """About what the host side of a run with values holds at once: A (the float32
    operand, its padded copy, BF16 codes and values, the DVE's view, codes,
    scales and values: 8 float32 copies), W (the operand, its padded copy, the
    quantized form and the values the PE multiplies: 6), C (the reference, the
    result read back, a temporary: 3), and the memory image written to the core."""
    mk, kn, mn = plan.m * plan.kpad, plan.kpad * plan.npad, plan.m * plan.npad
    image = plan.hbm_input_bytes() if placement == "dma" else 128 * plan.sbuf_bytes("sbuf")
    return 4 * (8 * mk + 6 * kn + 3 * mn) + image


Capacities = collections.namedtuple("Capacities", "sbuf psum hbm")
Capacities.__doc__ = "Bytes of an SBUF and a PSUM partition and of the HBM of a core."
#: The capacities of a v4 / v5 core with its default profile.
DEFAULT_CAPACITIES = Capacities(256 * 1024, 16 * 1024, 18 * 2**30)


def capacities(core):
    """The capacities of `core` (its profile's)."""
    return Capacities(core.partition_bytes("sbuf"), core.partition_bytes("psum"),
                      core.timing["hbm"]["bytes"])


def check_sizes(plan, caps, placement="dma", lookahead=2, values=True):
    """Refuses at once, naming the sizes, a GEMM the core or this host cannot hold
    (HBM, SBUF, PSUM, the program's instructions, host memory); nothing is made
    before. Returns the plan with the widest weight panel (4, 2 or 1 N-tiles per
    group) whose double buffer fits in SBUF (the DMA placement)."""
    shape = f"the {plan.m} x {plan.k} x {plan.n} GEMM"
    sbuf, psum = caps.sbuf, caps.psum
    if placement == "dma":
        for group in (plan.group, 2, 1):
            p = plan if group == plan.group else plan.regroup(group)
            need = p.sbuf_bytes("dma")
            if need <= sbuf:
                plan = p
                break
        else:
            raise GemmError(
                f"{shape}'s DMA buffers need {need // 1024} KiB per SBUF partition ({p.group} "
                f"N-tiles per weight panel, K {p.kpad}), {sbuf // 1024} KiB exist: K is too deep "
                "for a double-buffered weight panel")
        hbm = caps.hbm
        need = plan.hbm_bytes()
        if need > hbm:
            raise GemmError(f"{shape} needs {size_text(need)} of HBM (A, W and C in their tiled "
                            f"layouts), the core has {size_text(hbm)}")
    else:
        need = plan.sbuf_bytes("sbuf", lookahead)
        if need > sbuf:
            raise GemmError(
                f"{shape} needs {need // 1024} KiB per SBUF partition with every tile resident "
                f"(--placement sbuf), {sbuf // 1024} KiB exist: a smaller shape, or the DMA "
                "placement (the default)")
    need = plan.psum_bytes()
    if need > psum:
        raise GemmError(f"{shape} accumulates in {size_text(need)} of PSUM per partition (two "
                        f"halves of four 2 KiB banks), the core has {size_text(psum)}: a profile "
                        "with more PSUM (psum bytes), or N up to 2048")
    count = plan.instructions(placement)
    if count > MAX_INSTRUCTIONS:
        raise GemmError(f"{shape} is a program of {count} instructions, more than the "
                        f"{MAX_INSTRUCTIONS} the generator makes: split it")
    program = PROGRAM_BYTES_PER_INSTRUCTION * count
    need, avail = program + (host_bytes(plan, placement) if values else 0), host_memory_available()
    if avail is not None and need > avail:
        what = (f"its program ({count} instructions, {size_text(program)})"
                + (" and its values (A, W, their quantized forms, C and the memory image)"
                   if values else ""))
        raise GemmError(f"{shape} needs about {size_text(need)} of host memory for {what}, "
                        f"{size_text(avail)} are available: a smaller shape"
                        + (", or --timing-only (no values)" if values else ""))
    return plan


def make_kernel(plan, core_or_caps, lookahead=2, placement="dma", queues=None, values=True):
    """The kernel of `plan` on a core (or for its Capacities), its sizes checked
    first (check_sizes)."""
    caps = (core_or_caps if isinstance(core_or_caps, Capacities)
            else capacities(core_or_caps))
    plan = check_sizes(plan, caps, placement, lookahead, values)
    return Kernel(plan, caps.sbuf, lookahead, placement, caps.hbm, queues)


# Every file a GEMM command writes into --out (docs/KERNELS.md "Files").
OUTPUT_FILES = ("report.json", "report.png", "out.npy", "a_used.npy", "w_used.npy", "program.tpb",
                "stats.json", "retire.txt", "trace.perfetto.json", "cmd.txt", "hbm_inputs.npy",
                "expected.npy")


class ProgramCheckError(Exception):
    """The generated program fails its own hazard check (a bug of the generator)."""


class OutputDir:
    """--out, holding only this run's files: opening it removes every file of
    OUTPUT_FILES an earlier run left there (what this run does not write must not
    look like its own); each file is written whole under a temporary name and
    renamed into place. `written` lists this run's files, `removed` the earlier
    run's, `others` the entries that are no GEMM output (left alone)."""

    def __init__(self, path):
        self.path, self.written, self.removed, self.others = path, [], [], []
        if path is None:
            return
        try:
            os.makedirs(path, exist_ok=True)
        except FileExistsError:
            raise GemmError(f"{arg('out', path, r=False)}: is a file, not a directory") from None
        except OSError as e:
            raise GemmError(f"{arg('out', path, r=False)}: cannot make the directory "
                            f"({e.strerror})") from None
        if not os.path.isdir(path):
            raise GemmError(f"{arg('out', path, r=False)}: is not a directory")
        for name in sorted(os.listdir(path)):
            full = os.path.join(path, name)
            if name in OUTPUT_FILES or name.startswith(".gemm-tmp"):
                try:
                    os.remove(full)
                except IsADirectoryError:
                    raise GemmError(f"{arg('out', path, r=False)}: {name} is a directory, where "
                                    "this command "
                                    "writes a file") from None
                except OSError as e:
                    raise GemmError(f"{arg('out', path, r=False)}: cannot remove the earlier "
                                    f"{name} "
                                    f"({e.strerror})") from None
                if name in OUTPUT_FILES:
                    self.removed.append(name)
            else:
                self.others.append(name)

    def __bool__(self):
        return self.path is not None

    def file(self, name):
        return os.path.join(self.path, name)

    def _write(self, name, write):
        tmp = os.path.join(self.path, f".gemm-tmp{os.getpid()}.{name}")
        try:
            write(tmp)
            os.replace(tmp, self.file(name))
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise
        self.written.append(name)

    def text(self, name, text):
        def w(p):
            with open(p, "w") as f:
                f.write(text)
        self._write(name, w)

    def npy(self, name, array):
        def w(p):
            with open(p, "wb") as f:
                np.save(f, array)
        self._write(name, w)

    def json(self, name, obj):
        self.text(name, json.dumps(obj, indent=2) + "\n")

    def png(self, name, plot):
        def w(p):
            plot(p)
        self._write(name, w)

    def made(self, name):
        """A file the core wrote itself (its outputs are staged and renamed too)."""
        if os.path.exists(self.file(name)):
            self.written.append(name)


CHECK_MODES = ("sample", "full")
#: Output elements the default check computes exactly (chosen with the run's seed).
CHECK_SAMPLES = 4096

# What each format runs as (SPEC §12): the names say the storage, this says what
# the hardware is handed and what the PE multiplies.
RUNS_AS = {
    "mxfp8": "MXFP8 E4M3 (x4 words + E8M0 scales per 32 k) stored in HBM, multiplied as "
             "they are",
    "mxfp4": "MXFP4 E2M1 (x4 words + E8M0 scales per 32 k) stored in HBM, multiplied as "
             "they are",
    "bf16": "BF16 stored in HBM, quantized to MXFP8 E4M3 on the DVE (QuantizeMX, scales per "
            "32 k): the PE multiplies MXFP8",
    "fp4": "FP4 E2M1 packed with a scale per 8 codes, widened to FP8 E5M2 by POOL "
           "TensorDequantize: the PE multiplies FP8 E5M2 with unit scales",
    "int4": "INT4 packed with a scale per 8 codes, widened to FP8 E5M2 by POOL: the PE "
            "multiplies FP8 E5M2 with unit scales",
    "nf4": "NF4 packed with a scale per 8 codes, widened to FP8 E4M3 by POOL: the PE "
           "multiplies FP8 E4M3 with unit scales",
    "fp6": "FP6 E2M3 packed, widened exactly to FP8 E4M3 by POOL: the PE multiplies MXFP8 "
           "E4M3 with E8M0 scales per 32 k",
}
ACT_RUNS_AS = "BF16, quantized to MXFP8 E4M3 on the DVE (QuantizeMX, scales per 32 k)"


def _check_args(act, placement, seed, threads, out, timing, lookahead, check=True,
                check_samples=CHECK_SAMPLES):
    if act != "bf16":
        raise GemmError(f"{arg('act', act)}: the activations are BF16 (quantized to MXFP8 E4M3 "
                        "on the DVE); no other activation path is modelled")
    if placement not in PLACEMENTS:
        raise GemmError(f"{arg('placement', placement)}: dma | sbuf")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise GemmError(f"{arg('seed', seed)}: not a seed (a non-negative integer)")
    if threads is not None:
        try:
            from ..core import threads_arg
            threads_arg(threads)
        except Error as e:
            raise GemmError(f"{arg('threads')}: {e}") from None
    if out is not None:
        if not isinstance(out, (str, os.PathLike)):
            raise GemmError(f"{arg('out')}: a path, not {type(out).__name__}")
        if os.fspath(out) == "":
            raise GemmError(f"{arg('out', '')}: an empty path (give a directory)")
    if timing is not None and not isinstance(timing, dict):
        if not isinstance(timing, (str, os.PathLike)):
            raise GemmError(f"{arg('timing')}: a profile path or a dict of overrides, not "
                            f"{type(timing).__name__}")
        t = os.fspath(timing)
        if t == "":
            raise GemmError(f"{arg('timing', '')}: an empty path (give a timing profile)")
        if not os.path.exists(t):
            raise GemmError(f"{arg('timing', t, r=False)}: no such file")
        if os.path.isdir(t):
            raise GemmError(f"{arg('timing', t, r=False)}: is a directory, not a timing profile")
    if isinstance(lookahead, bool) or not isinstance(lookahead, int) or lookahead < 0:
        raise GemmError(f"{arg('lookahead', lookahead)}: a count of units (0 or more)")
    if not (check is None or isinstance(check, bool) or check in CHECK_MODES):
        raise GemmError(f"{arg('check', check)}: True or 'sample' (the default: "
                        f"{arg('check_samples')} output elements chosen with the seed), 'full' "
                        "(every element), False or None (none)")
    if (isinstance(check_samples, bool) or not isinstance(check_samples, (int, np.integer))
            or check_samples < 1):
        raise GemmError(f"{arg('check_samples', check_samples)}: a count of output elements "
                        "(1 or more)")


def _make_core(arch, timing):
    # A run without core= makes a core of its own; any number may be open in a
    # process (docs/PYTHON.md), tpbsim.torch's layers' core among them.
    try:
        return Core(arch, timing)
    except Error as e:
        if timing is None:
            raise GemmError(f"cannot make a {arch} core: {e}") from None
        if isinstance(timing, dict):
            raise GemmError(f"timing overrides: {e}") from None
        raise GemmError(f"{arg('timing', os.fspath(timing), r=False)}: {e}") from None


class Report(dict):
    """What run() returns: the report (a dict, report.json's keys) and the run's
    arrays as attributes.

    * ``.c``: C = A @ W, float32, M x N (the leading shape of ``a`` kept: a of
      B x S x K gives B x S x N); a torch tensor when ``a`` was one, else a
      NumPy array. ``.c_array`` is always the NumPy array.
    * ``.a_used`` / ``.w_used``: the float32 values the PE multiplied (M x K,
      K x N), after every quantization.
    * ``.result``: the tpbsim.Result of the run; ``.kernel``: the generator's
      Kernel (its program and placement).
    """

    @property
    def c_array(self):
        c = self["_arrays"]["c"]
        shape = self.get("_lead")
        return c if c is None or shape is None else c.reshape(*shape, c.shape[-1])

    @property
    def c(self):
        c = self.c_array
        if c is not None and self.get("_torch"):
            return _torch().from_numpy(np.ascontiguousarray(c))
        return c

    @property
    def a_used(self):
        return self["_arrays"]["a_used"]

    @property
    def w_used(self):
        return self["_arrays"]["w_used"]

    @property
    def result(self):
        return self.get("_result")

    @property
    def kernel(self):
        return self.get("_kernel")


# Kernels by everything they depend on, so that a run of the same shape (a torch
# layer called again) does not generate and verify its program again.
_KERNELS = collections.OrderedDict()
_KERNELS_KEEP = 32


def _kernel_for(plan, core, lookahead, placement, queues, values, drop_wait):
    caps = capacities(core)
    key = (plan.m, plan.k, plan.n, plan.weights, plan.arch, caps, lookahead, placement,
           None if queues is None else tuple(sorted((k, tuple(v)) for k, v in queues.items())),
           values, drop_wait)
    hit = _KERNELS.get(key)
    if hit is not None:
        _KERNELS.move_to_end(key)
        return hit
    kernel = make_kernel(plan, caps, lookahead, placement, queues, values)
    text = kernel.program(drop_wait)
    verdict = kernel.verify(text)
    _KERNELS[key] = (kernel, text, verdict)
    while len(_KERNELS) > _KERNELS_KEEP:
        _KERNELS.popitem(last=False)
    return kernel, text, verdict


def run(m=None, k=None, n=None, weights="mxfp4", act="bf16", arch="mariana", a=None, w=None,
        out=None, timing=None, timing_only=False, seed=0, drop_wait=None, traces=True, check=True,
        lookahead=2, log=print, placement="dma", threads=None, queues=None, emit_only=False,
        racecheck=True, *, w_layout=None, core=None, check_samples=CHECK_SAMPLES, perfetto=None,
        cores=1):
    """Runs C = A @ W on the modelled core; returns a Report (a dict, the keys of
    report.json, with ``.c``, ``.a_used``, ``.w_used``) and writes the files into
    ``out`` (none when None).

    * ``a``: activations, M x K, or any leading shape x K (NumPy array, torch
      tensor on the CPU, or a list; float32, float16 / bfloat16 / float64
      converted). ``w``: weights, K x N (``w_layout="kn"``, the default) or N x K
      (``w_layout="nk"``, torch's ``nn.Linear.weight`` [out, in]), or a Weights
      from quantize() (quantized once). Random when not given (then ``m``, ``k``,
      ``n`` say the shape); given, ``m``, ``k``, ``n`` are taken from them. A W
      whose shape only fits the other layout is refused naming ``w_layout``; an
      ``nn.Parameter`` needs ``w_layout`` said.
    * ``weights``: mxfp4 | mxfp8 | bf16 | nf4 | int4 | fp4 | fp6 (report
      ``weights_run_as`` says what each runs as: bf16 becomes MXFP8 on the DVE).
    * ``check``: True / "sample" (default): CHECK_SAMPLES (``check_samples``)
      output elements, chosen with numpy.random.default_rng(seed), computed
      exactly as the FP32 k-ascending sum of a_used x w_used and compared bit for
      bit (every element when C has no more); "full": every element (slow for
      big shapes: NumPy); False / None: none.
    * ``core``: a tpbsim.Core to run on (kept open; its arch is the GEMM's, its
      timing the run's): one core for many GEMMs. None: a core is made and closed.
    * ``perfetto``: a path for the run's Perfetto trace (also without ``out``).
    * racecheck: the run checks every access against the semaphore ordering
      (SPEC §14); report["races"] says what it found, whatever the timing.
    * emit_only: writes a workload directory instead (program.tpb and cmd.txt,
      which `tpbsim run` and `tpbsim sweep` take; with values, the HBM image it
      loads and the C it dumps) and runs nothing.

    * ``cores``: more than 1 runs C split over that many cores of one device
      (tpbsim.kernels.gemm_cores.run_cores, docs/KERNELS.md "Over several
      cores"): the report gains ``split``, ``per_core`` and
      ``scaling_efficiency``; the DMA placement, no ``core=`` or ``emit_only``.

    Every argument is checked before anything is made (GemmError, a
    tpbsim.InputError, naming it), every size the shape implies (HBM, SBUF, PSUM,
    instructions, host memory) before anything is allocated. ``out`` is emptied
    of an earlier run's files first (OutputDir). A KeyboardInterrupt leaves only
    this run's files, listed in the exception's ``gemm_written``."""
    _check_args(act, placement, seed, threads, out, timing, lookahead, check, check_samples)
    if isinstance(cores, bool) or not isinstance(cores, (int, np.integer)) or cores < 1:
        raise GemmError(f"{arg('cores', cores)}: a count of cores (1 or more)")
    if cores > 1:
        if core is not None or placement != "dma" or drop_wait is not None:
            raise GemmError(f"{arg('cores', cores)} runs on a device of its own with the DMA "
                            f"placement: no {arg('core')}, {arg('placement', 'sbuf')} or "
                            "drop_wait with it")
        from .gemm_cores import run_cores
        if w is not None and w_layout == "nk":
            w = operand_array(w, arg("w")).T
        a2 = operand_array(a, arg("a"), ndim=None)
        if a2 is not None and a2.ndim > 2:
            a2 = a2.reshape(-1, a2.shape[-1])
        w2 = operand_array(w, arg("w")) if w is not None else None
        m, k, n = infer_shape(m, k, n, a2, w2, "kn")
        return run_cores(m, k, n, weights, arch, int(cores), a=a2, w=w2, out=out, timing=timing,
                         timing_only=timing_only, seed=seed, check=check,
                         check_samples=check_samples, log=log, racecheck=racecheck,
                         emit_only=emit_only)
    is_torch = _is_tensor(a)
    if w_layout is None:
        if _is_tensor(w) and isinstance(w, _torch().nn.Parameter):
            raise GemmError("w is an nn.Parameter (a layer's weight, which torch stores [out, "
                            f"in] = N x K): say {arg('w_layout', 'nk')} (or "
                            f"{arg('w_layout', 'kn')} for K x N)")
        w_layout = "kn"
    if w_layout not in ("kn", "nk"):
        raise GemmError(f"{arg('w_layout', w_layout)}: 'kn' (W is K x N, C = A @ W) or 'nk' "
                        "(W is N x K, torch's [out, in]: C = A @ W.T)")
    a = operand_array(a, arg("a"), ndim=None)
    lead = None
    if a is not None and a.ndim > 2:
        lead = a.shape[:-1]
        a = a.reshape(-1, a.shape[-1])
    prepared = w if isinstance(w, Weights) else None
    if prepared is not None:
        if prepared.arch != arch or prepared.weights != weights:
            raise GemmError(f"{arg('w')} was quantized for {prepared.weights} on "
                            f"{prepared.arch}, the run "
                            f"is {arg('weights', weights)} {arg('arch', arch)}")
        wk, wn = prepared.k, prepared.n
        if a is not None and a.shape[1] != wk:
            raise GemmError(f"{arg('a')} is {_dims(a)}, the quantized {arg('w')} is K x N = "
                            f"{wk} x {wn}: their K "
                            f"differ ({a.shape[1]} and {wk})")
        m, k, n = infer_shape(m, k, n, a, _ShapeOnly((wk, wn)), "kn")
    else:
        w = operand_array(w, arg("w"))
        m, k, n = infer_shape(m, k, n, a, w, w_layout)
    if core is not None:
        if not isinstance(core, Core):
            raise GemmError(f"{arg('core')}: a tpbsim.Core, not {type(core).__name__}")
        if core.closed:
            raise GemmError(f"{arg('core')}: the core is closed")
        if core.arch != arch:
            raise GemmError(f"{arg('core')} is a {core.arch} core, the run is "
                            f"{arg('arch', arch)}")
        if timing is not None:
            raise GemmError(f"{arg('timing')} with {arg('core')}: the core has its timing "
                            "(give it to tpbsim.Core)")
    plan = Plan(m, k, n, weights, arch)
    values = not timing_only
    if emit_only and out is None:
        raise GemmError(f"{arg('emit_only')} needs {arg('out')} DIR")
    if emit_only and placement != "dma" and values:
        raise GemmError(f"{arg('emit_only')} with values needs the DMA placement (the inputs are "
                        f"one HBM image); add {arg('timing_only')} or drop "
                        f"{arg('placement', 'sbuf')}")
    wall0 = time.perf_counter()
    own = core is None
    if own:
        core = _make_core(arch, timing)
    times = {}
    outs = None
    try:
        try:
            t0 = time.perf_counter()
            if own:
                kernel = make_kernel(plan, core, lookahead, placement, queues, values)
                text = kernel.program(drop_wait)
                verdict = kernel.verify(text)
            else:   # one core for many GEMMs (tpbsim.torch): a shape's program made once
                kernel, text, verdict = _kernel_for(plan, core, lookahead, placement, queues,
                                                    values, drop_wait)
            plan = kernel.plan
            times["generate_s"] = time.perf_counter() - t0
            if not verdict.ok and drop_wait is None:
                raise ProgramCheckError(
                    "the generated program fails its own hazard check (a bug of the generator): "
                    + "; ".join(verdict.problems[:3])
                    + (f" (+{len(verdict.problems) - 3} more)" if len(verdict.problems) > 3
                       else ""))
            if values:
                a, w = operands(plan, a, w, seed, w_layout)
            elif a is not None or w is not None:
                operands(plan, a if a is not None else np.zeros((plan.m, plan.k), np.float32),
                         w if w is not None else np.zeros((plan.k, plan.n), np.float32),
                         w_layout=w_layout if w is not None else "kn")
            outs = OutputDir(out)
            if emit_only:
                return emit_workload(plan, kernel, text, outs, timing_only, a, w, w_layout)
            rep = _run_on(core, plan, kernel, text, verdict, outs, a, w, times, wall0,
                          timing_only, traces, check, log, threads, racecheck, w_layout,
                          check_samples, seed, perfetto)
            rep["_lead"] = lead
            rep["_torch"] = is_torch
            return rep
        finally:
            if own:
                core.close()
    except KeyboardInterrupt as e:
        e.gemm_written = list(outs.written) if outs else []
        e.gemm_out = out
        raise


class _ShapeOnly:
    """The shape of a quantized W for infer_shape."""

    def __init__(self, shape):
        self.shape = shape


def check_result(c, a_used, w_used, mode="sample", samples=CHECK_SAMPLES, seed=0):
    """C against the FP32 k-ascending sum of a_used x w_used (padded K: the PE's
    sum), bit for bit: every element ("full", or when C has no more than
    `samples`), else `samples` distinct elements chosen with
    numpy.random.default_rng(seed). Returns the report's "check" dict."""
    m, n = c.shape
    ref = ("FP32 sum over k ascending of a_used x w_used, one rounding per multiply and per "
           "add (NumPy)")
    if mode == "full" or m * n <= samples:
        want = quant.fp32_ksum(a_used, w_used)[:, :n]
        bad = c.view(np.uint32) != want.view(np.uint32)
        where = [tuple(int(i) for i in x) for x in np.argwhere(bad)[:5]]
        return {"bit_exact": not bad.any(), "mode": "full", "checked": m * n, "of": m * n,
                "mismatches": int(np.count_nonzero(bad)), "first": where, "reference": ref}
    rng = np.random.default_rng(seed)
    flat = np.sort(rng.choice(m * n, size=samples, replace=False))
    rows, cols = flat // n, flat % n
    want = quant.fp32_ksum_at(a_used, w_used, rows, cols)
    got = c[rows, cols]
    bad = got.view(np.uint32) != want.view(np.uint32)
    where = [(int(rows[i]), int(cols[i])) for i in np.flatnonzero(bad)[:5]]
    return {"bit_exact": not bad.any(), "mode": "sample", "checked": int(samples), "of": m * n,
            "seed": int(seed), "mismatches": int(np.count_nonzero(bad)), "first": where,
            "reference": ref + f"; {samples} elements chosen with numpy.random.default_rng(seed)"
                               " (check='full': every element)"}


def _run_on(core, plan, kernel, text, verdict, outs, a, w, times, wall0, timing_only, traces,
            check, log, threads, racecheck, w_layout="kn", check_samples=CHECK_SAMPLES, seed=0,
            perfetto=None):
    t0 = time.perf_counter()
    if timing_only:
        # No values: nothing to quantize or place (SPEC §13).
        a_used = qw = None
    else:
        a_bits, a_used, qw = prepare(plan, a, w, w_layout)
        kernel.place(core, a_bits, qw)
    times["host_data_s"] = time.perf_counter() - t0
    if outs:
        outs.text("program.tpb", text)
    run_kw = {"timing_only": bool(timing_only), "threads": threads,
              "racecheck": bool(racecheck)}
    if outs and traces:
        run_kw.update(stats=outs.file("stats.json"), retire=outs.file("retire.txt"),
                      perfetto=outs.file("trace.perfetto.json"))
    if perfetto is not None:
        run_kw["perfetto"] = perfetto
    for i in range(len(core.semaphores)):
        core.set_semaphore(i, 0)
    status, message = "ok", ""
    t0 = time.perf_counter()
    try:
        result = core.run(text, name="gemm.tpb", **run_kw)
    except Deadlock as e:
        status, result, message = "deadlock", e.result, e.message
    except Fault as e:
        status, result, message = "fault", e.result, e.message
        if log:
            log(f"fault: {e}")
    if outs and traces:
        for name in ("stats.json", "retire.txt", "trace.perfetto.json"):
            outs.made(name)
    times["run_s"] = time.perf_counter() - t0
    c = kernel.read_c(core) if status == "ok" and not timing_only else None
    timing_profile = core.timing
    wall = time.perf_counter() - wall0

    report = Report(make_report(plan, kernel, result, timing_profile, status, wall, timing_only))
    report["weights_run_as"] = RUNS_AS[plan.weights]
    report["act_run_as"] = ACT_RUNS_AS
    report["w_layout"] = w_layout
    report["wall"] = times
    if message:
        report["message"] = message
    if c is not None and check:
        t0 = time.perf_counter()
        report["check"] = check_result(c, a_used, qw.used, "full" if check == "full" else
                                       "sample", int(check_samples), int(seed))
        times["check_s"] = time.perf_counter() - t0
    elif timing_only:
        report["check"] = {"bit_exact": None,
                           "reason": "not checked: a timing-only run computes no values "
                                     "(out.npy, a_used.npy, w_used.npy not written)"}
    elif not check:
        report["check"] = {"bit_exact": None, "reason": f"not checked ({arg('check', check)})"}
    else:
        report["check"] = {"bit_exact": None,
                           "reason": f"not checked: the run ended in a {status} (out.npy not "
                                     "written)"}
    report["ordering"] = ordering(verdict, result if status == "ok" else None)
    report["races"] = races(result)
    if outs:
        if a_used is not None:
            outs.npy("a_used.npy", a_used[:, :plan.k])
            outs.npy("w_used.npy", qw.used[:plan.k, :plan.n])
        if c is not None:
            outs.npy("out.npy", c)
        if result is not None and traces:
            from .report import plot
            t0 = time.perf_counter()
            outs.png("report.png", lambda p: plot(report, result.retires, p))
            report["wall"]["plot_s"] = time.perf_counter() - t0
    report["wall_seconds"] = time.perf_counter() - wall0
    if outs:
        report["files"] = outs.written + ["report.json"]
        outs.json("report.json", report)
    report["_arrays"] = dict(
        c=c, a_used=None if a_used is None else a_used[:, :plan.k],
        w_used=None if qw is None else qw.used[:plan.k, :plan.n], a_used_pad=a_used,
        w_used_pad=None if qw is None else qw.used)
    report["_kernel"] = kernel
    report["_result"] = result
    report["_outputs"] = outs
    return report


def emit_workload(plan, kernel, text, outs, timing_only, a, w, w_layout="kn"):
    """A workload directory as traces/workloads/ holds them (docs/SWEEPS.md)."""
    outs.text("program.tpb", text)
    shape = f"{plan.m} x {plan.k} x {plan.n}, {plan.weights} weights, {plan.arch}"
    lines = ["# tpbsim run arguments, paths relative to this directory",
             f"# C = A @ W {shape}, generated by python3 -m tpbsim.kernels gemm --emit-only",
             "program.tpb"]
    if timing_only:
        lines.append("--timing-only")
    else:
        a_bits, a_used, qw = prepare(plan, a, w, w_layout)
        outs.npy("hbm_inputs.npy", kernel.hbm_image(a_bits, qw))
        # C as the dump writes it (M x padded N), the reference of the check.
        outs.npy("expected.npy", quant.fp32_ksum(a_used, qw.used))
        lines += ["--load hbm:0x0=hbm_inputs.npy",
                  f"--dump hbm:{kernel.h_c:#x}:{plan.m}x{plan.npad}:f32=out.npy"]
    outs.text("cmd.txt", "\n".join(lines) + "\n")
    return {"emitted": outs.path, "files": sorted(outs.written), "shape": shape,
            "instructions": len(kernel.sched.ops), "_outputs": outs}


def races(result):
    """The race check's verdict on the run (SPEC §14): every access of every
    instruction and DMA transfer against the semaphore ordering, so a missing wait
    shows whatever the timing (None: not checked)."""
    if result is None or result.races is None:
        return None
    return {"count": result.race_count, "first": [r["message"] for r in result.races[:5]]}


def ordering(verdict, result):
    """The program's ordering, from its own accesses (access.verify): statically,
    every cross-engine hazard ordered by its semaphores, no read of bytes nothing
    wrote, no write nothing reads; then every hazard against the retire records
    (the producer retired no later than the consumer issued), which shows a wait
    the model did not honour."""
    bad = list(verdict.problems)
    checked = len(verdict.hazards)
    if result is not None:
        rec = {(r.engine, r.index): r for r in result.retires}
        for p_ins, c_ins in verdict.hazards:
            p, c = rec.get((p_ins.engine, p_ins.pos)), rec.get((c_ins.engine, c_ins.pos))
            if c is None or p is None or p.end_ps > c.start_ps:
                bad.append(f"{c_ins.name} issued at {c.start_ps if c else '?'} ps before "
                           f"{p_ins.name} retired at {p.end_ps if p else '?'} ps")
    return {"hazards_checked": checked, "violations": len(bad), "first": bad[:5],
            "races": len(verdict.races), "uninitialized_reads": len(verdict.uninitialized),
            "unused_writes": len(verdict.unused)}


def make_report(plan, kernel, result, timing, status, wall, timing_only):
    from .report import engine_table, bound_by, critical_chain
    dur_ps = result.duration_ps if result is not None else 0
    flops = 2.0 * plan.m * plan.n * plan.k
    peak = peak_tflops(timing)
    achieved = flops / (dur_ps * 1e-12) / 1e12 if dur_ps else 0.0
    engines = engine_table(result, kernel) if result is not None else {}
    hbm_bytes = sum(v.get("hbm_bytes", 0) for v in engines.values())
    hbm_share = timing["hbm"]["mbytes_per_s"] / 1e3
    dma_gbps = timing["dma"]["engines"] * timing["dma"]["mbytes_per_s"] / 1e3
    if kernel.placement == "dma":
        qs = {k: ",".join(f"dma{q}" for q in v) for k, v in kernel.queues.items()}
        a_where = (f"resident in {kernel.ra} slots, loaded once for every weight panel in "
                   "the order the PE uses it"
                   if kernel.a_resident else
                   f"into a ring of {kernel.ra} slots, issued {max(1, kernel.ra - 2)} ahead")
        a_queues = f"dma{kernel.queues['w' if kernel.a_resident else 'a'][0]}"
        placement = (f"dma (A, W and C in HBM; A on {a_queues} in {kernel.n_a_loads} transfers "
                     f"of up to {A_CHUNK // 1024} KiB per partition {a_where}; W panels of "
                     f"{plan.group_nts(0)} N-tiles"
                     + (f" (the last {plan.tail_nt} in panels of one, A being resident)"
                        if plan.tail_nt else "")
                     + f" on dma{kernel.queues['w'][0]} in transfers "
                     f"of up to {W_CHUNK // 1024} KiB per partition, double-buffered; C from "
                     f"{kernel.rc} SBUF slots on {qs['c']})")
    else:
        placement = ("sbuf (inputs written into SBUF before the run, results read from SBUF; "
                     "no DMA)")
    rep = {
        "command": "gemm",
        "shape": {"m": plan.m, "k": plan.k, "n": plan.n, "k_padded": plan.kpad,
                  "n_padded": plan.npad},
        "weights": plan.weights, "act": "bf16", "arch": plan.arch,
        "placement": placement,
        "padding": plan.padding,
        "status": status,
        "timing_only": bool(timing_only),
        "simulated_ns": dur_ps / 1000,
        "flops": flops,
        "achieved_tflops": achieved,
        "peak_tflops": peak,
        "pe_bound_ns": flops / (peak * 1e12) * 1e9,
        "hbm_bytes": hbm_bytes,
        "hbm_gbps": hbm_bytes / (dur_ps * 1e-12) / 1e9 if dur_ps else 0.0,
        "hbm_share_gbps": hbm_share,
        "hbm_bound_ns": hbm_bytes / (hbm_share * 1e9) * 1e9 if hbm_share else 0.0,
        # The DMA engines together (dma.engines x dma.mbytes_per_s): every HBM
        # byte crosses one of them.
        "dma_gbps": dma_gbps,
        "dma_bound_ns": hbm_bytes / dma_gbps if dma_gbps else 0.0,
        # The busiest DMA engine alone: its partitions' bytes over its bandwidth
        # (a transfer is split by partition; MX scale rows sit in 4 partitions
        # per quadrant, so engines 0, 4, 8 and 12 carry more).
        "dma_engine_bound_ns": (max(kernel.dma_engine_bytes(timing["dma"]["engines"]))
                                / (timing["dma"]["mbytes_per_s"] / 1e3)
                                if kernel.placement == "dma" and dma_gbps else 0.0),
        "engines": engines,
        "engine_active": result.engine_active if result is not None else {},
        "instructions": {e: sum(1 for op in kernel.sched.ops if op.engine == e)
                         for e in ENGINE_SEMS if any(op.engine == e for op in kernel.sched.ops)},
        "wall_seconds": wall,
    }
    rep["roofline_ns"] = max(rep["pe_bound_ns"], rep["hbm_bound_ns"], rep["dma_bound_ns"])
    rep["bound_by"], rep["bound_reason"] = bound_by(rep)
    rep["critical_chain"] = critical_chain(result, kernel) if result is not None else None
    return rep
