"""Kernels generated for the modelled core (docs/KERNELS.md).

    python3 -m tpbsim.kernels gemm --m 512 --k 1024 --n 512 --weights mxfp4 --arch mariana

`run(a=A, w=W, weights="mxfp8")` is the same from Python (A and W NumPy arrays
or torch tensors, m / k / n taken from them, ``w_layout="nk"`` for W stored
N x K as torch's nn.Linear.weight): it tiles C = A @ W, generates a program
ordered only by semaphores, runs it on a tpbsim.Core, checks the result bit for
bit (sampled: CHECK_SAMPLES elements; check="full": all) and returns a Report
(a dict, report.json's keys) whose ``.c`` is C. ``quantize(W, ...)`` quantizes
W once for many runs; ``run(core=...)`` runs on an open core. The keywords
make a request, ``Gemm(...)``; ``execute(Gemm(...))`` is ``run(...)``.
"""

from .gemm import (ARCHS, CHECK_SAMPLES, Gemm, GemmError, Kernel, Plan, Report, Weights,
                   execute, operands, peak_tflops, prepare, quantize, run)
from .quant import WEIGHT_FORMATS

__all__ = ["ARCHS", "CHECK_SAMPLES", "Gemm", "GemmError", "Kernel", "Plan", "Report",
           "WEIGHT_FORMATS", "Weights", "execute", "operands", "peak_tflops", "prepare",
           "quantize", "run"]
