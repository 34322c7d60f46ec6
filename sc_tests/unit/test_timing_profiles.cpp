// The per-generation timing profiles in the repo (models/timing/profiles,
// written by scripts/gen_timing_profiles.py) are the defaults in code, every
// number has its source, and each loads as a --timing file.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "firmware_stubs/kernel.h"
#include "models/timing/timing_profile.h"

using namespace tpb;

namespace {

nlohmann::json load(const std::string& arch) {
  std::ifstream in(std::string(TPB_SOURCE_DIR) + "/models/timing/profiles/" + arch + ".json");
  EXPECT_TRUE(in.good()) << arch;
  nlohmann::json j;
  in >> j;
  return j;
}

// The effective profile: the defaults with every bundle's stub cycles.
nlohmann::json effective(isa::Arch a) {
  timing::TimingConfig t = timing::default_timing(a);
  for (const auto& [name, cycles] : fw::builtin_kernels().bundle_cycles())
    t.bundle_issue_cycles.emplace(name, cycles);
  return timing::to_json(t);
}

const isa::Arch kArchs[] = {isa::Arch::Sunda, isa::Arch::Cayman, isa::Arch::Mariana,
                            isa::Arch::Maverick};

}  // namespace

TEST(TimingProfiles, FilesEqualTheDefaultsInCode) {
  for (isa::Arch a : kArchs) {
    nlohmann::json file = load(std::string(isa::arch_name(a)));
    ASSERT_TRUE(file.contains("sources"));
    file.erase("sources");
    EXPECT_EQ(file, effective(a))
        << isa::arch_name(a)
        << ": stale; regenerate with scripts/gen_timing_profiles.py build/tpbsim";
  }
}

TEST(TimingProfiles, EveryNumberHasASource) {
  for (isa::Arch a : kArchs) {
    const nlohmann::json file = load(std::string(isa::arch_name(a)));
    const nlohmann::json& src = file.at("sources");
    for (auto it = file.begin(); it != file.end(); ++it) {
      if (it.key() == "sources") continue;
      // A key is sourced whole ("queue") or member by member ("sbuf.banks").
      if (src.contains(it.key())) continue;
      ASSERT_TRUE(it->is_object()) << isa::arch_name(a) << ": no source for " << it.key();
      for (auto m = it->begin(); m != it->end(); ++m)
        EXPECT_TRUE(src.contains(it.key() + "." + m.key()))
            << isa::arch_name(a) << ": no source for " << it.key() << "." << m.key();
    }
  }
}

TEST(TimingProfiles, EachLoadsAsATimingFileOverItsGeneration) {
  for (isa::Arch a : kArchs) {
    timing::TimingConfig t = timing::default_timing(a);
    timing::merge_timing_file(
        t, std::string(TPB_SOURCE_DIR) + "/models/timing/profiles/" +
               std::string(isa::arch_name(a)) + ".json");
    nlohmann::json j = timing::to_json(t);
    EXPECT_EQ(j, effective(a)) << isa::arch_name(a);
  }
  // A profile for another generation is refused, naming the key.
  timing::TimingConfig v3 = timing::default_timing(isa::Arch::Cayman);
  EXPECT_THROW(timing::merge_timing_file(
                   v3, std::string(TPB_SOURCE_DIR) + "/models/timing/profiles/mariana.json"),
               timing::TimingError);
}
