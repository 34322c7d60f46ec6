"""C = A @ W over the cores of a device: the names this module had (docs/KERNELS.md
"Over several cores"). A GEMM over one core or many is one run, gemm.run(...,
cores=N); the split of C into blocks is grid.py's."""

from . import gemm
from .grid import split
from .operands import CHECK_SAMPLES

__all__ = ["run_cores", "split"]


def run_cores(m, k, n, weights="mxfp4", arch="mariana", cores=2, a=None, w=None, out=None,
              timing=None, timing_only=False, seed=0, check="sample",
              check_samples=CHECK_SAMPLES, log=print, racecheck=True, scaling=True,
              emit_only=False):
    """gemm.run(..., cores=cores): the GEMM over ``cores`` cores of one device, its
    Report (with ``.c``). The report always has the one-core time and the scaling
    efficiency (``scaling`` is kept for scripts that pass it)."""
    del scaling
    return gemm.run(m, k, n, weights, arch=arch, a=a, w=w, out=out, timing=timing,
                    timing_only=timing_only, seed=seed, check=check,
                    check_samples=check_samples, log=log, racecheck=racecheck,
                    emit_only=emit_only, cores=cores)
