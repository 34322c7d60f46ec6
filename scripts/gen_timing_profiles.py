#!/usr/bin/python3
"""Writes models/timing/profiles/<arch>.json: each generation's default timing
profile with the source of every number under "sources" — exactly what
`tpbsim run --arch ARCH --dump-timing FILE` prints, which makes both from the
one table of timing fields (models/timing/timing_fields.cpp) — and
docs/PROFILE.md, the table as a document (written by the unit test
TimingProfiles.FieldsDocumentEqualsTheTable under TPBSIM_REGEN=1, from the
unit_tests binary of TPBSIM's build).

  gen_timing_profiles.py TPBSIM [OUTDIR]

A unit test (TimingProfiles.*) checks that the files equal the defaults in
code and that every key has a source, so neither can drift.
"""
import os
import json
import pathlib
import subprocess
import sys
import tempfile

ARCHS = ["sunda", "cayman", "mariana", "maverick"]


def main():
    tpbsim = sys.argv[1]
    out = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "models/timing/profiles")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        prog = pathlib.Path(d) / "empty.tpb"
        prog.write_text("# no instructions: only the effective profile is wanted\n")
        for arch in ARCHS:
            eff = pathlib.Path(d) / f"{arch}.json"
            subprocess.run([tpbsim, "run", str(prog), "--arch", arch, "-q", "--dump-timing",
                            str(eff)], check=True)
            j = json.loads(eff.read_text())
            (out / f"{arch}.json").write_text(json.dumps(j, indent=2, sort_keys=True) + "\n")
            print(f"wrote {out / (arch + '.json')}")
    unit = pathlib.Path(tpbsim).resolve().parent / "sc_tests" / "unit_tests"
    if unit.is_file():
        subprocess.run([str(unit), "--gtest_filter=TimingProfiles.FieldsDocumentEqualsTheTable"],
                       check=True, stdout=subprocess.DEVNULL,
                       env=dict(os.environ, TPBSIM_REGEN="1"))
        print("wrote docs/PROFILE.md")
    else:
        print(f"note: {unit} not built: docs/PROFILE.md not rewritten")


if __name__ == "__main__":
    main()
