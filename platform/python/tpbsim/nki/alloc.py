"""SBUF and PSUM placement by liveness (docs/NKI.md "Allocation").

A tile lives from the first call that uses it to the last; its bytes (the
same offset in every partition) are reused only after that. Each tile is
placed first-fit among the free byte ranges, except the range the last tile
of the same allocation site (the kernel line that made it) left: that one is
held back while the site makes its next tile, so consecutive iterations of a
loop alternate between two buffers (double buffering: iteration i + 1's loads
do not wait for iteration i's compute). When that does not fit, the held
ranges are given back (single buffering); when nothing fits, NKIError names
the line and the live tiles. PSUM is placed in whole 2 KiB banks (a matmul
writes within one bank).
"""

from .errors import NKIError

SBUF_ALIGN = 64
PSUM_BANK = 2048


class Arena:
    def __init__(self, capacity, align):
        self.capacity = capacity
        self.align = align
        self.free = [(0, capacity)]     # sorted, disjoint [start, end)
        self.held = {}                  # site -> (start, end) held back

    def size_of(self, nbytes):
        a = self.align
        return max(a, -(-nbytes // a) * a)

    def alloc(self, nbytes, site):
        size = self.size_of(nbytes)
        got = self._first_fit(size)
        if got is None and self.held:
            for block in self.held.values():
                self._give(block)
            self.held.clear()
            got = self._first_fit(size)
        return got

    def _first_fit(self, size):
        for i, (s, e) in enumerate(self.free):
            if e - s >= size:
                if e - s == size:
                    del self.free[i]
                else:
                    self.free[i] = (s + size, e)
                return (s, s + size)
        return None

    def release(self, block, site):
        prev = self.held.get(site)
        self.held[site] = block
        if prev is not None:
            self._give(prev)

    def _give(self, block):
        s, e = block
        free = self.free
        lo, hi = 0, len(free)
        while lo < hi:
            mid = (lo + hi) // 2
            if free[mid][0] < s:
                lo = mid + 1
            else:
                hi = mid
        free.insert(lo, (s, e))
        # Coalesce with the neighbours.
        if lo + 1 < len(free) and free[lo][1] == free[lo + 1][0]:
            free[lo] = (free[lo][0], free[lo + 1][1])
            del free[lo + 1]
        if lo > 0 and free[lo - 1][1] == free[lo][0]:
            free[lo - 1] = (free[lo - 1][0], free[lo][1])
            del free[lo]


def allocate(trace, sbuf_bytes, psum_bytes):
    """Places every SBUF / PSUM tile the calls use (Storage.addr); NKIError when
    the live tiles do not fit."""
    arenas = {"sbuf": Arena(sbuf_bytes, SBUF_ALIGN), "psum": Arena(psum_bytes, PSUM_BANK)}
    starts, ends = {}, {}
    for st in trace.storages:
        if st.on_chip and st.first is not None:
            starts.setdefault(st.first, []).append(st)
            ends.setdefault(st.last, []).append(st)
    live = {}
    for i, call in enumerate(trace.calls):
        for st in starts.get(i, ()):
            arena = arenas[st.buffer.kind]
            site = (st.site, st.nbytes)
            block = arena.alloc(st.row_bytes, site)
            if block is None:
                _exhausted(st, arena, live, call)
            st.addr = block[0]
            live[st.id] = (st, block, site)
        for st in ends.get(i, ()):
            _, block, site = live.pop(st.id)
            arenas[st.buffer.kind].release(block, site)
    return arenas


def _exhausted(st, arena, live, call):
    kind = st.buffer.kind
    tiles = [x for x, _, _ in live.values() if x.buffer.kind == kind]
    used = sum(b[1] - b[0] for x, b, _ in live.values() if x.buffer.kind == kind)
    listing = "; ".join(f"{x.describe()} {x.row_bytes} B/partition" for x in tiles[:12])
    more = f"; and {len(tiles) - 12} more" if len(tiles) > 12 else ""
    raise NKIError(
        f"{kind.upper()} exhausted",
        f"{st.describe()} needs {arena.size_of(st.row_bytes)} bytes per partition; "
        f"{used} of {arena.capacity} are held by {len(tiles)} live tiles: {listing}{more}",
        st.loc or call.loc)
