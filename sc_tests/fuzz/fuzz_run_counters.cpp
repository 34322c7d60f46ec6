// The inline 8-bit coverage counters of a -fsanitize=fuzzer[-no-link] binary:
// the linker's bounds of its __sancov_cntrs section (one section over the
// whole static binary), for fuzz_run.cpp to carry a child's coverage back to
// its parent. Compiled without coverage (sc_tests/fuzz/CMakeLists.txt): in an
// instrumented file the compiler's own references to these symbols and
// these would clash, and libFuzzer would be handed an empty range. Null in a
// build without coverage.
#include <cstddef>
#include <cstdint>

extern "C" {
extern std::uint8_t __start___sancov_cntrs[] __attribute__((weak, visibility("hidden")));
extern std::uint8_t __stop___sancov_cntrs[] __attribute__((weak, visibility("hidden")));
}

std::uint8_t* fuzz_counters_begin() { return __start___sancov_cntrs; }

std::size_t fuzz_counters_size() {
  const std::uint8_t* begin = __start___sancov_cntrs;
  const std::uint8_t* end = __stop___sancov_cntrs;
  if (!begin || end <= begin) return 0;
  return static_cast<std::size_t>(end - begin);
}
