"""python3 -m tpbsim.kernels gemm ...: C = A @ W on the modelled core, with a
checked result and a report (SPEC §12, docs/KERNELS.md). Exit 0 when the run
completed and the result is bit-exact (or timing-only), 1 for a request it
cannot run (named), 2 when the result differs, the race check found a race or the
run faulted, 3 deadlock."""

import argparse
import os
import sys

import numpy as np

from .. import _tpbsim
from ..device import MAX_CORES, is_core_count
from ..errors import Error
from . import gemm
from .plan import cli_messages
from .quant import WEIGHT_FORMATS


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        # Usage errors are exit 1 (SPEC §9): one line naming the argument, never a traceback.
        sys.exit(f"{self.prog}: error: {message} (--help: the usage)")


def _load(path, what):
    """An operand from a .npy file: a float array, 2-D (W) or more (A: the leading
    dimensions are rows) (gemm.operand_array)."""
    if path == "":
        raise gemm.GemmError(f"{what} '': an empty path (give a .npy file)")
    if os.path.isdir(path):
        raise gemm.GemmError(f"{what} {path}: is a directory, not a .npy file")
    try:
        x = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:
        raise gemm.GemmError(f"{what} {path}: cannot read a .npy array ({e})") from None
    if not isinstance(x, np.ndarray):
        if hasattr(x, "close"):
            x.close()
        raise gemm.GemmError(f"{what} {path}: a .npz archive, not one .npy array (save the "
                             "operand alone with numpy.save)")
    return gemm.operand_array(x, f"{what} {path}", ndim=None if what == "--a" else 2)


def _int_arg(check):
    """An integer that ``check`` takes (returns); its Error's message when it
    refuses one."""
    def parse(text):
        try:
            v = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        try:
            return check(v)
        except Error as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    return parse


def _within(ok, what):
    """A check of an integer for which ``ok`` holds; ``what`` says what it is not."""
    def check(v):
        if not ok(v):
            raise Error(f"{v} is not {what}")
        return v
    return check


def _shape_arg(name):
    """--m, --k, --n, --check-samples: a positive integer."""
    parse = _int_arg(_within(lambda v: v >= 1, "a positive integer"))
    parse.__name__ = name
    return parse


