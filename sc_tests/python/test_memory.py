"""Core.write / read / write_tile / read_tile: the layout of --load / --dump,
checked against a NumPy model of the partitions and against the CLI; every
error, and nothing written partially."""

import numpy as np
import pytest

import tpbsim
from conftest import EXAMPLES, WORKLOADS, cli

DUMP = {"u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "i8": np.int8, "f16": np.float16,
        "f32": np.float32, "bf16": np.uint16}


def test_rows_go_to_consecutive_partitions(core):
    a = np.arange(6 * 10, dtype=np.uint8).reshape(6, 10)
    core.write("sbuf", 40, 100, a)
    for r in range(6):
        np.testing.assert_array_equal(core.read("sbuf", 40 + r, 100, 10, "u8"), a[r])
    # One row of a 1-D array; partitions around it untouched.
    core.write("sbuf", 5, 7, np.array([1, 2, 3], dtype=np.uint8))
    np.testing.assert_array_equal(core.read("sbuf", 4, 0, (3, 12), "u8"),
                                  [[0] * 12, [0] * 7 + [1, 2, 3, 0, 0], [0] * 12])


def test_random_writes_and_reads_agree_with_a_model_of_the_partitions(core):
    """Random dtypes, shapes, partitions and offsets in both memories, against a
    NumPy image of each memory with the documented layout."""
    rng = np.random.default_rng(7)
    model = {m: np.zeros((128, core.partition_bytes(m)), dtype=np.uint8) for m in ("sbuf", "psum")}
    names = list(DUMP)
    for _ in range(300):
        mem = ["sbuf", "psum"][rng.integers(2)]
        cap = core.partition_bytes(mem)
        dt = np.dtype(DUMP[names[rng.integers(len(names))]])
        rows = int(rng.integers(1, 20))
        cols = int(rng.integers(1, 64))
        p = int(rng.integers(0, 128 - rows + 1))
        off = int(rng.integers(0, cap - cols * dt.itemsize + 1))
        if rng.integers(2):
            a = rng.integers(0, 256, (rows, cols * dt.itemsize), dtype=np.uint8).view(dt)
            if rows == 1 and rng.integers(2):
                a = a[0]
            core.write(mem, p, off, a)
            model[mem][p:p + rows, off:off + cols * dt.itemsize] = \
                np.ascontiguousarray(a).view(np.uint8).reshape(rows, -1)
        else:
            name = names[rng.integers(len(names))]
            dt = np.dtype(DUMP[name])
            off = int(rng.integers(0, cap - cols * dt.itemsize + 1))
            got = core.read(mem, p, off, (rows, cols), name)
            assert got.dtype == dt and got.shape == (rows, cols)
            want = model[mem][p:p + rows, off:off + cols * dt.itemsize].copy().view(dt)
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    for mem in model:
        whole = core.read(mem, 0, 0, (128, core.partition_bytes(mem)), "u8")
        np.testing.assert_array_equal(whole, model[mem])


@pytest.mark.parametrize("name", list(DUMP))
def test_each_dtype_reads_its_elements(core, name):
    dt = np.dtype(DUMP[name])
    raw = np.arange(4 * 8 * dt.itemsize, dtype=np.uint8).reshape(4, -1)
    core.write("psum", 60, 32, raw)
    got = core.read("psum", 60, 32, (4, 8), name)
    assert got.dtype == dt
    np.testing.assert_array_equal(got.view(np.uint8), raw)
    # The NumPy dtype is accepted where the name is.
    if name != "bf16":
        np.testing.assert_array_equal(core.read("psum", 60, 32, (4, 8), dt), got)


def test_strided_and_big_endian_arrays_are_written_by_value(core):
    base = np.arange(64, dtype=np.uint16).reshape(8, 8)
    core.write("sbuf", 0, 0, base[:, ::2])
    np.testing.assert_array_equal(core.read("sbuf", 0, 0, (8, 4), "u16"), base[:, ::2])
    be = np.arange(12, dtype=">f4").reshape(3, 4)
    core.write("sbuf", 10, 64, be)
    np.testing.assert_array_equal(core.read("sbuf", 10, 64, (3, 4), "f32"), be)


