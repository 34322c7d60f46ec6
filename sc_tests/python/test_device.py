"""A device of several cores sharing one HBM (SPEC §15, issue 32 items 1, 2, 4, 8):
`tpbsim run --cores N P0 P1 ...` with core-prefixed memory specs, per-core stats,
retires and trace scopes; tpbsim.Device; the device's HBM bandwidth shared max-min
fairly among the busy cores, each capped by its own 16 DMA engines, checked
against the formula; bad input refused with one line.

Expected numbers come from the profile (TIMING.md: mariana's DMA engine 33 GB/s,
16 engines) and the lowered HBM bandwidth the tests set, never from the model's
own code."""

import json
import subprocess

import numpy as np
import pytest

import tpbsim
from conftest import TPBSIM_BIN, cli

ENGINE_BPS = 33_000 * 10**6  # dma.mbytes_per_s of mariana (TIMING.md [K])
ENGINES = 16
HBM_MBPS = 100_000  # the lowered per-core hbm.mbytes_per_s of these tests
HBM_BPS = HBM_MBPS * 10**6


def load(rows, row_bytes, hbm_offset=0, queue=0):
    """One DMA transfer HBM -> SBUF of `rows` rows from partition 0 (engine e
    carries partitions 8e..8e+7)."""
    return (f".engine dma{queue}\n"
            f"dma_copy rows={rows} row_bytes={row_bytes} "
            f"src=hbm({hbm_offset:#x}, stride={row_bytes}) dst=sbuf(0, 0x0)\n")


def per_core_rate(dev, busy, rows=128):
    """Bytes/s each of `busy` cores moves when all of them load rows x W bytes at
    once: from two sizes, so the fixed latencies cancel."""
    times = []
    for w in (16384, 32768):
        r = dev.run([load(rows, w, hbm_offset=c * 2**24) for c in range(busy)],
                    timing_only=True)
        times.append(r.duration_ps)
    return rows * (32768 - 16384) / ((times[1] - times[0]) * 1e-12)


# ------------------------------------------------------------------- bandwidth

@pytest.mark.parametrize("busy, want", [
    (1, min(ENGINES * ENGINE_BPS, 8 * HBM_BPS)),       # alone: its engines' rate
    (2, min(ENGINES * ENGINE_BPS, 8 * HBM_BPS / 2)),   # two share the device's
    (8, min(ENGINES * ENGINE_BPS, 8 * HBM_BPS / 8)),   # eight get an eighth each
])
def test_busy_cores_share_the_device_bandwidth(busy, want):
    with tpbsim.Device("mariana", cores=8, timing={"hbm.mbytes_per_s": HBM_MBPS}) as dev:
        assert per_core_rate(dev, busy) == pytest.approx(want, rel=1e-4)


def test_a_device_of_one_core_is_todays_core():
    with tpbsim.Core("mariana", timing={"hbm.mbytes_per_s": HBM_MBPS}) as core:
        times = []
        for w in (16384, 32768):
            times.append(core.run(load(128, w), timing_only=True).duration_ps)
    with tpbsim.Device("mariana", cores=1, timing={"hbm.mbytes_per_s": HBM_MBPS}) as dev:
        dev_times = [dev.run([load(128, w)], timing_only=True).duration_ps
                     for w in (16384, 32768)]
    assert dev_times == times
    rate = 128 * 16384 / ((times[1] - times[0]) * 1e-12)
    assert rate == pytest.approx(HBM_BPS, rel=1e-4)  # its own HBM bandwidth binds


