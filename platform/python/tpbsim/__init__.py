"""tpbsim: the cycle-approximate model of a Trainium-style NeuronCore's
quantization and microscaling datapaths, from Python (SPEC §12, docs/PYTHON.md).

    import numpy as np
    import tpbsim

    with tpbsim.Core("mariana") as core:
        core.write("sbuf", 0, 0, x)               # row r -> partition r, byte 0
        result = core.run(program_text)           # or 64-byte words (bytes)
        y = core.read("psum", 0, 0, (64, 128), "f32")
        print(result.summary())                   # where the time went

Core runs program after program (memories, tiles, PE weights, semaphores and
time carry over); Result holds the run's stats and retired instructions; a
fault, deadlock or watchdog raises Fault, Deadlock or Watchdog (each with
.result), Ctrl-C raises Interrupted (a KeyboardInterrupt). assemble,
disassemble and check work on programs without a core; convert, encode and
decode are the numeric formats of `tpbsim convert` over NumPy arrays.

The model itself is C++ (the run API, platform/run); this package is a thin
layer over it, so `tpbsim run` and `import tpbsim` compute the same thing.
"""

from . import _tpbsim
from .core import Core
from .device import Device
from .errors import (ArgumentTypeError, CoreInUse, Deadlock, Error, Fault, InputError, Interrupted,
                     OutOfRange, OutputError, ProgramError, RunError, Watchdog)
from .isa import CheckFailure, assemble, check, disassemble
from .numerics import FORMATS, FormatInfo, convert, decode, encode
from .result import Result

__version__ = "0.1.0"

#: The generations (SPEC §1).
ARCHS = tuple(_tpbsim.archs())
#: The engines of a core, in queue order.
ENGINES = tuple(_tpbsim.engines())

__all__ = [
    "Core", "Device", "Result", "assemble", "disassemble", "check", "CheckFailure", "convert", "encode",
    "decode", "FORMATS", "FormatInfo", "ARCHS", "ENGINES", "Error", "InputError",
    "ArgumentTypeError", "ProgramError",
    "OutOfRange", "CoreInUse", "RunError", "Fault", "Deadlock", "Watchdog", "OutputError",
    "Interrupted", "__version__",
]
