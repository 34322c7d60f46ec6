"""SPEC §8 / §10: a DMA queue's transfers run in order on the engine of every
SBUF partition they read or write, source and destination of SBUF -> SBUF
alike (issue 40 #12): the functional result, the engines' timing order and
the race check agree."""

import json

import numpy as np
import pytest

import tpbsim

# dma0: a long load into partition 64 (DMA engine 8), then an SBUF -> SBUF
# copy from partition 0 (moved by engine 0) onto the same bytes of partition
# 64 (WAW), then a store of those bytes (engine 8: RAW on the copy), then a
# load into partition 0 (engine 0: WAR on the copy's source).
PROGRAM = """.arch mariana
.engine dma0
dma_copy rows=1 row_bytes=65536 src=hbm(0x0, stride=65536) dst=sbuf(64, 0x0)
dma_copy rows=1 row_bytes=64 src=sbuf(0, 0x0) dst=sbuf(64, 0x0)
dma_copy rows=1 row_bytes=128 src=sbuf(64, 0x0) dst=hbm(0x100000, stride=128)
dma_copy rows=1 row_bytes=64 src=hbm(0x200000, stride=64) dst=sbuf(0, 0x0)
"""


def _engine_slices(path):
    """(engine track, index, start us, end of its bytes us) of each DMA engine
    share in a Perfetto trace (process "tpb dma engines")."""
    events = json.loads(path.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    pids = {e["pid"] for e in events
            if e.get("ph") == "M" and e.get("args", {}).get("name") == "tpb dma engines"}
    return [(e["tid"], e["args"]["index"], e["ts"]) for e in events
            if e.get("ph") == "X" and e.get("pid") in pids]


def _fill(core):
    rng = np.random.default_rng(12)
    hbm = rng.integers(0, 256, 65536, dtype=np.uint8)
    src = rng.integers(0, 256, 64, dtype=np.uint8)
    later = rng.integers(0, 256, 64, dtype=np.uint8)
    core.write("hbm", 0, 0x0, hbm)
    core.write("hbm", 0, 0x200000, later)
    core.write("sbuf", 0, 0x0, src)
    return hbm, src, later


def test_an_sbuf_to_sbuf_copy_runs_in_its_queue_order_on_its_destination_partition(tmp_path):
    with tpbsim.Core("mariana") as core:
        hbm, src, later = _fill(core)
        trace = tmp_path / "t.json"
        r = core.run(PROGRAM, racecheck=True, perfetto=str(trace))
        # The copy wins over the earlier load (WAW); the store reads the copy
        # (RAW); the later load does not reach the copy's source first (WAR).
        expected = hbm.copy()
        expected[:64] = src
        np.testing.assert_array_equal(core.read("sbuf", 64, 0, 65536, "u8"), expected)
        np.testing.assert_array_equal(core.read("hbm", 0, 0x100000, 128, "u8"), expected[:128])
        np.testing.assert_array_equal(core.read("sbuf", 0, 0, 64, "u8"), later)
        # A SPEC-ordered program: no race.
        assert r.races == [], r.races
    # Timing: the copy (engine 0) starts after the load (engine 8) has moved
    # its bytes; the store (engine 8) after the copy began.
    starts = {i: ts for _, i, ts in _engine_slices(trace)}
    assert starts[1] > starts[0] and starts[2] > starts[1] and starts[3] > starts[1], starts


@pytest.mark.parametrize("rows, src_part, dst_part", [(16, 0, 8), (17, 0, 1), (4, 100, 20)])
def test_sbuf_to_sbuf_transfers_across_engines_match_a_sequential_reference(rows, src_part,
                                                                            dst_part):
    """Transfers of one queue, some SBUF -> SBUF across DMA engines (rows whose
    destination partition another engine carries), applied in program order by
    a plain reference, give the same SBUF, and the race check finds nothing."""
    rng = np.random.default_rng(rows)
    width = 4096
    sbuf = rng.integers(0, 256, (128, width), dtype=np.uint8)
    hbm = rng.integers(0, 256, (rows, width), dtype=np.uint8)
    program = [".arch mariana", ".engine dma3"]
    ref = sbuf.copy()

    def copy(sp, soff, dp, doff):
        program.append(f"dma_copy rows={rows} row_bytes=64 src=sbuf({sp}, {soff:#x}) "
                       f"dst=sbuf({dp}, {doff:#x})")
        ref[dp:dp + rows, doff:doff + 64] = ref[sp:sp + rows, soff:soff + 64].copy()

    def load(dp, off):
        program.append(f"dma_copy rows={rows} row_bytes=64 src=hbm({off:#x}, stride={width}) "
                       f"dst=sbuf({dp}, {off:#x})")
        ref[dp:dp + rows, off:off + 64] = hbm[:, off:off + 64]

    for a in (0, 64):  # the copies' source bytes a, destination bytes b (never overlapping)
        b = a + 0x400
        load(dst_part, b)  # then overwritten by the copy (WAW)
        copy(src_part, a, dst_part, b)
        copy(dst_part, b, src_part, a + 0x800)  # reads what the copy wrote (RAW)
        load(src_part, a)  # overwrites the copy's source (WAR)
    with tpbsim.Core("mariana") as core:
        for p in range(128):
            core.write("sbuf", p, 0, sbuf[p])
        core.write("hbm", 0, 0, hbm)
        r = core.run("\n".join(program) + "\n", racecheck=True)
        assert r.races == [], r.races
        np.testing.assert_array_equal(core.read("sbuf", 0, 0, (128, width), "u8"), ref)
