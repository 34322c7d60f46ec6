"""State carries over between runs of one Core (SBUF, PSUM, tiles, PE weights,
semaphores, simulated time); cores are made, run and dropped many times in
one process; one Core at a time."""

import gc
import json

import numpy as np
import pytest

import tpbsim
import reference as ref
from conftest import WORKLOADS

DEQUANT = ("tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 "
           "src=t3d(sbuf(0, {src:#x}), step=[1, 0, 0], num=[4, 1, 1]) "
           "dst=t3d(sbuf(0, {dst:#x}), step=[1, 0, 0], num=[8, 1, 1]){extra}\n")


def e2m1_to_e5m2(word_bytes):
    """The FP4 E2M1 -> FP8 E5M2 of group 0 (seed 000 §4.2), nibble by nibble,
    low nibble first, from the format definitions (independent of tpbsim)."""
    fp4 = [0, 0.5, 1, 1.5, 2, 3, 4, 6]
    out = []
    for b in word_bytes:
        for nib in (b & 0xF, b >> 4):
            v = fp4[nib & 7]
            if v == 0:
                code = 0
            else:
                e = int(np.floor(np.log2(v)))
                code = ((e + 15) << 2) | int((v / 2.0**e - 1) * 4)
            out.append(code | (0x80 if nib & 8 else 0))
    return np.array(out, dtype=np.uint8)


def test_sbuf_output_of_one_run_is_the_input_of_the_next(core):
    src = np.array([0x21, 0x43, 0x65, 0x87, 0xA9, 0xCB, 0xED, 0x0F] * 2, dtype=np.uint8)
    core.write("sbuf", 0, 0, src)
    core.run(".engine pool\n" + DEQUANT.format(src=0, dst=0x100, extra=""))
    first = core.read("sbuf", 0, 0x100, 32, "u8")
    np.testing.assert_array_equal(first, e2m1_to_e5m2(src))
    # Run 2 reads run 1's output (as FP4 words: its low 16 bytes) without a write.
    core.run(".engine pool\n" + DEQUANT.format(src=0x100, dst=0x200, extra=""))
    np.testing.assert_array_equal(core.read("sbuf", 0, 0x200, 32, "u8"),
                                  e2m1_to_e5m2(first[:16]))


def test_semaphores_and_time_carry_over(core):
    r1 = core.run(".engine pool\n" + DEQUANT.format(src=0, dst=0x100, extra=" update=inc(sem9)"))
    assert core.semaphores[9] == 1
    t1 = core.now_ps
    assert t1 == r1.simulated_ps > 0
    # Waits on the semaphore run 1 set: a deadlock on a fresh core, fine here.
    r2 = core.run(".engine dve\n.engine pool\n" +
                  DEQUANT.format(src=0, dst=0x300, extra=" wait=ge(sem9, 1) update=inc(sem9)"))
    assert r2.start_ps == t1 and r2.simulated_ps > t1 and core.semaphores[9] == 2
    assert all(x.start_ps >= t1 for x in r2.retires)
    assert r2.engines["pool"]["instructions"] == 1  # stats are the run's own


