"""An MXFP8 matrix multiplication in NKI: C = lhsT.T @ rhs with both operands
quantized to MXFP8 E4M3 on the Vector engine (nisa.quantize_mx) and multiplied
by the Tensor engine (nisa.nc_matmul_mx), FP32 accumulation in PSUM over the
contraction tiles (NeuronCore-v4 and later: mariana, maverick).

Layout (the MX rule of the NKI docs): a contraction tile of 512 rows lives in
SBUF as 128 partitions x 4: row k0 + 128 j + p of the tile goes to partition p,
lane j. The loads bring the 4 row blocks side by side ([128, 4, F]); the cast
to bfloat16 on the Vector engine interleaves them ([128, F, 4]), so that the
4 values of an x4 element are consecutive, as quantize_mx packs them.

    build/tpbsim-python examples/nki/mx_matmul.py      # runs, checks, profiles
"""
import numpy as np

import tpbsim.nki as nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

TILE_K = 4 * nl.tile_size.pmax           # 512 contraction values per MX tile
TILE_M = nl.tile_size.gemm_stationary_fmax   # 128
TILE_N = nl.tile_size.gemm_moving_fmax       # 512


def load_mx(src, k0, c0, cols):
    """Rows k0..k0+511, columns c0..c0+cols of an HBM tensor, quantized to
    MXFP8: (data [128, cols] x4, scales [128, cols])."""
    raw = nl.ndarray((128, 4, cols), dtype=src.dtype, buffer=nl.sbuf)
    for j in nl.affine_range(4):
        nisa.dma_copy(dst=raw[:, j, :],
                      src=src[k0 + 128 * j:k0 + 128 * (j + 1), c0:c0 + cols])
    inter = nl.ndarray((128, cols, 4), dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.tensor_copy(dst=inter, src=raw.permute((0, 2, 1)))
    data = nl.ndarray((128, cols), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    scale = nl.ndarray((128, cols), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.quantize_mx(dst=data, src=inter.reshape((128, 4 * cols)), dst_scale=scale)
    return data, scale


@nki.jit
def mx_matmul(lhsT, rhs):
    """lhsT [K, M], rhs [K, N] (float32 or bfloat16); K a multiple of 512, M of
    128, N of 512. Returns C [M, N] float32."""
    K, M = lhsT.shape
    K2, N = rhs.shape
    assert K == K2 and K % TILE_K == 0 and M % TILE_M == 0 and N % TILE_N == 0
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TILE_M):
        # The stationary tiles of this block row, kept for every n (a list:
        # each stays allocated until its last matmul).
        lhs_tiles = [load_mx(lhsT, k * TILE_K, m * TILE_M, TILE_M)
                     for k in nl.affine_range(K // TILE_K)]
        for n in nl.affine_range(N // TILE_N):
            acc = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                rhs_data, rhs_scale = load_mx(rhs, k * TILE_K, n * TILE_N, TILE_N)
                lhs_data, lhs_scale = lhs_tiles[k]
                nisa.nc_matmul_mx(dst=acc, stationary=lhs_data, moving=rhs_data,
                                  stationary_scale=lhs_scale, moving_scale=rhs_scale,
                                  accumulate=(k > 0))
            res = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=acc)
            nisa.dma_copy(dst=result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N],
                          src=res)
    return result


def reference(lhsT, rhs):
    """The exact product (float64): the MX result is within MXFP8's error of it."""
    return lhsT.astype(np.float64).T @ rhs.astype(np.float64)


# Tolerance (docs/NKI.md): each operand value is rounded to FP8 E4M3 under a
# shared power-of-two scale (3 mantissa bits: a relative error up to 2^-4 per
# value, more for a block's small values among the subnormals); over random
# operands the products' errors largely cancel in the sum: every element
# within 5% of the largest |C| (measured 3.4% at K = 1024; a result 10% off
# everywhere fails).
TOLERANCE = 0.05


def within_tolerance(c, lhsT, rhs):
    ref = reference(lhsT, rhs)
    return bool(np.all(np.abs(c - ref) <= TOLERANCE * np.abs(ref).max()))


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1024, 256)).astype(np.float32)
    b = rng.standard_normal((1024, 1024)).astype(np.float32)
    prof = nki.profile(mx_matmul, a, b, arch="mariana")
    print(prof.summary())
    ok = within_tolerance(prof.outputs, a, b)
    exact = np.array_equal(prof.outputs, nki.reference(mx_matmul, arch="mariana")(a, b))
    err = np.abs(prof.outputs - reference(a, b)).max() / np.abs(reference(a, b)).max()
    print(f"within the MXFP8 tolerance: {ok}; bit for bit the NumPy semantics: {exact}; "
          f"largest error {err:.3%} of the largest output; races: {len(prof.races)}")
    raise SystemExit(0 if ok and exact and not prof.races else 1)
