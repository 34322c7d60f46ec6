"""Host data in and out of a kernel: NumPy arrays, torch tensors, ml_dtypes
arrays and raw-bit stand-ins (docs/NKI.md "Data in and out")."""

import numpy as np

from .. import numerics
from . import dtypes
from .errors import NKIError

try:                                   # optional: not on every machine
    import ml_dtypes as _ml
except ImportError:                     # pragma: no cover - depends on the host
    _ml = None


class bits:
    """A raw-bit stand-in for a type NumPy lacks: ``bits(array, nl.bfloat16)``
    passes a uint16 array holding BF16 codes (uint8 for the FP8 types, uint32
    for the x4 types), and outputs of such a run come back as raw bits too."""

    def __init__(self, array, dtype):
        self.dtype = dtypes.lookup(dtype, "bits dtype")
        a = _native(np.asarray(array))
        if a.dtype != self.dtype.bits:
            raise NKIError("input", f"bits(): a {self.dtype.name} stand-in holds its raw bits as "
                           f"{self.dtype.bits.name}, not {a.dtype.name}")
        self.array = a

    @property
    def shape(self):
        return self.array.shape


class HostArray:
    """One input: its raw bytes, NKI dtype, shape, kind and the caller's object."""

    __slots__ = ("name", "raw", "dtype", "shape", "kind", "orig")

    def __init__(self, name, raw, dt, shape, kind, orig):
        self.name, self.raw, self.dtype, self.shape, self.kind, self.orig = (
            name, raw, dt, tuple(shape), kind, orig)


def _native(a):
    """The array in the host's byte order (a big-endian '>f4' array holds the
    same values, its bytes swapped: the core reads little-endian elements)."""
    if a.dtype.byteorder not in ("=", "|") and a.dtype.byteorder != _HOST_ORDER:
        return a.astype(a.dtype.newbyteorder("="))
    return a


_HOST_ORDER = "<" if np.little_endian else ">"


def _is_torch(x):
    return type(x).__module__.startswith("torch") and hasattr(x, "detach")


def is_array(x):
    return isinstance(x, (np.ndarray, bits)) or _is_torch(x)


def host_array(name, x):
    """A HostArray of a kernel argument, or NKIError."""
    if isinstance(x, bits):
        a = np.ascontiguousarray(x.array)
        return HostArray(name, a.view(np.uint8).reshape(-1), x.dtype, a.shape, "bits", x)
    if _is_torch(x):
        return _from_torch(name, x)
    a = _native(np.ascontiguousarray(x))
    if a.dtype == np.float64:
        raise NKIError("input dtype", f"input {name!r} is float64, which NKI has no type for "
                       "(pass float32)")
    try:
        dt = dtypes.lookup(a.dtype, f"input {name!r}")
    except NKIError as e:
        raise NKIError("input dtype", e.detail) from None
    kind = "ml" if a.dtype.name in dtypes.ML_DTYPES and dt.np is None else "numpy"
    return HostArray(name, a.view(np.uint8).reshape(-1), dt, a.shape, kind, x)


def _from_torch(name, t):
    import torch
    if t.requires_grad:
        t = t.detach()
    if t.layout != torch.strided:
        raise NKIError("input", f"input {name!r} is a {str(t.layout).replace('torch.', '')} "
                       "tensor; a kernel takes a dense one (pass .to_dense())")
    if t.device.type == "meta":
        raise NKIError("input", f"input {name!r} is a tensor on the meta device, which holds "
                       "no data")
    t = t.cpu().contiguous()
    tname = str(t.dtype).replace("torch.", "")
    if tname == "float64":
        raise NKIError("input dtype", f"input {name!r} is torch.float64, which NKI has no type "
                       "for (pass float32)")
    dt = dtypes.lookup(tname, f"input {name!r}")
    if t.dtype == torch.bool:
        raw = t.to(torch.uint8).numpy()
    else:
        raw = t.view(getattr(torch, {1: "int8", 2: "int16", 4: "int32"}[dt.itemsize])).numpy()
    return HostArray(name, np.ascontiguousarray(raw).view(np.uint8).reshape(-1), dt, t.shape,
                     "torch", t)


def output_kind(inputs):
    """The kind of the outputs: torch if any input was, else raw bits, else
    ml_dtypes, else NumPy."""
    kinds = {h.kind for h in inputs}
    for k in ("torch", "bits", "ml"):
        if k in kinds:
            return k
    return "numpy"


def values(raw, dt):
    """float32 values (or the integers) of raw bytes of dtype `dt`."""
    codes = np.frombuffer(raw.tobytes(), dtype=dt.bits)
    if dt.np is not None:
        return codes.view(dt.np)
    if dt.fmt is None or dt.x4 != 1:
        return codes
    return numerics.decode(dt.fmt, codes)


def to_host(raw, dt, shape, kind):
    """An output of `kind` from its raw bytes."""
    codes = np.frombuffer(raw.tobytes(), dtype=dt.bits).reshape(shape)
    if kind == "bits" or dt.x4 != 1:
        return codes.copy()
    if dt.np is not None:
        a = codes.view(dt.np).copy()
    elif kind in ("ml", "numpy") and _ml is not None and hasattr(_ml, dt.name):
        a = codes.view(getattr(_ml, dt.name)).copy()
    else:
        a = values(codes, dt).reshape(shape).astype(np.float32)
    if kind != "torch":
        return a
    import torch
    if dt.name == "bfloat16":
        return torch.from_numpy(codes.view(np.int16).copy()).view(torch.bfloat16)
    if dt.name == "bool_":
        return torch.from_numpy(a)
    return torch.from_numpy(np.ascontiguousarray(a))


def copy_back(h, raw):
    """An input the kernel wrote: its new contents into the caller's array
    (a NumPy array or a torch tensor), where it can be written."""
    new = to_host(raw, h.dtype, h.shape, "bits" if h.kind == "bits" else h.kind)
    o = h.orig
    try:
        if isinstance(o, bits):
            o.array[...] = new
        elif isinstance(o, np.ndarray) and o.flags.writeable:
            o[...] = np.asarray(new).astype(o.dtype, copy=False).reshape(o.shape)
        elif _is_torch(o):
            o.copy_(new.reshape(o.shape))
    except (ValueError, TypeError, RuntimeError):
        pass
