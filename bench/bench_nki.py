#!/usr/bin/python3
"""How fast tpbsim.nki turns isa calls into a program, against how long the
model takes to run that program (docs/PERFORMANCE.md "NKI front end").

    build/tpbsim-python bench/bench_nki.py [--calls 100000] [--kernel copy|mx|vector] [--run]

Traces a kernel of about --calls isa calls (copy: per tile a load, a
tensor_copy and a store; mx: per tile two loads, two quantize_mx, an MX matmul,
a PSUM eviction and a store, on mariana; vector: per tile a load, an
activation with a reduce, a tensor_scalar, a tensor_tensor and a store),
lowers it (allocation, lowering,
semaphores, program text) and reports calls/s of each phase; with --run it
also runs the program on the model, timing-only and full, and prints the
wall times side by side. No timing assertion here: the numbers go to
docs/PERFORMANCE.md.
"""
import argparse
import time

import numpy as np

import tpbsim
import tpbsim.nki as nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl
from tpbsim.nki import lower, run


@nki.jit
def copy_tiles(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        for j in nl.affine_range(a.shape[1] // 512):
            t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
            u = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.tensor_copy(dst=u, src=t)
            nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], src=u)
    return out


@nki.jit
def mx_tiles(x, w):
    """out[t] = w^T @ x[t] per 512-column tile t, MXFP8 on the PE."""
    n = x.shape[1] // 4
    out = nl.ndarray((128, n), dtype=nl.float32, buffer=nl.shared_hbm)
    wt = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.dma_copy(dst=wt, src=w)
    wq = nl.ndarray((128, 128), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    ws = nl.ndarray((128, 128), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.quantize_mx(dst=wq, src=wt, dst_scale=ws)
    for t in nl.affine_range(n // 512):
        xt = nl.ndarray((128, 2048), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=xt, src=x[:, t * 2048:(t + 1) * 2048])
        xq = nl.ndarray((128, 512), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
        xs = nl.ndarray((128, 512), dtype=nl.uint8, buffer=nl.sbuf)
        nisa.quantize_mx(dst=xq, src=xt, dst_scale=xs)
        ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul_mx(dst=ps, stationary=wq, moving=xq, stationary_scale=ws, moving_scale=xs)
        r = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=r, src=ps)
        nisa.dma_copy(dst=out[:, t * 512:(t + 1) * 512], src=r)
    return out


@nki.jit
def vector_tiles(a):
    """Per tile: a load, exp with a row-sum reduce (Scalar engine), a
    tensor_scalar and a tensor_tensor (Vector engine), a store: SPEC §18's calls."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        e = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=e, op=nl.exp, data=t, reduce_op=nl.add, reduce_res=s)
        nisa.tensor_scalar(dst=e, data=e, op0=nl.divide, operand0=s)
        nisa.tensor_tensor(dst=e, data1=e, data2=t, op=nl.multiply)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=e)
    return out


def inputs(kernel, calls):
    rng = np.random.default_rng(0)
    if kernel == "copy":
        tiles = max(1, calls // 3)
        return copy_tiles, (rng.random((128 * tiles, 512), dtype=np.float32),)
    if kernel == "vector":
        tiles = max(1, calls // 5)
        return vector_tiles, (rng.random((128 * tiles, 512), dtype=np.float32),)
    tiles = max(1, calls // 4)      # 4 isa calls per tile (2 DMA, quantize, matmul, copy, store)
    x = nki.bits(np.zeros((128, 2048 * tiles), dtype=np.uint16), nl.bfloat16)
    w = nki.bits(np.zeros((128, 512), dtype=np.uint16), nl.bfloat16)
    return mx_tiles, (x, w)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=100000)
    ap.add_argument("--kernel", choices=("copy", "mx", "vector"), default="copy")
    ap.add_argument("--run", action="store_true", help="also run the program on the model")
    a = ap.parse_args()
    kernel, args = inputs(a.kernel, a.calls)
    clock = time.process_time       # CPU seconds: the machine may be shared
    t0 = clock()
    traced = run.trace_call(kernel.func, "mariana", args, {})
    t1 = clock()
    lw = lower.Lowering(traced.trace, 256 * 1024, 16 * 1024).run()
    t2 = clock()
    text = lw.builder.text()
    t3 = clock()
    calls = len(traced.trace.calls)
    print(f"{a.kernel}: {calls} isa calls -> {len(lw.builder.instrs)} instructions "
          f"({lw.builder.nops} nop), {len(text) / 1e6:.1f} MB of program text")
    for name, dt in (("trace", t1 - t0), ("lower", t2 - t1), ("text", t3 - t2),
                     ("front end", t3 - t0)):
        print(f"  {name:<10} {dt:8.3f} s CPU  {calls / dt:10.0f} calls/s")
    if a.run:
        for timing_only in (True, False):
            with tpbsim.Core("mariana", mx_emax="neuron-alt") as core:
                t4 = clock()
                core.run(text, timing_only=timing_only, keep_retires=False, threads=1)
                dt = clock() - t4
            print(f"  run {'timing-only' if timing_only else 'full':<11} {dt:8.3f} s CPU  "
                  f"(front end / run = {(t3 - t0) / dt:.2f})")


if __name__ == "__main__":
    main()
