"""nki.isa on the modelled core (SPEC §17, §18): each call is checked
(shapes, dtypes, buffers, the generation) and recorded; the lowering turns it
into the model's instructions (tpbsim.nki.lower, one table entry per call).

SPEC §18's calls (nc_matmul, activation, tensor_tensor, ...) are checked here
and lowered by tpbsim.nki.lower_compute; tpbsim.nki.numpy_ref holds the NumPy
semantics of every call.
"""

import enum
import math
import operator

import numpy as np

from . import dtypes
from .errors import at as _at, caller_loc, fail
from .tensor import NkiTensor
from .trace import current, new_tensor, tensor_of

__all__ = [
    "engine", "reduce_cmd", "dge_mode", "oob_mode", "matmul_perf_mode", "nc_version",
    "dma_engine", "tensor_engine", "vector_engine", "scalar_engine", "gpsimd_engine",
    "unknown_engine", "get_nc_version", "get_nc_sub_version", "dma_copy", "tensor_copy",
    "memset", "quantize_mx", "nc_matmul_mx", "nc_matmul", "nc_transpose", "activation",
    "tensor_tensor", "tensor_scalar", "tensor_reduce", "tensor_tensor_scan", "iota",
    "reciprocal", "bn_stats", "bn_aggr", "activation_reduce", "NkiValidationError",
]


class engine(enum.Enum):
    """The engines of a NeuronCore (NKI's numbering)."""
    tensor = 1
    scalar = 2
    gpsimd = 3
    dma = 4
    vector = 5
    sync = 6
    unknown = 0


_E = engine
tensor_engine, vector_engine = engine.tensor, engine.vector
scalar_engine, gpsimd_engine, unknown_engine = engine.scalar, engine.gpsimd, engine.unknown


class reduce_cmd(enum.Enum):
    idle = 0
    reset = 1
    reduce = 2
    reset_reduce = 3
    load_reduce = 4


class dge_mode(enum.Enum):
    unknown = 0
    swdge = 1
    hwdge = 2
    none = 3


class oob_mode(enum.Enum):
    error = 0
    skip = 1


class matmul_perf_mode(enum.Enum):
    none = "none"
    double_row = "double_row"


class nc_version(enum.Enum):
    gen2 = 2
    gen3 = 3
    gen4 = 4
    gen5 = 5


class dma_engine(enum.Enum):
    dma = 1
    gpsimd_dma = 2


class NkiValidationError(Exception):
    """NKI's name for a violated hardware constraint (tpbsim raises NKIError)."""


# The model's engine (queue name) of each NKI engine a compute call may name.
MODEL_ENGINE = {engine.vector: "dve", engine.gpsimd: "pool", engine.scalar: "act",
                engine.tensor: "pe"}


def get_nc_version():
    return nc_version(current().version)


def get_nc_sub_version():
    return 0


# ------------------------------------------------------------------ helpers

def op_name(op, what="op", loc=None, allow_none=False):
    """The operator name of an `op` argument (nl.add, np.add, "add")."""
    if op is None and allow_none:
        return None
    name = getattr(op, "_nki_op", None)
    if name is None and isinstance(op, str):
        name = op
    if name is None:
        name = _NUMPY_OPS.get(getattr(op, "__name__", None))
    if name is None:
        fail("operator", f"{what} {op!r} is not an NKI operator (nl.add, nl.multiply, nl.exp, "
             "...)", loc)
    return name


_NUMPY_OPS = {"add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "divide",
              "true_divide": "divide", "maximum": "maximum", "minimum": "minimum",
              "exp": "exp", "log": "log", "sqrt": "sqrt", "tanh": "tanh", "abs": "abs",
              "absolute": "abs", "negative": "negative", "square": "square",
              "reciprocal": "reciprocal", "power": "power", "equal": "equal",
              "not_equal": "not_equal", "greater": "greater", "greater_equal": "greater_equal",
              "less": "less", "less_equal": "less_equal"}

ALU_BINARY = {"add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "equal",
              "not_equal", "greater", "greater_equal", "less", "less_equal", "bypass",
              "abs_max", "abs_min", "mod", "bitwise_and", "bitwise_or", "bitwise_xor",
              "logical_and", "logical_or", "logical_xor", "left_shift", "right_shift",
              "average", "rsqrt", "abs"}
REDUCE_OPS = {"add", "maximum", "minimum", "multiply", "bitwise_and", "bitwise_or",
              "bitwise_xor", "average"}
ACTIVATIONS = {"copy", "identity", "exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh",
               "sigmoid", "relu", "gelu", "gelu_apprx_tanh", "gelu_apprx_sigmoid", "silu",
               "square", "abs", "negative", "softplus", "mish", "erf", "sin", "cos",
               "arctan", "sign"}


