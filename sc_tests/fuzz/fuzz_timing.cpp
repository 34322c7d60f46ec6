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
#include <vector>

#include <nlohmann/json.hpp>

#include "firmware_stubs/builtin_kernels.h"
#include "models/kernel/kernel.h"
#include "models/timing/timing_profile.h"
#include "sc_tests/fuzz/fuzz_check.h"

namespace {

using namespace tpb;

}  // namespace

// Whether any object of `text`, parsed leniently, holds fewer keys than the
// text gives it: a duplicate the lenient parser dropped.
bool lenient_dropped_a_key(const std::string& text) {
  std::vector<std::size_t> given;
  bool dropped = false;
  try {
    const nlohmann::json whole = nlohmann::json::parse(
        text, [&](int, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) {
          using E = nlohmann::json::parse_event_t;
          if (ev == E::object_start) given.push_back(0);
          if (ev == E::key && !given.empty()) ++given.back();
          if (ev == E::object_end && !given.empty()) {
            if (parsed.is_object() && parsed.size() < given.back()) dropped = true;
            given.pop_back();
          }
          return true;
        });
    (void)whole;
  } catch (const nlohmann::json::exception&) {
  }
  return dropped;
}

// As `tpbsim run --timing` applies a profile: merged on the defaults, the
// kernels' bundle costs resolved from it.
void apply_profile(timing::TimingConfig& c, const nlohmann::json& j) {
  timing::merge_timing(c, j);
  (void)fw::builtin_kernels().resolve_costs(c);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 16 * 1024) return -1;
  const std::string text(reinterpret_cast<const char*>(data), size);
  nlohmann::json j;
  try {
    // As `tpbsim run --timing` parses: strict (a key given twice is refused).
    j = timing::parse_json_strict(text);
  } catch (const timing::TimingError& e) {
    FUZZ_CHECK(e.what()[0] != '\0', "TimingError without a message");
    return 0;
  } catch (const std::exception& e) {
    FUZZ_CHECK(false, "strict parse threw something else: %s", e.what());
  }
  FUZZ_CHECK(!lenient_dropped_a_key(text), "a duplicate key was accepted: %s", text.c_str());
  isa::Arch arch = isa::Arch::Mariana;
  bool named = false;
  if (j.is_object() && j.contains("arch") && j["arch"].is_string())
    named = isa::parse_arch(j["arch"].get<std::string>(), arch);
  timing::TimingConfig c = timing::default_timing(arch);
  try {
    apply_profile(c, j);
  } catch (const timing::TimingError& e) {
    FUZZ_CHECK(e.what()[0] != '\0', "TimingError without a message");
    // A generation's name in any case or its alias names that generation:
    // the profile without its "arch" fails as well. (Not a search of the
    // message for "key 'arch'": a refused key of the input may hold that
    // text, as one the fuzzer made did.)
    if (named) {
      nlohmann::json rest = j;
      rest.erase("arch");
      timing::TimingConfig plain = timing::default_timing(arch);
      bool refused = false;
      try {
        apply_profile(plain, rest);
      } catch (const timing::TimingError&) {
        refused = true;
      }
      FUZZ_CHECK(refused, "an arch that parse_arch takes is refused: %s", e.what());
    }
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
