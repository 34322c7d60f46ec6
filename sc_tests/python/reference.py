"""Reference numerics: the one independent oracle of the Python tests and of
scripts/gen_workloads.py (every workload's expected.npy), written here from
the format definitions (OCP MX / IEEE 754 field layouts, QLoRA's NF4 table)
and the rules of SPEC §4, §5 and docs/CONVENTIONS.md, with NumPy only:
nothing here calls tpbsim or reads its code, so a test that compares tpbsim
against it compares two independent implementations.
"""

import math

import numpy as np

# (exponent bits, mantissa bits, bias, specials): "ieee" (all-ones exponent is
# Inf / NaN), "fn" (only S.1111.111 is NaN, no Inf: OCP E4M3), "none" (every
# code finite: OCP FP6 / FP4).
MINIFLOATS = {
    "e4m3": (4, 3, 7, "fn"),
    "e5m2": (5, 2, 15, "ieee"),
    "e3m4": (3, 4, 3, "ieee"),
    "e2m5": (2, 5, 1, "ieee"),
    "fp6_e2m3": (2, 3, 1, "none"),
    "fp6_e3m2": (3, 2, 3, "none"),
    "fp4_e2m1": (2, 1, 1, "none"),
    "fp16": (5, 10, 15, "ieee"),
}
# docs/CONVENTIONS.md: the canonical NaN of each format (sign and payload dropped).
CANONICAL_NAN = {"e4m3": 0x7F, "e5m2": 0x7E, "e3m4": 0x78, "e2m5": 0x70, "fp16": 0x7E00,
                 "bf16": 0x7FC0, "fp32": 0x7FC00000}

# QLoRA NormalFloat4 (Dettmers et al. 2023, appendix E), index 7 = 0.
NF4 = np.array([-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
                -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
                0.07958029955625534, 0.16093020141124725, 0.24611230194568634,
                0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
                0.7229568362236023, 1.0], dtype=np.float32).astype(np.float64)


def minifloat_values(fmt):
    """The value of every code of a minifloat (float64; NaN where a NaN)."""
    e, m, bias, specials = MINIFLOATS[fmt]
    codes = np.arange(1 << (1 + e + m))
    sign = np.where(codes >> (e + m) & 1, -1.0, 1.0)
    ex = (codes >> m) & ((1 << e) - 1)
    man = codes & ((1 << m) - 1)
    mag = np.where(ex == 0, man / 2.0**m * 2.0**(1 - bias),
                   (1 + man / 2.0**m) * 2.0**(ex.astype(np.float64) - bias))
    top = ex == (1 << e) - 1
    if specials == "ieee":
        mag = np.where(top & (man == 0), np.inf, np.where(top, np.nan, mag))
    elif specials == "fn":
        mag = np.where(top & (man == (1 << m) - 1), np.nan, mag)
    return sign * mag


def _max_code(fmt):
    e, m, _, specials = MINIFLOATS[fmt]
    if specials == "ieee":
        return (((1 << e) - 1) << m) - 1
    if specials == "fn":
        return (1 << (e + m)) - 2
    return (1 << (e + m)) - 1


def encode_minifloat(fmt, x, saturate=True):
    """RNE of float64 values to codes, from the exact value: the nearest finite
    code, a tie to the even code; past the largest finite value (the virtual
    next code after it, which a tie reaches when it is even) saturate to it,
    or overflow to Inf (ieee), NaN (fn) or the largest (none). Inf stays Inf
    where the format has it."""
    e, m, _, specials = MINIFLOATS[fmt]
    x = np.asarray(x, dtype=np.float64)
    vals = minifloat_values(fmt)
    top = _max_code(fmt)
    pos = vals[: top + 1]                       # codes 0..top, increasing
    ulp = pos[top] - pos[top - 1]
    ext = np.append(pos, pos[top] + ulp)        # + the virtual code top + 1
    a = np.abs(x)
    finite = np.isfinite(a)
    af = np.where(finite, a, 0.0)
    hi = np.clip(np.searchsorted(ext, af), 0, top + 1)
    lo = np.clip(hi - 1, 0, top + 1)
    d_lo, d_hi = af - ext[lo], ext[hi] - af
    pick_hi = (d_hi < d_lo) | ((d_hi == d_lo) & (hi % 2 == 0))
    mag = np.where(pick_hi, hi, lo)
    sign = np.signbit(x).astype(np.int64) << (e + m)
    over = (mag > top) | np.isinf(a)
    if specials == "ieee":
        inf_code = ((1 << e) - 1) << m
        over_code = np.where(np.isinf(a) | (not saturate), inf_code, top)
    elif specials == "fn":
        over_code = np.full(x.shape, top if saturate else CANONICAL_NAN[fmt])
    else:
        over_code = np.full(x.shape, top)
    code = np.where(over, over_code, mag) | sign
    if specials == "fn" and not saturate:
        code = np.where(over, CANONICAL_NAN[fmt], code)  # NaN: sign dropped
    out = np.where(np.isnan(x), CANONICAL_NAN.get(fmt, 0), code)
    return out.astype(np.int64)


