"""Tensors of a traced kernel: storages (what the allocator places) and views
(NKI's NkiTensor: a dtype, an element offset and an access pattern over a
storage). Nothing here holds data: a kernel is traced, then lowered.

Addressing (as NKI's ``.ap``): a storage is a row-major array of bytes; an
on-chip storage (SBUF, PSUM) of shape (P, ...) has P partitions of
``row_bytes`` each, and element e of a view of dtype D lies at byte
e x sizeof(D), in partition byte // row_bytes at offset byte % row_bytes. A
view's pattern is [[stride, count], ...] in elements of its dtype, the
partition dimension first on chip.
"""

import itertools
import math
import operator

from . import dtypes
from .errors import caller_loc, fail

ON_CHIP = ("sbuf", "psum")
# `view[...] = value`: nki.language's copy_into, set when it is imported (a
# copy or a fill is an isa call, which this module does not import).
ASSIGN = None


class Buffer(str):
    """nl.sbuf, nl.psum, nl.hbm, nl.shared_hbm, nl.private_hbm (a str, so
    ``buffer == "sbuf"`` holds); ``kind`` is the memory (sbuf, psum, hbm)."""

    def __new__(cls, name):
        b = super().__new__(cls, name)
        b.kind = "hbm" if name.endswith("hbm") else name
        return b


SBUF, PSUM = Buffer("sbuf"), Buffer("psum")
HBM, SHARED_HBM, PRIVATE_HBM = Buffer("hbm"), Buffer("shared_hbm"), Buffer("private_hbm")
_BUFFERS = {b: b for b in (SBUF, PSUM, HBM, SHARED_HBM, PRIVATE_HBM)}


def buffer_of(b, loc=None):
    """A Buffer from nl.sbuf & co. or their names (or an Enum with a value)."""
    b = getattr(b, "value", b)
    if isinstance(b, str) and b in _BUFFERS:
        return _BUFFERS[b]
    fail("buffer", f"{b!r} is not a buffer (nl.sbuf, nl.psum, nl.hbm, nl.shared_hbm, "
                   "nl.private_hbm)", loc)


class Storage:
    """What a tensor occupies. ``kind``: "input", "output" (returned), "hbm"
    (a kernel's own HBM tensor), "tile" (SBUF / PSUM), "const"; ``addr``: the
    allocator's byte offset (in every partition on chip; in HBM otherwise)."""

    __slots__ = ("id", "buffer", "shape", "dtype", "name", "loc", "kind", "partitions",
                 "row_bytes", "nbytes", "addr", "first", "last", "site", "written", "host",
                 "mm_written", "on_chip")
    _ids = itertools.count()

    def __init__(self, buffer, shape, dt, name, loc, kind="tile"):
        self.id = next(Storage._ids)
        self.buffer = buffer
        self.shape = tuple(shape)
        self.dtype = dt
        self.name = name
        self.loc = loc
        self.kind = kind
        n = math.prod(self.shape)
        self.on_chip = buffer.kind in ON_CHIP
        if self.on_chip:
            self.partitions = self.shape[0]
            self.row_bytes = math.prod(self.shape[1:]) * dt.itemsize
        else:
            self.partitions = 1
            self.row_bytes = n * dt.itemsize
        self.nbytes = n * dt.itemsize
        self.addr = None
        self.first = self.last = None     # call indices of first and last use
        self.site = None
        self.written = False
        self.host = None                  # an input's host array
        self.mm_written = None            # PSUM regions a matmul has written (accumulate=None)

    def describe(self):
        where = f" (line {self.loc[1]})" if self.loc else ""
        return (f"{self.name or 'tensor'} {list(self.shape)} {self.dtype.name} in "
                f"{self.buffer.kind}{where}")


def _contiguous_strides(shape):
    out, s = [], 1
    for n in reversed(shape):
        out.append(s)
        s *= n
    return tuple(reversed(out))


