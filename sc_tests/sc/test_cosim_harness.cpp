// The co-simulation harness (platform/cosim/block_cosim.h, driven by the
// dequant block, dequant_cosim.h) with behavioural
// SystemC DUTs in place of the Verilated RTL, so the transactor itself is
// tested on every build (no Verilator needed): a correct DUT with random
// back-pressure on in_ready, a DUT that corrupts one word, one that stalls,
// and one that offers more words than the model produced.
#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "platform/cli/commands.h"
#include "platform/cosim/cosim.h"
#include "platform/cosim/dequant_cosim.h"
#include "sc_tests/sc/test_platform_harness.h"

namespace tpb {
namespace {

using cosim::DequantPins;

// FP4 E2M1 -> E5M2, group 0, written here from the format (bias 1 -> 15,
// mantissa kept): 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives.
std::uint8_t e2m1_e5m2(unsigned code) {
  static const std::uint8_t pos[8] = {0x00, 0x38, 0x3C, 0x3E, 0x40, 0x42, 0x44, 0x46};
  return static_cast<std::uint8_t>(pos[code & 7] | (code & 8 ? 0x80 : 0));
}

enum class Mode { Correct, CorruptWord5, Stall, Extra };

// A registered-output DUT of the documented ports for E2M1 group 0: each
// source word becomes two output words through a small queue; in_ready is
// random (back-pressure).
struct FakeDut : sc_core::sc_module {
  FakeDut(sc_core::sc_module_name n, DequantPins& pins, Mode mode)
      : sc_core::sc_module(n), p(pins), mode(mode), rng(7) {
    SC_HAS_PROCESS(FakeDut);
    SC_METHOD(on_clock);
    sensitive << p.clk.posedge_event();
    dont_initialize();
  }
  void on_clock() {
    if (!p.rst_n.read()) {
      q.clear();
      produced = 0;
    } else {
      if (p.out_valid.read() && p.out_ready.read() && !q.empty()) q.pop_front();
      if (p.in_valid.read() && p.in_ready.read()) {
        const std::uint32_t w = p.in_data.read();
        for (unsigned h = 0; h < 2; ++h) {
          std::uint32_t o = 0;
          for (unsigned k = 0; k < 4; ++k)
            o |= std::uint32_t{e2m1_e5m2(w >> (16 * h + 4 * k))} << 8 * k;
          if (mode == Mode::CorruptWord5 && produced == 5) o ^= 0x100;
          ++produced;
          q.push_back(o);
        }
      }
    }
    // Extra: once its 80 words are out, one more (never taken: out_ready is low).
    const bool extra = mode == Mode::Extra && produced >= 80 && q.empty();
    p.out_valid.write(!q.empty() || extra);
    p.out_data.write(q.empty() ? 0xDEADBEEFu : q.front());
    p.in_ready.write(mode != Mode::Stall && q.size() <= 2 && (rng() & 1));
  }
  DequantPins& p;
  Mode mode;
  std::mt19937 rng;
  std::deque<std::uint32_t> q;
  unsigned produced = 0;
};

class FakeLibrary : public cosim::DutLibrary<DequantPins> {
 public:
  explicit FakeLibrary(Mode m) : mode_(m) {}
  std::string name() const override { return "fake"; }
  void enable_trace() override {}
  std::unique_ptr<sc_core::sc_module> make(const char* name, DequantPins& pins) override {
    return std::make_unique<FakeDut>(name, pins, mode_);
  }
  void open_trace(const std::string&) override {}
  void close_trace() override {}

