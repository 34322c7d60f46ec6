"""Every entry point of `import tpbsim` with arguments of the wrong type or out
of range (docs/PYTHON.md "Arguments"): a tpbsim.InputError (a wrong type is an
ArgumentTypeError, also a TypeError) or tpbsim.OutOfRange naming the argument,
never pybind11's "incompatible function arguments"; integers are any int or
NumPy integer, checked against the ranges of the CLI and the DPI-C library
(platform/run/host_args.h: the same messages)."""

import os
import pathlib

import numpy as np
import pytest

import tpbsim

PROGRAM = ".arch mariana\n.engine pool\n"
SURROGATE = "a\ud800b"

WRONG = [object(), 1.5, b"x", [1], None, True, SURROGATE, 2**200, -(2**70), np.float32(1)]


def _raises_cleanly(f, *args, **kwargs):
    """Calls f; returns the tpbsim error it raised (None when it succeeded). An
    error that is not a tpbsim.Error, or pybind11's dump, fails the test."""
    try:
        f(*args, **kwargs)
    except tpbsim.Error as e:
        assert "incompatible function arguments" not in str(e), e
        return e
    except Exception as e:  # noqa: BLE001 (the point of the test)
        pytest.fail(f"{f.__name__}{args!r}{kwargs!r} raised {type(e).__name__}: {e}")
    return None


def test_core_methods_with_every_wrong_value(core, tmp_path, monkeypatch):
    # vcd=b"x" is a right value: its trace goes to the test's own directory.
    monkeypatch.chdir(tmp_path)
    a = np.zeros((2, 16), np.uint8)
    calls = {
        "write.mem": lambda v: core.write(v, 0, 0, a),
        "write.partition": lambda v: core.write("sbuf", v, 0, a),
        "write.offset": lambda v: core.write("sbuf", 0, v, a),
        "write.hbm_offset": lambda v: core.write("hbm", 0, v, a),
        "write.array": lambda v: core.write("sbuf", 0, 0, v),
        "read.mem": lambda v: core.read(v, 0, 0, (2, 16), "u8"),
        "read.partition": lambda v: core.read("sbuf", v, 0, (2, 16), "u8"),
        "read.offset": lambda v: core.read("psum", 0, v, (2, 16), "u8"),
        "read.shape": lambda v: core.read("sbuf", 0, 0, v, "u8"),
        "read.dtype": lambda v: core.read("sbuf", 0, 0, (2, 16), v),
        "write_tile.n": lambda v: core.write_tile(v, np.ones((2, 2), np.float32)),
        "write_tile.col": lambda v: core.write_tile(0, np.ones((2, 2), np.float32), col=v),
        "write_tile.array": lambda v: core.write_tile(0, v),
        "read_tile.n": lambda v: core.read_tile(v),
        "tile_info.n": lambda v: core.tile_info(v),
        "set_semaphore.i": lambda v: core.set_semaphore(v, 1),
        "set_semaphore.value": lambda v: core.set_semaphore(0, v),
        "reg.engine": lambda v: core.reg(v, 0),
        "reg.r": lambda v: core.reg("pool", v),
        "partition_bytes.mem": lambda v: core.partition_bytes(v),
        "run.program": lambda v: core.run(v),
        "run.name": lambda v: core.run(PROGRAM, name=v),
        "run.vcd": lambda v: core.run(PROGRAM, vcd=v),
        "run.trace_level": lambda v: core.run(PROGRAM, trace_level=v),
        "run.trace_engines": lambda v: core.run(PROGRAM, trace_engines=v),
        "run.trace_window": lambda v: core.run(PROGRAM, trace_window=v),
        "run.max_sim_time": lambda v: core.run(PROGRAM, max_sim_time=v),
        "run.max_wall_time": lambda v: core.run(PROGRAM, max_wall_time=v),
        "run.threads": lambda v: core.run(PROGRAM, threads=v),
    }
    # Values that are right for some arguments (None: an optional one's default).
    allowed = {("write.array", "[1]"), ("read.dtype", "None"), ("write_tile.col", "None"),
               ("run.name", "None"), ("run.vcd", "None"), ("run.trace_engines", "None"),
               ("run.trace_window", "None"), ("run.max_sim_time", "None"),
               ("run.max_wall_time", "None"), ("run.threads", "None"),
               ("run.max_wall_time", "1.5"), ("run.max_wall_time", "np.float32(1)"),
               ("run.vcd", "b'x'"), ("run.trace_engines", "[1]"), ("run.max_sim_time", "2**200"),
               ("run.max_wall_time", "2**200"), ("read.shape", "b'x'"), ("read.shape", "[1]"),
               ("read.dtype", "np.float32(1)")}
    names = {id(v): n for v, n in zip(WRONG, ["object()", "1.5", "b'x'", "[1]", "None", "True",
                                               "SURROGATE", "2**200", "-(2**70)",
                                               "np.float32(1)"])}
    for what, call in calls.items():
        for v in WRONG:
            e = _raises_cleanly(call, v)
            if (what, names[id(v)]) in allowed:
                continue
            assert e is not None, (what, names[id(v)])


