"""Independent work overlaps (SPEC §17): a kernel whose per-iteration load does
not depend on the previous iteration's compute has its DMA busy while the
Vector engine computes: no barrier per instruction. The tiles of the loop body
are double-buffered by the allocator, so the load of tile i + 1 runs under the
compute of tile i."""

import numpy as np

import tpbsim.nki as nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

TILES, F = 8, 2048


@nki.jit
def cast_tiles(a):
    out = nl.ndarray((128 * TILES, F), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    for i in nl.affine_range(TILES):
        t = nl.ndarray((128, F), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        u = nl.ndarray((128, F), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.tensor_copy(dst=u, src=t)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=u)
    return out


def intervals(result, want):
    return [(r.start_ps, r.end_ps) for r in result.retires if want(r)]


def test_loads_run_under_the_previous_tiles_compute():
    a = np.random.default_rng(0).standard_normal((128 * TILES, F)).astype(np.float32)
    prof = nki.profile(cast_tiles, a)
    assert prof.races == []
    r = prof.result
    loads = intervals(r, lambda x: x.engine.startswith("dma") and int(x.engine[3:]) < 12)
    casts = intervals(r, lambda x: x.engine == "dve" and x.mnemonic == "tensor_copy")
    assert len(loads) == TILES and len(casts) == TILES
    overlapped = sum(1 for i in range(1, TILES)
                     if loads[i][0] < casts[i - 1][1] and casts[i - 1][0] < loads[i][1])
    assert overlapped >= TILES - 2, (loads, casts)
    # The whole run is shorter than the loads and the casts one after another.
    serial = sum(e - s for s, e in loads) + sum(e - s for s, e in casts)
    assert r.duration_ps < 0.8 * serial
    # And the Vector engine never waits for a store: two buffers for u.
    assert prof.stats["nops"] <= TILES
