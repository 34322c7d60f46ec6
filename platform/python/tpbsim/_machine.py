"""What runs, under tpbsim.Core and tpbsim.Device alike: a device of 1..32
cores (one C++ run::Session), its lifecycle, the process's turn for
simulations, and the run keywords, written once.

A Core is a Machine of one core (or a view of one core of a Device's
Machine); a Device is a Machine of several. Everything both say (the
constructor's arch / timing / mx_emax, close, closed, running, arch, timing,
now_ps, the fifteen run keywords, a run's outcome) is here once.
"""

import contextlib
import dataclasses
import inspect
import json
import os
import re
import threading
import warnings
from collections.abc import Mapping

from . import _args, _tpbsim
from .errors import (ArgumentTypeError, Deadlock, Error, Fault, InputError, Interrupted,
                     OutputError, Watchdog)
from .result import Result

__all__ = ["Machine", "Surface", "RunOptions", "turn", "run_signature", "path_name",
           "python_names", "RUN_OPTIONS_DOC"]

# ---------------------------------------------------------------- the turn

# One simulation runs at a time per process (SystemC has one current
# context). Every call into a machine takes the process's turn first, so a run
# of one Core in one thread and a write, a load or a run of another Core in
# another thread take turns instead of the second being refused; a GEMM or a
# torch layer holds the turn over its write, run and read. The lock waits
# without the GIL (the run releases it too); a forked child gets a fresh one
# (a run of another thread of the parent is gone with that thread).
_TURN = [threading.RLock()]


def _renew_turn():
    _TURN[0] = threading.RLock()


os.register_at_fork(after_in_child=_renew_turn)


@contextlib.contextmanager
def turn():
    """Holds the process's turn for simulations (re-entrant): what a sequence
    of calls that must not interleave with another thread's holds (a GEMM's
    placement, run and read-back)."""
    lock = _TURN[0]
    lock.acquire()
    try:
        yield
    finally:
        lock.release()


# ---------------------------------------------------------------- the machine

def _profile(timing):
    """(timing file, dict of overrides or None) of the constructors' ``timing``:
    the C++ binding turns the dict into the profile's overrides."""
    if timing is None:
        return b"", None
    if isinstance(timing, (str, bytes, os.PathLike)):
        return _args.path(timing, "timing"), None
    if isinstance(timing, Mapping):
        try:
            return b"", dict(timing)
        except (TypeError, ValueError) as e:
            raise InputError(f"timing overrides: {e}") from None
    raise ArgumentTypeError("timing must be None, a profile path or a dict of overrides, not "
                            f"{type(timing).__name__}")


# The C++ run API's option messages name the command line's flags; from
# Python they name the keywords (the run keywords' flags, the constructors'
# --arch / --mx-emax / --cores and Device.run's --lnc).
_FLAG = re.compile(r"--([a-z][a-z-]*)")


def _keyword_message(message):
    keywords = ({f.name for f in dataclasses.fields(RunOptions)}
                | {"arch", "mx_emax", "cores", "lnc"})

    def keyword(m):
        name = m.group(1).replace("-", "_")
        return name if name in keywords else m.group(0)
    return _FLAG.sub(keyword, message)


def python_names(call, *args, **kwargs):
    """``call(*args, **kwargs)``, an InputError of the C++ run API renamed in
    Python's terms."""
    try:
        return call(*args, **kwargs)
    except InputError as e:
        if type(e) is not InputError:   # a ProgramError, an ArgumentTypeError: as they are
            raise
        raise InputError(_keyword_message(str(e))) from None


