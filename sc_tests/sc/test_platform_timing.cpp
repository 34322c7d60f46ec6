// Timing: the simulated time of a small program equals the formula from the
// timing profile (fetch + overhead + bundle cycles x trips at the engine
// clock + memory latency and beats, pipelined by the initiation interval:
// SPEC §8), and the profile loads, merges, rejects unknown keys and dumps.
#include <gtest/gtest.h>

#include <fstream>

#include "firmware_stubs/builtin_kernels.h"
#include "sc_tests/sc/test_platform_harness.h"

using namespace tpb;
using namespace tpb::platref;

namespace {

std::string retire_line(std::uint64_t end_ps, isa::Queue e, std::size_t index, std::uint8_t op) {
  sc::RetireRecord r{};
  r.engine = e, r.index = index, r.opcode = op, r.end_ps = end_ps;
  return platform::TpbCore::format_retire(r);
}

struct Retired {
  std::uint64_t start_ps, end_ps;
  std::vector<std::pair<std::string, std::uint64_t>> bundles;  // name, trips
};

}  // namespace

TEST(PlatformTiming, SimulatedTimeFollowsTheProfileFormula) {
  platform::CoreConfig cfg = platform::default_core_config(isa::Arch::Mariana);
  // 1 GHz everywhere: 1 cycle = 1 ns, so the formula is in whole ns.
  timing::merge_timing(cfg.timing, nlohmann::json::parse(R"({
    "clocks_mhz": {"pool": 1000, "dve": 1000, "pe": 1000, "sfu": 1000},
    "memory_clock_mhz": 1000,
    "instruction_overhead_cycles": 64, "issue_overhead_cycles": 0,
    "queue": {"latency_cycles": 4, "beat_cycles": 1, "beat_bytes": 64},
    "sbuf": {"latency_cycles": 10, "beat_cycles": 2, "beat_bytes": 32},
    "pool_cores": 8, "pool_vector_bytes": 64,
    "bundle_issue_cycles": {
      "pool.trampoline.entry": 1, "pool.trampoline.state_slot": 1,
      "pool.trampoline.setup_call": 1, "pool.trampoline.tail_call": 1,
      "pool.trampoline.return": 1,
      "pool.decode.entry": 1, "pool.decode.fields": 1, "pool.decode.dispatch": 1,
      "pool.decode.widen_loop": 3, "pool.decode.return": 1,
      "pool.mx8.entry": 1, "pool.mx8.div5": 1, "pool.mx8.loop": 7, "pool.mx8.return": 1
    }
  })"));
  auto* core = new platform::TpbCore("tpb", cfg);
  std::vector<std::string> retired;
  std::vector<Retired> records;
  core->set_retire_sink([&](const sc::RetireRecord& rr) {
    retired.push_back(platform::TpbCore::format_retire(rr));
    Retired x{rr.start_ps, rr.end_ps, {}};
    for (std::size_t k = 0; k < rr.num_bundles; ++k)
      x.bundles.emplace_back(rr.bundles[k].bundle->name, rr.bundles[k].trips);
    records.push_back(x);
  });
  core->load_queue(isa::Queue::Pool,
                   {// FP4 group 0, 1 channel: 16 src words -> 32 dst words (128 B).
                    dequant_inst(1, 0, 1, t3d(isa::sbuf_addr(0, 0), 1, 16),
                                 t3d(isa::sbuf_addr(0, 0x400), 1, 32)),
                    // INT4 MX, 3 channels: 20 src words (4 chunks) -> 32 dst words.
                    dequant_inst(2, 8, 3, t3d(isa::sbuf_addr(0, 0x800), 1, 20),
                                 t3d(isa::sbuf_addr(0, 0xC00), 1, 32))});
  const auto r = core->run();
  ASSERT_EQ(r.status, platform::RunStatus::Ok) << r.message;
  // Instruction 0: fetch 4+1; front end 64; trampoline entry..tail_call 4;
  // decode 1+1+1; the widen loop is a pipelined stream: 3 cycles x 32 trips
  // (max(64 B read, 128 B written) / 4 B per partition per cycle) = 96
  // compute, its lanes read 64 B = 2 beats x 2 = 4 and write 128 B = 4 x 2 =
  // 8, under the compute; its 10 ns fill hides under the 64 ns front end
  // (the first stream's requests go out during it); decode return 1;
  // trampoline return 1. Its latency is all of it; its initiation interval
  // the stream alone: 96 (SPEC §8; POOL has no minimum and no issue
  // overhead in this profile).
  const std::uint64_t s0 = 5, l0 = 64 + 4 + 3 + 96 + 1 + 1, ii0 = 96;
  const std::uint64_t t0 = s0 + l0;
  // Instruction 1: fetched from s0 on (5 ns), it starts when the engine's
  // issue is free: s0 + ii0 (it reads 0x800.., which instruction 0 does not
  // write: no interlock). Front end 64; trampoline 4; decode 3; mx8 1 + 1 +
  // the loop stream 7 x 32 trips (max(80 B, 4 chunks x 32 B) / 4) = 224,
  // lanes of 3 channels in parallel: read 80 B = 3 x 2, write 128 B = 8,
  // fill hidden as above; mx8 return 1; the empty widen loop (no access: no
  // fill); decode return 1; trampoline return 1.
  const std::uint64_t s1 = s0 + ii0, l1 = 64 + 4 + 3 + (1 + 1 + 224 + 1) + 0 + 1 + 1;
  const std::uint64_t t1 = s1 + l1;
  ASSERT_EQ(t0, 174u);
  ASSERT_EQ(t1, 401u);
  EXPECT_EQ(r.simulated_ps, t1 * 1000);
  ASSERT_EQ(retired.size(), 2u);
  EXPECT_EQ(retired[0], retire_line(t0 * 1000, isa::Queue::Pool, 0, 0x7b));
  EXPECT_EQ(retired[1], retire_line(t1 * 1000, isa::Queue::Pool, 1, 0x7b));
  EXPECT_NE(retired[0].find("174000 pool"), std::string::npos) << retired[0];
  // The structured record: issue after the 5 ns fetch, retire at t0; the
  // bundles in execution order with their trips (trampoline, then decode).
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].start_ps, s0 * 1000);
  EXPECT_EQ(records[0].end_ps, t0 * 1000);
  EXPECT_EQ(records[1].start_ps, s1 * 1000);
  EXPECT_EQ(records[1].end_ps, t1 * 1000);
  const std::vector<std::pair<std::string, std::uint64_t>> want0 = {
      {"pool.trampoline.entry", 1},      {"pool.trampoline.state_slot", 1},
      {"pool.trampoline.setup_call", 1}, {"pool.trampoline.tail_call", 1},
      {"pool.decode.entry", 1},          {"pool.decode.fields", 1},
      {"pool.decode.dispatch", 1},       {"pool.decode.widen_loop", 32},
      {"pool.decode.return", 1},         {"pool.trampoline.return", 1}};
  EXPECT_EQ(records[0].bundles, want0);
  EXPECT_NE(retired[0].find("0x7b tensor_dequantize"), std::string::npos) << retired[0];
  const auto s = core->stats();
  // Busy: an instruction in flight from 5 to 401 ns.
  EXPECT_EQ(s.engines[0].busy_cycles, t1 - s0);
  EXPECT_EQ(s.engines[0].bundles.at("pool.decode.widen_loop"), 32u);
  EXPECT_EQ(s.engines[0].bundles.at("pool.mx8.loop"), 32u);
  EXPECT_EQ(s.engines[0].memory_stall_cycles, 0u);  // compute-bound
  EXPECT_EQ(s.engines[0].bundles.at("pool.trampoline.entry"), 2u);
  EXPECT_EQ(s.engines[0].bytes_written, 128u + 3 * 128u);
  EXPECT_EQ(s.memories[0].bytes_read, 64u + 3 * 80u);
}

