"""The NumPy semantics of each isa call (docs/NKI.md "NumPy semantics"): a
kernel's trace evaluated on host arrays, with no model. For tests: the same
calls on the model (simulate) and here must agree.

Numerics as SPEC §17 / §18 say: inputs exactly to FP32, one FP32 rounding per
operator, transcendentals in float64 rounded once to FP32, reductions and
scans in ascending index order in FP32, results converted to the destination
as tpbsim.convert does (RNE, saturating); data movement bit for bit; MX as
SPEC §4 / §5 (scales from the block's largest exponent minus emax, FP32
k-ascending sums).
"""

import numpy as np

from .. import numerics
from . import host
from .errors import NKIError
from .run import host_bytes, trace_call

EMAX = {("e4m3", "ocp"): 8, ("e5m2", "ocp"): 15, ("e4m3", "neuron-alt"): 7,
        ("e5m2", "neuron-alt"): 14}


class Memory:
    """Every storage's bytes (on chip: partitions x row bytes, flat)."""

    def __init__(self, trace):
        self.act_regs = np.zeros(128, dtype=np.float32)   # the ACT's reduce registers
        self.buf = {}
        for st in trace.storages:
            b = np.zeros(st.nbytes, dtype=np.uint8)
            if st.kind == "input":
                b[:] = st.host.raw
            elif st.kind == "const":
                b[:] = host_bytes(st)
            self.buf[st.id] = b

    @staticmethod
    def _index(v):
        es = v.dtype.itemsize
        idx = np.full((), v.offset, dtype=np.int64)
        for s, n in v.dims:
            idx = idx[..., None] + s * np.arange(n, dtype=np.int64)
        return (idx[..., None] * es + np.arange(es)).reshape(v.shape + (es,))

    def raw(self, v):
        """The codes of view v (unsigned ints of its element size), in its shape."""
        b = self.buf[v.storage.id][self._index(v)]
        return np.ascontiguousarray(b).view(v.dtype.bits).reshape(v.shape)

    def put_raw(self, v, codes):
        codes = np.ascontiguousarray(np.asarray(codes).astype(v.dtype.bits).reshape(v.shape))
        self.buf[v.storage.id][self._index(v)] = codes.view(np.uint8).reshape(v.shape + (-1,))

    def get(self, v):
        """float32 values of view v (integer types: their values)."""
        return to_values(self.raw(v), v.dtype)

    def put(self, v, values):
        self.put_raw(v, to_codes(np.asarray(values), v.dtype))


def to_values(codes, dt):
    if dt.np is not None:
        return codes.view(dt.np)
    return numerics.decode(dt.fmt, codes.reshape(-1)).reshape(codes.shape)


def to_codes(vals, dt):
    """float values -> codes of dt: RNE, saturating (tpbsim.convert's rule)."""
    if dt.np is not None and dt.kind != "float":
        info = np.iinfo(dt.np) if dt.kind == "int" else None
        v = np.rint(np.nan_to_num(vals.astype(np.float64)))
        if info is not None:
            v = np.clip(v, info.min, info.max)
        return v.astype(dt.np).view(dt.bits)
    if dt.name == "float32":
        return vals.astype(np.float32).view(np.uint32)
    codes = numerics.convert("fp32", dt.fmt, vals.astype(np.float32).reshape(-1))
    return np.asarray(codes).astype(dt.bits).reshape(vals.shape)


def _f32(x):
    return np.float32(x) if np.isscalar(x) else np.asarray(x, dtype=np.float32)