def test_out_of_range_integers_are_out_of_range_not_type_errors(core):
    a = np.zeros((1, 8), np.uint8)
    for call, msg in [
        (lambda: core.write("sbuf", 0, 2**63, a), "offset 9223372036854775808 is outside every "
                                                  "partition (0..262143)"),
        (lambda: core.write("sbuf", 2**64, 0, a), "partition 18446744073709551616 does not exist"),
        (lambda: core.read("sbuf", -1, 0, 8, "u8"), "partition -1 does not exist (0..127)"),
        (lambda: core.write("hbm", 0, 2**63, a), "hbm offset 9223372036854775808 is past the HBM "
                                                 "capacity"),
        (lambda: core.write("hbm", 0, -5, a), "hbm offset -5 is negative"),
        (lambda: core.write_tile(0, np.ones((2, 2), np.float32), col=-1),
         "physical Col -1 is not 1..65535"),
        (lambda: core.write_tile(0, np.ones((2, 2), np.float32), col=2**64),
         "physical Col 18446744073709551616 is not 1..65535"),
        (lambda: core.read_tile(32), "tile 32 does not exist (T0..T31)"),
        (lambda: core.tile_info(-1), "tile -1 does not exist (T0..T31)"),
        (lambda: core.set_semaphore(64, 0), "semaphore 64 does not exist (0..63)"),
        (lambda: core.reg("pe", 2**100), "does not exist (r0..r31)"),
    ]:
        with pytest.raises(tpbsim.OutOfRange) as e:
            call()
        assert msg in str(e.value)
    with pytest.raises(tpbsim.InputError, match=r"semaphore value 4294967296 is not a u32"):
        core.set_semaphore(0, 2**32)
    with pytest.raises(tpbsim.InputError, match=r"threads: 0 is not|0 is not a count of host"):
        core.run(PROGRAM, threads=0)


def test_numpy_integers_are_integers_everywhere(core):
    i = np.int64
    core.write("sbuf", i(1), np.uint32(64), np.arange(8, dtype=np.uint8))
    assert core.read("sbuf", np.int16(1), i(64), i(8), "u8").tolist() == list(range(8))
    core.set_semaphore(np.uint8(3), np.uint64(7))
    assert core.semaphores[3] == 7
    core.write_tile(i(2), np.ones((2, 3), np.float32), col=np.int32(4))
    assert core.tile_info(np.uint16(2))["col"] == 4
    r = core.run(PROGRAM, threads=i(2), max_sim_time=i(10**9))
    assert r.status == "ok"
    assert core.reg("pool", np.int8(0)) == 0


def test_wrong_types_are_input_errors_and_type_errors(core):
    for call in (lambda: core.run(PROGRAM, name=5), lambda: core.write(3, 0, 0, np.zeros(4, np.uint8)),
                 lambda: core.run(PROGRAM, threads=2.0), lambda: core.read_tile("1"),
                 lambda: tpbsim.assemble(PROGRAM, name=b"x"), lambda: tpbsim.check(PROGRAM, arch=4)):
        with pytest.raises(tpbsim.ArgumentTypeError) as e:
            call()
        assert isinstance(e.value, tpbsim.InputError) and isinstance(e.value, TypeError)


def test_text_that_is_not_unicode_is_an_input_error(core, tmp_path):
    for call in (lambda: core.run(PROGRAM + "# " + SURROGATE + "\n"),
                 lambda: core.run(PROGRAM, name=SURROGATE),
                 lambda: tpbsim.assemble(SURROGATE), lambda: tpbsim.check(SURROGATE),
                 lambda: tpbsim.disassemble(SURROGATE), lambda: core.reg(SURROGATE, 0),
                 lambda: core.partition_bytes(SURROGATE), lambda: tpbsim.Core(SURROGATE)):
        with pytest.raises(tpbsim.InputError, match=r"lone surrogate U\+D800"):
            call()
    # A path is bytes to the file system: an undecodable name still works.
    p = tmp_path / "p.tpb"
    p.write_text(PROGRAM)
    assert core.run(pathlib.Path(p)).status == "ok"
    odd = bytes(tmp_path) + b"/s\xff.json"         # not UTF-8
    assert core.run(PROGRAM, stats=odd).status == "ok"
    assert pathlib.Path(os.fsdecode(odd)).stat().st_size > 0
    with pytest.raises(tpbsim.InputError, match="vcd: an empty path"):
        core.run(PROGRAM, vcd="")


def test_functions_without_a_core():
    for call in (lambda: tpbsim.convert(3, "bf16", [1.0]), lambda: tpbsim.convert("fp32", None, [1]),
                 lambda: tpbsim.decode(b"e4m3", [1]), lambda: tpbsim.encode("e4m3", object()),
                 lambda: tpbsim.decode("e4m3", [1.5]), lambda: tpbsim.disassemble(5),
                 lambda: tpbsim.check(5), lambda: tpbsim.assemble(None),
                 lambda: tpbsim.Core(arch=5), lambda: tpbsim.Core(timing=5),
                 lambda: tpbsim.Core(mx_emax=None)):
        assert _raises_cleanly(call) is not None


def test_busy_fraction_is_a_fraction_for_dma_queues_too():
    """A DMA queue busy end to end counts whole memory-clock cycles per transfer;
    its share of the run is at most 1 (it was 1.0001)."""
    from tpbsim.kernels import gemm
    rep = gemm.run(64, 512, 2048, "mxfp8", "bf16", "mariana", traces=False, log=None,
                   queues={"a": (0,), "w": (0,), "c": (0,)})
    r = rep["_result"]
    assert r.engines["dma0"]["instructions"] > 4
    for e in r.engines:
        assert 0 <= r.busy_fraction(e) <= 1, (e, r.busy_fraction(e))
    with pytest.raises(tpbsim.InputError, match="busy_fraction: engine 'dma99'"):
        r.busy_fraction("dma99")
