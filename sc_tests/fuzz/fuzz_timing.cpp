// Fuzz target: the timing profile JSON reader of `tpbsim run --timing`
// (docs/FUZZING.md, SPEC §8).
//
// Input: the bytes of a profile. It is parsed as JSON and merged over the
// defaults of its "arch" (MARIANA when it names none or an unknown one), then
// the bundle overrides are resolved against the built-in kernels, as the
// CLI does. Properties:
//   - bad JSON is a json exception, a bad profile a TimingError, nothing else;
//   - a profile that merged is its own fixed point: merging its to_json()
//     over the defaults gives the same profile;
//   - every clock is non-zero and every conversion to picoseconds is at most
//     TimingConfig::kMaxPs (no wrap).
#include <string>

#include <nlohmann/json.hpp>

#include "firmware_stubs/kernel.h"
#include "models/timing/timing_profile.h"
#include "sc_tests/fuzz/fuzz_check.h"

namespace {

using namespace tpb;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 16 * 1024) return -1;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(data, data + size);
  } catch (const nlohmann::json::exception&) {
    return 0;
  }
  isa::Arch arch = isa::Arch::Mariana;
  if (j.is_object() && j.contains("arch") && j["arch"].is_string())
    (void)isa::parse_arch(j["arch"].get<std::string>(), arch);
  timing::TimingConfig c = timing::default_timing(arch);
  try {
    timing::merge_timing(c, j);
    (void)fw::builtin_kernels().resolve_costs(c);
  } catch (const timing::TimingError& e) {
    FUZZ_CHECK(e.what()[0] != '\0', "TimingError without a message");
    return 0;
  }
  timing::TimingConfig again = timing::default_timing(arch);
  try {
    timing::merge_timing(again, timing::to_json(c));
  } catch (const timing::TimingError& e) {
    FUZZ_CHECK(false, "the effective profile does not merge back: %s", e.what());
  }
  FUZZ_CHECK(timing::to_json(again) == timing::to_json(c), "to_json / merge_timing differ:\n%s",
             timing::to_json(c).dump().c_str());
  for (unsigned e = 0; e < isa::kNumEngines; ++e) {
    FUZZ_CHECK(c.clock_mhz[e] != 0, "engine %u clock 0 MHz", e);
    FUZZ_CHECK(timing::TimingConfig::cycles_to_ps(~std::uint64_t{0}, c.clock_mhz[e]) <=
                   timing::TimingConfig::kMaxPs,
               "cycles_to_ps past kMaxPs");
  }
  FUZZ_CHECK(c.memory_clock_mhz != 0, "memory clock 0 MHz");
  FUZZ_CHECK(c.pool_bytes_per_partition_cycle() >= 1, "POOL moves 0 bytes per cycle");
  return 0;
}