_ALU = {
    "add": lambda a, b: a + b, "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b, "divide": lambda a, b: a / b,
    "maximum": lambda a, b: _minmax(a, b, np.maximum, False),
    "minimum": lambda a, b: _minmax(a, b, np.minimum, True),
    "power": lambda a, b: _f32(np.power(a.astype(np.float64), b)),
    "equal": lambda a, b: (a == b).astype(np.float32),
    "not_equal": lambda a, b: (a != b).astype(np.float32),
    "greater": lambda a, b: (a > b).astype(np.float32),
    "greater_equal": lambda a, b: (a >= b).astype(np.float32),
    "less": lambda a, b: (a < b).astype(np.float32),
    "less_equal": lambda a, b: (a <= b).astype(np.float32),
    "bypass": lambda a, b: a,
}


def _minmax(a, b, f, neg):
    """maximum / minimum: NaN when either is; +0 above -0 (the model's)."""
    a, b = np.broadcast_arrays(_f32(a), _f32(b))
    zero = (a == 0) & (b == 0)
    pick = np.where(np.signbit(a) == neg, a, b)
    out = np.where(zero, pick, f(a, b))
    return np.where(np.isnan(a) | np.isnan(b), np.float32(np.nan), out).astype(np.float32)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


_ACT = {  # in float64, rounded once to FP32 (SPEC §18)
    "copy": lambda x: x, "identity": lambda x: x, "exp": np.exp, "log": np.log,
    "sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x), "reciprocal": lambda x: 1.0 / x,
    "tanh": np.tanh, "sigmoid": _sigmoid, "relu": lambda x: np.maximum(x, 0.0),
    "gelu": lambda x: x * (1.0 + _erf(x / np.sqrt(2.0))) / 2.0,
    "gelu_apprx_tanh": lambda x: 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi)
                                                          * (x + 0.044715 * x ** 3))),
    "silu": lambda x: x * _sigmoid(x), "square": lambda x: x * x, "abs": np.abs,
    "negative": lambda x: -x, "sin": np.sin, "cos": np.cos, "arctan": np.arctan,
    "sign": np.sign, "softplus": lambda x: np.log1p(np.exp(x)),
}


def _erf(x):
    import math
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _alu(op, a, b):
    f = _ALU.get(op)
    if f is None:
        raise NKIError("numpy semantics", f"operator {op} has no NumPy semantics here")
    return _f32(f(_f32(a), _f32(b)))


def _operand(mem, x, shape):
    if isinstance(x, float):
        return np.float32(x)
    return mem.get(x).reshape(x.shape[0], *([1] * (len(shape) - 1))).astype(np.float32)


# ------------------------------------------------------------------ the calls

def _dma_copy(mem, c):
    (src,) = c.srcs
    dst = c.dst
    raw = mem.buf[src.storage.id][Memory._index(src)].reshape(-1)
    mem.buf[dst.storage.id][Memory._index(dst).reshape(-1)] = raw


def _tensor_copy(mem, c):
    (src,) = c.srcs
    dst = c.dst
    if src.dtype is dst.dtype:
        mem.put_raw(dst, mem.raw(src).reshape(-1))
    else:
        mem.put(dst, mem.get(src).astype(np.float32).reshape(dst.shape))


def _memset(mem, c):
    mem.put(c.dst, np.full(c.dst.shape, c.params["value"], dtype=np.float32))