def _parser():
    ap = _Parser(prog="python3 -m tpbsim.kernels", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", metavar="gemm", parser_class=_Parser)
    g = sub.add_parser("gemm", help="C = A @ W, tiled, run, checked and reported")
    g.add_argument("--m", type=_shape_arg("m"), help="rows of A and C (from --a when given)")
    g.add_argument("--k", type=_shape_arg("k"),
                   help="the contraction (from --a / --w when given)")
    g.add_argument("--n", type=_shape_arg("n"), help="columns of W and C (from --w when given)")
    g.add_argument("--weights", required=True, metavar="|".join(WEIGHT_FORMATS),
                   help="the weight format (docs/KERNELS.md: what the hardware is handed)")
    g.add_argument("--act", default="bf16", help="activations: bf16")
    g.add_argument("--arch", default="mariana", help="mariana | maverick")
    g.add_argument("--a", help="A, M x K float32 .npy (random N(0, 1) when not given)")
    g.add_argument("--w", help="W, K x N float32 .npy (random N(0, 1/K) when not given; "
                               "N x K with --w-layout nk)")
    g.add_argument("--w-layout", choices=("kn", "nk"), default=None,
                   help="kn: --w is K x N (default); nk: --w is N x K (torch's [out, in])")
    g.add_argument("--check", choices=("sample", "full", "none"), default="sample",
                   help=f"sample: {gemm.CHECK_SAMPLES} (--check-samples) elements of C chosen "
                        "with --seed, computed exactly (default); full: every element; none")
    g.add_argument("--check-samples", type=_shape_arg("check-samples"),
                   default=gemm.CHECK_SAMPLES, help="elements of C the sampled check computes")
    g.add_argument("--out", help="the directory of the outputs (default gemm-out)",
                   default="gemm-out")
    g.add_argument("--timing", help="a timing profile JSON (as tpbsim run --timing)")
    g.add_argument("--timing-only", action="store_true", help="no values: time only (SPEC §13)")
    g.add_argument("--placement", default="dma", choices=gemm.PLACEMENTS,
                   help="dma: A, W, C in HBM, moved by the DMA queues (default); sbuf: the "
                        "inputs written into SBUF before the run (small shapes)")
    g.add_argument("--emit-only", action="store_true",
                   help="write a workload directory (program.tpb, cmd.txt; inputs unless "
                        "--timing-only) into --out for tpbsim run / tpbsim sweep; run nothing")
    g.add_argument("--threads", type=_int_arg(_tpbsim.check_threads),   # the run API's range
                   help="host threads of the run, 1..1024 (default: every core)")
    g.add_argument("--seed", type=_int_arg(_within(lambda v: 0 <= v < 2**64,
                                                   "a seed (0..2^64-1)")), default=0,
                   help="the random operands' seed, 0..2^64-1")
    g.add_argument("--cores", type=_int_arg(_within(is_core_count, f"a count of cores "
                                                    f"(1..{MAX_CORES}, the cores of a device)")),
                   default=1,
                   help="split C over this many cores of one device (docs/KERNELS.md \"Over "
                        "several cores\"); the report says the split and the scaling")
    g.add_argument("--no-traces", action="store_true",
                   help="no stats, retire, Perfetto trace or report.png")
    return ap


def main(argv=None):
    ap = _parser()
    args = ap.parse_args(argv)
    if args.cmd != "gemm":
        ap.error("a command is needed: gemm")
    with cli_messages():   # messages name --flags
        return _gemm(args)


def _gemm(args):
    try:
        a = _load(args.a, "--a") if args.a is not None else None
        w = _load(args.w, "--w") if args.w is not None else None
        if args.weights not in WEIGHT_FORMATS:
            raise gemm.GemmError(f"--weights {args.weights!r}: not a weight format "
                                 f"({'|'.join(WEIGHT_FORMATS)})")
        rep = gemm.execute(gemm.Gemm(
            args.m, args.k, args.n, args.weights, args.act, args.arch, a=a, w=w, out=args.out,
            timing=args.timing, timing_only=args.timing_only, seed=args.seed,
            traces=not args.no_traces, placement=args.placement, threads=args.threads,
            emit_only=args.emit_only, w_layout=args.w_layout or "kn",
            check=None if args.check == "none" else args.check,
            check_samples=args.check_samples, cores=args.cores))
    except (gemm.GemmError, Error) as e:
        sys.exit(f"gemm: error: {e}")
    except MemoryError:
        sys.exit("gemm: error: out of memory (the machine, or a memory limit such as ulimit -v, "
                 "allows no more): a smaller shape, or --timing-only")
    except OSError as e:
        sys.exit(f"gemm: error: {e.filename or ''}: {e.strerror or e}")
    except KeyboardInterrupt as e:
        print(f"gemm: interrupted: {_interrupted(e, args.out)}", file=sys.stderr)
        return 130
    notes = _notes(rep, args.out)
    if args.emit_only:
        what = (f" ({rep['split']});" if "split" in rep else
                f": {rep['instructions']} instructions;")
        print(f"C = A @ W: {rep['shape']}{what} workload in {args.out}/: "
              f"{' '.join(rep['files'])} (there: tpbsim run $(grep -v '^#' cmd.txt))")
        print("\n".join(notes)) if notes else None
        return 0
    if rep.get("cores", 1) > 1:
        _print_cores(rep)
    else:
        _print_one(rep)
    _print_verdict(rep)
    print(f"  outputs in {args.out}/: {' '.join(rep.get('files', []))}")
    if notes:
        print("\n".join(notes))
    if rep["status"] == "deadlock":
        return 3
    raced = rep.get("races")
    if rep["status"] != "ok" or rep["check"]["bit_exact"] is False or (raced and raced["count"]):
        return 2
    return 0


def _notes(rep, out):
    """What --out held before: the earlier run's files replaced, the others left."""
    outs, notes = rep.get("_outputs"), []
    if outs is not None and outs.removed:
        notes.append(f"  replaced an earlier run's {' '.join(outs.removed)}")
    if outs is not None and outs.others:
        shown = " ".join(outs.others[:8]) + (" ..." if len(outs.others) > 8 else "")
        notes.append(f"  also in {out}/, not written by this run: {shown}")
    return notes


def _print_one(rep):
    """The summary of a GEMM on one core."""
    s = rep["shape"]
    print(f"C = A @ W: {s['m']} x {s['k']} x {s['n']}, {rep['weights']} weights, bf16 "
          f"activations, {rep['arch']}")
    print(f"  weights run as: {rep['weights_run_as']}")
    for p in rep["padding"]:
        print(f"  padded: {p}")
    print(f"  {rep['status']}: {rep['simulated_ns'] / 1000:.3f} us simulated, "
          f"{rep['achieved_tflops']:.1f} TFLOPS of {rep['peak_tflops']:.1f} peak, "
          f"{rep['wall_seconds']:.2f} s wall")
    wt = rep["wall"]
    print(f"  wall: program generated in {wt['generate_s']:.2f} s, host data "
          f"{wt['host_data_s']:.2f} s, run {wt['run_s']:.2f} s"
          + (f", check {wt['check_s']:.2f} s" if "check_s" in wt else ""))
    if rep["hbm_bytes"]:
        print(f"  HBM: {rep['hbm_bytes'] / 1e6:.1f} MB at {rep['hbm_gbps']:.1f} GB/s "
              f"({100 * rep['hbm_gbps'] / rep['hbm_share_gbps']:.0f}% of the core's "
              f"{rep['hbm_share_gbps']:.1f} GB/s)")
    print(f"  bound by {rep['bound_by']}: {rep['bound_reason']}")
    if rep.get("roofline_ns"):
        print(f"  roofline {rep['roofline_ns'] / 1000:.3f} us (PE {rep['pe_bound_ns'] / 1000:.3f}, "
              f"DMA {rep['dma_bound_ns'] / 1000:.3f}, HBM {rep['hbm_bound_ns'] / 1000:.3f}): "
              f"simulated x{rep['simulated_ns'] / rep['roofline_ns']:.2f}")
    cc = rep.get("critical_chain")
    if cc:
        print(f"  critical chain: {cc['instructions']} instructions, {cc['summary']}")


def _print_cores(rep):
    """The summary of a GEMM over several cores."""
    s = rep["shape"]
    print(f"C = A @ W: {s['m']} x {s['k']} x {s['n']}, {rep['weights']} weights, bf16 "
          f"activations, {rep['arch']}, {rep['cores']} cores")
    print(f"  split: {rep['split']['reason']}")
    print(f"  {rep['status']}: {rep['simulated_ns'] / 1000:.3f} us simulated, "
          f"{rep['achieved_tflops']:.1f} TFLOPS of {rep['peak_tflops']:.1f} peak")
    print(f"  HBM: {rep['hbm_bytes'] / 1e6:.1f} MB at {rep['hbm_gbps']:.1f} GB/s (the device's "
          f"{rep['hbm_share_gbps']:.1f} GB/s)")
    for p in rep["per_core"]:
        busy = ", ".join(f"{k.upper()} {v:.0f}%" for k, v in p["busy_pct"].items())
        print(f"  core{p['core']}: rows {p['rows'][0]}-{p['rows'][1] - 1}, cols "
              f"{p['cols'][0]}-{p['cols'][1] - 1}: {busy}; bound by {p['bound_by']}")
    if "scaling_efficiency" in rep:
        print(f"  scaling: one core {rep['one_core_ns'] / 1000:.3f} us, efficiency "
              f"{100 * rep['scaling_efficiency']:.0f}%")


def _print_verdict(rep):
    """How the run ended, its check, its ordering (one core) and its race check."""
    chk = rep["check"]
    if rep["status"] != "ok":
        print(f"  RUN ENDED IN A {rep['status'].upper()}: {rep.get('message', '')}")
        print(f"  {chk['reason']}")
    elif chk["bit_exact"] is None:
        print(f"  {chk['reason']}")
    elif chk["bit_exact"]:
        what = ("every element of out.npy equals" if chk["mode"] == "full" else
                f"{chk['checked']} of {chk['of']} elements of out.npy (chosen with seed "
                f"{chk['seed']}; --check full: all) equal")
        print(f"  checked: {what} the FP32 k-ascending sum of a_used x w_used bit for bit")
    else:
        print(f"  CHECK FAILED: {chk['mismatches']} of {chk['checked']} checked elements of "
              f"out.npy differ from the FP32 k-ascending sum of a_used x w_used (first at "
              f"{chk['first'][0]})")
    order = rep.get("ordering")
    if order:
        print(f"  ordered: {order['dependences']} dependences between queues, derived from the "
              f"instructions' bytes, carried by {order['waits']} semaphore waits "
              f"({order['nops']} on nops)")
    raced = rep.get("races")
    if raced is not None:
        if raced["count"]:
            print(f"  RACES: {raced['count']} unordered pairs of accesses (the race check, "
                  f"whatever the timing): {raced['first'][0]}")
        else:
            print("  race check: every access ordered by the semaphores (no race)")


def _interrupted(e, out):
    """What --out holds after Ctrl-C, as it is."""
    done, removed = getattr(e, "gemm_written", []), getattr(e, "gemm_removed", [])
    earlier = getattr(e, "gemm_earlier", [])
    held = (f"{out}/ holds this run's {' '.join(done)} only" if done else
            f"{out}/ holds nothing of this run")
    if removed:
        before = f"an earlier run's {' '.join(removed)} were removed"
    elif earlier:
        before = f"an earlier run's {' '.join(earlier)} are as they were"
    else:
        before = "no earlier run's files were there"
    return f"{held} (no report.json: the run did not finish; {before})"


if __name__ == "__main__":
    sys.exit(main())
