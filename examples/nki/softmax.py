"""Softmax over each row of [N, D] (rows on the partitions): the row max
(nl.max: tensor_reduce), exp(x - max) with the row sum reduced in the same
instruction (nisa.activation with reduce_res), the reciprocal of the sum and a
per-partition multiply.
"""
import numpy as np

import tpbsim.nki as nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl



@nki.jit
def softmax(x):
    N, D = x.shape
    out = nl.ndarray((N, D), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(N // 128):
        rows = slice(i * 128, (i + 1) * 128)
        t = nl.load(x[rows, :])
        mx = nl.max(t, axis=1, keepdims=True)
        neg = nl.negative(mx)
        e = nl.ndarray((128, D), dtype=nl.float32, buffer=nl.sbuf)
        s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=e, op=nl.exp, data=t, bias=neg, reduce_op=nl.add, reduce_res=s)
        r = nl.reciprocal(s)
        y = nl.ndarray((128, D), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=y, data=e, op0=nl.multiply, operand0=r)
        nl.store(out[rows, :], y)
    return out


def reference(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def inputs(rng, long=False):
    return (rng.standard_normal((1024 if long else 256, 512)).astype(np.float32) * 3,)


TOLERANCE = 1e-5     # FP32 exp and a 512-term sum: relative to each row's max


if __name__ == "__main__":
    args = inputs(np.random.default_rng(0))
    prof = nki.profile(softmax, *args)
    want = reference(*args)
    assert np.abs(prof.outputs - want).max() <= TOLERANCE * np.abs(want).max()
    print(prof.summary())
