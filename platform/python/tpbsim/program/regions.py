"""Byte footprints of instructions and the index of the live ones
(docs/NKI.md "The program builder").

A region is a tuple ``(mem, p0, p1, lo, hi, stride, rows, engine)``:

* ``mem``: ``SBUF``, ``PSUM`` or ``HBM`` (the ints below);
* ``p0 .. p1 - 1``: the partitions (HBM: 0 .. 0);
* in each partition (HBM: in the byte space), ``rows`` byte ranges
  ``[lo + r * stride, hi + r * stride)`` (``rows`` 1: one range);
* ``engine``: the DMA engine (0..15) that moves these bytes when a DMA queue
  accesses them (SPEC §10's split), None for a compute engine.

Regions are plain tuples so that making and comparing them costs little: a
kernel of 100k instructions makes some 300k of them.
"""

import bisect

SBUF, PSUM, HBM = 0, 1, 2
MEM_NAMES = ("sbuf", "psum", "hbm")
DMA_ENGINES = 16
PARTITIONS_PER_DMA_ENGINE = 128 // DMA_ENGINES



def region(mem, p0, p1, lo, hi, stride=0, rows=1, engine=None):
    """A region (see the module doc); one range when ``rows`` is 1."""
    if rows <= 1 or stride == 0:
        rows, stride = 1, 0
    elif stride == hi - lo:          # rows back to back: one range
        hi, rows, stride = lo + (hi - lo) * rows, 1, 0
    return (mem, p0, p1, lo, hi, stride, rows, engine)


def span(r):
    """[first byte, end byte) of a region's ranges (per partition)."""
    _, _, _, lo, hi, stride, rows, _ = r
    if rows == 1:
        return lo, hi
    far = (rows - 1) * stride
    return (lo + min(0, far), hi + max(0, far))


