"""2-D average pooling in NKI (the tutorial's kernel, written here): the
channels on the partitions, a 5-D access pattern (.ap) of the input tile that
groups each pool window's elements last, nl.sum over them (tensor_reduce on
the Vector engine) and a multiply by 1 / pool^2 (tensor_scalar).
"""
import numpy as np

import tpbsim.nki as nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl



@nki.jit
def avgpool2d(in_tensor, pool_size):
    C, H, W = in_tensor.shape
    ho, wo = H // pool_size, W // pool_size
    out = nl.ndarray((C, ho, wo), dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    in_tile = nl.ndarray((C, H, W), dtype=in_tensor.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=in_tile, src=in_tensor)
    windows = in_tile.ap([[H * W, C], [pool_size * W, ho], [pool_size, wo], [W, pool_size],
                          [1, pool_size]])
    sums = nl.sum(windows, axis=[3, 4])
    out_tile = nl.ndarray((C, ho, wo), dtype=in_tensor.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=out_tile, data=sums, op0=nl.multiply,
                       operand0=1.0 / (pool_size * pool_size))
    nisa.dma_copy(dst=out, src=out_tile)
    return out


def reference(x, pool):
    c, h, w = x.shape
    return x.reshape(c, h // pool, pool, w // pool, pool).astype(np.float64).mean(axis=(2, 4))


def inputs(rng, long=False):
    shape = (128, 64, 64) if long else (64, 16, 16)
    return (rng.standard_normal(shape).astype(np.float32), 2)


TOLERANCE = 1e-6     # FP32 sums of 4 and one multiply: relative


if __name__ == "__main__":
    args = inputs(np.random.default_rng(0))
    prof = nki.profile(avgpool2d, *args)
    want = reference(*args)
    assert np.abs(prof.outputs - want).max() <= TOLERANCE * np.abs(want).max()
    print(prof.summary())