 private:
  Mode mode_;
};

struct Outcome {
  platform::CoreRunResult run;
  trace::CosimBlockStats stats;
  std::uint64_t model_end_ps = 0;
};

// One E2M1 group-0 instruction, 3 channels of 40 words from partition 20 to
// 50, on `core` with its block(s) attached.
Outcome run_on(platform::TpbCore* core, const std::function<trace::CosimBlockStats()>& stats) {
  for (unsigned c = 0; c < 3; ++c) {
    const std::vector<std::uint32_t> w = platref::make_words(40, c, 0);
    core->load_memory(isa::sbuf_addr(20 + c, 0), w.data(), w.size() * 4);
  }
  core->load_queue(isa::Queue::Pool,
                   {platref::dequant_inst(1, 0, 3, platref::t3d(isa::sbuf_addr(20, 0), 1, 40),
                                          platref::t3d(isa::sbuf_addr(50, 0x1000), 1, 80))});
  Outcome o;
  core->set_retire_sink([&](const sc::RetireRecord& r) { o.model_end_ps = r.end_ps; });
  o.run = core->run();
  o.stats = stats();
  return o;
}

Outcome run_with(Mode mode, std::uint64_t stall_cycles = 4096) {
  auto* core = new platform::TpbCore("tpb", platform::default_core_config(isa::Arch::Mariana));
  static FakeLibrary* lib = nullptr;
  lib = new FakeLibrary(mode);
  cosim::BlockConfig cc;
  cc.clock_mhz = 1200;
  cc.stall_cycles = stall_cycles;
  auto* h = new cosim::DequantCosim("cosim", *lib, core->sequencer(isa::Queue::Pool), cc);
  return run_on(core, [h] { return h->stats(); });
}

TEST(CosimHarness, CorrectDutUnderBackPressureMatchesEveryWordAndStretchesTheRun) {
  const Outcome o = run_with(Mode::Correct);
  ASSERT_EQ(o.run.status, platform::RunStatus::Ok) << o.run.message;
  EXPECT_EQ(o.stats.words_compared, 3u * 80u);
  EXPECT_EQ(o.stats.mismatches, 0u);
  EXPECT_EQ(o.stats.source_words, 3u * 40u);
  EXPECT_EQ(o.stats.instructions, 1u);
  EXPECT_EQ(o.stats.dut, "fake");
  // A random in_ready loses clocks: the RTL (more than the 80 output words +
  // reset + latency clocks of a full-rate DUT), not the model, sets the end.
  EXPECT_GT(o.stats.rtl_cycles, 83u);
  EXPECT_EQ(o.stats.stretched_instructions, 1u);
  EXPECT_GT(o.stats.stretched_ps, 0u);
}

TEST(CosimHarness, ACorruptWordFaultsNamingIt) {
  const Outcome o = run_with(Mode::CorruptWord5);
  ASSERT_EQ(o.run.status, platform::RunStatus::Fault);
  // Word 5 of each lane: codes 0..3 of make_words' word 2, byte 1 flipped.
  const std::uint32_t w2 = platref::make_words(40, 0, 0)[2];
  std::uint32_t want = 0;
  for (unsigned k = 0; k < 4; ++k) want |= std::uint32_t{e2m1_e5m2(w2 >> (16 + 4 * k))} << 8 * k;
  const std::string tail =
      fmt::format("partition 50, word 5: expected 0x{:08x}, got 0x{:08x}", want, want ^ 0x100);
  EXPECT_NE(o.run.message.find("pool instruction 0 (opcode 0x7b"), std::string::npos)
      << o.run.message;
  EXPECT_NE(o.run.message.find("co-simulation mismatch at "), std::string::npos) << o.run.message;
  EXPECT_NE(o.run.message.find(tail), std::string::npos) << o.run.message;
  EXPECT_NE(o.run.message.find("3 of the instruction's output words differ"), std::string::npos)
      << o.run.message;
  EXPECT_EQ(o.stats.mismatches, 3u);
  EXPECT_EQ(o.stats.words_compared, 3u * 80u);
}

TEST(CosimHarness, AStalledDutFaultsNamingTheLaneAndItsProgress) {
  const Outcome o = run_with(Mode::Stall, 50);
  ASSERT_EQ(o.run.status, platform::RunStatus::Fault);
  EXPECT_NE(o.run.message.find("partition 50: the RTL stalled: no handshake for 51 cycles after it "
                               "took 0 of 40 source words and gave 0 of 80 output words"),
            std::string::npos)
      << o.run.message;
}

TEST(CosimHarness, ADutOfferingMoreWordsThanTheModelFaults) {
  const Outcome o = run_with(Mode::Extra);
  ASSERT_EQ(o.run.status, platform::RunStatus::Fault);
  EXPECT_NE(o.run.message.find("the RTL offers output word 80 (0xdeadbeef) but the model produced "
                               "only 80"),
            std::string::npos)
      << o.run.message;
}

// A block on the list of linked blocks is attached by cosim::attach, which
// names no block: at its engine's clock of the core's profile, its stats in
// the run's "cosim" section (as a Verilated block's object file links it).
TEST(CosimHarness, ALinkedBlockIsAttachedToItsEngineByTheList) {
  static FakeLibrary lib(Mode::Correct);
  cosim::link_block({"dequant", isa::Queue::Pool, &lib,
                     [](cosim::RtlLibrary& rtl, sc::Sequencer& engine,
                        const cosim::BlockConfig& cfg) -> cosim::BlockCosim* {
                       return new cosim::DequantCosim("dequant", rtl, engine, cfg);
                     }});
  ASSERT_EQ(cosim::linked_blocks().size(), 1u);
  ASSERT_NE(cosim::linked_block("dequant"), nullptr);
  EXPECT_EQ(cosim::linked_block("quantize_mx"), nullptr);
  auto* core = new platform::TpbCore("tpb", platform::default_core_config(isa::Arch::Cayman));
  cosim::Cosim* rtl = cosim::attach(*core, {});
  ASSERT_EQ(rtl->blocks().size(), 1u);
  const Outcome o = run_on(core, [rtl] { return rtl->stats().blocks.at(0); });
  ASSERT_EQ(o.run.status, platform::RunStatus::Ok) << o.run.message;
  EXPECT_EQ(o.stats.kind, "dequant");
  EXPECT_EQ(o.stats.dut, "fake");
  EXPECT_EQ(o.stats.clock_mhz, 1200.0);  // CAYMAN's POOL clock (docs/COSIM.md "Timing")
  EXPECT_EQ(o.stats.words_compared, 3u * 80u);
  EXPECT_EQ(o.stats.mismatches, 0u);
}

// sc_tests links no Verilated DUT: `tpbsim run --cosim` says so (exit 1)
// before it builds anything.
TEST(CosimHarness, RunWithoutAnRtlLinkedRefusesCosim) {
  ASSERT_TRUE(cosim::linked_blocks().empty());
  ::testing::internal::CaptureStderr();
  const int rc = cli::cmd_run(
      {std::string(TPB_SOURCE_DIR) + "/traces/workloads/e2m1_g8_mariana/program.tpb", "--cosim"});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.find("--cosim: this tpbsim has no RTL linked (built without Verilator"),
            std::string::npos)
      << err;
}

}  // namespace
}  // namespace tpb