def mx_operand(core, data_off, scale_off, k, cols):
    """The FP32 values [4K][cols] of an MXFP8 E4M3 tensor in the core's SBUF
    (x4 words from partition 0, scales at the SPEC §4 places), by reference.py."""
    words = core.read("sbuf", 0, data_off, (k, cols), "u32")
    codes = np.stack([(words >> (8 * lane)) & 0xFF for lane in range(4)], axis=-1)
    scales = np.array([core.read("sbuf", 32 * (b // 4) + b % 4, scale_off, cols, "u8")
                       for b in range(k // 8)])
    return ref.mx_values(codes.reshape(k, 4 * cols), scales, "e4m3")


def test_psum_accumulates_and_pe_weights_stay_loaded_across_runs(core):
    """ldweights_mx in run 1; matmul_mx in runs 2 and 3 without loading weights,
    the third accumulating onto the second's PSUM (k ascending from the value
    PSUM holds, SPEC §5)."""
    pipeline = (WORKLOADS / "pipeline" / "program.tpb").read_text()
    core.write("sbuf", 0, 0, np.load(WORKLOADS / "pipeline" / "activations.npy"))
    core.write("sbuf", 0, 0x1000, np.load(WORKLOADS / "pipeline" / "weights_mxfp4.npy"))
    head, matmul = pipeline.split("# moving MXFP8 activations")
    core.run(head)  # dequant, both quantizes, ldweights_mx: no matmul
    assert not core.read("psum", 0, 0, (64, 128), "f32").any()
    # The PE holds the weights now; overwrite their SBUF copy to show it.
    w = mx_operand(core, 0x4000, 0x4800, 64, 64)
    x = mx_operand(core, 0x3000, 0x3800, 64, 128)
    core.write("sbuf", 0, 0x4000, np.zeros((64, 256), np.uint8))
    matmul = "\n".join(matmul.splitlines()[1:])
    core.run(".engine pe\n" + matmul)
    once = core.read("psum", 0, 0, (64, 128), "f32")
    np.testing.assert_array_equal(once, np.load(WORKLOADS / "pipeline" / "expected.npy"))
    np.testing.assert_array_equal(once, ref.matmul_fp32(w, x))
    acc = matmul.replace("rows=64", "rows=64 acc=1", 1)
    assert acc != matmul
    core.run(".engine pe\n" + acc)
    want = once.copy()
    for k in range(w.shape[0]):
        want = want + w[k][:, None] * x[k][None, :]
    np.testing.assert_array_equal(core.read("psum", 0, 0, (64, 128), "f32"), want)
    assert not np.array_equal(want, once)


def test_tiles_carry_over(core):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    core.write_tile(4, a)
    core.run(".engine pool\n" + DEQUANT.format(src=0, dst=0x100, extra=""))
    np.testing.assert_array_equal(core.read_tile(4), a)


def test_a_second_core_while_one_is_open_is_a_core_of_its_own():
    first = tpbsim.Core()
    try:
        with tpbsim.Core("cayman") as other:  # no longer refused (issue 32)
            assert other.arch == "cayman"
        assert isinstance(tpbsim.CoreInUse("x"), tpbsim.Error)  # kept for scripts
        first.run(".engine pool\n")  # the first one is unharmed
    finally:
        first.close()
    first.close()  # twice is harmless
    with pytest.raises(tpbsim.Error, match="this Core is closed"):
        first.read("sbuf", 0, 0, 4, "u8")
    with pytest.raises(tpbsim.Error, match="this Core is closed"):
        first.run(".engine pool\n")
    with tpbsim.Core("maverick") as second:
        assert second.arch == "maverick"
    assert second.closed
    third = tpbsim.Core()
    del third  # dropping the last reference closes it
    gc.collect()
    tpbsim.Core().close()


def test_fifty_cores_of_different_archs_and_timing_in_one_process():
    """Make, run, check and drop 50 cores: each starts fresh (memory zero, time 0),
    runs with its own generation and profile, and the slower POOL clocks give
    proportionally longer runs."""
    src = np.array([0x21, 0x43, 0x65, 0x87] * 4, dtype=np.uint8)
    want = e2m1_to_e5m2(src)
    program = ".engine pool\n" + DEQUANT.format(src=0, dst=0x100, extra="") * 3
    durations = {}
    for i in range(50):
        arch = tpbsim.ARCHS[1 + i % 3]  # cayman, mariana, maverick
        mhz = [700, 1400, 2800][(i // 3) % 3]
        core = tpbsim.Core(arch, timing={"clocks_mhz.pool": mhz})
        assert core.arch == arch and core.now_ps == 0 and core.semaphores == [0] * 64
        assert core.timing["clocks_mhz"]["pool"] == mhz
        assert not core.read("sbuf", 0, 0x100, 32, "u8").any()
        core.write("sbuf", 0, 0, src)
        r = core.run(program)
        np.testing.assert_array_equal(core.read("sbuf", 0, 0x100, 32, "u8"), want)
        assert r.instructions == 3 and r.arch == arch
        durations.setdefault((arch, mhz), set()).add(r.duration_ps)
        del core  # dropped: the next Core can be made
    assert len(durations) == 9
    for (arch, mhz), d in durations.items():
        assert len(d) == 1, (arch, mhz, d)  # the same run, the same time
    for arch in tpbsim.ARCHS[1:]:
        t = [durations[(arch, mhz)].pop() for mhz in (700, 1400, 2800)]
        assert t[0] > t[1] > t[2], (arch, t)


def test_timing_profile_file_and_bad_timing(tmp_path):
    prof = tmp_path / "t.json"
    prof.write_text('{"clocks_mhz": {"dve": 1234}}')
    with tpbsim.Core("mariana", timing=prof) as c:
        assert c.timing["clocks_mhz"]["dve"] == 1234
    with tpbsim.Core("mariana", timing=str(prof)) as c:
        assert c.timing["clocks_mhz"]["dve"] == 1234
    with pytest.raises(tpbsim.InputError, match="no_such_key"):
        tpbsim.Core("mariana", timing={"no_such_key": 1})
    # Python names its keyword, not the command line's flag (--arch).
    with pytest.raises(tpbsim.InputError, match=r"^arch 'volta' is not one of"):
        tpbsim.Core("volta")
    with pytest.raises(tpbsim.InputError, match="^mx_emax 'ieee'"):
        tpbsim.Core(mx_emax="ieee")
    with pytest.raises(tpbsim.InputError):
        tpbsim.Core(timing=tmp_path / "missing.json")
    with pytest.raises(TypeError, match="timing must be"):
        tpbsim.Core(timing=5)
    # None of these left a core open.
    tpbsim.Core().close()


def test_a_timing_dict_is_the_profile_file_of_its_json(tmp_path):
    """A dict of overrides reaches the one profile load as the overrides a
    --timing file of its JSON holds: dotted keys and nested objects, a bundle
    name with its dots, ints past 32 bits refused by name; what JSON cannot
    hold is refused naming the key (it was a JSON parser's column number, or a
    RecursionError 5000 levels deep)."""
    over = {"clocks_mhz.dve": 1234, "sbuf": {"contention_window_cycles": 64},
            "bundle_issue_cycles": {"pool.mx8.loop": 3}}
    (tmp_path / "t.json").write_text(json.dumps({"clocks_mhz": {"dve": 1234},
                                                 "sbuf": {"contention_window_cycles": 64},
                                                 "bundle_issue_cycles": {"pool.mx8.loop": 3}}))
    with tpbsim.Core(timing=over) as a, tpbsim.Core(timing=tmp_path / "t.json") as b:
        assert a.timing == b.timing
        assert a.timing["bundle_issue_cycles"]["pool.mx8.loop"] == 3
    with pytest.raises(tpbsim.InputError, match=r"'clocks_mhz.pe': value 4294967296 does not fit"):
        tpbsim.Core(timing={"clocks_mhz.pe": 2**32})
    for bad, msg in [({"clocks_mhz": {"pe": float("nan")}},
                      r"^timing overrides: 'clocks_mhz.pe': nan is not a finite number$"),
                     ({"clocks_mhz.pe": float("-inf")}, r"'clocks_mhz.pe': -inf is not a finite"),
                     ({"a": {1}}, r"^timing overrides: Object of type set is not JSON serial"),
                     ({"\ud800": 1}, r"^timing overrides: a key: not text")]:
        with pytest.raises(tpbsim.InputError, match=msg):
            tpbsim.Core(timing=bad)
    deep = 1
    for _ in range(5000):
        deep = {"a": deep}
    with pytest.raises(tpbsim.InputError, match=r"nested more than 64 levels deep"):
        tpbsim.Core(timing=deep)
    loop = {}
    loop["clocks_mhz"] = loop
    with pytest.raises(tpbsim.InputError, match=r"Circular reference"):
        tpbsim.Core(timing=loop)
