"""tpbsim.convert / encode / decode against reference.py (the format definitions,
written independently in the test) and against `tpbsim convert`."""

import numpy as np
import pytest

import tpbsim
import reference as ref
from conftest import cli

CODE_FORMATS = ["e4m3", "e5m2", "e3m4", "e2m5", "fp6_e2m3", "fp6_e3m2", "fp4_e2m1", "int4", "nf4",
                "e8m0", "s8", "u8", "e4m3_legacy"]
ALL = ["fp32", "bf16", "fp16"] + CODE_FORMATS


def random_values(rng, n):
    """FP32 values spread over every binade that matters, with specials."""
    mag = np.exp2(rng.uniform(-140, 130, n)) * rng.choice([-1, 1], n)
    small = rng.standard_normal(n) * np.exp2(rng.integers(-12, 18, n))
    halfway = (rng.integers(-600, 600, n) + 0.5) / rng.choice([1, 2, 4, 8, 16, 256], n)
    v = np.concatenate([mag, small, halfway,
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 448, 464, 465, 57344, 61440, 65504,
                         65520, 7.5, 7.75, 28, 30, 6, 6.5, 7, 7.5, -8.5, 127.5, 255.5, 3, 1.5]])
    with np.errstate(over="ignore"):  # past FP32's range: Inf, on purpose
        return v.astype(np.float32).astype(np.float64)


def same_codes(fmt, got, want):
    """Per element: codes equal, NaN codes compared as NaN-ness (payload and sign
    are dropped)."""
    got = np.atleast_1d(np.asarray(got, dtype=np.int64))
    want = np.atleast_1d(np.asarray(want, dtype=np.int64))
    if fmt in ref.MINIFLOATS or fmt in ("bf16", "fp32", "e8m0"):
        gn, wn = np.isnan(ref.decode(fmt, got)), np.isnan(ref.decode(fmt, want))
        return np.where(gn | wn, gn == wn, got == want)
    return got == want


@pytest.mark.parametrize("fmt", ALL)
def test_formats_table(fmt):
    info = tpbsim.FORMATS[fmt]
    assert info.name == fmt
    want_bits = {"fp32": 32, "bf16": 16, "fp16": 16, "fp6_e2m3": 6, "fp6_e3m2": 6, "fp4_e2m1": 4,
                 "int4": 4, "nf4": 4}.get(fmt, 8)
    assert info.bits == want_bits
    assert info.container == {4: np.uint8, 6: np.uint8, 8: np.uint8, 16: np.uint16,
                              32: np.uint32}[want_bits]


@pytest.mark.parametrize("fmt", CODE_FORMATS + ["fp16", "bf16"])
def test_decode_every_code_matches_the_definition(fmt):
    bits = tpbsim.FORMATS[fmt].bits
    codes = np.arange(1 << bits)
    got = tpbsim.decode(fmt, codes)
    assert got.dtype == np.float32 and got.shape == codes.shape
    want = ref.decode(fmt, codes)
    np.testing.assert_array_equal(got.astype(np.float64), want)


@pytest.mark.parametrize("saturate", [True, False])
@pytest.mark.parametrize("fmt", CODE_FORMATS + ["fp16", "bf16", "fp32"])
def test_encode_matches_rne_reference(fmt, saturate):
    # FP6 / FP4 have no Inf and no NaN: +-max in either mode (docs/CONVENTIONS.md).
    rng = np.random.default_rng(hash(fmt) % 2**32 + saturate)
    v = random_values(rng, 4000)
    got = tpbsim.encode(fmt, v, saturate=saturate)
    assert got.dtype == tpbsim.FORMATS[fmt].container
    want = ref.encode(fmt, v, saturate)
    if fmt == "nf4":
        want = ref.encode_nf4(v)
    bad = np.nonzero(~same_codes(fmt, got, want))[0]
    assert bad.size == 0, [(v[i], hex(int(got[i])), hex(int(want[i]))) for i in bad[:10]]


@pytest.mark.parametrize("src", ["bf16", "fp16", "e4m3", "e5m2", "fp4_e2m1", "int4", "nf4",
                                 "e8m0"])
@pytest.mark.parametrize("dst", ["fp32", "bf16", "e4m3", "e5m2", "fp6_e3m2", "s8", "e8m0"])
def test_convert_codes_is_decode_then_encode(src, dst):
    """A code of src -> encode(dst, exact value): every code of src, both modes."""
    codes = np.arange(1 << tpbsim.FORMATS[src].bits)
    for sat in (True, False):
        got = tpbsim.convert(src, dst, codes, saturate=sat)
        want = ref.encode(dst, ref.decode(src, codes), sat)
        assert got.dtype == tpbsim.FORMATS[dst].container
        bad = np.nonzero(~same_codes(dst, got, want))[0]
        assert bad.size == 0, (src, dst, sat, [(hex(int(codes[i])), hex(int(got[i])),
                                                hex(int(want[i]))) for i in bad[:8]])


