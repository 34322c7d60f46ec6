"""python3 -m tpbsim.nki profile FILE.py KERNEL [options] --out DIR

Runs kernel KERNEL of FILE.py (a kernel file written for the vendor's
toolchain: ``import nki`` resolves to tpbsim.nki) on the modelled core with
the inputs given, and writes DIR (docs/NKI.md "Command line"): outputs/*.npy,
report.json, program.tpb, inputs/*.npy, rerun.sh (the ``tpbsim run`` command
line that reruns the program with its --load / --dump), trace.json (Perfetto)
and, with --vcd, trace.vcd. Progress goes to stderr.

Exit status: 0 ok, 1 bad input (an NKIError names the kernel's line), 2 a
fault of the model, 5 races found (SPEC §14).
"""

import argparse
import ast
import importlib.util
import json
import os
import sys
import time
import traceback

import numpy as np

from .. import errors as tpb_errors
from . import dtypes, install, language, profile
from .errors import NKIError, kernel_raised, user_traceback


def _value(text):
    """An --arg value: a Python literal, or an NKI dtype name (nl.float32 or
    float32)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        pass
    name = text[3:] if text.startswith("nl.") else text
    if name in dtypes.BY_NAME:
        return getattr(language, name)
    return text


class _KernelFileRaised(Exception):
    """The kernel file raised (a SyntaxError, an ImportError, any exception) while
    it was loaded: shown with its own frames only."""


def _load_kernel(path, name):
    install()
    spec = importlib.util.spec_from_file_location("nki_kernel_file", path)
    if spec is None:
        raise NKIError("kernel file", f"{path}: not a Python file")
    if not os.path.isfile(path):
        raise NKIError("kernel file", f"{path}: " + (
            "is a directory, not a kernel file" if os.path.isdir(path) else "no such file"))
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(mod)
    except Exception as e:
        raise _KernelFileRaised(e) from None
    if not hasattr(mod, name):
        kernels = [k for k, v in vars(mod).items() if type(v).__name__ == "Kernel"]
        raise NKIError("kernel", f"{path} has no kernel {name!r} (it has: "
                       f"{', '.join(kernels) or 'none'})")
    k = getattr(mod, name)
    if not callable(k):
        raise NKIError("kernel", f"{path}: {name} is not a kernel (it is "
                       f"{type(k).__name__} {k!r:.40})")
    return k


def _load_input(path):
    """One --input array (a .npy file holding one array, no pickled objects)."""
    try:
        a = np.load(path)
    except (OSError, ValueError, EOFError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else e
        raise NKIError("--input", f"{path}: {why}") from None
    if not isinstance(a, np.ndarray):
        a.close()
        raise NKIError("--input", f"{path}: a .npz archive, not one .npy array (save each "
                       "input alone with numpy.save)")
    return a


def _show_kernel_writers(e):
    """An exception of the kernel writer's code: its frames only, then exit 1."""
    traceback.print_exception(type(e), e, user_traceback(e).__traceback__)
    print("tpbsim.nki: the kernel file raised the exception above (nothing was run)",
          file=sys.stderr)
    return 1


def _parser():
    ap = argparse.ArgumentParser(prog="python3 -m tpbsim.nki",
                                 description="NKI kernels on the modelled NeuronCore")
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("profile", help="run a kernel and write its profile directory")
    p.add_argument("file")
    p.add_argument("kernel")
    p.add_argument("--arch", help="sunda, cayman, mariana, maverick or trn1/trn2/trn3 "
                   "(default: NEURON_PLATFORM_TARGET_OVERRIDE, else mariana)")
    p.add_argument("--input", action="append", default=[], metavar="FILE.npy",
                   help="the kernel's array arguments, in order")
    p.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                   help="a keyword argument (a Python literal or an NKI dtype)")
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--timing", metavar="FILE.json")
    p.add_argument("--timing-only", action="store_true")
    p.add_argument("--no-racecheck", action="store_true")
    p.add_argument("--vcd", action="store_true", help="also write trace.vcd")
    p.add_argument("--no-perfetto", action="store_true")
    p.add_argument("--mx-emax", default="neuron-alt", choices=("ocp", "neuron-alt"))
    return ap


def _progress(start):
    def say(msg):
        print(f"[{time.perf_counter() - start:8.2f} s] {msg}", file=sys.stderr, flush=True)
    return say


def main(argv=None):
    a = _parser().parse_args(argv)
    say = _progress(time.perf_counter())
    try:
        for opt in ("arch", "out", "timing"):
            if getattr(a, opt) == "":
                raise NKIError(f"--{opt}", "'': an empty value (leave the option out for its "
                               "default)" if opt != "out" else "'': an empty path")
        kernel = _load_kernel(a.file, a.kernel)
        arrays = [_load_input(f) for f in a.input]
        kwargs = {}
        for item in a.arg:
            if "=" not in item:
                raise NKIError("--arg", f"{item!r} is not NAME=VALUE")
            k, v = item.split("=", 1)
            kwargs[k] = _value(v)
        os.makedirs(a.out, exist_ok=True)
        prof = profile(kernel, *arrays, arch=a.arch, timing=a.timing,
                       perfetto=None if a.no_perfetto else os.path.join(a.out, "trace.json"),
                       vcd=os.path.join(a.out, "trace.vcd") if a.vcd else None,
                       racecheck=not a.no_racecheck, timing_only=a.timing_only,
                       mx_emax=a.mx_emax, progress=say, **kwargs)
        prof.write(a.out)
    except _KernelFileRaised as e:
        return _show_kernel_writers(e.__cause__ or e.args[0])
    except NKIError as e:
        print(f"tpbsim.nki: {e}", file=sys.stderr)
        return 1
    except tpb_errors.RunError as e:
        print(f"tpbsim.nki: the run stopped: {e}", file=sys.stderr)
        return 2
    except (tpb_errors.Error, OSError, ValueError) as e:
        if kernel_raised(e):
            return _show_kernel_writers(e)
        print(f"tpbsim.nki: {e}", file=sys.stderr)
        return 1
    except MemoryError:
        print("tpbsim.nki: out of memory (the machine, or a limit such as ulimit -v): the "
              "kernel's trace keeps every isa call, about 2.5 KB each", file=sys.stderr)
        return 1
    except Exception as e:
        if kernel_raised(e):
            return _show_kernel_writers(e)
        raise
    say(f"done: {prof.simulated_ns / 1000:.3f} us simulated; wrote {a.out}")
    print(prof.summary())
    print(json.dumps({"simulated_ns": prof.simulated_ns, "bound_by": prof.bound_by,
                      "races": len(prof.races or [])}))
    return 5 if prof.races else 0


if __name__ == "__main__":
    sys.exit(main())
