"""tpbsim.Core: one modelled NeuronCore, its memories and its runs: a device of
one core of its own, or a view of one core of a tpbsim.Device (the machine,
its lifecycle and its runs are _machine's, shared with Device)."""

import os

import numpy as np

from . import _args, _machine, _tpbsim
from .errors import ArgumentTypeError, InputError, OutOfRange

__all__ = ["Core", "core_view"]

# The DTYPE names of `tpbsim run --dump` and the NumPy type of their elements
# (bf16: its raw bits as uint16, NumPy having no bfloat16).
DUMP_DTYPES = {name: np.dtype(descr) for name, descr in _tpbsim.dump_dtypes()}
# What `--load` takes: the element types of those (.npy u1 u2 u4 i1 f2 f4).
LOAD_DTYPES = {dt: name for name, dt in reversed(list(DUMP_DTYPES.items()))}

_LOAD_NAMES = ", ".join(f"{dt.name} ({name})" for dt, name in LOAD_DTYPES.items())


def _dtype_of(dtype):
    """A --dump DTYPE name, or a NumPy dtype equal to one of their element types."""
    if isinstance(dtype, str) and dtype in DUMP_DTYPES:
        return DUMP_DTYPES[dtype]
    try:
        dt = np.dtype(dtype)
    except (TypeError, ValueError):   # not a dtype; a lone surrogate (UnicodeEncodeError)
        dt = None
    if dt is not None and dt.newbyteorder("=") in LOAD_DTYPES:
        return dt.newbyteorder("=")
    raise InputError(f"dtype {dtype!r} is not one of {' '.join(DUMP_DTYPES)} "
                     f"(or the NumPy types {_LOAD_NAMES})")