def encode_bf16(x, saturate=True):
    """FP32 value -> BF16 code: RNE on the FP32 bits, canonical NaN."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.int64)
    f = np.asarray(x, dtype=np.float32)
    if saturate:
        r = np.where(np.isfinite(f) & ((r & 0x7FFF) == 0x7F80), (r & 0x8000) | 0x7F7F, r)
    return np.where(np.isnan(f), CANONICAL_NAN["bf16"], r)


def encode_int(x, lo, hi, bits, saturate=True):
    """RNE to an integer, then saturate (or wrap modulo 2^bits); NaN -> 0."""
    x = np.asarray(x, dtype=np.float64)
    r = np.rint(np.where(np.isnan(x), 0, np.clip(x, -1e300, 1e300)))
    r = np.where(np.isinf(x), np.where(x > 0, hi, lo), r)
    r = np.clip(r, lo, hi) if saturate else np.mod(r, 2**bits)
    return (r.astype(np.int64) & ((1 << bits) - 1)).astype(np.int64)


def encode_nf4(x):
    """Nearest NF4 codebook entry (its FP32 values), a tie to the even index:
    x against the midpoints of neighbouring entries (exact in float64)."""
    x = np.asarray(x, dtype=np.float64)
    mid = (NF4[:-1] + NF4[1:]) / 2
    below = np.searchsorted(mid, x, side="left")   # entries whose midpoint is < x
    at_mid = np.isin(x, mid)
    # On a midpoint between i - 1 and i: the even one of the two.
    out = np.where(at_mid, np.where(below % 2 == 0, below, below + 1), below)
    return np.where(np.isnan(x), 7, out)


def encode_e8m0(x, saturate=True):
    """2^(s-127): mantissa-less RNE (1.5 x 2^e goes up); below 2^-127 -> 0;
    negative or NaN -> 0xFF; past 2^127 (from 1.5 x 2^127) -> 0xFE, or 0xFF."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros(x.shape, dtype=np.int64)
    for i, v in np.ndenumerate(x):
        if np.isnan(v) or v < 0:
            out[i] = 0xFF
        elif v < 2.0**-127:
            out[i] = 0
        elif np.isinf(v) or v >= 1.5 * 2.0**127:
            out[i] = 0xFE if saturate else 0xFF
        else:
            e = int(np.floor(np.log2(v)))
            while 2.0**e > v:
                e -= 1
            while 2.0**(e + 1) <= v:
                e += 1
            s = e + 127 + (1 if v >= 1.5 * 2.0**e else 0)
            out[i] = max(0, min(s, 254))
    return out


def decode(fmt, codes):
    """The exact value of codes of fmt (float64)."""
    codes = np.asarray(codes, dtype=np.int64)
    if fmt in MINIFLOATS:
        return minifloat_values(fmt)[codes]
    if fmt in ("bf16", "fp32"):
        bits = codes.astype(np.uint32) << (16 if fmt == "bf16" else 0)
        with np.errstate(invalid="ignore"):  # signalling NaNs widen to quiet ones
            return bits.view(np.float32).astype(np.float64)
    if fmt == "int4":
        return np.where(codes >= 8, codes - 16, codes).astype(np.float64)
    if fmt == "s8":
        return np.where(codes >= 128, codes - 256, codes).astype(np.float64)
    if fmt == "u8":
        return codes.astype(np.float64)
    if fmt == "nf4":
        return NF4[codes]
    if fmt == "e8m0":
        return np.where(codes == 0xFF, np.nan, 2.0**(codes.astype(np.float64) - 127))
    raise KeyError(fmt)


