"""The rest of a Core's surface: partition sizes per generation, engine
registers, semaphores, the SFU's sticky flags, the Result's smaller fields and
the reprs; each with its errors."""

import numpy as np
import pytest

import tpbsim

# SPEC §2 / TIMING.md [A, B, C]: SBUF 192 KiB per partition on v2 (sunda),
# 224 KiB on v3 (cayman), 256 KiB on v4 / v5; PSUM 16 KiB on every one.
SBUF_KIB = {"sunda": 192, "cayman": 224, "mariana": 256, "maverick": 256}

ONE_DEQUANT = (".engine pool\ntensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 "
               "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[1, 1, 1]) "
               "dst=t3d(sbuf(0, 0x100), step=[1, 0, 0], num=[2, 1, 1])\n")


@pytest.mark.parametrize("arch", tpbsim.ARCHS)
def test_partition_bytes_and_the_last_byte_of_each_partition(make_core, arch):
    core = make_core(arch)
    sbuf, psum = core.partition_bytes("sbuf"), core.partition_bytes("psum")
    assert (sbuf, psum) == (SBUF_KIB[arch] * 1024, 16 * 1024)
    for mem, cap in (("sbuf", sbuf), ("psum", psum)):
        core.write(mem, 127, cap - 4, np.array([1, 2, 3, 4], np.uint8))
        np.testing.assert_array_equal(core.read(mem, 127, cap - 4, 4, "u8"), [1, 2, 3, 4])
        with pytest.raises(tpbsim.OutOfRange, match="past the end of the partition"):
            core.write(mem, 127, cap - 3, np.array([9, 9, 9, 9], np.uint8))
        with pytest.raises(tpbsim.OutOfRange,
                           match="past the end of the partition|outside every partition"):
            core.read(mem, 0, cap, 1, "u8")
        np.testing.assert_array_equal(core.read(mem, 127, cap - 4, 4, "u8"), [1, 2, 3, 4])
    with pytest.raises(tpbsim.InputError, match="memory 'sram' is not one of sbuf, psum"):
        core.partition_bytes("sram")
    with pytest.raises(tpbsim.InputError, match="memory 'hbm' has no partitions"):
        core.partition_bytes("hbm")


def test_registers_set_by_a_program_are_readable_and_checked(core):
    core.run(".reg pool r3 = 7\n.reg sfu r31 = -2\n.reg pe r0 = 0xdeadbeef\n" + ONE_DEQUANT)
    assert core.reg("pool", 3) == 7
    assert core.reg("sfu", 31) == 2**32 - 2  # two's complement, as .reg documents
    assert core.reg("pe", 0) == 0xDEADBEEF
    assert core.reg("dve", 5) == 0
    for args, cls, msg in [(("gpu", 0), tpbsim.InputError, "engine 'gpu' is not one of"),
                           (("pool", 32), tpbsim.OutOfRange, r"register r32 does not exist"),
                           (("pool", -1), tpbsim.OutOfRange, r"register r-1 does not exist")]:
        with pytest.raises(cls, match=msg):
            core.reg(*args)
    with pytest.raises(TypeError, match="r must be an integer"):
        core.reg("pool", "3")


def test_semaphores_set_by_the_host_and_their_errors(core):
    assert core.semaphores == [0] * 64
    core.set_semaphore(0, 5)
    core.set_semaphore(63, 2**32 - 1)
    sems = core.semaphores
    assert sems[0] == 5 and sems[63] == 2**32 - 1 and sems[1:63] == [0] * 62
    # A program waits on the host's value and counts on from it.
    core.run(".engine pool\n" + ONE_DEQUANT.split("\n", 1)[1].rstrip("\n") +
             " wait=ge(sem0, 5) update=inc(sem0)\n")
    assert core.semaphores[0] == 6
    for i in (-1, 64):
        with pytest.raises(tpbsim.OutOfRange, match=f"semaphore {i} does not exist"):
            core.set_semaphore(i, 1)
    for v in (-1, 2**32):
        with pytest.raises(tpbsim.InputError, match=f"semaphore value {v} is not a u32"):
            core.set_semaphore(1, v)
    assert core.semaphores[1] == 0


def tquant(dst, dtype, sat, rmode="RNE", mul=0x3F800000, zp=0):
    return (f".reg sfu r1 = {mul:#x}\n.reg sfu r2 = {zp}\n"
            f"BSTART.SFU TQUANT, FP32; B.DATR {dtype}, {rmode}, Sat={sat}; B.DIM LB0=4; "
            f"B.DIM LB1=1; B.DIM LB2=4; B.IOR r1, r2; B.IOT T1, mask=1111, <last>, ->T{dst}<1>; "
            "BSTOP\n")