TEST(PlatformTiming, LoopTripsDoNotGrowWithChannels) {
  // Every partition streams in parallel (8 cores x 16 partitions, 4 B per
  // partition per cycle): 60 dst words = 240 B per partition -> 60 trips,
  // for 1 channel and for 128 alike.
  auto one = run_dequant_cases({{1, 0, t3d(0, 1, 30), t3d(0, 1, 60)}}, 1, 0, 0);
  EXPECT_EQ(one.stats.engines[0].bundles.at("pool.decode.widen_loop"), 60u);
}

TEST(PlatformTiming, LoopTripsOf128Channels) {
  auto all = run_dequant_cases({{1, 0, t3d(0, 1, 30), t3d(0, 1, 60)}}, 128, 0, 0);
  EXPECT_EQ(all.stats.engines[0].bundles.at("pool.decode.widen_loop"), 60u);
}

TEST(TimingConfig, DefaultsPerGeneration) {
  const auto v3 = timing::default_timing(isa::Arch::Cayman);
  EXPECT_EQ(v3.clock(isa::Queue::Pe), 2400u);
  EXPECT_EQ(v3.clock(isa::Queue::Dve), 960u);
  EXPECT_EQ(v3.clock(isa::Queue::Pool), 1200u);
  EXPECT_EQ(v3.sbuf_bytes_per_partition, 224u * 1024);
  const auto v4 = timing::default_timing(isa::Arch::Mariana);
  EXPECT_EQ(v4.clock(isa::Queue::Dve), 1200u);
  EXPECT_EQ(v4.sbuf_bytes_per_partition, 256u * 1024);
  // TIMING.md: about 64 cycles per instruction (the front end, latency
  // only), GpSimd's startup about 150 (holding the issue).
  EXPECT_EQ(v4.overhead(isa::Queue::Dve), 64u);
  EXPECT_EQ(v4.overhead(isa::Queue::Pe), 64u);
  EXPECT_EQ(v4.overhead(isa::Queue::Pool), 0u);
  EXPECT_EQ(v4.issue_overhead(isa::Queue::Pool), 150u);
  EXPECT_EQ(v4.issue_overhead(isa::Queue::Dve), 0u);
  // [E]: minimum initiation interval about 64 (Vector, Scalar/SFU); [A]:
  // runs of N << 128 do not overlap.
  EXPECT_EQ(v4.min_ii(isa::Queue::Dve), 64u);
  EXPECT_EQ(v4.min_ii(isa::Queue::Sfu), 64u);
  EXPECT_EQ(v4.min_ii(isa::Queue::Pe), 0u);
  EXPECT_EQ(v4.pipeline_min_stream(isa::Queue::Dve), 128u);
  EXPECT_EQ(v4.pipeline_min_stream(isa::Queue::Pe), 0u);
  const auto v2 = timing::default_timing(isa::Arch::Sunda);
  EXPECT_EQ(v2.sbuf_bytes_per_partition, 192u * 1024);
  // SPEC §8 / TIMING.md [A]: v2 PE 2.8, Vector 1.12, Scalar 1.4, GpSimd 1.4 GHz.
  EXPECT_EQ(v2.clock(isa::Queue::Pe), 2800u);
  EXPECT_EQ(v2.clock(isa::Queue::Dve), 1120u);
  EXPECT_EQ(v2.clock(isa::Queue::Sfu), 1400u);
  EXPECT_EQ(v2.clock(isa::Queue::Pool), 1400u);
  EXPECT_EQ(v3.clock(isa::Queue::Sfu), 1200u);
  // Conflicts [A] [B]: v2 SBUF and PSUM contended; v3+ only the PSUM, per bank.
  EXPECT_GT(v2.sbuf.contention_window_cycles, 0u);
  EXPECT_GT(v2.psum.contention_window_cycles, 0u);
  EXPECT_EQ(v2.psum.banks, 1u);
  EXPECT_EQ(v3.sbuf.contention_window_cycles, 0u);
  EXPECT_GT(v3.psum.contention_window_cycles, 0u);
  EXPECT_EQ(v3.psum.banks, 8u);
  // 1200 MHz: 5 cycles = 4166.67 ps -> 4167.
  EXPECT_EQ(timing::TimingConfig::cycles_to_ps(5, 1200), 4167u);
}

