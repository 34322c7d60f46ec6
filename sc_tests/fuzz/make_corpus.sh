#!/usr/bin/env bash
# Regenerates the binary seeds of the decode and run targets from the text
# seeds of the asm target (docs/FUZZING.md):
#   sc_tests/fuzz/make_corpus.sh build/tpbsim
# decode: every distinct 64-byte word of every example, one file each;
# run: every example whose words fit the run target, as a binary.
set -euo pipefail
tpbsim=$(realpath "${1:?usage: make_corpus.sh TPBSIM}")
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in corpus/asm/*.tpb; do
  n=$(basename "$f" .tpb)
  "$tpbsim" asm "$f" -o "$tmp/$n.bin" >/dev/null 2>&1 || continue
  size=$(stat -c %s "$tmp/$n.bin")
  [ "$size" -gt 0 ] && [ "$size" -le $((16 * 64)) ] && cp "$tmp/$n.bin" "corpus/run/$n.bin"
  split -b 64 -d -a 3 "$tmp/$n.bin" "$tmp/$n.w"
done
for w in "$tmp"/*.w*; do
  cp "$w" "corpus/decode/$(sha1sum "$w" | cut -c1-16).bin"
done
