// The co-simulation seams (platform/cosim): the word scoreboard, and a memory
// tap on a real core's SBUF quadrant through the target's observer hook,
// checked against FP4 E2M1 -> E5M2 bytes written from the format tables.
#include <gtest/gtest.h>

#include <vector>

#include "platform/cosim/memory_tap.h"
#include "platform/cosim/scoreboard.h"
#include "sc_tests/sc/test_platform_harness.h"

using namespace tpb;
using namespace tpb::platref;

TEST(WordScoreboard, CountsEveryWordAndKeepsTheFirstMismatch) {
  cosim::WordScoreboard sb;
  EXPECT_TRUE(sb.compare(100, 0, 0, 0x11, 0x11));
  EXPECT_FALSE(sb.compare(200, 3, 17, 0x3E3C3800u, 0x3E3C3801u));
  EXPECT_FALSE(sb.compare(300, 4, 2, 0x1, 0x2));
  EXPECT_TRUE(sb.compare(400, 4, 3, 0x5, 0x5));
  EXPECT_EQ(sb.words_compared(), 4u);
  EXPECT_EQ(sb.mismatches(), 2u);
  EXPECT_FALSE(sb.clean());
  ASSERT_TRUE(sb.first_mismatch().has_value());
  const cosim::Mismatch& m = *sb.first_mismatch();
  EXPECT_EQ(m.time_ps, 200u);
  EXPECT_EQ(m.partition, 3u);
  EXPECT_EQ(m.word_index, 17u);
  EXPECT_EQ(m.describe(), "at 200 ps, partition 3, word 17: expected 0x3e3c3800, got 0x3e3c3801");
}

// A tap on quadrant 0 sees the dequant's output words as the kernel writes
// them (DMI is off while tapped), and the run's result is unchanged.
TEST(MemoryTap, RecordsTheKernelsOutputWordsInTime) {
  auto* core = new platform::TpbCore("tpb", platform::default_core_config(isa::Arch::Mariana));
  const std::uint64_t dst = 0x400;  // partition 2, offset 0x400 (target-local)
  const std::uint64_t lo = (std::uint64_t{2} << 18) + dst, hi = lo + 4 * 4 - 1;
  cosim::MemoryTap tap(core->sbuf[0], lo, hi);
  // Codes 0..7 of FP4 E2M1 = 0, 0.5, 1, 1.5, 2, 3, 4, 6; twice (2 words).
  const std::uint32_t src[2] = {0x76543210u, 0x76543210u};
  core->load_memory(isa::sbuf_addr(2, 0), src, sizeof src);
  core->load_queue(isa::Queue::Pool, {dequant_inst(1, 0, 1, t3d(isa::sbuf_addr(2, 0), 1, 2),
                                                   t3d(isa::sbuf_addr(2, dst), 1, 4))});
  const auto r = core->run();
  ASSERT_EQ(r.status, platform::RunStatus::Ok) << r.message;
  // E5M2 (1-5-2, bias 15): 0 = 0x00, 0.5 = 0x38, 1 = 0x3C, 1.5 = 0x3E,
  // 2 = 0x40, 3 = 0x42, 4 = 0x44, 6 = 0x46; little-endian in each word.
  const std::uint32_t want[4] = {0x3E3C3800u, 0x46444240u, 0x3E3C3800u, 0x46444240u};
  ASSERT_EQ(tap.writes().size(), 4u);
  cosim::WordScoreboard sb;
  for (unsigned k = 0; k < 4; ++k) {
    const cosim::TappedWrite& w = tap.writes()[k];
    EXPECT_EQ(w.addr, lo + 4 * k);
    EXPECT_GT(w.time_ps, 0u);
    EXPECT_LE(w.time_ps, r.simulated_ps);
    sb.compare(w.time_ps, 2, k, want[k], w.word);
  }
  EXPECT_TRUE(sb.clean()) << sb.first_mismatch()->describe();
  EXPECT_EQ(sb.words_compared(), 4u);
  // The backdoor load was seen (debug) but not recorded as an output.
  EXPECT_GE(tap.ops_seen(), 3u);
  EXPECT_EQ(core->dump_memory(isa::sbuf_addr(2, dst), 16),
            std::vector<std::uint8_t>({0x00, 0x38, 0x3C, 0x3E, 0x40, 0x42, 0x44, 0x46, 0x00, 0x38,
                                       0x3C, 0x3E, 0x40, 0x42, 0x44, 0x46}));
}