def _quantize_mx(mem, c, emax):
    dst, sc = c.dst
    (src,) = c.srcs
    fmt = dst.dtype.fmt
    x = mem.get(src).astype(np.float32).reshape(src.shape[0], -1)
    p, n = x.shape
    bexp = ((x.view(np.uint32) >> 23) & 0xFF).astype(np.int64).reshape(p // 8, 8, n // 4, 4)
    bad = ~np.isfinite(x).reshape(p // 8, 8, n // 4, 4).all(axis=(1, 3))
    s = np.clip(bexp.max(axis=(1, 3)) - EMAX[(fmt, emax)], 0, 254)
    s = np.where(bad, 0xFF, s)
    sel = np.repeat(np.repeat(s, 8, axis=0), 4, axis=1)
    scaled = (x.astype(np.float64) * np.exp2(127.0 - np.where(sel == 0xFF, 127, sel)))
    codes = np.asarray(numerics.convert("fp32", fmt, scaled.astype(np.float32).reshape(-1)))
    codes = np.where(sel.reshape(-1) == 0xFF, 0x7F, codes).reshape(p, n).astype(np.uint32)
    words = codes.reshape(p, n // 4, 4)
    packed = words[..., 0] | words[..., 1] << 8 | words[..., 2] << 16 | words[..., 3] << 24
    mem.put_raw(dst, packed.reshape(dst.shape))
    rows = mem.raw(sc).copy().reshape(sc.shape[0], -1)
    for b in range(p // 8):
        rows[32 * (b // 4) + b % 4] = s[b]
    mem.put_raw(sc, rows.reshape(sc.shape))


def mx_values(codes, scales, fmt, x4_bits):
    """FP32 values [4K][N] of an MX operand: codes [K][N] x4 words, scales by
    block row (SPEC §5: contraction index k = 4 p + lane)."""
    k, n = codes.shape
    per = 8 if x4_bits == 32 else 4
    lanes = np.stack([(codes >> (per * j)) & ((1 << per) - 1) for j in range(4)], axis=-1)
    v = numerics.decode(fmt, lanes.reshape(-1).astype(np.uint8)).reshape(k, n, 4)
    sc = np.repeat(scales.astype(np.float64), 8, axis=0)[:, :, None]
    mult = np.where(sc == 0xFF, np.nan, np.exp2(sc - 127.0))
    full = (v.astype(np.float32) * mult.astype(np.float32)).astype(np.float32)
    return full.transpose(0, 2, 1).reshape(4 * k, n)


def _scale_rows(mem, sc, parts):
    rows = mem.raw(sc).reshape(sc.shape[0], -1)
    return np.stack([rows[32 * (b // 4) + b % 4] for b in range(parts // 8)])


def _nc_matmul_mx(mem, c):
    st, mv, ss, ms = c.srcs
    k = st.shape[0]
    bits = st.dtype.itemsize * 8
    w = mx_values(mem.raw(st).reshape(k, -1), _scale_rows(mem, ss, k), st.dtype.fmt, bits)
    x = mx_values(mem.raw(mv).reshape(k, -1), _scale_rows(mem, ms, k), mv.dtype.fmt, bits)
    _matmul_into(mem, c, w, x)


def _matmul_into(mem, c, w, x):
    """dst[m][n] (+)= sum over k ascending of w[k][m] x[k][n], FP32, one rounding
    per multiply and per add; accumulating, the old value is the first addend
    (docs/CONVENTIONS.md "PE matmul")."""
    if c.params.get("accumulate"):
        total = mem.get(c.dst).astype(np.float32).reshape(w.shape[1], x.shape[1])
        first = 0
    else:
        total = (w[0][:, None] * x[0][None, :]).astype(np.float32)
        first = 1
    for kk in range(first, w.shape[0]):
        total = (total + w[kk][:, None] * x[kk][None, :]).astype(np.float32)
    mem.put(c.dst, total.reshape(c.dst.shape))


def _nc_matmul(mem, c):
    st, mv = c.srcs
    k = st.shape[0] * (2 if c.params.get("perf_mode") == "double_row" else 1)
    # double row: NKI's [K, 2, M]: contraction row 2p + j at [p, j] (docs/CONVENTIONS.md)
    w = mem.get(st).astype(np.float32).reshape(k, -1)
    x = mem.get(mv).astype(np.float32).reshape(k, -1)
    if c.params.get("is_transpose"):
        mem.put(c.dst, w.T.reshape(c.dst.shape))
        return
    _matmul_into(mem, c, w, x)


def _nc_transpose(mem, c):
    (data,) = c.srcs
    d = mem.raw(data).reshape(data.shape[0], -1)
    mem.put_raw(c.dst, d.T.copy())


def _activation(mem, c):
    """dst = f(x scale + bias) (one rounding each); the row reduce (add or max
    of the FP32 results, ascending) combined with the ACT's per-partition
    registers by reduce_cmd; reduce_res, when given, gets the registers."""
    dst = c.dst[0] if isinstance(c.dst, tuple) else c.dst
    data = c.srcs[0]
    x = mem.get(data).astype(np.float32)
    p = c.params
    sc = _operand(mem, p["scale"], x.shape)
    bi = np.float32(0) if p["bias"] is None else _operand(mem, p["bias"], x.shape)
    t = _f32(x * sc)
    if p["bias"] is not None:
        t = _f32(t + bi)
    y = _f32(_ACT[p["op"]](t.astype(np.float64)))
    mem.put(dst, y)
    cmd = p.get("reduce_cmd", "idle")
    if cmd == "idle":
        return
    p0 = data.partition_form()[0]
    rows = p0 + np.arange(x.shape[0])
    r = _fold(p["reduce_op"], y.reshape(y.shape[0], -1))
    if cmd == "reset":
        mem.act_regs[rows] = 0
    elif cmd == "reset_reduce":
        mem.act_regs[rows] = r
    else:
        mem.act_regs[rows] = _alu(p["reduce_op"], mem.act_regs[rows], r)
    if isinstance(c.dst, tuple):
        mem.put(c.dst[1], mem.act_regs[rows].reshape(c.dst[1].shape))


def _tensor_tensor(mem, c):
    a, b = c.srcs
    mem.put(c.dst, _alu(c.params["op"], mem.get(a).reshape(c.dst.shape),
                        mem.get(b).reshape(c.dst.shape)))


def _tensor_scalar(mem, c):
    p = c.params
    x = mem.get(c.srcs[0]).astype(np.float32).reshape(c.dst.shape)
    v0 = _operand(mem, p["operand0"], x.shape)
    y = _alu(p["op0"], v0, x) if p["reverse0"] else _alu(p["op0"], x, v0)
    if p["op1"] is not None:
        v1 = _operand(mem, p["operand1"], x.shape)
        y = _alu(p["op1"], v1, y) if p["reverse1"] else _alu(p["op1"], y, v1)
    mem.put(c.dst, y)


def _tensor_reduce(mem, c):
    x = mem.get(c.srcs[0]).astype(np.float32)
    axes = c.params["axes"]
    kept = [n for d, n in enumerate(x.shape) if d not in axes]
    flat = x.reshape(*kept, -1)
    out = flat[..., 0].copy()
    for j in range(1, flat.shape[-1]):
        out = _alu(c.params["op"], out, flat[..., j])
    if c.params["negate"]:
        out = -out
    mem.put(c.dst, out.reshape(c.dst.shape))


def _tensor_tensor_scan(mem, c):
    p = c.params
    a = mem.get(c.srcs[0]).astype(np.float32).reshape(c.dst.shape[0], -1)
    b = mem.get(c.srcs[1]).astype(np.float32).reshape(a.shape)
    prev = _operand(mem, p["initial"], (a.shape[0], 1)).reshape(-1) * np.ones(a.shape[0],
                                                                            np.float32)
    out = np.empty_like(a)
    for i in range(a.shape[1]):
        t = _alu(p["op0"], prev, a[:, i]) if p["reverse0"] else _alu(p["op0"], a[:, i], prev)
        t = _alu(p["op1"], b[:, i], t) if p["reverse1"] else _alu(p["op1"], t, b[:, i])
        out[:, i] = t
        prev = t
    mem.put(c.dst, out.reshape(c.dst.shape))


def _iota(mem, c):
    p = c.params
    parts = c.dst.shape[0]
    vals = np.full((), p["offset"], dtype=np.int64)
    for s, n in p["pattern"]:
        vals = vals[..., None] + s * np.arange(n)
    vals = vals.reshape(1, -1) + p["channel_multiplier"] * np.arange(parts)[:, None]
    mem.put(c.dst, vals.astype(np.float64).reshape(c.dst.shape))


def _reciprocal(mem, c):
    mem.put(c.dst, _f32(1.0 / mem.get(c.srcs[0]).astype(np.float64)).reshape(c.dst.shape))


def _fold(op, cols):
    """FP32 fold of columns in ascending order from the first."""
    acc = cols[:, 0].astype(np.float32)
    for j in range(1, cols.shape[1]):
        acc = _alu(op, acc, cols[:, j])
    return acc


def _bn_stats(mem, c):
    """Per half (even, odd indices): count, mean = FP32 sum / count, M2 = FP32
    sum of the rounded squares of the rounded differences (docs/CONVENTIONS.md)."""
    x = mem.get(c.srcs[0]).astype(np.float32).reshape(c.dst.shape[0], -1)
    out = []
    for half in (x[:, 0::2], x[:, 1::2]):
        n = half.shape[1]
        if n == 0:
            out += [np.zeros(x.shape[0], np.float32)] * 3
            continue
        mean = _f32(_fold("add", half) / np.float32(n))
        m2 = _fold("add", _f32(np.square(_f32(half - mean[:, None]))))
        out += [np.full(x.shape[0], n, np.float32), mean, m2]
    mem.put(c.dst, np.stack(out, axis=1))


def _bn_aggr(mem, c):
    """Counts and count-weighted means summed in FP32 from 0, ascending; M2 the
    sum of M2_i + count_i (mean_i - mean)^2; out {mean, M2 / N}."""
    s = mem.get(c.srcs[0]).astype(np.float32).reshape(c.dst.shape[0], -1, 3)
    n, mean, m2 = s[..., 0], s[..., 1], s[..., 2]
    z = np.zeros(n.shape[0], np.float32)
    tot = _fold("add", np.concatenate([z[:, None], n], axis=1))
    mu = _f32(_fold("add", np.concatenate([z[:, None], _f32(n * mean)], axis=1)) / tot)
    d = _f32(mean - mu[:, None])
    terms = _f32(m2 + _f32(n * _f32(d * d)))
    var = _f32(_fold("add", np.concatenate([z[:, None], terms], axis=1)) / tot)
    mem.put(c.dst, np.stack([mu, var], axis=1))


SEMANTICS = {
    "dma_copy": _dma_copy, "tensor_copy": _tensor_copy, "memset": _memset,
    "nc_matmul_mx": _nc_matmul_mx, "nc_matmul": _nc_matmul, "nc_transpose": _nc_transpose,
    "activation": _activation, "tensor_tensor": _tensor_tensor, "tensor_scalar": _tensor_scalar,
    "tensor_reduce": _tensor_reduce, "tensor_tensor_scan": _tensor_tensor_scan, "iota": _iota,
    "reciprocal": _reciprocal, "bn_stats": _bn_stats, "bn_aggr": _bn_aggr,
}


def evaluate(trace, mx_emax="neuron-alt"):
    """Every call of a trace on a Memory; returns it."""
    mem = Memory(trace)
    for c in trace.calls:
        if c.op == "quantize_mx":
            _quantize_mx(mem, c, mx_emax)
        else:
            SEMANTICS[c.op](mem, c)
    return mem


def run(fn, args, kwargs, arch, mx_emax="neuron-alt"):
    """The kernel's outputs by NumPy alone (tpbsim.nki.reference)."""
    traced = trace_call(fn, arch, args, kwargs)
    mem = evaluate(traced.trace, mx_emax)
    kind = host.output_kind(traced.inputs)
    outs = [host.to_host(mem.buf[v.storage.id][Memory._index(v)].reshape(-1), v.dtype, v.shape,
                         kind) for v in traced.outputs]
    if traced.ret == "one":
        return outs[0]
    if traced.ret == "none":
        return None
    return tuple(outs) if traced.ret == "tuple" else outs