def test_matches_the_cli_load_and_dump(core, tmp_path):
    """A workload's input written by Python and its output read by Python equal the
    CLI's --load / --dump (and the workload's expected.npy)."""
    d = WORKLOADS / "e2m1_g8_mariana"
    core.write("sbuf", 40, 0, np.load(d / "input.npy"))
    core.run(d.joinpath("program.tpb"))
    got = core.read("sbuf", 40, 16384, (32, 64), "u8")
    cli("run", d / "program.tpb", "--load", f"sbuf:40:0={d / 'input.npy'}",
        "--dump", f"sbuf:40:16384:32x64:u8={tmp_path / 'out.npy'}")
    np.testing.assert_array_equal(got, np.load(tmp_path / "out.npy"))
    np.testing.assert_array_equal(got, np.load(d / "expected.npy"))


def test_bad_arguments_raise_and_write_nothing(core):
    marker = np.full((8, 16), 0xAB, dtype=np.uint8)
    core.write("sbuf", 120, 0, marker)
    cap = core.partition_bytes("sbuf")

    def unchanged():
        np.testing.assert_array_equal(core.read("sbuf", 120, 0, (8, 16), "u8"), marker)

    bad = [
        (tpbsim.OutOfRange, r"9 rows from partition 120 run past partition 127",
         lambda: core.write("sbuf", 120, 0, np.zeros((9, 16), np.uint8))),
        (tpbsim.OutOfRange, r"runs 1 bytes past the end of the partition",
         lambda: core.write("sbuf", 120, cap - 15, np.zeros((8, 16), np.uint8))),
        (tpbsim.OutOfRange, r"partition 128 does not exist",
         lambda: core.write("sbuf", 128, 0, np.zeros(4, np.uint8))),
        (tpbsim.OutOfRange, r"partition -1 does not exist",
         lambda: core.write("sbuf", -1, 0, np.zeros(4, np.uint8))),
        (tpbsim.OutOfRange, r"offset -4",
         lambda: core.write("sbuf", 120, -4, np.zeros(4, np.uint8))),
        (tpbsim.OutOfRange, r"offset 4294967300",
         lambda: core.write("sbuf", 120, 2**32 + 4, np.zeros(4, np.uint8))),
        (tpbsim.InputError, r"float64 is not one of the types --load takes",
         lambda: core.write("sbuf", 120, 0, np.zeros((8, 16)))),
        (tpbsim.InputError, r"int64 is not one",
         lambda: core.write("sbuf", 120, 0, [[1, 2], [3, 4]])),
        (tpbsim.InputError, r"bool is not one",
         lambda: core.write("sbuf", 120, 0, np.zeros(4, bool))),
        (tpbsim.InputError, r"a 3-D array",
         lambda: core.write("sbuf", 120, 0, np.zeros((2, 2, 2), np.uint8))),
        (tpbsim.InputError, r"a 0-D array",
         lambda: core.write("sbuf", 120, 0, np.uint8(3))),
        (tpbsim.InputError, r"is empty",
         lambda: core.write("sbuf", 120, 0, np.zeros((0, 4), np.uint8))),
        (tpbsim.InputError, r"memory 'dram' is not one of sbuf, psum, hbm",
         lambda: core.write("dram", 120, 0, np.zeros(4, np.uint8))),
    ]
    for cls, msg, call in bad:
        with pytest.raises(cls, match=msg):
            call()
        unchanged()
    assert issubclass(tpbsim.OutOfRange, IndexError) and issubclass(tpbsim.InputError, ValueError)
    with pytest.raises(TypeError, match="partition must be an integer"):
        core.write("sbuf", 1.0, 0, marker)


def test_bad_reads_raise(core):
    cap = core.partition_bytes("psum")
    for cls, msg, call in [
        (tpbsim.OutOfRange, "run past partition 127", lambda: core.read("psum", 100, 0, (29, 4),
                                                                        "u8")),
        (tpbsim.OutOfRange, "past the end of the partition",
         lambda: core.read("psum", 0, cap - 4, 2, "f32")),
        (tpbsim.OutOfRange, "past the end of the partition",
         lambda: core.read("psum", 0, 0, 10**15, "u8")),
        (tpbsim.InputError, r"dtype 'f64' is not one of u8 u16 u32 i8 f16 f32 bf16",
         lambda: core.read("psum", 0, 0, 4, "f64")),
        (tpbsim.InputError, r"dtype .*float64", lambda: core.read("psum", 0, 0, 4, np.float64)),
        (tpbsim.InputError, r"shape \(2, 2, 2\) is 3-D", lambda: core.read("psum", 0, 0, (2, 2, 2),
                                                                          "u8")),
        (tpbsim.InputError, r"not positive", lambda: core.read("psum", 0, 0, (0, 4), "u8")),
        (tpbsim.InputError, r"not positive", lambda: core.read("psum", 0, 0, -3, "u8")),
    ]:
        with pytest.raises(cls, match=msg):
            call()


