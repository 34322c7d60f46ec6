"""core.write / read of "hbm" (SPEC §10): the array's bytes row-major from a byte
offset, past the capacity an OutOfRange with nothing written; the hbm_pipeline
workload run from Python with its inputs written into HBM and its result read
back from HBM, against its expected output."""

import numpy as np
import pytest

import tpbsim
from conftest import WORKLOADS

HBM_BYTES = 144 * 2**30 // 8  # mariana: trn3 144 GiB / 8 cores (TIMING.md [L])


def test_bytes_go_row_major_from_the_offset(core):
    a = np.arange(3 * 5, dtype=np.uint16).reshape(3, 5)
    core.write("hbm", 0, 0x1001, a)
    raw = core.read("hbm", 0, 0x1000, 2 + a.nbytes, "u8")
    assert raw[0] == 0 and raw[-1] == 0
    np.testing.assert_array_equal(raw[1:-1], np.frombuffer(a.tobytes(), np.uint8))
    np.testing.assert_array_equal(core.read("hbm", 0, 0x1001, (3, 5), "u16"), a)
    # Far from the first write, near the end of the capacity.
    b = np.array([1.5, -2.25], dtype=np.float32)
    core.write("hbm", 0, HBM_BYTES - 8, b)
    np.testing.assert_array_equal(core.read("hbm", 0, HBM_BYTES - 8, 2, "f32"), b)


def test_past_the_capacity_is_out_of_range_and_writes_nothing(core):
    with pytest.raises(tpbsim.OutOfRange, match="past the HBM capacity"):
        core.write("hbm", 0, HBM_BYTES - 4, np.ones(8, np.uint8))
    np.testing.assert_array_equal(core.read("hbm", 0, HBM_BYTES - 4, 4, "u8"), [0, 0, 0, 0])
    with pytest.raises(tpbsim.OutOfRange, match="past the HBM capacity"):
        core.read("hbm", 0, HBM_BYTES, 1, "u8")
    with pytest.raises(tpbsim.OutOfRange, match="partition must be 0"):
        core.write("hbm", 3, 0, np.ones(8, np.uint8))


def test_hbm_pipeline_from_python(core):
    wl = WORKLOADS / "hbm_pipeline"
    core.write("hbm", 0, 0x0, np.load(wl / "activations.npy"))
    core.write("hbm", 0, 0x10000, np.load(wl / "weights_mxfp4.npy"))
    r = core.run(wl / "program.tpb")
    assert r.instructions == 12
    out = core.read("hbm", 0, 0x20000, (64, 128), "bf16")
    np.testing.assert_array_equal(out, np.load(wl / "expected.npy"))
