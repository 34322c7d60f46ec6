"""The 2-D transpose of the NKI tutorial, within each partition: every row of
in_tensor is a row-major (F1, F2) matrix, transposed to (F2, F1). One strided
nisa.tensor_copy does the whole reorder (the tutorial copies one element per
instruction): its source walks the tile as [P, F2, F1] (a .permute view).

    build/tpbsim-python examples/nki/transpose2d.py
"""
import numpy as np

import tpbsim.nki as nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


@nki.jit
def transpose2d(in_tensor, shape2D):
    """in_tensor [P, F1 * F2] -> out [P, F2 * F1], each row's (F1, F2) transposed."""
    P, F = in_tensor.shape
    f1, f2 = shape2D
    assert f1 * f2 == F and P <= nl.tile_size.pmax
    out = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    in_tile = nl.ndarray((P, f1, f2), dtype=in_tensor.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=in_tile, src=in_tensor.reshape((P, f1, f2)))
    out_tile = nl.ndarray((P, f2, f1), dtype=in_tensor.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=out_tile, src=in_tile.permute((0, 2, 1)))
    nisa.dma_copy(dst=out, src=out_tile.reshape((P, F)))
    return out


def reference(a, shape2D):
    p = a.shape[0]
    return np.transpose(a.reshape(p, *shape2D), (0, 2, 1)).reshape(p, -1)


if __name__ == "__main__":
    a = np.arange(128 * 48 * 64, dtype=np.float32).reshape(128, 48 * 64)
    prof = nki.profile(transpose2d, a, (48, 64))
    print(prof.summary())
    ok = np.array_equal(prof.outputs, reference(a, (48, 64)))
    print(f"equal to NumPy's transpose: {ok}; races: {len(prof.races)}")
    raise SystemExit(0 if ok and not prof.races else 1)
