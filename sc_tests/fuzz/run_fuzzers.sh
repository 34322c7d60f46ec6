#!/usr/bin/env bash
# Runs every libFuzzer target of a TPBSIM_FUZZ build (make fuzz, .ci/run).
#   sc_tests/fuzz/run_fuzzers.sh BUILD_DIR [SECONDS [JOBS [TARGET...]]]
# Each target fuzzes for SECONDS (default 60), JOBS (default 2) targets at a
# time, niced, starting from its seed corpus and regression inputs, which it
# only reads: new inputs go to BUILD_DIR/fuzz/<target>/corpus, crashers to
# BUILD_DIR/fuzz/<target>/ (crash-*, leak-*, timeout-*, oom-*), the log to
# BUILD_DIR/fuzz/<target>.log. Prints one summary line per target (executions,
# exec/s, coverage) and fails when any target found something: then copy the
# input into sc_tests/fuzz/regressions/<target>/ with the fix (docs/FUZZING.md).
set -uo pipefail
build=${1:?usage: run_fuzzers.sh BUILD_DIR [SECONDS [JOBS [TARGET...]]]}
seconds=${2:-60}
jobs=${3:-2}
shift $(($# < 3 ? $# : 3))
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(decode asm npy timing mem_spec run race)
src=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$build" && pwd)

run_one() {
  local t=$1 work="$build/fuzz/$1"
  rm -rf "$work" && mkdir -p "$work/corpus"
  local dirs=("$work/corpus" "$src/corpus/$t")
  [ -d "$src/regressions/$t" ] && dirs+=("$src/regressions/$t")
  local dict=()
  [ -f "$src/dict/$t.dict" ] && dict=(-dict="$src/dict/$t.dict")
  nice -n 10 "$build/sc_tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=60 \
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$work/" "${dict[@]}" \
    "${dirs[@]}" >"$build/fuzz/$t.log" 2>&1
  local rc=$?
  local runs rate cov
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/fuzz/$t.log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$build/fuzz/$t.log")
  cov=$(grep -o 'cov: [0-9]*' "$build/fuzz/$t.log" | tail -1)
  if [ $rc -eq 0 ]; then
    echo "fuzz_$t: ok, ${runs:-?} executions in ${seconds} s (${rate:-?} exec/s), $cov"
  else
    echo "fuzz_$t: FAILED (exit $rc) after ${runs:-?} executions; see $build/fuzz/$t.log"
    ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* 2>/dev/null
    tail -40 "$build/fuzz/$t.log"
  fi
  return $rc
}
export -f run_one
export build src seconds
mkdir -p "$build/fuzz"
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}'
