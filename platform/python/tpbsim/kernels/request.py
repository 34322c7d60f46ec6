"""A GEMM request (docs/KERNELS.md "From Python"): ``Gemm``, the keywords of
``tpbsim.kernels.run`` (and of the command's flags, and of tpbsim.torch) as
one object, and its check: every argument and what goes with it, the operands
read and the shape taken from them, the plan, before anything is made."""

import dataclasses
import os
from dataclasses import KW_ONLY, dataclass, field

import numpy as np

from .. import _args
from ..core import Core
from ..device import MAX_CORES, is_core_count
from ..errors import Error
from .operands import (CHECK_MODES, CHECK_SAMPLES, ShapeOnly, Weights, dims_text, infer_shape,
                       is_tensor, operand_array, torch_module)
from .outputs import program_files
from .plan import PLACEMENTS, GemmError, Plan, arg


@dataclass
class Gemm:
    """C = A @ W as asked (the keywords of run(); docs/KERNELS.md):

    ``m, k, n`` (taken from ``a`` / ``w`` when given), ``weights``, ``act``,
    ``arch``, ``a``, ``w``, ``out``, ``timing``, ``timing_only``, ``seed``,
    ``drop_wait`` (an instruction whose wait is left out: for tests),
    ``traces``, ``check``, ``lookahead``, ``log``, ``placement``, ``threads``,
    ``queues`` (the DMA queues of the streams, {"a"|"w"|"c": (q, ...)}),
    ``emit_only``, ``racecheck``; keyword only: ``w_layout``, ``core``,
    ``check_samples``, ``perfetto``, ``cores``.

    :meth:`checked` returns the request checked whole: a copy with the
    operands as arrays, the shape and ``w_layout`` decided, and the derived
    ``plan``, ``values``, ``lead`` (A's leading shape) and ``is_torch``."""

    m: int = None
    k: int = None
    n: int = None
    weights: str = "mxfp4"
    act: str = "bf16"
    arch: str = "mariana"
    a: object = None
    w: object = None
    out: object = None
    timing: object = None
    timing_only: bool = False
    seed: int = 0
    drop_wait: int = None
    traces: bool = True
    check: object = True
    lookahead: int = 2
    log: object = print
    placement: str = "dma"
    threads: int = None
    queues: dict = None
    emit_only: bool = False
    racecheck: bool = True
    _: KW_ONLY
    w_layout: str = None
    core: object = None
    check_samples: int = CHECK_SAMPLES
    perfetto: object = None
    cores: int = 1
    # Derived by checked().
    plan: object = field(default=None, init=False, repr=False)
    values: bool = field(default=None, init=False, repr=False)
    lead: tuple = field(default=None, init=False, repr=False)
    is_torch: bool = field(default=None, init=False, repr=False)

    def checked(self):
        """The request checked (GemmError naming the argument), its operands
        read and the shape taken from them: everything before anything is made."""
        r = dataclasses.replace(self)
        r._check_options()
        r._check_cores()
        r.timing_only, r.racecheck = bool(r.timing_only), bool(r.racecheck)
        r.values = not r.timing_only
        r.is_torch = is_tensor(r.a)
        r.w_layout = _w_layout(r.w, r.w_layout)
        r.a = operand_array(r.a, arg("a"), ndim=None)
        if r.a is not None and r.a.ndim > 2:
            r.lead = r.a.shape[:-1]
            r.a = r.a.reshape(-1, r.a.shape[-1])
        r._shape()
        r._check_core()
        r.plan = Plan(r.m, r.k, r.n, r.weights, r.arch)
        r._check_emit()
        return r

    def _check_options(self):
        if self.act != "bf16":
            raise GemmError(f"{arg('act', self.act)}: the activations are BF16 (quantized to "
                            "MXFP8 E4M3 on the DVE); no other activation path is modelled")
        if self.placement not in PLACEMENTS:
            raise GemmError(f"{arg('placement', self.placement)}: dma | sbuf")
        seed = self.seed
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise GemmError(f"{arg('seed', seed)}: not a seed (a non-negative integer)")
        if self.threads is not None:
            try:
                _args.threads(self.threads)
            except Error as e:
                raise GemmError(f"{arg('threads')}: {e}") from None
        self._check_paths()
        la = self.lookahead
        if isinstance(la, bool) or not isinstance(la, int) or la < 0:
            raise GemmError(f"{arg('lookahead', la)}: a count of units (0 or more)")
        check = self.check
        if not (check is None or isinstance(check, bool) or check in CHECK_MODES):
            raise GemmError(f"{arg('check', check)}: True or 'sample' (the default: "
                            f"{arg('check_samples')} output elements chosen with the seed), "
                            "'full' (every element), False or None (none)")
        s = self.check_samples
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1:
            raise GemmError(f"{arg('check_samples', s)}: a count of output elements "
                            "(1 or more)")

    def _check_paths(self):
        """``out`` and ``timing`` (a profile path or a dict of overrides)."""
        out, timing = self.out, self.timing
        if out is not None:
            if not isinstance(out, (str, os.PathLike)):
                raise GemmError(f"{arg('out')}: a path, not {type(out).__name__}")
            if os.fspath(out) == "":
                raise GemmError(f"{arg('out', '')}: an empty path (give a directory)")
        if timing is None or isinstance(timing, dict):
            return
        if not isinstance(timing, (str, os.PathLike)):
            raise GemmError(f"{arg('timing')}: a profile path or a dict of overrides, not "
                            f"{type(timing).__name__}")
        t = os.fspath(timing)
        if t == "":
            raise GemmError(f"{arg('timing', '')}: an empty path (give a timing profile)")
        if not os.path.exists(t):
            raise GemmError(f"{arg('timing', t, r=False)}: no such file")
        if os.path.isdir(t):
            raise GemmError(f"{arg('timing', t, r=False)}: is a directory, not a timing "
                            "profile")

    def _check_cores(self):
        """``cores`` and what goes with it: a device's count, the DMA placement, a
        device of its own; messages name only what the caller could have given."""
        cores = self.cores
        if isinstance(cores, bool) or not isinstance(cores, (int, np.integer)) \
                or not is_core_count(cores):
            raise GemmError(f"{arg('cores', cores)}: a count of cores (1..{MAX_CORES}, the "
                            "cores of a device)")
        if cores == 1:
            return
        if self.placement != "dma":
            raise GemmError(f"{arg('cores', cores)} splits C over the device's HBM: the DMA "
                            f"placement, not {arg('placement', self.placement)}")
        if self.core is not None:
            raise GemmError(f"cores={cores} runs on a device of its own: no core= with it")
        if self.drop_wait is not None:
            raise GemmError(f"cores={cores}: drop_wait (a removed wait, for tests) is for one "
                            "core")
        if self.emit_only and not self.timing_only:
            raise GemmError(f"{arg('emit_only')} over several cores writes a timing-only "
                            f"workload: add {arg('timing_only')}")

    def _shape(self):
        """m, k, n from the operands (W read as an array, or a Weights checked
        against the request)."""
        if isinstance(self.w, Weights):
            q = self.w
            if q.arch != self.arch or q.weights != self.weights:
                raise GemmError(f"{arg('w')} was quantized for {q.weights} on {q.arch}, the run "
                                f"is {arg('weights', self.weights)} {arg('arch', self.arch)}")
            if self.a is not None and self.a.shape[1] != q.k:
                raise GemmError(f"{arg('a')} is {dims_text(self.a)}, the quantized {arg('w')} "
                                f"is K x N = {q.k} x {q.n}: their K differ ({self.a.shape[1]} "
                                f"and {q.k})")
            if self.cores > 1:
                raise GemmError(f"cores={self.cores}: a w quantized once (quantize) runs on "
                                "one core; pass its array")
            self.m, self.k, self.n = infer_shape(self.m, self.k, self.n, self.a,
                                                 ShapeOnly((q.k, q.n)), "kn")
        else:
            self.w = operand_array(self.w, arg("w"), grad=True)
            self.m, self.k, self.n = infer_shape(self.m, self.k, self.n, self.a, self.w,
                                                 self.w_layout)

    def _check_core(self):
        core = self.core
        if core is None:
            return
        if not isinstance(core, Core):
            raise GemmError(f"{arg('core')}: a tpbsim.Core, not {type(core).__name__}")
        if core.closed:
            raise GemmError(f"{arg('core')}: the core is closed")
        if core.arch != self.arch:
            raise GemmError(f"{arg('core')} is a {core.arch} core, the run is "
                            f"{arg('arch', self.arch)}")
        if self.timing is not None:
            raise GemmError(f"{arg('timing')} with {arg('core')}: the core has its timing "
                            "(give it to tpbsim.Core)")

    def _check_emit(self):
        if self.emit_only and self.out is None:
            raise GemmError(f"{arg('emit_only')} needs {arg('out')} DIR")
        if self.emit_only and self.placement != "dma" and self.values:
            raise GemmError(f"{arg('emit_only')} with values needs the DMA placement (the "
                            f"inputs are one HBM image); add {arg('timing_only')} or drop "
                            f"{arg('placement', 'sbuf')}")

    def planned(self):
        """The files the run will write into ``out`` (what OutputDir checks room for)."""
        progs = program_files(self.cores)
        if self.emit_only:
            return progs + ["cmd.txt"] + ([] if self.timing_only else
                                          ["hbm_inputs.npy", "expected.npy"])
        files = progs + ["report.json"]
        if self.values:
            files += ["out.npy", "a_used.npy", "w_used.npy"]
        if self.traces:
            files += ["stats.json", "retire.txt", "trace.perfetto.json", "report.png"]
        return files

    def queues_key(self):
        """``queues`` as a hashable value (a key of the kernels kept for a core)."""
        if self.queues is None:
            return None
        return tuple(sorted((k, tuple(v)) for k, v in self.queues.items()))


def _w_layout(w, w_layout):
    if w_layout is None:
        if is_tensor(w) and isinstance(w, torch_module().nn.Parameter):
            raise GemmError("w is an nn.Parameter (a layer's weight, which torch stores [out, "
                            f"in] = N x K): say {arg('w_layout', 'nk')} (or "
                            f"{arg('w_layout', 'kn')} for K x N)")
        return "kn"
    if w_layout not in ("kn", "nk"):
        raise GemmError(f"{arg('w_layout', w_layout)}: 'kn' (W is K x N, C = A @ W) or 'nk' "
                        "(W is N x K, torch's [out, in]: C = A @ W.T)")
    return w_layout
