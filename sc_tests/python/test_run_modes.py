"""core.run(timing_only=..., threads=...): the run modes of SPEC §13 reach the run
API (SessionRequest::timing_only, ::threads). A timing-only run times as the full run
(time, per-engine busy and stall cycles, the retire records) and says its mode in
the stats; its PE computes nothing (PSUM keeps what was there). Any thread count
gives the same bits."""

import json

import numpy as np
import pytest

import tpbsim
from conftest import WORKLOADS


def _pipeline(core):
    wl = WORKLOADS / "hbm_pipeline"
    core.write("hbm", 0, 0x0, np.load(wl / "activations.npy"))
    core.write("hbm", 0, 0x10000, np.load(wl / "weights_mxfp4.npy"))
    return wl


def _timing(r):
    return (r.duration_ps, {e: (v["busy_cycles"], v["stall_cycles"], v["instructions"])
                            for e, v in r.engines.items()},
            [(x.engine, x.index, x.start_ps, x.end_ps) for x in r.retires])


def test_timing_only_times_as_the_full_run_and_computes_nothing(tmp_path):
    with tpbsim.Core("mariana") as full_core:
        wl = _pipeline(full_core)
        full = full_core.run(wl / "program.tpb", stats=tmp_path / "full.json")
        np.testing.assert_array_equal(full_core.read("hbm", 0, 0x20000, (64, 128), "bf16"),
                                      np.load(wl / "expected.npy"))
    with tpbsim.Core("mariana") as core:
        _pipeline(core)
        marker = np.full((64, 128), 7.0, np.float32)
        core.write("psum", 0, 0, marker)
        quick = core.run(wl / "program.tpb", stats=tmp_path / "quick.json", timing_only=True)
        # The matmul's PSUM result is not computed: the marker is still there.
        np.testing.assert_array_equal(core.read("psum", 0, 0, (64, 128), "f32"), marker)
    assert _timing(quick) == _timing(full)
    assert json.loads((tmp_path / "full.json").read_text())["mode"] == "full"
    assert json.loads((tmp_path / "quick.json").read_text())["mode"] == "timing-only"


@pytest.mark.parametrize("threads", [1, 3])
def test_any_thread_count_gives_the_same_bits(threads):
    with tpbsim.Core("mariana") as core:
        wl = _pipeline(core)
        r = core.run(wl / "program.tpb", threads=threads)
        assert r.instructions == 12
        np.testing.assert_array_equal(core.read("hbm", 0, 0x20000, (64, 128), "bf16"),
                                      np.load(wl / "expected.npy"))


def test_a_bad_thread_count_is_refused_before_the_run(core):
    for bad in (0, -1, 1025):
        with pytest.raises(tpbsim.InputError,
                           match=rf"threads {bad} is not a count of host threads \(1..1024\)"):
            core.run(".engine pool\n", threads=bad)
    for bad in (2.0, "2", True):
        with pytest.raises(TypeError, match="threads must be an integer"):
            core.run(".engine pool\n", threads=bad)
    assert core.now_ps == 0
