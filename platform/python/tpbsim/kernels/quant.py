"""Host-side quantizers of the GEMM kernel: what the hardware is handed, and the
exact FP32 values the PE multiplies (docs/KERNELS.md "The quantizer").

Every function works on NumPy arrays; the minifloat codecs are the model's
(`tpbsim convert`: RNE, saturating). Two implementations of the same rules:
the default one quantizes in compiled code (`_tpbsim.mx_quantize_rows`, the
model's num::encode / num::decode over blocks of 32 along a row, then NumPy
transposes to pack), the NumPy one (`fast=False`: tpbsim.encode / decode over
whole arrays, 10 to 20 times slower) is kept as the tests' second opinion.
Layout terms:
the contraction index k of a K-tile is 4p + l, p the SBUF partition and l the
lane of an x4 word (SPEC §5); "rows" below are partitions, one per 4 k.
"""

import numpy as np

from .. import _tpbsim, numerics

# Weight formats: how each reaches the PE (SPEC §12).
#   store:  "mx"     the PE's MX operand as it is (x4 words + E8M0 scales)
#           "bf16"   BF16, quantized to MXFP8 E4M3 on the DVE (QuantizeMX)
#           "packed" seed 000 packed codes, widened by POOL TensorDequantize
#   pe:     the PE's in_dtype for the weights
WEIGHT_FORMATS = {
    "mxfp8": dict(store="mx", code="e4m3", pe="fp8_e4m3", emax=8, word_bytes=4),
    "mxfp4": dict(store="mx", code="fp4_e2m1", pe="fp4_e2m1", emax=2, word_bytes=2),
    "bf16": dict(store="bf16", pe="fp8_e4m3"),
    "fp4": dict(store="packed", code="fp4_e2m1", dq="e2m1_to_e5m2", group=8, out="e5m2",
                pe="fp8_e5m2", ncols=8),
    "int4": dict(store="packed", code="int4", dq="int4_to_e5m2", group=8, out="e5m2",
                 pe="fp8_e5m2", ncols=8),
    "nf4": dict(store="packed", code="nf4", dq="nf4_to_e4m3", group=8, out="e4m3",
                pe="fp8_e4m3", ncols=8),
    "fp6": dict(store="packed", code="fp6_e2m3", dq="e2m3_to_e4m3", group=0, out="e4m3",
                pe="fp8_e4m3", ncols=4, emax=2),
}

QMX_EMAX = {"ocp": 8, "neuron-alt": 7}  # QuantizeMX E4M3 emax (SPEC §4)


def biased_exponent(x):
    """The biased FP32 exponent field of float32 values (0 for zero / subnormal)."""
    return ((np.asarray(x, dtype=np.float32).view(np.uint32) >> 23) & 0xFF).astype(np.int64)


def pow2(e):
    """2^e as float32 (e an integer array, -149 <= e <= 127)."""
    return np.ldexp(np.float32(1.0), np.asarray(e, dtype=np.int32)).astype(np.float32)


def bf16(x):
    """float32 -> (BF16 codes uint16, their float32 values): RNE."""
    bits = numerics.convert("fp32", "bf16", np.asarray(x, dtype=np.float32))
    return bits, numerics.decode("bf16", bits)


def mx_block_scale(amax_bexp, emax):
    """SPEC §4's scale: the block's largest biased exponent - emax, in [0, 254]."""
    return np.clip(amax_bexp - emax, 0, 254)


def mx_encode(x, scale, code):
    """codes of x / 2^(scale-127) in the element format (RNE, saturating)."""
    s = np.asarray(scale, dtype=np.int64)
    scaled = x.astype(np.float64) * np.exp2(127.0 - s)
    return numerics.encode(code, scaled.astype(np.float32)).astype(np.int64)


def mx_values(codes, scale, code):
    """The PE's element value: code value x 2^(s-127), one FP32 multiply (SPEC §5)."""
    v = numerics.decode(code, codes).astype(np.float32)
    s = np.asarray(scale, dtype=np.int64)
    sc = np.where(s == 0xFF, np.float32(np.nan), pow2(np.where(s == 0xFF, 0, s) - 127))
    return (v * sc.astype(np.float32)).astype(np.float32)


# ------------------------------------------------------------ activations (DVE)

