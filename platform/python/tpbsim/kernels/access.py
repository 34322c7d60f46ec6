"""What a program really reads and writes, and whether its semaphores order it
(docs/KERNELS.md "Ordering").

Every access is derived from the instruction text itself: the operands'
addresses, partitions, shapes, steps and dtypes, with the engines' rules for
the bytes they touch (SPEC §4 and §5 for the MX scale rows, §10 for DMA rows,
§11 for tensor_copy). Nothing here is told which buffer an instruction means;
the generator's ordering (sched.py) and its checks (`verify`) see the same
bytes the model will read and write.

- `accesses(text)`: the accesses of one instruction, a list of `Access`
  (memory, read or write, rectangles of partitions x bytes).
- `Tracker`: the live accesses of a program in some order; for a new
  instruction, the earlier ones it conflicts with (read after write, write
  after read, write after write).
- `verify(program)`: the happens-before order the program's waits and updates
  give (vector clocks), then every conflict checked against it (a race), every
  read checked to be of bytes written before it (or by the host), every write
  checked to be read before it is overwritten or the program ends (a load whose
  data nobody uses is a load in the wrong place).
"""

import functools
import re
from collections import namedtuple

# Element bytes of the dtypes the GEMM's instructions name (SPEC §2).
DTYPE_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8_e3m4": 1,
               "fp8_e2m5": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4,
               "uint32": 4}
# The x4 word of an MX element type (4 contraction values; SPEC §5).
MX_WORD_BYTES = {"fp8_e4m3": 4, "fp8_e5m2": 4, "fp8_e3m4": 4, "fp8_e2m5": 4, "fp4_e2m1": 2,
                 "int4": 2}
PARTITIONS = 128

# A region of one memory: the partitions of the bit mask `pm` x bytes [lo, hi);
# with a stride, `rows` such byte ranges `stride` apart (HBM rows). HBM has one
# "partition" (bit 0); the PE's stationary weights are the memory "pe_weights".
Rect = namedtuple("Rect", "pm lo hi stride rows", defaults=(0, 1))
Access = namedtuple("Access", "mem write rects")


def rect(p0, p1, lo, hi):
    """Partitions p0..p1-1, bytes [lo, hi)."""
    return Rect(((1 << p1) - 1) ^ ((1 << p0) - 1), lo, hi)


def hbm_rect(lo, hi, stride=0, rows=1):
    """HBM bytes [lo, hi), or `rows` rows of hi - lo bytes `stride` apart."""
    if rows == 1 or stride == hi - lo:
        return Rect(1, lo, lo + (hi - lo) * (rows if stride else 1))
    return Rect(1, lo, hi, stride, rows)


class AccessError(ValueError):
    """An instruction whose accesses this module cannot derive."""


# ----------------------------------------------------------------- parsing

_TOKEN = re.compile(r"\s*(?:(?P<name>[A-Za-z_][A-Za-z_0-9]*)|(?P<num>-?(?:0x[0-9a-fA-F]+|\d+))"
                    r"|(?P<punct>[()\[\],=]))")


def _tokens(s):
    pos, out = 0, []
    while pos < len(s):
        m = _TOKEN.match(s, pos)
        if not m or m.end() == pos:
            if s[pos:].strip() == "":
                break
            raise AccessError(f"cannot read {s[pos:pos + 20]!r}")
        pos = m.end()
        if m.group("name"):
            out.append(("name", m.group("name")))
        elif m.group("num"):
            out.append(("num", int(m.group("num"), 0)))
        else:
            out.append(("p", m.group("punct")))
    return out


class _Parser:
    def __init__(self, toks):
        self.t, self.i = toks, 0

    def peek(self, k=0):
        return self.t[self.i + k] if self.i + k < len(self.t) else (None, None)

    def take(self, kind=None, value=None):
        tok = self.peek()
        if tok[0] is None or (kind and tok[0] != kind) or (value is not None and tok[1] != value):
            raise AccessError(f"unexpected {tok[1]!r}")
        self.i += 1
        return tok[1]

    def value(self):
        kind, v = self.peek()
        if kind == "num":
            return self.take()
        if kind == "p" and v == "[":
            self.take()
            items = []
            while self.peek() != ("p", "]"):
                items.append(self.value())
                if self.peek() == ("p", ","):
                    self.take()
            self.take("p", "]")
            return items
        if kind == "name":
            name = self.take()
            if self.peek() != ("p", "("):
                return name
            self.take()
            args, kw = [], {}
            while self.peek() != ("p", ")"):
                if self.peek()[0] == "name" and self.peek(1) == ("p", "="):
                    k = self.take()
                    self.take()
                    kw[k] = self.value()
                else:
                    args.append(self.value())
                if self.peek() == ("p", ","):
                    self.take()
            self.take("p", ")")
            return (name, args, kw)
        raise AccessError(f"unexpected {v!r}")


