"""Engine active as the Neuron profiler reports it (TIMING.md [N]): the stats'
``engine_active``, ``Result.engine_active`` and the summary; the DMA's figure is
the union of the DMA engines' busy time, worked out here from the profile's
numbers (docs/CONVENTIONS.md "DMA")."""

import json

import numpy as np
import pytest

import tpbsim
from conftest import cli

C_NS = 115  # dma.engine_cost_ns


def test_one_engine_one_transfer(make_core):
    # TIMING.md [J]: A[4, 4096] BF16 is one engine's: its cost C, then 32 KiB
    # at 23 B/ns (v3), the HBM's 362.5 GB/s being no limit for one engine.
    core = make_core("cayman")
    core.write("hbm", 0, 0, np.zeros((4, 4096), np.uint16))
    r = core.run(".arch cayman\n.engine dma0\n"
                 "dma_copy rows=4 row_bytes=8192 src=hbm(0x0, stride=8192) dst=sbuf(0, 0x0)\n")
    act = r.engine_active
    assert set(act) == {"pool", "dve", "pe", "sfu", "dma"}
    assert act["pe"] == act["dve"] == act["pool"] == act["sfu"] == 0
    busy_ns = act["dma"] * r.duration_ps / 1000
    assert busy_ns == pytest.approx(C_NS + 32768 / 23, abs=1.0)
    assert r.stats["engine_active"] == act


def test_engines_busy_together_count_once(make_core):
    # A[128, 128] BF16: all 16 engines, 2 KiB each, together: C, then 32 KiB
    # through the v3 core's HBM share (362.5 GB/s < 16 x 23), not 16 x that.
    core = make_core("cayman")
    core.write("hbm", 0, 0, np.zeros((128, 128), np.uint16))
    r = core.run(".arch cayman\n.engine dma0\n"
                 "dma_copy rows=128 row_bytes=256 src=hbm(0x0, stride=256) dst=sbuf(0, 0x0)\n")
    busy_ns = r.engine_active["dma"] * r.duration_ps / 1000
    assert busy_ns == pytest.approx(C_NS + 32768 / 362.5, abs=1.0)
    per_engine = [e for n, e in r.engines.items() if n.startswith("dma_engine")]
    assert len(per_engine) == 16


def test_compute_engines_are_their_busy_fraction(core):
    r = core.run(".arch mariana\n.engine dve\n" + "".join(
        f"tensor_copy channels=128 in_dtype=fp32 out_dtype=fp32 "
        f"src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[512, 1, 1]) "
        f"dst=t3d(sbuf(0, {0x1000 * (i + 1):#x}), step=[1, 0, 0], num=[512, 1, 1])\n"
        for i in range(4)))
    act = r.engine_active
    assert "dma" not in act  # no DMA queue ran
    assert act["dve"] == pytest.approx(r.busy_fraction("dve"), abs=1e-6)
    assert 0.99 < act["dve"] <= 1.0  # in flight from its first issue to the end
    assert "engine active: dve" in r.summary()


def test_the_stats_file_and_a_device(tmp_path):
    prog = tmp_path / "p.tpb"
    prog.write_text(".arch mariana\n.engine dma3\n"
                    "dma_copy rows=128 row_bytes=4096 src=hbm(0x0, stride=4096) dst=sbuf(0, 0x0)\n")
    cli("run", prog, "--stats", tmp_path / "s.json", "-q")
    s = json.loads((tmp_path / "s.json").read_text())
    assert 0 < s["engine_active"]["dma"] < 1 and s["engine_active"]["pe"] == 0
    with tpbsim.Device("mariana", cores=2) as dev:
        r = dev.run([prog.read_text(), prog.read_text()])
        act = r.engine_active
        assert {"core0.dma", "core1.dma", "core0.pe", "core1.dve"} <= set(act)
        assert all(0 < act[f"core{c}.dma"] < 1 for c in (0, 1))


def test_a_stop_cuts_the_dma_figure(tmp_path):
    # 4 transfers of 16 KiB per engine on one queue; a stop in the second: the
    # DMA was active from the first's start to the stop (the --stats file).
    prog = tmp_path / "p.tpb"
    prog.write_text(".arch mariana\n.engine dma0\n" + "".join(
        f"dma_copy rows=128 row_bytes=16384 src=hbm({i * 0x200000:#x}, stride=16384) "
        f"dst=sbuf(0, 0x0)\n" for i in range(4)))
    p = cli("run", prog, "--max-sim-time", "3us", "--stats", tmp_path / "s.json", "-q",
            check=False)
    assert p.returncode == 4
    s = json.loads((tmp_path / "s.json").read_text())
    busy_ps = s["engine_active"]["dma"] * s["simulated_ps"]
    # Started 1.3 us (the semaphore-to-start latency) after the descriptor's
    # fetch (the queue's 4 cycles + one 64-byte beat at 1400 MHz), busy since.
    start_ps = 5 * 1e6 / 1400 + 1_300_000
    assert s["simulated_ps"] == 3_000_000
    assert busy_ps == pytest.approx(3_000_000 - start_ps, abs=2)


def test_the_nki_profile():
    # tpbsim.nki.profile carries the same figures (docs/NKI.md): a kernel of
    # loads, Vector casts and stores. The Vector engine's figure is the union
    # of its instructions' issue-to-retire spans over the kernel, worked out
    # here from the retires; the DMA's lies between the busiest DMA engine's
    # busy share and the sum of all of theirs (any engine moving data).
    import tpbsim.nki as nki
    from test_nki_overlap import F, TILES, cast_tiles

    a = np.random.default_rng(0).standard_normal((128 * TILES, F)).astype(np.float32)
    prof = nki.profile(cast_tiles, a)
    r = prof.result
    act = prof.engine_active
    assert act == r.engine_active and prof.report()["engine_active"] == act
    assert act["pe"] == 0 and act["pool"] == 0
    dve = [x for x in r.retires if x.engine == "dve"]  # the casts and the nops
    assert sum(1 for x in dve if x.mnemonic == "tensor_copy") == TILES
    spans = sorted((x.start_ps, x.end_ps) for x in dve)
    covered, end = 0, 0
    for s, e in spans:
        covered += max(0, e - max(s, end))
        end = max(end, e)
    assert act["dve"] == pytest.approx(covered / r.duration_ps, abs=0.01)
    dma = [e["busy_pct"] / 100 for n, e in prof.engines.items() if n.startswith("dma_engine")]
    assert max(dma) - 1e-3 <= act["dma"] <= min(1.0, sum(dma)) + 1e-3
    assert 0.5 < act["dma"] < 1.0
    assert f"dma {100 * act['dma']:.1f}%" in prof.summary()
