"""Core.run: program forms, the Result, outputs, and a fault, a deadlock and
a watchdog as exceptions, each checked against `tpbsim run` on the same input."""

import dataclasses
import json
import pathlib

import numpy as np
import pytest

import tpbsim
from conftest import EXAMPLES, WORKLOADS, cli

PIPELINE = WORKLOADS / "pipeline"
LINE = ("tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 "
        "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[4, 1, 1]) "
        "dst=t3d(sbuf(0, 0x4000), step=[1, 0, 0], num=[8, 1, 1])\n")


def load_pipeline(core):
    core.write("sbuf", 0, 0, np.load(PIPELINE / "activations.npy"))
    core.write("sbuf", 0, 0x1000, np.load(PIPELINE / "weights_mxfp4.npy"))


def cli_pipeline(tmp_path, *extra):
    cli("run", PIPELINE / "program.tpb", "--load", f"sbuf:0:0={PIPELINE / 'activations.npy'}",
        "--load", f"sbuf:0:4096={PIPELINE / 'weights_mxfp4.npy'}",
        "--dump", f"psum:0:0:64x128:f32={tmp_path / 'out.npy'}", "--stats",
        tmp_path / "cli_stats.json", "--retire", tmp_path / "cli_retire.txt", *extra)
    return json.loads((tmp_path / "cli_stats.json").read_text())


def test_pipeline_result_equals_the_cli_and_the_expected_output(core, tmp_path):
    load_pipeline(core)
    r = core.run(PIPELINE / "program.tpb", stats=tmp_path / "stats.json",
                 retire=tmp_path / "retire.txt")
    out = core.read("psum", 0, 0, (64, 128), "f32")
    np.testing.assert_array_equal(out, np.load(PIPELINE / "expected.npy"))
    want = cli_pipeline(tmp_path)
    np.testing.assert_array_equal(out, np.load(tmp_path / "out.npy"))
    assert r.status == "ok" and r.message == ""
    assert isinstance(r.simulated_ps, int) and r.simulated_ps == want["simulated_ps"]
    assert r.start_ps == 0 and r.duration_ps == r.simulated_ps
    assert r.instructions == 5 == len(r.retires)
    assert set(r.engines) == {"pool", "dve", "pe", "sfu"}
    for name, e in r.engines.items():
        w = next(x for x in want["engines"] if x["name"] == name)
        for key in ("instructions", "busy_cycles", "stall_cycles", "bytes_read", "bytes_written",
                    "counters", "memory_stall_cycles", "fetch_stall_cycles", "bundles",
                    "clock_mhz"):
            assert e[key] == w[key], (name, key)
    assert r.engines["dve"]["instructions"] == 2 and r.engines["pe"]["counters"]["macs"] > 0
    assert r.memories.keys() == {m["name"] for m in want["memories"]}
    # The stats file the run wrote is the dict the Result holds.
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["engines"] == r.stats["engines"] and stats["simulated_ps"] == r.simulated_ps
    # Retires: the CLI's retire file, record by record.
    assert (tmp_path / "retire.txt").read_text() == (tmp_path / "cli_retire.txt").read_text()
    ends = [x.end_ps for x in r.retires]
    assert ends == sorted(ends) and ends[-1] <= r.simulated_ps
    by_engine = {(x.engine, x.index): x for x in r.retires}
    assert by_engine[("pe", 1)].mnemonic == "matmul_mx" and by_engine[("pe", 1)].opcode == 0x0A
    assert by_engine[("pool", 0)].mnemonic == "tensor_dequantize"
    assert all(x.start_ps <= x.end_ps for x in r.retires)
    assert ("--stats", str(tmp_path / "stats.json")) in [tuple(f) for f in r.files]
    assert "pe" in r.summary() and "busy" in r.summary()
    assert 0 < r.busy_fraction("pe") <= 1


def test_text_bytes_and_path_run_the_same(make_core):
    text = (PIPELINE / "program.tpb").read_text()
    words = tpbsim.assemble(text)
    results = []
    for program in (text, words, bytearray(words), memoryview(words), PIPELINE / "program.tpb"):
        core = make_core()
        load_pipeline(core)
        r = core.run(program)
        results.append((r.simulated_ps, [(x.engine, x.index, x.end_ps) for x in r.retires],
                        core.read("psum", 0, 0, (64, 128), "f32").tobytes()))
    assert all(x == results[0] for x in results)


