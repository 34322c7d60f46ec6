// Fuzz target: the race check against its brute-force oracle
// (sc_tests/race_oracle.h, docs/FUZZING.md).
//
// Input: the bytes choose a small program (which of pool, dve, dma0, dma1
// run, 1-3 instructions each, their EVENTS on two counting semaphores, their
// accesses to three locations), then the interleaving the detector sees.
// Property: the detector reports no pair of accesses the oracle (every
// reachable state of the program's semaphore semantics) says are ordered, a
// race on every location the oracle has one on, exactly the oracle's pairs
// when each location has one writer and one access per agent, and no
// counting semaphore as timing-dependent.
#include <cstdint>

#include "sc_tests/fuzz/fuzz_check.h"
#include "sc_tests/race_oracle.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tpb::race::oracle;
  ByteChoices choices(data, size);
  const Program p = make_program(choices);
  const Outcome o = check(p, choices);
  FUZZ_CHECK(o.failure.empty(), "%s", o.failure.c_str());
  return 0;
}
