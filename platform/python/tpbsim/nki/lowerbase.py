"""What lower.py and lower_compute.py share: the limits of one call's
lowering, a constant element's bytes, a view's model DTYPE."""

import numpy as np

from .. import numerics
from .errors import NKIError

MAX_PIECES = 1 << 16           # instructions one call may become
PSUM_BANK = 2048


def encode(dt, value):
    """The bytes of one element `value` in dtype `dt`."""
    if dt.x4 != 1 or dt.kind == "scale" and value == 0:
        return bytes(dt.itemsize)
    if dt.np is not None:
        return np.array(value).astype(dt.np).tobytes()
    code = numerics.convert("fp32", dt.fmt, np.array([value], dtype=np.float32))
    return np.asarray(code).astype(dt.bits).tobytes()


def too_many(call, n, what):
    raise NKIError("access pattern", f"{call.op}: this pattern needs more than {n} {what}; "
                   "make its innermost dimension contiguous on both sides", call.loc)


def model_dtype(call, v, what):
    """The model's DTYPE name of view v (an NKIError when it has none)."""
    if v.dtype.model is None:
        raise NKIError("dtype the model lacks", f"{call.op} {what} is {v.dtype.name}, which the "
                       "model has no DTYPE for (tfloat32: use float32)", call.loc)
    return v.dtype.model
