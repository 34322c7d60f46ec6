// The issue pipeline of one engine (SPEC §8, timing::IssuePipeline): in-order
// starts, units, the interlock on overlapping bytes and in-order completion,
// each against times worked out by hand from the rules of TIMING.md's public
// cost model.
#include <gtest/gtest.h>

#include "models/timing/issue_pipeline.h"

using tpb::timing::Footprint;
using tpb::timing::IssuePipeline;

namespace {

constexpr unsigned kMoving = IssuePipeline::kMoving;
constexpr unsigned kStationary = IssuePipeline::kStationary;

Footprint writes(std::uint64_t addr, std::uint64_t len) {
  Footprint f;
  f.write(addr, len);
  return f;
}
Footprint reads(std::uint64_t addr, std::uint64_t len) {
  Footprint f;
  f.read(addr, len);
  return f;
}

}  // namespace

TEST(IssuePipeline, IndependentInstructionsIssueAnIntervalApart) {
  IssuePipeline p;
  p.reset(0);
  // Three instructions of II 512, latency 600, touching separate bytes.
  std::uint64_t t = 0, last = 0;
  for (int i = 0; i < 3; ++i) {
    const std::uint64_t s = p.unit_ready(kMoving, t);
    Footprint f = writes(0x1000 * (i + 1), 64);
    EXPECT_EQ(p.after_dependences(f, s), s);
    last = p.commit(kMoving, s, 512, 600, f);
    EXPECT_EQ(s, 512u * i);
    EXPECT_EQ(last, 512u * i + 600);
    t = s;
  }
  EXPECT_EQ(p.last_completion(), 1624u);
}

TEST(IssuePipeline, AReaderOfAnInFlightWriteStartsAtItsCompletion) {
  IssuePipeline p;
  p.reset(0);
  Footprint w = writes(0x100, 256);
  EXPECT_EQ(p.commit(kMoving, 0, 512, 600, w), 600u);
  const std::uint64_t s = p.unit_ready(kMoving, 0);
  EXPECT_EQ(s, 512u);
  // One byte of the write is read: wait for its completion.
  EXPECT_EQ(p.after_dependences(reads(0x1ff, 1), s), 600u);
  // The byte after it is not written: no wait.
  EXPECT_EQ(p.after_dependences(reads(0x200, 64), s), 512u);
  // Read before the write range: no wait.
  EXPECT_EQ(p.after_dependences(reads(0x0, 0x100), s), 512u);
  // Once the writer completed by the start, nothing waits.
  p.forget_until(600);
  EXPECT_EQ(p.after_dependences(reads(0x100, 256), 600), 600u);
}

TEST(IssuePipeline, OverlapIsFoundAmongManyUnsortedRanges) {
  IssuePipeline p;
  p.reset(0);
  Footprint w;
  // 128 partitions' runs, partition 127 first (not in address order).
  for (int part = 127; part >= 0; --part) w.write((std::uint64_t(part) << 18) + 0x800, 64);
  p.commit(kMoving, 0, 100, 1000, w);
  Footprint r;
  for (int part = 0; part < 128; ++part) r.read((std::uint64_t(part) << 18) + 0x840, 64);
  EXPECT_EQ(p.after_dependences(r, 100), 100u);  // the bytes right after each run
  r.read((std::uint64_t(77) << 18) + 0x83f, 1);  // one byte inside partition 77's run
  EXPECT_EQ(p.after_dependences(r, 100), 1000u);
}

TEST(IssuePipeline, CompletionIsInProgramOrder) {
  IssuePipeline p;
  p.reset(0);
  Footprint none;
  EXPECT_EQ(p.commit(kMoving, 0, 100, 1000, none), 1000u);
  // A short instruction after a long one completes no earlier than it.
  EXPECT_EQ(p.commit(kMoving, 100, 64, 150, none), 1000u);
  EXPECT_EQ(p.commit(kMoving, 164, 64, 2000, none), 2164u);
}

TEST(IssuePipeline, TheStationaryLoadRunsBesideTheMatmul) {
  // TIMING.md "short moving": LS II 32, MM II 64: a matmul every 64 cycles;
  // "short stationary": LS II 8, MM II 128: every 128.
  for (const auto& [ls_ii, mm_ii] : {std::pair<int, int>{32, 64}, {8, 128}, {128, 64}}) {
    IssuePipeline p;
    p.reset(0);
    Footprint none;
    std::uint64_t t = 0, prev_mm = 0;
    for (int i = 0; i < 8; ++i) {
      const std::uint64_t ls = p.unit_ready(kStationary, t);
      p.commit(kStationary, ls, ls_ii, ls_ii + 10, none);
      const std::uint64_t mm = p.unit_ready(kMoving, ls);
      // The matmul waits for its weights (the load's II) and for the moving unit.
      EXPECT_GE(mm, ls + ls_ii);
      p.commit(kMoving, mm, mm_ii, mm_ii + 320, none);
      if (i >= 2) {
        EXPECT_EQ(mm - prev_mm, std::uint64_t(std::max(ls_ii, mm_ii))) << i;
      }
      prev_mm = mm;
      t = mm;
    }
  }
}

TEST(IssuePipeline, InOrderStartsWhateverTheUnit) {
  IssuePipeline p;
  p.reset(1000);
  Footprint none;
  EXPECT_EQ(p.unit_ready(kMoving, 0), 1000u);  // not before the run's start
  p.commit(kMoving, 1000, 500, 800, none);
  // A stationary load after the matmul starts with it, not before.
  EXPECT_EQ(p.unit_ready(kStationary, 900), 1000u);
  EXPECT_EQ(p.unit_ready(kStationary, 1200), 1200u);
}
