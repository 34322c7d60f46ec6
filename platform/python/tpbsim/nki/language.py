"""nki.language on the modelled core (SPEC §17): tensors, views, loops and the
tile-level calls. Every tile-level call lowers to nki.isa calls by one table
(:data:`LOWERING`, printed in docs/NKI.md): ``nl.exp`` -> ``activation`` on
the Scalar engine, ``nl.add`` of two tiles -> ``tensor_tensor`` on the
Vector engine, and so on.
"""

import contextlib
import math

import numpy as np

from . import dtypes, isa
from .dtypes import BY_NAME as _D
from .errors import at as _at, caller_loc, fail
from . import tensor as _tensor
from .tensor import (HBM, PRIVATE_HBM, PSUM, SBUF, SHARED_HBM, DynSlice, NkiTensor, buffer_of)
from .trace import current, new_tensor, norm_shape

# ------------------------------------------------------------------ dtypes, buffers
bool_, int8, int16, int32 = _D["bool_"], _D["int8"], _D["int16"], _D["int32"]
uint8, uint16, uint32 = _D["uint8"], _D["uint16"], _D["uint32"]
float16, float32, bfloat16, tfloat32 = _D["float16"], _D["float32"], _D["bfloat16"], _D["tfloat32"]
float8_e4m3, float8_e4m3fn, float8_e5m2 = _D["float8_e4m3"], _D["float8_e4m3fn"], _D["float8_e5m2"]
float8_e4m3fn_x4, float8_e5m2_x4 = _D["float8_e4m3fn_x4"], _D["float8_e5m2_x4"]
float4_e2m1fn_x4, float8_e8m0fnu = _D["float4_e2m1fn_x4"], _D["float8_e8m0fnu"]

sbuf, psum, hbm, shared_hbm, private_hbm = SBUF, PSUM, HBM, SHARED_HBM, PRIVATE_HBM


class MemoryRegion:
    sbuf, psum, private_hbm, shared_hbm = SBUF, PSUM, PRIVATE_HBM, SHARED_HBM


def is_hbm(buffer):
    return buffer_of(buffer).kind == "hbm"


def is_on_chip(buffer):
    return buffer_of(buffer).kind in ("sbuf", "psum")


def is_psum(buffer):
    return buffer_of(buffer).kind == "psum"


def is_sbuf(buffer):
    return buffer_of(buffer).kind == "sbuf"


class _TileSize:
    """nl.tile_size: the hardware tile limits (of the generation being traced)."""

    pmax = 128
    psum_fmax = 2048
    psum_bank_fmax = 512
    psum_bank_fmax_bytes = 2048
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    bn_stats_fmax = 512
    psum_min_align = 4
    sbuf_min_align = 4
    psum_num_banks = 8
    SBUF_BYTES = {2: 192 * 1024, 3: 224 * 1024, 4: 256 * 1024, 5: 256 * 1024}

    @property
    def sbuf_fmax_bytes(self):
        return self.SBUF_BYTES[current().version]

    @property
    def sbuf_fmax(self):
        return self.sbuf_fmax_bytes // 4

    @property
    def total_available_sbuf_size(self):
        return self.sbuf_fmax_bytes

    @property
    def sbuf_size_bytes(self):
        return self.sbuf_fmax_bytes * self.pmax


tile_size = _TileSize()

# ------------------------------------------------------------------ operators
# Each operator is a function (a tile-level call) that is also the `op` of the
# isa calls (its _nki_op names it).


def _op(name):
    def mark(f):
        f._nki_op = name
        return f
    return mark


# The lowering of every tile-level call: (isa call, engine). docs/NKI.md prints it.
LOWERING = {
    "load": ("dma_copy", "a DMA queue (loads on dma0..dma11, in turn by tile)"),
    "store": ("dma_copy", "a DMA queue (stores on dma12..dma15, in turn by tile)"),
    "copy": ("tensor_copy", "Vector"),
    "zeros / ones / full (SBUF, HBM)": ("dma_copy from a constant block in HBM",
                                        "a DMA queue"),
    "zeros / ones / full (PSUM)": ("memset", "Vector"),
    "broadcast_to (free axes)": ("tensor_copy with a zero step", "Vector"),
    "broadcast_to (partitions)": ("dma_copy to HBM, then dma_copy with a zero row stride",
                                  "DMA queues"),
    "add subtract multiply divide maximum minimum (two tiles)": ("tensor_tensor", "Vector"),
    "power (two tiles)": ("tensor_tensor", "GpSimd (the only engine that runs it)"),
    "add subtract multiply divide maximum minimum power (a tile and a scalar or [P, 1])":
        ("tensor_scalar", "Vector"),
    "exp log sqrt rsqrt tanh sigmoid relu gelu gelu_apprx_tanh silu square abs":
        ("activation", "Scalar"),
    "reciprocal": ("reciprocal", "Vector"),
    "negative": ("tensor_scalar (multiply by -1)", "Vector"),
    "sum max min": ("tensor_reduce", "Vector"),
    "mean": ("tensor_reduce, then tensor_scalar (multiply by 1/n)", "Vector"),
    "matmul (transpose_x=True)": ("nc_matmul", "Tensor"),
    "matmul": ("nc_transpose and tensor_copy of x, then nc_matmul", "Tensor, Vector"),
    "transpose": ("nc_transpose", "Tensor (Vector up to 32 x 32)"),
}