def test_tiles_round_trip_and_report_their_descriptor(core):
    assert core.read_tile(3).shape == (0, 0) and core.tile_info(3) is None
    a = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
    core.write_tile(3, a, col=8)
    got = core.read_tile(3)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, a)
    info = core.tile_info(3)
    assert (info["dtype"], info["rows"], info["cols"], info["col"], info["tsize"]) == \
        ("FP32", 3, 4, 8, 1)
    # Rewriting a name frees its old tile: a new physical id, one tile in use.
    core.write_tile(3, np.ones((1, 1), np.float32))
    assert core.tile_info(3)["phys"] != info["phys"]
    np.testing.assert_array_equal(core.read_tile(3), [[1.0]])


def test_tile_errors(core):
    for cls, msg, call in [
        (tpbsim.OutOfRange, r"tile 32 does not exist \(T0..T31\)",
         lambda: core.write_tile(32, np.ones((1, 1), np.float32))),
        (tpbsim.OutOfRange, r"tile -1 does not exist", lambda: core.read_tile(-1)),
        (tpbsim.InputError, r"float64; a tile is loaded from float32",
         lambda: core.write_tile(0, np.ones((2, 2)))),
        (tpbsim.InputError, r"a 1-D array", lambda: core.write_tile(0, np.ones(3, np.float32))),
        (tpbsim.InputError, r"physical Col 2 is below the array's 4 columns",
         lambda: core.write_tile(0, np.ones((2, 4), np.float32), col=2)),
        (tpbsim.InputError, r"shape 0 x 4 is not a tile shape",
         lambda: core.write_tile(0, np.ones((0, 4), np.float32))),
        (tpbsim.InputError, r"exceed the 256 KiB tile file",
         lambda: core.write_tile(0, np.ones((256, 257), np.float32))),
    ]:
        with pytest.raises(cls, match=msg):
            call()
    assert core.tile_info(0) is None  # nothing was allocated
    # Capacity: 256 units of 1 KiB; eight tiles of 32 units fill it.
    for n in range(8):
        core.write_tile(n, np.ones((32, 256), np.float32))
    with pytest.raises(tpbsim.InputError, match=r"tile T8 needs 1 TSize units, the tile file has 0"):
        core.write_tile(8, np.ones((1, 1), np.float32))


def test_tquant_through_tiles_matches_expected_and_the_cli(core, tmp_path):
    """traces/examples/tquant: write_tile(1, x, col=32), the TQUANT program, then
    read_tile(0) (S8) and read_tile(2) (U8) equal gen_expected.py's exact
    results and the CLI's --dump tile:N files."""
    ex = EXAMPLES / "tquant"
    core.write_tile(1, np.load(ex / "input.npy"), col=32)
    core.run(ex / "program.tpb")
    t0, t2 = core.read_tile(0), core.read_tile(2)
    assert t0.dtype == np.int8 and t2.dtype == np.uint8
    np.testing.assert_array_equal(t0, np.load(ex / "expected_t0.npy"))
    np.testing.assert_array_equal(t2, np.load(ex / "expected_t2.npy"))
    assert core.tile_info(0)["dtype"] == "S8" and core.tile_info(2)["dtype"] == "U8"
    cli("run", ex / "program.tpb", "--load", f"tile:1:32={ex / 'input.npy'}",
        "--dump", f"tile:0={tmp_path / 't0.npy'}", "--dump", f"tile:2={tmp_path / 't2.npy'}")
    np.testing.assert_array_equal(t0, np.load(tmp_path / "t0.npy"))
    np.testing.assert_array_equal(t2, np.load(tmp_path / "t2.npy"))
    flags = core.sfu_flags
    assert set(flags) == {"inexact", "saturated", "wrapped"}
