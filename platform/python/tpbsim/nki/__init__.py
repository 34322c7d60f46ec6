"""tpbsim.nki: NKI kernels on the modelled core (SPEC §17, docs/NKI.md).

    import tpbsim.nki as nki
    import tpbsim.nki.language as nl
    import tpbsim.nki.isa as nisa

    @nki.jit
    def kernel(a):
        ...

    out = nki.simulate(kernel)(a)                   # NumPy in, NumPy out
    prof = nki.profile(kernel, a, arch="mariana")   # and the timeline
    prof.outputs, prof.simulated_ns, prof.engines, prof.engine_active, prof.result

A kernel is traced (Python runs it; loops unroll), every nki.isa call is
checked and lowered to the model's instructions (language calls lower to isa
calls by one table), SBUF / PSUM are allocated by liveness, the semaphores
come from the data dependencies (tpbsim.program), and the program runs on a
tpbsim.Core. ``tpbsim.nki.install()`` makes ``import nki`` (and nki.isa,
nki.language, nki.typing) resolve here, so a kernel file written for the
vendor's toolchain runs unchanged; calling a jitted kernel with arrays runs
it as ``simulate`` does. ``python3 -m tpbsim.nki profile FILE.py KERNEL ...``
writes a profile directory.
"""

import functools
import sys

from ..errors import ArgumentTypeError
from . import isa, language, typing
from .errors import NKIError, kernel_raised, strip_traceback, user_traceback
from .host import bits
from .run import Profile, resolve_arch, run_kernel
from .trace import active

__all__ = ["jit", "simulate", "profile", "install", "NKIError", "Kernel", "Profile", "bits",
           "isa", "language", "typing", "reference"]


class Kernel:
    """A jitted kernel (``@nki.jit``): calling it with arrays runs it on the
    modelled core and returns its outputs (as :func:`simulate`); called while
    another kernel is being traced, it is traced inline. ``kernel[1]`` is the
    kernel (LNC 1); ``.func`` the Python function."""

    def __init__(self, func, **options):
        self.func = func
        self.options = options
        functools.update_wrapper(self, func)

    def __call__(self, *args, **kwargs):
        if active():
            return self.func(*args, **kwargs)
        return simulate(self)(*args, **kwargs)

    def __getitem__(self, lnc):
        if lnc != 1:
            raise NKIError("not modelled", f"kernel[{lnc}]: a logical NeuronCore of {lnc} cores "
                           "is not lowered by tpbsim.nki (LNC 1 only)")
        return self

    def __repr__(self):
        return f"<tpbsim.nki.Kernel {self.func.__name__}>"


def jit(fn=None, **kwargs):
    """``@nki.jit`` / ``@nki.jit(...)``: a :class:`Kernel` (options such as
    ``platform_target`` or ``arch`` pick the generation)."""
    if fn is None:
        return lambda f: Kernel(f, **kwargs)
    return fn if isinstance(fn, Kernel) else Kernel(fn, **kwargs)


def _reraise(e):
    """Raises `e` as the kernel writer sees it: an NKIError or an exception the
    kernel itself raised with the kernel's frames only, anything else whole."""
    if isinstance(e, NKIError):
        raise strip_traceback(e) from None
    if kernel_raised(e):
        raise user_traceback(e)
    raise e


def _kernel(k):
    return k if isinstance(k, Kernel) else Kernel(k)


def _arch_option(k, arch):
    return arch or k.options.get("arch") or k.options.get("platform_target")


def simulate(kernel, arch=None, timing=None, mx_emax="neuron-alt"):
    """``simulate(kernel)(*arrays, **kwargs)``: runs the kernel on the modelled
    core and returns its outputs (NumPy, or of the inputs' kind: torch tensors,
    ml_dtypes arrays, raw bits), as the vendor's nki.simulate does."""
    k = _kernel(kernel)

    def run(*args, **kwargs):
        try:
            return run_kernel(k.func, args, kwargs, arch=_arch_option(k, arch), timing=timing,
                              racecheck=False, mx_emax=mx_emax).outputs
        except Exception as e:
            _reraise(e)
    functools.update_wrapper(run, k.func)
    return run


def profile(kernel, *arrays, arch=None, timing=None, perfetto=None, vcd=None, racecheck=True,
            timing_only=False, mx_emax="neuron-alt", progress=None, **kwargs):
    """Runs ``kernel(*arrays, **kwargs)`` on the modelled core with the whole
    timeline; returns a :class:`Profile` (``.outputs``, ``.simulated_ns``,
    ``.engines``, ``.program``, ``.result``, ``.write(dir)``)."""
    k = _kernel(kernel)
    if progress is not None and not callable(progress):
        raise ArgumentTypeError(f"progress must be a function of one message (or None), not "
                                f"{type(progress).__name__}")
    try:
        return run_kernel(k.func, arrays, kwargs, arch=_arch_option(k, arch), timing=timing,
                          perfetto=perfetto, vcd=vcd, racecheck=racecheck,
                          timing_only=timing_only, mx_emax=mx_emax, progress=progress)
    except Exception as e:
        _reraise(e)


def reference(kernel, arch=None, mx_emax="neuron-alt"):
    """``reference(kernel)(*arrays)``: the same calls evaluated by NumPy
    (tpbsim.nki.numpy_ref: the semantics of each isa call, no model), for
    tests of one against the other."""
    from . import numpy_ref
    k = _kernel(kernel)

    def run(*args, **kwargs):
        try:
            return numpy_ref.run(k.func, args, kwargs, resolve_arch(_arch_option(k, arch)),
                                 mx_emax)
        except Exception as e:
            _reraise(e)
    return run


def install():
    """Makes ``import nki``, ``nki.isa``, ``nki.language``, ``nki.typing`` (and the
    older ``neuronxcc.nki.*``) resolve to tpbsim.nki. Returns the module."""
    me = sys.modules[__name__]
    for prefix in ("nki", "neuronxcc.nki"):
        sys.modules[prefix] = me
        sys.modules[prefix + ".isa"] = isa
        sys.modules[prefix + ".language"] = language
        sys.modules[prefix + ".typing"] = typing
    if "neuronxcc" not in sys.modules:
        import types
        pkg = types.ModuleType("neuronxcc")
        pkg.nki = me
        pkg.__path__ = []
        sys.modules["neuronxcc"] = pkg
    return me
