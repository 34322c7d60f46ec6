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

tpbsim.kernels.run(a=A, w=W, weights="mxfp8") runs a generated GEMM (NumPy or
torch operands, C as .c); tpbsim.torch (import it: it needs torch) runs a
PyTorch model's nn.Linear layers on the core (docs/PYTHON.md).
"""

try:
    import numpy  # noqa: F401  (every array in and out is NumPy's)
except ImportError as _e:
    import sys as _sys
    raise ImportError(
        f"tpbsim needs NumPy, which this interpreter ({_sys.executable}) does not have "
        f"({_e}): run Debian's /usr/bin/python3 (python3-numpy), or the build's launcher "
        "build/tpbsim-python (docs/PYTHON.md)") from _e

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
