"""scripts/trace_picture.py: a run's Perfetto trace drawn as a timeline. The
tracks it reads from a real run are the engines that ran, in the trace's
order, each instruction the run retired a box (counted against the run's
retire list), and a picture is written."""

import importlib.util
import json

import numpy as np

import tpbsim
from conftest import SOURCE_DIR

_spec = importlib.util.spec_from_file_location("trace_picture",
                                               SOURCE_DIR / "scripts" / "trace_picture.py")
tp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tp)

PROGRAM = """.arch mariana
.engine pool
tensor_copy channels=1 out_dtype=fp32 src=t3d(sbuf(0, 0x0), num=[64, 1, 1]) \\
    dst=t3d(sbuf(0, 0x400), num=[64, 1, 1]) update=inc(sem1)
.engine dve
tensor_copy channels=1 out_dtype=fp32 src=t3d(sbuf(0, 0x400), num=[64, 1, 1]) \\
    dst=t3d(sbuf(0, 0x800), num=[64, 1, 1]) wait=ge(sem1, 1)
tensor_copy channels=1 out_dtype=fp32 src=t3d(sbuf(0, 0x800), num=[64, 1, 1]) \\
    dst=t3d(sbuf(0, 0xc00), num=[64, 1, 1])
"""


def test_a_runs_tracks_and_instructions(tmp_path):
    trace = tmp_path / "t.json"
    with tpbsim.Core("mariana") as core:
        core.write("sbuf", 0, 0, np.arange(64, dtype=np.float32))
        r = core.run(PROGRAM, perfetto=str(trace))
    tracks = tp.read_tracks(json.loads(trace.read_text())["traceEvents"])
    by_name = {t["name"]: t for t in tracks}
    # pool before dve (the trace's sort order), and an instruction box per
    # retired instruction of each engine, in time order.
    names = [t["name"] for t in tracks]
    assert names.index("pool") < names.index("dve")
    retired = {e: sum(1 for x in r.retires if x.engine == e) for e in ("pool", "dve")}
    assert retired == {"pool": 1, "dve": 2}
    for e, n in retired.items():
        boxes = by_name[e]["instructions"]
        assert len(boxes) == n and all(b[2] == "tensor_copy" for b in boxes)
        assert [b[0] for b in boxes] == sorted(b[0] for b in boxes)
        assert by_name[e]["bundles"], e  # the kernel's bundles under it
    # The DVE's first copy waits for the POOL's: it starts after it ends.
    pool_end = sum(by_name["pool"]["instructions"][0][:2])
    assert by_name["dve"]["instructions"][0][0] >= pool_end
    out = tmp_path / "t.png"
    tp.main([str(trace), "-o", str(out), "--title", "t"])
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_window_keeps_what_overlaps_it():
    tracks = [{"name": "a", "instructions": [(0.0, 1.0, "x"), (5.0, 1.0, "y")],
               "bundles": [(0.0, 0.5), (5.5, 0.2)], "counters": {"sem1": [(1.0, 1.0)]}},
              {"name": "b", "instructions": [(9.0, 1.0, "z")], "bundles": [], "counters": {}}]
    got = tp.clip(tracks, 4.0, 7.0)
    assert [t["name"] for t in got] == ["a"]
    assert got[0]["instructions"] == [(5.0, 1.0, "y")]
    assert got[0]["bundles"] == [(5.5, 0.2)]
    assert got[0]["counters"] == {"sem1": []}
