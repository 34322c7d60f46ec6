"""tpbsim.Device: several NeuronCores sharing one HBM (SPEC §15)."""

import json
import os
from collections.abc import Mapping

from . import _args, _tpbsim
from .core import Core, _load, _run, _run_options
from .errors import ArgumentTypeError, InputError, OutOfRange

__all__ = ["Device"]


class _Selected:
    """The device's session with core ``i`` selected for every call: what a
    :class:`Core` view of one core of a device talks to."""

    def __init__(self, s, i):
        self._s = s
        self._i = i

    def __getattr__(self, name):
        attr = getattr(self._s, name)
        if not callable(attr):
            return attr

        def call(*args, **kwargs):
            self._s.select(self._i)
            try:
                return attr(*args, **kwargs)
            finally:
                if not self._s.closed:
                    self._s.select(0)

        return call


class _DeviceCore(Core):
    """Core ``i`` of a :class:`Device`: the memory surface of a :class:`Core`
    (``write``, ``read``, ``write_tile``, ``read_tile``, ``semaphores``,
    ``set_semaphore``, ...). ``run`` runs a program on this core alone (the
    others idle); :meth:`Device.run` runs several. Closing it closes nothing:
    the device owns the cores."""

    def __init__(self, device, i):  # pylint: disable=super-init-not-called
        self._device = device
        self._index = i
        self._s = _Selected(device._s, i)

    @property
    def index(self):
        """This core's number in its device."""
        return self._index

    def close(self):
        """Nothing: the device's cores go with the device (Device.close)."""

    def __repr__(self):
        if self._device.closed:
            return f"<tpbsim.Device core {self._index} closed>"
        return f"<tpbsim.Device core {self._index} arch={self.arch!r} now_ps={self.now_ps}>"