_BINARY = ("add", "subtract", "multiply", "divide", "maximum", "minimum", "power")
_UNARY_ACT = ("exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "gelu",
              "gelu_apprx_tanh", "gelu_apprx_sigmoid", "silu", "square", "abs", "softplus",
              "mish", "erf", "sin", "cos", "arctan", "sign")


# ------------------------------------------------------------------ creation

_new = new_tensor


def ndarray(shape, dtype, buffer=sbuf, name="", address=None):
    """A new tensor (uninitialized); on chip the front end places it
    (``address`` is ignored: docs/NKI.md)."""
    return _new(shape, dtype, buffer, name, caller_loc())


def zeros(shape, dtype, buffer=sbuf, name=""):
    return _filled(shape, dtype, buffer, name, 0.0, caller_loc())


def ones(shape, dtype, buffer=sbuf, name=""):
    return _filled(shape, dtype, buffer, name, 1.0, caller_loc())


def full(shape, fill_value, dtype, buffer=sbuf, name=""):
    return _filled(shape, dtype, buffer, name, fill_value, caller_loc())


def _filled(shape, dtype, buffer, name, value, loc):
    t = _new(shape, dtype, buffer, name, loc)
    _memset(t, value, loc)
    return t


def _memset(t, value, loc):
    with _at(loc):
        isa.memset(t, value)


def zeros_like(x, dtype=None, buffer=None, name=""):
    loc = caller_loc()
    return _filled(x.shape, dtype or x.dtype, buffer or x.buffer, name, 0.0, loc)


def empty_like(x, dtype=None, buffer=None, name=""):
    return _new(x.shape, dtype or x.dtype, buffer or x.buffer, name, caller_loc())


def rand(shape, dtype, buffer=sbuf, name=""):
    fail("not modelled", "nl.rand (a random number generator) is not in the model",
         caller_loc())


# ------------------------------------------------------------------ loops, indices

def affine_range(start, stop=None, step=1):
    """A loop unrolled at trace time (as ``range``)."""
    try:
        return range(start, stop, step) if stop is not None else range(start)
    except (TypeError, ValueError) as e:
        fail("loop", f"nl.affine_range({start!r}"
             f"{'' if stop is None else f', {stop!r}, {step!r}'}): {e} (the bounds of a loop "
             "unrolled at trace time are integers)", caller_loc())


sequential_range = static_range = affine_range


def dynamic_range(start, stop=None, step=1):
    fail("not modelled", "nl.dynamic_range (a loop run on the device with bounds in a "
         "register) is not lowered by tpbsim.nki: use nl.affine_range", caller_loc())


def ds(start, size):
    return DynSlice(start, size)


def program_id(axis=0):
    return 0


def num_programs(axes=0):
    return 1


def program_ndim():
    return 0


def no_reorder():
    return contextlib.nullcontext()


def device_print(print_prefix, tensor):
    """Nothing at trace time on the model (docs/NKI.md: read the outputs)."""


# ------------------------------------------------------------------ the call site of
# the calls a language call makes: the kernel's line of the language call.

def _tile(x, what, loc):
    if not isinstance(x, NkiTensor):
        fail("operand", f"{what} must be a tile, not {type(x).__name__}", loc)
    if not x.storage.on_chip:
        fail("buffer", f"{what} is an HBM tensor: nl.load it into SBUF first", loc)
    return x


# ------------------------------------------------------------------ data movement

def load(src, dtype=None):
    """A new SBUF tile holding src (an HBM tensor): dma_copy."""
    loc = caller_loc()
    if not isinstance(src, NkiTensor):
        fail("operand", f"nl.load src must be a tensor, not {type(src).__name__}", loc)
    shape = src.shape if src.ndim > 1 else (1, src.shape[0])
    t = _new(shape, dtype or src.dtype, sbuf, "", loc)
    with _at(loc):
        isa.dma_copy(t, src if src.ndim > 1 else src.reshape(shape))
    return t


def store(dst, value):
    """dst (an HBM tensor) = value (an SBUF tile): dma_copy."""
    loc = caller_loc()
    with _at(loc):
        isa.dma_copy(dst, value)


