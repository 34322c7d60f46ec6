"""Layer normalisation over the rows of [N, D] (rows on the partitions):
bn_stats / bn_aggr for the mean and variance, (x - mean) * rsqrt(var + eps)
by tensor_scalar, then * gamma + beta (gamma, beta broadcast to every
partition).
"""
import numpy as np

import tpbsim.nki as nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl



@nki.jit
def layernorm(x, gamma, beta, eps=1e-5):
    N, D = x.shape
    assert D <= nl.tile_size.bn_stats_fmax
    out = nl.ndarray((N, D), dtype=x.dtype, buffer=nl.shared_hbm)
    g = nl.broadcast_to(nl.load(gamma.reshape((1, D))), (128, D))
    b = nl.broadcast_to(nl.load(beta.reshape((1, D))), (128, D))
    for i in nl.affine_range(N // 128):
        rows = slice(i * 128, (i + 1) * 128)
        t = nl.load(x[rows, :])
        stats = nl.ndarray((128, 6), dtype=nl.float32, buffer=nl.sbuf)
        nisa.bn_stats(dst=stats, data=t)
        mv = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.sbuf)
        nisa.bn_aggr(dst=mv, data=stats)
        rstd = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=rstd, data=mv[:, 1:2], op0=nl.add, operand0=eps)
        nisa.activation(dst=rstd, op=nl.rsqrt, data=rstd)
        norm = nl.ndarray((128, D), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=norm, data=t, op0=nl.subtract, operand0=mv[:, 0:1],
                           op1=nl.multiply, operand1=rstd)
        y = nl.multiply(norm, g)
        nl.store(out[rows, :], nl.add(y, b))
    return out


def reference(x, gamma, beta, eps=1e-5):
    x = x.astype(np.float64)
    mu = x.mean(axis=1, keepdims=True)
    var = x.var(axis=1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gamma + beta


def inputs(rng, long=False):
    return (rng.standard_normal((1024 if long else 256, 384)).astype(np.float32),
            rng.standard_normal(384).astype(np.float32),
            rng.standard_normal(384).astype(np.float32))


TOLERANCE = 1e-4     # FP32 statistics of 384 values: relative to max |out|


if __name__ == "__main__":
    args = inputs(np.random.default_rng(0))
    prof = nki.profile(layernorm, *args)
    want = reference(*args)
    assert np.abs(prof.outputs - want).max() <= TOLERANCE * np.abs(want).max()
    print(prof.summary())