class Machine:
    """A device of ``cores`` cores (None: one, a tpbsim.Core) in one SystemC
    elaboration. ``noun`` ("Core" or "Device") names it in messages. Every
    call goes through :meth:`call`: the process's turn, the core it is for
    selected, a closed or running machine refused naming what it is."""

    def __init__(self, arch, timing, mx_emax, cores, noun):
        self.noun = noun
        self._raw = None
        timing_file, overrides = _profile(timing)
        if arch is not None:
            arch = _args.text(arch, "arch")
        mx_emax = _args.text(mx_emax, "mx_emax")
        with turn():   # making one elaborates: not while another runs
            self._raw = python_names(_tpbsim.Session, arch=arch, timing_file=timing_file,
                                     timing=overrides, mx_emax=mx_emax, cores=cores)

    def _live(self):
        raw = self._raw
        if raw is None or raw.closed:
            raise Error(f"this {self.noun} is closed (tpbsim.{self.noun}(...) makes a new one)")
        if raw.running:
            raise Error(f"this {self.noun} is running (in another thread)")
        return raw

    def call(self, index, method, *args):
        """``method`` of the session on core ``index``, in the process's turn."""
        self._live()   # a running one is refused at once, not waited for
        with turn():
            raw = self._live()
            if index:
                raw.select(index)
            try:
                return getattr(raw, method)(*args)
            finally:
                if index and not raw.closed:
                    raw.select(0)

    def close(self):
        if self._raw is None or self._raw.closed:
            return
        if self._raw.running:
            raise Error(f"this {self.noun} is running (in another thread): cannot close it")
        with turn():
            self._raw.close()

    @property
    def closed(self):
        return self._raw is None or self._raw.closed

    @property
    def running(self):
        return self._raw is not None and self._raw.running

    @property
    def cores(self):
        return self.call(0, "cores")

    def run(self, programs, options, lnc=1, stacklevel=3):
        """Loads ``programs`` ([(core, program, name when none is given)], each
        program as Core.run takes it; with ``lnc`` 2 on both cores of logical
        core ``core``) and runs them together: the Result, or the exception of its
        outcome. ``options``: a checked RunOptions."""
        with turn():
            raw = self._live()
            req = options.request()   # every value checked before anything loads
            names = []
            try:
                for core, program, default in programs:
                    for j in range(lnc):
                        raw.select(core * lnc + j)
                        names.append(_load(raw, program, options.name or default,
                                           options.racecheck))
                        if lnc > 1:
                            raw.set_core_id(j)
                        _warn_arch(raw, names[-1], self.noun, stacklevel + 1)
            finally:
                raw.select(0)
            req.program_name = " ".join(names)
            return _outcome(python_names(raw.run, req))


def _warn_arch(raw, program_name, noun, stacklevel):
    program_arch = raw.program_arch()
    if program_arch and program_arch != raw.arch():
        warnings.warn(f"{program_name}: the program says .arch {program_arch}; it runs on this "
                      f"{noun.lower()}'s {raw.arch()} (a {noun}'s generation is fixed when it is "
                      "made)", RuntimeWarning, stacklevel=stacklevel)


def _load(raw, program, name, racecheck):
    """Loads ``program`` on the session's selected core; returns its name."""
    if isinstance(program, str):
        raw.load_text(_args.text(program, "program"), name, racecheck)
    elif isinstance(program, (bytes, bytearray, memoryview)):
        raw.load_words(program, name, racecheck)
    elif isinstance(program, os.PathLike):
        raw.load_file(_args.path(program, "program"), racecheck)
    else:
        raise ArgumentTypeError("program must be text (str), 64-byte words (bytes) or a path "
                                f"(os.PathLike), not {type(program).__name__}")
    return name


def path_name(program):
    """How a program given as a path is named in messages: the path."""
    return os.fsencode(program).decode("utf-8", "replace")


def _outcome(report):
    """The Result of a run's report, or the exception of its outcome."""
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


# ---------------------------------------------------------------- run keywords

