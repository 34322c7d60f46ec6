"""The program of one GEMM (docs/KERNELS.md "The tiling", "Ordering"): its
instructions in one sequential order, each a structured instruction with the
bytes it reads and writes (tpbsim.program.instructions), added to the program
builder of tpbsim.program, which derives every semaphore wait from those
bytes; the text is printed last (Kernel.program). Where the data lives is
placement.py's."""

import itertools

from ..program import Builder
from ..program import instructions as ins
from .placement import UNIT_SCALE, Layout, Placement
from .plan import MTILE, NTILE, PSUM_BANK, Capacities, capacities, check_sizes

# DMA placement (docs/KERNELS.md "Data placement"): the queues of each stream
# (the loads use the first of theirs: one transfer of 128 partitions keeps every
# DMA engine busy; the stores take theirs in turn).
A_QUEUES, W_QUEUES, C_QUEUES = (0,), (6,), tuple(range(10, 16))

__all__ = ["A_QUEUES", "C_QUEUES", "Kernel", "Layout", "UNIT_SCALE", "W_QUEUES", "make_kernel"]


class Kernel(Placement):
    """The program of one GEMM with its data placement (placement.py): the
    compute pipeline (POOL widening, DVE QuantizeMX, PE loads and matmuls,
    PSUM accumulation, DVE evacuation) is the same for both placements; the
    DMA placement adds the transfers of A, W and C.

    ``builder``: the tpbsim.program.Builder holding the instructions and their
    waits; ``program()`` its text; ``transfers`` (rows, row bytes, first SBUF
    partition) of every DMA descriptor."""

    def __init__(self, plan, capacity, lookahead=2, placement="dma", hbm_capacity=None,
                 queues=None, hbm_base=0):
        super().__init__(plan, capacity, lookahead, placement, hbm_capacity, hbm_base)
        # The DMA queues of each stream: activations, weight panels, results.
        self.queues = {"a": A_QUEUES, "w": W_QUEUES, "c": C_QUEUES, **(queues or {})}
        self.builder = Builder(plan.arch, hoist=True)
        self.transfers = []
        (_DmaProgram if placement == "dma" else _SbufProgram)(self).build()

    # ------------------------------------------------------------ instructions
    def dma(self, queue, rows, row_bytes, src, dst):
        """One DMA descriptor on `queue` (endpoints as tpbsim.program takes them)."""
        self.transfers.append((rows, row_bytes, src[1] if src[0] == "sbuf" else dst[1]))
        return self.builder.add(queue, *ins.dma_copy(rows, row_bytes, src, dst))

    def quantize(self, kp, src, n, dst, dst_s):
        """The DVE's QuantizeMX of a BF16 tile of kp partitions x 4n into MXFP8 E4M3."""
        return self.builder.add("dve", *ins.quantize_mx(kp, "bf16", "fp8_e4m3", (0, src), n,
                                                        (0, dst), (0, dst_s)))

    def widen(self, key, kp, raw, wq, ws):
        """The widening of weight tile `key` (K-tile, N-tile): bf16 by QuantizeMX on
        the DVE, the packed formats by POOL's TensorDequantize."""
        spec, nw = self.plan.spec, self.plan.nt[key[1]]
        if spec["store"] == "bf16":
            return self.quantize(kp, raw, nw, wq, ws)
        words = (5 * nw // 8) if spec["group"] == 8 else (3 * nw // 4)
        return self.builder.add("pool", *ins.tensor_dequantize(spec["dq"], spec["group"], kp,
                                                               (0, raw), words, (0, wq), nw))

    def pe_unit(self, u, a_tile, w_tile, after=()):
        """Unit u's stationary load of its activation tile `a_tile` (data, scales)
        and one matmul per N-tile of its group (`w_tile(j, kt)`: the weight
        tile's data and scales) into the accumulator's banks."""
        p, spec = self.plan, self.plan.spec
        g, mt, kt = self.units[u]
        kp, mw = p.kt[kt], p.mt[mt]
        self.builder.add("pe", *ins.ldweights(p.arch, "fp8_e4m3", kp, mw, (0, a_tile[0]),
                                              (0, a_tile[1]), 4), after=after)
        word = spec["word_bytes"] if spec["store"] == "mx" else 4
        gi = g * len(p.mt) + mt
        for j, nt in enumerate(p.groups[g]):
            wq, ws = w_tile(j, kt)
            self.builder.add("pe", *ins.matmul(p.arch, spec["pe"], kp, p.nt[nt], int(kt > 0),
                                               (0, wq), (0, ws), word, (0, self.psum(gi, j)),
                                               mw))

    def psum(self, gi, j=0):
        """PSUM offset of N-tile j of the accumulator of (group, M-tile) number gi."""
        p = self.plan
        return (gi % p.psum_slots()) * p.group * PSUM_BANK + PSUM_BANK * j

    def evacuate(self, g, mt, gi, dst, j=None):
        """The DVE copy of an accumulator (its N-tile j alone when given) from PSUM
        into SBUF at dst."""
        p = self.plan
        cols = p.group_cols(g) if j is None else p.nt[p.groups[g][j]]
        j = j or 0
        return self.builder.add("dve", *ins.tensor_copy(
            p.mt[mt], "fp32", "fp32", ("psum", 0, self.psum(gi, j)),
            ("sbuf", 0, dst + 4 * NTILE * j), cols))

    # ------------------------------------------------------------ the program
    def program(self, drop_wait=None):
        """The program text. ``drop_wait``: the index of an instruction (of
        :meth:`waits`) whose wait is left out, for tests that every wait is
        needed."""
        p, b = self.plan, self.builder
        sems = ", ".join(f"{q} sem{b.sem_of(q)}" for q in b.queue_order if q in b.queues)
        head = [f"C = A @ W: M {p.m}, K {p.k}, N {p.n}, weights {p.weights}, act bf16, {p.arch}",
                "generated by python3 -m tpbsim.kernels gemm (docs/KERNELS.md); one semaphore "
                f"per queue ({sems}), incremented by the instructions some instruction waits for"]
        head += [f"padding: {x}" for x in p.padding]
        return b.text(header=head, drop_wait=drop_wait)

    def waits(self):
        """Indices (in the builder's order) of the instructions that wait, nops
        included."""
        return [i for i, _, _ in self.builder.waits()]

    def instructions(self):
        """The program's instructions but the builder's nops (Plan.instructions
        counts these in closed form)."""
        return len(self.builder.instrs) - self.builder.nops

    def dma_engine_bytes(self, engines):
        """Bytes each of the core's `engines` DMA engines carries (SPEC §10: a
        transfer is split by SBUF partition, engine e taking the partitions
        e x 128 / engines on), from the program's transfers."""
        per = [0] * engines
        width = 128 // engines
        for rows, row_bytes, part in self.transfers:
            for q in range(part, part + rows):
                per[q // width] += row_bytes
        return per


class _SbufProgram:
    """The program of the SBUF placement: every tile in SBUF before the run;
    QuantizeMX of the activations (and the weights' widening) `lookahead`
    units ahead of the PE, into a ring of lookahead + 1 slots."""

    def __init__(self, k):
        self.k, self.p = k, k.plan
        self.prepared = set()

    def prep(self, u):
        k, p = self.k, self.p
        g, mt, kt = k.units[u]
        aq, aqs = k.aq[u % k.ra]
        k.quantize(p.kt[kt], k.abf[(mt, kt)], p.mt[mt], aq, aqs)
        for nt in p.groups[g]:
            key = (kt, nt)
            if key in self.prepared or p.spec["store"] == "mx":
                continue
            self.prepared.add(key)
            k.widen(key, p.kt[kt], k.wraw[key], k.wq[key], k.ws[key])

    def build(self):
        k, p = self.k, self.p
        n, la = len(k.units), k.lookahead
        for u in range(min(la, n)):
            self.prep(u)
        for u, (g, mt, kt) in enumerate(k.units):
            if u + la < n:
                self.prep(u + la)
            k.pe_unit(u, k.aq[u % k.ra], lambda j, kt: (k.wq[(kt, p.groups[g][j])],
                                                        k.ws[(kt, p.groups[g][j])]))
            if kt == len(p.kt) - 1:
                k.evacuate(g, mt, g * len(p.mt) + mt, k.cout[(mt, g)])


class _DmaProgram:
    """The program of the DMA placement, in the order it is written
    (docs/KERNELS.md "Data placement"): the weight panels on one queue, each
    once, the next while this one is used; the activations in chunks of K-tiles
    into a ring (or resident: loaded once, in the order the PE first needs
    them); the widening and QuantizeMX `lookahead` units ahead of the PE but
    never into the group after next (its panel goes into the bank the current
    group reads); each accumulator evacuated after its last K-tile and stored
    on the result queues in turn."""

    def __init__(self, k):
        self.k, self.p = k, k.plan
        self.achunks, self.chunk_of = self._a_chunks()
        k.n_a_loads = len(self.achunks)
        self.loaded, self.prepared = set(), set()
        self.nprep = self.nload = 0
        self.store = {}       # C slot -> the index of the store that last read it
        self.c_queues = itertools.cycle(f"dma{q}" for q in k.queues["c"])
        self.wq = f"dma{k.queues['w'][0]}"
        # Resident A goes on the weight queue, in the order the PE needs it; a
        # ring's loads wait for their slot, on a queue of their own.
        self.aqueue = self.wq if k.a_resident else f"dma{k.queues['a'][0]}"
        # Activation chunks in flight ahead of the one in use: the ring holds
        # them, the one in use and the one just left (whose slot the next load
        # reuses once its QuantizeMX ran).
        self.ahead = len(self.achunks) if k.a_resident else max(1, k.ra - 2)

    def _a_chunks(self):
        """The activation transfers, one per chunk of K-tiles of a (group,
        M-tile): [(g, mt, kt0, kt1)], and each unit's chunk. Resident A
        (Plan.a_ring): the first panel's loads serve every panel."""
        p, k = self.p, self.k
        achunks, chunk_of, first = [], [], {}
        for g, mt, kt in k.units:
            for k0, k1 in p.a_chunks(p.mt[mt]):
                if not k0 <= kt < k1:
                    continue
                if k.a_resident and (mt, k0) in first:
                    chunk_of.append(first[(mt, k0)])
                else:
                    if kt == k0:
                        achunks.append((g, mt, k0, k1))
                        first[(mt, k0)] = len(achunks) - 1
                    chunk_of.append(len(achunks) - 1)
                break
        return achunks, chunk_of

    def load_panel(self, g, before=None):
        """The weight panel of group g into bank g % 2, once: its K-tiles in
        transfers of about W_CHUNK bytes per partition, its scale rows in one
        transfer per quadrant (4 partitions) for the full K-tiles and one for
        the last. Every panel on one queue: each transfer of 128 partitions
        keeps the 16 DMA engines busy alone, and one queue lands the K-tiles
        in order, the panels one after another (the PE starts on the first
        K-tile while the rest stream in; a second queue would share the
        engines and land both panels late)."""
        if g in self.loaded:
            return
        self.loaded.add(g)
        k, p = self.k, self.p
        bank, rb, nf = k.banks[g % 2], k._rb(g), p.n_full_kt
        (hd, hdl), hsc = k.h_w[g]
        for k0, k1 in p.w_chunks(rb, g):
            if before:
                before(k1)
            src = ("hbm", hd + k0 * rb, nf * rb) if k0 < nf else ("hbm", hdl, rb)
            k.dma(self.wq, p.kt[k0], (k1 - k0) * rb, src, ("sbuf", 0, bank["raw"] + k0 * rb))
            if k.host_scales:
                self._scale_rows(g, hsc, bank, k0)

    def _scale_rows(self, g, hsc, bank, k0):
        """The scale rows of panel g go with the first transfer of their K-tiles."""
        k, p = self.k, self.p
        hs, hsl = hsc
        cols, nf = p.group_cols(g), p.n_full_kt
        if k0 == 0 and nf:
            for q4 in range(4):
                k.dma(self.wq, 4, nf * cols, ("hbm", hs + 4 * q4 * nf * cols, nf * cols),
                      ("sbuf", 32 * q4, bank["sc"]))
        if k0 == nf:
            for q4 in range(p.kt[k0] // 32):
                k.dma(self.wq, 4, cols, ("hbm", hsl + 4 * q4 * cols, cols),
                      ("sbuf", 32 * q4, bank["sc"] + nf * cols))

    def load_a_through(self, ci):
        """The activation chunks up to ci (those not loaded yet)."""
        k, p = self.k, self.p
        while self.nload <= min(ci, len(self.achunks) - 1):
            g, mt, k0, k1 = self.achunks[self.nload]
            src, stride = k._a_src(mt, k0)
            k.dma(self.aqueue, p.kt[k0], 8 * p.mt[mt] * (k1 - k0), ("hbm", src, stride),
                  ("sbuf", 0, k.araw[self.nload % k.ra]))
            self.nload += 1

    def prep(self, u):
        """Unit u's QuantizeMX of its activation tile (once for every group when
        A is resident) and the widening of its weight tiles not yet widened."""
        k, p = self.k, self.p
        g, mt, kt = k.units[u]
        kp, ci = p.kt[kt], self.chunk_of[u]
        araw = k.araw[ci % k.ra] + 8 * p.mt[mt] * (kt - self.achunks[ci][2])
        if g == 0 or not k.a_resident:
            k.quantize(kp, araw, p.mt[mt], *k._aq(u))
        if p.spec["store"] == "mx":
            return
        # The widening reads the group's panel: its load comes first.
        self.load_panel(g)
        raw = k.banks[g % 2]["raw"] + kt * k._rb(g)
        for j, nt in enumerate(p.groups[g]):
            if (kt, nt) in self.prepared:
                continue
            self.prepared.add((kt, nt))
            wq, ws = k._tile_w(g, j, kt)
            k.widen((kt, nt), kp, raw + int(k.raw_cb * NTILE * j), wq, ws)

    def prep_through(self, last, group):
        """Prepares the units up to `last` that belong to groups up to `group`:
        the panel of group g + 2 goes into the bank group g reads, so no work
        of it may come before group g's last matmul."""
        units = self.k.units
        while self.nprep < len(units) and self.nprep <= last and units[self.nprep][0] <= group:
            self.prep(self.nprep)
            self.nprep += 1

    def start(self):
        """The unit scales, the first panel and the first activation chunks (all
        of A when resident), the first units' preparation."""
        k, p = self.k, self.p
        if k.unit_scales is not None:
            # The scale rows of the deepest K-tile (SPEC §4: 4 per 32 partitions).
            for q4 in range(max(p.kt) // 32):
                k.dma(self.wq, 4, NTILE, ("hbm", k.h_unit, NTILE),
                      ("sbuf", 32 * q4, k.unit_scales))
        if k.a_resident:
            # One queue, in the order of first use: the first M-tile's A chunk
            # before the weight K-tiles that use it, then the rest of A (the
            # queue runs ahead freely: nothing of it waits).
            def a_before(kt_end):
                while self.nload < len(self.achunks) and self.achunks[self.nload][1] == 0 and \
                        self.achunks[self.nload][2] < kt_end:
                    self.load_a_through(self.nload)
            self.load_panel(0, a_before)
            self.load_a_through(len(self.achunks) - 1)
        else:
            self.load_panel(0)
        self.load_a_through(self.ahead)
        self.prep_through(k.lookahead - 1, 1)

    def build(self):
        k, p = self.k, self.p
        self.start()
        nmt = len(p.mt)
        for u, (g, mt, kt) in enumerate(k.units):
            self.load_a_through(self.chunk_of[u] + self.ahead)
            if mt == min(1, nmt - 1) and kt == 0 and g + 1 < len(p.groups):
                # The next panel streams in while this one is used (from the second
                # M-tile on, not competing with this panel's own loads).
                self.load_panel(g + 1)
            self.prep_through(u + k.lookahead, g + 1)
            c = (g * nmt + mt) % k.rc
            # The result slot is free again once its previous store retired: the
            # M-tile's first ldweights follows that store, so that the evacuation
            # into the slot (which waits for the PE) needs no second wait.
            after = [self.store[c]] if kt == 0 and c in self.store else []
            k.pe_unit(u, k._aq(u), lambda j, kt: k._tile_w(g, j, kt), after)
            if kt == len(p.kt) - 1:
                self.drain(u, g, mt, c)

    def drain(self, u, g, mt, c):
        """The accumulator of (g, mt) copied into C slot c (the run's last by N-tile,
        each as its last matmul retires: the tail is one N-tile's copy, not the
        panel's), then stored to C in HBM (C's panels side by side in the
        slots and one store of all of C after the last, when c_merged)."""
        k, p = self.k, self.p
        gi = g * len(p.mt) + mt
        last = u == len(k.units) - 1
        for j in range(len(p.groups[g])) if last else (None,):
            k.evacuate(g, mt, gi, k.cslot[c], j)
        cols, n0 = p.group_cols(g), NTILE * p.groups[g][0]
        if p.c_merged():
            if not last:
                return
            c, cols, n0 = 0, p.npad, 0
        self.store[c] = k.dma(next(self.c_queues), p.mt[mt], 4 * cols, ("sbuf", 0, k.cslot[c]),
                              ("hbm", k.h_c + 4 * (MTILE * mt * p.npad + n0), 4 * p.npad))


def make_kernel(plan, core_or_caps, lookahead=2, placement="dma", queues=None, values=True):
    """The kernel of `plan` on a core (or for its Capacities), its sizes checked
    first (check_sizes)."""
    caps = (core_or_caps if isinstance(core_or_caps, Capacities)
            else capacities(core_or_caps))
    plan = check_sizes(plan, caps, placement, lookahead, values)
    return Kernel(plan, caps.sbuf, lookahead, placement, caps.hbm, queues)
