"""Data movement in NKI: a [M, N] float32 tensor copied to a bfloat16 one tile
by tile (128 partitions x 512), the cast on the Vector engine (nisa.tensor_copy)
between a load and a store (nisa.dma_copy). The tiles made in the loop body
are double-buffered by the front end, so the load of tile i + 1 runs while the
Vector engine casts tile i and the store of tile i - 1 drains (docs/NKI.md).

    build/tpbsim-python examples/nki/tiled_copy.py
"""
import numpy as np

import tpbsim.nki as nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

TILE_P, TILE_F = nl.tile_size.pmax, 512


@nki.jit
def tiled_cast(src):
    """src [M, N] (M a multiple of 128, N of 512) -> the same values in bfloat16."""
    M, N = src.shape
    out = nl.ndarray((M, N), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    for i in nl.affine_range(M // TILE_P):
        for j in nl.affine_range(N // TILE_F):
            rows, cols = slice(i * TILE_P, (i + 1) * TILE_P), slice(j * TILE_F, (j + 1) * TILE_F)
            tile = nl.ndarray((TILE_P, TILE_F), dtype=src.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=tile, src=src[rows, cols])
            half = nl.ndarray((TILE_P, TILE_F), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.tensor_copy(dst=half, src=tile)
            nisa.dma_copy(dst=out[rows, cols], src=half)
    return out


def reference(src):
    """float32 -> bfloat16 bits, round to nearest even (NaN kept quiet), by the
    format's definition: the top 16 bits after adding 0x7FFF + the kept LSB."""
    bits = src.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(src)
    return np.where(nan, ((bits >> 16) | 0x40).astype(np.uint16), rounded)


if __name__ == "__main__":
    x = np.random.default_rng(1).standard_normal((512, 2048)).astype(np.float32)
    prof = nki.profile(tiled_cast, nki.bits(x.view(np.uint32), nl.float32), arch="mariana")
    print(prof.summary())
    ok = np.array_equal(prof.outputs, reference(x))
    print(f"bit for bit BF16 RNE: {ok}; races: {len(prof.races)}")
    raise SystemExit(0 if ok and not prof.races else 1)
