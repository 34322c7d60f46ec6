"""tpbsim.Device: several NeuronCores sharing one HBM (SPEC §15). The machine,
its lifecycle and its runs are _machine's, shared with tpbsim.Core (a device
of one core)."""

from collections.abc import Mapping

from . import _args, _machine, _tpbsim
from .core import core_view
from .errors import ArgumentTypeError, InputError, OutOfRange

__all__ = ["Device", "MAX_CORES", "is_core_count"]

#: The most cores a device has (SPEC §15).
MAX_CORES = _tpbsim.MAX_CORES


def is_core_count(n):
    """Whether the integer ``n`` is a count of cores a Device may have
    (1..MAX_CORES: the C++ rule, run::check_cores)."""
    try:
        _tpbsim.check_cores(n)
    except InputError:
        return False
    return True


class Device(_machine.Surface):
    """A device of ``cores`` NeuronCores sharing one HBM (SPEC §15), in one SystemC
    elaboration: each core has its own SBUF, PSUM, engines, 16 DMA engines and
    queues, semaphores and tile file; the HBM is the device's (``cores`` x the
    profile's per-core ``hbm.bytes``, one address space every core sees) and so
    is its bandwidth (``cores`` x ``hbm.mbytes_per_s``, shared max-min fairly
    among the cores moving HBM data, each capped by its own 16 DMA engines).

    ``Device(arch="mariana", cores=2, timing=None, *, mx_emax="ocp")``: the
    arguments of :class:`Core`, and ``cores`` (1 to 32; a :class:`Core` is a
    device of one core).

    * ``dev.core(i)``: core i's memory surface (``write``, ``read``,
      ``write_tile``, ``read_tile``, ``semaphores``, ...), a :class:`Core`.
    * ``dev.write("hbm", 0, offset, array)`` / ``dev.read("hbm", 0, offset, shape,
      dtype)``: the device's HBM.
    * ``dev.run(programs, **options)``: ``programs`` a list (program i on core i,
      ``None`` for an idle core) or a dict {core: program}; the options of
      :meth:`Core.run` (``racecheck=True`` checks every core's accesses against
      every other's: the HBM is the device's, and a remote semaphore orders
      across cores). The Result's ``engines`` are keyed ``core0.pe``,
      ``core1.dma3``, ...; ``result.cores[i]`` is core i's own engines table.
    """

    def __init__(self, arch="mariana", cores=2, timing=None, *, mx_emax="ocp"):
        if isinstance(cores, bool) or not hasattr(type(cores), "__index__"):
            raise ArgumentTypeError(f"cores must be an int, not {type(cores).__name__}")
        self._m = _machine.Machine(arch, timing, mx_emax, int(cores), "Device")
        self._owns = True
        self._cores = [core_view(self._m, i) for i in range(self._m.cores)]

    def __repr__(self):
        if self.closed:
            return "<tpbsim.Device closed>"
        return f"<tpbsim.Device arch={self.arch!r} cores={self.cores} now_ps={self.now_ps}>"

    @property
    def cores(self):
        """How many cores the device has."""
        return len(self._cores)

    @property
    def hbm_bytes(self):
        """The device's HBM in bytes: ``cores`` x the profile's per-core
        ``hbm.bytes`` (SPEC §15), one address space every core sees."""
        return self._m.call(0, "hbm_bytes")

    @property
    def hbm_bytes_per_s(self):
        """The device's HBM bandwidth in bytes per second: ``cores`` x the
        profile's per-core ``hbm.mbytes_per_s`` (SPEC §15), shared max-min
        fairly among the cores moving HBM data."""
        return self._m.call(0, "hbm_bytes_per_s")

    def core(self, i):
        """Core ``i`` (0 .. cores - 1): a :class:`Core` view of it."""
        return self._cores[self._core_number(i, "core")]

    def _core_number(self, i, what):
        i = _args.integer(i, what)
        if not 0 <= i < len(self._cores):
            n = len(self._cores)
            raise OutOfRange(f"{what} {i} is not a core of this device of {n} "
                             f"core{'s' if n != 1 else ''} (0..{n - 1})")
        return i

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

    def run(self, programs, *, lnc=1, **options):
        """Runs one program per core, together, until every core has ended, and
        returns a :class:`tpbsim.Result` (raising as :meth:`Core.run` does when a
        core faults, deadlocks or hits a watchdog: the Result's message names the
        core). ``programs``: a list (program i on core i; ``None``: idle) or a dict
        {core: program} (core an int); each program as :meth:`Core.run` takes it,
        named ``<program i>`` unless ``name`` is given.

        ``lnc=2`` (logical cores, as NKI's LNC=2): program i runs on the physical
        cores 2i and 2i+1, each with its ``core_id`` (0, 1) in register r31 of
        every compute engine (``dev.core(k).reg("pool", 31)``).
        """
        lnc = _machine.python_names(_tpbsim.check_lnc, lnc, len(self._cores))   # as --lnc
        items = self._programs(programs, len(self._cores) // lnc, lnc)
        opts = _machine.RunOptions.of(options)
        return self._m.run([(i, p, f"<program {i}>") for i, p in items if p is not None], opts,
                           lnc)

    run.__signature__ = _machine.run_signature(
        "programs", _machine.inspect.Parameter("lnc", _machine.inspect.Parameter.KEYWORD_ONLY,
                                               default=1))
    run.__doc__ += _machine.RUN_OPTIONS_DOC

    def _programs(self, programs, logical, lnc):
        """[(core, program)] of a list or a {core: program} dict, each core a
        (logical) core of this device."""
        what = "logical core" if lnc > 1 else "core"
        if isinstance(programs, Mapping):
            items = []
            for i, p in programs.items():
                if isinstance(i, bool) or not hasattr(type(i), "__index__"):
                    raise ArgumentTypeError(f"programs: the key {i!r} must be a core number (an "
                                            f"int), not {type(i).__name__}")
                i = int(i)
                if lnc == 1:
                    i = self._core_number(i, what)
                elif not 0 <= i < logical:
                    raise OutOfRange(f"{what} {i} is not one of this device's {logical} "
                                     f"(0..{logical - 1})")
                items.append((i, p))
            return items
        if not isinstance(programs, (list, tuple)):
            raise ArgumentTypeError("programs must be a list (program i on core i) or a dict "
                                    f"{{core: program}}, not {type(programs).__name__}")
        if len(programs) > logical:
            raise InputError(f"{len(programs)} programs for a device of {logical} "
                             f"{'logical ' if lnc > 1 else ''}cores: one program per "
                             f"{'logical ' if lnc > 1 else ''}core at most")
        return list(enumerate(programs))
