"""The conversion of the package's arguments to what the C++ layer takes: the
type of each, checked here (ArgumentTypeError naming it, never pybind11's
"incompatible function arguments"); the ranges of integers (partitions,
offsets, tiles, semaphores, registers, threads) are checked by the C++ run
API's host_args.h, the same checks `tpbsim run` and the DPI-C library make."""

import operator
import os

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
