"""core.run(..., racecheck=True) (SPEC §14): Result.races, the races file, the
same report as `tpbsim run --racecheck`, and the semaphore values a host or an
earlier run left as the count's start."""

import json

import pytest

import tpbsim
from conftest import WORKLOADS, cli

RACY = """.arch mariana
.engine dma0
dma_copy rows=32 row_bytes=320 src=hbm(0x0, stride=320) dst=sbuf(0, 0x0){u}
.engine pool
tensor_dequantize fmt=e2m1_to_e5m2 group=8 channels=32 \\
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[80, 1, 1]) \\
    dst=t3d(sbuf(0, 0x2000), step=[1, 0, 0], num=[128, 1, 1]){w}
"""


def test_a_race_is_in_the_result_and_the_run_completes(core, tmp_path):
    r = core.run(RACY.format(u="", w=""), name="racy.tpb", racecheck=True,
                 races=tmp_path / "races.jsonl", stats=tmp_path / "stats.json")
    assert r.status == "ok"  # a race is no exception: the CLI exits 5
    assert r.race_count == 1 and len(r.races) == 1
    x = r.races[0]
    # Named in the order the accesses happened (issue 40): the pool read the
    # bytes before the load's 1.3 us latency had passed, then the load wrote
    # them: a WAR of the pool's read and the DMA's write.
    assert x["kinds"] == ["WAR"] and x["memory"] == "sbuf" and x["partitions"] == [0, 31]
    assert x["bytes"] == [0, 319]
    assert (x["first"]["engine"], x["first"]["mnemonic"], x["first"]["line"]) == \
        ("pool", "tensor_dequantize", 5)
    assert x["first"]["access"] == "read"
    assert (x["second"]["engine"], x["second"]["index"], x["second"]["line"]) == ("dma0", 0, 3)
    assert x["second"]["dma_engines"] == [0, 1, 2, 3] and x["second"]["access"] == "write"
    assert x["message"] == ("no semaphore orders dma0[0] dma_copy (racy.tpb:3, DMA engines 0-3) "
                            "after pool[0] tensor_dequantize (racy.tpb:5): WAR on sbuf "
                            "partitions 0-31 bytes 0x0-0x13f")
    lines = (tmp_path / "races.jsonl").read_text().splitlines()
    assert [json.loads(s) for s in lines] == r.races
    assert json.loads((tmp_path / "stats.json").read_text())["races"]["races"] == r.races


def test_the_cli_reports_the_same_race(core, tmp_path):
    prog = tmp_path / "racy.tpb"
    prog.write_text(RACY.format(u="", w=""))
    r = core.run(prog, racecheck=True)
    p = cli("run", prog, "--racecheck", "--races", tmp_path / "cli.jsonl", check=False)
    assert p.returncode == 5
    assert [json.loads(s) for s in (tmp_path / "cli.jsonl").read_text().splitlines()] == r.races


def test_ordered_by_a_semaphore_there_is_none_and_without_the_check_nothing(core):
    r = core.run(RACY.format(u=" update=inc(sem1)", w=" wait=ge(sem1, 1)"), racecheck=True)
    assert r.races == [] and r.race_count == 0 and "races" in r.stats
    r = core.run(RACY.format(u="", w=""))
    assert r.races is None and r.race_count is None and "races" not in r.stats


def test_timing_only_finds_it_too_and_races_needs_the_check(core, tmp_path):
    r = core.run(RACY.format(u="", w=""), racecheck=True, timing_only=True)
    assert r.race_count == 1
    with pytest.raises(tpbsim.InputError,
                       match=r"^races=FILE needs racecheck=True \(the races it would list\)$"):
        core.run(RACY.format(u="", w=""), races=tmp_path / "r.jsonl")


def test_a_count_left_by_the_host_or_an_earlier_run_is_where_the_count_starts(core):
    # The wait ge(sem1, 2) needs one increment when the host set sem1 to 1
    # before the run: dma0's, which orders the read. Set to 2, it needs none
    # and the read races.
    prog = RACY.format(u=" update=inc(sem1)", w=" wait=ge(sem1, 2)")
    core.set_semaphore(1, 1)
    assert core.run(prog, racecheck=True).races == []
    core.set_semaphore(1, 2)
    assert core.run(prog, racecheck=True).race_count == 1
    # An earlier run's increments count the same way.
    core.set_semaphore(1, 0)
    core.run(".arch mariana\n.engine dve\ntensor_copy channels=1 in_dtype=fp32 out_dtype=fp32 "
             "src=t3d(sbuf(0, 0x100), step=[1, 0, 0], num=[1, 1, 1]) dst=t3d(sbuf(0, 0x200), "
             "step=[1, 0, 0], num=[1, 1, 1]) update=inc(sem1)\n")
    assert core.semaphores[1] == 1
    assert core.run(prog, racecheck=True).races == []


def test_every_workload_is_race_free_through_python_too(core):
    # The hbm_pipeline workload from Python: its DMA queues, POOL, DVE, PE.
    import numpy as np
    d = WORKLOADS / "hbm_pipeline"
    core.write("hbm", 0, 0, np.load(d / "activations.npy"))
    core.write("hbm", 0, 0x10000, np.load(d / "weights_mxfp4.npy"))
    r = core.run(d / "program.tpb", racecheck=True)
    assert r.races == []
    out = core.read("hbm", 0, 0x20000, (64, 128), "bf16")
    np.testing.assert_array_equal(out, np.load(d / "expected.npy"))
