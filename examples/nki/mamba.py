"""A fused Mamba (v1) selective-scan layer in NKI, in the idiom of the
tutorial: per batch and channel tile, per state: exp(delta * A) on the
Scalar engine (nisa.activation with a per-partition scale), delta * u * B,
the associative scan (nisa.tensor_tensor_scan), times C, accumulated over
states (nl.zeros into SBUF: a memset by DMA, docs/NKI.md).
"""
import numpy as np

import tpbsim.nki as nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl



@nki.jit
def mamba(delta, u, A, B, C):
    """delta, u: [batch, channels, seq]; A: [channels, state]; B, C: [batch,
    state, seq]. Returns [batch, channels, seq]."""
    batch, channels, seq = delta.shape
    _, state = A.shape
    out = nl.ndarray((batch, channels, seq), dtype=delta.dtype, buffer=nl.shared_hbm)
    P = nl.tile_size.pmax
    for b in nl.affine_range(batch):
        for ct in nl.affine_range(channels // P):
            ch = slice(ct * P, (ct + 1) * P)
            acc = nl.zeros((P, seq), dtype=delta.dtype)
            d_i = nl.load(delta[b, ch, :])
            u_i = nl.load(u[b, ch, :])
            du = nl.ndarray((P, seq), dtype=delta.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=du, data1=d_i, data2=u_i, op=nl.multiply)
            for s in nl.affine_range(state):
                a_i = nl.load(A[ch, s:s + 1])
                dA = nl.ndarray((P, seq), dtype=delta.dtype, buffer=nl.sbuf)
                nisa.activation(dst=dA, op=nl.exp, data=d_i, scale=a_i)
                b_i = nl.broadcast_to(nl.load(B[b, s:s + 1, :]), (P, seq))
                dBu = nl.ndarray((P, seq), dtype=delta.dtype, buffer=nl.sbuf)
                nisa.tensor_tensor(dst=dBu, data1=du, data2=b_i, op=nl.multiply)
                scan = nl.ndarray((P, seq), dtype=delta.dtype, buffer=nl.sbuf)
                nisa.tensor_tensor_scan(dst=scan, data0=dA, data1=dBu, initial=0.0,
                                        op0=nl.multiply, op1=nl.add)
                c_i = nl.broadcast_to(nl.load(C[b, s:s + 1, :]), (P, seq))
                sc = nl.ndarray((P, seq), dtype=delta.dtype, buffer=nl.sbuf)
                nisa.tensor_tensor(dst=sc, data1=scan, data2=c_i, op=nl.multiply)
                nisa.tensor_tensor(dst=acc, data1=acc, data2=sc, op=nl.add)
            nisa.dma_copy(dst=out[b, ch, :], src=acc)
    return out


def reference(delta, u, A, B, C):
    delta, u, A, B, C = (x.astype(np.float64) for x in (delta, u, A, B, C))
    out = np.zeros_like(delta)
    for s in range(A.shape[1]):
        dA = np.exp(delta * A[None, :, s:s + 1])
        dBu = delta * u * B[:, None, s, :]
        h = np.zeros(delta.shape[:2])
        scan = np.empty_like(delta)
        for t in range(delta.shape[2]):
            h = dA[..., t] * h + dBu[..., t]
            scan[..., t] = h
        out += scan * C[:, None, s, :]
    return out


def inputs(rng, long=False):
    b, c, s, n = 1, 128, 512 if long else 64, 4
    return (rng.uniform(0.0, 0.2, (b, c, s)).astype(np.float32),
            rng.standard_normal((b, c, s)).astype(np.float32),
            -rng.uniform(0.5, 1.5, (c, n)).astype(np.float32),
            rng.standard_normal((b, n, s)).astype(np.float32),
            rng.standard_normal((b, n, s)).astype(np.float32))


TOLERANCE = 1e-4     # FP32 throughout (exp once rounded): relative to max |out|


if __name__ == "__main__":
    args = inputs(np.random.default_rng(0))
    prof = nki.profile(mamba, *args)
    want = reference(*args)
    assert np.abs(prof.outputs - want).max() <= TOLERANCE * np.abs(want).max()
    print(prof.summary())
