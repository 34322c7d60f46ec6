"""The five matrix-multiplication kernels of the NKI tutorial (basic, tiled,
hoisted loads, blocked free dimension, fully optimized), written here in the
same idiom: nisa.nc_matmul on the Tensor engine, PSUM accumulation over
contraction tiles, tensor_copy out of PSUM (FP32 operands: the PE at a
quarter of its BF16 rate, TIMING.md [O]).
"""
import numpy as np

import tpbsim.nki as nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

TK, TM, TN = 128, 128, 512


def _tile(src, k, c, cols):
    t = nl.ndarray((TK, cols), dtype=src.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=src[k * TK:(k + 1) * TK, c:c + cols])
    return t


def _evict(result, ps, m, n):
    sb = nl.ndarray(ps.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=sb, src=ps)
    nisa.dma_copy(dst=result[m * TM:(m + 1) * TM, n * TN:(n + 1) * TN], src=sb)


@nki.jit
def matmul_basic(lhsT, rhs):
    """[128, 64]^T @ [128, 512] in one instruction."""
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    lt, rt = _tile(lhsT, 0, 0, M), _tile(rhs, 0, 0, N)
    ps = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(ps, lt, rt)
    sb = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=sb, src=ps)
    nisa.dma_copy(dst=result, src=sb)
    return result


@nki.jit
def matmul_tiled(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TM):
        for n in nl.affine_range(N // TN):
            ps = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TK):
                nisa.nc_matmul(dst=ps, stationary=_tile(lhsT, k, m * TM, TM),
                               moving=_tile(rhs, k, n * TN, TN))
            _evict(result, ps, m, n)
    return result


@nki.jit
def matmul_hoist_load(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TM):
        lhs_tiles = [_tile(lhsT, k, m * TM, TM) for k in nl.affine_range(K // TK)]
        for n in nl.affine_range(N // TN):
            rhs_tiles = [_tile(rhs, k, n * TN, TN) for k in nl.affine_range(K // TK)]
            ps = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TK):
                nisa.nc_matmul(dst=ps, stationary=lhs_tiles[k], moving=rhs_tiles[k])
            _evict(result, ps, m, n)
    return result


@nki.jit
def matmul_block_free(lhsT, rhs, BM=2, BN=2):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // (TM * BM)):
        lhs = [[_tile(lhsT, k, (m * BM + bm) * TM, TM) for k in nl.affine_range(K // TK)]
               for bm in nl.affine_range(BM)]
        for n in nl.affine_range(N // (TN * BN)):
            rhs_t = [[_tile(rhs, k, (n * BN + bn) * TN, TN) for k in nl.affine_range(K // TK)]
                     for bn in nl.affine_range(BN)]
            for bm in nl.affine_range(BM):
                for bn in nl.affine_range(BN):
                    ps = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
                    for k in nl.affine_range(K // TK):
                        nisa.nc_matmul(dst=ps, stationary=lhs[bm][k], moving=rhs_t[bn][k])
                    _evict(result, ps, m * BM + bm, n * BN + bn)
    return result


@nki.jit
def matmul_optimized(lhsT, rhs, BM=2, BN=2, BK=2):
    """Blocked on all dimensions; result tiles accumulate in SBUF across the
    contraction blocks (tensor_tensor add out of PSUM)."""
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for n in nl.affine_range(N // (TN * BN)):
        acc = [nl.zeros((TM, BN, TN), dtype=nl.float32) for _ in range(M // TM)]
        for kb in nl.sequential_range(K // (TK * BK)):
            rhs_t = nl.ndarray((TK, BK, BN * TN), dtype=rhs.dtype, buffer=nl.sbuf)
            for kt in range(BK):
                k0 = (kb * BK + kt) * TK
                nisa.dma_copy(dst=rhs_t[:, kt, :], src=rhs[k0:k0 + TK, n * BN * TN:(n + 1) * BN * TN])
            for mb in nl.affine_range(M // (TM * BM)):
                lhs_t = nl.ndarray((TK, BK, BM * TM), dtype=lhsT.dtype, buffer=nl.sbuf)
                for kt in range(BK):
                    k0 = (kb * BK + kt) * TK
                    nisa.dma_copy(dst=lhs_t[:, kt, :], src=lhsT[k0:k0 + TK, mb * BM * TM:(mb + 1) * BM * TM])
                for bn in nl.affine_range(BN):
                    for bm in nl.affine_range(BM):
                        ps = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
                        for kt in nl.affine_range(BK):
                            nisa.nc_matmul(dst=ps, stationary=lhs_t[:, kt, bm * TM:(bm + 1) * TM],
                                           moving=rhs_t[:, kt, bn * TN:(bn + 1) * TN])
                        a = acc[mb * BM + bm]
                        nisa.tensor_tensor(dst=a[:, bn, :], data1=a[:, bn, :], data2=ps, op=nl.add)
        for m in nl.affine_range(M // TM):
            nisa.dma_copy(dst=result[m * TM:(m + 1) * TM, n * BN * TN:(n + 1) * BN * TN],
                          src=acc[m].reshape((TM, BN * TN)))
    return result


KERNELS = (matmul_basic, matmul_tiled, matmul_hoist_load, matmul_block_free, matmul_optimized)


def reference(lhsT, rhs):
    return lhsT.astype(np.float64).T @ rhs.astype(np.float64)


def inputs(rng, kernel, long=False):
    if kernel is matmul_basic:
        return (rng.standard_normal((128, 64)).astype(np.float32),
                rng.standard_normal((128, 512)).astype(np.float32))
    f = 2 if long else 1
    return (rng.standard_normal((512 * f, 256 * f)).astype(np.float32),
            rng.standard_normal((512 * f, 1024 * f)).astype(np.float32))


# FP32 products summed k ascending in FP32 (and across contraction blocks):
# within K x 2^-23 of |lhsT|^T @ |rhs| (a sum's rounding bound).
TOLERANCE = "K * 2^-23 * (|lhsT|^T @ |rhs|)"


if __name__ == "__main__":
    import sys
    arch = sys.argv[1] if len(sys.argv) > 1 else "cayman"
    rng = np.random.default_rng(0)
    for k in KERNELS:
        lhsT, rhs = inputs(rng, k)
        prof = nki.profile(k, lhsT, rhs, arch=arch)
        bound = lhsT.shape[0] * 2.0**-23 * (np.abs(lhsT).T.astype(np.float64) @ np.abs(rhs))
        assert np.all(np.abs(prof.outputs - reference(lhsT, rhs)) <= bound)
        print(k.__name__, prof.summary(), sep="\n")