@functools.lru_cache(maxsize=1 << 16)
def parse(text):
    """One instruction line -> (mnemonic, {field: value}); values are ints, names,
    lists, or (form, args, kwargs) for operands such as sbuf(0, 0x40). The result
    is shared (cached): do not change it."""
    p = _Parser(_tokens(text.split("#", 1)[0]))
    mnemonic = p.take("name")
    fields = {}
    while p.peek()[0] is not None:
        k = p.take("name")
        p.take("p", "=")
        fields[k] = p.value()
    return mnemonic, fields


# ----------------------------------------------------------------- operands

def _addr(a, what):
    """sbuf(P, OFF) / psum(P, OFF) -> (memory, partition, offset)."""
    if not isinstance(a, tuple) or a[0] not in ("sbuf", "psum") or len(a[1]) != 2:
        raise AccessError(f"{what}: {a!r} is not sbuf(P, OFF) or psum(P, OFF)")
    return a[0], a[1][0], a[1][1]


def _runs(offsets, size):
    """Byte intervals covering elements at `offsets` of `size` bytes, merged."""
    out = []
    for o in sorted(set(offsets)):
        if out and o <= out[-1][1]:
            out[-1][1] = max(out[-1][1], o + size)
        else:
            out.append([o, o + size])
    return out


def _t3d(op, es, channels, what):
    """A TENSOR3D of `channels` partitions, elements of `es` bytes."""
    if not isinstance(op, tuple) or op[0] != "t3d":
        raise AccessError(f"{what}: {op!r} is not t3d(...)")
    mem, p, off = _addr(op[1][0], what)
    step = op[2].get("step", [1, 0, 0])
    num = op[2].get("num", [1, 1, 1])
    if num[1] == 1 and num[2] == 1 and step[0] == 1:
        runs = [[off, off + num[0] * es]]
    else:
        offs = [off + (i0 * step[0] + i1 * step[1] + i2 * step[2]) * es
                for i2 in range(num[2]) for i1 in range(num[1]) for i0 in range(num[0])]
        runs = _runs(offs, es)
    return mem, [rect(p, p + channels, lo, hi) for lo, hi in runs]


