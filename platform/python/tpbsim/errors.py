"""The exceptions of tpbsim.

Every error tpbsim raises is a :class:`tpbsim.Error`, except an interrupted
run (Ctrl-C), which raises :class:`tpbsim.Interrupted`, a
:class:`KeyboardInterrupt`. Bad arguments are also ValueError
(:class:`InputError`) or IndexError (:class:`OutOfRange`), so code that
catches the built-in exceptions works too.

The outcomes of a run that did not complete (:class:`Fault`,
:class:`Deadlock`, :class:`Watchdog`, :class:`Interrupted`) carry the run's
:class:`tpbsim.Result` as ``.result`` (its stats and retires up to the stop);
the core stays readable and can run again.
"""

import re

__all__ = [
    "Error", "InputError", "ArgumentTypeError", "ProgramError", "OutOfRange", "CoreInUse",
    "RunError", "Fault", "Deadlock", "Watchdog", "OutputError", "Interrupted",
]


class Error(Exception):
    """Base of every tpbsim error."""


class InputError(Error, ValueError):
    """Bad input: an unknown name, a wrong dtype, rank or shape, a bad option value,
    a timing profile that does not load. Nothing was changed or run."""


class ArgumentTypeError(InputError, TypeError):
    """An argument of the wrong type (a float where an integer goes, a bytes where
    a name goes): an InputError, and a TypeError as Python's own functions raise
    for one."""


class ProgramError(InputError):
    """Program text that does not assemble.

    ``str(e)`` is ``FILE:LINE:COL: error: MESSAGE`` (the CLI's diagnostic);
    ``.file``, ``.line``, ``.col`` and ``.reason`` are its parts (``.line`` is
    None when the message carries no location, e.g. a binary of the wrong
    size)."""

    _LOCATED = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): error: (?P<reason>.*)$",
                          re.S)

    def __init__(self, message):
        super().__init__(message)
        m = self._LOCATED.match(str(message))
        self.file = m.group("file") if m else None
        self.line = int(m.group("line")) if m else None
        self.col = int(m.group("col")) if m else None
        self.reason = m.group("reason") if m else str(message)


class OutOfRange(Error, IndexError):
    """An address, partition, tile or register outside the core: a row past
    partition 127, bytes past the end of a partition, tile 32. Nothing was
    written."""


class CoreInUse(Error):
    """Kept so that scripts that catch it keep working: since issue 32 any number
    of tpbsim.Core objects may be open in a process, and nothing raises it."""


class RunError(Error):
    """A run that did not complete: ``.result`` is its Result (stats, retires and
    the core's state up to the stop), ``.message`` the model's description."""

    def __init__(self, message, result=None):
        super().__init__(message)
        self.message = message
        self.result = result


class Fault(RunError):
    """An engine faulted: an invalid instruction (``.predicates`` names every failed
    validity predicate), an address error, a tile fault, a missing kernel.

    ``.engine`` (pool, dve, pe, sfu, act or a DMA queue), ``.index`` (the instruction's place in that
    engine's stream), ``.opcode``, ``.mnemonic``, ``.kind`` (invalid, address,
    kernel, fetch, dispatch, time) and ``.predicates`` (a list of names, empty
    unless kind is invalid) say where and why."""

    def __init__(self, message, result=None, fault=None):
        super().__init__(message, result)
        fault = fault or {}
        self.engine = fault.get("engine")
        self.index = fault.get("index")
        self.opcode = fault.get("opcode")
        self.mnemonic = fault.get("mnemonic")
        self.kind = fault.get("kind")
        self.predicates = list(fault.get("predicates", []))


class Deadlock(RunError):
    """Every engine still running waits on a semaphore no engine will change;
    the message names each blocked engine, its instruction and its wait."""


class Watchdog(RunError):
    """A limit of the run was reached (``max_sim_time`` or ``max_wall_time``);
    every engine stopped at a common time and the outputs are complete up to it."""


class OutputError(Error):
    """The run completed but an output file (vcd, perfetto, stats, retire) could
    not be written: ``.errors`` lists (path, message); ``.result`` is the run's."""

    def __init__(self, message, result=None, errors=()):
        super().__init__(message)
        self.result = result
        self.errors = list(errors)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) during a run: every engine stopped at a common time.
    ``.result`` is the run up to the stop; the core stays readable and can run
    again. A KeyboardInterrupt, so an unhandled one ends a script as Ctrl-C does."""

    def __init__(self, message="interrupted", result=None):
        super().__init__(message)
        self.message = message
        self.result = result
