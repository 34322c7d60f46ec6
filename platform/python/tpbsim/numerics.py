"""The numeric formats (SPEC §9 `tpbsim convert`) over NumPy arrays."""

from collections import namedtuple

import numpy as np

from . import _tpbsim
from .errors import ArgumentTypeError, InputError

__all__ = ["FORMATS", "FormatInfo", "convert", "decode", "encode"]

FormatInfo = namedtuple("FormatInfo", "name bits is_float has_inf has_nan max_finite container")
FormatInfo.__doc__ = ("A numeric format: its code width in bits, whether it has Inf / NaN, its "
                      "largest finite magnitude and the NumPy type its codes come in.")

_CONTAINERS = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32)}

#: Every format by name: fp32 bf16 fp16 e4m3 e5m2 e3m4 e2m5 fp6_e2m3 fp6_e3m2
#: fp4_e2m1 int4 nf4 e8m0 s8 u8.
FORMATS = {
    d["name"]: FormatInfo(d["name"], d["bits"], d["is_float"], d["has_inf"], d["has_nan"],
                          d["max_finite"], _CONTAINERS[d["container_bits"]])
    for d in _tpbsim.formats()
}


def _format(name, role):
    if not isinstance(name, str):
        raise ArgumentTypeError(f"{role} must be a format name (str), not "
                                f"{type(name).__name__}")
    if name not in FORMATS:
        raise InputError(f"unknown format {name!r} ({role}); formats: {' '.join(FORMATS)}")
    return name


def _array(values, what):
    try:
        return np.asarray(values)
    except Exception as e:
        raise InputError(f"{what}: a {type(values).__name__} that NumPy cannot read as an array "
                         f"({e})") from None


def _codes(values, fmt, what):
    a = _array(values, what)
    if a.dtype.kind not in "iu":
        raise InputError(
            f"{what}: {fmt} takes codes, an integer array (got {a.dtype}); to convert values, "
            f"use src='fp32'")
    if a.dtype.kind == "u" and a.dtype.itemsize == 8 and a.size and a.max() > 2**63 - 1:
        i = int(np.argmax(a > 2**63 - 1))
        raise InputError(f"element {i}: code 0x{int(a.flat[i]):X} does not fit in {fmt} "
                         f"({FORMATS[fmt].bits} bits)")
    return np.require(a, dtype=np.int64, requirements="C")  # 0-d stays 0-d


def convert(src, dst, values, saturate=True):
    """Converts ``values`` from format ``src`` to format ``dst``, element by element,
    with the rule of ``tpbsim convert`` (SPEC §9): narrowing rounds to nearest, ties
    to even, and saturates to the largest finite value (``saturate=False``:
    overflows to Inf, NaN for e4m3 and e8m0, wraps for s8 u8 int4); NaN stays NaN
    where the format has one.

    In: for ``src="fp32"``, values (any real array: each first rounded to FP32);
    for every other format, its codes (an integer array: bf16 / fp16 as their
    16-bit patterns, fp4_e2m1 as 0..15, ...). Out: a new array of the ``dst``
    codes, the input's shape, in uint8 (formats up to 8 bits), uint16 (bf16,
    fp16) or uint32 (fp32, its bit patterns: ``.view(numpy.float32)`` reads
    them). :func:`decode` turns codes into float32 values.

    Raises :class:`tpbsim.InputError` for an unknown format, a code that does not
    fit ``src`` (naming the element) or values of the wrong kind."""
    src, dst = _format(src, "src"), _format(dst, "dst")
    if src == "fp32":
        a = _array(values, "convert")
        if a.dtype.kind not in "iuf":
            raise InputError(f"convert: fp32 takes real values, not an array of {a.dtype}")
        return _tpbsim.convert_values(src, dst, np.require(a, dtype=np.float64, requirements="C"),
                                      bool(saturate))
    return _tpbsim.convert_codes(src, dst, _codes(values, src, "convert"), bool(saturate))


def encode(fmt, values, saturate=True):
    """Values (a real array) -> codes of ``fmt``: ``convert("fp32", fmt, values)``."""
    return convert("fp32", fmt, values, saturate)


def decode(fmt, codes):
    """Codes of ``fmt`` (an integer array) -> their exact values as a new float32
    array of the same shape (every value of every format is an FP32 value).
    Raises :class:`tpbsim.InputError` for a code that does not fit ``fmt``."""
    fmt = _format(fmt, "fmt")
    return _tpbsim.decode(fmt, _codes(codes, fmt, "decode"))