RUN_OPTIONS_DOC = """
        The options (the keywords of ``Core.run`` and ``Device.run`` alike):

        * Outputs (paths; None: not written), as ``tpbsim run``'s options: ``vcd``
          (also a GTKWave .gtkw beside it), ``perfetto``, ``stats``, ``retire``;
          ``trace_level`` ("auto", "instr", "bundle"), ``trace_engines`` ("pool,pe"
          or a list), ``trace_window`` ("2us:10us" or a (start, end) pair of times).
        * Limits: ``max_sim_time`` (an int of ps or a str with a unit: "10us"),
          ``max_wall_time`` (seconds).
        * ``keep_retires=False`` leaves ``Result.retires`` empty (a long program's
          retire list costs memory).
        * ``timing_only=True`` runs without arithmetic or memory contents (SPEC §13,
          ``tpbsim run --timing-only``): every time, stat and trace as the full run,
          the memories' contents undefined afterwards.
        * ``threads`` (None: every host core) splits an instruction's functional
          work over 1..1024 host threads; the outputs are the same for any value.
        * ``racecheck=True`` checks every access of every instruction and DMA
          transfer for races (SPEC §14, ``tpbsim run --racecheck``): the run
          completes and :attr:`Result.races` lists them; ``races`` (a path) writes
          them as JSON lines.
        * ``name``: the program's name in messages.

        ``keep_retires``, ``timing_only`` and ``racecheck`` are True or False. Raises
        :class:`tpbsim.ProgramError` for text that does not assemble and
        :class:`tpbsim.InputError` for a bad option (nothing runs then);
        :class:`tpbsim.Fault`, :class:`tpbsim.Deadlock`, :class:`tpbsim.Watchdog`
        when the run does not complete, and :class:`tpbsim.Interrupted` (a
        KeyboardInterrupt) on Ctrl-C; each carries ``.result``, and the cores stay
        readable and can run again. :class:`tpbsim.OutputError` when the run
        completed but an output could not be written.
        """


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """The keywords of ``Core.run`` and ``Device.run`` (RUN_OPTIONS_DOC),
    checked before anything is loaded."""

    name: object = None
    vcd: object = None
    perfetto: object = None
    stats: object = None
    retire: object = None
    trace_level: object = "auto"
    trace_engines: object = None
    trace_window: object = None
    max_sim_time: object = None
    max_wall_time: object = None
    keep_retires: object = True
    timing_only: object = False
    threads: object = None
    racecheck: object = False
    races: object = None

    @classmethod
    def of(cls, options):
        """The options of a ``**options`` dict, each checked (ArgumentTypeError for
        an unknown keyword or a value of the wrong type)."""
        known = {f.name for f in dataclasses.fields(cls)}
        for k in options:
            if k not in known:
                raise ArgumentTypeError(f"run() got an unexpected keyword argument {k!r} (its "
                                        f"options: {', '.join(sorted(known))})")
        o = cls(**options)
        checked = {
            "name": None if o.name is None else _args.text(o.name, "name"),
            "trace_level": _args.text(o.trace_level, "trace_level"),
            "trace_engines": _engines(o.trace_engines),
            "trace_window": _window(o.trace_window),
            "max_sim_time": _args.time_text(o.max_sim_time, "max_sim_time", "ps or a time str"),
            "max_wall_time": _args.time_text(o.max_wall_time, "max_wall_time", "seconds"),
            "keep_retires": _args.flag(o.keep_retires, "keep_retires"),
            "timing_only": _args.flag(o.timing_only, "timing_only"),
            "threads": _args.threads(o.threads),
            "racecheck": _args.flag(o.racecheck, "racecheck"),
        }
        for k in ("vcd", "perfetto", "stats", "retire", "races"):
            checked[k] = _args.path(getattr(o, k), k)
        return cls(**checked)

    def request(self):
        """The run API's request of these (checked) options, a
        ``_tpbsim.SessionRequest`` filled field by field under the keywords'
        names; the C++ parsers check each value as it is set (an InputError
        in the keywords' names). The program's name is the run's to set."""
        req = _tpbsim.SessionRequest()
        for f in dataclasses.fields(self):
            if f.name != "name":
                python_names(setattr, req, f.name, getattr(self, f.name))
        return req


def _engines(value):
    if value is None:
        return ""
    if isinstance(value, str):
        return _args.text(value, "trace_engines")
    try:
        return ",".join(_args.text(e, "trace_engines") for e in value)
    except TypeError:
        raise ArgumentTypeError("trace_engines must be a str or a list of engine names, "
                                f"not {type(value).__name__}") from None


def _window(value):
    """The option's text, or the (start, end) pair of its ends, each a time as
    the C++ parser takes it (None: the start / the end of the run)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return _args.text(value, "trace_window")
    try:
        start, end = value
    except (TypeError, ValueError):
        raise ArgumentTypeError("trace_window must be a str or a (start, end) pair, not "
                                f"{value!r}") from None
    return (_args.time_text(start, "trace_window start", "a time"),
            _args.time_text(end, "trace_window end", "a time"))


def run_signature(first, *extra):
    """The signature of a run method (self, ``first``, the keyword-only
    ``extra`` parameters, then every run keyword), for help() and inspect."""
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
              inspect.Parameter(first, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += list(extra)
    params += [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default)
               for f in dataclasses.fields(RunOptions)]
    return inspect.Signature(params)


# ---------------------------------------------------------------- lifecycle

class Surface:
    """The lifecycle and configuration a Core and a Device share, over a
    Machine ``_m`` they own (``_owns``) or view (a core of a Device)."""

    _m = None
    _owns = False

    def close(self):
        """Releases the core or device (its elaboration is kept for the next one the
        process makes). Using a closed one raises tpbsim.Error; closing twice is
        harmless. A Device's core closes nothing: the device owns its cores."""
        if self._owns:
            self._m.close()

    @property
    def closed(self):
        """True once it (or the Device it is a core of) was closed."""
        return self._m.closed

    @property
    def running(self):
        """True while a run is in progress (seen from another thread: the run
        releases the GIL; touching it meanwhile raises tpbsim.Error)."""
        return self._m.running

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    @property
    def arch(self):
        """The generation: sunda, cayman, mariana or maverick."""
        return self._m.call(0, "arch")

    @property
    def timing(self):
        """The effective (per-core) timing profile, a dict as ``tpbsim run
        --dump-timing`` writes it."""
        return json.loads(self._m.call(0, "effective_timing"))

    @property
    def now_ps(self):
        """Simulated time, ps from its creation (it grows run after run)."""
        return self._m.call(0, "now_ps")