def _interval_meets_rows(x0, x1, r):
    """Whether [x0, x1) meets any range of region r (of rows, stride > 0)."""
    _, _, _, lo, hi, stride, rows, _ = r
    if stride < 0:
        lo, hi, stride = lo + (rows - 1) * stride, hi + (rows - 1) * stride, -stride
    # Range j = [lo + j s, hi + j s) meets [x0, x1) iff lo + j s < x1 and hi + j s > x0.
    jmin = max(0, (x0 - hi) // stride + 1)
    jmax = min(rows - 1, -((lo - x1) // stride) - 1)   # ceil((x1 - lo) / s) - 1
    return jmin <= jmax


def overlaps(a, b):
    """Whether two regions of the same memory share a byte."""
    if a[1] >= b[2] or b[1] >= a[2]:
        return False
    a0, a1 = span(a)
    b0, b1 = span(b)
    if a0 >= b1 or b0 >= a1:
        return False
    if a[6] == 1 and b[6] == 1:
        return True
    if a[6] == 1:
        return _interval_meets_rows(a[3], a[4], b)
    if b[6] == 1:
        return _interval_meets_rows(b[3], b[4], a)
    if a[5] == b[5] and a[5] > 0:
        # The same stride s: row i of a meets row j of b iff, with k = j - i,
        # -wb < (b0 - a0) + k s < wa.
        s, d = a[5], b[3] - a[3]
        kmin = max(-(a[6] - 1), (-(b[4] - b[3]) - d) // s + 1)
        kmax = min(b[6] - 1, -((d - (a[4] - a[3])) // s) - 1)
        return kmin <= kmax
    if a[6] > b[6]:
        a, b = b, a
    lo, hi, stride = a[3], a[4], a[5]
    return any(_interval_meets_rows(lo + j * stride, hi + j * stride, b) for j in range(a[6]))


def covers(a, b):
    """Whether region a holds every byte of region b (a conservative answer:
    False when unsure)."""
    if a[1] > b[1] or a[2] < b[2]:
        return False
    if a[6] != 1:
        return a[6] == b[6] and a[5] == b[5] and a[3] <= b[3] and b[4] <= a[4]
    b0, b1 = span(b)
    return a[3] <= b0 and b1 <= a[4]


class Record:
    """One live access of an earlier instruction."""

    __slots__ = ("inst", "queue", "write", "region", "key", "lo", "hi")

    def __init__(self, inst, queue, write, region, key, lo, hi):
        self.inst = inst        # global index of the instruction
        self.queue = queue      # its queue (an int)
        self.write = write
        self.region = region
        self.key = key          # (stride group or 0, size class, phase or start, serial)
        self.lo, self.hi = lo, hi   # its span


def _search(lists, lo, hi, recs, out):
    """Records of `lists` ({class: sorted [(key, serial)]}) whose key lies in
    [lo - 2^class, hi)."""
    for c, keys in lists.items():
        i = bisect.bisect_left(keys, (lo - (1 << c),))
        n = len(keys)
        while i < n:
            k, serial = keys[i]
            if k >= hi:
                break
            out.append(recs[serial])
            i += 1


class _Index:
    """Live records of one memory. A record of evenly spaced rows (stride s
    at least its row's width: a column tile of a row-major tensor) is held in
    the group of its stride, sorted by its phase (first byte mod s) in classes
    of row width, so that the tiles of one tensor meeting a tile of it are
    found by a bisection on the phase; any other record by its first byte in
    classes of span size (class c: span at most 2^c bytes, found among the
    records starting in [lo - 2^c, hi)). Either way a search is a bisection
    per class, whatever the number of records."""

    __slots__ = ("starts", "recs", "groups")

    def __init__(self):
        self.starts = {}        # class -> sorted [(first byte, serial)]
        self.recs = {}          # serial -> Record
        self.groups = {}        # stride -> [ {class: sorted [(phase, serial)]}, lo, hi ]

    def meeting(self, lo, hi, region=None):
        """Records whose span meets [lo, hi) (for a strided `region` in its
        stride's group: only those its rows' phases meet). Each once."""
        out = []
        recs = self.recs
        _search(self.starts, lo, hi, recs, out)
        if not self.groups:
            return out
        s_q = region[5] if region is not None and region[6] > 1 else 0
        found = []
        for s, (phases, spans, glo, ghi) in self.groups.items():
            if glo >= hi or lo >= ghi:
                continue
            if s == s_q and region[4] - region[3] <= s:
                q0 = region[3] % s
                q1 = q0 + region[4] - region[3]
                _search(phases, q0, q1, recs, found)
                if q1 > s:                      # the row wraps past the stride
                    _search(phases, 0, q1 - s, recs, found)
                if q0 < 1 << max(phases, default=0):    # rows wrapping onto q0
                    _search(phases, q0 + s, s + 1, recs, found)
            else:
                _search(spans, lo, hi, recs, found)
        if found:
            seen = set()
            for r in found:
                if r.key[3] not in seen:
                    seen.add(r.key[3])
                    out.append(r)
        return out

    def starting_at(self, lo):
        """The records whose span starts at byte lo."""
        return [r for r in self.meeting(lo, lo + 1) if r.lo == lo]

    def insert(self, rec):
        s, c, pos, serial = rec.key
        self.recs[serial] = rec
        if s:
            g = self.groups.get(s)
            if g is None:
                g = self.groups[s] = [{}, {}, rec.lo, rec.hi]
            g[2], g[3] = min(g[2], rec.lo), max(g[3], rec.hi)
            bisect.insort(g[0].setdefault(c, []), (pos, serial))
            bisect.insort(g[1].setdefault(_span_class(rec), []), (rec.lo, serial))
        else:
            bisect.insort(self.starts.setdefault(c, []), (pos, serial))

    def remove(self, rec):
        s, c, pos, serial = rec.key
        if s:
            g = self.groups[s]
            _unlist(g[0], c, (pos, serial))
            _unlist(g[1], _span_class(rec), (rec.lo, serial))
        else:
            _unlist(self.starts, c, (pos, serial))
        del self.recs[serial]


def _span_class(rec):
    return max(0, (rec.hi - rec.lo - 1).bit_length())


def _unlist(lists, c, item):
    keys = lists[c]
    del keys[bisect.bisect_left(keys, item)]
    if not keys:
        del lists[c]


class Tracker:
    """The live accesses of a program in program order. For a new access,
    :meth:`conflicts` gives the earlier ones it conflicts with (read after
    write, write after read, write after write); :meth:`add` records it. A
    write drops the records it covers whole: whatever is ordered after the
    write is ordered after them (the write was ordered after each, by a wait
    or by its queue's program order). A read of the same bytes by the same
    queue and DMA engine replaces an older one (a wait for the newer implies
    the older: a queue completes in order). Reads and writes are indexed
    apart: a read looks only among the writes."""

    def __init__(self):
        self._mems = {}
        self._serial = 0

    def _index(self, mem):
        ix = self._mems.get(mem)
        if ix is None:
            ix = self._mems[mem] = (_Index(), _Index())      # writes, reads
        return ix

    def conflicts(self, region, write):
        """[Record] of earlier accesses that conflict with this one."""
        ix = self._mems.get(region[0])
        if ix is None:
            return []
        lo, hi = span(region)
        found = ix[0].meeting(lo, hi, region)
        if write:
            found += ix[1].meeting(lo, hi, region)
        p0, p1, simple = region[1], region[2], region[6] == 1
        out = []
        for rec in found:
            r = rec.region
            if r[1] >= p1 or p0 >= r[2] or rec.lo >= hi or lo >= rec.hi:
                continue
            if (simple and r[6] == 1) or overlaps(r, region):
                out.append(rec)
        return out

    def add(self, inst, queue, write, region):
        writes, reads = self._index(region[0])
        lo, hi = span(region)
        if write:
            p0, p1 = region[1], region[2]
            for ix in (writes, reads):
                for rec in ix.meeting(lo, hi, region):
                    r = rec.region
                    if (p0 <= r[1] and r[2] <= p1 and lo <= rec.lo and rec.hi <= hi
                            and covers(region, r)):
                        ix.remove(rec)
        else:
            engine = region[7]
            for rec in reads.starting_at(lo):
                if rec.queue == queue and rec.region[7] == engine and covers(region, rec.region):
                    reads.remove(rec)
        self._serial += 1
        width = region[4] - region[3]
        if region[6] > 1 and 0 < width <= region[5]:    # evenly spaced rows: by phase
            key = (region[5], max(0, (width - 1).bit_length()), region[3] % region[5],
                   self._serial)
        else:
            key = (0, max(0, (hi - lo - 1).bit_length()), lo, self._serial)
        rec = Record(inst, queue, write, region, key, lo, hi)
        (writes if write else reads).insert(rec)

    def live(self):
        """How many records the index holds (for tests and benchmarks)."""
        return sum(len(w.recs) + len(r.recs) for w, r in self._mems.values())


# ------------------------------------------------------------------ DMA rows
# A DMA access carries an engine map (region[7]) instead of one region per
# DMA engine: (mode, base, row_bytes) says which engine moves each byte (SPEC
# §10: engine e moves the rows of SBUF partitions 8e..8e+7 of the side that
# decides, HBM -> HBM rows round robin). Mode 0: an SBUF side, engine of
# partition p = p // 8 (base: what to add to p first); mode 1: an HBM side
# whose row j goes with SBUF partition base + j; mode 2: an HBM -> HBM side
# whose row j is the descriptor's row base + j. :func:`engine_pieces` splits
# a region by engine when two accesses of one DMA queue meet.

def dma_engine_of_row(src_kind, src_part, dst_kind, dst_part, row):
    """SPEC §10's split (isa::dma_engine_of_row): the SBUF source's partition
    (a store, an SBUF -> SBUF copy), else the SBUF destination's (a load), / 8;
    HBM -> HBM rows round robin."""
    if src_kind == "sbuf":
        return ((src_part + row) // PARTITIONS_PER_DMA_ENGINE) % DMA_ENGINES
    if dst_kind == "sbuf":
        return ((dst_part + row) // PARTITIONS_PER_DMA_ENGINE) % DMA_ENGINES
    return row % DMA_ENGINES


def dma_regions(rows, row_bytes, src, dst):
    """The footprint of one DMA descriptor: ([read], [write]), each region with
    its engine map. ``src`` / ``dst``: ``("hbm", offset, stride)`` or
    ``("sbuf", partition, offset)``."""
    if src[0] == "sbuf":
        lead = src[1]
    elif dst[0] == "sbuf":
        lead = dst[1]
    else:
        lead = None
    return ([_endpoint_region(src, rows, row_bytes, lead)],
            [_endpoint_region(dst, rows, row_bytes, lead)])


def _endpoint_region(ep, rows, row_bytes, lead):
    if ep[0] == "sbuf":
        return (SBUF, ep[1], ep[1] + rows, ep[2], ep[2] + row_bytes, 0, 1,
                (0, lead - ep[1], row_bytes))
    eng = (2, 0, row_bytes) if lead is None else (1, lead, row_bytes)
    off, stride = ep[1], ep[2]
    r = region(HBM, 0, 1, off, off + row_bytes, stride, rows)
    return r[:7] + (eng,)


def _rows_of(r):
    """(first byte, row bytes, stride, rows) of an HBM DMA region."""
    rb = r[7][2]
    if r[6] > 1 or r[5]:
        return r[3], r[4] - r[3], r[5], r[6]
    n = (r[4] - r[3]) // rb if rb else 1
    return r[3], rb, rb, max(1, n)


def engine_pieces(r):
    """[(engine, region)] of a DMA access: its bytes split by the DMA engine
    that moves them."""
    mode, base, _ = r[7]
    out = []
    if mode == 0:
        p = r[1]
        while p < r[2]:
            e = (p + base) // PARTITIONS_PER_DMA_ENGINE
            end = min(r[2], (e + 1) * PARTITIONS_PER_DMA_ENGINE - base)
            out.append((e % DMA_ENGINES, (r[0], p, end) + r[3:7] + (None,)))
            p = end
        return out
    lo, rb, stride, n = _rows_of(r)
    if mode == 1:
        j = 0
        while j < n:
            e = (base + j) // PARTITIONS_PER_DMA_ENGINE
            k = min(n, (e + 1) * PARTITIONS_PER_DMA_ENGINE - base)
            out.append((e % DMA_ENGINES,
                        region(r[0], 0, 1, lo + j * stride, lo + j * stride + rb, stride, k - j)))
            j = k
        return out
    for e in range(min(n, DMA_ENGINES)):
        cnt = (n - e + DMA_ENGINES - 1) // DMA_ENGINES
        a = lo + e * stride
        out.append(((base + e) % DMA_ENGINES,
                    region(r[0], 0, 1, a, a + rb, stride * DMA_ENGINES, cnt)))
    return out


def cross_engine(a, b):
    """Whether two DMA accesses of one queue share a byte moved by different
    DMA engines (those need a wait: a queue orders its transfers per engine)."""
    pa, pb = engine_pieces(a), engine_pieces(b)
    return any(ea != eb and overlaps(ra, rb) for ea, ra in pa for eb, rb in pb)
