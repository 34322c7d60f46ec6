#!/bin/sh
# `cmake --install` of libtpbsim_dpi (component dpi), then a C99 program
# built against the installed header and library: values from the format
# definitions, an error status with its message, and only the library's own
# functions exported. Usage: test_dpi_install.sh BUILD_DIR CMAKE CC
set -eu
build=$1 cmake=$2 cc=$3
prefix=$(mktemp -d /tmp/tpbsim-dpi-install-XXXXXX)
trap 'rm -rf "$prefix"' EXIT
"$cmake" --install "$build" --prefix "$prefix" --component dpi >/dev/null
for f in lib/libtpbsim_dpi.so include/tpbsim/tpbsim_dpi.h share/tpbsim/sv/tpbsim_dpi_pkg.sv; do
  test -e "$prefix/$f" || { echo "not installed: $f"; exit 1; }
done
cat >"$prefix/t.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <tpbsim/tpbsim_dpi.h>
int main(void) {
  unsigned lo = 0, hi = 0, code = 0;
  /* E2M1 codes 0..7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6: E5M2 0x00 0x38 0x3c 0x3e 0x40 0x42 0x44 0x46. */
  if (tpb_dpi_dequant_word(1, 0, 0, 0x76543210u, &lo, &hi) != TPB_DPI_OK) return 1;
  if (lo != 0x3e3c3800u || hi != 0x46444240u) {
    printf("dequant: %08x %08x\n", lo, hi);
    return 1;
  }
  /* 0.3 = 0x3e99999a -> E4M3 0x2a (0.3125). */
  if (tpb_dpi_from_fp32(tpb_dpi_format("e4m3"), 0x3e99999au, 1, &code) != TPB_DPI_OK || code != 0x2a)
    return 1;
  if (tpb_dpi_dequant_step(4, 8, &lo, &hi) != TPB_DPI_EARG) return 1;
  if (strstr(tpb_dpi_last_error(), "group 8 is not valid") == NULL) return 1;
  printf("%s: ok\n", tpb_dpi_version());
  return 0;
}
C
"$cc" -std=c99 -Wall -Wextra -Werror -I"$prefix/include" "$prefix/t.c" -L"$prefix/lib" \
  -ltpbsim_dpi -Wl,-rpath,"$prefix/lib" -o "$prefix/t"
"$prefix/t"
extra=$(nm -D --defined-only "$prefix/lib/libtpbsim_dpi.so" | awk '{print $3}' |
        grep -v -E '^(tpb_dpi_[a-z0-9_]+|sc_main)$' || true)
if [ -n "$extra" ]; then
  echo "exported beyond tpb_dpi_*: $extra"
  exit 1
fi
rm -rf "$prefix"