def load_transpose2d(src, dtype=None):
    fail("not modelled", "nl.load_transpose2d (a DMA transpose) is not in the model",
         caller_loc())


def copy_into(dst, value, loc):
    """``view[...] = value``: a copy (tensor_copy on chip, dma_copy with HBM) or a
    fill."""
    with _at(loc):
        if isinstance(value, NkiTensor):
            if dst.storage.on_chip and value.storage.on_chip:
                isa.tensor_copy(dst, value)
            else:
                isa.dma_copy(dst, value)
        else:
            isa.memset(dst, value)


_tensor.ASSIGN = copy_into      # `view[...] = value`


@_op("copy")
def copy(x, dtype=None):
    loc = caller_loc()
    x = _tile(x, "x", loc)
    t = _new(x.shape, dtype or x.dtype, sbuf, "", loc)
    with _at(loc):
        isa.tensor_copy(t, x)
    return t


def broadcast_to(x, shape, dtype=None):
    """x broadcast to `shape` (same rank; each dimension equal or from 1): a new
    tile. Across partitions: x goes to HBM, and comes back with a zero row
    stride; along free axes: a tensor_copy with a zero step."""
    loc = caller_loc()
    x = _tile(x, "x", loc)
    shape = norm_shape(shape, loc)
    if len(shape) != x.ndim or any(a != b and a != 1 for a, b in zip(x.shape, shape)):
        fail("shape", f"broadcast_to: {x.shape} cannot broadcast to {shape}", loc)
    dt = dtypes.lookup(dtype) if dtype is not None else x.dtype
    if tuple(shape) == x.shape and dt is x.dtype:
        return x
    with _at(loc):
        src = x
        if x.shape[0] == 1 and shape[0] > 1:
            scratch = _new(x.shape, x.dtype, hbm, "", loc, kind="scratch")
            isa.dma_copy(scratch, x)
            rows = _new((shape[0],) + x.shape[1:], x.dtype, sbuf, "", loc)
            dims = [(0, shape[0])] + list(scratch.dims[1:])
            isa.dma_copy(rows, NkiTensor(scratch.storage, x.dtype, 0, dims))
            src = rows
        dims = [src.dims[0]] + [(0 if n == 1 and m > 1 else s, m)
                                for (s, n), m in zip(src.dims[1:], shape[1:])]
        out = _new(shape, dt, sbuf, "", loc)
        isa.tensor_copy(out, NkiTensor(src.storage, src.dtype, src.offset, dims))
    return out


def expand_dims(x, axis):
    return x.expand_dim(axis)


# ------------------------------------------------------------------ element-wise

def _result_dtype(dtype, *xs):
    if dtype is not None:
        return dtypes.lookup(dtype)
    ds_ = [x.dtype for x in xs if isinstance(x, NkiTensor)]
    return ds_[0] if all(d is ds_[0] for d in ds_) else float32


def _is_vector(v, x):
    """v is a [P, 1] tile matching x's partitions."""
    return isinstance(v, NkiTensor) and v.shape[0] == x.shape[0] and v.size == v.shape[0]


def _binary(name, x, y, dtype, loc):
    xt, yt = isinstance(x, NkiTensor), isinstance(y, NkiTensor)
    if not (xt or yt):
        fail("operand", f"nl.{name}: at least one operand must be a tile", loc)
    out_shape = x.shape if xt else y.shape
    if xt and yt and x.shape != y.shape:
        if _is_vector(y, x):
            out_shape = x.shape
        elif _is_vector(x, y):
            out_shape = y.shape
        else:
            out_shape = tuple(max(a, b) for a, b in zip(x.shape, y.shape))
    dt = _result_dtype(dtype, x, y)
    out = _new(out_shape, dt, sbuf, "", loc)
    with _at(loc):
        if xt and yt and x.shape == y.shape:
            isa.tensor_tensor(out, _tile(x, "x", loc), _tile(y, "y", loc), op=name)
        elif xt and (not yt or _is_vector(y, x)):
            isa.tensor_scalar(out, _tile(x, "x", loc), name, y)
        elif yt and (not xt or _is_vector(x, y)):
            isa.tensor_scalar(out, _tile(y, "y", loc), name, x, reverse0=True)
        else:
            isa.tensor_tensor(out, broadcast_to(x, out_shape), broadcast_to(y, out_shape),
                              op=name)
    return out


def _make_binary(name):
    @_op(name)
    def f(x, y, dtype=None):
        return _binary(name, x, y, dtype, caller_loc())
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"x {name} y element-wise: tensor_tensor of two tiles, tensor_scalar of a "
                 "tile and a scalar or [P, 1] vector (Vector engine).")
    return f


