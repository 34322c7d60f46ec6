"""core.write / read of "hbm" (SPEC §10): the array's bytes row-major from a byte
offset, past the capacity an OutOfRange with nothing written; the hbm_pipeline
workload run from Python with its inputs written into HBM and its result read
back from HBM, against its expected output."""

import os
import pathlib
import resource
import subprocess
import sys

import numpy as np
import pytest

import tpbsim
from conftest import TPBSIM_BIN, WORKLOADS

TPBSIM_BUILD_DIR = os.environ.get("TPBSIM_BUILD_DIR")

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


def _asan_build():
    """An AddressSanitizer build reserves terabytes of shadow memory: no
    address-space limit can hold it."""
    cache = pathlib.Path(TPBSIM_BUILD_DIR) / "CMakeCache.txt" if TPBSIM_BUILD_DIR else None
    return bool(cache and cache.exists() and "TPBSIM_SANITIZE:BOOL=ON" in cache.read_text())


def _limit_address_space():
    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))  # ulimit -v 4G


@pytest.mark.skipif(_asan_build(), reason="AddressSanitizer reserves its shadow up front")
def test_a_run_fits_in_4_gib_of_address_space(tmp_path):
    """SPEC §10 / §15: HBM storage is allocated lazily, so `tpbsim run` works under
    `ulimit -v 4G` (the HBM of mariana alone is 18 GiB), a device of 8 cores too;
    the output is the workload's expected one."""
    wl = WORKLOADS / "hbm_pipeline"
    p = subprocess.run([TPBSIM_BIN, "run", "program.tpb", "--load", "hbm:0x0=activations.npy",
                        "--load", "hbm:0x10000=weights_mxfp4.npy",
                        "--dump", f"hbm:0x20000:64x128:bf16={tmp_path / 'out.npy'}"],
                       cwd=wl, capture_output=True, text=True, preexec_fn=_limit_address_space)
    assert p.returncode == 0, p.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), np.load(wl / "expected.npy"))
    # A device of 8 cores (144 GiB of HBM), every core running the workload.
    p = subprocess.run([TPBSIM_BIN, "run", "--cores", "8", *["program.tpb"] * 8,
                        "--load", "hbm:0x0=activations.npy",
                        "--load", "hbm:0x10000=weights_mxfp4.npy",
                        "--dump", f"hbm:0x20000:64x128:bf16={tmp_path / 'out8.npy'}"],
                       cwd=wl, capture_output=True, text=True, preexec_fn=_limit_address_space)
    assert p.returncode == 0, p.stderr
    assert "96 instructions" in p.stdout
    np.testing.assert_array_equal(np.load(tmp_path / "out8.npy"), np.load(wl / "expected.npy"))
    # Bytes at both ends of the capacity, written and read back, still fit.
    code = ("import numpy as np, tpbsim\n"
            "c = tpbsim.Core('mariana')\n"
            f"c.write('hbm', 0, {HBM_BYTES - 8}, np.arange(8, dtype=np.uint8))\n"
            "c.write('hbm', 0, 0, np.arange(8, dtype=np.uint8))\n"
            f"assert list(c.read('hbm', 0, {HBM_BYTES - 8}, 8, 'u8')) == list(range(8))\n"
            "assert list(c.read('hbm', 0, 2**33, 8, 'u8')) == [0] * 8\n"
            "print('ok')\n")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       preexec_fn=_limit_address_space)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr


def test_a_core_after_a_run_stopped_while_its_dma_moved_runs(make_core):
    """A run stopped (a watchdog, a fault) while DMA engines moved bytes through
    the HBM's bandwidth: the next core of the process starts and runs (it
    failed with "reset while flows are in progress")."""
    text = ".arch mariana\n.engine dma0\n" + "".join(
        f"dma_copy rows=128 row_bytes=16384 src=hbm({i * 0x200000:#x}, stride=16384) "
        f"dst=sbuf(0, 0x0)\n" for i in range(4))
    with pytest.raises(tpbsim.Watchdog):
        make_core("mariana").run(text, max_sim_time="3us")
    core = make_core("mariana")
    r = core.run(text)
    assert r.status == "ok" and r.instructions == 4
