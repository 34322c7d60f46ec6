"""tpbsim.Core: one modelled NeuronCore, its memories and its runs."""

import json
import os
import warnings
from collections.abc import Mapping

import numpy as np

from . import _args, _tpbsim
from .errors import (ArgumentTypeError, CoreInUse, Deadlock, Error, Fault, InputError,
                     Interrupted, OutOfRange, OutputError, Watchdog)
from .result import Result

__all__ = ["Core"]

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


def _time_text(value, what, unit_doc):
    if value is None:
        return ""
    if isinstance(value, str):
        return _args.text(value, what)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ArgumentTypeError(f"{what} must be {unit_doc}, not {type(value).__name__}")
    return repr(float(value)) if isinstance(value, (float, np.floating)) else str(int(value))


def threads_arg(threads):
    """`threads`: None (every host core) or 1..1024 (an int or a NumPy integer);
    the C++ run API's check (host_args.h), as `tpbsim run --threads`."""
    if threads is None:
        return None
    threads = _args.integer(threads, "threads")
    try:
        return _tpbsim.check_threads(threads)
    except InputError as e:
        raise InputError(f"threads {e}") from None


class Core:
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
        timing_file, timing_json = b"", ""
        if timing is None:
            pass
        elif isinstance(timing, (str, bytes, os.PathLike)):
            timing_file = _args.path(timing, "timing")
        elif isinstance(timing, Mapping):
            try:
                timing_json = json.dumps(dict(timing))
            except (TypeError, ValueError) as e:
                raise InputError(f"timing overrides: {e}") from None
        else:
            raise ArgumentTypeError("timing must be None, a profile path or a dict of overrides, "
                                    f"not {type(timing).__name__}")
        if arch is not None:
            arch = _args.text(arch, "arch")
        mx_emax = _args.text(mx_emax, "mx_emax")
        self._s = _tpbsim.Session(arch, timing_file, timing_json, mx_emax)

    # ------------------------------------------------------------ lifetime

    def close(self):
        """Releases the core (its elaboration is kept for the next Core the process
        makes). Reading or running a closed Core raises tpbsim.Error. Closing twice
        is harmless."""
        if self._s is not None:
            self._s.close()

    @property
    def closed(self):
        """True once :meth:`close` was called."""
        return self._s.closed

    @property
    def running(self):
        """True while a run is in progress (seen from another thread: the run
        releases the GIL; touching the core meanwhile raises tpbsim.Error)."""
        return self._s.running

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        if self._s.closed:
            return "<tpbsim.Core closed>"
        return f"<tpbsim.Core arch={self.arch!r} now_ps={self.now_ps}>"

    # ------------------------------------------------------------ configuration

    @property
    def arch(self):
        """The generation: sunda, cayman, mariana or maverick."""
        return self._s.arch()

    @property
    def timing(self):
        """The effective timing profile (a dict, as ``tpbsim run --dump-timing``)."""
        return json.loads(self._s.effective_timing())

    @property
    def now_ps(self):
        """The core's simulated time, ps from its creation (it grows run after run)."""
        return self._s.now_ps()

    def partition_bytes(self, mem):
        """Bytes of one partition of ``mem`` ("sbuf" or "psum") under this core's profile."""
        return self._s.partition_bytes(_args.text(mem, "mem"))

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
        self._s.write(mem, partition, offset, a, rows, a.nbytes // rows)

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
        return self._s.read(mem, partition, offset, list(shape), dt.str)

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
        self._s.write_tile(n, a, rows, cols, col)

    def read_tile(self, n):
        """Tile ``n``'s valid region (ValidRow x ValidCol) as a new array in the tile's
        own type (FP32 float32, S8 int8, U8 uint8, FP16 float16, BF16 its bits as
        uint16, ...), as ``--dump tile:N``; an empty 0 x 0 float32 array when the
        name holds no tile."""
        return self._s.read_tile(n)

    def tile_info(self, n):
        """Tile ``n``'s descriptor: a dict with dtype ("FP32", "S8", ...), rows, cols
        (ValidRow, ValidCol), col (physical Col), tsize (1 KiB units) and phys (its
        physical allocation id); None when the name holds no tile."""
        return self._s.tile_info(n)

    @property
    def sfu_flags(self):
        """The SFU's sticky numeric flags: a dict of inexact, saturated, wrapped."""
        return self._s.sfu_flags()

    @property
    def semaphores(self):
        """The 64 semaphores' values, a list (they carry over between runs)."""
        return self._s.semaphores()

    def set_semaphore(self, i, value):
        """Sets semaphore ``i`` (0..63) to ``value`` (a u32) between runs, as a host
        would. OutOfRange for ``i``; InputError for a value outside 0..2**32-1."""
        self._s.set_semaphore(i, value)

    def reg(self, engine, r):
        """Engine ``engine``'s register ``r`` (0..31), as ``.reg`` sets it."""
        return self._s.reg(_args.text(engine, "engine"), r)

    # ------------------------------------------------------------ runs

    def run(self, program, *, name=None, vcd=None, perfetto=None, stats=None, retire=None,
            trace_level="auto", trace_engines=None, trace_window=None, max_sim_time=None,
            max_wall_time=None, keep_retires=True, timing_only=False, threads=None,
            racecheck=False, races=None):
        """Runs ``program`` on this core from its present state and returns a
        :class:`tpbsim.Result`.

        ``program`` is program text (str, SPEC §9 syntax, docs/ASM.md), binary
        64-byte instruction words (bytes, bytearray, memoryview: each word goes to
        its opcode's home engine), or a path (os.PathLike, e.g. pathlib.Path) to
        either. ``name`` names it in messages (default ``<program>``).

        Outputs (paths; None: not written), as ``tpbsim run``'s options:
        ``vcd`` (also writes a GTKWave .gtkw beside it), ``perfetto``, ``stats``,
        ``retire``; ``trace_level`` ("auto", "instr", "bundle"), ``trace_engines``
        ("pool,pe" or a list), ``trace_window`` ("2us:10us" or a (start, end)
        pair of times). Limits: ``max_sim_time`` (an int of ps or a str with a
        unit: "10us"), ``max_wall_time`` (seconds). ``keep_retires=False`` leaves
        ``Result.retires`` empty (a long program's retire list costs memory).
        ``timing_only=True`` runs without arithmetic or memory contents (SPEC §13,
        ``tpbsim run --timing-only``): every time, stat and trace as the full run,
        the memories' contents undefined afterwards. ``threads`` (None: every
        host core) splits the functional work of an instruction over
        host threads (1..1024) (``--threads``); the outputs are the same for any value.
        ``racecheck=True`` checks every access of every instruction and DMA transfer
        for races (SPEC §14, ``tpbsim run --racecheck``): the run completes and
        :attr:`Result.races` lists them (a race is not an exception: the CLI exits
        5); ``races`` (a path) writes them as JSON lines (``--races``).

        Raises :class:`tpbsim.ProgramError` for text that does not assemble and
        :class:`tpbsim.InputError` for a bad option (nothing runs then);
        :class:`tpbsim.Fault`, :class:`tpbsim.Deadlock`, :class:`tpbsim.Watchdog`
        when the run does not complete, and :class:`tpbsim.Interrupted` (a
        KeyboardInterrupt) on Ctrl-C; each carries ``.result``, and the core
        stays readable and can run again. :class:`tpbsim.OutputError` when the
        run completed but an output could not be written.
        """
        s = self._s
        opts = _run_options(vcd, perfetto, stats, retire, trace_level, trace_engines,
                            trace_window, max_sim_time, max_wall_time, threads, races, name)
        program_name = _load(s, program, opts["name"], racecheck)
        program_arch = s.program_arch()
        if program_arch and program_arch != s.arch():
            warnings.warn(f"{program_name}: the program says .arch {program_arch}; it runs on this "
                          f"core's {s.arch()} (a Core's generation is fixed when it is made)",
                          RuntimeWarning, stacklevel=2)
        return _run(s, opts, program_name, keep_retires, timing_only, racecheck)


def _run_options(vcd, perfetto, stats, retire, trace_level, trace_engines, trace_window,
                 max_sim_time, max_wall_time, threads, races, name):
    """The options of a run, checked before any program is loaded."""
    if name is not None:
        name = _args.text(name, "name")
    paths = [_args.path(v, k) for k, v in (("vcd", vcd), ("perfetto", perfetto),
                                            ("stats", stats), ("retire", retire))]
    trace_level = _args.text(trace_level, "trace_level")
    if trace_engines is not None and not isinstance(trace_engines, str):
        try:
            trace_engines = ",".join(_args.text(e, "trace_engines") for e in trace_engines)
        except TypeError:
            raise ArgumentTypeError("trace_engines must be a str or a list of engine names, "
                                    f"not {type(trace_engines).__name__}") from None
    elif trace_engines is not None:
        trace_engines = _args.text(trace_engines, "trace_engines")
    if trace_window is not None and not isinstance(trace_window, str):
        try:
            start, end = trace_window
        except (TypeError, ValueError):
            raise ArgumentTypeError("trace_window must be a str or a (start, end) pair, not "
                                    f"{trace_window!r}") from None
        trace_window = (f"{_time_text(start, 'trace_window start', 'a time') or ''}:"
                        f"{_time_text(end, 'trace_window end', 'a time') or ''}")
    elif trace_window is not None:
        trace_window = _args.text(trace_window, "trace_window")
    return {
        "name": name, "paths": paths, "trace_level": trace_level,
        "trace_engines": trace_engines or "", "trace_window": trace_window or "",
        "sim_time": _time_text(max_sim_time, "max_sim_time", "ps or a time str"),
        "wall_time": _time_text(max_wall_time, "max_wall_time", "seconds"),
        "threads": threads_arg(threads), "races": _args.path(races, "races"),
    }


def _load(s, program, name, racecheck):
    """Loads ``program`` on the session's selected core; returns its name."""
    if isinstance(program, str):
        program_name = name or "<program>"
        s.load_text(_args.text(program, "program"), program_name, bool(racecheck))
    elif isinstance(program, (bytes, bytearray, memoryview)):
        program_name = name or "<program>"
        s.load_words(program, program_name, bool(racecheck))
    elif isinstance(program, os.PathLike):
        program_name = name or os.fspath(program)
        s.load_file(_args.path(program, "program"), bool(racecheck))
    else:
        raise ArgumentTypeError("program must be text (str), 64-byte words (bytes) or a path "
                                f"(os.PathLike), not {type(program).__name__}")
    return program_name


def _run(s, o, program_name, keep_retires, timing_only, racecheck):
    """Runs what is loaded; the Result, or the exception of its outcome."""
    report = s.run(*o["paths"], o["trace_engines"], o["trace_window"], o["trace_level"],
                   o["sim_time"], o["wall_time"], bool(keep_retires), program_name,
                   bool(timing_only), o["threads"], bool(racecheck), o["races"])
    result = Result(report)
    status = report.status
    if status == "interrupted":
        pending = report.pending
        if pending is None or isinstance(pending, KeyboardInterrupt):
            raise Interrupted(report.message, result) from pending
        raise pending  # what a signal handler of the script raised
    if status == "fault":
        raise Fault(report.message, result, report.fault)
    if status == "deadlock":
        raise Deadlock(report.message, result)
    if status == "watchdog":
        raise Watchdog(report.message, result)
    if report.output_errors:
        raise OutputError("not written: " + "; ".join(m for _, m in report.output_errors),
                          result, report.output_errors)
    if status != "ok":
        raise Error(f"run ended with status {status}: {report.message}")
    return result
