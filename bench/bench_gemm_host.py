#!/usr/bin/env python3
"""The host side of a GEMM through the Python API against its own simulation
(docs/PERFORMANCE.md "GEMM", issue 34): for each shape,
tpbsim.kernels.run(a=A, w=W, ...) with the default (sampled) check, timed end to
end, and the simulation's own wall time from the same run (report["wall"]
["run_s"]); goal: end to end within 2x of the simulation. A and W are made
before the clock starts (they are the user's data). Also timed, for the record:
the host's quantization of A and W (prepare) and, with --full, the whole
reference check (check="full").

    build/tpbsim-python bench/bench_gemm_host.py [--reps 3] [--big] [--full]

--big adds the 4096^3 MXFP4 GEMM (about 10 s of simulation per repetition).
"""

import argparse
import statistics
import time

import numpy as np

from tpbsim.kernels import gemm


def one(m, k, n, weights, reps, full):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32)
    w = (rng.standard_normal((k, n), dtype=np.float32) / np.float32(np.sqrt(k)))
    rows = []
    for _ in range(reps):
        t0 = time.perf_counter()
        rep = gemm.run(a=a, w=w, weights=weights, arch="mariana", traces=False, log=None)
        wall = time.perf_counter() - t0
        assert rep["status"] == "ok" and rep["check"]["bit_exact"] is True, rep["check"]
        rows.append((wall, rep["wall"]))
    walls = [r[0] for r in rows]
    i = walls.index(statistics.median(walls)) if reps % 2 else 0
    wall, split = rows[i]
    sim = split["run_s"]
    other = wall - sum(v for v in split.values())
    print(f"{m} x {k} x {n} {weights}: end to end {wall:.2f} s (median of {reps}), simulation "
          f"{sim:.2f} s: {wall / sim:.2f}x")
    print(f"  split: program {split['generate_s']:.2f} s, host data {split['host_data_s']:.2f} s, "
          f"run {sim:.2f} s, check {split['check_s']:.2f} s ({rep['check']['checked']} of "
          f"{rep['check']['of']} elements), other {other:.2f} s (the core, reading C)")
    plan = gemm.Plan(m, k, n, weights, "mariana")
    t0 = time.perf_counter()
    gemm.prepare(plan, a, w)
    print(f"  quantization of A and W: {time.perf_counter() - t0:.2f} s")
    if full:
        t0 = time.perf_counter()
        chk = gemm.check_result(rep.c, rep["_arrays"]["a_used_pad"], rep["_arrays"]["w_used_pad"],
                                "full")
        print(f"  check='full': {time.perf_counter() - t0:.1f} s, bit_exact {chk['bit_exact']}")
    return wall / sim


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--big", action="store_true", help="also 4096^3 MXFP4")
    ap.add_argument("--full", action="store_true", help="also time check='full'")
    args = ap.parse_args()
    cases = [(2048, 2048, 2048, "mxfp8")] + ([(4096, 4096, 4096, "mxfp4")] if args.big else [])
    for c in cases:
        one(*c, args.reps if c[0] < 4096 else 1, args.full)


if __name__ == "__main__":
    main()