def encode(fmt, x, saturate=True):
    """A value (float64, already an FP32 value) -> a code of fmt."""
    if fmt in MINIFLOATS:
        return encode_minifloat(fmt, x, saturate)
    if fmt == "bf16":
        return encode_bf16(x, saturate)
    if fmt == "fp32":
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(over="ignore"):
            r = x.astype(np.float32)
        if saturate:  # a finite value past FP32's range: the largest finite
            r = np.where(np.isfinite(x) & np.isinf(r), np.copysign(np.finfo(np.float32).max, x),
                         r).astype(np.float32)
        return np.where(np.isnan(x), CANONICAL_NAN["fp32"], r.view(np.uint32)).astype(np.int64)
    if fmt == "int4":
        return encode_int(x, -8, 7, 4, saturate)
    if fmt == "s8":
        return encode_int(x, -128, 127, 8, saturate)
    if fmt == "u8":
        return encode_int(x, 0, 255, 8, saturate)
    if fmt == "nf4":
        return encode_nf4(x)
    if fmt == "e8m0":
        return encode_e8m0(x, saturate)
    raise KeyError(fmt)


# ------------------------------------------------------------------ MX (SPEC §4, §5)

EMAX = {("e4m3", "ocp"): 8, ("e5m2", "ocp"): 15, ("e4m3", "neuron-alt"): 7,
        ("e5m2", "neuron-alt"): 14}


