// DVE QuantizeMX timing (simulated time = the profile formula), the
// --mx-emax setting through the core, and
// two instruction streams (POOL TensorDequantize, DVE QuantizeMX) ordered
// only by semaphores, with a deadlock variant.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <unordered_map>

#include "firmware_stubs/dve/quantize_mx.h"
#include "models/sc/engine/kernel_info_table.h"
#include "sc_tests/sc/test_dve_quantize_mx_bench.h"
#include "sc_tests/sc/test_platform_ref.h"

using namespace tpb;
using namespace tpb::dveref;
using isa::Dtype;

namespace {

// 1 GHz everywhere, so 1 cycle = 1 ns and every term is a whole number.
const char* kProfile1GHz = R"({
  "clocks_mhz": {"pool": 1000, "dve": 1000, "pe": 1000, "sfu": 1000},
  "memory_clock_mhz": 1000,
  "instruction_overhead_cycles": 64,
  "queue": {"latency_cycles": 4, "beat_cycles": 1, "beat_bytes": 64},
  "sbuf": {"latency_cycles": 10, "beat_cycles": 2, "beat_bytes": 32}
})";

platform::CoreConfig config_1ghz() {
  platform::CoreConfig cfg = platform::default_core_config(isa::Arch::Mariana);
  timing::merge_timing(cfg.timing, nlohmann::json::parse(kProfile1GHz));
  return cfg;
}

struct Retire {
  std::uint64_t ps;
  std::string engine;
  std::size_t index;
};
Retire parse_retire(const std::string& line) {
  std::istringstream in(line);
  Retire r{};
  in >> r.ps >> r.engine >> r.index;
  return r;
}

}  // namespace

TEST(DveQuantizeMxTiming, SimulatedTimeFollowsTheProfileFormula) {
  platform::CoreConfig cfg = config_1ghz();
  // An override by bundle name: the loop's initiation interval becomes 2.
  cfg.timing.bundle_issue_cycles["dve.qmx.pack"] = 2;
  auto* core = new platform::TpbCore("tpb", cfg);
  std::vector<std::string> retired;
  core->set_retire_sink(
      [&](const sc::RetireRecord& rr) { retired.push_back(platform::TpbCore::format_retire(rr)); });
  core->load_queue(isa::Queue::Dve,
                   {// FP32, 32 channels, 96 elements -> 24 x4 words per partition.
                    qmx_inst(Dtype::Fp32, true, 32, t3(isa::sbuf_addr(0, 0), 1, 96),
                             isa::sbuf_addr(0, 0x1000), isa::sbuf_addr(0, 0x2000), 24),
                    // BF16, 64 channels, 32 elements -> 8 x4 words at step 2 (one write each).
                    qmx_inst(Dtype::Bf16, false, 64, t3(isa::sbuf_addr(0, 0x3000), 1, 32),
                             isa::sbuf_addr(0, 0x4000), isa::sbuf_addr(0, 0x5000), 8, 2)});
  const auto r = core->run();
  ASSERT_EQ(r.status, platform::RunStatus::Ok) << r.message;
  // fetch (4 + 1) + overhead 64 + trampoline call8 1 + L2 stub 4 + 1 + call
  // helper 3; the body from extract to scatter is one pipelined stream: its
  // compute (extract, capture, divide, normalize 4 + pack II x cols + one
  // scatter trip, the scale rows in parallel lanes) overlaps the partition
  // lanes' reads and writes, which take less here; its 10 ns fill hides
  // under the 64 ns fixed overhead; then return 1, trampoline jump 1, exit 1.
  // Instruction 0 lanes: read 384 B = 12 beats x 2 = 24; write 96 B = 6, + a
  // scale row of 24 B = 2 on partitions 0..3. Instruction 1: read 64 B = 4;
  // 8 single-word writes = 16, + 2 on the 8 scale partitions.
  const std::uint64_t t0 = 5 + 64 + 1 + 5 + 3 + (4 + 2 * 24 + 1) + 3;
  const std::uint64_t t1 = 5 + 64 + 1 + 5 + 3 + (4 + 2 * 8 + 1) + 3;
  ASSERT_GT(4u + 2 * 24 + 1, 24u);  // compute-bound: the lanes stay under it
  ASSERT_GT(4u + 2 * 8 + 1, 18u);
  ASSERT_EQ(t0, 134u);
  ASSERT_EQ(t1, 102u);
  // SPEC §8: instruction 1's fetch (5) runs while instruction 0 executes; a
  // stream of 53 cycles is under the DVE's 128 (TIMING.md [A]: N << 128
  // does not overlap), so instruction 0 holds the issue for its whole
  // latency and instruction 1 starts when it completes, at t0.
  const std::uint64_t end1 = t0 + (t1 - 5);
  EXPECT_EQ(r.simulated_ps, end1 * 1000);
  ASSERT_EQ(retired.size(), 2u);
  EXPECT_EQ(parse_retire(retired[0]).ps, t0 * 1000) << retired[0];
  EXPECT_EQ(parse_retire(retired[1]).ps, end1 * 1000) << retired[1];
  EXPECT_NE(retired[0].find("dve"), std::string::npos) << retired[0];
  EXPECT_NE(retired[0].find("0xe3"), std::string::npos) << retired[0];
  const auto s = core->stats();
  const auto& dve = s.engines[static_cast<unsigned>(isa::Queue::Dve)];
  EXPECT_EQ(dve.instructions, 2u);
  EXPECT_EQ(dve.busy_cycles, end1 - 5);  // in flight from the first issue to the end
  EXPECT_EQ(dve.bundles.at("dve.qmx.pack"), 24u + 8u);
  EXPECT_EQ(dve.bundles.at("dve.qmx.scatter"), 1u + 1u);
  EXPECT_EQ(dve.bundles.at("dve.trampoline.call8"), 2u);
  EXPECT_EQ(dve.bytes_read, 32u * 384 + 64u * 64);
  EXPECT_EQ(dve.bytes_written, 32u * 96 + 4u * 24 + 64u * 32 + 8u * 8);
  const nlohmann::json eff = core->effective_timing();
  EXPECT_EQ(eff.at("bundle_issue_cycles").at("dve.qmx.pack"), 2);
  EXPECT_EQ(eff.at("bundle_issue_cycles").at("dve.qmx_stub.fields"), 4);
}