def test_convert_keeps_shape_and_takes_any_integer_dtype():
    codes = np.arange(256, dtype=np.uint8).reshape(4, 8, 8)
    out = tpbsim.convert("e4m3", "bf16", codes)
    assert out.shape == (4, 8, 8) and out.dtype == np.uint16
    for dt in (np.int16, np.int32, np.uint32, np.int64, np.uint64):
        np.testing.assert_array_equal(tpbsim.convert("e4m3", "bf16", codes.astype(dt)), out)
    # A non-contiguous view converts what it shows.
    np.testing.assert_array_equal(tpbsim.convert("e4m3", "bf16", codes[:, ::2, 1::3]),
                                  out[:, ::2, 1::3])
    scalar = tpbsim.convert("fp32", "e4m3", 0.3)
    assert scalar.shape == () and int(scalar) == 0x2A
    big = np.arange(200000) % 256  # past the table threshold of convert_codes
    np.testing.assert_array_equal(tpbsim.convert("e4m3", "e5m2", big),
                                  np.tile(tpbsim.convert("e4m3", "e5m2", np.arange(256)),
                                          200000 // 256 + 1)[:200000])
    big16 = np.arange(1 << 17) % (1 << 16)
    np.testing.assert_array_equal(tpbsim.convert("bf16", "e4m3", big16)[: 1 << 16],
                                  tpbsim.convert("bf16", "e4m3", np.arange(1 << 16)))


def test_fp32_takes_values_of_any_real_dtype_and_rounds_them_to_fp32_first():
    v = np.array([0.1, 1 / 3, 1e-40, 3.4028235677973366e38, 1e39])
    for sat in (True, False):  # past FP32's range: FLT_MAX saturating, Inf not
        np.testing.assert_array_equal(tpbsim.convert("fp32", "fp32", v, saturate=sat),
                                      ref.encode("fp32", v, sat))
    assert tpbsim.convert("fp32", "fp32", [1e39])[0] == 0x7F7FFFFF
    for dt in (np.float16, np.float32, np.int8, np.int64, np.uint16):
        a = (np.arange(-20, 20) * 3).astype(dt) if np.dtype(dt).kind != "u" else \
            np.arange(60).astype(dt)
        np.testing.assert_array_equal(tpbsim.convert("fp32", "e4m3", a),
                                      ref.encode("e4m3", a.astype(np.float64)))


def test_matches_the_cli_line_by_line():
    """Python and `tpbsim convert` are one implementation: same codes for the
    same inputs, decimals and codes, both modes."""
    cases = [("fp32", "e4m3", ["0.3", "464", "-1e-9", "inf", "nan", "1e39"]),
             ("fp4_e2m1", "e5m2", ["0x7", "0xf", "0x0"]),
             ("bf16", "fp16", ["0x7f7f", "0x3f81", "0xff80"]),
             ("e8m0", "fp32", ["0x0", "0xff", "0x7f"])]
    for sat in (True, False):
        for src, dst, vals in cases:
            out = cli("convert", *([] if sat else ["--no-sat"]), src, dst, *vals).stdout.split("\n")
            for line, val in zip(out, vals):
                want = int(line.split(" -> ")[1].split()[0], 16)
                if val.startswith("0x"):
                    got = tpbsim.convert(src, dst, [int(val, 16)], saturate=sat)[0]
                else:
                    got = tpbsim.convert(src, dst, [float(val)], saturate=sat)[0]
                assert int(got) == want, (src, dst, val, sat, line)


def test_errors_name_the_problem():
    with pytest.raises(tpbsim.InputError, match="unknown format 'e9m9'"):
        tpbsim.convert("e9m9", "e4m3", [1])
    with pytest.raises(ValueError, match="dst"):
        tpbsim.convert("fp32", "fp64", [1.0])
    with pytest.raises(tpbsim.InputError, match=r"element 2: code 0x100 does not fit in e4m3"):
        tpbsim.convert("e4m3", "fp32", [1, 2, 256, 3])
    with pytest.raises(tpbsim.InputError, match=r"element 1: -1 is negative"):
        tpbsim.convert("fp4_e2m1", "fp32", np.array([1, -1], dtype=np.int8))
    with pytest.raises(tpbsim.InputError, match="element 0: code 0x10 does not fit in fp4_e2m1"):
        tpbsim.decode("fp4_e2m1", [16])
    with pytest.raises(tpbsim.InputError, match=r"bf16 takes codes.*src='fp32'"):
        tpbsim.convert("bf16", "e4m3", np.array([1.5, 2.0]))
    with pytest.raises(tpbsim.InputError, match="does not fit in e8m0"):
        tpbsim.convert("e8m0", "fp32", np.array([2**64 - 1], dtype=np.uint64))
    with pytest.raises(tpbsim.InputError, match="real values"):
        tpbsim.convert("fp32", "e4m3", np.array([1 + 2j]))
    with pytest.raises(TypeError):
        tpbsim.convert(None, "e4m3", [1.0])