def test_sfu_flags_are_sticky_across_runs(core):
    """SPEC §6: inexact (a result rounded), saturated (Sat 1 clamped), wrapped
    (Sat 0 reduced modulo 256); never cleared by TQUANT, so they carry over."""
    assert core.sfu_flags == {"inexact": False, "saturated": False, "wrapped": False}
    core.write_tile(1, np.array([[1.0, -3.0, 100.0, 0.0]], np.float32))
    r = core.run(tquant(0, "S8", 1))  # every value exact and in range
    np.testing.assert_array_equal(core.read_tile(0), [[1, -3, 100, 0]])
    assert core.sfu_flags == {"inexact": False, "saturated": False, "wrapped": False}
    assert r.sfu["flags"] == core.sfu_flags

    core.write_tile(1, np.array([[0.5, 1000.0, 2.5, -1000.0]], np.float32))
    r = core.run(tquant(0, "S8", 1))  # 0.5 and 2.5 round (RNE: 0, 2), 1000 clamps
    np.testing.assert_array_equal(core.read_tile(0), [[0, 127, 2, -128]])
    assert core.sfu_flags == {"inexact": True, "saturated": True, "wrapped": False}
    assert r.sfu["flags"] == core.sfu_flags

    core.write_tile(1, np.array([[300.0, 44.0, 256.0, 1.0]], np.float32))
    r = core.run(tquant(2, "U8", 0))  # exact; 300 and 256 wrap to 44 and 0
    np.testing.assert_array_equal(core.read_tile(2), [[44, 44, 0, 1]])
    assert core.read_tile(2).dtype == np.uint8
    # The earlier flags stay set (sticky).
    assert core.sfu_flags == {"inexact": True, "saturated": True, "wrapped": True}
    assert r.sfu["flags"] == core.sfu_flags and r.sfu["tiles"] == 3


def test_a_runs_memory_counters_are_its_own_after_a_dma_run(core):
    """The DMA engines' byte counters start from zero in every run, as the
    compute engines' do: a run after a DMA run reports its own bytes only."""
    core.write("hbm", 0, 0, np.arange(256, dtype=np.uint8))
    r = core.run(".arch mariana\n.engine dma0\n"
                 "dma_copy rows=2 row_bytes=128 src=hbm(0x0, stride=128) dst=sbuf(0, 0x400)\n")
    assert r.memories["sbuf.q0"]["bytes_written"] == 256
    core.write("sbuf", 0, 0, np.array([0x21, 0x43, 0x65, 0x87], dtype=np.uint8))
    r = core.run(ONE_DEQUANT)
    assert sum(m["bytes_written"] for m in r.memories.values()) == 8
    assert r.memories["sbuf.q0"]["bytes_read"] == 4


def test_result_fields_and_reprs(core, tmp_path):
    core.write("sbuf", 0, 0, np.array([0x21, 0x43, 0x65, 0x87], dtype=np.uint8))
    r = core.run(ONE_DEQUANT)
    assert repr(r) == (f"<tpbsim.Result ok 1 instructions simulated_ps={r.simulated_ps} "
                       f"duration_ps={r.simulated_ps}>")
    assert repr(core) == f"<tpbsim.Core arch='mariana' now_ps={core.now_ps}>"
    assert r.fault is None and r.files == [] and r.output_errors == [] and r.notes == []
    assert r.arch == "mariana" and r.wall_seconds > 0
    (x,) = r.retires
    assert (x.engine, x.index, x.opcode, x.mnemonic) == ("pool", 0, 0x7B, "tensor_dequantize")
    assert repr(x).startswith(f"Retire(end_ps={x.end_ps}, engine='pool', index=0, opcode=0x7b")
    assert x == r.retires[0]
    (y,) = core.run(ONE_DEQUANT).retires  # the same instruction, later: another record
    assert y != x and y.start_ps >= r.simulated_ps and y.end_ps - y.start_ps == \
        x.end_ps - x.start_ps
    assert core.run(ONE_DEQUANT, keep_retires=False).retires == []
    # POOL read one 4-byte word and wrote two: the memories' counters say so.
    assert r.engines["pool"]["bytes_read"] == 4 and r.engines["pool"]["bytes_written"] == 8
    assert sum(m["bytes_written"] for m in r.memories.values()) == 8
    # A long program traced at trace_level="auto": instructions, not bundles, and a note.
    long = ONE_DEQUANT + ONE_DEQUANT.split("\n", 1)[1] * 20000
    r = core.run(long, vcd=tmp_path / "long.vcd")
    assert any("20001 instructions: tracing instructions, not bundles" in n for n in r.notes)
    assert not core.running and not core.closed
    core.close()
    assert repr(core) == "<tpbsim.Core closed>" and core.closed