TEST(DveQuantizeMxTiming, DefaultProfileRunsAtTheDveClock) {
  // MARIANA DVE 1.2 GHz: the compute part of a 128-channel, 64-column op
  // (64 + 1 + 5 + 3 + 4 + 64 + 1 + 3 = 145 cycles) is 120.83 ns; the whole
  // instruction is at least that plus the fetch.
  auto* core = new platform::TpbCore("tpb", platform::default_core_config(isa::Arch::Mariana));
  core->load_queue(isa::Queue::Dve,
                   {qmx_inst(Dtype::Fp32, true, 128, t3(isa::sbuf_addr(0, 0), 1, 256),
                             isa::sbuf_addr(0, 0x1000), isa::sbuf_addr(0, 0x2000), 64)});
  const auto r = core->run();
  ASSERT_EQ(r.status, platform::RunStatus::Ok) << r.message;
  EXPECT_GE(r.simulated_ps, timing::TimingConfig::cycles_to_ps(145, 1200));
  const auto s = core->stats();
  EXPECT_EQ(s.engines[1].clock_mhz, 1200u);
  EXPECT_EQ(s.engines[1].bundles.at("dve.qmx.pack"), 64u);
  EXPECT_EQ(s.engines[1].bundles.at("dve.qmx.scatter"), 1u);  // 16 scale rows, parallel lanes
}

// ---- the two-stream test -----------------------------------------------------

namespace {

isa::Events events(std::uint8_t wait_mode, std::uint8_t wait_idx, std::uint8_t update_mode,
                   std::uint8_t update_idx, std::uint32_t value) {
  isa::Events e{};
  e.wait_mode = wait_mode, e.wait_idx = wait_idx;
  e.update_mode = update_mode, e.update_idx = update_idx;
  e.sem_value = value;
  return e;
}

std::vector<std::uint32_t> words_at(platform::TpbCore& core, unsigned p, std::uint32_t off,
                                    std::size_t n) {
  std::vector<std::uint32_t> w(n);
  core.dump_memory(isa::sbuf_addr(p, off), w.data(), n * 4);
  return w;
}

}  // namespace

