"""Element-wise addition in NKI, tile by tile (the tensor-addition tutorial's
kernel, written here): loads, nisa.tensor_tensor(op=nl.add) on the Vector
engine, stores.
"""
import numpy as np

import tpbsim.nki as nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl



@nki.jit
def tensor_add(a, b):
    M, N = a.shape
    assert a.shape == b.shape and M % 128 == 0 and N % 512 == 0
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        for n in nl.affine_range(N // 512):
            rows, cols = slice(m * 128, (m + 1) * 128), slice(n * 512, (n + 1) * 512)
            at = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
            bt = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=at, src=a[rows, cols])
            nisa.dma_copy(dst=bt, src=b[rows, cols])
            ct = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=ct, data1=at, data2=bt, op=nl.add)
            nisa.dma_copy(dst=out[rows, cols], src=ct)
    return out


def reference(a, b):
    return a + b


def inputs(rng, long=False):
    shape = (1024, 2048) if long else (256, 1024)
    return (rng.standard_normal(shape).astype(np.float32),
            rng.standard_normal(shape).astype(np.float32))


TOLERANCE = 0.0      # one FP32 add per element: exact against NumPy's FP32 add


if __name__ == "__main__":
    args = inputs(np.random.default_rng(0))
    prof = nki.profile(tensor_add, *args)
    want = reference(*args)
    assert np.abs(prof.outputs - want).max() <= TOLERANCE * np.abs(want).max()
    print(prof.summary())