def vcd_without_memory_counters(path):
    """A VCD's lines without $date and without the memories' byte counters.

    The counters sum every engine's accesses when any engine retires, so they
    depend on how far the decoupled engines had run (the quantum's alignment
    to the run's start); every engine signal, semaphore and flag is exact."""
    lines = path.read_text().splitlines()
    ids = {l.split()[3] for l in lines if l.startswith("$var") and
           l.split()[4] in ("bytes_read", "bytes_written")}
    return [l for l in lines if not l.startswith("$date") and
            not (l.startswith("b") and l.split()[-1] in ids)]


def test_traces_are_written_as_the_cli_writes_them(core, tmp_path):
    load_pipeline(core)
    r = core.run(PIPELINE / "program.tpb", vcd=tmp_path / "run.vcd",
                 perfetto=str(tmp_path / "run.json"), trace_level="bundle",
                 trace_engines=["pool", "pe"], trace_window=(0, "1us"))
    assert (tmp_path / "run.vcd").stat().st_size > 0 and (tmp_path / "run.gtkw").exists()
    events = json.loads((tmp_path / "run.json").read_text())
    names = {e.get("args", {}).get("name") for e in events["traceEvents"] if e.get("ph") == "M"}
    assert "dve" not in names and {"pool", "pe"} <= names
    kinds = {t["kind"] for t in r.stats["traces"]}
    assert kinds == {"vcd", "perfetto"}
    cli_pipeline(tmp_path, "--vcd", tmp_path / "cli.vcd", "--trace-level", "bundle",
                 "--trace-engines", "pool,pe", "--trace-window", "0:1us")
    assert vcd_without_memory_counters(tmp_path / "run.vcd") == \
        vcd_without_memory_counters(tmp_path / "cli.vcd")


def test_bad_options_raise_before_anything_runs(core, tmp_path):
    # Python names its keywords, not the command line's flags (--trace-level).
    for kwargs, msg in [({"trace_level": "all"}, "^trace_level 'all' is not instr, bundle"),
                        ({"trace_engines": "pool,gpu"}, "^trace_engines: 'gpu' is not one of pool"),
                        ({"trace_window": "5us:1us"}, "the start is after the end"),
                        ({"max_sim_time": "10 parsecs"}, "max_sim_time"),
                        ({"max_sim_time": 0}, "must be more than 0"),
                        ({"max_wall_time": -1.0}, "max_wall_time"),
                        ({"vcd": tmp_path / "x.out", "stats": tmp_path / "x.out"}, "x.out")]:
        with pytest.raises(tpbsim.InputError, match=msg):
            core.run(".engine pool\n", **kwargs)
    assert core.now_ps == 0
    with pytest.raises(TypeError, match="program must be"):
        core.run(12)
    with pytest.raises(TypeError, match="unexpected keyword"):
        core.run(".engine pool\n", timing_mode=True)
    with pytest.raises(tpbsim.ProgramError) as e:
        core.run(".engine pool\nnot_an_op x=1\n", name="k.tpb")
    assert e.value.file == "k.tpb" and e.value.line == 2 and e.value.col == 1
    assert isinstance(e.value, ValueError)
    with pytest.raises(tpbsim.InputError, match="not a whole number of 64-byte"):
        core.run(b"\0" * 65)


def test_the_request_is_bound_by_the_keywords_names_and_checked_before_loading(core):
    """Every run keyword is a field of the bound run::SessionRequest under its own
    name (a new keyword is one field of each), and a bad value is refused before
    the program loads: the option's message, not the program's."""
    from tpbsim import _machine, _tpbsim
    req = _tpbsim.SessionRequest()
    for f in dataclasses.fields(_machine.RunOptions):
        if f.name != "name":
            assert hasattr(type(req), f.name), f.name
    with pytest.raises(tpbsim.InputError, match="^trace_level 'all'"):
        core.run(".engine pool\nnot_an_op x=1\n", trace_level="all")
    # A (start, end) pair reaches C++ as two ends, never joined into "a:b" text.
    r = core.run(".engine pool\n", trace_window=("1us", None))
    assert r.status == "ok"
    with pytest.raises(tpbsim.InputError, match=r"^trace_window: 'a:b' is not a time"):
        core.run(".engine pool\n", trace_window=("a:b", None))