TEST(DveQuantizeMxStreams, PoolAndDveOrderedOnlyBySemaphores) {
  // POOL 0: FP4 codes A -> E5M2 bytes B, then sem1 += 1.
  // DVE 0: waits sem1 >= 1; B read as FP16 -> MXFP8 E4M3 words C + scales;
  //        then sem2 += 1.
  // POOL 1: waits sem2 >= 1; C read as FP4 codes -> E5M2 bytes D.
  // Each consumer reads what its producer wrote, so the order is visible in
  // the data as well as in the retire times.
  auto* core = new platform::TpbCore("tpb", config_1ghz());
  std::vector<std::string> retired;
  core->set_retire_sink(
      [&](const sc::RetireRecord& rr) { retired.push_back(platform::TpbCore::format_retire(rr)); });
  std::vector<std::vector<std::uint32_t>> a(32);
  const std::vector<std::uint8_t> guard(0x400, 0xA5);
  for (unsigned p = 0; p < 32; ++p) {
    a[p] = platref::make_words(16, 500 + p, 0);
    core->load_memory(isa::sbuf_addr(p, 0), a[p].data(), 64);
    for (std::uint32_t off : {0x1000u, 0x2000u, 0x3000u, 0x4000u})
      core->load_memory(isa::sbuf_addr(p, off), guard.data(), guard.size());
  }
  core->load_queue(
      isa::Queue::Pool,
      {platref::dequant_inst(1, 0, 32, t3(isa::sbuf_addr(0, 0), 1, 16),
                             t3(isa::sbuf_addr(0, 0x1000), 1, 32), events(0, 0, 1, 1, 0)),
       platref::dequant_inst(1, 0, 32, t3(isa::sbuf_addr(0, 0x2000), 1, 16),
                             t3(isa::sbuf_addr(0, 0x4000), 1, 32), events(2, 2, 0, 0, 1))});
  core->load_queue(isa::Queue::Dve,
                   {qmx_inst(Dtype::Fp16, true, 32, t3(isa::sbuf_addr(0, 0x1000), 1, 64),
                             isa::sbuf_addr(0, 0x2000), isa::sbuf_addr(0, 0x3000), 16, 1, 0,
                             events(2, 1, 1, 2, 1))});
  const auto r = core->run();
  ASSERT_EQ(r.status, platform::RunStatus::Ok) << r.message;
  ASSERT_EQ(r.instructions, 3u);

  // Order and times.
  ASSERT_EQ(retired.size(), 3u);
  const Retire p0 = parse_retire(retired[0]), d0 = parse_retire(retired[1]),
               p1 = parse_retire(retired[2]);
  EXPECT_EQ(p0.engine, "pool");
  EXPECT_EQ(p0.index, 0u);
  EXPECT_EQ(d0.engine, "dve");
  EXPECT_EQ(p1.engine, "pool");
  EXPECT_EQ(p1.index, 1u);
  // The DVE wakes when POOL 0 retires and updates sem1, then runs alone:
  // overhead 64 + call8 1 + stub 5 + helper 3 + the body's stream (compute 4
  // + 16 cols + 1 scatter = 21 over lanes of read 128 B = 8 and write 64 B
  // + 16 B of scales = 6; its fill hidden under the overhead) + return,
  // jump, exit 3. Its fetch happened before the wait.
  const std::uint64_t dve_ns = 64 + 1 + 5 + 3 + 21 + 3;
  ASSERT_EQ(dve_ns, 97u);
  EXPECT_EQ(d0.ps, p0.ps + dve_ns * 1000);
  // POOL 1 (fetched at once, then blocked) starts when the DVE updates sem2.
  EXPECT_GE(p1.ps, d0.ps + 64 * 1000);
  const auto s = core->stats();
  EXPECT_EQ(s.engines[1].stall_cycles, p0.ps / 1000 - 5);  // from its fetch to POOL 0's retire
  EXPECT_GT(s.engines[0].stall_cycles, 0u);
  EXPECT_EQ(core->semaphores().get(1), 1u);
  EXPECT_EQ(core->semaphores().get(2), 1u);

  // Data: B, C + scales, D against the references.
  std::vector<std::vector<std::uint32_t>> b(32), fp16(32), c(32);
  for (unsigned p = 0; p < 32; ++p) {
    b[p] = platref::dequant_ref(1, 0, a[p]);
    EXPECT_EQ(words_at(*core, p, 0x1000, 32), b[p]) << "B partition " << p;
    for (std::uint32_t w : b[p]) fp16[p].push_back(w & 0xFFFF), fp16[p].push_back(w >> 16);
  }
  const QmxResult q = quantize_ref(Dtype::Fp16, true, false, fp16);
  for (unsigned p = 0; p < 32; ++p) {
    c[p] = words_at(*core, p, 0x2000, 16);
    EXPECT_EQ(c[p], q.words[p]) << "C partition " << p;
    EXPECT_EQ(words_at(*core, p, 0x4000, 32), platref::dequant_ref(1, 0, q.words[p]))
        << "D partition " << p;
  }
  for (unsigned row = 0; row < 4; ++row)
    EXPECT_EQ(core->dump_memory(isa::sbuf_addr(row, 0x3000), 16), q.scales[row]) << "row " << row;
  // Partition 4 holds no scales.
  EXPECT_EQ(core->dump_memory(isa::sbuf_addr(4, 0x3000), 16), std::vector<std::uint8_t>(16, 0xA5));
}

