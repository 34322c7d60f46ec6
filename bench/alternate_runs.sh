#!/bin/bash
# Alternating wall-clock runs of one program, for ratios on a noisy machine:
# each round runs OFF_BIN with tracing off, then every TRACED_BIN with
# default-level VCD + Perfetto traces into DIR; the trace files are removed
# before each run (pass --replace to keep them, so that each run replaces
# the last one's) and only the tpbsim command is timed. Prints the median,
# min and max wall time of each.
#
#   bench/alternate_runs.sh [--replace] ROUNDS PROGRAM.bin DIR OFF_BIN TRACED_BIN...
set -eu
replace=0
if [ "${1:-}" = --replace ]; then replace=1; shift; fi
if [ $# -lt 5 ]; then
  sed -n '2,9p' "$0" >&2
  exit 2
fi
rounds=$1 prog=$2 dir=$3 off=$4
shift 4
mkdir -p "$dir"
declare -A times
now() { date +%s.%N; }
for ((i = 0; i < rounds; i++)); do
  s=$(now); "$off" run "$prog" -q; e=$(now)
  times[off]+="$(echo "$e - $s" | bc) "
  for b in "$@"; do
    [ $replace = 1 ] || rm -f "$dir/t.vcd" "$dir/t.json" "$dir/t.gtkw"
    s=$(now); "$b" run "$prog" -q --vcd "$dir/t.vcd" --perfetto "$dir/t.json"; e=$(now)
    times[$b]+="$(echo "$e - $s" | bc) "
  done
done
for k in off "$@"; do
  printf '%s: ' "$k"
  echo ${times[$k]} | tr ' ' '\n' | sort -n |
    awk '{a[NR] = $1} END {printf "median %.3f s, min %.3f, max %.3f\n", a[int((NR + 1) / 2)], a[1], a[NR]}'
done
