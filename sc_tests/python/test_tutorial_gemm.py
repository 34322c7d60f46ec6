"""scripts/tutorial_gemm.py: the v3 kernel-optimization tutorial's FP32 GEMM
forms (TIMING.md [N]) as generated programs compute lhsT.T @ rhs (checked
against NumPy in float64), race-free under the race check, and report the
engine-active figures their validation points read (docs/TIMING.md)."""

import importlib.util

import numpy as np
import pytest

import tpbsim
from conftest import SOURCE_DIR

_spec = importlib.util.spec_from_file_location("tutorial_gemm",
                                               SOURCE_DIR / "scripts" / "tutorial_gemm.py")
tg = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tg)


@pytest.mark.parametrize("form,m,n,k", [("tiled", 128, 1536, 384), ("tiled", 256, 512, 128),
                                        ("hoisted", 256, 1024, 256)])
def test_the_program_computes_the_product_without_races(form, m, n, k):
    prog = tg.FORMS[form](m, n, k)
    rng = np.random.default_rng(7)
    lhs_t = rng.standard_normal((k, m)).astype(np.float32)
    rhs = rng.standard_normal((k, n)).astype(np.float32)
    with tpbsim.Core(tg.ARCH) as core:
        core.write("hbm", 0, prog.hbm_lhs, lhs_t)
        core.write("hbm", 0, prog.hbm_rhs, rhs)
        r = core.run(prog.text(), racecheck=True)
        out = core.read("hbm", 0, prog.hbm_out, (m, n), "f32")
    assert r.races == []
    want = lhs_t.astype(np.float64).T @ rhs.astype(np.float64)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4 * np.sqrt(k))
    # Every matmul once, each with its LDWEIGHTS, and a nop before each tile's
    # first from the third on (the PSUM bank's copy); a copy and a store per tile.
    tiles = (m // 128) * (n // 512)
    assert r.engines["pe"]["instructions"] == 2 * tiles * (k // 128) + max(0, tiles - 2)
    assert r.engines["dma2"]["instructions"] == tiles
    act = r.engine_active
    assert 0 < act["pe"] <= 1 and 0 < act["dma"] <= 1


def test_loads_alternate_over_the_two_dge_queues():
    text = tg.tiled(128, 1024, 256).text()
    sections, cur = {}, None
    for line in text.splitlines():
        if line.startswith(".engine"):
            cur = line.split()[1]
        elif cur:
            sections.setdefault(cur, []).append(line)
    # The tiled form: the lhsT tile of every matmul on dma0, its rhs tile on dma1.
    assert len(sections["dma0"]) == len(sections["dma1"]) == 2 * 2
    assert all("row_bytes=512" in x for x in sections["dma0"])
    assert all("row_bytes=2048" in x for x in sections["dma1"])
    assert len(sections["dma2"]) == 2


def test_shapes_off_the_tiles_are_refused():
    with pytest.raises(ValueError, match="n = 500"):
        tg.tiled(128, 500, 128)
