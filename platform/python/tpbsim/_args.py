"""The conversion of the package's arguments to what the C++ layer takes: the
type of each, checked here (ArgumentTypeError naming it, never pybind11's
"incompatible function arguments"); the ranges of integers (partitions,
offsets, tiles, semaphores, registers, threads) are checked by the C++ run
API's host_args.h, the same checks `tpbsim run` and the DPI-C library make."""

import operator
import os

import numpy as np

from . import _tpbsim
from .errors import ArgumentTypeError, InputError


def text(value, what):
    """A str every character of which has a UTF-8 form (no lone surrogate)."""
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{what} must be a str, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InputError(f"{what}: character {e.start} is a lone surrogate "
                         f"U+{ord(value[e.start]):04X}, which has no UTF-8 form (not Unicode "
                         "text)") from None
    return value


def path(value, what):
    """An output or input path (str, bytes or os.PathLike) as the bytes the file
    system takes; None: none (""). An empty path is an error, as on the CLI."""
    if value is None:
        return ""
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise ArgumentTypeError(f"{what} must be a path (str or os.PathLike), not "
                                f"{type(value).__name__}")
    try:
        p = os.fsencode(value)
    except (UnicodeEncodeError, TypeError) as e:
        raise InputError(f"{what}: {value!r} is not a file name ({e})") from None
    if not p:
        raise InputError(f"{what}: an empty path (None: not written)")
    return p


def integer(value, what):
    """An int, or anything with __index__ (a NumPy integer); not a bool."""
    if isinstance(value, bool):
        raise ArgumentTypeError(f"{what} must be an integer, not bool")
    try:
        return operator.index(value)
    except TypeError:
        raise ArgumentTypeError(f"{what} must be an integer, not {type(value).__name__}") from None


def flag(value, what):
    """True or False (a NumPy bool too); anything else is refused, not taken for
    its truth (``racecheck="no"`` would have checked)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ArgumentTypeError(f"{what} must be True or False, not {type(value).__name__}")


def threads(value):
    """`threads`: None (every host core) or 1..1024 (an int or a NumPy integer);
    the C++ run API's check (host_args.h), as `tpbsim run --threads`."""
    if value is None:
        return None
    value = integer(value, "threads")
    try:
        return _tpbsim.check_threads(value)
    except InputError as e:
        raise InputError(f"threads {e}") from None


def time_text(value, what, unit_doc):
    """A time limit or a trace window's end as the C++ parser takes it: a str
    as it is, an int as is, a float in repr (no digit lost); None: ""."""
    if value is None:
        return ""
    if isinstance(value, str):
        return text(value, what)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ArgumentTypeError(f"{what} must be {unit_doc}, not {type(value).__name__}")
    return repr(float(value)) if isinstance(value, (float, np.floating)) else str(int(value))