def _t(x, what, loc):
    return tensor_of(x, what, loc)


def _on_chip(v, what, loc, psum=True):
    if not v.storage.on_chip:
        fail("buffer", f"{what} is in {v.buffer.kind}; it must be in SBUF"
             f"{' or PSUM' if psum else ''}", loc)
    if not psum and v.buffer.kind == "psum":
        fail("buffer", f"{what} is in PSUM; it must be in SBUF", loc)


def _parts(v):
    """(partitions, elements per partition) of an on-chip view."""
    return v.shape[0], (v.size // v.shape[0]) if v.shape else 1


def _same_tile(a, b, what_a, what_b, loc):
    pa, fa = _parts(a)
    pb, fb = _parts(b)
    if pa != pb or fa != fb:
        fail("shape", f"{what_a} {a.shape} and {what_b} {b.shape} must have the same "
             f"partitions and elements per partition", loc)


def _dtype_ok(v, what, loc):
    dtypes.check_arch(v.dtype, current().arch, what, loc)


def _engine_of(eng, allowed, default, what, loc):
    """The model queue an `engine=` argument names among `allowed` NKI engines."""
    if not isinstance(eng, engine):
        try:
            eng = engine(getattr(eng, "value", eng))
        except (ValueError, TypeError):
            fail("engine", f"{what}: engine={eng!r} is not an engine (nisa.vector_engine, "
                 "nisa.gpsimd_engine, nisa.scalar_engine, nisa.tensor_engine)", loc)
    if eng == engine.unknown:
        return default
    if eng not in allowed:
        fail("engine", f"{what} runs on {', '.join(e.name for e in allowed)}, not "
             f"{eng.name}", loc)
    return MODEL_ENGINE[eng]


def _record(op, eng, dst, srcs, params, loc):
    return current().record(op, eng, dst, srcs, params, loc)


def _scalar_or_vector(x, data, what, loc):
    """A scalar (float) or a [P, 1] tensor operand."""
    if isinstance(x, NkiTensor):
        _on_chip(x, what, loc)
        if x.shape[0] != data.shape[0] or x.size != x.shape[0]:
            fail("shape", f"{what} {x.shape} must be a scalar or a ({data.shape[0]}, 1) "
                 "vector", loc)
        return x
    try:
        return float(x)
    except (TypeError, ValueError):
        fail("operand", f"{what} must be a number or a tensor, not {type(x).__name__}", loc)
    except OverflowError:
        fail("operand", f"{what} {x} is past any float (the operand is FP32)", loc)


# ------------------------------------------------------------------ lowered now

def dma_copy(dst, src, priority=None, oob_mode=oob_mode.error, dge_mode=dge_mode.unknown,
             engine=engine.unknown, name=None):
    """dst = src by the DMA queues (HBM <-> SBUF, SBUF <-> SBUF, HBM <-> HBM); a
    dtype change converts through FP32 (on the Vector engine: the DMA
    descriptor has no conversion, docs/NKI.md)."""
    loc = caller_loc()
    dst, src = _t(dst, "dst", loc), _t(src, "src", loc)
    for v, what in ((dst, "dst"), (src, "src")):
        if v.buffer.kind == "psum":
            fail("buffer", f"dma_copy {what} is in PSUM, which is not a DMA endpoint (SPEC §10): "
                 "copy it to SBUF with tensor_copy first", loc)
        _dtype_ok(v, f"dma_copy {what}", loc)
    if dst.size * dst.dtype.x4 != src.size * src.dtype.x4:
        fail("shape", f"dma_copy: dst {dst.shape} and src {src.shape} hold different numbers "
             "of elements", loc)
    if dst.dtype is not src.dtype and _converts(src.dtype, dst.dtype):
        return _dma_convert(dst, src, loc)
    if dst.dtype.itemsize * dst.size != src.dtype.itemsize * src.size:
        fail("dtype", f"dma_copy from {src.dtype.name} to {dst.dtype.name}: no conversion "
             "between these types and not the same bytes", loc)
    return _record("dma_copy", "dma", dst, (src,), {}, loc)


def _converts(a, b):
    """A copy from a to b converts values (both value types of the model), else
    it moves bits (packed MX data, scales, reinterpretations)."""
    value = ("float", "int", "bool")
    return a.kind in value and b.kind in value and not (
        a.itemsize == b.itemsize and "int" in (a.kind, b.kind) and a.kind != b.kind)


def _dma_convert(dst, src, loc):
    """A DMA converts nothing: the conversion is a tensor_copy on the Vector
    engine before a store or after a load, through a tile of the other dtype
    (docs/NKI.md)."""
    on = dst if dst.storage.on_chip else src if src.storage.on_chip else None
    if on is None:
        fail("dtype", f"dma_copy HBM -> HBM from {src.dtype.name} to {dst.dtype.name}: the DMA "
             "converts nothing; load into SBUF, convert with tensor_copy, store", loc)
    shape = (on.shape[0], on.size // on.shape[0])
    if on is dst:
        tmp = new_tensor(shape, src.dtype, "sbuf", "", loc)
        _record("dma_copy", "dma", tmp, (src,), {}, loc)
        return _record("tensor_copy", "dve", dst, (tmp,), {}, loc)
    tmp = new_tensor(shape, dst.dtype, "sbuf", "", loc)
    _record("tensor_copy", "dve", tmp, (src,), {}, loc)
    return _record("dma_copy", "dma", dst, (tmp,), {}, loc)


def tensor_copy(dst, src, engine=engine.unknown, name=None):
    """dst = src within SBUF / PSUM (bit for bit when the dtypes match, through
    FP32 otherwise): the Vector engine's tensor_copy (SPEC §11)."""
    loc = caller_loc()
    dst, src = _t(dst, "dst", loc), _t(src, "src", loc)
    _on_chip(dst, "tensor_copy dst", loc)
    _on_chip(src, "tensor_copy src", loc)
    _same_tile(dst, src, "dst", "src", loc)
    _dtype_ok(dst, "tensor_copy dst", loc)
    _dtype_ok(src, "tensor_copy src", loc)
    eng = _engine_of(engine, (_E.vector, _E.gpsimd,
                              _E.scalar), "dve", "tensor_copy", loc)
    if eng == "pool" and "psum" in (dst.buffer.kind, src.buffer.kind):
        fail("buffer", "tensor_copy on GpSimd cannot reach PSUM", loc)
    return _record("tensor_copy", eng, dst, (src,), {}, loc)


def memset(dst, value, engine=engine.unknown, name=None):
    """dst = value everywhere. With engine unknown it is a DMA from a constant
    block in HBM (docs/NKI.md); on an engine it is SPEC §18's memset."""
    loc = caller_loc()
    dst = _t(dst, "dst", loc)
    _dtype_ok(dst, "memset dst", loc)
    if dst.dtype.x4 != 1 and value != 0:
        fail("memset", f"{dst.dtype.name} takes value=0 only", loc)
    try:
        value = float(value)
    except (TypeError, ValueError):
        fail("memset", f"value must be a number, not {type(value).__name__}", loc)
    except OverflowError:
        fail("memset", f"value {value} is past any float", loc)
    _check_fill(dst.dtype, value, loc)
    eng = _engine_of(engine, (_E.vector, _E.gpsimd), "dma",
                     "memset", loc)
    if eng == "dma" and dst.buffer.kind == "psum":
        eng = "dve"        # PSUM is not a DMA endpoint: the Vector engine's memset
    return _record("memset", eng, dst, (), {"value": value}, loc)


def _check_fill(dt, value, loc):
    """A fill value an integer dtype holds exactly (1000 in int8 wrapped to -24,
    NaN became 0)."""
    if dt.kind not in ("int", "bool"):
        return
    info = (0, 1) if dt.kind == "bool" else (np.iinfo(dt.np).min, np.iinfo(dt.np).max)
    if not (math.isfinite(value) and value.is_integer() and info[0] <= value <= info[1]):
        fail("memset", f"value {value:g} is not a {dt.name} value (integers "
             f"{info[0]}..{info[1]})", loc)


def _mx_check_tile(v, what, loc, kinds):
    _on_chip(v, what, loc, psum=False)
    if v.dtype.kind not in kinds:
        fail("dtype", f"{what} is {v.dtype.name}; it must be "
             f"{' or '.join(d.name for d in dtypes.BY_NAME.values() if d.kind in kinds)}", loc)
    p0 = v.partition_form()[0]
    p = v.shape[0]
    return p0, p


def quantize_mx(dst, src, dst_scale, name=None):
    """MXFP8 quantization on the Vector engine (NeuronCore-v4 and later): groups
    of 8 partitions x 4 elements share one E8M0 scale (SPEC §4)."""
    loc = caller_loc()
    dst, src, sc = _t(dst, "dst", loc), _t(src, "src", loc), _t(dst_scale, "dst_scale", loc)
    _need_version(4, "quantize_mx", loc)
    _on_chip(src, "quantize_mx src", loc, psum=False)
    if src.dtype.name not in ("bfloat16", "float16", "float32"):
        fail("dtype", f"quantize_mx src is {src.dtype.name}; it must be bfloat16 or float16", loc)
    if dst.dtype.name not in ("float8_e4m3fn_x4", "float8_e5m2_x4"):
        fail("dtype", f"quantize_mx dst is {dst.dtype.name}; it must be float8_e4m3fn_x4 or "
             "float8_e5m2_x4", loc)
    _mx_check_tile(dst, "quantize_mx dst", loc, ("mx",))
    _scale_check(sc, "quantize_mx dst_scale", loc)
    p, f = _parts(src)
    if p % 32 or p > 128:
        fail("shape", f"quantize_mx src has {p} partitions: a multiple of 32, at most 128", loc)
    if f % 4:
        fail("shape", f"quantize_mx src has {f} elements per partition: a multiple of 4", loc)
    if _parts(dst) != (p, f // 4):
        fail("shape", f"quantize_mx dst {dst.shape} must be ({p}, {f // 4})", loc)
    _mx_quadrant(src, sc, p, f // 4, "quantize_mx", loc)
    return _record("quantize_mx", "dve", (dst, sc), (src,), {}, loc)


def _need_version(v, what, loc):
    t = current()
    if t.version < v:
        fail("instruction the generation lacks", f"{what} needs NeuronCore-v{v} or later; "
             f"{t.arch} is NeuronCore-v{t.version}", loc)


def _scale_check(sc, what, loc):
    _on_chip(sc, what, loc, psum=False)
    if sc.dtype.name not in ("uint8", "float8_e8m0fnu"):
        fail("dtype", f"{what} is {sc.dtype.name}; it must be float8_e8m0fnu or uint8", loc)


def _mx_quadrant(data, sc, p, cols, what, loc):
    """The SBUF quadrant rule of MX data and scales (SPEC §4, seed 003 §5)."""
    dp0 = data.partition_form()[0]
    sp0 = sc.partition_form()[0]
    if dp0 % 32:
        fail("mx layout", f"{what}: the data starts at partition {dp0}, not at a quadrant "
             "(0, 32, 64, 96)", loc)
    if sp0 // 32 != dp0 // 32 or sp0 % 32 > 28:
        fail("mx layout", f"{what}: the scales start at partition {sp0}; they must start in "
             f"the data's quadrant (partition {dp0} + 0..28)", loc)
    need = p // 8 if p <= 32 else (p // 32 - 1) * 32 + 4
    if sc.shape[0] < need:
        fail("mx layout", f"{what}: the scales of {p} partitions of data need "
             f"{need} partitions of scale tile (SPEC §4: block row b at partition "
             f"32 (b // 4) + b % 4), not {sc.shape[0]}", loc)
    if _parts(sc)[1] != cols or (sc.ndim > 1 and sc.dims[-1][0] != 1 and sc.dims[-1][1] > 1):
        fail("mx layout", f"{what}: the scale tile needs {cols} contiguous bytes per "
             f"partition, not {sc.shape}", loc)


def nc_matmul_mx(dst, stationary, moving, stationary_scale, moving_scale, tile_position=None,
                 tile_size=None, accumulate=None, name=None):
    """dst[M, N] (+)= stationary[K, M]^T @ moving[K, N] of MX tensors (x4 types: 4K
    contraction values) with their scales, on the Tensor engine (v4 and later)."""
    loc = caller_loc()
    dst = _t(dst, "dst", loc)
    st, mv = _t(stationary, "stationary", loc), _t(moving, "moving", loc)
    ss, ms = _t(stationary_scale, "stationary_scale", loc), _t(moving_scale, "moving_scale", loc)
    _need_version(4, "nc_matmul_mx", loc)
    for v, what in ((st, "stationary"), (mv, "moving")):
        _mx_check_tile(v, f"nc_matmul_mx {what}", loc, ("mx",))
    _scale_check(ss, "nc_matmul_mx stationary_scale", loc)
    _scale_check(ms, "nc_matmul_mx moving_scale", loc)
    k, m = _parts(st)
    k2, n = _parts(mv)
    if k != k2:
        fail("matmul shapes", f"stationary {st.shape} and moving {mv.shape} must have the same "
             "partitions (the contraction)", loc)
    if k % 32 or k > 128:
        fail("matmul shapes", f"the contraction has {k} partitions: a multiple of 32, at most "
             "128", loc)
    if m > 128:
        fail("matmul shapes", f"stationary has {m} columns; at most 128 "
             "(nl.tile_size.gemm_stationary_fmax)", loc)
    if st.dtype.model != mv.dtype.model and "fp4_e2m1" not in (st.dtype.model, mv.dtype.model):
        fail("dtype", f"stationary {st.dtype.name} and moving {mv.dtype.name}: the model's MX "
             "matmul takes one element type", loc)
    if st.dtype is not mv.dtype:
        fail("dtype", f"stationary {st.dtype.name} and moving {mv.dtype.name}: the model's MX "
             "matmul takes one element type (one in_dtype field)", loc)
    _mm_dst(dst, m, n, loc)
    _mx_quadrant(st, ss, k, m, "nc_matmul_mx stationary", loc)
    _mx_quadrant(mv, ms, k, n, "nc_matmul_mx moving", loc)
    acc = _accumulate(dst, accumulate)
    return _record("nc_matmul_mx", "pe", dst, (st, mv, ss, ms), {"accumulate": acc}, loc)


def _mm_dst(dst, m, n, loc):
    if dst.buffer.kind != "psum":
        fail("buffer", f"the matmul dst is in {dst.buffer.kind}; it must be in PSUM", loc)
    if _parts(dst) != (m, n):
        fail("matmul shapes", f"dst {dst.shape} must be ({m}, {n}) (stationary columns x moving "
             "columns)", loc)
    t = current()
    limit = 512 if t.version < 4 else 4096
    if dst.dtype.name == "bfloat16" and t.version >= 4:
        limit = 8192
    if n > limit:
        fail("PSUM tile larger than the matmul may write",
             f"the moving tile has {n} columns; a NeuronCore-v{t.version} matmul writes at most "
             f"{limit} ({'one 2 KiB PSUM bank' if t.version < 4 else 'the 8 PSUM banks'})", loc)
    if dst.dtype.name not in ("float32",) + (("bfloat16",) if t.version >= 4 else ()):
        fail("dtype", f"the matmul dst is {dst.dtype.name}; it must be float32"
             f"{' or bfloat16' if t.version >= 4 else ''}", loc)


def _accumulate(dst, accumulate):
    """NKI's accumulate=None: the first matmul into a PSUM location overwrites,
    later ones accumulate (per storage and byte range)."""
    st = dst.storage
    key = (dst.offset, dst.dims)
    if st.mm_written is None:
        st.mm_written = set()
    if accumulate is None:
        accumulate = key in st.mm_written
    st.mm_written.add(key)
    return bool(accumulate)


# ------------------------------------------------------------------ SPEC §18

def nc_matmul(dst, stationary, moving, is_stationary_onezero=False, is_moving_onezero=False,
              is_transpose=False, accumulate=None, tile_position=(), tile_size=(),
              perf_mode=matmul_perf_mode.none, name=None):
    """dst[M, N] (+)= stationary[K, M]^T @ moving[K, N] on the Tensor engine (FP32
    accumulation in PSUM); ``double_row`` (FP8, v3 on): [K, 2, M] and [K, 2, N],
    a contraction of 2K; ``is_transpose``: dst = stationary^T bit for bit (the
    moving tile is the identity)."""
    loc = caller_loc()
    dst = _t(dst, "dst", loc)
    st, mv = _t(stationary, "stationary", loc), _t(moving, "moving", loc)
    perf = getattr(perf_mode, "value", perf_mode) or "none"
    for v, what in ((st, "stationary"), (mv, "moving")):
        _mm_operand(v, f"nc_matmul {what}", perf, loc)
    k, m = _parts(st)
    k2, n = _parts(mv)
    if perf == "double_row":
        _need_version(3, "nc_matmul perf_mode=double_row", loc)
        if st.ndim != 3 or st.shape[1] != 2 or mv.ndim != 3 or mv.shape[1] != 2:
            fail("matmul shapes", "double_row takes stationary [K, 2, M] and moving [K, 2, N]",
                 loc)
        m, n = m // 2, n // 2
    if k != k2:
        fail("matmul shapes", f"stationary {st.shape} and moving {mv.shape} must have the same "
             "partitions (the contraction)", loc)
    if m > 128:
        fail("matmul shapes", f"stationary has {m} columns; at most 128", loc)
    if ("float32" in (st.dtype.name, mv.dtype.name)) and st.dtype is not mv.dtype:
        fail("dtype", "a float32 matmul operand needs a float32 partner", loc)
    if {st.dtype.name, mv.dtype.name} == {"float8_e4m3", "float8_e4m3fn"}:
        fail("dtype", "float8_e4m3 (legacy) and float8_e4m3fn cannot be mixed", loc)
    if is_transpose:
        if dst.dtype is not st.dtype:
            fail("dtype", "a transpose writes the stationary's dtype", loc)
        if n != k or _parts(dst) != (m, k) or dst.buffer.kind != "psum":
            fail("matmul shapes", f"a transpose of {st.shape} takes a ({k}, {k}) identity as "
                 f"moving and writes a PSUM ({m}, {k}) dst", loc)
        return _record("nc_matmul", "pe", dst, (st, mv), {"accumulate": False,
                                                          "is_transpose": True}, loc)
    _mm_dst(dst, m, n, loc)
    acc = _accumulate(dst, accumulate)
    return _record("nc_matmul", "pe", dst, (st, mv),
                   {"accumulate": acc, "is_transpose": False, "perf_mode": perf}, loc)


def _mm_operand(v, what, perf, loc):
    _on_chip(v, what, loc, psum=False)
    _dtype_ok(v, what, loc)
    fp8 = ("float8_e4m3", "float8_e4m3fn", "float8_e5m2")
    allowed = fp8 if perf == "double_row" else fp8 + ("bfloat16", "float16", "tfloat32",
                                                      "float32")
    if v.dtype.name not in allowed:
        fail("dtype", f"{what} is {v.dtype.name}; it must be {', '.join(allowed)}", loc)


def nc_transpose(dst, data, engine=engine.unknown, name=None):
    """dst = data^T (partitions <-> free elements): on the Tensor engine (up to
    128 x 128, into PSUM) or the Vector engine (up to 32 x 32)."""
    loc = caller_loc()
    dst, data = _t(dst, "dst", loc), _t(data, "data", loc)
    _on_chip(data, "nc_transpose data", loc)
    p, f = _parts(data)
    if _parts(dst) != (f, p):
        fail("shape", f"nc_transpose dst {dst.shape} must be ({f}, {p})", loc)
    if dst.dtype is not data.dtype:
        fail("dtype", "nc_transpose writes the data's dtype", loc)
    default = "dve" if p <= 32 and f <= 32 else "pe"
    eng = _engine_of(engine, (_E.tensor, _E.vector), default,
                     "nc_transpose", loc)
    if eng == "dve" and (p > 32 or f > 32):
        fail("shape", f"nc_transpose on the Vector engine takes at most 32 x 32, not {p} x {f}",
             loc)
    if eng == "pe" and (p > 128 or f > 128):
        fail("shape", f"nc_transpose on the Tensor engine takes at most 128 x 128, not {p} x {f}",
             loc)
    return _record("nc_transpose", eng, dst, (data,), {}, loc)


def activation(dst, op, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None,
               reduce_cmd=reduce_cmd.idle, name=None):
    """dst = op(data * scale + bias) on the Scalar engine, with an optional add
    reduction along the free axis into reduce_res."""
    loc = caller_loc()
    dst, data = _t(dst, "dst", loc), _t(data, "data", loc)
    _on_chip(dst, "activation dst", loc)
    _on_chip(data, "activation data", loc)
    _same_tile(dst, data, "dst", "data", loc)
    name_ = op_name(op, "activation op", loc)
    if name_ not in ACTIVATIONS:
        fail("operator", f"{name_} is not an activation function", loc)
    srcs = [data]
    sc = _scalar_or_vector(scale, data, "scale", loc)
    bi = None if bias is None else _scalar_or_vector(bias, data, "bias", loc)
    for x in (sc, bi):
        if isinstance(x, NkiTensor):
            srcs.append(x)
    dsts = dst
    rop = op_name(reduce_op, "reduce_op", loc, allow_none=True)
    cmd = reduce_cmd.name if isinstance(reduce_cmd, enum.Enum) else str(reduce_cmd)
    if cmd not in ("idle", "reset", "reduce", "reset_reduce"):
        fail("operand", f"activation reduce_cmd {reduce_cmd!r} is not one of idle, reset, "
             "reduce, reset_reduce", loc)
    if reduce_res is not None:
        rr = _t(reduce_res, "reduce_res", loc)
        _on_chip(rr, "reduce_res", loc)
        if _parts(rr) != (data.shape[0], 1):
            fail("shape", f"reduce_res {rr.shape} must be ({data.shape[0]}, 1)", loc)
        dsts = (dst, rr)
        cmd = "reset_reduce" if cmd == "idle" else cmd   # activation_reduce's (docs/NKI.md)
    if cmd != "idle":
        rop = rop or "add"
    return _record("activation", "act", dsts, srcs,
                   {"op": name_, "scale": sc, "bias": bi, "reduce_op": rop,
                    "reduce_cmd": cmd}, loc)


def activation_reduce(dst, op, data, reduce_op, reduce_res, bias=None, scale=1.0, name=None):
    """activation with reduce_cmd=reset_reduce and its reduce_res written."""
    with _at(caller_loc()):
        return activation(dst, op, data, bias=bias, scale=scale, reduce_op=reduce_op,
                          reduce_res=reduce_res, reduce_cmd=reduce_cmd.reset_reduce)


def tensor_tensor(dst, data1, data2, op, engine=engine.unknown, name=None):
    """dst = data1 op data2, element-wise, on the Vector (or GpSimd) engine."""
    loc = caller_loc()
    dst, a, b = _t(dst, "dst", loc), _t(data1, "data1", loc), _t(data2, "data2", loc)
    for v, what in ((dst, "dst"), (a, "data1"), (b, "data2")):
        _on_chip(v, f"tensor_tensor {what}", loc)
    _same_tile(a, b, "data1", "data2", loc)
    _same_tile(dst, a, "dst", "data1", loc)
    if a.buffer.kind == "psum" and b.buffer.kind == "psum":
        fail("buffer", "tensor_tensor: data1 and data2 cannot both be in PSUM", loc)
    name_ = op_name(op, "tensor_tensor op", loc)
    if name_ not in ALU_BINARY:
        fail("operator", f"{name_} is not a binary operator of the ALU", loc)
    # power runs on the GpSimd engine alone (nki.isa; docs/CONVENTIONS.md).
    eng = _engine_of(engine, (_E.vector, _E.gpsimd), "pool" if name_ == "power" else "dve",
                     "tensor_tensor", loc)
    return _record("tensor_tensor", eng, dst, (a, b), {"op": name_}, loc)


def tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None,
                  reverse1=False, engine=engine.unknown, name=None):
    """dst = (data op0 operand0) op1 operand1, operands scalars or [P, 1] vectors."""
    loc = caller_loc()
    dst, data = _t(dst, "dst", loc), _t(data, "data", loc)
    _on_chip(dst, "tensor_scalar dst", loc)
    _on_chip(data, "tensor_scalar data", loc)
    _same_tile(dst, data, "dst", "data", loc)
    o0 = op_name(op0, "op0", loc)
    o1 = op_name(op1, "op1", loc, allow_none=True)
    v0 = _scalar_or_vector(operand0 if operand0 is not None else 0.0, data, "operand0", loc)
    v1 = None if o1 is None else _scalar_or_vector(operand1, data, "operand1", loc)
    srcs = [data] + [x for x in (v0, v1) if isinstance(x, NkiTensor)]
    eng = _engine_of(engine, (_E.vector, _E.scalar,
                              _E.gpsimd), "dve", "tensor_scalar", loc)
    return _record("tensor_scalar", eng, dst, srcs,
                   {"op0": o0, "operand0": v0, "reverse0": bool(reverse0), "op1": o1,
                    "operand1": v1, "reverse1": bool(reverse1)}, loc)


def tensor_reduce(dst, op, data, axis, negate=False, keepdims=False, name=None):
    """dst = reduce(op) of data over its last free axes, on the Vector engine."""
    loc = caller_loc()
    dst, data = _t(dst, "dst", loc), _t(data, "data", loc)
    _on_chip(dst, "tensor_reduce dst", loc)
    _on_chip(data, "tensor_reduce data", loc)
    name_ = op_name(op, "tensor_reduce op", loc)
    if name_ not in REDUCE_OPS:
        fail("operator", f"{name_} is not a reduction operator", loc)
    axes = _axes(axis, data.ndim, loc)
    kept = math.prod(n for d, n in enumerate(data.shape) if d not in axes)
    if _parts(dst)[0] != data.shape[0] or dst.size != kept:
        fail("shape", f"tensor_reduce dst {dst.shape} does not hold the reduction of "
             f"{data.shape} over axes {axes}", loc)
    return _record("tensor_reduce", "dve", dst, (data,),
                   {"op": name_, "axes": axes, "negate": bool(negate)}, loc)


def _axes(axis, ndim, loc):
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = tuple(sorted(a + ndim if a < 0 else a for a in axes))
    if not axes or 0 in axes or axes != tuple(range(ndim - len(axes), ndim)):
        fail("axis", f"the reduced axes {axes} must be the last free axes of a "
             f"{ndim}-dimensional tile (never the partition axis 0)", loc)
    return axes


def tensor_tensor_scan(dst, data0, data1, initial, op0, op1, reverse0=False, reverse1=False,
                       name=None):
    """dst[:, i] = (data0[:, i] op0 dst[:, i-1]) op1 data1[:, i] (dst[:, -1] =
    initial), per partition, on the Vector engine."""
    loc = caller_loc()
    dst, a, b = _t(dst, "dst", loc), _t(data0, "data0", loc), _t(data1, "data1", loc)
    for v, what in ((dst, "dst"), (a, "data0"), (b, "data1")):
        _on_chip(v, f"tensor_tensor_scan {what}", loc)
    _same_tile(a, b, "data0", "data1", loc)
    _same_tile(dst, a, "dst", "data0", loc)
    init = _scalar_or_vector(initial, a, "initial", loc)
    srcs = [a, b] + ([init] if isinstance(init, NkiTensor) else [])
    return _record("tensor_tensor_scan", "dve", dst, srcs,
                   {"op0": op_name(op0, "op0", loc), "op1": op_name(op1, "op1", loc),
                    "initial": init, "reverse0": bool(reverse0), "reverse1": bool(reverse1)},
                   loc)


def iota(dst, pattern, offset=0, channel_multiplier=0, name=None):
    """dst[c, ...] = offset + c * channel_multiplier + sum of index x step over the
    pattern's dimensions, on the GpSimd engine."""
    loc = caller_loc()
    dst = _t(dst, "dst", loc)
    _on_chip(dst, "iota dst", loc, psum=False)
    dims = _iota_dims(pattern, loc)
    offset, channel_multiplier = (_int32(x, what, loc) for x, what in (
        (offset, "offset"), (channel_multiplier, "channel_multiplier")))
    if len(dims) > 4 or math.prod(n for _, n in dims) != _parts(dst)[1]:
        fail("shape", f"iota pattern {pattern} must hold the {_parts(dst)[1]} elements per "
             "partition of dst in at most 4 dimensions", loc)
    return _record("iota", "pool", dst, (), {"pattern": dims, "offset": int(offset),
                                             "channel_multiplier": int(channel_multiplier)}, loc)


def _int32(x, what, loc):
    """An integer operand of iota (the instruction's 32-bit fields)."""
    try:
        v = operator.index(x)
    except TypeError:
        fail("operand", f"iota {what} {x!r} is not an integer", loc)
    if not -2**31 <= v < 2**31:
        fail("operand", f"iota {what} {v} is outside int32 (-2^31 .. 2^31 - 1)", loc)
    return v


def _iota_dims(pattern, loc):
    """iota's [[step, count], ...] as (step, count) pairs: int32 steps, positive counts."""
    try:
        pairs = [tuple(p) for p in pattern]
    except TypeError:
        pairs = None
    if not pairs or any(len(p) != 2 for p in pairs):
        fail("shape", f"iota pattern {pattern!r} is not a list of [step, count]", loc)
    dims = [(_int32(s, "step", loc), _int32(n, "count", loc)) for s, n in pairs]
    if any(n <= 0 for _, n in dims):
        fail("shape", f"iota pattern {pattern!r}: every count must be positive", loc)
    return dims


def reciprocal(dst, data, name=None):
    """dst = 1 / data on the Vector engine."""
    loc = caller_loc()
    dst, data = _t(dst, "dst", loc), _t(data, "data", loc)
    _on_chip(dst, "reciprocal dst", loc)
    _on_chip(data, "reciprocal data", loc)
    _same_tile(dst, data, "dst", "data", loc)
    return _record("reciprocal", "dve", dst, (data,), {}, loc)


def bn_stats(dst, data, name=None):
    """Per partition, the count, mean and variance x count of the even and of the
    odd elements of data (6 per partition), on the Vector engine."""
    loc = caller_loc()
    dst, data = _t(dst, "dst", loc), _t(data, "data", loc)
    _on_chip(dst, "bn_stats dst", loc)
    _on_chip(data, "bn_stats data", loc)
    p, f = _parts(data)
    if f > 512:
        fail("shape", f"bn_stats takes at most 512 elements per partition "
             f"(nl.tile_size.bn_stats_fmax), not {f}", loc)
    if _parts(dst) != (p, 6):
        fail("shape", f"bn_stats dst {dst.shape} must be ({p}, 6)", loc)
    return _record("bn_stats", "dve", dst, (data,), {}, loc)


def bn_aggr(dst, data, name=None):
    """Per partition, the mean and variance aggregated from bn_stats outputs."""
    loc = caller_loc()
    dst, data = _t(dst, "dst", loc), _t(data, "data", loc)
    _on_chip(dst, "bn_aggr dst", loc)
    _on_chip(data, "bn_aggr data", loc)
    p, f = _parts(data)
    if f % 3:
        fail("shape", f"bn_aggr data has {f} elements per partition, not a multiple of 3", loc)
    if _parts(dst) != (p, 2):
        fail("shape", f"bn_aggr dst {dst.shape} must be ({p}, 2)", loc)
    return _record("bn_aggr", "dve", dst, (data,), {}, loc)
