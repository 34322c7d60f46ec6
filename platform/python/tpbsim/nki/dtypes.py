"""NKI's data types and what the model calls them (SPEC §2 DTYPE names)."""

import numpy as np

from .errors import fail

ARCH_VERSION = {"sunda": 2, "cayman": 3, "mariana": 4, "maverick": 5}
TARGETS = {"trn1": "sunda", "inf2": "sunda", "gen2": "sunda", "trn2": "cayman", "gen3": "cayman",
           "trn3": "mariana", "gen4": "mariana"}


class dtype:
    """An NKI data type (``nl.float32``, ``nl.bfloat16``, ...).

    ``name`` (NKI's), ``itemsize`` (bytes of one element as stored),
    ``model`` (the program's DTYPE name, None when the model has none),
    ``np`` (the NumPy type of its values, when NumPy has one), ``bits`` (the
    unsigned NumPy type of its raw bits), ``x4`` (4 for the packed MX types:
    one element holds 4 values), ``fmt`` (the tpbsim.convert format of one
    value, for the float types the model converts), ``since`` (the first NC
    version that has it)."""

    __slots__ = ("name", "itemsize", "model", "np", "bits", "x4", "fmt", "since", "kind")

    def __init__(self, name, itemsize, model, np_type, kind, fmt=None, x4=1, since=2):
        self.name = name
        self.itemsize = itemsize
        self.model = model
        self.np = np.dtype(np_type) if np_type is not None else None
        self.bits = np.dtype({1: np.uint8, 2: np.uint16, 4: np.uint32}[itemsize])
        self.kind = kind            # "float", "int", "mx", "scale", "bool"
        self.fmt = fmt
        self.x4 = x4
        self.since = since

    def __repr__(self):
        return f"nl.{self.name}"

    def __str__(self):
        return self.name

    def __eq__(self, other):
        if isinstance(other, dtype):
            return self is other
        if isinstance(other, str):
            return other == self.name
        return NotImplemented

    def __hash__(self):
        return hash(self.name)

    @property
    def is_float(self):
        return self.kind == "float"


_TABLE = [
    dtype("bool_", 1, "uint8", np.bool_, "bool"),
    dtype("int8", 1, "int8", np.int8, "int", "s8"),
    dtype("int16", 2, "int16", np.int16, "int"),
    dtype("int32", 4, "int32", np.int32, "int"),
    dtype("uint8", 1, "uint8", np.uint8, "int", "u8"),
    dtype("uint16", 2, "uint16", np.uint16, "int"),
    dtype("uint32", 4, "uint32", np.uint32, "int"),
    dtype("float16", 2, "fp16", np.float16, "float", "fp16"),
    dtype("float32", 4, "fp32", np.float32, "float", "fp32"),
    dtype("bfloat16", 2, "bf16", None, "float", "bf16"),
    dtype("tfloat32", 4, None, None, "float"),
    # NKI's legacy FP8 E4M3 (IEEE-style, largest finite 240): the model's
    # fp8_e4m3_legacy (SPEC §18); the OCP "fn" form is the model's fp8_e4m3.
    dtype("float8_e4m3", 1, "fp8_e4m3_legacy", None, "float", "e4m3_legacy", since=2),
    dtype("float8_e4m3fn", 1, "fp8_e4m3", None, "float", "e4m3", since=4),
    dtype("float8_e5m2", 1, "fp8_e5m2", None, "float", "e5m2"),
    dtype("float8_e4m3fn_x4", 4, "fp8_e4m3", None, "mx", "e4m3", x4=4, since=4),
    dtype("float8_e5m2_x4", 4, "fp8_e5m2", None, "mx", "e5m2", x4=4, since=4),
    dtype("float4_e2m1fn_x4", 2, "fp4_e2m1", None, "mx", "fp4_e2m1", x4=4, since=4),
    dtype("float8_e8m0fnu", 1, "e8m0", None, "scale", "e8m0", since=4),
]
BY_NAME = {d.name: d for d in _TABLE}
ALIASES = {"bool": "bool_", "float": "float32", "bf16": "bfloat16", "fp32": "float32",
           "fp16": "float16", "half": "float16", "float8_e8m0": "float8_e8m0fnu"}
_FROM_NP = {np.dtype(np.bool_): "bool_", np.dtype(np.int8): "int8", np.dtype(np.int16): "int16",
            np.dtype(np.int32): "int32", np.dtype(np.uint8): "uint8",
            np.dtype(np.uint16): "uint16", np.dtype(np.uint32): "uint32",
            np.dtype(np.float16): "float16", np.dtype(np.float32): "float32"}
# ml_dtypes' names (where installed) -> NKI's.
ML_DTYPES = {"bfloat16": "bfloat16", "float8_e4m3fn": "float8_e4m3fn",
             "float8_e5m2": "float8_e5m2", "float8_e4m3": "float8_e4m3",
             "float8_e8m0fnu": "float8_e8m0fnu"}


def lookup(x, what="dtype"):
    """An NKI dtype from a dtype, its name, a NumPy dtype or a torch dtype."""
    if isinstance(x, dtype):
        return x
    if isinstance(x, str):
        d = BY_NAME.get(ALIASES.get(x, x))
        if d is not None:
            return d
        fail("dtype", f"{what} {x!r} is not an NKI data type ({', '.join(BY_NAME)})")
    try:
        nd = np.dtype(x)
    except TypeError:
        nd = None
    if nd is not None:
        if nd.name in ML_DTYPES:                       # an ml_dtypes type
            return BY_NAME[ML_DTYPES[nd.name]]
        if nd.newbyteorder("=") in _FROM_NP:
            return BY_NAME[_FROM_NP[nd.newbyteorder("=")]]
        fail("dtype", f"{what} {nd.name} is not an NKI data type")
    t = str(x)
    if t.startswith("torch."):
        return lookup(t[len("torch."):], what)
    fail("dtype", f"{what} {x!r} is not an NKI data type")


def check_arch(d, arch, what, loc=None):
    """NKIError when generation `arch` lacks dtype `d`."""
    v = ARCH_VERSION[arch]
    if v < d.since:
        fail("dtype the generation lacks",
             f"{what} is {d.name}, which NeuronCore-v{v} ({arch}) does not have "
             f"(from NeuronCore-v{d.since})", loc)
