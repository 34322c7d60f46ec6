#!/usr/bin/env python3
"""C = A @ W on the modelled NeuronCore, from NumPy: the DVE quantizes BF16
activations and weights to MXFP8 (QuantizeMX, E4M3 with E8M0 scales per block
of 32), the PE loads the weights (ldweights_mx) and multiplies (matmul_mx) into
PSUM; the script compares the result with NumPy's product and prints where the
simulated time went.

    build/tpbsim-python examples/python/mx_matmul.py [--m 128] [--k 512] [--n 128]

A is M x K (activations), W is K x N (weights); K is the contraction (a multiple
of 128 up to 512: 4 values per partition, 32 to 128 partitions). See
docs/PYTHON.md.
"""

import argparse

import numpy as np

import tpbsim

X, W, XQ, XS, WQ, WS = 0x0, 0x8000, 0x10000, 0x14000, 0x18000, 0x1C000


def to_partitions(a):
    """K x C contraction-major -> K/4 partitions x 4C (partition p, element 4c + l
    = a[4p + l][c]): the order QuantizeMX packs an x4 word's lanes in."""
    k, c = a.shape
    return a.reshape(k // 4, 4, c).transpose(0, 2, 1).reshape(k // 4, 4 * c)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--m", type=int, default=128, help="rows of A (PE moving columns), <= 512")
    ap.add_argument("--k", type=int, default=512, help="contraction, 128 / 256 / 384 / 512")
    ap.add_argument("--n", type=int, default=128, help="columns of W (PSUM partitions), <= 128")
    ap.add_argument("--arch", default="mariana", choices=["mariana", "maverick"])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    m, k, n = args.m, args.k, args.n
    parts = k // 4

    rng = np.random.default_rng(args.seed)
    a = rng.standard_normal((m, k)).astype(np.float32)
    w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)

    # BF16 of both (tpbsim.convert: RNE, as a BF16 producer rounds), and the
    # values those codes hold.
    a_bits, w_bits = tpbsim.convert("fp32", "bf16", a), tpbsim.convert("fp32", "bf16", w)
    a16, w16 = tpbsim.decode("bf16", a_bits), tpbsim.decode("bf16", w_bits)

    program = f"""
.engine dve
quantize_mx channels={parts} in_dtype=bf16 out_dtype=fp8_e4m3 \\
    src=t3d(sbuf(0, {X:#x}), step=[1, 0, 0], num=[{4 * m}, 1, 1]) \\
    dst=mx1d(data=sbuf(0, {XQ:#x}), scale=sbuf(0, {XS:#x}), num={m}) update=inc(sem1)
quantize_mx channels={parts} in_dtype=bf16 out_dtype=fp8_e4m3 \\
    src=t3d(sbuf(0, {W:#x}), step=[1, 0, 0], num=[{4 * n}, 1, 1]) \\
    dst=mx1d(data=sbuf(0, {WQ:#x}), scale=sbuf(0, {WS:#x}), num={n}) update=inc(sem1)
.engine pe
ldweights_mx in_dtype=fp8_e4m3 rows={parts} cols={n} \\
    src=mx1d(data=sbuf(0, {WQ:#x}), scale=sbuf(0, {WS:#x}), num={n}) wait=ge(sem1, 2)
matmul_mx in_dtype=fp8_e4m3 rows={parts} \\
    src=mx1d(data=sbuf(0, {XQ:#x}), scale=sbuf(0, {XS:#x}), num={m}) \\
    dst=t3d(psum(0, 0x0), step=[1, 0, 0], num=[{m}, 1, 1])
"""
    failures = tpbsim.check(program, args.arch)
    if failures:
        raise SystemExit("\n".join(map(str, failures)))

    with tpbsim.Core(args.arch) as core:
        core.write("sbuf", 0, X, to_partitions(a_bits.T))  # K/4 partitions x 4M
        core.write("sbuf", 0, W, to_partitions(w_bits))    # K/4 partitions x 4N
        result = core.run(program)
        c = core.read("psum", 0, 0, (n, m), "f32").T  # PSUM[n][m] = (A @ W)[m][n]

    exact = a.astype(np.float64) @ w.astype(np.float64)
    bf16_only = a16.astype(np.float64) @ w16.astype(np.float64)
    rel = lambda x: np.linalg.norm(x - exact) / np.linalg.norm(exact)
    print(f"C = A @ W, A {m} x {k}, W {k} x {n}, MXFP8 E4M3 on {args.arch}")
    print(f"  relative error vs NumPy float64: {rel(c):.4f} (the BF16 inputs alone: "
          f"{rel(bf16_only):.4f})")
    print(f"  largest |error|: {np.max(np.abs(c - exact)):.4g}, largest |C|: "
          f"{np.max(np.abs(exact)):.4g}")
    if rel(c) > 0.05:  # MXFP8 E4M3 keeps about 3 significant bits per element
        raise SystemExit(f"error {rel(c):.4f} is beyond what MXFP8 explains")
    print()
    print(result.summary())
    print()
    for r in result.retires:
        print(f"  {r.engine:>4}[{r.index}] {r.mnemonic:<13} {r.start_ps / 1000:9.3f} ns -> "
              f"{r.end_ps / 1000:9.3f} ns")


if __name__ == "__main__":
    main()
