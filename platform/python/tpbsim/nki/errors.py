"""NKIError: a kernel the front end refuses, in the kernel writer's terms."""

import contextlib
import os
import sys

from ..errors import InputError

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # .../tpbsim


class NKIError(InputError):
    """A kernel that breaks a rule of NKI or of the modelled generation, found
    before anything runs: ``str(e)`` is ``FILE:LINE: RULE: DETAIL``; ``.file``,
    ``.line``, ``.rule`` and ``.detail`` are its parts (``.file`` None when no
    line of the kernel is involved). A :class:`tpbsim.InputError` (and so a
    :class:`tpbsim.Error` and a ValueError)."""

    def __init__(self, rule, detail, loc=None):
        self.rule = rule
        self.detail = detail
        self.file, self.line = loc if loc else (None, None)
        where = f"{self.file}:{self.line}: " if self.file else ""
        super().__init__(f"{where}{rule}: {detail}")


NKIError.__module__ = "tpbsim.nki"


_OUTSIDE = {}


def _outside(path):
    """Whether a code file is the kernel's (not tpbsim's own)."""
    r = _OUTSIDE.get(path)
    if r is None:
        r = _OUTSIDE[path] = not os.path.abspath(path).startswith(_PKG + os.sep)
    return r


_override = []


@contextlib.contextmanager
def at(loc):
    """Inside: caller_loc() is `loc` (the kernel's line of a language call, for
    the isa calls it makes)."""
    _override.append(loc)
    try:
        yield
    finally:
        _override.pop()


def caller_loc(depth=2):
    """(file, line) of the innermost frame outside the tpbsim package: the
    kernel's line that made the current call."""
    if _override:
        return _override[-1]
    f = sys._getframe(depth)
    while f is not None and not _outside(f.f_code.co_filename):
        f = f.f_back
    if f is None:
        return None
    return (f.f_code.co_filename, f.f_lineno)


def fail(rule, detail, loc=None):
    """Raises NKIError at the kernel's current line (or `loc`)."""
    raise NKIError(rule, detail, loc or caller_loc(3))


def strip_traceback(e):
    """The exception with only the kernel writer's frames in its traceback (the
    kernel's lines kept, the frames inside tpbsim left out), so that an
    NKIError shows no traceback from inside the package."""
    e.__traceback__ = _user_frames(e.__traceback__)
    e.__cause__ = None
    e.__context__ = None
    e.__suppress_context__ = True
    return e


def mark_if_kernel_raised(e, code):
    """Marks exception `e` as the kernel's own when it was raised inside the
    kernel function `code` (or what the kernel called) with no frame of tpbsim
    below the kernel's: a ZeroDivisionError, a NameError, an exception a kernel
    raises. Such an exception shows the kernel writer's frames only, as an
    NKIError does; one raised inside tpbsim keeps its whole traceback."""
    tb, seen = e.__traceback__, False
    while tb is not None:
        c = tb.tb_frame.f_code
        if c is code:
            seen = True
        elif seen and not _outside(c.co_filename):
            return e
        tb = tb.tb_next
    if seen:
        try:
            e._nki_kernel_raised = True
        except AttributeError:
            pass
    return e


def kernel_raised(e):
    """Whether :func:`mark_if_kernel_raised` marked `e` as the kernel's own."""
    return getattr(e, "_nki_kernel_raised", False)


def user_traceback(e):
    """The exception with the kernel writer's frames only in its traceback (its
    cause and context kept)."""
    return e.with_traceback(_user_frames(e.__traceback__))


def _excepthook(kind, value, tb, _previous=sys.excepthook):
    """An uncaught NKIError, or an exception the kernel itself raised, prints
    the kernel writer's frames only (none from inside tpbsim), then its
    message."""
    if kernel_raised(value):
        value.__traceback__ = _user_frames(tb)
        _previous(kind, value, value.__traceback__)
        return
    if isinstance(value, NKIError):
        keep = None
        while tb is not None:
            if _outside(tb.tb_frame.f_code.co_filename):
                keep = tb if keep is None else keep
            tb = tb.tb_next
        value.__traceback__ = _user_frames(keep)
        _previous(kind, value, value.__traceback__)
        return
    _previous(kind, value, tb)


def _user_frames(tb):
    """The traceback without its frames inside tpbsim (a chain of the kernel
    writer's frames, rebuilt)."""
    import types
    frames = []
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if _outside(name) and not name.startswith("<frozen "):
            frames.append((tb.tb_frame, tb.tb_lasti, tb.tb_lineno))
        tb = tb.tb_next
    out = None
    for frame, lasti, lineno in reversed(frames):
        out = types.TracebackType(out, frame, lasti, lineno)
    return out


sys.excepthook = _excepthook
