"""Kernels generated for the modelled core (docs/KERNELS.md).

    python3 -m tpbsim.kernels gemm --m 512 --k 1024 --n 512 --weights mxfp4 --arch mariana

`gemm.run(...)` is the same from Python: it tiles C = A @ W, generates a
program ordered only by semaphores, runs it on a tpbsim.Core, checks the result
bit for bit against NumPy and returns the report (a dict).
"""

from .gemm import ARCHS, GemmError, Kernel, Plan, operands, peak_tflops, prepare, run
from .quant import WEIGHT_FORMATS

__all__ = ["ARCHS", "GemmError", "Kernel", "Plan", "WEIGHT_FORMATS", "operands", "peak_tflops",
           "prepare", "run"]
