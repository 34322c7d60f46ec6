"""The v3 kernel-optimization tutorial's FP32 GEMM (TIMING.md [N]) as NKI
kernels, in the two forms whose engine-active figures the tutorial
publishes: lhsT [K, M] x rhs [K, N] on one NeuronCore-v3 (cayman), every
nc_matmul a 128 x 128 stationary lhsT tile and a 128 x 512 moving rhs tile
in FP32, accumulated over K in one PSUM bank, copied out and stored.

  tiled    a load of both tiles before every nc_matmul (k inside m, n)
  hoisted  the K / 128 lhsT tiles of an M-tile loaded once per m (kept in a
           list), the rhs tiles of an N-tile once per n

The tutorial's shape is M = 4096, K = N = 8192; `slice` here is M = 256
(two M-tiles). docs/NKI.md compares the lowered programs with
scripts/tutorial_gemm.py's hand-made ones where that script exists.
"""
import numpy as np

import tpbsim.nki as nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

TM, TK, TN = 128, 128, 512


def _out_tile(result, ps, m, n):
    res = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=ps)
    nisa.dma_copy(dst=result[m * TM:(m + 1) * TM, n * TN:(n + 1) * TN], src=res)


@nki.jit
def gemm_tiled(lhsT, rhs, depth=4):
    """The tiled form; the k loop's tiles rotate through `depth` buffers each
    (kept in lists: the front end's own rule double-buffers, depth 2; [N]'s
    DMA 99.93% says the tutorial's loads never waited for a buffer, which
    takes 4 at v3's semaphore-to-start latency: docs/KERNELS.md)."""
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    lbufs = [nl.ndarray((TK, TM), dtype=nl.float32, buffer=nl.sbuf) for _ in range(depth)]
    rbufs = [nl.ndarray((TK, TN), dtype=nl.float32, buffer=nl.sbuf) for _ in range(depth)]
    i = 0
    for m in nl.affine_range(M // TM):
        for n in nl.affine_range(N // TN):
            ps = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TK):
                lt, rt = lbufs[i % depth], rbufs[i % depth]
                i += 1
                nisa.dma_copy(dst=lt, src=lhsT[k * TK:(k + 1) * TK, m * TM:(m + 1) * TM])
                nisa.dma_copy(dst=rt, src=rhs[k * TK:(k + 1) * TK, n * TN:(n + 1) * TN])
                nisa.nc_matmul(dst=ps, stationary=lt, moving=rt)
            _out_tile(result, ps, m, n)
    return result


@nki.jit
def gemm_hoisted(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TM):
        lhs_tiles = []
        for k in nl.affine_range(K // TK):
            lt = nl.ndarray((TK, TM), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=lt, src=lhsT[k * TK:(k + 1) * TK, m * TM:(m + 1) * TM])
            lhs_tiles.append(lt)
        for n in nl.affine_range(N // TN):
            rhs_tiles = []
            for k in nl.affine_range(K // TK):
                rt = nl.ndarray((TK, TN), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=rt, src=rhs[k * TK:(k + 1) * TK, n * TN:(n + 1) * TN])
                rhs_tiles.append(rt)
            ps = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TK):
                nisa.nc_matmul(dst=ps, stationary=lhs_tiles[k], moving=rhs_tiles[k])
            _out_tile(result, ps, m, n)
    return result


FORMS = {"tiled": gemm_tiled, "hoisted": gemm_hoisted}


def reference(lhsT, rhs):
    return (lhsT.T.astype(np.float64) @ rhs).astype(np.float32)


if __name__ == "__main__":
    import sys
    form = sys.argv[1] if len(sys.argv) > 1 else "tiled"
    m, k, n = (int(x) for x in sys.argv[2:5]) if len(sys.argv) > 4 else (256, 8192, 8192)
    rng = np.random.default_rng(0)
    lhsT = rng.standard_normal((k, m)).astype(np.float32)
    rhs = rng.standard_normal((k, n)).astype(np.float32)
    prof = nki.profile(FORMS[form], lhsT, rhs, arch="cayman", timing_only=True)
    print(prof.summary())