def test_max_min_fair_among_cores_not_among_flows():
    """Core 0 loads on 16 engines, core 1 on 2 (16 rows): core 1's demand, 2 x 33
    GB/s, lies below the fair half of the 2 x 100 GB/s device, so it runs at its
    engines' rate and core 0 gets the rest; when core 1 is done core 0 gets the
    whole device bandwidth. (Fair among the 18 flows, core 1 would get 2/18.)"""
    bw = 2 * HBM_BPS
    rows1, w1 = 16, 32768
    rows0, w0 = 128, 32768
    with tpbsim.Device("mariana", cores=2, timing={"hbm.mbytes_per_s": HBM_MBPS}) as dev:
        # The fixed part of a transfer (latency, fill): a lone core's load at a known rate.
        alone = dev.run([load(rows0, w0)], timing_only=True)
        offset = alone.duration_ps * 1e-12 - rows0 * w0 / min(bw, ENGINES * ENGINE_BPS)
        r = dev.run([load(rows0, w0), load(rows1, w1, hbm_offset=2**24)], timing_only=True,
                    keep_retires=True)
    end = {x.engine: x.end_ps - r.start_ps for x in r.retires}
    b_rate = 2 * ENGINE_BPS                  # core 1 at its two engines' cap
    a_rate = bw - b_rate                     # core 0: the rest
    t_b = rows1 * w1 / b_rate
    left = rows0 * w0 - a_rate * t_b
    t_a = t_b + left / min(bw, ENGINES * ENGINE_BPS)
    assert end["core1.dma0"] * 1e-12 == pytest.approx(offset + t_b, rel=1e-4)
    assert end["core0.dma0"] * 1e-12 == pytest.approx(offset + t_a, rel=1e-4)


# ------------------------------------------------------------------ the device

def test_the_hbm_is_the_devices_and_sbuf_each_cores():
    a = (np.arange(16 * 256) % 251).astype(np.uint8).reshape(16, 256)
    with tpbsim.Device("mariana", cores=2) as dev:
        assert dev.cores == 2
        dev.write("hbm", 0, 0x1000, a)
        # core 1 stores what it loads to another place of the one HBM
        prog = (".engine dma0\n"
                "dma_copy rows=16 row_bytes=256 src=hbm(0x1000, stride=256) dst=sbuf(0, 0x0) "
                "update=inc(sem1)\n"
                ".engine dma1\n"
                "dma_copy rows=16 row_bytes=256 src=sbuf(0, 0x0) dst=hbm(0x9000, stride=256) "
                "wait=ge(sem1, 1)\n")
        r = dev.run({1: prog})
        assert r.cores[0] == {} and "dma0" in r.cores[1]
        assert "core1.dma0" in r.engines and "core0.dma0" not in r.engines
        np.testing.assert_array_equal(dev.read("hbm", 0, 0x9000, (16, 256), "u8"), a)
        np.testing.assert_array_equal(dev.core(1).read("sbuf", 0, 0, (16, 256), "u8"), a)
        np.testing.assert_array_equal(dev.core(0).read("sbuf", 0, 0, (16, 256), "u8"),
                                      np.zeros((16, 256), np.uint8))
        assert dev.core(1).semaphores[1] == 1 and dev.core(0).semaphores[1] == 0
        # the device's HBM is 2 x 18 GiB: the last byte of core 1's share
        top = 2 * 144 * 2**30 // 8 - 4
        dev.write("hbm", 0, top, np.arange(4, dtype=np.uint8))
        np.testing.assert_array_equal(dev.read("hbm", 0, top, 4, "u8"), np.arange(4))
        with pytest.raises(tpbsim.OutOfRange):
            dev.read("hbm", 0, top + 4, 1, "u8")
        with pytest.raises(tpbsim.InputError, match="dev.core"):
            dev.read("sbuf", 0, 0, 4, "u8")


def test_the_device_says_its_hbm_and_bandwidth():
    """dev.hbm_bytes / hbm_bytes_per_s are the device's: 3 x the profile's
    per-core 18 GiB (TIMING.md: mariana's hbm.bytes) and 3 x the lowered
    bandwidth; the last byte is writable, the next one is not."""
    with tpbsim.Device("mariana", cores=3, timing={"hbm.mbytes_per_s": HBM_MBPS}) as dev:
        assert dev.core(1).timing["hbm"]["bytes"] == 18 * 2**30   # a core's, in the profile
        assert dev.hbm_bytes == 3 * 18 * 2**30
        assert dev.hbm_bytes_per_s == 3 * HBM_BPS
        dev.write("hbm", 0, dev.hbm_bytes - 1, np.ones(1, np.uint8))
        with pytest.raises(tpbsim.OutOfRange):
            dev.write("hbm", 0, dev.hbm_bytes, np.ones(1, np.uint8))


