"""Lowering a traced kernel to a program (SPEC §17; docs/NKI.md "Lowering"):
HBM placement, SBUF / PSUM allocation by liveness (alloc.py), then each isa
call through one table entry (:data:`LOWER`) to the model's instructions on
the program builder (tpbsim.program), which derives the semaphores.

SPEC §18's calls (plain matmul, transposes, the Vector, Scalar and GpSimd
instructions) are lowered by lower_compute.py; what the model lacks there (an
operator, a function, an engine's form) is an NKIError naming the call and
the kernel's line.
"""

import numpy as np

from ..program import Builder, regions
from ..program import instructions as ins
from ..program import operands as op
from . import alloc, lower_compute, patterns
from .errors import NKIError
from .lowerbase import MAX_PIECES, PSUM_BANK, encode, too_many
from .tensor import HBM, NkiTensor

VIRT = 1 << 40                 # an on-chip partition in a virtual byte space (never merges)
ROW_LIMIT = 128                # rows of one DMA descriptor (SPEC §10)
LOAD_QUEUES = tuple(range(12))     # loads (into SBUF) in turn on dma0..dma11
STORE_QUEUES = tuple(range(12, 16))  # stores and other copies on dma12..dma15
HBM_ALIGN = 512


class Lowering:
    """One kernel's program: call :meth:`run`, then :attr:`builder` holds the
    instructions and :attr:`hbm` the HBM storages with their offsets."""

    def __init__(self, trace, sbuf_bytes, psum_bytes, progress=None, hbm_bytes=None):
        self.trace = trace
        self.hbm_bytes = hbm_bytes
        self.arch = trace.arch
        self.builder = Builder(trace.arch)
        self.sbuf_bytes, self.psum_bytes = sbuf_bytes, psum_bytes
        self.hbm = []             # HBM storages, placed
        self.hbm_top = 0
        self.consts = {}          # (dtype name, value bytes) -> Storage
        self._loads = self._stores = 0
        self._queue_of = {}       # ("load", dst tile) / ("store", src tile) -> queue
        self.progress = progress

    # ------------------------------------------------------------ placement
    def place_hbm(self, st):
        st.addr = self.hbm_top
        self.hbm_top += -(-max(st.nbytes, 1) // HBM_ALIGN) * HBM_ALIGN
        self.hbm.append(st)
        if self.hbm_bytes is not None and self.hbm_top > self.hbm_bytes:
            big = sorted(self.hbm, key=lambda s: -s.nbytes)[:8]
            raise NKIError("HBM exhausted", f"{st.describe()} ({st.nbytes} bytes) ends at HBM "
                           f"byte {self.hbm_top}, past the {self.hbm_bytes} bytes of the core's "
                           "HBM; the largest HBM tensors: "
                           + "; ".join(f"{s.describe()} {s.nbytes} B" for s in big), st.loc)

    def run(self):
        t = self.trace
        for kind in ("input", "output", "hbm", "scratch", "const"):
            for st in t.storages:
                if st.buffer.kind == "hbm" and st.kind == kind:
                    self.place_hbm(st)
        alloc.allocate(t, self.sbuf_bytes, self.psum_bytes)
        n = len(t.calls)
        for i, call in enumerate(t.calls):
            LOWER[call.op](self, call)
            if self.progress and i % 20000 == 19999:
                self.progress(f"lowered {i + 1} of {n} calls")
        return self

    def const_block(self, dt, value, nbytes):
        """An HBM constant of `value` in dtype `dt`, at least `nbytes` long."""
        elem = encode(dt, value)
        key = (dt.name, elem)
        st = self.consts.get(key)
        if st is None or st.nbytes < nbytes:
            count = -(-nbytes // dt.itemsize)
            st = self.trace.new_storage(HBM, (count,), dt, f"fill{len(self.consts)}", None,
                                        "const")
            st.host = np.frombuffer(elem * count, dtype=np.uint8)
            self.place_hbm(st)
            self.consts[key] = st
        return st

    def dma_queue(self, dst, src):
        """The DMA queue of a copy: loads (into SBUF) on dma0..dma11, the others
        on dma12..dma15, each set in turn by tile: every load into one tile
        (and every store out of one tile) goes to the queue that tile got first,
        so that its reader waits on one queue, not on one per piece."""
        if dst.storage.on_chip:
            key, queues = ("load", dst.storage.id), LOAD_QUEUES
        else:
            key, queues = ("store", src.storage.id), STORE_QUEUES
        q = self._queue_of.get(key)
        if q is None:
            n = self._loads if queues is LOAD_QUEUES else self._stores
            q = self._queue_of[key] = f"dma{queues[n % len(queues)]}"
            if queues is LOAD_QUEUES:
                self._loads += 1
            else:
                self._stores += 1
        return q

    # ------------------------------------------------------------ emit
    def emit(self, queue, mnemonic, fields, reads, writes, call):
        self.builder.add(queue, mnemonic, fields, reads, writes, call.where())


# ------------------------------------------------------------------ patterns of views

def virtual_bytes(view):
    """(base, dims) of a view in bytes: HBM bytes from the storage's start, on
    chip partition x VIRT + byte in the partition (so a dimension never spans
    partitions); the innermost dimension is an element's bytes."""
    st, es = view.storage, view.dtype.itemsize
    dims = [(s * es, n) for s, n in view.dims] + [(1, es)]
    if not st.on_chip:
        return st.addr + view.offset * es, dims
    p0, _, off, _ = view.partition_form()
    dims[0] = (VIRT, view.dims[0][1]) if view.dims else dims[0]
    return p0 * VIRT + st.addr + off, dims


def _endpoint(view, vaddr, stride):
    if view.storage.on_chip:
        p, b = divmod(vaddr, VIRT)
        return ("sbuf", p, b)
    return ("hbm", vaddr, stride)


def _row_ok(view, stride, dst):
    """Whether a dimension of this stride can be a descriptor's rows."""
    if view.storage.on_chip:
        return stride == VIRT
    return stride >= 0 if not dst else stride > 0


_PLANS = {}


def dma_plan(dst, src):
    """The descriptors of one copy: [(rows, row_bytes, src endpoint, dst endpoint)]."""
    sb, sd = virtual_bytes(src)
    db, dd = virtual_bytes(dst)
    key = (tuple(sd), tuple(dd), src.storage.on_chip, dst.storage.on_chip)
    rel = _PLANS.get(key)
    if rel is None:
        rel = _PLANS[key] = _relative_plan(sd, dd, src.storage.on_chip, dst.storage.on_chip)
        if len(_PLANS) > 4096:
            _PLANS.clear()
    return [(nr, run, _endpoint(src, sb + so, rs), _endpoint(dst, db + do, rd))
            for nr, run, so, rs, do, rd in rel]


class _Side:
    """What dma_plan asks of one side: on chip or not."""
    __slots__ = ("storage", "on_chip")

    def __init__(self, on_chip):
        self.storage = self
        self.on_chip = on_chip


def _relative_plan(sd, dd, src_chip, dst_chip):
    """dma_plan relative to the bases: [(rows, row_bytes, src offset, src row
    stride, dst offset, dst row stride)]."""
    src, dst = _Side(src_chip), _Side(dst_chip)
    inner, outer = patterns.joint(sd, dd)
    run = 1
    if inner and inner[-1][1] == 1 and inner[-1][2] == 1:
        run = inner[-1][0]
        inner = inner[:-1]
    row = None
    for k, (n, ss, ds) in enumerate(inner):
        if not (_row_ok(src, ss, False) and _row_ok(dst, ds, True)):
            continue
        if not dst.storage.on_chip and ds < run:
            continue            # HBM destination rows must not overlap
        if row is None or n > inner[row][0]:
            row = k
    rows, rs, rd = (1, 0, 0) if row is None else inner[row]
    rest = [d for k, d in enumerate(inner) if k != row]
    out = []
    for oa, ob in patterns.expand(outer, rest):
        for r0 in range(0, rows, ROW_LIMIT):
            nr = min(ROW_LIMIT, rows - r0)
            out.append((nr, run, oa + r0 * rs, rs if nr > 1 else 0, ob + r0 * rd,
                        rd if nr > 1 else 0))
        if len(out) > MAX_PIECES:
            break
    return out


def lower_dma(lw, call, dst, src):
    plan = dma_plan(dst, src)
    if len(plan) > MAX_PIECES:
        too_many(call, MAX_PIECES, "DMA descriptors")
    queue = lw.dma_queue(dst, src)
    for rows, row_bytes, s, d in plan:
        lw.emit(queue, *ins.dma_copy(rows, row_bytes, s, d), call)


def _dma_copy(lw, call):
    dst, (src,) = call.dst, call.srcs
    lower_dma(lw, call, dst, src)


# ------------------------------------------------------------------ compute operands

def t3d_fits(n, sa, sb):
    return n <= 0xFFFF and -0x8000 <= sa <= 0x7FFF and -0x8000 <= sb <= 0x7FFF


t3d_region = ins.pattern_region


def _t3d_text(mem, p, addr, dims):
    """t3d(...) of up to three dims (outermost first)."""
    inner = list(reversed(dims)) + [(0, 1)] * (3 - len(dims))
    return op.t3d(op.addr(mem, p, addr), [s for s, _ in inner], [n for _, n in inner])


def _memset(lw, call):
    dst = call.dst
    if call.engine != "dma":
        return lower_compute.memset(lw, call)
    if dst.storage.on_chip:
        parts = dst.dims[0][1]
        free = [n for _, n in dst.dims[1:]]
        count = int(np.prod(free)) if free else 1
        src_dims = [(0, parts)] + _contiguous(free)
    else:
        shape = [n for _, n in dst.dims]
        count = shape[-1]
        src_dims = [(0, n) for n in shape[:-1]] + [(1, shape[-1])]
    const = lw.const_block(dst.dtype, call.params["value"], count * dst.dtype.itemsize)
    lower_dma(lw, call, dst, NkiTensor(const, dst.dtype, 0, src_dims))


def _contiguous(shape):
    out, s = [], 1
    for n in reversed(shape):
        out.append((s, n))
        s *= n
    return list(reversed(out))


# ------------------------------------------------------------------ MX (SPEC §4, §5)

def _mx_operand(v):
    """(partition, byte address, words, word stride) of an MX data operand."""
    p0, parts, off, fd = v.partition_form()
    fd = patterns.squeeze(fd)
    words = v.size // v.shape[0]
    step = fd[0][0] if len(fd) == 1 else 1
    return p0, v.storage.addr + off, words, step, parts, len(fd) <= 1


def _scale_operand(data_p0, sc):
    """(quadrant start partition, scale_pidx, byte address) of a scale tile."""
    p0, _, off, _ = sc.partition_form()
    q0 = data_p0 - data_p0 % 32
    return q0, p0 - q0, sc.storage.addr + off


def _mx_check(call, ok, what):
    if not ok:
        raise NKIError("access pattern", f"{call.op}: {what} must be one run of x4 words per "
                       "partition (an MXTENSOR1D operand)", call.loc)


def _quantize_mx(lw, call):
    dst, sc = call.dst
    (src,) = call.srcs
    ps, parts, soff, sd = src.partition_form()
    sd = patterns.squeeze(sd)
    if len(sd) > 3 or not all(t3d_fits(n, s, 0) for s, n in sd):
        raise NKIError("access pattern", "quantize_mx: the source pattern needs more than the "
                       "three dimensions of one instruction", call.loc)
    pd, daddr, words, step, _, ok = _mx_operand(dst)
    _mx_check(call, ok and -128 <= step <= 127, "dst")
    q0, pidx, saddr = _scale_operand(pd, sc)
    sbyte = src.storage.addr + soff
    fields = (f"channels={parts} in_dtype={src.dtype.model} out_dtype={dst.dtype.model} "
              f"src={_t3d_text('sbuf', ps, sbyte, sd)} "
              f"dst={op.mx1d(op.sbuf(pd, daddr), op.sbuf(q0, saddr), words, step, pidx)}")
    reads = [t3d_region(regions.SBUF, ps, parts, sbyte, sd, src.dtype.itemsize)]
    writes = [regions.region(regions.SBUF, pd, pd + parts, daddr, daddr + words * 4 * step)]
    writes += ins.scale_regions(q0, pidx, parts, saddr, words)
    lw.emit("dve", "quantize_mx", fields, reads, writes, call)


def _nc_matmul_mx(lw, call):
    dst = call.dst
    st, mv, ss, ms = call.srcs
    acc = 1 if call.params["accumulate"] else 0
    dt = st.dtype.model
    k0, sa, m, sstep, kp, ok = _mx_operand(st)
    _mx_check(call, ok and sstep == 1, "stationary")
    mk0, ma, n, mstep, _, ok2 = _mx_operand(mv)
    _mx_check(call, ok2 and mstep == 1, "moving")
    ws = st.dtype.itemsize
    sq, spidx, ssa = _scale_operand(k0, ss)
    mq, mpidx, msa = _scale_operand(mk0, ms)
    pm0, pparts, poff, pd = dst.partition_form()
    if patterns.squeeze(pd) not in ([], [(1, n)]):
        raise NKIError("access pattern", "nc_matmul_mx: dst must be one run of FP32 per "
                       "partition", call.loc)
    paddr = dst.storage.addr + poff
    if lw.arch == "maverick" and (spidx or mpidx):
        raise NKIError("mx layout", "nc_matmul_mx on maverick: scales at an offset in their "
                       "quadrant are not lowered (MXTENSOR_V2 operands)", call.loc)
    lw.emit("pe", *ins.ldweights(lw.arch, dt, kp, m, (k0, sa), (sq, ssa), ws, spidx), call)
    c0 = 0
    while c0 < n:
        bank_left = (PSUM_BANK - (paddr + 4 * c0) % PSUM_BANK) // 4
        nc = min(512, n - c0, bank_left)
        lw.emit("pe", *ins.matmul(lw.arch, dt, kp, nc, acc, (mk0, ma + c0 * ws), (mq, msa + c0),
                                  ws, (pm0, paddr + 4 * c0), pparts, mpidx), call)
        c0 += nc


# One entry per isa call (docs/NKI.md prints this table); SPEC §18's calls in
# lower_compute.py.
LOWER = {
    "dma_copy": _dma_copy,
    "memset": _memset,
    "quantize_mx": _quantize_mx,
    "nc_matmul_mx": _nc_matmul_mx,
}

LOWER.update(lower_compute.LOWER)