class Core(_machine.Surface):
    """One modelled NeuronCore (SPEC §12): SBUF, PSUM, the SFU tile file, the PE's
    stationary weights, 64 semaphores and five engines (pool, dve, pe, sfu, act).

    ``Core(arch="mariana", timing=None, mx_emax="ocp")``

    * ``arch``: the generation, one of ``tpbsim.ARCHS`` (sunda, cayman, mariana,
      maverick). It is the core's, whatever a program's ``.arch`` says.
    * ``timing``: None (the generation's profile), a path to a timing profile
      (JSON, as ``tpbsim run --timing``), or a dict of overrides with the dotted
      keys of a profile (``{"clocks_mhz.dve": 2400}``) or nested objects.
    * ``mx_emax``: the DVE QuantizeMX emax offsets, ``"ocp"`` or ``"neuron-alt"``.

    A core runs program after program (:meth:`run`); SBUF, PSUM, tiles, PE
    weights, semaphores and simulated time carry over, as on a device. Memory is
    read and written between runs with :meth:`write` / :meth:`read` (the layout
    of ``--load`` / ``--dump``) and :meth:`write_tile` / :meth:`read_tile`.

    Any number of Cores may be open in a process, each its own core (its own
    SystemC elaboration, docs/PYTHON.md); a closed one's elaboration is reused
    by the next. One simulation runs at a time per process: runs of Cores in
    several threads take turns. A Core made before a ``fork`` works in the
    child, and the child may make new ones.
    """

    def __init__(self, arch="mariana", timing=None, *, mx_emax="ocp"):
        self._m = _machine.Machine(arch, timing, mx_emax, None, "Core")
        self._owns, self._index = True, 0

    @property
    def index(self):
        """This core's number in its device (0 for a Core of its own)."""
        return self._index

    def _call(self, method, *args):
        return self._m.call(self._index, method, *args)

    def __repr__(self):
        what = "tpbsim.Core" if self._owns else f"tpbsim.Device core {self._index}"
        if self.closed:
            return f"<{what} closed>"
        return f"<{what} arch={self.arch!r} now_ps={self.now_ps}>"

    def hbm_bytes(self):
        """Bytes of the HBM this core addresses (its profile's ``hbm.bytes``; a
        Device core: the device's)."""
        return self._call("hbm_bytes")

    def partition_bytes(self, mem):
        """Bytes of one partition of ``mem`` ("sbuf" or "psum") under this core's profile."""
        return self._call("partition_bytes", _args.text(mem, "mem"))

    # ------------------------------------------------------------ memory

    def write(self, mem, partition, offset, array):
        """Writes ``array`` into memory ``mem`` ("sbuf", "psum", "hbm") in the layout of
        ``tpbsim run --load``: a 2-D array's row r goes to partition ``partition + r``
        at byte ``offset``; a 1-D array is one row. For "hbm" (partition 0) the
        array's bytes go row-major from HBM byte ``offset``; past the HBM capacity
        is an OutOfRange.

        The array's bytes are written as they are: its dtype must be one of the
        ``.npy`` types ``--load`` takes (uint8, uint16, uint32, int8, float16,
        float32; BF16 values as their uint16 bits, e.g. from
        ``tpbsim.convert("fp32", "bf16", x)``). Raises :class:`tpbsim.InputError`
        (a ValueError) for another dtype, a rank other than 1 or 2, or an empty
        array, and :class:`tpbsim.OutOfRange` (an IndexError) when a row would
        leave its partition or run past partition 127. Nothing is written then.
        """
        mem = _args.text(mem, "mem")
        try:
            a = np.asarray(array)
        except Exception as e:
            raise InputError(f"write: a {type(array).__name__} that NumPy cannot read as an array "
                             f"({e})") from None
        dt = a.dtype.newbyteorder("=") if a.dtype.byteorder not in "=|" else a.dtype
        if dt not in LOAD_DTYPES:
            raise InputError(f"write: an array of {a.dtype} is not one of the types --load "
                             f"takes: {_LOAD_NAMES}")
        if a.ndim not in (1, 2):
            raise InputError(f"write: a {a.ndim}-D array; expected 1-D (one row) or 2-D "
                             f"(row r to partition + r)")
        if a.size == 0:
            raise InputError(f"write: the array of shape {a.shape} is empty")
        a = np.ascontiguousarray(a, dtype=dt)
        rows = a.shape[0] if a.ndim == 2 else 1
        self._call("write", mem, partition, offset, a, rows, a.nbytes // rows)

    def read(self, mem, partition, offset, shape, dtype):
        """Reads a new array of ``shape`` and ``dtype`` from memory ``mem`` ("sbuf",
        "psum", "hbm") in the layout of ``tpbsim run --dump``: row r of a 2-D shape from
        partition ``partition + r`` at byte ``offset``; a 1-D shape (or an int) is
        one row. For "hbm" (partition 0) the bytes are read row-major from HBM
        byte ``offset``.

        ``dtype`` is a DTYPE of ``--dump`` (u8 u16 u32 i8 f16 f32 bf16; bf16 gives
        the raw bits as uint16, as ``--dump`` does) or the equal NumPy dtype.
        Raises :class:`tpbsim.InputError` for a bad dtype or shape and
        :class:`tpbsim.OutOfRange` when the shape does not fit the partitions.
        """
        mem = _args.text(mem, "mem")
        dt = _dtype_of(dtype)
        if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
            shape = (shape,)
        try:
            shape = tuple(_args.integer(d, "shape") for d in shape)
        except TypeError:
            raise ArgumentTypeError(f"read: shape must be an int or a tuple of ints, not "
                                    f"{shape!r}") from None
        if len(shape) not in (1, 2):
            raise InputError(f"read: shape {shape} is {len(shape)}-D; expected 1-D (one row) or "
                             f"2-D (rows, cols)")
        if any(d <= 0 for d in shape):
            raise InputError(f"read: shape {shape} has a dimension that is not positive")
        if any(d >= 2**63 for d in shape):   # past 64 bits (smaller ones: the C++ checks)
            raise OutOfRange(f"read: shape {shape} holds more than any memory of the core")
        return self._call("read", mem, partition, offset, list(shape), dt.str)

    def write_tile(self, n, array, col=None):
        """Makes SFU Local tile ``n`` (0..31) a new FP32 tile holding ``array`` (2-D,
        float32; ValidRow x ValidCol = its shape), as ``--load tile:N[:COL]``. ``col``
        is the physical Col (>= the array's columns; the padding is undefined).
        The old tile of that name is freed. InputError for another dtype or rank
        or a tile file without room; OutOfRange for ``n``."""
        try:
            a = np.asarray(array)
        except Exception as e:
            raise InputError(f"write_tile: a {type(array).__name__} that NumPy cannot read as an "
                             f"array ({e})") from None
        if a.dtype.newbyteorder("=") != np.float32:
            raise InputError(f"write_tile: an array of {a.dtype}; a tile is loaded from float32 "
                             f"(array.astype(numpy.float32) rounds it)")
        if a.ndim != 2:
            raise InputError(f"write_tile: a {a.ndim}-D array; expected 2-D (ValidRow x ValidCol)")
        a = np.ascontiguousarray(a, dtype=np.float32)
        rows, cols = a.shape
        self._call("write_tile", n, a, rows, cols, col)

    def read_tile(self, n):
        """Tile ``n``'s valid region (ValidRow x ValidCol) as a new array in the tile's
        own type (FP32 float32, S8 int8, U8 uint8, FP16 float16, BF16 its bits as
        uint16, ...), as ``--dump tile:N``; an empty 0 x 0 float32 array when the
        name holds no tile."""
        return self._call("read_tile", n)

    def tile_info(self, n):
        """Tile ``n``'s descriptor: a dict with dtype ("FP32", "S8", ...), rows, cols
        (ValidRow, ValidCol), col (physical Col), tsize (1 KiB units) and phys (its
        physical allocation id); None when the name holds no tile."""
        return self._call("tile_info", n)

    @property
    def sfu_flags(self):
        """The SFU's sticky numeric flags: a dict of inexact, saturated, wrapped."""
        return self._call("sfu_flags")

    @property
    def semaphores(self):
        """The 64 semaphores' values, a list (they carry over between runs)."""
        return self._call("semaphores")

    def set_semaphore(self, i, value):
        """Sets semaphore ``i`` (0..63) to ``value`` (a u32) between runs, as a host
        would. OutOfRange for ``i``; InputError for a value outside 0..2**32-1."""
        self._call("set_semaphore", i, value)

    def reg(self, engine, r):
        """Engine ``engine``'s register ``r`` (0..31), as ``.reg`` sets it."""
        return self._call("reg", _args.text(engine, "engine"), r)

    # ------------------------------------------------------------ runs

    def run(self, program, **options):
        """Runs ``program`` on this core from its present state and returns a
        :class:`tpbsim.Result`.

        ``program`` is program text (str, SPEC §9 syntax, docs/ASM.md), binary
        64-byte instruction words (bytes, bytearray, memoryview: each word goes to
        its opcode's home engine), or a path (os.PathLike, e.g. pathlib.Path) to
        either; ``name`` names it in messages (default ``<program>``, or the path).
        """
        opts = _machine.RunOptions.of(options)
        default = _machine.path_name(program) if isinstance(program, os.PathLike) else \
            "<program>"
        return self._m.run([(self._index, program, default)], opts)

    run.__signature__ = _machine.run_signature("program")
    run.__doc__ += _machine.RUN_OPTIONS_DOC


def core_view(machine, index):
    """Core ``index`` of a Device's machine: the memory surface of a Core;
    ``run`` runs a program on this core alone (the others idle). Closing it
    closes nothing: the device owns its cores."""
    view = Core.__new__(Core)
    view._m, view._owns, view._index = machine, False, index
    return view