class Device:
    """A device of ``cores`` NeuronCores sharing one HBM (SPEC §15), in one SystemC
    elaboration: each core has its own SBUF, PSUM, engines, 16 DMA engines and
    queues, semaphores and tile file; the HBM is the device's (``cores`` x the
    profile's per-core ``hbm.bytes``, one address space every core sees) and so
    is its bandwidth (``cores`` x ``hbm.mbytes_per_s``, shared max-min fairly
    among the cores moving HBM data, each capped by its own 16 DMA engines).

    ``Device(arch="mariana", cores=2, timing=None, *, mx_emax="ocp")``: the
    arguments of :class:`Core`, and ``cores`` (1 to 32; a device of one core is a
    :class:`Core`).

    * ``dev.core(i)``: core i's memory surface (``write``, ``read``,
      ``write_tile``, ``read_tile``, ``semaphores``, ...).
    * ``dev.write("hbm", 0, offset, array)`` / ``dev.read("hbm", 0, offset, shape,
      dtype)``: the device's HBM.
    * ``dev.run(programs, **outputs)``: ``programs`` a list (program i on core i,
      ``None`` for an idle core) or a dict {core: program}; the outputs and
      options of :meth:`Core.run` (``racecheck=True`` checks every core's
      accesses against every other's: the HBM is the device's, and a remote
      semaphore orders across cores). The Result's ``engines`` are keyed ``core0.pe``,
      ``core1.dma3``, ...; ``result.cores[i]`` is core i's own engines table.
    """

    def __init__(self, arch="mariana", cores=2, timing=None, *, mx_emax="ocp"):
        if isinstance(cores, bool) or not isinstance(cores, int):
            try:
                import numpy as np  # a NumPy integer is an int here
                ok = isinstance(cores, np.integer)
            except ImportError:  # pragma: no cover
                ok = False
            if not ok:
                raise ArgumentTypeError(f"cores must be an int, not {type(cores).__name__}")
            cores = int(cores)
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
        self._s = _tpbsim.Session(arch, timing_file, timing_json, mx_emax, cores)
        self._cores = [_DeviceCore(self, i) for i in range(self._s.cores())]

    # ------------------------------------------------------------ lifetime

    def close(self):
        """Releases the device (its elaboration is kept for the next one of as many
        cores). Closing twice is harmless."""
        if self._s is not None:
            self._s.close()

    @property
    def closed(self):
        """True once :meth:`close` was called."""
        return self._s.closed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        if self._s.closed:
            return "<tpbsim.Device closed>"
        return f"<tpbsim.Device arch={self.arch!r} cores={self.cores} now_ps={self.now_ps}>"

    # ------------------------------------------------------------ configuration

    @property
    def cores(self):
        """How many cores the device has."""
        return len(self._cores)

    @property
    def arch(self):
        """The generation of every core: sunda, cayman, mariana or maverick."""
        return self._s.arch()

    @property
    def timing(self):
        """The effective per-core timing profile (a dict, as ``--dump-timing``)."""
        return json.loads(self._s.effective_timing())

    @property
    def now_ps(self):
        """The device's simulated time, ps from its creation."""
        return self._s.now_ps()

    def core(self, i):
        """Core ``i`` (0 .. cores - 1): a :class:`Core` view of it."""
        if isinstance(i, bool) or not hasattr(i, "__index__"):
            raise ArgumentTypeError(f"core must be an int, not {type(i).__name__}")
        if not 0 <= int(i) < len(self._cores):
            self._s.select(i)  # raises OutOfRange naming the device's cores
        return self._cores[int(i)]

    # ------------------------------------------------------------ HBM

    def write(self, mem, partition, offset, array):
        """Writes ``array`` into the device's HBM (``mem`` "hbm", ``partition`` 0),
        as :meth:`Core.write`. SBUF and PSUM are a core's: ``dev.core(i).write``."""
        self._hbm_only(mem)
        return self._cores[0].write(mem, partition, offset, array)

    def read(self, mem, partition, offset, shape, dtype):
        """Reads the device's HBM, as :meth:`Core.read`."""
        self._hbm_only(mem)
        return self._cores[0].read(mem, partition, offset, shape, dtype)

    @staticmethod
    def _hbm_only(mem):
        if _args.text(mem, "mem") != "hbm":
            raise InputError(f"Device.write / read: {mem!r} is a core's memory: use "
                             f"dev.core(i).write / read (the device's is \"hbm\")")

    # ------------------------------------------------------------ runs

    def run(self, programs, *, name=None, vcd=None, perfetto=None, stats=None, retire=None,
            trace_level="auto", trace_engines=None, trace_window=None, max_sim_time=None,
            max_wall_time=None, keep_retires=True, timing_only=False, threads=None, lnc=1,
            racecheck=False, races=None):
        """Runs one program per core, together, until every core has ended, and
        returns a :class:`tpbsim.Result` (raising as :meth:`Core.run` does when a
        core faults, deadlocks or hits a watchdog: the Result's message names the
        core). ``programs``: a list (program i on core i; ``None``: idle) or a dict
        {core: program}; each program as :meth:`Core.run` takes it.

        ``lnc=2`` (logical cores, as NKI's LNC=2): program i runs on the physical
        cores 2i and 2i+1, each with its ``core_id`` (0, 1) in register r31 of
        every compute engine (``dev.core(k).reg("pool", 31)``)."""
        if lnc not in (1, 2) or isinstance(lnc, bool):
            raise InputError(f"lnc={lnc!r}: a logical core is 1 or 2 physical cores")
        if len(self._cores) % lnc:
            raise InputError(f"lnc={lnc} on a device of {len(self._cores)} cores: the cores do "
                             f"not pair up")
        if isinstance(programs, Mapping):
            items = list(programs.items())
        elif isinstance(programs, (list, tuple)):
            items = list(enumerate(programs))
        else:
            raise ArgumentTypeError("programs must be a list (program i on core i) or a dict "
                                    f"{{core: program}}, not {type(programs).__name__}")
        logical = len(self._cores) // lnc
        if len(items) > logical and not isinstance(programs, Mapping):
            raise InputError(f"{len(items)} programs for a device of {logical} "
                             f"{'logical ' if lnc > 1 else ''}cores: one program per "
                             f"{'logical ' if lnc > 1 else ''}core at most")
        opts = _run_options(vcd, perfetto, stats, retire, trace_level, trace_engines,
                            trace_window, max_sim_time, max_wall_time, threads, races, name)
        s = self._s
        names = []
        try:
            for i, program in items:
                if program is None:
                    continue
                if lnc > 1 and not (isinstance(i, int) and 0 <= i < logical):
                    raise OutOfRange(f"logical core {i!r} is not one of this device's "
                                     f"{logical} (0..{logical - 1})")
                for j in range(lnc):
                    s.select(i * lnc + j)  # OutOfRange for a core the device does not have
                    names.append(_load(s, program, opts["name"] or f"<program {i}>",
                                       racecheck))
                    if lnc > 1:
                        s.set_core_id(j)
        finally:
            s.select(0)
        return _run(s, opts, " ".join(names), keep_retires, timing_only, racecheck)
