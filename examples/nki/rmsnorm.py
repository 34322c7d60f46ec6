"""RMSNorm over each row of [N, D]: the mean of squares (nisa.activation
square with an add reduction), rsqrt(mean + eps), times the row and a
broadcast weight.
"""
import numpy as np

import tpbsim.nki as nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl



@nki.jit
def rmsnorm(x, weight, eps=1e-6):
    N, D = x.shape
    out = nl.ndarray((N, D), dtype=x.dtype, buffer=nl.shared_hbm)
    w = nl.broadcast_to(nl.load(weight.reshape((1, D))), (128, D))
    for i in nl.affine_range(N // 128):
        rows = slice(i * 128, (i + 1) * 128)
        t = nl.load(x[rows, :])
        sq = nl.ndarray((128, D), dtype=nl.float32, buffer=nl.sbuf)
        ss = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=sq, op=nl.square, data=t, reduce_op=nl.add, reduce_res=ss)
        r = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=r, data=ss, op0=nl.multiply, operand0=1.0 / D, op1=nl.add,
                           operand1=eps)
        nisa.activation(dst=r, op=nl.rsqrt, data=r)
        y = nl.ndarray((128, D), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=y, data=t, op0=nl.multiply, operand0=r)
        nl.store(out[rows, :], nl.multiply(y, w))
    return out


def reference(x, weight, eps=1e-6):
    x = x.astype(np.float64)
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps) * weight


def inputs(rng, long=False):
    return (rng.standard_normal((1024 if long else 256, 768)).astype(np.float32),
            rng.standard_normal(768).astype(np.float32))


TOLERANCE = 1e-5     # FP32: relative to max |out|


if __name__ == "__main__":
    args = inputs(np.random.default_rng(0))
    prof = nki.profile(rmsnorm, *args)
    want = reference(*args)
    assert np.abs(prof.outputs - want).max() <= TOLERANCE * np.abs(want).max()
    print(prof.summary())