def test_fault_is_an_exception_naming_the_predicates_and_the_core_stays_usable(core):
    core.write("sbuf", 0, 0, np.arange(64, dtype=np.uint8))
    with pytest.raises(tpbsim.Fault) as e:
        core.run(WORKLOADS / "invalid" / "program.tpb")
    f = e.value
    cli_err = cli("run", WORKLOADS / "invalid" / "program.tpb", check=False)
    assert cli_err.returncode == 2
    assert f.message in cli_err.stderr
    assert f.engine == "pool" and f.index == 0 and f.opcode == 0x7B and f.kind == "invalid"
    assert f.mnemonic == "tensor_dequantize"
    assert "has_valid_dequant_fmt_group_size" in f.predicates
    check = tpbsim.check(WORKLOADS / "invalid" / "program.tpb")
    assert f.predicates == check[0].predicates
    assert f.result.status == "fault" and f.result.fault["predicates"] == f.predicates
    np.testing.assert_array_equal(core.read("sbuf", 0, 0, 64, "u8"), np.arange(64))
    r = core.run(PIPELINE / "program.tpb")
    assert r.status == "ok" and r.instructions == 5


def test_deadlock_is_an_exception_naming_the_wait(core):
    with pytest.raises(tpbsim.Deadlock, match=r"pool instruction 0 waits for sem\[5\] == 1") as e:
        core.run(WORKLOADS / "deadlock" / "program.tpb")
    assert e.value.result.status == "deadlock" and e.value.result.instructions == 0
    assert core.semaphores[5] == 0
    # The host releases it: the same core, semaphore set, runs it to the end.
    core.set_semaphore(5, 1)
    r = core.run(WORKLOADS / "deadlock" / "program.tpb")
    assert r.instructions == 1


def test_watchdogs_stop_the_run_at_a_common_time(core):
    line = LINE
    prog = ".engine pool\n" + line * 2000
    with pytest.raises(tpbsim.Watchdog, match="limit") as e:
        core.run(prog, max_sim_time="10us")
    r = e.value.result
    assert r.status == "watchdog" and 0 < r.instructions < 2000
    assert all(x.end_ps <= 10**7 for x in r.retires)
    assert r.simulated_ps <= 10**7
    with pytest.raises(tpbsim.Watchdog):
        core.run(prog, max_sim_time=5 * 10**6)  # an int is ps
    assert core.now_ps <= r.simulated_ps + 5 * 10**6
    with pytest.raises(tpbsim.Watchdog, match="wall time limit"):
        core.run(".engine pool\n" + line * 200000, max_wall_time=0.05)
    # Still a core: it runs and reads.
    assert core.run(".engine pool\n" + line).instructions == 1
    assert core.read("sbuf", 0, 0x4000, 8, "u8").shape == (8,)


def test_outputs_that_cannot_be_written(core, tmp_path):
    # Refused before the run: nothing runs.
    with pytest.raises(tpbsim.InputError, match="r.txt: cannot create"):
        core.run(".engine pool\n" + LINE, retire=tmp_path / "no" / "such" / "dir" / "r.txt")
    assert core.now_ps == 0
    # Written after the run and failing (a full disk): the run is done, the
    # error names the file, the Result is there.
    with pytest.raises(tpbsim.OutputError, match="/dev/full: write failed") as e:
        core.run(".engine pool\n" + LINE * 1000, retire="/dev/full")
    assert e.value.result.status == "ok" and e.value.result.instructions == 1000
    ((path, message),) = e.value.errors
    assert path == "/dev/full" and message.startswith("/dev/full: write failed")
    # The CLI's words for the same failure.
    (tmp_path / "p.tpb").write_text(".engine pool\n" + LINE * 1000)
    p = cli("run", tmp_path / "p.tpb", "--retire", "/dev/full", check=False)
    assert p.returncode == 1 and message in p.stderr


def test_arch_mismatch_warns(make_core):
    core = make_core("cayman")
    with pytest.warns(RuntimeWarning, match=r"\.arch mariana; it runs on this core's cayman"):
        core.run(EXAMPLES / "dequant_e2m1_g0_mariana.tpb")