def quantize_mx_dve(vals, emax="ocp"):
    """What the DVE's QuantizeMX makes of [P][4C] FP32 source values (partition p,
    element 4c + l): blocks of 8 partitions x 4 elements, scale = max biased
    exponent - emax, E4M3 codes. Returns (codes [P][4C], scales [P/8][C]).
    The source must be finite (the GEMM refuses NaN / Inf inputs)."""
    vals = np.asarray(vals, dtype=np.float32)
    p, n = vals.shape
    be = biased_exponent(vals).reshape(p // 8, 8, n // 4, 4)
    s = mx_block_scale(be.max(axis=(1, 3)), QMX_EMAX[emax])
    s_el = np.repeat(np.repeat(s, 8, axis=0), 4, axis=1)
    return mx_encode(vals, s_el, "e4m3"), s


# ------------------------------------------------------------ weights (host)

class QuantizedWeights:
    """A K x N weight matrix as the hardware is handed it (for the padded K, N).

    rows: [Kpad/4][...] arrays with one row per contraction partition (global
    partition index k // 4), columns as the SBUF holds them:
      data    the bytes of the tile source per row (uint8), cols_bytes per column
      scales  [Kpad/32][Npad] E8M0 bytes for the PE (None: unit scales 127)
    used: the [Kpad][Npad] float32 values the PE multiplies.
    """

    def __init__(self, fmt, data, col_bytes, scales, used, pe_scales_unit):
        self.fmt, self.data, self.col_bytes = fmt, data, col_bytes
        self.scales, self.used, self.pe_scales_unit = scales, used, pe_scales_unit


def _mx_k_blocks(w, emax, code):
    """MX quantization along k in blocks of 32 (8 partitions x one x4 word): the
    block scale of SPEC §4 (largest biased exponent - emax). w: [K][N], K % 32 == 0.
    Returns codes [K][N], scales [K/32][N]."""
    k, n = w.shape
    be = biased_exponent(w).reshape(k // 32, 32, n)
    s = mx_block_scale(be.max(axis=1), emax)
    s_el = np.repeat(s, 32, axis=0)
    return mx_encode(w, s_el, code), s


def _lane_major(codes):
    """[K][N] -> [K/4][N][4]: partition p, column n, lane l = codes[4p + l][n]."""
    k, n = codes.shape
    return codes.reshape(k // 4, 4, n).transpose(0, 2, 1)


def _pack_nibbles(stream):
    """[rows][8W] 4-bit codes -> [rows][W] uint32, code 8w + j in bits 4j..4j+3."""
    r, c = stream.shape
    s = stream.reshape(r, c // 8, 8).astype(np.uint32)
    return np.bitwise_or.reduce(s << (4 * np.arange(8, dtype=np.uint32)), axis=2)


def _pack_fp6(stream):
    """[rows][16T] 6-bit codes -> [rows][3T] uint32: each 16 codes one 96-bit
    little-endian string, code t in bits 6t..6t+5 (seed 000 FP6)."""
    r, c = stream.shape
    s = stream.reshape(r, c // 16, 16).astype(np.uint64)
    out = np.zeros((r, c // 16, 3), dtype=np.uint64)
    for t in range(16):
        for j in range(3):
            shift = 6 * t - 32 * j
            if 0 <= shift < 32:
                out[:, :, j] |= (s[:, :, t] << np.uint64(shift)) & np.uint64(0xFFFFFFFF)
            elif -6 < shift < 0:
                out[:, :, j] |= s[:, :, t] >> np.uint64(-shift)
    return out.astype(np.uint32).reshape(r, 3 * (c // 16))


def mx_rows(x, code, emax, bf16_first=False):
    """Compiled MX quantization of [R][C] float32 values along each row in blocks of
    32 (SPEC §4's scale: the block's largest biased exponent - emax; RNE,
    saturating codes): returns (codes uint8 [R][C], scales uint8 [R][C/32],
    used float32 [R][C], BF16 codes uint16 [R][C] or None). bf16_first: the values
    are rounded to BF16 first (the activations' path)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    return _tpbsim.mx_quantize_rows(x, code, int(emax), 32, bool(bf16_first))


def quantize_activations(a_pad):
    """A [M][Kpad] (float32, finite) as the DVE is handed it and as the PE multiplies
    it: (BF16 codes [M][Kpad] uint16, used [M][Kpad] float32). QuantizeMX's blocks
    of 8 partitions x 4 elements are 32 consecutive k of one row of A (partition
    p, element 4m + l = A[m][4p + l]), so its E4M3 quantization is mx_rows along k
    with emax 8 (OCP)."""
    _, _, used, bits = mx_rows(a_pad, "e4m3", QMX_EMAX["ocp"], bf16_first=True)
    return bits, used


def quantize_weights(w, fmt, layout="kn", fast=True):
    """Host quantization of padded weights (float32, finite): w is [Kpad][Npad]
    (layout "kn") or [Npad][Kpad] (layout "nk", torch's [out, in]); Kpad % 128 == 0,
    Npad a multiple of the format's column granule. fast=False: the NumPy
    implementation (the same codes, scales and values, bit for bit). Values near
    FLT_MAX are finite inputs: a scaled code past it is +-Inf in FP32 as on the
    hardware, then saturated by the narrowing, so NumPy's overflow warnings are
    silenced."""
    w = np.asarray(w, dtype=np.float32)
    if fast and fmt in _FAST:
        wt = np.ascontiguousarray(w if layout == "nk" else w.T)
        return _FAST[fmt](wt, fmt)
    with np.errstate(over="ignore", invalid="ignore"):
        return _quantize_weights(w.T if layout == "nk" else w, fmt)


def _fast_mx(wt, fmt):
    """mxfp8 / mxfp4 from W^T [N][K]: codes along k, packed into x4 words."""
    spec = WEIGHT_FORMATS[fmt]
    codes, s, used_t, _ = mx_rows(wt, spec["code"], spec["emax"])
    n, k = codes.shape
    if spec["word_bytes"] == 4:     # byte l of the word of (p, n) = code of k = 4p + l
        words = codes.view("<u4")                                      # [N][K/4]
    else:                           # nibble l (bits 4l..4l+3) of a 16-bit word
        words = (codes[:, 0::2] | (codes[:, 1::2] << 4)).view("<u2")   # [N][K/4]
    data = np.ascontiguousarray(words.T).view(np.uint8).reshape(k // 4, spec["word_bytes"] * n)
    return QuantizedWeights(fmt, data, spec["word_bytes"], np.ascontiguousarray(s.T), used_t.T,
                            False)


def _fast_bf16(wt, fmt):
    """bf16 from W^T [N][K]: BF16 codes in the DVE's source layout (partition p,
    element 4n + l = W[4p + l][n]) and QuantizeMX's result (blocks of 32 k)."""
    _, _, used_t, bits = mx_rows(wt, "e4m3", QMX_EMAX["ocp"], bf16_first=True)
    n, k = bits.shape
    data = np.ascontiguousarray(bits.reshape(n, k // 4, 4).transpose(1, 0, 2))
    return QuantizedWeights(fmt, data.view(np.uint8).reshape(k // 4, 8 * n), 8, None, used_t.T,
                            False)


def _fast_fp6(wt, fmt):
    """fp6 from W^T [N][K]: E2M3 codes along k (emax 2), the seed 000 FP6 stream."""
    spec = WEIGHT_FORMATS[fmt]
    codes, s, used_t, _ = mx_rows(wt, spec["code"], spec["emax"])
    n, k = codes.shape
    stream = codes.reshape(n, k // 4, 4).transpose(1, 0, 2).reshape(k // 4, 4 * n)
    data = _pack_fp6(stream).astype("<u4").view(np.uint8).reshape(k // 4, -1)
    return QuantizedWeights(fmt, data, 3, np.ascontiguousarray(s.T), used_t.T, False)


GROUP8_RULE = {"fp4_e2m1": ("ocp", 6.0), "int4": ("absmax", 7.0), "nf4": ("absmax", 1.0)}


def _fast_packed8(wt, fmt):
    """fp4 / int4 / nf4 from W^T [N][K]: the seed 000 group-8 chunks (scales per 8
    codes of a partition's stream: lanes 0-3 of two columns) and POOL's values,
    compiled (_tpbsim.group8_quantize)."""
    spec = WEIGHT_FORMATS[fmt]
    rule, top = GROUP8_RULE[spec["code"]]
    data, used_t = _tpbsim.group8_quantize(np.ascontiguousarray(wt, dtype=np.float32),
                                           spec["code"], spec["out"], rule, top)
    return QuantizedWeights(fmt, data, 5 * 4 / 8, None, used_t.T, True)


_FAST = {"mxfp8": _fast_mx, "mxfp4": _fast_mx, "bf16": _fast_bf16, "fp6": _fast_fp6,
         "fp4": _fast_packed8, "int4": _fast_packed8, "nf4": _fast_packed8}


def _quantize_weights(w, fmt):
    spec = WEIGHT_FORMATS[fmt]
    w = np.asarray(w, dtype=np.float32)
    k, n = w.shape
    if spec["store"] == "mx":
        codes, s = _mx_k_blocks(w, spec["emax"], spec["code"])
        used = mx_values(codes, np.repeat(s, 32, axis=0), spec["code"])
        lm = _lane_major(codes).astype(np.uint32)           # [K/4][N][4]
        if spec["word_bytes"] == 4:
            words = lm[..., 0] | lm[..., 1] << 8 | lm[..., 2] << 16 | lm[..., 3] << 24
            data = words.astype("<u4").view(np.uint8).reshape(k // 4, 4 * n)
        else:
            words = lm[..., 0] | lm[..., 1] << 4 | lm[..., 2] << 8 | lm[..., 3] << 12
            data = words.astype("<u2").view(np.uint8).reshape(k // 4, 2 * n)
        return QuantizedWeights(fmt, data, spec["word_bytes"], s.astype(np.uint8), used, False)
    if spec["store"] == "bf16":
        bits, vals = bf16(w)
        # The DVE's source layout: partition p, element 4n + l = W[4p + l][n].
        src = _lane_major(bits.astype(np.int64)).reshape(k // 4, 4 * n)
        data = src.astype("<u2").view(np.uint8).reshape(k // 4, 8 * n)
        # What QuantizeMX makes of it: per K-tile the blocks are 8 partitions x 4
        # elements, i.e. 32 consecutive k of one column, as _mx_k_blocks.
        be = biased_exponent(vals).reshape(k // 32, 32, n)
        s = mx_block_scale(be.max(axis=1), QMX_EMAX["ocp"])
        codes = mx_encode(vals, np.repeat(s, 32, axis=0), "e4m3")
        used = mx_values(codes, np.repeat(s, 32, axis=0), "e4m3")
        return QuantizedWeights(fmt, data, 8, None, used, False)
    # Packed formats, widened on POOL.
    if spec["group"] == 8:
        # One E8M0 scale per 8 codes of a partition's output stream (seed 000 group 8):
        # the codes of columns 2j, 2j+1 (4 lanes each) of partition p.
        lm = _lane_major(w)                                  # [K/4][N][4]
        blk = lm.reshape(k // 4, n // 2, 8)
        amax = np.abs(blk).max(axis=2).astype(np.float64)
        code = spec["code"]
        if code == "fp4_e2m1":        # OCP MX rule: largest biased exponent - emax (2)
            s = mx_block_scale(biased_exponent(amax.astype(np.float32)), 2)
        else:                         # absmax scaling: the smallest 2^e with amax <= top 2^e
            top = GROUP8_RULE[code][1]
            with np.errstate(divide="ignore"):
                e = np.ceil(np.log2(np.where(amax > 0, amax / top, 1.0)))
            # log2 of the rounded quotient can be one off next to a power of two:
            # decided exactly on amax (top x 2^e is exact in float64).
            pos = amax > 0
            e = np.where(pos & (amax > top * np.exp2(e)), e + 1, e)
            e = np.where(pos & (amax <= top * np.exp2(e - 1)), e - 1, e)
            s = np.clip(e + 127, 0, 254).astype(np.int64)
        s_el = np.repeat(s[:, :, None], 8, axis=2)          # [K/4][N/2][8]
        codes = mx_encode(blk, s_el, code)
        # POOL: code value x 2^(s-127), RNE to the FP8 output format, saturating.
        v = numerics.decode(code, codes).astype(np.float64) * np.exp2(s_el - 127.0)
        # POOL scales exactly (in double) and saturates: a value past FLT_MAX is
        # the format's largest, not an FP32 Inf (clip before the FP32 cast).
        big = np.float64(np.finfo(np.float32).max)
        out_codes = numerics.encode(spec["out"], np.clip(v, -big, big).astype(np.float32))
        used_lm = numerics.decode(spec["out"], out_codes).astype(np.float32)
        used = used_lm.reshape(k // 4, n, 4).transpose(0, 2, 1).reshape(k, n)
        stream = codes.reshape(k // 4, 4 * n)               # byte 4n + l
        nib = _pack_nibbles(stream).reshape(k // 4, n // 8, 4)  # 4 code words per chunk
        sw = s.reshape(k // 4, n // 8, 4).astype(np.uint32)
        sword = sw[..., 0] | sw[..., 1] << 8 | sw[..., 2] << 16 | sw[..., 3] << 24
        chunks = np.concatenate([sword[..., None], nib], axis=2)  # [K/4][N/8][5]
        data = chunks.reshape(k // 4, 5 * (n // 8)).astype("<u4").view(np.uint8)
        return QuantizedWeights(fmt, data.reshape(k // 4, -1), 5 * 4 / 8, None, used, True)
    # FP6 E2M3, group 0: POOL widens the codes exactly to E4M3; the PE's E8M0
    # scales (blocks of 32 k, the MX rule with emax 2) scale them.
    codes, s = _mx_k_blocks(w, spec["emax"], spec["code"])
    used = mx_values(codes, np.repeat(s, 32, axis=0), spec["code"])
    stream = _lane_major(codes).reshape(k // 4, 4 * n)
    data = _pack_fp6(stream).astype("<u4").view(np.uint8).reshape(k // 4, -1)
    return QuantizedWeights(fmt, data, 3, s.astype(np.uint8), used, False)


def fp32_ksum_at(a, w, rows, cols, kb=128):
    """C[rows[i]][cols[i]] for each i, exactly as fp32_ksum computes it: the FP32 sum
    over k ascending of a[r][k] * w[k][c], one rounding per multiply and per add,
    the first addend the k = 0 product. Returns float32 [len(rows)]. Works through
    k in slices of kb into buffers it reuses (no large temporaries)."""
    a = np.asarray(a, dtype=np.float32)
    wt = np.asarray(w, dtype=np.float32).T          # [N][K]: rows of W^T are W's columns
    rows, cols = np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp)
    k = a.shape[1]
    acc = None
    bufs = {}
    with np.errstate(over="ignore", invalid="ignore"):
        for k0 in range(0, k, kb):
            kk = min(kb, k - k0)
            if kk not in bufs:
                bufs[kk] = (np.empty((len(rows), kk), np.float32),
                            np.empty((len(rows), kk), np.float32),
                            np.empty((kk, len(rows)), np.float32))
            pa, pw, pt = bufs[kk]
            np.take(a[:, k0:k0 + kk], rows, axis=0, out=pa)
            np.take(wt[:, k0:k0 + kk], cols, axis=0, out=pw)
            np.multiply(pa, pw, out=pa)                  # FP32 products
            pt[...] = pa.T
            first = 0
            if acc is None:
                acc, first = pt[0].copy(), 1
            for i in range(first, kk):
                np.add(acc, pt[i], out=acc)
    return acc


def fp32_ksum(a, w, block_bytes=2 << 20):
    """C[m][n] = sum over k ascending of a[m][k] * w[k][n] in FP32, one rounding per
    multiply and per add, the first addend the k = 0 product (the PE's order).
    Rows are summed in blocks whose accumulator stays in the host's cache (the
    same operations per element, in the same order)."""
    a = np.asarray(a, dtype=np.float32)
    w = np.ascontiguousarray(w, dtype=np.float32)   # rows of W in order (used may be a view)
    with np.errstate(over="ignore", invalid="ignore"):   # FP32 overflows to Inf, as the PE's
        return _fp32_ksum(a, w, block_bytes)


def _fp32_ksum(a, w, block_bytes):
    m, k = a.shape
    n = w.shape[1]
    out = np.empty((m, n), dtype=np.float32)
    at = np.ascontiguousarray(a.T)
    rb = max(1, min(m, block_bytes // (8 * max(n, 1))))
    for r0 in range(0, m, rb):
        acc = out[r0:r0 + rb]
        tmp = np.empty_like(acc)
        np.multiply(at[0, r0:r0 + rb, None], w[0], out=acc)
        for i in range(1, k):
            np.multiply(at[i, r0:r0 + rb, None], w[i], out=tmp)
            np.add(acc, tmp, out=acc)
    return out
