"""Where one GEMM's data lives (docs/KERNELS.md "Data placement"): the SBUF
layout of its tiles and buffers, the HBM layout of its operands and C (the DMA
placement), the memory images the host writes before the run, and C read back
after it. The program that moves and computes on these bytes is program.py's."""

import math

import numpy as np

from .plan import A_RING, C_RING, KTILE, MTILE, NTILE, PLACEMENTS, GemmError, ceil_div

UNIT_SCALE = 127                                # E8M0 2^0


class Layout:
    """A bump allocator of SBUF byte offsets (the same in every partition)."""

    def __init__(self, capacity, base=0):
        self.top, self.capacity, self.regions = base, capacity, []

    def take(self, nbytes, what):
        off = self.top
        self.top = ceil_div(off + int(math.ceil(nbytes)), 64) * 64
        self.regions.append((what, off, nbytes))
        return off



class Placement:
    """The data placement of one GEMM.

    `placement="dma"`: A, W and C live in HBM; the DMA queues bring A and W
    into SBUF tile by tile (a ring of activation slots, two weight panels)
    and write C back. `placement="sbuf"`: every input tile is written into
    SBUF before the run (core.write) and C is read from SBUF after it.
    """

    def __init__(self, plan, capacity, lookahead=2, placement="dma", hbm_capacity=None,
                 hbm_base=0):
        if placement not in PLACEMENTS:
            raise GemmError(f"--placement {placement}: dma | sbuf")
        self.plan = plan
        self.placement = placement
        self.lookahead = lookahead
        self.lay = Layout(capacity)
        # HBM from hbm_base on (a device's cores each their own range, grid.py).
        self.hbm = Layout(hbm_capacity or 2**40, hbm_base)
        self.hbm_base = hbm_base
        spec = plan.spec
        self.host_scales = spec["store"] == "mx" or (spec["store"] == "packed"
                                                     and spec["group"] == 0)
        self.raw_cb = {"mx": spec.get("word_bytes"), "bf16": 8}.get(
            spec["store"], 2.5 if spec.get("group") == 8 else 3)
        # The program's units: (group, M-tile, K-tile) in the PE's order.
        self.units = [(g, mt, kt) for g in range(len(plan.groups)) for mt in range(len(plan.mt))
                      for kt in range(len(plan.kt))]
        if placement == "dma":
            self._place_dma()
        else:
            self._place()

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
        self._place_hbm()

    def _place_hbm(self):
        """HBM from hbm_base: each M-tile's A, each panel's W and scale rows, the
        unit scales, then C (docs/KERNELS.md "Data placement")."""
        p, hb, nf = self.plan, self.hbm, self.plan.n_full_kt
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