def test_cli_cores_specs_stats_retires_and_traces(tmp_path):
    a = (np.arange(8 * 128) % 199).astype(np.uint8).reshape(8, 128)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "s.npy", np.full((2, 16), 7, np.uint8))
    (tmp_path / "p0.tpb").write_text(
        ".arch mariana\n.engine dma0\n"
        "dma_copy rows=8 row_bytes=128 src=hbm(0x0, stride=128) dst=sbuf(0, 0x0)\n")
    (tmp_path / "p1.tpb").write_text(
        ".arch mariana\n.engine dma2\n"
        "dma_copy rows=8 row_bytes=128 src=hbm(0x0, stride=128) dst=sbuf(64, 0x100)\n")
    cli("run", "--cores", "3", "p0.tpb", "p1.tpb", "--load", "hbm:0=a.npy",
        "--load", "core2:sbuf:5:0x40=s.npy",
        "--dump", "core1:sbuf:64:0x100:8x128:u8=o1.npy",
        "--dump", "sbuf:0:0:8x128:u8=o0.npy", "--dump", "core2:sbuf:5:0x40:2x16:u8=o2.npy",
        "--stats", "st.json", "--retire", "r.txt", "--vcd", "t.vcd", "--perfetto", "t.json",
        cwd=tmp_path)
    np.testing.assert_array_equal(np.load(tmp_path / "o0.npy"), a)
    np.testing.assert_array_equal(np.load(tmp_path / "o1.npy"), a)
    np.testing.assert_array_equal(np.load(tmp_path / "o2.npy"), np.full((2, 16), 7))
    st = json.loads((tmp_path / "st.json").read_text())
    names = [e["name"] for e in st["engines"]]
    assert "core0.dma0" in names and "core1.dma2" in names and "core1.pe" in names
    assert not any(n.startswith("core2.") for n in names)  # idle
    assert {"name": "hbm", "bytes_read": 2 * a.nbytes, "bytes_written": 0} in st["memories"]
    lines = (tmp_path / "r.txt").read_text().split()
    assert "core0.dma0" in lines and "core1.dma2" in lines
    vcd = (tmp_path / "t.vcd").read_text()
    assert "$scope module core0 $end" in vcd and "$scope module core1 $end" in vcd
    trace = json.loads((tmp_path / "t.json").read_text())
    procs = {e["args"]["name"] for e in trace["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    assert {"core0", "core1", "core0 dma engines", "core1 dma engines"} <= procs


def test_a_one_core_run_is_unchanged_by_cores_1(tmp_path):
    (tmp_path / "p.tpb").write_text(
        ".arch mariana\n.engine dma0\n"
        "dma_copy rows=8 row_bytes=128 src=hbm(0x0, stride=128) dst=sbuf(0, 0x0)\n")
    cli("run", "p.tpb", "--stats", "a.json", "--retire", "a.txt", cwd=tmp_path)
    cli("run", "--cores", "1", "p.tpb", "--stats", "b.json", "--retire", "b.txt", cwd=tmp_path)
    assert (tmp_path / "a.txt").read_text() == (tmp_path / "b.txt").read_text()
    sa = json.loads((tmp_path / "a.json").read_text())
    sb = json.loads((tmp_path / "b.json").read_text())
    sa.pop("wall_seconds"), sb.pop("wall_seconds")
    assert sa == sb


# ------------------------------------------------------------------ bad input

@pytest.mark.parametrize("args, message", [
    (["--cores", "0", "p.tpb"], "--cores 0: a device has 1 to 32 cores"),
    (["--cores", "100000", "p.tpb"], "--cores 100000: a device has 1 to 32 cores"),
    (["--cores", "two", "p.tpb"], "--cores 'two' is not a number of cores"),
    (["--cores", "2", "p.tpb", "p.tpb", "p.tpb"], "3 programs for a device of 2 cores"),
    (["p.tpb", "p.tpb"], "2 programs for a device of 1 core"),
    (["--cores", "2", "p.tpb", "--dump", "core9:sbuf:0:0:1x4:u8=x.npy"],
     "core9 is not a core of this device of 2 cores"),
    (["--cores", "2", "p.tpb", "--dump", "core1:hbm:0:1x4:u8=x.npy"],
     "hbm: takes no core prefix"),
])
def test_bad_device_input_is_one_line_and_runs_nothing(tmp_path, args, message):
    (tmp_path / "p.tpb").write_text(".engine pool\n")
    p = subprocess.run([TPBSIM_BIN, "run", *args], cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 1
    assert message in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert p.stdout == "" and not (tmp_path / "x.npy").exists()


def test_bad_device_arguments_in_python():
    with pytest.raises(tpbsim.InputError, match=r"cores=-1: a device has 1 to 32 cores"):
        tpbsim.Device(cores=-1)
    with pytest.raises(tpbsim.InputError, match=r"cores=100000"):
        tpbsim.Device(cores=100000)
    with pytest.raises(tpbsim.ArgumentTypeError):
        tpbsim.Device(cores="2")
    with tpbsim.Device(cores=2) as dev:
        with pytest.raises(tpbsim.OutOfRange, match=r"core 2 is not a core of this device"):
            dev.core(2)
        with pytest.raises(tpbsim.OutOfRange):
            dev.run({5: ".engine pool\n"})
        with pytest.raises(tpbsim.InputError, match="3 programs for a device of 2 cores"):
            dev.run([".engine pool\n"] * 3)


# --------------------------------------------------------- remote semaphores

HANDOFF0 = (".engine dma0\n"
            "dma_copy rows=16 row_bytes=256 src=hbm(0x0, stride=256) dst=sbuf(0, 0x0) "
            "update=inc(sem1)\n"
            ".engine dma1\n"
            "dma_copy rows=16 row_bytes=256 src=sbuf(0, 0x0) dst=hbm(0x40000, stride=256) "
            "wait=ge(sem1, 1) update=inc(core1:sem5)\n")
HANDOFF1 = (".engine dma3\n"
            "dma_copy rows=16 row_bytes=256 src=hbm(0x40000, stride=256) dst=sbuf(32, 0x100) "
            "wait=ge(sem5, 1)\n")


def test_a_core_hands_data_to_another_through_hbm_and_a_remote_semaphore():
    a = (np.arange(16 * 256) % 241).astype(np.uint8).reshape(16, 256)
    with tpbsim.Device("mariana", cores=2) as dev:
        dev.write("hbm", 0, 0, a)
        r = dev.run([HANDOFF0, HANDOFF1])
        np.testing.assert_array_equal(dev.core(1).read("sbuf", 32, 0x100, (16, 256), "u8"), a)
        assert dev.core(1).semaphores[5] == 1 and dev.core(0).semaphores[5] == 0
        end = {x.engine: x.end_ps for x in r.retires}
        # core 1's load starts after core 0's store has landed and signalled
        assert end["core1.dma3"] > end["core0.dma1"] > end["core0.dma0"]
        # without the signal core 1 waits for ever: a deadlock naming it
        dev.core(1).set_semaphore(5, 0)
        with pytest.raises(tpbsim.Deadlock, match=r"core1: dma3 instruction 0 waits for sem\[5\]"):
            dev.run({1: HANDOFF1})


def test_remote_semaphore_encoding_round_trips_and_is_checked():
    words = tpbsim.assemble(HANDOFF0)
    desc = words[64:128]
    assert desc[20] == 2 and desc[6] == 1 and desc[7] == 5  # update_core = 1 + core 1
    assert "update=inc(core1:sem5)" in tpbsim.disassemble(words)
    assert tpbsim.assemble(tpbsim.disassemble(words)) == words
    with pytest.raises(tpbsim.ProgramError, match="DMA descriptor .dma_copy. only"):
        tpbsim.assemble(".engine pool\ntensor_dequantize fmt=e2m1_to_e5m2 group=8 channels=1 "
                        "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[4, 1, 1]) "
                        "dst=t3d(sbuf(0, 0x100), step=[1, 0, 0], num=[8, 1, 1]) "
                        "update=inc(core1:sem2)\n")
    bad = (".engine dma0\ndma_copy rows=1 row_bytes=4 src=hbm(0x0, stride=4) dst=sbuf(0, 0x0) "
           "update_core=40 update=inc(sem1)\n")
    failures = tpbsim.check(bad, "mariana")
    assert any("dma_valid_update_core" in str(f) for f in failures)


def test_a_remote_semaphore_of_a_missing_core_is_refused_before_running(tmp_path):
    (tmp_path / "h0.tpb").write_text(HANDOFF0)
    p = subprocess.run([TPBSIM_BIN, "run", "h0.tpb"], cwd=tmp_path, capture_output=True,
                       text=True)
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.strip() == (
        "tpbsim run: error: h0.tpb: dma1[0] dma_copy updates a semaphore of core1 "
        "(update=...(core1:sem5)), a core this device of 1 core does not have")
    with tpbsim.Core() as core:
        with pytest.raises(tpbsim.InputError, match="a core this device of 1 core does not have"):
            core.run(HANDOFF0)
        assert core.now_ps == 0  # nothing ran


# ------------------------------------------------------------- logical cores

def test_lnc_2_runs_a_program_on_both_cores_of_a_pair_with_its_core_id(tmp_path):
    prog = (".engine dma0\n"
            "dma_copy rows=4 row_bytes=64 src=hbm(0x0, stride=64) dst=sbuf(0, 0x0)\n")
    with tpbsim.Device("mariana", cores=4) as dev:
        r = dev.run([prog, prog], lnc=2)
        assert {"core0.dma0", "core1.dma0", "core2.dma0", "core3.dma0"} <= set(r.engines)
        assert [dev.core(k).reg("pool", 31) for k in range(4)] == [0, 1, 0, 1]
        assert [dev.core(k).reg("pe", 31) for k in range(4)] == [0, 1, 0, 1]
        with pytest.raises(tpbsim.InputError, match="3 programs for a device of 2 logical"):
            dev.run([prog] * 3, lnc=2)
        with pytest.raises(tpbsim.OutOfRange, match="logical core 2"):
            dev.run({2: prog}, lnc=2)
    (tmp_path / "p.tpb").write_text(prog)
    p = cli("run", "--cores", "2", "--lnc", "2", "p.tpb", "--retire", "r.txt", cwd=tmp_path)
    assert "2 instructions" in p.stdout
    lines = (tmp_path / "r.txt").read_text().split()
    assert "core0.dma0" in lines and "core1.dma0" in lines


def test_bad_lnc_in_python_is_the_cli_rule_in_python_names():
    with tpbsim.Device("mariana", cores=3) as dev:
        with pytest.raises(tpbsim.InputError, match=r"^lnc '4': a logical core is 1 or 2 "
                                                    r"physical cores$"):
            dev.run([".engine pool\n"], lnc=4)
        with pytest.raises(tpbsim.InputError, match=r"^lnc 2 on a device of 3 cores: the cores "
                                                    r"do not pair up \(cores a multiple of 2\)$"):
            dev.run([".engine pool\n"], lnc=2)
        # A float was taken for 2 and failed later with a bare TypeError.
        for bad in (2.0, "2", True, None):
            with pytest.raises(tpbsim.ArgumentTypeError, match="^lnc must be an integer"):
                dev.run([".engine pool\n"], lnc=bad)
        assert dev.run([".engine pool\n"], lnc=np.int64(1)).status == "ok"


@pytest.mark.parametrize("args, message", [
    (["--cores", "3", "--lnc", "2", "p.tpb"], "--lnc 2 on a device of 3 cores: the cores do not"),
    (["--cores", "2", "--lnc", "4", "p.tpb"], "--lnc '4': a logical core is 1 or 2"),
    (["--cores", "2", "--lnc", "2", "p.tpb", "p.tpb"], "2 programs for 1 logical cores"),
])
def test_bad_lnc_is_one_line(tmp_path, args, message):
    (tmp_path / "p.tpb").write_text(".engine pool\n")
    p = subprocess.run([TPBSIM_BIN, "run", *args], cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 1 and message in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


# --------------------------------------------------------- races across cores

def test_the_race_check_covers_accesses_of_different_cores(tmp_path):
    """Core 0 stores to HBM what core 1 loads from the same bytes: ordered by the
    remote semaphore no race; without it a RAW race on the device's HBM that names
    both cores (SPEC §14, §15)."""
    a = (np.arange(16 * 256) % 241).astype(np.uint8).reshape(16, 256)
    unordered0 = HANDOFF0.replace(" update=inc(core1:sem5)", "")
    unordered1 = HANDOFF1.replace(" wait=ge(sem5, 1)", "")
    with tpbsim.Device("mariana", cores=2) as dev:
        dev.write("hbm", 0, 0, a)
        ok = dev.run([HANDOFF0, HANDOFF1], racecheck=True)
        assert ok.races == []
    with tpbsim.Device("mariana", cores=2) as dev:  # fresh semaphores (they carry over)
        bad = dev.run([unordered0, unordered1], racecheck=True)
    assert bad.race_count == 1
    (race,) = bad.races
    # Named in the order they happened (issue 40): core 1's load read the
    # bytes before core 0's store wrote them.
    assert race["memory"] == "hbm" and race["kinds"] == ["WAR"]
    assert race["message"].startswith("no semaphore orders core0.dma1[0] dma_copy")
    assert "after core1.dma3[0] dma_copy" in race["message"]
    assert race["message"].endswith("WAR on hbm bytes 0x40000-0x40fff")
    # the CLI: exit 5, the same race
    (tmp_path / "p0.tpb").write_text(unordered0)
    (tmp_path / "p1.tpb").write_text(unordered1)
    p = subprocess.run([TPBSIM_BIN, "run", "--cores", "2", "p0.tpb", "p1.tpb", "--racecheck"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 5
    assert "no semaphore orders core0.dma1[0] dma_copy (p0.tpb:" in p.stderr


def test_traces_of_a_device_whose_core0_is_idle(tmp_path):
    (tmp_path / "p1.tpb").write_text(
        ".engine dma2\ndma_copy rows=8 row_bytes=128 src=hbm(0x0, stride=128) dst=sbuf(64, 0x0)\n")
    (tmp_path / "idle.tpb").write_text("")
    cli("run", "--cores", "2", "idle.tpb", "p1.tpb", "--vcd", "t.vcd", cwd=tmp_path)
    gtkw = (tmp_path / "t.gtkw").read_text()
    assert "tpb.core1.dma2" in gtkw


def test_program_keys_and_run_flags_are_checked_and_named():
    """Issue 40: {"1": p} raised a raw TypeError, {True: p} ran core 1,
    racecheck="no" checked; a closed Device said "this Core is closed"."""
    prog = ".engine pool\n"
    dev = tpbsim.Device(cores=2)
    with pytest.raises(tpbsim.ArgumentTypeError, match="the key '1' must be a core number"):
        dev.run({"1": prog})
    with pytest.raises(tpbsim.ArgumentTypeError, match="the key True must be a core number"):
        dev.run({True: prog})
    assert dev.run({np.int64(1): prog}).status == "ok"
    for flag in ("racecheck", "timing_only", "keep_retires"):
        for bad in ("no", 1, None):
            with pytest.raises(tpbsim.ArgumentTypeError, match=f"{flag} must be True or False"):
                dev.run([prog], **{flag: bad})
            with pytest.raises(tpbsim.ArgumentTypeError, match=f"{flag} must be True or False"):
                dev.core(0).run(prog, **{flag: bad})
    assert dev.run([prog], racecheck=np.bool_(True)).races == []
    dev.close()
    for call in (lambda: dev.run([prog]), lambda: dev.core(1).read("sbuf", 0, 0, 4, "u8"),
                 lambda: dev.now_ps):
        with pytest.raises(tpbsim.Error, match="this Device is closed"):
            call()
    with pytest.raises(tpbsim.Error, match="this Core is closed"):
        c = tpbsim.Core()
        c.close()
        c.run(prog)
