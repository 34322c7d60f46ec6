"""An MX pipeline from NumPy data: BF16 activations and weights quantized to
MXFP8 on the DVE (QuantizeMX), the weights loaded into the PE (ldweights_mx)
and multiplied (matmul_mx) into PSUM; every intermediate (codes, scales) and
the product checked bit for bit against reference.py, which implements the
SPEC §4 / §5 rules in NumPy."""

import numpy as np
import pytest

import tpbsim
import reference as ref

X_OFF, W_OFF = 0x0, 0x8000          # BF16 sources
XQ_OFF, XS_OFF = 0x10000, 0x14000   # MX data (x4 words) and scales
WQ_OFF, WS_OFF = 0x18000, 0x1C000

FP8 = {"e4m3": "fp8_e4m3", "e5m2": "fp8_e5m2"}


def bf16_bits(x):
    return ref.encode_bf16(x.astype(np.float32)).astype(np.uint16)


def program(k, n, m, p0, x_fmt, w_fmt):
    return f"""
.engine dve
quantize_mx channels={k} in_dtype=bf16 out_dtype={FP8[x_fmt]} \\
    src=t3d(sbuf({p0}, {X_OFF:#x}), step=[1, 0, 0], num=[{4 * n}, 1, 1]) \\
    dst=mx1d(data=sbuf({p0}, {XQ_OFF:#x}), scale=sbuf({p0}, {XS_OFF:#x}), num={n}) \\
    update=inc(sem1)
quantize_mx channels={k} in_dtype=bf16 out_dtype={FP8[w_fmt]} \\
    src=t3d(sbuf({p0}, {W_OFF:#x}), step=[1, 0, 0], num=[{4 * m}, 1, 1]) \\
    dst=mx1d(data=sbuf({p0}, {WQ_OFF:#x}), scale=sbuf({p0}, {WS_OFF:#x}), num={m}) \\
    update=inc(sem1)
.engine pe
ldweights_mx in_dtype={FP8[w_fmt]} rows={k} cols={m} \\
    src=mx1d(data=sbuf({p0}, {WQ_OFF:#x}), scale=sbuf({p0}, {WS_OFF:#x}), num={m}) \\
    wait=ge(sem1, 2)
matmul_mx in_dtype={FP8[x_fmt]} rows={k} \\
    src=mx1d(data=sbuf({p0}, {XQ_OFF:#x}), scale=sbuf({p0}, {XS_OFF:#x}), num={n}) \\
    dst=t3d(psum(0, 0x0), step=[1, 0, 0], num=[{n}, 1, 1])
"""


def as_partitions(a):
    """[4K][N] contraction-major values -> [K][4N] SBUF rows: partition p, element
    4n + lane = a[4p + lane][n] (the order QuantizeMX packs lanes in)."""
    k4, n = a.shape
    return a.reshape(k4 // 4, 4, n).transpose(0, 2, 1).reshape(k4 // 4, 4 * n)


CASES = [  # K partitions, N moving columns, M weight columns, start partition, formats, emax
    (32, 16, 8, 0, "e4m3", "e4m3", "ocp"),
    (64, 128, 64, 0, "e4m3", "e4m3", "ocp"),
    (128, 64, 128, 0, "e5m2", "e5m2", "ocp"),
    (128, 256, 32, 0, "e4m3", "e5m2", "neuron-alt"),
    (64, 32, 16, 32, "e5m2", "e4m3", "neuron-alt"),
    (96, 48, 40, 0, "e4m3", "e4m3", "ocp"),
]


@pytest.mark.parametrize("k,n,m,p0,x_fmt,w_fmt,emax", CASES)
def test_mx_matmul_from_numpy_matches_the_spec_reference(make_core, k, n, m, p0, x_fmt, w_fmt,
                                                         emax):
    rng = np.random.default_rng(k * 1000 + n + m + p0)
    # A = X^T (N x 4K activations), W (4K x M weights), spread over binades.
    x = rng.standard_normal((4 * k, n)) * np.exp2(rng.integers(-6, 7, (4 * k, n)))
    w = rng.standard_normal((4 * k, m)) * np.exp2(rng.integers(-6, 7, (4 * k, m)))
    x[rng.random(x.shape) < 0.02] = 0.0
    xb, wb = bf16_bits(as_partitions(x)), bf16_bits(as_partitions(w))

    core = make_core("mariana", mx_emax=emax)
    core.write("sbuf", p0, X_OFF, xb)
    core.write("sbuf", p0, W_OFF, wb)
    r = core.run(program(k, n, m, p0, x_fmt, w_fmt))
    assert r.engines["dve"]["instructions"] == 2 and r.engines["pe"]["instructions"] == 2

    # The reference, from the BF16 values the core was given.
    xv = ref.decode("bf16", xb).astype(np.float32)
    wv = ref.decode("bf16", wb).astype(np.float32)
    xc, xs = ref.mx_quantize(xv, x_fmt, emax)
    wc, ws = ref.mx_quantize(wv, w_fmt, emax)

    # DVE: the x4 words and the E8M0 scales at their SPEC §4 places.
    np.testing.assert_array_equal(core.read("sbuf", p0, XQ_OFF, (k, n), "u32"), ref.pack_x4(xc))
    np.testing.assert_array_equal(core.read("sbuf", p0, WQ_OFF, (k, m), "u32"), ref.pack_x4(wc))
    for scales, off, cols in ((xs, XS_OFF, n), (ws, WS_OFF, m)):
        for part, row in ref.scale_rows(scales).items():
            np.testing.assert_array_equal(core.read("sbuf", p0 + part, off, cols, "u8"), row)

    # PE: PSUM[m][n] = sum_k W[k][m] X[k][n], k ascending, FP32.
    want = ref.matmul_fp32(ref.mx_values(wc, ws, w_fmt), ref.mx_values(xc, xs, x_fmt))
    got = core.read("psum", 0, 0, (m, n), "f32")
    np.testing.assert_array_equal(got, want)
    # And the MX result is close to the unquantized product (a sanity bound: MXFP8).
    exact = wv.astype(np.float64).reshape(k, m, 4).transpose(0, 2, 1).reshape(4 * k, m).T @ \
        xv.astype(np.float64).reshape(k, n, 4).transpose(0, 2, 1).reshape(4 * k, n)
    rel = np.linalg.norm(got - exact) / np.linalg.norm(exact)
    assert rel < (0.2 if "e5m2" in (x_fmt, w_fmt) else 0.1), rel


def test_nan_block_gives_nan_scale_and_nan_products(core):
    k, n, m = 32, 8, 4
    x = np.ones((4 * k, n))
    x[5, 2] = np.nan  # partition 1, column 2: block row 0, x4 column 2
    w = np.ones((4 * k, m))
    core.write("sbuf", 0, X_OFF, bf16_bits(as_partitions(x)))
    core.write("sbuf", 0, W_OFF, bf16_bits(as_partitions(w)))
    core.run(program(k, n, m, 0, "e4m3", "e4m3"))
    scales = core.read("sbuf", 0, XS_OFF, n, "u8")
    # 1.0 has biased exponent 127: scale 127 - emax 8 = 119, except the NaN block.
    assert scales[2] == 0xFF and (np.delete(scales, 2) == 119).all()
    got = core.read("psum", 0, 0, (m, n), "f32")
    assert np.isnan(got[:, 2]).all() and np.isfinite(np.delete(got, 2, axis=1)).all()
    np.testing.assert_array_equal(np.delete(got, 2, axis=1), 4 * k)
