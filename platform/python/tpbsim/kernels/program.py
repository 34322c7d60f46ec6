"""The program of one GEMM and its data placement (docs/KERNELS.md "Data
placement", "Ordering: semaphores only"): the Kernel builds the instruction
text of a Plan (ordered by semaphores, sched.py), the SBUF / HBM images of
its inputs, and reads C back."""

import itertools
import math
import re

import numpy as np

from . import access
from .plan import (A_RING, C_RING, KTILE, MTILE, NTILE, PLACEMENTS, PSUM_BANK, Capacities,
                   GemmError, capacities, ceil_div, check_sizes)
from .sched import Schedule

ENGINE_SEMS = {"pool": 0, "dve": 1, "pe": 2, "sfu": 3, **{f"dma{q}": 4 + q for q in range(16)}}
UNIT_SCALE = 127                                # E8M0 2^0
# DMA placement (docs/KERNELS.md "Data placement"): the queues of each stream
# (the loads use the first of theirs: one transfer of 128 partitions keeps every
# DMA engine busy; the stores take theirs in turn), the depths of the quantized
# activation ring and of the result ring.
A_QUEUES, W_QUEUES, C_QUEUES = (0,), (6,), tuple(range(10, 16))


class Layout:
    """A bump allocator of SBUF byte offsets (the same in every partition)."""

    def __init__(self, capacity, base=0):
        self.top, self.capacity, self.regions = base, capacity, []

    def take(self, nbytes, what):
        off = self.top
        self.top = ceil_div(off + int(math.ceil(nbytes)), 64) * 64
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


def make_kernel(plan, core_or_caps, lookahead=2, placement="dma", queues=None, values=True):
    """The kernel of `plan` on a core (or for its Capacities), its sizes checked
    first (check_sizes)."""
    caps = (core_or_caps if isinstance(core_or_caps, Capacities)
            else capacities(core_or_caps))
    plan = check_sizes(plan, caps, placement, lookahead, values)
    return Kernel(plan, caps.sbuf, lookahead, placement, caps.hbm, queues)


class ProgramCheckError(Exception):
    """The generated program fails its own hazard check (a bug of the generator)."""