def mx_quantize(vals, out_fmt, emax="ocp"):
    """SPEC §4 QuantizeMX of [partitions][elements] FP32 values: blocks of 8
    partitions x 4 elements; scale = max biased FP32 exponent of the block
    (zero and subnormals count 0) - emax, clamped to [0, 254]; 0xFF and NaN
    codes for a block holding NaN or Inf; q = RNE(x / 2^(s-127)) saturated.
    Returns (codes [P][E], scales [P // 8][E // 4])."""
    vals = np.asarray(vals, dtype=np.float32)
    p, n = vals.shape
    bexp = ((vals.view(np.uint32) >> 23) & 0xFF).astype(np.int64)
    blocks = bexp.reshape(p // 8, 8, n // 4, 4)
    bad = ~np.isfinite(vals).reshape(p // 8, 8, n // 4, 4).all(axis=(1, 3))
    s = np.clip(blocks.max(axis=(1, 3)) - EMAX[(out_fmt, emax)], 0, 254)
    s = np.where(bad, 0xFF, s)
    s_el = np.repeat(np.repeat(s, 8, axis=0), 4, axis=1)
    scaled = vals.astype(np.float64) * 2.0**(127 - np.where(s_el == 0xFF, 127, s_el))
    codes = encode_minifloat(out_fmt, scaled, saturate=True)
    codes = np.where(s_el == 0xFF, 0x7F, codes)
    return codes, s


def pack_x4(codes):
    """[P][4J] byte codes -> [P][J] u32 words, element 4j in byte 0."""
    c = np.asarray(codes, dtype=np.uint32).reshape(codes.shape[0], -1, 4)
    return c[..., 0] | c[..., 1] << 8 | c[..., 2] << 16 | c[..., 3] << 24


def scale_rows(scales, pidx=0):
    """SPEC §4 placement: block row b -> partition 32 (b // 4) + pidx + b % 4
    (from the scale start partition); returns {partition: bytes}."""
    return {32 * (b // 4) + pidx + b % 4: scales[b].astype(np.uint8) for b in range(len(scales))}


def mx_values(codes, scales, fmt):
    """FP32 [4P][J] values of an MX tensor, contraction index k = 4p + lane (SPEC
    §5): code value x 2^(s-127) as one FP32 multiply."""
    p, n = codes.shape
    v = decode(fmt, codes).astype(np.float32)
    s = np.repeat(np.repeat(scales, 8, axis=0), 4, axis=1)
    sc = np.where(s == 0xFF, np.float32(np.nan), np.exp2(s.astype(np.float64) - 127)).astype(
        np.float32)
    full = v * sc                                  # [p][4j + lane]
    return full.reshape(p, n // 4, 4).transpose(0, 2, 1).reshape(4 * p, n // 4)


def matmul_fp32(w, x):
    """PSUM[m][n] = sum over k ascending of w[k][m] * x[k][n], FP32, one rounding
    per multiply and per add (SPEC §5)."""
    acc = w[0][:, None] * x[0][None, :]
    for k in range(1, w.shape[0]):
        acc = acc + w[k][:, None] * x[k][None, :]
    return acc.astype(np.float32)


# ---- SPEC §18: the vector instructions (docs/CONVENTIONS.md "Vector numerics") ----
# Inputs are FP32 values (exact); every operator one FP32 rounding (NumPy's
# float32 arithmetic is IEEE single); a transcendental in double by the C
# library (Python's math module) and one rounding; reductions and scans in
# ascending index order; results encoded as `tpbsim convert` does (encode).

MINIFLOATS["e4m3_legacy"] = (4, 3, 7, "ieee")  # NKI's float8_e4m3 (v2, v3): max 240
CANONICAL_NAN["e4m3_legacy"] = 0x7C

F32 = np.float32


def _libm(name, d):
    """math.NAME(d) with the C library's IEEE result where Python raises."""
    try:
        return getattr(math, name)(d)
    except OverflowError:
        return math.inf
    except ValueError:  # a pole (log 0, log1p -1) or outside the domain
        if d == 0 or (name == "log1p" and d == -1):
            return -math.inf
        return math.nan


def _dbl(name):
    return np.vectorize(lambda d: _libm(name, float(d)), otypes=[np.float64])


def _one_rounding(d):
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(d, np.float64).astype(F32)


def _div64(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(a, np.float64) / np.asarray(b, np.float64)


def activation_function(name, x):
    """f(x) of an FP32 array, FP32: the function table of SPEC §18."""
    x = np.asarray(x, F32)
    d = x.astype(np.float64)
    exp, tanh, erf = _dbl("exp"), _dbl("tanh"), _dbl("erf")
    with np.errstate(all="ignore"):
        if name == "copy":
            return x.copy()
        if name == "relu":
            return np.where(np.isnan(x), x, np.where(x > 0, x, F32(0)))
        if name == "abs":
            return np.abs(x)
        if name == "square":
            return x * x
        if name == "sign":
            return np.where(np.isnan(x), x, np.sign(x).astype(F32) + F32(0))
        table = {
            "exp": lambda: exp(d),
            "log": lambda: _dbl("log")(d),
            "sqrt": lambda: _dbl("sqrt")(d),
            "rsqrt": lambda: _div64(1.0, _dbl("sqrt")(d)),
            "reciprocal": lambda: _div64(1.0, d),
            "tanh": lambda: tanh(d),
            "sigmoid": lambda: _div64(1.0, 1.0 + exp(-d)),
            "silu": lambda: _div64(d, 1.0 + exp(-d)),
            "gelu": lambda: d * (1.0 + erf(d / math.sqrt(2.0))) / 2.0,
            "gelu_apprx_tanh": lambda: d * (1.0 + tanh(math.sqrt(2.0 / math.pi) *
                                                       (d + 0.044715 * d * d * d))) / 2.0,
            "erf": lambda: erf(d),
            "softplus": lambda: _dbl("log1p")(exp(d)),
        }
        return _one_rounding(table[name]())


def _maxmin(a, b, want_max):
    a, b = np.broadcast_arrays(np.asarray(a, F32), np.asarray(b, F32))
    nan = np.isnan(a) | np.isnan(b)
    first = (a > b) if want_max else (a < b)
    second = (b > a) if want_max else (b < a)
    # equal values: +0 is the larger of +0 and -0
    tie = np.where(np.signbit(a), b, a) if want_max else np.where(np.signbit(a), a, b)
    return np.where(nan, F32(np.nan), np.where(first, a, np.where(second, b, tie))).astype(F32)


def alu(op, a, b=None):
    """a <op> b on FP32 arrays (the nki.language operator names)."""
    a = np.asarray(a, F32)
    b = np.asarray(a if b is None else b, F32)
    truth = lambda t: np.where(t, F32(1), F32(0))  # noqa: E731
    with np.errstate(all="ignore"):
        ops = {
            "bypass": lambda: a.copy(),
            "add": lambda: a + b, "subtract": lambda: a - b, "multiply": lambda: a * b,
            "divide": lambda: a / b,
            "maximum": lambda: _maxmin(a, b, True), "minimum": lambda: _maxmin(a, b, False),
            "equal": lambda: truth(a == b), "not_equal": lambda: truth(~(a == b)),
            "greater_equal": lambda: truth(a >= b), "greater": lambda: truth(a > b),
            "less_equal": lambda: truth(a <= b), "less": lambda: truth(a < b),
            "power": lambda: _one_rounding(np.vectorize(
                lambda x, y: _pow(float(x), float(y)), otypes=[np.float64])(a, b)),
            "abs_max": lambda: _maxmin(np.abs(a), np.abs(b), True),
            "abs_min": lambda: _maxmin(np.abs(a), np.abs(b), False),
            "abs": lambda: np.abs(a), "square": lambda: a * a,
            "rsqrt": lambda: _one_rounding(_div64(1.0, _dbl("sqrt")(a.astype(np.float64)))),
            "reciprocal": lambda: F32(1) / a,
        }
        return np.asarray(ops[op](), F32)


def _pow(x, y):
    try:
        return math.pow(x, y)
    except OverflowError:
        return math.inf
    except ValueError:  # 0 ** negative: a pole; negative ** fraction: NaN
        if x == 0:
            odd = y == math.floor(y) and math.fmod(y, 2) != 0
            return math.copysign(math.inf, x) if odd else math.inf
        return math.nan


def reduce_rows(op, x):
    """op over each row of x (2-D, FP32), ascending, from the first element."""
    x = np.asarray(x, F32)
    acc = x[:, 0].copy()
    for i in range(1, x.shape[1]):
        acc = alu(op, acc, x[:, i])
    return acc


def scan_rows(op0, op1, x0, x1, initial, reverse0=False, reverse1=False):
    """tensor_tensor_scan per row: acc = op1(op0(x0[i], acc), x1[i])."""
    x0, x1 = np.asarray(x0, F32), np.asarray(x1, F32)
    acc = np.broadcast_to(np.asarray(initial, F32), x0.shape[:1]).copy()
    out = np.empty_like(x0)
    for i in range(x0.shape[1]):
        t = alu(op0, acc, x0[:, i]) if reverse0 else alu(op0, x0[:, i], acc)
        acc = alu(op1, x1[:, i], t) if reverse1 else alu(op1, t, x1[:, i])
        out[:, i] = acc
    return out


def bn_stats_rows(x):
    """[count, mean, M2] of the even-index elements, then of the odd-index
    ones, per row (docs/CONVENTIONS.md: two passes, ascending, FP32)."""
    x = np.asarray(x, F32)
    out = np.zeros((x.shape[0], 6), F32)
    for half in (0, 1):
        h = x[:, half::2]
        if h.shape[1] == 0:
            continue
        c = F32(h.shape[1])
        mean = reduce_rows("add", h) / c
        d = h - mean[:, None]
        out[:, 3 * half] = c
        out[:, 3 * half + 1] = mean
        out[:, 3 * half + 2] = reduce_rows("add", d * d)
    return out


def bn_aggr_rows(s):
    """[mean, variance] of rows of (count, mean, M2) triples."""
    s = np.asarray(s, F32)
    c, m, m2 = s[:, 0::3], s[:, 1::3], s[:, 2::3]
    n = np.zeros(s.shape[0], F32)
    w = np.zeros(s.shape[0], F32)
    for i in range(c.shape[1]):
        n = n + c[:, i]
        w = w + c[:, i] * m[:, i]
    with np.errstate(all="ignore"):
        mean = w / n
        acc = np.zeros(s.shape[0], F32)
        for i in range(c.shape[1]):
            d = m[:, i] - mean
            acc = acc + (m2[:, i] + c[:, i] * (d * d))
        return np.stack([mean, acc / n], axis=1).astype(F32)