class NkiTensor:
    """A view of a storage (NKI's NkiTensor): ``shape``, ``dtype``, ``buffer``,
    ``strides``, ``offset`` (in elements of its dtype), ``name``, ``ndim``,
    ``size``; indexing, ``.ap``, ``.reshape`` and the other view operations
    return new views of the same storage."""

    __slots__ = ("storage", "dtype", "offset", "dims", "shape")

    def __init__(self, storage, dt=None, offset=0, dims=None):
        self.storage = storage
        self.dtype = dt or storage.dtype
        self.offset = offset
        if dims is None:
            dims = tuple(zip(_contiguous_strides(storage.shape), storage.shape))
        self.dims = tuple((int(s), int(n)) for s, n in dims)
        self.shape = tuple(n for _, n in self.dims)

    # ------------------------------------------------------------ attributes

    @property
    def strides(self):
        return tuple(s for s, _ in self.dims)

    @property
    def ndim(self):
        return len(self.dims)

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def buffer(self):
        return self.storage.buffer

    @property
    def name(self):
        return self.storage.name

    def __len__(self):
        return self.dims[0][1] if self.dims else 1

    def __repr__(self):
        return (f"NkiTensor({self.storage.name or 'tensor'}, shape={self.shape}, "
                f"dtype={self.dtype.name}, buffer={self.buffer})")

    def __iter__(self):
        raise TypeError("an NkiTensor holds no values at trace time; index it instead")

    def __bool__(self):
        raise TypeError("an NkiTensor holds no values at trace time (a condition on data "
                        "cannot steer a traced kernel)")

    def get_pattern(self):
        return [[s, n] for s, n in self.dims]

    def is_contiguous(self):
        dims = self.dims[1:] if self.storage.on_chip else self.dims
        expect = 1
        for s, n in reversed(dims):
            if n != 1 and s != expect:
                return False
            expect *= n
        return True

    # ------------------------------------------------------------ checks
    def _check_bounds(self, loc):
        """NKIError when the view reaches outside its storage."""
        st = self.storage
        if any(n <= 0 for _, n in self.dims):
            fail("slice outside its tensor", f"a view of {st.describe()} has an empty "
                 f"dimension (shape {self.shape})", loc)
        lo = hi = self.offset
        for s, n in self.dims:
            far = s * (n - 1)
            lo += min(0, far)
            hi += max(0, far)
        esize = self.dtype.itemsize
        if lo < 0 or (hi + 1) * esize > st.nbytes:
            fail("slice outside its tensor",
                 f"the access reaches elements {lo}..{hi} of {self.dtype.name} "
                 f"({lo * esize}..{(hi + 1) * esize - 1} bytes) of {st.describe()}, which "
                 f"holds {st.nbytes} bytes", loc)
        if st.on_chip and self.dims:
            s0, n0 = self.dims[0]
            if n0 > 1 and s0 * esize != st.row_bytes:
                fail("partition dimension", f"the first dimension of an on-chip view must "
                     f"step one partition ({st.row_bytes // esize} elements of "
                     f"{self.dtype.name}), not {s0}", loc)
            free_lo = free_hi = (self.offset * esize) % st.row_bytes
            for s, n in self.dims[1:]:
                far = s * (n - 1) * esize
                free_lo += min(0, far)
                free_hi += max(0, far)
            if free_lo < 0 or free_hi + esize > st.row_bytes:
                fail("slice outside its tensor",
                     f"the free dimensions reach bytes {free_lo}..{free_hi + esize - 1} of "
                     f"a partition of {st.describe()} ({st.row_bytes} bytes per partition)",
                     loc)
        return self

    def _new(self, offset, dims, dt=None, loc=None):
        return NkiTensor(self.storage, dt or self.dtype, offset, dims)._check_bounds(loc)

    # ------------------------------------------------------------ indexing
    def __getitem__(self, key):
        loc = None              # fail() finds the kernel's line when it is needed
        if not isinstance(key, tuple):
            key = (key,)
        if sum(1 for k in key if k is Ellipsis) > 1:
            fail("index", "at most one ... in an index", loc)
        n_real = sum(1 for k in key if k is not Ellipsis and k is not None)
        if n_real > self.ndim:
            fail("index", f"{n_real} indices for a tensor of {self.ndim} dimensions "
                 f"(shape {self.shape})", loc)
        full = []
        for k in key:
            if k is Ellipsis:
                full.extend([slice(None)] * (self.ndim - n_real))
            else:
                full.append(k)
        full.extend([slice(None)] * (self.ndim - sum(1 for k in full if k is not None)))
        offset, dims, d = self.offset, [], 0
        on_chip = self.storage.on_chip
        for k in full:
            if k is None:
                dims.append((0, 1))
                continue
            s, n = self.dims[d]
            if isinstance(k, DynSlice):
                k = slice(_slice_int(k.start, 0, d, loc),
                          _slice_int(k.start, 0, d, loc) + _slice_int(k.size, 0, d, loc))
            if isinstance(k, slice):
                start, stop, step = _slice_bounds(k, n, d, self, loc)
                count = max(0, -(-(stop - start) // step))
                if count == 0:
                    fail("slice outside its tensor", f"dimension {d} of {self.shape}: the "
                         f"slice {_slice_text(k)} selects nothing", loc)
                offset += start * s
                dims.append((s * step, count))
            else:
                i = _index(k, n, d, self, loc)
                offset += i * s
                if on_chip and d == 0:
                    dims.append((s, 1))        # the partition dimension stays
            d += 1
        if not dims:
            dims = [(1, 1)]
        return self._new(offset, dims, loc=loc)

    def __setitem__(self, key, value):
        ASSIGN(self[key], value, caller_loc())

    # ------------------------------------------------------------ views
    def ap(self, pattern=None, offset=None, scalar_offset=None, vector_offset=None,
           indirect_dim=0, dtype=None, **kw):
        loc = None
        if scalar_offset is not None or vector_offset is not None:
            fail("not modelled", "indirect access (.ap with scalar_offset / vector_offset) "
                 "is not lowered by tpbsim.nki yet", loc)
        if pattern is None:
            pattern = kw.pop("pattern", None)
        if pattern is None:
            fail("ap", "ap() needs a pattern [[stride, count], ...]", loc)
        dt = dtypes.lookup(dtype, "ap dtype") if dtype is not None else self.dtype
        base_bytes = self.offset * self.dtype.itemsize
        if base_bytes % dt.itemsize:
            fail("ap", f"the view's offset ({base_bytes} bytes) is not a whole number of "
                 f"{dt.name} elements", loc)
        off = base_bytes // dt.itemsize + (int(offset) if offset is not None else 0)
        try:
            dims = [(int(s), int(n)) for s, n in pattern]
        except (TypeError, ValueError):
            fail("ap", f"pattern {pattern!r} is not a list of [stride, count]", loc)
        return self._new(off, dims, dt, loc)

    def reshape(self, shape, *more):
        loc = None
        if more or isinstance(shape, int):
            shape = (shape, *more)
        shape = _infer_shape(tuple(int(n) for n in shape), self.size, loc)
        if self.storage.on_chip and shape[0] != self.shape[0]:
            fail("reshape", f"an on-chip tensor keeps its partition dimension: "
                 f"{self.shape} -> {shape}", loc)
        strides = _reshape_strides(self.dims, shape)
        if strides is None:
            fail("reshape", f"the layout of this view cannot be seen as {shape} without a "
                 f"copy (shape {self.shape}, strides {self.strides})", loc)
        return self._new(self.offset, list(zip(strides, shape)), loc=loc)

    def view(self, dt):
        loc = None
        dt = dtypes.lookup(dt, "view dtype")
        a, b = self.dtype.itemsize, dt.itemsize
        if a == b:
            return self._new(self.offset, self.dims, dt, loc)
        s_last, n_last = self.dims[-1]
        if s_last != 1 and n_last != 1:
            fail("view", "the last dimension must be contiguous to change the dtype", loc)
        if (self.offset * a) % b or (n_last * a) % b:
            fail("view", f"{n_last} elements of {self.dtype.name} are not a whole number "
                 f"of {dt.name}", loc)
        dims = [(s * a // b if (s * a) % b == 0 else _bad_stride(s, a, b, loc), n)
                for s, n in self.dims[:-1]]
        dims.append((1, n_last * a // b))
        return self._new(self.offset * a // b, dims, dt, loc)

    reinterpret_cast = view

    def permute(self, dims):
        loc = None
        dims = tuple(dims)
        if sorted(dims) != list(range(self.ndim)):
            fail("permute", f"{dims} is not a permutation of the {self.ndim} dimensions", loc)
        if self.storage.on_chip and dims[0] != 0:
            fail("permute", "an on-chip tensor keeps its partition dimension first", loc)
        return self._new(self.offset, [self.dims[d] for d in dims], loc=loc)

    def broadcast(self, dim, size):
        loc = None
        if self.dims[dim][1] != 1:
            fail("broadcast", f"dimension {dim} has size {self.dims[dim][1]}, not 1", loc)
        if self.storage.on_chip and dim == 0:
            fail("broadcast", "an on-chip view cannot broadcast its partition dimension "
                 "(nl.broadcast_to copies)", loc)
        dims = list(self.dims)
        dims[dim] = (0, int(size))
        return self._new(self.offset, dims, loc=loc)

    def expand_dim(self, dim):
        loc = None
        if self.storage.on_chip and dim == 0:
            fail("expand_dim", "an on-chip view keeps its partition dimension first", loc)
        dims = list(self.dims)
        dims.insert(dim, (0, 1))
        return self._new(self.offset, dims, loc=loc)

    def squeeze_dim(self, dim):
        loc = None
        if self.dims[dim][1] != 1 or (self.storage.on_chip and dim == 0):
            fail("squeeze_dim", f"dimension {dim} of {self.shape} cannot be removed", loc)
        return self._new(self.offset, self.dims[:dim] + self.dims[dim + 1:], loc=loc)

    def reshape_dim(self, dim, shape):
        shape = list(self.shape[:dim]) + list(shape) + list(self.shape[dim + 1:])
        if -1 in shape:
            known = math.prod(n for n in shape if n != -1)
            shape[shape.index(-1)] = self.size // known
        return self.reshape(tuple(shape))

    def flatten_dims(self, start_dim, end_dim):
        shape = (list(self.shape[:start_dim]) + [math.prod(self.shape[start_dim:end_dim + 1])]
                 + list(self.shape[end_dim + 1:]))
        return self.reshape(tuple(shape))

    def slice(self, dim, start, end, step=1):
        key = [slice(None)] * self.ndim
        key[dim] = slice(start, end, step)
        return self[tuple(key)]

    def select(self, dim, index):
        if not isinstance(index, int):
            fail("not modelled", "a dynamic select (an index held in a tensor) is not "
                 "lowered by tpbsim.nki yet", caller_loc())
        key = [slice(None)] * self.ndim
        key[dim] = index
        return self[tuple(key)]

    # ------------------------------------------------------------ lowering helpers
    def element_span(self):
        """(lowest, highest) element index the view touches."""
        lo = hi = self.offset
        for s, n in self.dims:
            far = s * (n - 1)
            lo += min(0, far)
            hi += max(0, far)
        return lo, hi

    def partition_form(self):
        """On chip: (first partition, partitions, byte offset in the partition,
        free dims [(stride, count)] in elements)."""
        st = self.storage
        esize = self.dtype.itemsize
        byte = self.offset * esize
        p0, off = divmod(byte, st.row_bytes)
        if self.dims:
            return p0, self.dims[0][1], off, list(self.dims[1:])
        return p0, 1, off, []


def _bad_stride(s, a, b, loc):
    fail("view", f"a stride of {s} elements of {a} bytes is not a whole number of the new "
         f"{b}-byte elements", loc)


def _index(k, n, d, view, loc):
    try:
        i = k.__index__()
    except (AttributeError, TypeError):
        fail("index", f"dimension {d}: {k!r} is not an integer, slice or nl.ds", loc)
    if i < 0:
        i += n
    if not 0 <= i < n:
        fail("slice outside its tensor", f"index {k} of dimension {d} is outside "
             f"0..{n - 1} (shape {view.shape})", loc)
    return i


def _slice_text(k):
    return f"{'' if k.start is None else k.start}:{'' if k.stop is None else k.stop}" + (
        f":{k.step}" if k.step not in (None, 1) else "")


def _slice_int(x, default, d, loc):
    """A bound or step of a slice: an integer (0.5 was truncated to 0)."""
    if x is None:
        return default
    try:
        return operator.index(x)
    except TypeError:
        fail("index", f"dimension {d}: a slice's bound or step {x!r} is not an integer", loc)


def _slice_bounds(k, n, d, view, loc):
    step = _slice_int(k.step, 1, d, loc)
    if step <= 0:
        fail("index", f"dimension {d}: a step must be positive, not {step}", loc)
    start = _slice_int(k.start, 0, d, loc)
    stop = _slice_int(k.stop, n, d, loc)
    if start < 0:
        start += n
    if stop < 0:
        stop += n
    if not (0 <= start <= n and 0 <= stop <= n):
        fail("slice outside its tensor", f"slice {_slice_text(k)} of dimension {d} is "
             f"outside 0..{n} (shape {view.shape})", loc)
    return start, stop, step


def _infer_shape(shape, size, loc):
    if shape.count(-1) > 1:
        fail("reshape", f"{shape}: at most one -1", loc)
    if -1 in shape:
        known = math.prod(n for n in shape if n != -1)
        shape = tuple(size // known if n == -1 else n for n in shape)
    if math.prod(shape) != size:
        fail("reshape", f"{size} elements cannot be shaped {shape}", loc)
    return shape


def _reshape_strides(dims, shape):
    """NumPy's no-copy reshape: the new strides, or None when the layout does
    not allow it."""
    old = [(s, n) for s, n in dims if n != 1]
    new_strides = []
    oi, ni = 0, 0
    new = list(shape)
    out = [0] * len(new)
    while oi < len(old) and ni < len(new):
        if new[ni] == 1:
            out[ni] = 0
            ni += 1
            continue
        # Take old dims oi..oj-1 and new dims ni..nj-1 of equal product.
        op, np_ = old[oi][1], new[ni]
        oj, nj = oi + 1, ni + 1
        while op != np_:
            if op < np_:
                if oj >= len(old):
                    return None
                op *= old[oj][1]
                oj += 1
            else:
                if nj >= len(new):
                    return None
                np_ *= new[nj]
                nj += 1
        for k in range(oi, oj - 1):
            if old[k][0] != old[k + 1][0] * old[k + 1][1]:
                return None
        s = old[oj - 1][0]
        for k in range(nj - 1, ni - 1, -1):
            out[k] = s
            s *= new[k]
        oi, ni = oj, nj
    while ni < len(new):
        if new[ni] != 1:
            return None
        out[ni] = 0
        ni += 1
    del new_strides
    return out


class DynSlice:
    """nl.ds(start, size)."""

    __slots__ = ("start", "size")

    def __init__(self, start, size):
        self.start = start
        self.size = size

    def __repr__(self):
        return f"ds({self.start}, {self.size})"