def _scale_rects(p_base, scale_pidx, rows, runs):
    """SPEC §4's scale rows of an MX tensor of `rows` partitions: block row b
    (partitions 8b..8b+7) at partition base + 32 (b / 4) + scale_pidx + b % 4,
    the scale bytes of its columns in the byte intervals `runs`."""
    pm = 0
    for b in range(rows // 8):
        pm |= 1 << (p_base + 32 * (b // 4) + scale_pidx + b % 4)
    return [Rect(pm, lo, hi) for lo, hi in runs]


def _mx_operand(op, rows, word, what):
    """An MX operand (mx1d(...) of v4, mx(...) of v5): the data rectangle(s) and
    the scale rectangles."""
    if not isinstance(op, tuple) or op[0] not in ("mx1d", "mx"):
        raise AccessError(f"{what}: {op!r} is not mx1d(...) or mx(...)")
    kw = op[2]
    dmem, dp, doff = _addr(kw["data"], what)
    smem, sp, soff = _addr(kw["scale"], what)
    if dmem != "sbuf" or smem != "sbuf":
        raise AccessError(f"{what}: MX operands are in SBUF")
    if op[0] == "mx1d":
        n, step = kw.get("num", 1), kw.get("step", 1)
        pidx = kw.get("scale_pidx", 0)
        if step == 1:                          # contiguous columns
            druns, sruns = [(0, n * word)], [(0, n)]
        else:
            druns = _runs([j * step * word for j in range(n)], word)
            sruns = [(0, n)]
    else:
        (n0, n1), n = kw.get("num", [1, 1]), None
        sd, ss = kw.get("step_data", 0), kw.get("step_scale", 0)
        n = n0 * n1
        pidx = 0
        if n1 == 1 or sd == n0:
            druns = [(0, n * word)]
        else:
            druns = _runs([(i0 + i1 * sd) * word for i1 in range(n1) for i0 in range(n0)], word)
        if n1 == 1 or ss == n0:
            sruns = [(0, n)]
        else:
            sruns = _runs([i0 + i1 * ss for i1 in range(n1) for i0 in range(n0)], 1)
    data = [rect(dp, dp + rows, doff + lo, doff + hi) for lo, hi in druns]
    scales = _scale_rects(sp, pidx, rows, [(soff + lo, soff + hi) for lo, hi in sruns])
    return data, scales, n


def _dma_end(e, rows, row_bytes, what):
    if not isinstance(e, tuple):
        raise AccessError(f"{what}: {e!r} is not a DMA endpoint")
    if e[0] == "sbuf":
        p, off = e[1]
        return "sbuf", [rect(p, p + rows, off, off + row_bytes)]
    if e[0] == "hbm":
        off, stride = e[1][0], e[2].get("stride", e[1][1] if len(e[1]) > 1 else 0)
        if stride == 0 and rows > 1:    # every row on the same bytes
            return "hbm", [hbm_rect(off, off + row_bytes)]
        if 0 < stride < row_bytes:      # rows that overlap: their span
            return "hbm", [hbm_rect(off, off + (rows - 1) * stride + row_bytes)]
        return "hbm", [hbm_rect(off, off + row_bytes, stride, rows)]
    raise AccessError(f"{what}: {e[0]}(...) endpoints are not modelled here")


@functools.lru_cache(maxsize=1 << 16)
def accesses(text, pe_cols=None):
    """The accesses of one instruction: a list of Access (shared: do not change
    it). `pe_cols`: the columns of the stationary weights the PE holds (a
    matmul writes that many PSUM partitions); None: taken as 128."""
    mnemonic, f = parse(text)
    return accesses_of(mnemonic, f, pe_cols)


def accesses_of(mnemonic, f, pe_cols=None):
    out = []
    if mnemonic == "dma_copy":
        rows, rb = f["rows"], f["row_bytes"]
        if f.get("rmw", "none") != "none":
            mem, r = _dma_end(f["dst"], rows, rb, "dst")
            out.append(Access(mem, False, r))
        for which, write in (("src", False), ("dst", True)):
            mem, r = _dma_end(f[which], rows, rb, which)
            out.append(Access(mem, write, r))
    elif mnemonic == "quantize_mx":
        ch = f["channels"]
        mem, r = _t3d(f["src"], DTYPE_BYTES[f.get("in_dtype", "fp32")], ch, "src")
        out.append(Access(mem, False, r))
        data, scales, _ = _mx_operand(f["dst"], ch, 4, "dst")
        out += [Access("sbuf", True, data), Access("sbuf", True, scales)]
    elif mnemonic == "tensor_dequantize":
        ch = f["channels"]
        for which, write in (("src", False), ("dst", True)):
            mem, r = _t3d(f[which], 4, ch, which)
            out.append(Access(mem, write, r))
    elif mnemonic == "tensor_copy":
        ch = f["channels"]
        mem, r = _t3d(f["src"], DTYPE_BYTES[f.get("in_dtype", "fp32")], ch, "src")
        out.append(Access(mem, False, r))
        mem, r = _t3d(f["dst"], DTYPE_BYTES[f["out_dtype"]], ch, "dst")
        out.append(Access(mem, True, r))
    elif mnemonic in ("ldweights_mx", "ldweights"):
        data, scales, _ = _mx_operand(f["src"], f["rows"], MX_WORD_BYTES[f["in_dtype"]], "src")
        out += [Access("sbuf", False, data), Access("sbuf", False, scales),
                Access("pe_weights", True, [Rect(1, 0, 1)])]
    elif mnemonic in ("matmul_mx", "matmul"):
        data, scales, _ = _mx_operand(f["src"], f["rows"], MX_WORD_BYTES[f["in_dtype"]], "src")
        out += [Access("sbuf", False, data), Access("sbuf", False, scales),
                Access("pe_weights", False, [Rect(1, 0, 1)])]
        mem, r = _t3d(f["dst"], 4, 128 if pe_cols is None else pe_cols, "dst")
        if f.get("acc", 0):
            out.append(Access(mem, False, r))
        out.append(Access(mem, True, r))
    else:
        raise AccessError(f"{mnemonic}: no access rule for this instruction")
    return out


def stationary_cols(mnemonic, f):
    """The stationary columns an ldweights loads (None for other instructions)."""
    return f["cols"] if mnemonic in ("ldweights_mx", "ldweights") else None


# ----------------------------------------------------------------- rectangles

def rect_bytes(r):
    """The bytes of a region (every partition, every row)."""
    return bin(r.pm).count("1") * (r.hi - r.lo) * r.rows


def _end(r):
    """One past the last byte of r's last row."""
    return r.lo + (r.rows - 1) * r.stride + (r.hi - r.lo) if r.stride else r.hi


def _hits(s, lo, hi):
    """Whether strided s has a byte in [lo, hi)."""
    w, st = s.hi - s.lo, s.stride
    j0 = max(0, -((s.lo + w - lo - 1) // st))   # ceil((lo - w + 1 - s.lo) / st)
    j1 = min(s.rows - 1, (hi - 1 - s.lo) // st)
    return j0 <= j1


def _rows(r):
    """r as rectangles without a stride."""
    if not r.stride:
        return [r]
    w = r.hi - r.lo
    return [Rect(r.pm, r.lo + j * r.stride, r.lo + j * r.stride + w) for j in range(r.rows)]


def _overlap(a, b):
    if not a.pm & b.pm:
        return False
    if not a.stride and not b.stride:
        return a.lo < b.hi and b.lo < a.hi
    if not (a.lo < _end(b) and b.lo < _end(a)):
        return False
    if a.stride and a.stride == b.stride:
        # Row i of a meets row i + k of b when -wb < d + kS < wa.
        d, st = b.lo - a.lo, a.stride
        k_lo = max((-(b.hi - b.lo) - d) // st + 1, 1 - a.rows)
        k_hi = min(-((d - (a.hi - a.lo)) // st) - 1, b.rows - 1)
        return k_lo <= k_hi
    if a.stride and (not b.stride or b.rows < a.rows):
        a, b = b, a
    return any(_hits(b, x.lo, x.hi) for x in _rows(a))


def _covers(a, b):
    """a contains b (False when it cannot tell: only pruning depends on it)."""
    if b.pm & ~a.pm:
        return False
    if not a.stride:
        return a.lo <= b.lo and _end(b) <= a.hi
    if b.stride not in (0, a.stride):
        return False
    j = (b.lo - a.lo) // a.stride
    row = a.lo + j * a.stride
    return (0 <= j and j + b.rows <= a.rows and row <= b.lo
            and b.lo + (b.hi - b.lo) <= row + (a.hi - a.lo))


def _minus(r, w):
    """The parts of r outside w."""
    if not _overlap(r, w):
        return [r]
    out = []
    for x in _rows(r):
        left = [x]
        for y in _rows(w):
            nxt = []
            for z in left:
                if not (z.pm & y.pm and z.lo < y.hi and y.lo < z.hi):
                    nxt.append(z)
                    continue
                if z.pm & ~y.pm:
                    nxt.append(Rect(z.pm & ~y.pm, z.lo, z.hi))
                if z.lo < y.lo:
                    nxt.append(Rect(z.pm & y.pm, z.lo, y.lo))
                if y.hi < z.hi:
                    nxt.append(Rect(z.pm & y.pm, y.hi, z.hi))
            left = nxt
        out += left
    return out


def _partitions(pm):
    """A partition mask as text: 0-31, 32-35,64-67."""
    out, p = [], 0
    while pm >> p:
        if pm >> p & 1:
            q = p
            while pm >> (q + 1) & 1:
                q += 1
            out.append(f"{p}-{q}" if q > p else f"{p}")
            p = q + 1
        else:
            p += 1
    return ",".join(out)


def _describe(mem, rects):
    r0 = rects[0]
    p = "" if mem in ("hbm", "pe_weights") else (
        f" partition{'s' if r0.pm & (r0.pm - 1) else ''} {_partitions(r0.pm)}")
    rows = f" in {r0.rows} rows {r0.stride} bytes apart" if r0.stride else ""
    more = f" (+{len(rects) - 1} more)" if len(rects) > 1 else ""
    return f"{mem}{p} bytes {r0.lo:#x}..{r0.hi - 1:#x}{rows}{more}"


# ----------------------------------------------------------------- tracking

class _Record:
    __slots__ = ("op", "engine", "write", "mem", "rect", "read_by", "buckets")

    def __init__(self, op, engine, write, mem, rect):
        self.op, self.engine, self.write, self.mem, self.rect = op, engine, write, mem, rect
        self.read_by = False
        self.buckets = ()


# Bucket widths (bytes) of the index of live accesses: SBUF / PSUM offsets are
# below 2^18, HBM offsets anything.
_SHIFT = {"sbuf": 12, "psum": 11, "hbm": 16, "pe_weights": 0}


class Tracker:
    """The live accesses of a program processed in some order. `touch(op, accs)`
    returns the earlier accesses the new ones conflict with, as (record, access)
    pairs, and records the new ones; a write drops the records it covers
    whole (they are ordered before it by the conflict)."""

    def __init__(self):
        self._index = {}         # (mem, bucket) -> {id(record): record}
        self._reads = {}         # (mem, rect, engine) -> the latest such read
        self.dead = []           # written, overwritten whole without a read
        self.host = []           # (mem, Rect) the host wrote before the program

    def _buckets(self, mem, rect):
        """The index buckets of a region: those of its bytes (of each row of a
        strided one, not of the span between rows: C's rows are far apart)."""
        s = _SHIFT.get(mem, 12)
        if not rect.stride:
            return [(mem, b) for b in range(rect.lo >> s, ((rect.hi - 1) >> s) + 1)]
        w, out = rect.hi - rect.lo, []
        for j in range(rect.rows):
            lo = rect.lo + j * rect.stride
            out += [(mem, b) for b in range(lo >> s, ((lo + w - 1) >> s) + 1)
                    if not out or out[-1] != (mem, b)]
        return out

    def _live(self, mem, rect):
        keys = self._buckets(mem, rect)
        if len(keys) == 1 and not rect.stride:
            pm, lo, hi = rect.pm, rect.lo, rect.hi
            return [rec for rec in self._index.get(keys[0], {}).values()
                    if rec.rect.pm & pm and rec.rect.lo < hi and lo < _end(rec.rect)
                    and (not rec.rect.stride or _overlap(rec.rect, rect))]
        seen = {}
        for key in keys:
            for rid, rec in self._index.get(key, {}).items():
                if rid not in seen and _overlap(rec.rect, rect):
                    seen[rid] = rec
        return list(seen.values())

    def overlapping(self, mem, rect):
        return self._live(mem, rect)

    def touch(self, op, accs, engine):
        """Conflicts of op's accesses (op on `engine`) with the live ones:
        [(record, write, rect)]. Of the reads of one rectangle by one engine only
        the latest is kept: an engine's later instruction implies its earlier
        ones (program order, and the semaphore counts retirements in order)."""
        found = [(a, r, [rec for rec in self._live(a.mem, r) if rec.op is not op])
                 for a in accs for r in a.rects]
        conflicts = [(rec, a.write, r) for a, r, live in found for rec in live
                     if a.write or rec.write]
        for a, r, live in found:
            if not a.write:
                for rec in live:
                    if rec.write:
                        rec.read_by = True
        for a, r, live in found:
            if a.write:
                for rec in live:
                    if _covers(r, rec.rect) and rec.buckets:
                        if rec.write and not rec.read_by:
                            self.dead.append(rec)
                        self._drop(rec)
            else:
                old = self._reads.get((a.mem, r, engine))
                if old is not None:
                    self._drop(old)
            self._add(_Record(op, engine, a.write, a.mem, r))
        return conflicts

    def add_host_write(self, mem, rect):
        """Bytes the host writes before the program runs (kept apart from the
        index: an HBM image of gigabytes would fill it)."""
        self.host.append((mem, rect))

    def read_at_end(self, mem, rect):
        """A read after the program (the host reading its results)."""
        for rec in self._live(mem, rect):
            if rec.write:
                rec.read_by = True

    def unread_writes(self):
        """Writes still live that nothing read (SBUF, PSUM, the PE's weights; HBM
        writes are results)."""
        out, seen = [], set()
        for bucket in self._index.values():
            for rid, rec in bucket.items():
                if rid not in seen and rec.write and not rec.read_by:
                    seen.add(rid)
                    out.append(rec)
        return out

    def _add(self, rec):
        rec.buckets = self._buckets(rec.mem, rec.rect)
        for key in rec.buckets:
            self._index.setdefault(key, {})[id(rec)] = rec
        if not rec.write:
            self._reads[(rec.mem, rec.rect, rec.engine)] = rec

    def _drop(self, rec):
        for key in rec.buckets:
            self._index.get(key, {}).pop(id(rec), None)
        rec.buckets = ()
        if not rec.write and self._reads.get((rec.mem, rec.rect, rec.engine)) is rec:
            del self._reads[(rec.mem, rec.rect, rec.engine)]


# ----------------------------------------------------------------- verification

_EVENT = re.compile(r"\s(wait|update)=([a-z]+)\(sem(\d+)(?:,\s*(\d+))?\)")


class Instruction:
    __slots__ = ("engine", "pos", "line", "text", "mnemonic", "fields", "wait", "updates",
                 "accs")

    def __init__(self, engine, pos, line, text):
        self.engine, self.pos, self.line = engine, pos, line
        self.wait, self.updates = None, []
        for m in _EVENT.finditer(text):
            kind, op, sem, val = m.groups()
            if kind == "wait":
                self.wait = (op, int(sem), int(val) if val is not None else 0)
            else:
                self.updates.append((op, int(sem)))
        self.text = _EVENT.sub("", text).strip()
        self.mnemonic, self.fields = parse(self.text)
        self.accs = None

    @property
    def name(self):
        return f"{self.engine}[{self.pos}] {self.mnemonic}"


def read_program(text):
    """Program text -> {engine: [Instruction]} in queue order."""
    queues, engine = {}, "pool"
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith(".arch"):
            continue
        if line.startswith(".engine"):
            engine = line.split()[1]
            continue
        if line.startswith("."):
            raise AccessError(f"line {n}: {line.split()[0]} is not checked here")
        q = queues.setdefault(engine, [])
        q.append(Instruction(engine, len(q), n, line))
    return queues


class Verdict:
    """What `verify` found. `hazards`: every pair of conflicting accesses on two
    queues, (earlier, later) Instructions, ordered or not; `races`,
    `uninitialized`, `unused`, `deadlock`: messages, empty when none."""

    def __init__(self):
        self.hazards, self.races, self.uninitialized, self.unused = [], [], [], []
        self.deadlock = None
        self.instructions = 0
        self.order = []           # the instructions in the order checked (happens-before)

    @property
    def problems(self):
        return (self.races + self.uninitialized + self.unused
                + ([self.deadlock] if self.deadlock else []))

    @property
    def ok(self):
        return not self.problems


def verify(text, host_writes=(), host_reads=()):
    """Checks a program against its own accesses (module docstring).

    host_writes / host_reads: (memory, Rect) the host writes before the run and
    reads after it. Every engine's semaphore is taken to be updated by that
    engine alone, each instruction adding 1 (the generator's scheme; a program
    outside it is refused with AccessError)."""
    queues = read_program(text)
    v = Verdict()
    sem_engine = {}
    for e, q in queues.items():
        for ins in q:
            for op, sem in ins.updates:
                if op != "inc" or sem_engine.setdefault(sem, e) != e:
                    raise AccessError(f"{ins.name} (line {ins.line}): sem{sem} is updated by "
                                      f"{sem_engine[sem]} and {e}, or not by inc: outside the "
                                      "scheme this check understands")
            if len(ins.updates) != 1:
                raise AccessError(f"{ins.name} (line {ins.line}): every instruction must "
                                  "increment its engine's semaphore")
    # Each engine's count of retired instructions is its semaphore's value.
    engines = list(queues)
    clock = {}                    # (engine, pos) -> vector clock at issue {engine: retired}
    nxt = {e: 0 for e in engines}
    order = []
    tracker = Tracker()
    for mem, r in host_writes:
        tracker.add_host_write(mem, r)
    progress = True
    while progress:
        progress = False
        for e in engines:
            q = queues[e]
            while nxt[e] < len(q):
                ins = q[nxt[e]]
                prev = clock.get((e, ins.pos - 1), {}) if ins.pos else {}
                known = dict(prev)
                if ins.pos:
                    known[e] = max(known.get(e, 0), ins.pos)
                if ins.wait is not None:
                    op, sem, val = ins.wait
                    we = sem_engine.get(sem)
                    if op not in ("ge",):
                        raise AccessError(f"{ins.name} (line {ins.line}): wait {op} is outside "
                                          "the scheme this check understands")
                    if val > 0:
                        if we is None or val > len(queues[we]):
                            v.deadlock = (f"{ins.name} (line {ins.line}) waits for sem{sem} >= "
                                          f"{val}, which no engine reaches")
                            break
                        if (we, val - 1) not in clock:
                            break     # its producer is not placed yet
                        done = dict(clock[(we, val - 1)])
                        done[we] = max(done.get(we, 0), val)
                        for k, c in done.items():
                            if known.get(k, 0) < c:
                                known[k] = c
                clock[(e, ins.pos)] = known
                order.append(ins)
                nxt[e] += 1
                progress = True
    stuck = [queues[e][nxt[e]] for e in engines if nxt[e] < len(queues[e])]
    if stuck and not v.deadlock:
        v.deadlock = "a cycle of waits: " + "; ".join(
            f"{i.name} waits for sem{i.wait[1]} >= {i.wait[2]}" for i in stuck)
    v.instructions = len(order)
    v.order = order

    def before(a, b, mem=None):
        """a happens before b: a's retire is known when b issues. Within a compute
        engine, program order; within a DMA queue too, except for HBM bytes: a
        queue orders its transfers per DMA engine only (SPEC §14), so two of its
        transfers on the same HBM bytes are ordered only by a semaphore."""
        if a.engine == b.engine:
            return not (mem == "hbm" and a.engine.startswith("dma"))
        return clock[(b.engine, b.pos)].get(a.engine, 0) > a.pos

    pe_cols = {}
    for ins in order:
        if ins.engine == "pe":
            c = stationary_cols(ins.mnemonic, ins.fields)
            if c is not None:
                pe_cols["pe"] = c
        ins.accs = accesses(ins.text, pe_cols.get("pe") if ins.engine == "pe" else None)
        # Uninitialized reads: the bytes read must be covered by writes that
        # happen before (or by the host).
        for a in ins.accs:
            if a.write:
                continue
            for r in a.rects:
                left = [r]
                for mem, h in tracker.host:
                    if mem == a.mem and _overlap(h, r):
                        left = [piece for x in left for piece in _minus(x, h)]
                for rec in tracker.overlapping(a.mem, r) if left else ():
                    if rec.write and rec.op is not ins and before(rec.op, ins):
                        left = [piece for x in left for piece in _minus(x, rec.rect)]
                        if not left:
                            break
                if left:
                    v.uninitialized.append(
                        f"{ins.name} (line {ins.line}) reads {_describe(a.mem, left)}, which "
                        "nothing wrote before it")
        for rec, write, r in tracker.touch(ins, ins.accs, ins.engine):
            other = rec.op
            if other.engine == ins.engine and before(other, ins, rec.mem):
                continue                    # program order
            v.hazards.append((other, ins))
            if not before(other, ins, rec.mem):
                kind = ("write after write" if write and rec.write else
                        "write after read" if write else "read after write")
                v.races.append(f"{ins.name} (line {ins.line}) and {other.name} (line "
                               f"{other.line}): {kind} on {_describe(rec.mem, [r])} with no "
                               f"semaphore ordering {ins.engine}[{ins.pos}] after "
                               f"{other.engine}[{other.pos}]")
    for mem, r in host_reads:
        tracker.read_at_end(mem, r)
    for rec in tracker.dead + tracker.unread_writes():
        if rec.mem == "hbm" and rec not in tracker.dead:
            continue
        v.unused.append(f"{rec.op.name} (line {rec.op.line}) writes "
                        f"{_describe(rec.mem, [rec.rect])}, which nothing reads before it is "
                        "overwritten or the program ends")
    # One pair once, in program order of the later instruction.
    seen, uniq = set(), []
    for a, b in v.hazards:
        k = (a.engine, a.pos, b.engine, b.pos)
        if k not in seen:
            seen.add(k)
            uniq.append((a, b))
    v.hazards = uniq
    return v

