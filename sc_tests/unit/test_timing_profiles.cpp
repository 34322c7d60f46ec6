// The per-generation timing profiles in the repo (models/timing/profiles,
// written by scripts/gen_timing_profiles.py) are the defaults in code, every
// number has its source, and each loads as a --timing file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "firmware_stubs/builtin_kernels.h"
#include "models/kernel/kernel.h"
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
    timing::merge_timing_file(t, std::string(TPB_SOURCE_DIR) + "/models/timing/profiles/" +
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

// HBM and DMA defaults (SPEC §10), written out from TIMING.md [J, K, L]: the
// device's capacity and bandwidth over its cores, the DMA engines' table.
TEST(TimingProfiles, HbmAndDmaDefaultsPerGeneration) {
  constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
  const struct {
    isa::Arch arch;
    std::uint64_t hbm_bytes;
    std::uint32_t hbm_mbps, dma_mbps;
  } want[] = {{isa::Arch::Sunda, 16 * kGiB, 410000, 17000},      // trn1: 32 GiB, 820 GB/s, 2 cores
              {isa::Arch::Cayman, 12 * kGiB, 362500, 23000},     // trn2: 96 GiB, 2.9 TB/s, 8 cores
              {isa::Arch::Mariana, 18 * kGiB, 612500, 33000},    // trn3: 144 GiB, 4.9 TB/s, 8
              {isa::Arch::Maverick, 18 * kGiB, 612500, 33000}};  // as trn3
  for (const auto& w : want) {
    const timing::TimingConfig t = timing::default_timing(w.arch);
    EXPECT_EQ(t.hbm.bytes, w.hbm_bytes) << isa::arch_name(w.arch);
    EXPECT_EQ(t.hbm.mbytes_per_s, w.hbm_mbps) << isa::arch_name(w.arch);
    EXPECT_EQ(t.hbm.latency_ns, 100u);
    EXPECT_EQ(t.dma.engines, 16u);             // TIMING.md [J]: 16 DMA engines per core
    EXPECT_EQ(t.dma.mbytes_per_s, w.dma_mbps)  // [J, K]: 17 / 23 / 33 B/ns per engine
        << isa::arch_name(w.arch);
    EXPECT_EQ(t.dma.latency_ns, 1300u);            // TIMING.md [J, K]: about 1.3 us
    EXPECT_EQ(t.dma.transfer_cost_ns, 840u);       // per queue: fitted to [J]'s curve
    EXPECT_EQ(t.dma.engine_cost_ns, 115u);         // per engine: fitted to [N]'s GEMM
    EXPECT_EQ(t.dma_partitions_per_engine(), 8u);  // [J]: 8 SBUF partitions each
    EXPECT_EQ(isa::default_capacity(w.arch).hbm_bytes, w.hbm_bytes);
  }
  // 16 engines of 33 B/ns stay under the v4 share of 612.5 GB/s; v3's 16 x
  // 23 = 368 GB/s meet its 362.5.
  EXPECT_LT(16u * 33000u, 612500u);
  EXPECT_GT(16u * 23000u, 362500u);
}

TEST(TimingProfiles, HbmAndDmaKeysMergeAndRefuseBadValues) {
  timing::TimingConfig t = timing::default_timing(isa::Arch::Mariana);
  timing::merge_timing(t, nlohmann::json::parse(R"({"hbm": {"bytes": 1099511627776,
      "mbytes_per_s": 1000, "latency_ns": 0}, "dma": {"mbytes_per_s": 5, "latency_ns": 7}})"));
  EXPECT_EQ(t.hbm.bytes, std::uint64_t{1} << 40);
  EXPECT_EQ(t.hbm.mbytes_per_s, 1000u);
  EXPECT_EQ(t.hbm.latency_ns, 0u);
  EXPECT_EQ(t.dma.mbytes_per_s, 5u);
  EXPECT_EQ(t.dma.latency_ns, 7u);
  timing::TimingConfig back = timing::default_timing(isa::Arch::Mariana);
  timing::merge_timing(back, timing::to_json(t));
  EXPECT_EQ(timing::to_json(back), timing::to_json(t));
  const auto err = [](const char* text) {
    timing::TimingConfig c = timing::default_timing(isa::Arch::Mariana);
    try {
      timing::merge_timing(c, nlohmann::json::parse(text));
    } catch (const timing::TimingError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(err(R"({"hbm": {"bytes": 0}})"), "timing profile: key 'hbm.bytes': must not be 0");
  EXPECT_EQ(err(R"({"hbm": {"bytes": 1099511627777}})"),
            "timing profile: key 'hbm.bytes': at most 1099511627776 bytes (2^40: the core's HBM "
            "window)");
  EXPECT_EQ(err(R"({"hbm": {"bytes": -1}})"),
            "timing profile: key 'hbm.bytes': expected a non-negative integer, got -1");
  EXPECT_EQ(err(R"({"hbm": {"mbytes_per_s": 0}})"),
            "timing profile: key 'hbm.mbytes_per_s': must not be 0");
  EXPECT_EQ(err(R"({"hbm": {"latency_ns": 2000000000}})"),
            "timing profile: key 'hbm.latency_ns': an access may take at most 1099511627 ns "
            "(2^40 ps)");
  EXPECT_EQ(err(R"({"hbm": {"size": 1}})"),
            "timing profile: key 'hbm.size': unknown key (bytes, mbytes_per_s, latency_ns)");
  EXPECT_EQ(err(R"({"dma": {"engines": 0}})"), "timing profile: key 'dma.engines': must not be 0");
  EXPECT_EQ(err(R"({"dma": {"engines": 129}})"), "timing profile: key 'dma.engines': at most 128");
  EXPECT_EQ(err(R"({"dma": {"queue_weights": {"dma3": 0}}})"),
            "timing profile: key 'dma.queue_weights.dma3': must not be 0");
  EXPECT_EQ(err(R"({"dma": {"mbytes_per_s": 0}})"),
            "timing profile: key 'dma.mbytes_per_s': must not be 0");
  EXPECT_EQ(err(R"({"dma": {"queues": 8}})"),
            "timing profile: key 'dma.queues': unknown key (engines, mbytes_per_s, latency_ns, "
            "transfer_cost_ns, engine_cost_ns, queue_weights)");
  EXPECT_EQ(err(R"({"dma": 3})"), "timing profile: key 'dma': expected an object, got 3");
}

// docs/PROFILE.md is the table of timing fields, generated (TPBSIM_REGEN=1
// writes it).
TEST(TimingProfiles, FieldsDocumentEqualsTheTable) {
  const std::string path = std::string(TPB_SOURCE_DIR) + "/docs/PROFILE.md";
  const std::string want = timing::timing_fields_markdown();
  if (std::getenv("TPBSIM_REGEN")) {
    std::ofstream(path) << want;
  }
  std::ifstream in(path);
  const std::string have((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(have, want) << "docs/PROFILE.md is stale: regenerate with TPBSIM_REGEN=1 "
                           "build/sc_tests/unit_tests --gtest_filter='TimingProfiles.Fields*'";
}

// Every row of the table: its default of each generation is inside its
// limits, it reads back what it sets, and JSON names it once.
TEST(TimingProfiles, EveryFieldRoundTripsAndHasOneKey) {
  std::set<std::string> keys;
  for (const timing::TimingField& f : timing::timing_fields()) {
    EXPECT_TRUE(keys.insert(f.key).second) << f.key;
    for (isa::Arch a : kArchs) {
      const auto col = static_cast<unsigned>(a) - static_cast<unsigned>(isa::Arch::Sunda);
      EXPECT_GE(f.defaults[col], f.min) << f.key;
      EXPECT_LE(f.defaults[col], f.max) << f.key;
      EXPECT_FALSE(f.source(a).empty()) << f.key;
      timing::TimingConfig t = timing::default_timing(a);
      EXPECT_EQ(f.get(t, f.slot), f.defaults[col]) << f.key;
      f.set(t, f.slot, f.min);
      EXPECT_EQ(f.get(t, f.slot), f.min) << f.key;
    }
  }
  // The engine groups take one number for every engine.
  timing::TimingConfig t = timing::default_timing(isa::Arch::Mariana);
  timing::merge_timing(t, nlohmann::json::parse(R"({"min_ii_cycles": 7})"));
  for (unsigned e = 0; e < isa::kNumEngines; ++e) EXPECT_EQ(t.min_ii_cycles[e], 7u);
}

// The sources of a profile: an override says what it overrides.
TEST(TimingProfiles, SourcesNameOverrides) {
  timing::TimingConfig t = timing::default_timing(isa::Arch::Cayman);
  EXPECT_EQ(timing::profile_sources(isa::Arch::Cayman, t), load("cayman").at("sources"));
  t.dma.transfer_cost_ns = 500;
  const nlohmann::json s = timing::profile_sources(isa::Arch::Cayman, t);
  EXPECT_EQ(s.at("dma.transfer_cost_ns")
                .get<std::string>()
                .rfind("override of dma.transfer_cost_ns (default 840: ", 0),
            0u)
      << s.at("dma.transfer_cost_ns");
}

// TIMING.md: nothing public about v5 (maverick): its profile repeats v4's.
TEST(TimingProfiles, MaverickRepeatsMariana) {
  nlohmann::json v4 = timing::to_json(timing::default_timing(isa::Arch::Mariana));
  nlohmann::json v5 = timing::to_json(timing::default_timing(isa::Arch::Maverick));
  v4.erase("arch");
  v5.erase("arch");
  EXPECT_EQ(v5, v4);
}
