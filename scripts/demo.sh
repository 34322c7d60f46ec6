#!/usr/bin/env bash
# Runs the default workload and writes its VCD, Perfetto trace, stats and
# retire trace. Usage: scripts/demo.sh TPBSIM OUTDIR
set -euo pipefail
tpbsim=$(realpath "${1:-build/tpbsim}")
out=${2:-out/demo}
here=$(cd "$(dirname "$0")/.." && pwd)
wl="$here/traces/workloads/${DEMO_WORKLOAD:-pipeline}"
mkdir -p "$out"
out=$(cd "$out" && pwd)

echo "== tpbsim check (every predicate of every instruction, MARIANA)"
"$tpbsim" check "$wl/program.tpb" --arch mariana || true

echo
echo "== tpbsim convert (the format calculator)"
"$tpbsim" convert fp32 e4m3 0.3 464 -1e9
"$tpbsim" convert fp4_e2m1 e5m2 0x7 0xf

echo
echo "== tpbsim run (the default workload: $(head -n1 "$wl/README.md" 2>/dev/null | sed 's/^# //'))"
# cmd.txt holds the run arguments relative to the workload directory.
args=$(grep -v '^#' "$wl/cmd.txt" | tr '\n' ' ')
(cd "$wl" && eval "\"$tpbsim\" run $args --vcd \"$out/demo.vcd\" --perfetto \"$out/demo.perfetto.json\" \
   --stats \"$out/demo.stats.json\" --retire \"$out/demo.retire.txt\" --dump-timing \"$out/timing.json\"" )
mv -f "$wl"/out*.npy "$out"/ 2>/dev/null || true

echo
echo "== output written to $out:"
ls -l "$out"
if command -v /usr/bin/python3 >/dev/null && ls "$out"/*.npy >/dev/null 2>&1; then
  /usr/bin/python3 - "$out" "$wl" <<'PY'
import sys, glob, numpy as np
out, wl = sys.argv[1], sys.argv[2]
got = np.load(sorted(glob.glob(out + "/*.npy"))[0])
exp = np.load(wl + "/expected.npy")
print("dumped output matches the independently computed expected.npy:", bool((got.view(np.uint8) == exp.view(np.uint8)).all()))
PY
fi
echo
echo "open the waveform:  gtkwave $out/demo.gtkw   (the VCD, grouped, whole run in view)"
echo "open the timeline:  https://ui.perfetto.dev  (load $out/demo.perfetto.json)"