TEST(TimingConfig, MergeRoundTripAndErrors) {
  timing::TimingConfig c = timing::default_timing(isa::Arch::Maverick);
  timing::merge_timing(c, nlohmann::json::parse(
                              R"({"clocks_mhz": {"pe": 3000}, "sbuf": {"latency_cycles": 3},
                              "bundle_issue_cycles": {"pool.mx8.loop": 9}})"));
  EXPECT_EQ(c.clock(isa::Queue::Pe), 3000u);
  EXPECT_EQ(c.sbuf.latency_cycles, 3u);
  EXPECT_EQ(c.bundle_issue_cycles.at("pool.mx8.loop"), 9u);
  EXPECT_EQ(c.bundle_issue_cycles.count("pool.mx8.entry"), 0u);  // the stub's cycles apply
  timing::TimingConfig d = timing::default_timing(isa::Arch::Maverick);
  timing::merge_timing(d, timing::to_json(c));
  EXPECT_EQ(timing::to_json(d), timing::to_json(c));

  auto err = [](const char* text) {
    timing::TimingConfig t = timing::default_timing(isa::Arch::Mariana);
    try {
      timing::merge_timing(t, nlohmann::json::parse(text));
    } catch (const timing::TimingError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(err(R"({"sbuf": {"latency": 3}})").find("'sbuf.latency': unknown key"),
            std::string::npos);
  EXPECT_NE(err(R"({"clock": 1})").find("'clock': unknown key"), std::string::npos);
  EXPECT_NE(err(R"({"clocks_mhz": {"gpu": 1}})").find("clocks_mhz.gpu"), std::string::npos);
  EXPECT_NE(err(R"({"clocks_mhz": {"pool": 0}})").find("must not be 0"), std::string::npos);
  EXPECT_NE(err(R"({"quantum_ns": "x"})").find("quantum_ns"), std::string::npos);
  EXPECT_NE(err(R"({"arch": "cayman"})").find("'arch'"), std::string::npos);

  const std::string path = ::testing::TempDir() + "/bad_timing.json";
  std::ofstream(path) << "{\"pool_cores\": 4, \"nope\": 1}";
  timing::TimingConfig t = timing::default_timing(isa::Arch::Mariana);
  try {
    timing::merge_timing_file(t, path);
    FAIL() << "no error";
  } catch (const timing::TimingError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos) << e.what();
  }
}

TEST(PlatformTiming, EffectiveProfileListsEveryBundle) {
  auto* core = new platform::TpbCore("tpb", platform::default_core_config(isa::Arch::Mariana));
  const nlohmann::json j = core->effective_timing();
  EXPECT_EQ(j.at("arch"), "mariana");
  EXPECT_EQ(j.at("bundle_issue_cycles").at("pool.mx8.loop"), 1);
  EXPECT_EQ(j.at("bundle_issue_cycles").at("dve.qmx.pack"), 1);
  // Every bundle of every firmware stub, and nothing else.
  std::size_t bundles = 0;
  for (const auto& [va, kernel] : fw::builtin_kernels().kernels()) {
    for (const fw::Bundle& b : kernel.bundles)
      EXPECT_TRUE(j.at("bundle_issue_cycles").contains(b.name)) << b.name;
    bundles += kernel.bundles.size();
  }
  EXPECT_EQ(j.at("bundle_issue_cycles").size(), bundles);
  EXPECT_EQ(j.at("clocks_mhz").at("pool"), 1200);
}
