"""tpbsim.Result: what one run of a Core did."""

import json

from .errors import InputError

__all__ = ["Result"]


class Result:
    """The outcome of one :meth:`tpbsim.Core.run`.

    * ``status``: "ok" (or, on an exception's ``.result``, "fault", "deadlock",
      "watchdog", "interrupted"); ``message``: the model's description.
    * ``simulated_ps``: the core's time when the run ended, in ps from the
      core's creation (as ``--stats``' ``simulated_ps``); ``start_ps``: when it
      began; ``duration_ps``: the run's own time.
    * ``instructions``: retired, every engine; ``wall_seconds``: host time.
    * ``engines``: {name: {instructions, busy_cycles, stall_cycles,
      memory_stall_cycles, fetch_stall_cycles, bytes_read, bytes_written,
      counters, bundles, clock_mhz}} for pool, dve, pe, sfu, and act when it
      ran (cycles of the engine's clock; stalls: semaphore waits, memory time
      beyond compute, instruction-fetch waits).
    * ``engine_active``: "engine active" as the Neuron profiler reports it,
      {engine: fraction of the run it had an instruction in flight} for every
      compute engine, and ``dma`` for the time any DMA engine was busy with a
      transfer (a device: ``coreK.pe``, ``coreK.dma``, ...).
    * ``memories``: {name: {bytes_read, bytes_written}} for sbuf.q0..q3 and psum.
    * ``sfu``: the SFU's sticky flags and tile-file occupancy.
    * ``retires``: the retired instructions in retire order, each with
      ``start_ps``, ``end_ps``, ``engine``, ``index``, ``opcode``, ``mnemonic``.
    * ``stats``: the whole dict the ``--stats`` file holds.
    * ``fault``: a fault's engine, index, opcode, kind and predicates (a dict),
      else None; ``files``: outputs written, (option, path); ``notes``.
    * ``races``: with ``racecheck=True``, the races found (a list of dicts, as
      ``--races`` writes them: ``message``, ``kinds``, ``memory``, ``partitions``,
      ``bytes``, ``first`` and ``second`` with engine, index, mnemonic, line,
      access); ``[]`` when none; None without the check.
    """

    def __init__(self, report):
        self._r = report
        self._stats = None
        self._retires = None

    @property
    def status(self):
        """"ok", "fault", "deadlock", "watchdog" or "interrupted"."""
        return self._r.status

    @property
    def message(self):
        """The model's description of a fault, deadlock or stop (empty when ok)."""
        return self._r.message

    @property
    def arch(self):
        """The generation the run ran on."""
        return self._r.arch

    @property
    def start_ps(self):
        """The core's time when the run began, ps from the core's creation."""
        return self._r.start_ps

    @property
    def simulated_ps(self):
        """The core's time when the run ended, ps from the core's creation."""
        return self._r.simulated_ps

    @property
    def duration_ps(self):
        """This run's simulated time, ps (simulated_ps - start_ps)."""
        return self._r.simulated_ps - self._r.start_ps

    @property
    def instructions(self):
        """Instructions retired by every engine."""
        return self._r.instructions

    @property
    def wall_seconds(self):
        """Host time of the run, seconds."""
        return self._r.wall_seconds

    @property
    def fault(self):
        """A fault's engine, index, opcode, mnemonic, kind, predicates and message (a dict), else None."""
        return self._r.fault

    @property
    def files(self):
        """The outputs written: (option, path) pairs."""
        return self._r.files

    @property
    def notes(self):
        """Notes for the user (e.g. tracing instructions, not bundles, for a long program)."""
        return self._r.notes

    @property
    def output_errors(self):
        """Outputs not written: (path, message) pairs."""
        return self._r.output_errors

    @property
    def races(self):
        """The races the check found (SPEC §14; ``racecheck=True``): a list of dicts,
        each pair of instructions once, in program order; None without the check."""
        if self._r.race_count is None:
            return None
        return self.stats["races"]["races"]

    @property
    def race_count(self):
        """How many races the check found (more than ``len(races)`` past the first
        1000); None without the check."""
        return self._r.race_count

    @property
    def stats(self):
        """The whole stats dict, as the --stats file holds it."""
        if self._stats is None:
            self._stats = json.loads(self._r.stats_json)
        return self._stats

    @property
    def engines(self):
        """{engine name: its stats dict} for pool, dve, pe, sfu (and act, the DMA queues and
        engines that ran); on a device of several cores keyed ``core0.pe``, ..."""
        return {e["name"]: e for e in self.stats["engines"]}

    @property
    def engine_active(self):
        """{engine: fraction of the run (0..1) it was active}, as the Neuron
        profiler's engine-active figures: every compute engine (an instruction
        in flight) and ``dma`` (any DMA engine busy with a transfer), keyed
        ``coreK.NAME`` on a device (the ``--stats`` file's ``engine_active``)."""
        return dict(self.stats.get("engine_active", {}))

    @property
    def cores(self):
        """A device's run (tpbsim.Device, SPEC §15): per core, its own engines table
        {name: stats} (keys without the ``coreK.`` prefix; ``{}`` for an idle core).
        A run of one core: a list of one, :attr:`engines`."""
        n = self._r.core_count
        if n == 0:
            return [self.engines]
        out = []
        for i in range(n):
            st = json.loads(self._r.core_stats_json(i))
            out.append({e["name"]: e for e in st["engines"]})
        return out

    @property
    def memories(self):
        """{memory name: {bytes_read, bytes_written}} for sbuf.q0..sbuf.q3 and psum."""
        return {m["name"]: m for m in self.stats["memories"]}

    @property
    def sfu(self):
        """The SFU's sticky flags and tile-file occupancy (a dict)."""
        return self.stats["sfu"]

    @property
    def retires(self):
        """The retired instructions, in retire order (end_ps, engine, index)."""
        if self._retires is None:
            self._retires = self._r.retires()
        return self._retires

    def busy_fraction(self, engine):
        """The fraction of this run's simulated time ``engine`` was busy (0..1).
        Busy time is counted in whole cycles of the engine's clock (a DMA queue's
        at the memory clock), each transfer's rounded up, so a queue busy from
        the start of the run to its end can count a few cycles more than the run
        holds: the fraction is at most 1."""
        engines = self.engines
        if not isinstance(engine, str) or engine not in engines:
            raise InputError(f"busy_fraction: engine {engine!r} is not one of "
                             f"{' '.join(engines)}")
        e = engines[engine]
        cycles = self.duration_ps * e["clock_mhz"] / 1e6
        return min(1.0, e["busy_cycles"] / cycles) if cycles else 0.0

    def summary(self):
        """Where the time went: one line per engine (instructions, busy cycles and
        share of the run, semaphore / memory / fetch stall cycles, bytes moved),
        then the engine-active figures (:attr:`engine_active`, those above 0)."""
        head = (f"{self.status}: {self.instructions} instructions, "
                f"{self.duration_ps / 1000:.3f} ns simulated ({self.arch}), "
                f"{self.wall_seconds * 1e3:.2f} ms wall")
        rows = [("engine", "MHz", "instr", "busy cyc", "busy", "sem stall", "mem stall",
                 "fetch stall", "read B", "written B")]
        for name, e in self.engines.items():
            rows.append((name, f"{e['clock_mhz']:g}", str(e["instructions"]),
                         str(e["busy_cycles"]), f"{100 * self.busy_fraction(name):.1f}%",
                         str(e["stall_cycles"]), str(e["memory_stall_cycles"]),
                         str(e["fetch_stall_cycles"]), str(e["bytes_read"]),
                         str(e["bytes_written"])))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = [head]
        for r in rows:
            lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                   for i, (c, w) in enumerate(zip(r, widths))))
        active = {e: v for e, v in self.engine_active.items() if v > 0}
        if active:
            lines.append("engine active: " + ", ".join(f"{e} {100 * v:.1f}%"
                                                       for e, v in active.items()))
        return "\n".join(lines)

    def __repr__(self):
        return (f"<tpbsim.Result {self.status} {self.instructions} instructions "
                f"simulated_ps={self.simulated_ps} duration_ps={self.duration_ps}>")
