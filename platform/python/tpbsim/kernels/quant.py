"""Host-side quantizers of the GEMM kernel: what the hardware is handed, and the
exact FP32 values the PE multiplies (docs/KERNELS.md "The quantizer").

The numerics are the model's, compiled: the MX block quantizer along rows
(`_tpbsim.mx_quantize_rows`: SPEC §4's block scale, the element codes and
the values the PE multiplies) and the group-8 one (`_tpbsim.group8_quantize`),
both `num::` functions of models/numerics/mx_quantize.h over the host's
threads; NumPy only transposes and packs their codes into the layouts the
hardware reads. The tests check them against sc_tests/python/reference.py,
written from the format definitions. Layout terms: the contraction index k of
a K-tile is 4p + l, p the SBUF partition and l the lane of an x4 word (SPEC
§5); "rows" below are partitions, one per 4 k.
"""

import numpy as np

from .. import _tpbsim

_emax = _tpbsim.element_emax   # OCP MX §5: the element format's emax (num::element_emax)

# Weight formats: how each reaches the PE (SPEC §12).
#   store:  "mx"     the PE's MX operand as it is (x4 words + E8M0 scales)
#           "bf16"   BF16, quantized to MXFP8 E4M3 on the DVE (QuantizeMX)
#           "packed" seed 000 packed codes, widened by POOL TensorDequantize
#   pe:     the PE's in_dtype for the weights
WEIGHT_FORMATS = {
    "mxfp8": dict(store="mx", code="e4m3", pe="fp8_e4m3", emax=_emax("e4m3"), word_bytes=4),
    "mxfp4": dict(store="mx", code="fp4_e2m1", pe="fp4_e2m1", emax=_emax("fp4_e2m1"),
                  word_bytes=2),
    "bf16": dict(store="bf16", pe="fp8_e4m3"),
    "fp4": dict(store="packed", code="fp4_e2m1", dq="e2m1_to_e5m2", group=8, out="e5m2",
                pe="fp8_e5m2", ncols=8),
    "int4": dict(store="packed", code="int4", dq="int4_to_e5m2", group=8, out="e5m2",
                 pe="fp8_e5m2", ncols=8),
    "nf4": dict(store="packed", code="nf4", dq="nf4_to_e4m3", group=8, out="e4m3",
                pe="fp8_e4m3", ncols=8),
    "fp6": dict(store="packed", code="fp6_e2m3", dq="e2m3_to_e4m3", group=0, out="e4m3",
                pe="fp8_e4m3", ncols=4, emax=_emax("fp6_e2m3")),
}

# QuantizeMX's E4M3 emax under each --mx-emax mode (SPEC §4, num::mx_emax_offset).
QMX_EMAX = {mode: _tpbsim.qmx_emax(mode) for mode in ("ocp", "neuron-alt")}


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


def quantize_weights(w, fmt, layout="kn"):
    """Host quantization of padded weights (float32, finite): w is [Kpad][Npad]
    (layout "kn") or [Npad][Kpad] (layout "nk", torch's [out, in]); Kpad % 128 == 0,
    Npad a multiple of the format's column granule."""
    w = np.asarray(w, dtype=np.float32)
    wt = np.ascontiguousarray(w if layout == "nk" else w.T)
    return _QUANTIZERS[fmt](wt, fmt)


def _mx(wt, fmt):
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


def _bf16(wt, fmt):
    """bf16 from W^T [N][K]: BF16 codes in the DVE's source layout (partition p,
    element 4n + l = W[4p + l][n]) and QuantizeMX's result (blocks of 32 k)."""
    _, _, used_t, bits = mx_rows(wt, "e4m3", QMX_EMAX["ocp"], bf16_first=True)
    n, k = bits.shape
    data = np.ascontiguousarray(bits.reshape(n, k // 4, 4).transpose(1, 0, 2))
    return QuantizedWeights(fmt, data.view(np.uint8).reshape(k // 4, 8 * n), 8, None, used_t.T,
                            False)


def _fp6(wt, fmt):
    """fp6 from W^T [N][K]: E2M3 codes along k (emax 2), the seed 000 FP6 stream."""
    spec = WEIGHT_FORMATS[fmt]
    codes, s, used_t, _ = mx_rows(wt, spec["code"], spec["emax"])
    n, k = codes.shape
    stream = codes.reshape(n, k // 4, 4).transpose(1, 0, 2).reshape(k // 4, 4 * n)
    data = _pack_fp6(stream).astype("<u4").view(np.uint8).reshape(k // 4, -1)
    return QuantizedWeights(fmt, data, 3, np.ascontiguousarray(s.T), used_t.T, False)


GROUP8_RULE = {"fp4_e2m1": ("ocp", 6.0), "int4": ("absmax", 7.0), "nf4": ("absmax", 1.0)}


def _packed8(wt, fmt):
    """fp4 / int4 / nf4 from W^T [N][K]: the seed 000 group-8 chunks (scales per 8
    codes of a partition's stream: lanes 0-3 of two columns) and POOL's values,
    compiled (_tpbsim.group8_quantize)."""
    spec = WEIGHT_FORMATS[fmt]
    rule, top = GROUP8_RULE[spec["code"]]
    data, used_t = _tpbsim.group8_quantize(np.ascontiguousarray(wt, dtype=np.float32),
                                           spec["code"], spec["out"], rule, top)
    return QuantizedWeights(fmt, data, 5 * 4 / 8, None, used_t.T, True)


_QUANTIZERS = {"mxfp8": _mx, "mxfp4": _mx, "bf16": _bf16, "fp6": _fp6,
               "fp4": _packed8, "int4": _packed8, "nf4": _packed8}


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