TEST(DveQuantizeMxStreams, EachWaitingOnTheOtherIsADeadlockNamingBothEngines) {
  auto* core = new platform::TpbCore("tpb", config_1ghz());
  const std::vector<std::uint8_t> guard(64, 0xA5);
  for (unsigned p = 0; p < 32; ++p) core->load_memory(isa::sbuf_addr(p, 0x2000), guard.data(), 64);
  core->load_queue(
      isa::Queue::Pool,
      {platref::dequant_inst(1, 0, 32, t3(isa::sbuf_addr(0, 0), 1, 16),
                             t3(isa::sbuf_addr(0, 0x1000), 1, 32), events(2, 2, 1, 1, 1))});
  core->load_queue(isa::Queue::Dve,
                   {qmx_inst(Dtype::Fp16, true, 32, t3(isa::sbuf_addr(0, 0x1000), 1, 64),
                             isa::sbuf_addr(0, 0x2000), isa::sbuf_addr(0, 0x3000), 16, 1, 0,
                             events(2, 1, 1, 2, 1))});
  const auto r = core->run();
  ASSERT_EQ(r.status, platform::RunStatus::Deadlock) << r.message;
  EXPECT_STREQ(platform::status_name(r.status), "deadlock");
  EXPECT_NE(r.message.find("pool instruction 0 waits for sem[2] >= 1 (sem[2] = 0)"),
            std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("dve instruction 0 waits for sem[1] >= 1 (sem[1] = 0)"),
            std::string::npos)
      << r.message;
  EXPECT_EQ(r.instructions, 0u);
  EXPECT_EQ(core->dump_memory(isa::sbuf_addr(0, 0x2000), 64), guard);
}

// CoreConfig::mx_emax (`--mx-emax neuron-alt`) reaches the kernel through the
// DVE's engine state (fw::QuantizeMxOptions).
TEST(DveQuantizeMxKernel, CoreMxEmaxSettingReachesTheKernel) {
  platform::CoreConfig cfg = platform::default_core_config(isa::Arch::Mariana);
  cfg.mx_emax = num::MxEmax::NeuronAlt;
  auto* core = new platform::TpbCore("tpb", cfg);
  QmxCase c;
  c.src = t3(0, 1, 64);
  c.num = 16;
  Expected expect;
  core->load_queue(isa::Queue::Dve, load_cases(*core, {c}, true, expect));
  ASSERT_EQ(core->run().status, platform::RunStatus::Ok);
  check_windows(*core, expect);
}
