#!/usr/bin/env python3
"""The cost of the Python module (docs/PERFORMANCE.md, SPEC §12), measured side
by side in one run and printed as ratios:

1. Core.write then Core.read of a 128 x 64 KiB array (8 MiB, SBUF), against two
   NumPy copies of the same array (goal: at most 3x).
2. Core.run of the same programs as bench/bench_run_api.cpp (the run API from
   C++, run here as a child process between the Python repetitions): the
   pipeline workload from its text, and 100,000 TensorDequantize words
   (goal: within 10% of C++).

Wall times (best and median) and process CPU time (median; on a loaded host
it counts the work and not the wait for a core) are printed for both.

    build/tpbsim-python bench/bench_python.py [--build build] [--reps 7]
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = HERE.parent
PIPELINE = SOURCE / "traces" / "workloads" / "pipeline"
DEQUANT = (".engine pool\n"
           "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 "
           "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[4, 1, 1]) "
           "dst=t3d(sbuf(0, 0x4000), step=[1, 0, 0], num=[8, 1, 1])\n")


def best_and_median(times):
    return min(times), statistics.median(times)


def time_it(fn, n, cpu=None):
    """Wall seconds of each of n calls; with a list `cpu`, appends the mean
    process CPU seconds per call of the n (as bench_run_api's process_cpu_s)."""
    out = []
    c0 = time.process_time()
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    if cpu is not None:
        cpu.append((time.process_time() - c0) / n)
    return out


def cpp_times(binary, reps):
    """bench_run_api's per-iteration wall times (seconds) and, per repetition, its
    process CPU seconds per iteration, by benchmark name."""
    p = subprocess.run([str(binary), f"--benchmark_repetitions={reps}",
                        "--benchmark_format=json", "--benchmark_min_time=0.2"],
                       capture_output=True, text=True, check=True)
    out = {}
    for b in json.loads(p.stdout)["benchmarks"]:
        if b.get("run_type") == "iteration":
            name = b["run_name"].removesuffix("/manual_time")
            scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]
            wall, cpu = out.setdefault(name, ([], []))
            wall.append(b["real_time"] * scale)
            cpu.append(b["process_cpu_s"])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=str(SOURCE / "build"), help="the CMake build directory")
    ap.add_argument("--reps", type=int, default=7, help="repetitions of each measurement")
    args = ap.parse_args()
    build = pathlib.Path(args.build)
    sys.path.insert(0, str(build / "python"))
    import tpbsim

    core = tpbsim.Core("mariana")
    reps = args.reps

    # 1. Memory: write + read of 8 MiB against two NumPy copies.
    a = np.random.default_rng(0).integers(0, 256, (128, 64 * 1024), dtype=np.uint8)
    copies, wr, copies_cpu, wr_cpu = [], [], [], []
    for _ in range(reps):  # interleaved, so load changes hit both alike
        copies += time_it(lambda: a.copy().copy(), 5, copies_cpu)
        wr += time_it(lambda: (core.write("sbuf", 0, 0, a),
                               core.read("sbuf", 0, 0, (128, 64 * 1024), "u8")), 5, wr_cpu)
    assert np.array_equal(core.read("sbuf", 0, 0, (128, 64 * 1024), "u8"), a)
    np_best, np_med = best_and_median(copies)
    wr_best, wr_med = best_and_median(wr)

    # 2. Runs: Python and C++ alternate, reps times.
    core.write("sbuf", 0, 0, np.load(PIPELINE / "activations.npy"))
    core.write("sbuf", 0, 0x1000, np.load(PIPELINE / "weights_mxfp4.npy"))
    pipeline = (PIPELINE / "program.tpb").read_text()
    dequant = tpbsim.assemble(DEQUANT) * 100000
    runs = {"BM_RunApi_Pipeline": (lambda: core.run(pipeline), 20),
            "BM_RunApi_Dequant/100000": (lambda: core.run(dequant), 3)}
    py = {k: ([], []) for k in runs}
    cpp = {k: ([], []) for k in runs}
    binary = build / "bench" / "bench_run_api"
    for _ in range(max(1, reps // 3)):
        for k, (fn, n) in runs.items():
            for _ in range(3):  # three blocks, as the C++ side's three repetitions
                py[k][0].extend(time_it(fn, n, py[k][1]))
        for k, (wall, cpu) in cpp_times(binary, 3).items():
            if k in cpp:
                cpp[k][0].extend(wall)
                cpp[k][1].extend(cpu)
    core.close()

    print(f"tpbsim {tpbsim.__version__}, Python {sys.version.split()[0]}, NumPy {np.__version__}, "
          f"load average {os.getloadavg()[0]:.1f}")
    print()
    print("| measurement | NumPy / C++ wall (best, median) | Python wall (best, median) | "
          "ratio best | ratio median | CPU ratio (median) | goal |")
    print("|---|---|---|---|---|---|---|")
    cpu_ratio = statistics.median(wr_cpu) / statistics.median(copies_cpu)
    print(f"| write + read 128 x 64 KiB vs two NumPy copies | {np_best * 1e3:.2f} ms, "
          f"{np_med * 1e3:.2f} ms | {wr_best * 1e3:.2f} ms, {wr_med * 1e3:.2f} ms | "
          f"{wr_best / np_best:.2f} | {wr_med / np_med:.2f} | {cpu_ratio:.2f} | <= 3 |")
    for name in py:
        pb, pm = best_and_median(py[name][0])
        cb, cm = best_and_median(cpp[name][0])
        cpu_ratio = statistics.median(py[name][1]) / statistics.median(cpp[name][1])
        print(f"| core.run vs run API: {name.split('_', 2)[2]} | {cb * 1e3:.2f} ms, "
              f"{cm * 1e3:.2f} ms | {pb * 1e3:.2f} ms, {pm * 1e3:.2f} ms | {pb / cb:.3f} | "
              f"{pm / cm:.3f} | {cpu_ratio:.3f} | <= 1.10 |")


if __name__ == "__main__":
    main()
