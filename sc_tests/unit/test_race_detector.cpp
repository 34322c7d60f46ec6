// The race check's detector (SPEC §14) fed synthetic event streams: each
// kind of race with both sides, each ordering that removes it, and the
// report the same whatever order the events came in.
#include <gtest/gtest.h>

#include "models/race/detector.h"
#include "models/race/shadow.h"
#include "test_race_util.h"

namespace tpb::race {
namespace {

using isa::Queue;
using namespace tpb::race::test;

// ------------------------------------------------------------------ shadow

struct Sink {
  std::vector<Conflict> got;
  void operator()(const Conflict& c) { got.push_back(c); }
};

TEST(RaceShadow, AWriteThenAReadOfAnotherAgentNotOrderedAfterItConflicts) {
  ShadowRange r;
  VectorClock a, b;
  a.set(0, 1);
  b.set(1, 1);
  Sink s;
  r.access(0, 64, Epoch{0, 1}, kWrite, a, s);
  EXPECT_TRUE(s.got.empty());
  r.access(32, 96, Epoch{1, 1}, kRead, b, s);
  ASSERT_EQ(s.got.size(), 1u);
  EXPECT_EQ(s.got[0].earlier, (Epoch{0, 1}));
  EXPECT_EQ(s.got[0].earlier_mask, kWrite);
  EXPECT_EQ(s.got[0].lo, 32u);  // the overlap only
  EXPECT_EQ(s.got[0].hi, 64u);
}

TEST(RaceShadow, AnOrderedAccessAndTheSameAgentNeverConflict) {
  ShadowRange r;
  VectorClock a, b;
  a.set(0, 1);
  b.set(1, 1);
  b.set(0, 1);  // b is ordered after a's clock 1
  Sink s;
  r.access(0, 64, Epoch{0, 1}, kWrite, a, s);
  r.access(0, 64, Epoch{1, 1}, kWrite, b, s);
  a.set(0, 2);
  a.set(1, 1);
  r.access(0, 64, Epoch{0, 2}, kRead, a, s);
  EXPECT_TRUE(s.got.empty());
  VectorClock c;
  c.set(0, 5);
  r.access(0, 64, Epoch{0, 5}, kWrite, c, s);  // agent 0 again, but not after b's write
  ASSERT_EQ(s.got.size(), 1u);
  EXPECT_EQ(s.got[0].earlier, (Epoch{1, 1}));
}

TEST(RaceShadow, AWriteConflictsWithEveryUnorderedReaderAndReplacesWhatItFollows) {
  ShadowRange r;
  VectorClock v[4];
  for (AgentIdx i = 0; i < 4; ++i) v[i].set(i, 1);
  Sink s;
  r.access(0, 16, Epoch{0, 1}, kRead, v[0], s);
  r.access(0, 16, Epoch{1, 1}, kRead, v[1], s);
  EXPECT_TRUE(s.got.empty());  // reads never conflict with reads
  v[2].set(1, 1);              // agent 2 is ordered after agent 1's read, not agent 0's
  r.access(0, 16, Epoch{2, 1}, kWrite, v[2], s);
  ASSERT_EQ(s.got.size(), 1u);
  EXPECT_EQ(s.got[0].earlier, (Epoch{0, 1}));
  EXPECT_EQ(s.got[0].earlier_mask, kRead);
  // The racing read stays (a later write racing with it is reported too);
  // the ordered one is gone.
  const Cell* c = r.find(8);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->reads.size(), 1u);
  EXPECT_EQ(c->reads[0].epoch, (Epoch{0, 1}));
  ASSERT_EQ(c->writes.size(), 1u);
  EXPECT_EQ(c->writes[0].epoch, (Epoch{2, 1}));
  // A write ordered after both clears them; one racing with the write stays
  // beside it.
  v[3].set(0, 1);
  r.access(0, 16, Epoch{3, 1}, kWrite, v[3], s);
  ASSERT_EQ(s.got.size(), 2u);  // with agent 2's write
  EXPECT_EQ(s.got[1].earlier, (Epoch{2, 1}));
  EXPECT_TRUE(r.find(8)->reads.empty());
  EXPECT_EQ(r.find(8)->writes.size(), 2u);
}

TEST(RaceShadow, OneInstructionsAccessesAreOneSegmentWhateverTheirNumber) {
  ShadowRange r;
  VectorClock a;
  a.set(0, 1);
  Sink s;
  for (std::uint64_t off = 0; off < 4096; off += 4)
    r.access(off, off + 4, Epoch{0, 1}, kWrite, a, s);
  EXPECT_EQ(r.segments(), 1u);
  // A read of the middle by the same instruction marks it read and written.
  EXPECT_EQ(r.access(1000, 2000, Epoch{0, 1}, kRead, a, s), 3u);
  EXPECT_EQ(r.find(1500)->writes[0].mask, kWrite | kRead);
  EXPECT_EQ(r.find(500)->writes[0].mask, kWrite);
  EXPECT_EQ(r.find(5000), nullptr);
}

// ---------------------------------------------------------------- detector

// pool writes partitions 0-31 (line 1), dve reads them (line 2).
Report pool_then_dve(const Prog& p, bool dve_first) {
  Detector d({p.core()});
  std::vector<MemAccess> w, rd;
  for (unsigned part = 0; part < 32; ++part) {
    w.push_back({sbuf(part, 0), 256, true});
    rd.push_back({sbuf(part, 0), 256, false});
  }
  if (dve_first) run_compute(d, p, Queue::Dve, 0, rd);
  run_compute(d, p, Queue::Pool, 0, w);
  if (!dve_first) run_compute(d, p, Queue::Dve, 0, rd);
  return d.finish();
}

TEST(RaceDetector, AnEngineReadingWhatAnotherWroteWithoutASemaphoreIsARaw) {
  Prog p;
  p.add(Queue::Pool);
  p.add(Queue::Dve);
  const Report r = pool_then_dve(p, false);
  ASSERT_EQ(r.races.size(), 1u);
  EXPECT_EQ(r.total, 1u);
  const Race& x = r.races[0];
  EXPECT_EQ(x.first.queue, Queue::Pool);
  EXPECT_EQ(x.first.line, 1u);
  EXPECT_EQ(x.second.queue, Queue::Dve);
  EXPECT_EQ(x.second.index, 0u);
  EXPECT_EQ(x.kinds, kRaw);
  EXPECT_EQ(x.memory, Memory::Sbuf);
  EXPECT_EQ(x.partition_lo, 0u);
  EXPECT_EQ(x.partition_hi, 31u);
  EXPECT_EQ(x.lo, 0u);
  EXPECT_EQ(x.hi, 256u);
  EXPECT_EQ(race_message(x, r.sources),
            "no semaphore orders dve[0] quantize_mx (t.tpb:2) after pool[0] tensor_dequantize "
            "(t.tpb:1): RAW on sbuf partitions 0-31 bytes 0x0-0xff");
  EXPECT_TRUE(r.timing_dependent.empty());
}

// Issue 40: the sides are named in the order their accesses happened, the
// kind in that order: the pool (line 1) writing after the dve (line 2) read
// is the dve's read and then the pool's write, a WAR (in text order it was
// "after pool[0]", a RAW of a read that came first).
TEST(RaceDetector, SidesAreNamedInTheOrderTheyHappened) {
  Prog p;
  p.add(Queue::Pool);
  p.add(Queue::Dve);
  const Report a = pool_then_dve(p, false), b = pool_then_dve(p, true);
  ASSERT_EQ(a.races.size(), 1u);
  ASSERT_EQ(b.races.size(), 1u);
  EXPECT_EQ(race_message(b.races[0], b.sources),
            "no semaphore orders pool[0] tensor_dequantize (t.tpb:1) after dve[0] quantize_mx "
            "(t.tpb:2): WAR on sbuf partitions 0-31 bytes 0x0-0xff");
  EXPECT_EQ(b.races[0].first.queue, Queue::Dve);
  EXPECT_EQ(b.races[0].kinds, kWar);
  EXPECT_EQ(a.races[0].kinds, kRaw);
}

TEST(RaceDetector, ASemaphoreUpdateAndASatisfiedWaitOrderThem) {
  Prog p;
  p.add(Queue::Pool, inc(1));
  p.add(Queue::Dve, wait_ge(1, 1));
  EXPECT_TRUE(pool_then_dve(p, false).races.empty());
}

TEST(RaceDetector, RawAndWawAreNamedByWhatTheEarlierAccessDid) {
  for (const bool pool_writes : {false, true}) {
    Prog p;
    p.add(Queue::Pool);
    p.add(Queue::Dve);
    Detector d({p.core()});
    run_compute(d, p, Queue::Dve, 0, {{sbuf(3, 0x100), 64, true}});
    run_compute(d, p, Queue::Pool, 0, {{sbuf(3, 0x120), 64, pool_writes}});
    const Report r = d.finish();
    ASSERT_EQ(r.races.size(), 1u);
    EXPECT_EQ(r.races[0].kinds, pool_writes ? kWaw : kRaw);
    EXPECT_EQ(race_message(r.races[0], r.sources),
              std::string("no semaphore orders pool[0] tensor_dequantize (t.tpb:1) after dve[0] "
                          "quantize_mx (t.tpb:2): ") +
                  (pool_writes ? "WAW" : "RAW") + " on sbuf partition 3 bytes 0x120-0x13f");
  }
}

TEST(RaceDetector, APsumAccumulationIsAReadAndAWrite) {
  // pe accumulates into PSUM (reads, then writes the bytes); dve reads them,
  // or writes them, with no semaphore: named in the order they ran, the
  // kinds in that order.
  for (const bool dve_writes : {false, true})
    for (const bool dve_first : {false, true}) {
      Prog p;
      p.add(Queue::Pe);
      p.add(Queue::Dve);
      Detector d({p.core()});
      const std::vector<MemAccess> dve = {{psum(0, 0), 512, dve_writes}};
      if (dve_first) run_compute(d, p, Queue::Dve, 0, dve);
      run_compute(d, p, Queue::Pe, 0, {{psum(0, 0), 512, false}, {psum(0, 0), 512, true}});
      if (!dve_first) run_compute(d, p, Queue::Dve, 0, dve);
      const Report r = d.finish();
      ASSERT_EQ(r.races.size(), 1u);
      EXPECT_EQ(r.races[0].first.queue, dve_first ? Queue::Dve : Queue::Pe);
      EXPECT_EQ(r.races[0].kinds, dve_first    ? (dve_writes ? kRaw | kWaw : kWar)
                                  : dve_writes ? kWar | kWaw
                                               : kRaw);
      EXPECT_EQ(r.races[0].memory, Memory::Psum);
    }
}

TEST(RaceDetector, TransfersOfOneQueueOnDifferentDmaEnginesAreNotOrdered) {
  // SPEC §14: a store from partitions 0-7 to HBM and a later load of those
  // HBM bytes into partitions 64-71 on the same queue race; into 0-7 (the
  // same DMA engine) they do not.
  for (const unsigned into : {64u, 0u}) {
    Prog p;
    p.add(Queue::Dma0);
    p.add(Queue::Dma0);
    Detector d({p.core()});
    d.begin(0, Queue::Dma0, 0, 0xd0, p.ev(Queue::Dma0, 0));
    for (unsigned r = 0; r < 8; ++r)
      d.dma_move(0, Queue::Dma0, store_from(0), r, sbuf(r, 0), hbm(32 * r), 32);
    d.end(0, Queue::Dma0, 0, p.ev(Queue::Dma0, 0));
    d.begin(0, Queue::Dma0, 1, 0xd0, p.ev(Queue::Dma0, 1));
    for (unsigned r = 0; r < 8; ++r)
      d.dma_move(0, Queue::Dma0, load_to(into), r, hbm(32 * r), sbuf(into + r, 0), 32);
    d.end(0, Queue::Dma0, 1, p.ev(Queue::Dma0, 1));
    const Report rep = d.finish();
    if (into == 0) {
      EXPECT_TRUE(rep.races.empty());
      continue;
    }
    ASSERT_EQ(rep.races.size(), 1u);
    EXPECT_EQ(race_message(rep.races[0], rep.sources),
              "dma0[1] dma_copy (t.tpb:2, DMA engine 8) is not ordered after dma0[0] dma_copy "
              "(t.tpb:1, DMA engine 0): a DMA queue orders its transfers per DMA engine only, and "
              "no semaphore orders them: RAW on hbm bytes 0x0-0xff");
  }
}

TEST(RaceDetector, ADmaWaitOrdersEveryEngineAndACompletionReleasesEveryEngine) {
  for (const bool ordered : {true, false}) {
    Prog p;
    p.add(Queue::Pool, ordered ? inc(0) : isa::Events{});
    p.add(Queue::Dma0, ordered ? wait_ge_inc(0, 1, 1) : isa::Events{});
    p.add(Queue::Dve, ordered ? wait_ge(1, 1) : isa::Events{});
    Detector d({p.core()});
    std::vector<MemAccess> all;
    for (unsigned part = 0; part < 128; ++part) all.push_back({sbuf(part, 0), 64, true});
    run_compute(d, p, Queue::Pool, 0, all);
    d.begin(0, Queue::Dma0, 0, 0xd0, p.ev(Queue::Dma0, 0));
    for (unsigned r = 0; r < 128; ++r)  // stores 0-127, overwriting its source from HBM
      d.dma_move(0, Queue::Dma0, store_from(0), r, sbuf(r, 0), hbm(64 * r), 64);
    for (unsigned r = 0; r < 128; ++r)
      d.dma_move(0, Queue::Dma0, load_to(0), r, hbm(64 * r), sbuf(r, 0), 64);
    d.end(0, Queue::Dma0, 0, p.ev(Queue::Dma0, 0));
    for (auto& a : all) a.write = false;
    run_compute(d, p, Queue::Dve, 0, all);
    const Report r = d.finish();
    if (ordered) {
      EXPECT_TRUE(r.races.empty());
      continue;
    }
    // pool / dma0 (dma0 reads and writes), pool / dve (pool's write raced
    // with dma0's, so both stay), dma0 / dve.
    ASSERT_EQ(r.races.size(), 3u);
    EXPECT_EQ(r.races[0].second.queue, Queue::Dma0);
    EXPECT_EQ(r.races[0].second.dma_engines, 0xFFFF);
    EXPECT_EQ(r.races[0].kinds, kRaw | kWaw);
    EXPECT_EQ(r.races[1].second.queue, Queue::Dve);
    EXPECT_EQ(race_message(r.races[2], r.sources),
              "no semaphore orders dve[0] quantize_mx (t.tpb:3) after dma0[0] dma_copy (t.tpb:2, "
              "DMA engines 0-15): RAW on sbuf partitions 0-127 bytes 0x0-0x3f");
  }
}

TEST(RaceDetector, ACompletionReleasesEachEngineAsItEndedTheTransfer) {
  // A DMA model whose engines run apart: engine 0 ends transfer 0 and
  // begins transfer 1 (writing partition 0) while engine 8 still moves
  // transfer 0; transfer 0's update then releases engine 0 as it was at its
  // end, so the waiter is not ordered after transfer 1.
  Prog p;
  p.add(Queue::Dma0, inc(2));
  p.add(Queue::Dma0);
  p.add(Queue::Pool, wait_ge(2, 1));
  Detector d({p.core()});
  const isa::Events& e0 = p.ev(Queue::Dma0, 0);
  for (unsigned e : {0u, 8u}) d.dma_engine_begin(0, Queue::Dma0, 0, e, 0xd0, e0);
  d.dma_move(0, Queue::Dma0, load_to(0), 0, hbm(0), sbuf(0, 0), 16);
  d.dma_engine_end(0, Queue::Dma0, 0, 0);
  d.dma_engine_begin(0, Queue::Dma0, 1, 0, 0xd0, p.ev(Queue::Dma0, 1));
  d.dma_move(0, Queue::Dma0, load_to(0), 0, hbm(0x100), sbuf(0, 0x100), 16);
  d.dma_move(0, Queue::Dma0, load_to(64), 0, hbm(0x200), sbuf(64, 0), 16);
  d.end(0, Queue::Dma0, 0, e0);
  run_compute(d, p, Queue::Pool, 0,
              {{sbuf(0, 0), 16, false}, {sbuf(0, 0x100), 16, false}, {sbuf(64, 0), 16, false}});
  const Report r = d.finish();
  ASSERT_EQ(r.races.size(), 1u);
  EXPECT_EQ(r.races[0].first.index, 1u);
  EXPECT_EQ(r.races[0].partition_lo, 0u);
  EXPECT_EQ(r.races[0].lo, 0x100u);
}

// Two producers of sem 3 (dma0 loads partitions 0-31, dma1 32-63); pool
// waits ge(sem3, k) and reads 0-63.
Report two_producers(std::uint32_t k) {
  Prog p;
  p.add(Queue::Dma0, inc(3));
  p.add(Queue::Dma1, inc(3));
  p.add(Queue::Pool, wait_ge(3, k));
  Detector d({p.core()});
  auto load = [&](Queue q, unsigned part) {
    d.begin(0, q, 0, 0xd0, p.ev(q, 0));
    for (unsigned r = 0; r < 32; ++r)
      d.dma_move(0, q, load_to(part), r, hbm(0x1000 * part + 128 * r), sbuf(part + r, 0), 128);
    d.end(0, q, 0, p.ev(q, 0));
  };
  load(Queue::Dma0, 0);
  std::vector<MemAccess> rd;
  for (unsigned part = 0; part < 64; ++part) rd.push_back({sbuf(part, 0), 128, false});
  if (k == 1) run_compute(d, p, Queue::Pool, 0, rd);  // satisfied by dma0 alone in this run
  load(Queue::Dma1, 32);
  if (k == 2) run_compute(d, p, Queue::Pool, 0, rd);
  return d.finish();
}

TEST(RaceDetector, WithTwoProducersGe1IsOrderedAfterNeitherAndGe2AfterBoth) {
  const Report one = two_producers(1);
  ASSERT_EQ(one.races.size(), 2u);  // dma0 / pool and dma1 / pool
  EXPECT_EQ(one.races[0].first.queue, Queue::Dma0);
  EXPECT_EQ(one.races[0].first.dma_engines, 0x000F);
  // Pool read partitions 32-63 before dma1 wrote them: pool first, a WAR.
  EXPECT_EQ(one.races[1].first.queue, Queue::Pool);
  EXPECT_EQ(one.races[1].second.queue, Queue::Dma1);
  EXPECT_EQ(one.races[1].partition_lo, 32u);
  EXPECT_EQ(one.races[1].kinds, kWar);
  EXPECT_TRUE(one.timing_dependent.empty());
  EXPECT_TRUE(two_producers(2).races.empty());
}

TEST(RaceDetector, WhatEveryWayToReachTheCountHasInCommonOrdersTheWait) {
  // pool writes, then increments sem1; dve and pe each wait for it and
  // increment sem2; sfu waits ge(sem2, 1): whichever of dve and pe came
  // first, pool's write came before, so sfu's read is not a race (no one
  // increment of sem2 is needed). Without pool's increment it is.
  for (const bool chained : {true, false}) {
    Prog p;
    p.add(Queue::Pool, chained ? inc(1) : isa::Events{});
    p.add(Queue::Dve, chained ? wait_ge_inc(1, 1, 2) : inc(2));
    p.add(Queue::Pe, chained ? wait_ge_inc(1, 1, 2) : inc(2));
    p.add(Queue::Sfu, wait_ge(2, 1));
    Detector d({p.core()});
    run_compute(d, p, Queue::Pool, 0, {{sbuf(5, 0), 64, true}});
    run_compute(d, p, Queue::Pe, 0, {});
    run_compute(d, p, Queue::Sfu, 0, {{sbuf(5, 0), 64, false}});
    run_compute(d, p, Queue::Dve, 0, {});
    const Report r = d.finish();
    EXPECT_EQ(r.races.size(), chained ? 0u : 1u);
  }
}

TEST(RaceDetector, ADecrementOrAnEqWaitOrdersByWhatTheRunObservedAndSaysSo) {
  Prog p;
  p.add(Queue::Pool, events(0, 0, 1, 3, 5));  // set sem5 = 1
  p.add(Queue::Dve, wait_eq(5, 1));
  p.add(Queue::Pe, events(0, 0, 0, 2, 6));  // decrement sem6
  Detector d({p.core()});
  run_compute(d, p, Queue::Pool, 0, {{sbuf(0, 0), 16, true}});
  run_compute(d, p, Queue::Dve, 0, {{sbuf(0, 0), 16, false}});
  run_compute(d, p, Queue::Pe, 0, {});
  const Report r = d.finish();
  EXPECT_TRUE(r.races.empty());
  ASSERT_EQ(r.timing_dependent.size(), 1u);  // sem6 was never waited on
  EXPECT_EQ(r.timing_dependent[0].first, 5u);
  EXPECT_EQ(r.timing_dependent[0].second, "set by pool[0]");
}

TEST(RaceDetector, ASemaphoreTheHostWritesDuringTheRunIsObserved) {
  Prog p;
  p.add(Queue::Pool, inc(7));
  p.add(Queue::Dve, wait_ge(7, 1));
  Detector d({p.core()});
  d.host_semaphore(0, 7, true);
  run_compute(d, p, Queue::Dve, 0, {{sbuf(0, 0), 16, false}});
  run_compute(d, p, Queue::Pool, 0, {{sbuf(0, 0), 16, true}});
  const Report r = d.finish();
  ASSERT_EQ(r.races.size(), 1u);
  EXPECT_EQ(r.races[0].kinds, kWar);  // dve's read ran before pool's write
  EXPECT_EQ(r.races[0].first.queue, Queue::Dve);
  ASSERT_EQ(r.timing_dependent.size(), 1u);
  EXPECT_EQ(r.timing_dependent[0].second, "written by the host during the run");
}

TEST(RaceDetector, TheTileFileIsAMemoryByTileAndByte) {
  Prog p;
  p.add(Queue::Sfu);
  Detector d({p.core()});
  run_compute(d, p, Queue::Sfu, 0, {{tile(3, 0), 1024, true}});
  d.host_access(0, tile(3, 512), 16, false);
  const Report r = d.finish();
  ASSERT_EQ(r.races.size(), 1u);
  EXPECT_TRUE(r.races[0].second.host);
  EXPECT_EQ(race_message(r.races[0], r.sources),
            "no semaphore orders the host after sfu[0] tquant (t.tpb:1): RAW on tile T3 bytes "
            "0x200-0x20f");
}

TEST(RaceDetector, EachPairOfInstructionsIsReportedOnceWithTheUnionOfItsBytes) {
  Prog p;
  p.add(Queue::Pool);
  p.add(Queue::Dve);
  Detector d({p.core()});
  run_compute(d, p, Queue::Pool, 0, {{sbuf(2, 0), 16, true}, {sbuf(9, 64), 16, true}});
  run_compute(d, p, Queue::Dve, 0, {{sbuf(2, 0), 16, false}, {sbuf(9, 64), 16, true}});
  const Report r = d.finish();
  ASSERT_EQ(r.races.size(), 1u);
  EXPECT_EQ(r.races[0].kinds, kRaw | kWaw);
  EXPECT_EQ(r.races[0].partition_lo, 2u);
  EXPECT_EQ(r.races[0].partition_hi, 9u);
  EXPECT_EQ(r.races[0].hi, 80u);
}

TEST(RaceDetector, ControlRegionAddressesAreNotMemory) {
  Prog p;
  p.add(Queue::Pool);
  p.add(Queue::Dve);
  Detector d({p.core()});
  run_compute(d, p, Queue::Pool, 0, {{isa::kSemaphoreBase, 4, true}});
  run_compute(d, p, Queue::Dve, 0, {{isa::kSemaphoreBase, 4, true}});
  EXPECT_TRUE(d.finish().races.empty());
  EXPECT_EQ(d.live_segments(), 0u);
}

TEST(RaceDetector, DmaRowsGoToTheEngineOfTheirSbufPartition) {
  EXPECT_EQ(race::dma_engine_of_row(load_to(0), 7), 0u);
  EXPECT_EQ(race::dma_engine_of_row(load_to(0), 8), 1u);
  EXPECT_EQ(race::dma_engine_of_row(load_to(60), 4), 8u);
  EXPECT_EQ(race::dma_engine_of_row(store_from(120), 7), 15u);
  isa::DmaDescriptor hh{};  // HBM -> HBM: round robin
  EXPECT_EQ(race::dma_engine_of_row(hh, 0), 0u);
  EXPECT_EQ(race::dma_engine_of_row(hh, 17), 1u);
}

}  // namespace
}  // namespace tpb::race