def _unary(name, x, dtype, loc):
    x = _tile(x, "x", loc)
    out = _new(x.shape, _result_dtype(dtype, x), sbuf, "", loc)
    with _at(loc):
        if name == "reciprocal":
            isa.reciprocal(out, x)
        elif name == "negative":
            isa.tensor_scalar(out, x, "multiply", -1.0)
        else:
            isa.activation(out, name, x)
    return out


def _make_unary(name):
    @_op(name)
    def f(x, dtype=None):
        return _unary(name, x, dtype, caller_loc())
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{name}(x) element-wise (docs/NKI.md's lowering table)."
    return f


for _n in _BINARY:
    globals()[_n] = _make_binary(_n)
for _n in _UNARY_ACT + ("reciprocal", "negative"):
    globals()[_n] = _make_unary(_n)
for _n in ("equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
           "bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or",
           "logical_xor", "left_shift", "right_shift", "abs_max", "abs_min", "mod", "fmod"):
    globals()[_n] = _make_binary(_n)
identity = _make_unary("identity")
bypass = _op("bypass")(lambda x: x)
average = _op("average")(lambda x: x)
gelu_dx = _make_unary("gelu_dx")
prelu = _make_unary("prelu")


# ------------------------------------------------------------------ reductions

def _reduce(name, x, axis, dtype, keepdims, loc):
    x = _tile(x, "x", loc)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = tuple(a + x.ndim if a < 0 else a for a in axes)
    kept = [n for d, n in enumerate(x.shape) if d not in axes]
    shape = [1 if d in axes else n for d, n in enumerate(x.shape)] if keepdims else kept
    if len(shape) == 1:
        shape = [shape[0], 1]
    out = _new(tuple(shape), _result_dtype(dtype, x), sbuf, "", loc)
    with _at(loc):
        isa.tensor_reduce(out, "add" if name == "mean" else name, x, axes, keepdims=keepdims)
        if name == "mean":
            n = math.prod(x.shape[d] for d in axes)
            isa.tensor_scalar(out, out, "multiply", 1.0 / n)
    return out


def sum(x, axis, dtype=None, keepdims=False):   # noqa: A001 (NKI's name)
    return _reduce("add", x, axis, dtype, keepdims, caller_loc())


def max(x, axis, dtype=None, keepdims=False):   # noqa: A001
    return _reduce("maximum", x, axis, dtype, keepdims, caller_loc())


def min(x, axis, dtype=None, keepdims=False):   # noqa: A001
    return _reduce("minimum", x, axis, dtype, keepdims, caller_loc())


def mean(x, axis, dtype=None, keepdims=False):
    return _reduce("mean", x, axis, dtype, keepdims, caller_loc())


sum._nki_op, max._nki_op, min._nki_op = "add", "maximum", "minimum"


# ------------------------------------------------------------------ matmul, transpose

def transpose(x, dtype=None):
    """x^T (partitions <-> free): nc_transpose into PSUM on the Tensor engine (a
    tile of up to 32 x 32: into SBUF on the Vector engine)."""
    loc = caller_loc()
    x = _tile(x, "x", loc)
    p, f = x.shape[0], x.size // x.shape[0]
    small = p <= 32 and f <= 32
    out = _new((f, p), x.dtype, sbuf if small else psum, "", loc)
    with _at(loc):
        isa.nc_transpose(out, x)
    return out


def matmul(x, y, transpose_x=False):
    """x @ y (x.T @ y with transpose_x) into a PSUM tile (float32): nc_matmul."""
    loc = caller_loc()
    x, y = _tile(x, "x", loc), _tile(y, "y", loc)
    with _at(loc):
        if not transpose_x:
            xt = transpose(x)
            x = _new(xt.shape, xt.dtype, sbuf, "", loc)
            isa.tensor_copy(x, xt)
        out = _new((x.shape[1], y.shape[1]), float32, psum, "", loc)
        isa.nc_matmul(out, x, y)
    return out


def shared_identity_matrix(n, dtype=uint8, dst=None):
    """An n x n identity in SBUF (a constant the host writes to HBM, then loaded)."""
    loc = caller_loc()
    dt = dtypes.lookup(dtype)
    c = shared_constant(np.eye(n, dtype=np.float32), dt, loc)
    t = dst if dst is not None else _new((n, n), dt, sbuf, "identity", loc)
    with _at(loc):
        isa.dma_copy(t, c)
    return t


def shared_constant(constant, dtype=None, loc=None):
    """A tensor in HBM holding `constant` (an array, or a .npy path), written by
    the host before the run."""
    loc = loc or caller_loc()
    arr = np.load(constant) if isinstance(constant, str) else np.asarray(constant)
    dt = dtypes.lookup(dtype) if dtype is not None else dtypes.lookup(arr.dtype)
    t = _new(arr.shape, dt, hbm, "const", loc, kind="const")
    t.storage.host = arr
    return t
