"""The trace of one kernel call: its isa calls in program order, the storages
they touch, and the generation it is traced for."""

import operator
from . import dtypes
from .errors import NKIError, caller_loc, fail
from .tensor import NkiTensor, Storage, buffer_of

PMAX = 128      # partitions (nl.tile_size.pmax)
_current = []


def active():
    """Whether a kernel is being traced."""
    return bool(_current)


def current():
    """The trace being recorded (NKIError outside a kernel)."""
    if not _current:
        fail("outside a kernel", "nki.language and nki.isa calls run inside a kernel traced "
             "by tpbsim.nki (call the @nki.jit function, nki.simulate or nki.profile)")
    return _current[-1]


class Call:
    """One isa call: its name, engine, operands (views), parameters and the
    kernel's line."""

    __slots__ = ("op", "engine", "dst", "srcs", "params", "loc", "index")

    def __init__(self, op, engine, dst, srcs, params, loc, index):
        self.op = op
        self.engine = engine
        self.dst = dst            # NkiTensor or tuple of them (None: no output)
        self.srcs = srcs          # tuple of NkiTensor
        self.params = params      # dict
        self.loc = loc
        self.index = index

    def views(self):
        out = list(self.srcs)
        if isinstance(self.dst, tuple):
            out.extend(self.dst)
        elif self.dst is not None:
            out.append(self.dst)
        return out

    def where(self):
        return f"{self.loc[0]}:{self.loc[1]}" if self.loc else None


class Trace:
    def __init__(self, arch, kernel_name="kernel"):
        self.arch = arch
        self.version = dtypes.ARCH_VERSION[arch]
        self.kernel_name = kernel_name
        self.calls = []
        self.storages = []
        self.names = {}
        self.progress = None      # a callback told every 50000 calls

    def __enter__(self):
        _current.append(self)
        return self

    def __exit__(self, *exc):
        _current.remove(self)

    def new_storage(self, buffer, shape, dt, name, loc, kind):
        if not name:
            n = self.names.get(kind, 0)
            self.names[kind] = n + 1
            name = f"{kind}{n}"
        st = Storage(buffer, shape, dt, name, loc, kind)
        self.storages.append(st)
        return st

    def record(self, op, engine, dst, srcs, params=None, loc=None):
        """Appends a call; returns it."""
        i = len(self.calls)
        call = Call(op, engine, dst, tuple(srcs), params or {}, loc or caller_loc(3), i)
        for v in call.views():
            st = v.storage
            if st.first is None:
                st.first = i
            st.last = i
        for d in (dst if isinstance(dst, tuple) else (dst,)):
            if d is not None:
                d.storage.written = True
        self.calls.append(call)
        if self.progress and i % 50000 == 49999:
            self.progress(f"traced {i + 1} isa calls")
        return call


def tensor_of(x, what, loc):
    """An operand that must be a tensor."""
    if isinstance(x, NkiTensor):
        return x
    raise NKIError("operand", f"{what} must be a tensor, not {type(x).__name__}", loc)


def norm_shape(shape, loc):
    """A shape as a tuple of positive ints (an int is one dimension)."""
    if isinstance(shape, int):
        shape = (shape,)
    try:
        shape = tuple(operator.index(n) for n in shape)
    except (TypeError, ValueError):
        fail("shape", f"{shape!r} is not a shape", loc)
    if not shape or any(n <= 0 for n in shape):
        fail("shape", f"{shape} is not a shape of positive sizes", loc)
    return shape


def new_tensor(shape, dt, buffer, name, loc, kind=None):
    """A new tensor of the trace: its storage, checked (the shape, the dtype on
    this generation, at most 128 partitions on chip)."""
    t = current()
    buf = buffer_of(buffer, loc)
    shape = norm_shape(shape, loc)
    dt = dtypes.lookup(dt)
    dtypes.check_arch(dt, t.arch, f"tensor {name or ''}".strip(), loc)
    if buf.kind in ("sbuf", "psum") and shape[0] > PMAX:
        fail("partition dimension over 128",
             f"{buf.kind} tensor {shape}: its first (partition) dimension is {shape[0]}, more "
             f"than the {PMAX} partitions (nl.tile_size.pmax)", loc)
    kind = kind or ("tile" if buf.kind in ("sbuf", "psum") else "hbm")
    st = t.new_storage(buf, shape, dt, name, loc, kind)
    st.site = loc
    return NkiTensor(st)
