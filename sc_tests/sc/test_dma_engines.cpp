// The DMA engines (SPEC §10, TIMING.md [J, K]) and the HBM bandwidth share
// they stream through, on a whole core: a transfer split over the 16 engines
// by SBUF partition, each at its bandwidth after the semaphore-to-start
// latency, the HBM capping their sum; one transfer at a time per engine
// from its queues, at least the per-transfer cost each; completion when the
// last share lands. Times against the formula of TIMING.md's cost model,
// worked out by hand; the same times with a 1 ns and a 10 us quantum; the
// bytes moved, the add on write; and bad descriptors faulting by predicate
// name with nothing written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "models/isa/address_map.h"
#include "models/sc/engine/dma_check.h"
#include "models/sc/engine/timing_config.h"
#include "models/sc/memory/bandwidth_share.h"
#include "platform/core/tpb_core.h"
#include "sc_tests/sc/test_memory_bench.h"
#include "sc_tests/unit/test_element_ops_ref.h"

namespace tpb::sc {
namespace {
using test::kKiB;
using test::kMiB;

using isa::DmaDescriptor;
using isa::DmaEndpoint;

constexpr std::uint8_t kHbm = 0, kSbuf = 1;

DmaEndpoint hbm_ep(std::uint64_t off, std::uint32_t stride) {
  DmaEndpoint e{};
  e.addr = off;
  e.row_stride = stride;
  e.kind = kHbm;
  return e;
}
DmaEndpoint sbuf_ep(unsigned partition, std::uint32_t off) {
  DmaEndpoint e{};
  e.addr = isa::sbuf_addr(partition, off);
  e.kind = kSbuf;
  return e;
}
DmaDescriptor desc(DmaEndpoint src, DmaEndpoint dst, unsigned rows, std::uint32_t row_bytes,
                   std::uint8_t rmw_dtype = 0) {
  DmaDescriptor d{};
  d.header = {0xd0, isa::kInstWordLen, 0, 0};
  d.num_rows = static_cast<std::uint8_t>(rows);
  d.row_bytes = row_bytes;
  d.src = src;
  d.dst = dst;
  if (rmw_dtype) {
    d.dst_rmw_op = 1;
    d.rmw_dtype = rmw_dtype;
  }
  return d;
}
isa::RawInst word(const DmaDescriptor& d) {
  isa::RawInst r{};
  std::memcpy(r.data(), &d, sizeof d);
  return r;
}

// A core whose DMA queues run the given descriptors; each transfer's
// completion time (ps from the run's start) by (queue, index). One core per
// test process (SystemC elaborates once): reset() makes it new.
platform::CoreConfig core_config(timing::TimingConfig c, sc_core::sc_time quantum) {
  isa::Arch a = isa::Arch::Mariana;
  isa::parse_arch(c.arch, a);
  platform::CoreConfig cc = platform::default_core_config(a);
  c.quantum_ns = static_cast<std::uint32_t>(std::llround(quantum.to_seconds() * 1e9));
  cc.timing = c;
  return cc;
}
struct DmaCore {
  platform::TpbCore core;
  std::map<std::pair<unsigned, std::size_t>, std::uint64_t> done;
  std::uint64_t start = 0;
  explicit DmaCore(timing::TimingConfig c = timing::default_timing(isa::Arch::Mariana),
                   sc_core::sc_time quantum = sc_core::sc_time(1, sc_core::SC_US))
      : core("tpb", core_config(c, quantum)) {
    core.set_retire_sink([this](const RetireRecord& r) {
      done[{isa::dma_queue_index(r.engine), r.index}] = r.end_ps - start;
    });
  }
  void reset(timing::TimingConfig c = timing::default_timing(isa::Arch::Mariana),
             sc_core::sc_time quantum = sc_core::sc_time(1, sc_core::SC_US)) {
    core.reset(core_config(c, quantum));
    done.clear();
  }
  void queue(unsigned q, std::vector<DmaDescriptor> ds) {
    std::vector<isa::RawInst> words;
    for (auto& d : ds) {
      d.queue = static_cast<std::uint8_t>(q);  // its queue (isa::dma_copy_on_its_queue)
      words.push_back(word(d));
    }
    core.load_queue(isa::dma_queue(q), words);
  }
  std::uint8_t* sbuf_at(unsigned partition, std::uint32_t off, std::uint32_t len) {
    return core.sbuf[partition / 32].backdoor((std::uint64_t{partition % 32} << 18) + off, len);
  }
  std::uint8_t* hbm_at(std::uint64_t off, std::uint64_t len) { return core.hbm.backdoor(off, len); }
  platform::CoreRunResult run() {
    start = core.now_ps();
    return core.run();
  }
  std::uint64_t at(unsigned q, std::size_t i = 0) const { return done.at({q, i}); }
};

// The formula's pieces on MARIANA's defaults, in ps. A queue submits its
// first descriptor once it is fetched: 4 + 1 queue cycles at 1.4 GHz.
constexpr std::uint64_t kFetchPs = 3571;
constexpr std::uint64_t kDmaLatencyPs = kFetchPs + 1300 * 1000;  // semaphore-to-start
constexpr std::uint64_t kQueueCostPs = 840 * 1000;   // a queue's, per transfer and engine
constexpr std::uint64_t kEngineCostPs = 115 * 1000;  // an engine's, turning to a queue
constexpr std::uint64_t kHbmLatencyPs = 100 * 1000;
constexpr std::uint64_t kSbufLatencyPs = 42857;  // 60 cycles at 1.4 GHz
constexpr double kEngineBps = 33e9;              // v4: 33 B/ns per engine
constexpr double kHbmBps = 612.5e9;              // v4 per core
std::uint64_t bytes_ps(double bytes, double bytes_per_s) {
  return static_cast<std::uint64_t>(std::ceil(bytes / bytes_per_s * 1e12 - 1e-6));
}

void fill_pattern(std::uint8_t* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = 0; i < n; ++i) {
    seed = seed * 1103515245u + 12345u;
    p[i] = static_cast<std::uint8_t>(seed >> 16);
  }
}

}  // namespace

// ---- the bandwidth share alone -------------------------------------------------

TEST(BandwidthShare, OneFlowRunsAtTheSmallerOfItsCapAndTheBandwidth) {
  BandwidthShare share("share", 100000000000ull);  // 100 GB/s
  std::vector<sc_core::sc_time> t(3);
  test::run_sc([&] {
    t[0] = share.transfer(1000000, 10000000000ull);  // capped at 10 GB/s
    t[1] = share.transfer(1000000, 0);               // uncapped: the whole 100
    t[2] = share.transfer(1000000, 0, 2);            // each byte counts twice
  });
  EXPECT_EQ(t[0], sc_core::sc_time::from_value(100000000));  // 100 us
  EXPECT_EQ(t[1], sc_core::sc_time::from_value(10000000));
  EXPECT_EQ(t[2], sc_core::sc_time::from_value(20000000));
  EXPECT_EQ(share.bytes_moved(), 4000000u);
  EXPECT_EQ(share.busy_time(), sc_core::sc_time::from_value(130000000));
  EXPECT_EQ(share.peak_flows(), 1u);
}

TEST(BandwidthShare, MaxMinFairWithCapsAndLateArrivals) {
  // 100 GB/s; A capped at 10 GB/s and B uncapped from 0; C uncapped from 50 us.
  BandwidthShare share("share", 100000000000ull);
  sc_core::sc_time a, b, c;
  sc_core::sc_spawn([&] { a = share.transfer(1000000, 10000000000ull); });
  sc_core::sc_spawn([&] { b = share.transfer(5000000, 0); });
  sc_core::sc_spawn([&] {
    sc_core::wait(sc_core::sc_time(20, sc_core::SC_US));
    c = share.transfer(1000000, 0);
  });
  sc_core::sc_start();
  // 0..20 us: A 10, B 90 (1.8 MB). 20 us on: A 10, B and C 45 each. C's
  // 1 MB takes 22.222 us (to 42.222 us); A's last 0.6 MB at 10 take to 100 us.
  // B: 1.8 MB + 45 x 22.222 us = 2.8 MB by 42.222 us; then 90 GB/s for the
  // remaining 2.2 MB: 24.444 us more, 66.667 us in all.
  EXPECT_EQ(a.value(), 100000000u);
  // Completions fall on whole picoseconds (rounded up): within 1 ps of the
  // exact time per rate change a flow lived through.
  EXPECT_NEAR(static_cast<double>(c.value()), 1e6 / 45e9 * 1e12, 1.0);
  EXPECT_NEAR(static_cast<double>(b.value()), (20e-6 + 1e6 / 45e9 + 2.2e6 / 90e9) * 1e12, 2.0);
  EXPECT_EQ(share.peak_flows(), 3u);
}

TEST(BandwidthShare, GroupsAreMaxMinFairBeforeTheirFlows) {
  // SPEC §15: 100 GB/s among groups (cores). Group 0: four flows capped at
  // 40 GB/s (demand 160); group 1: one flow capped at 20 (demand 20). Group 1
  // is below the fair 50: it gets 20, group 0 the other 80 (20 a flow). Fair
  // among the five flows instead, group 1 would get the same 20 and group 0
  // 20 a flow too; so the second phase tells them apart: group 1's second
  // flow (from 10 us, capped at 40) raises its demand to 60 > 50, and the
  // groups then get 50 each: group 0's flows 12.5, group 1's 20 and 30
  // (water-filled within the group), where five-then-six fair flows would
  // give every flow 100 / 6.
  BandwidthShare share("share", 100000000000ull);
  std::vector<sc_core::sc_time> a(4);
  sc_core::sc_time b, c;
  for (unsigned i = 0; i < 4; ++i)
    sc_core::sc_spawn([&, i] { a[i] = share.transfer(1000000, 40000000000ull, 1, 0); });
  sc_core::sc_spawn([&] { b = share.transfer(1000000, 20000000000ull, 1, 1); });
  sc_core::sc_spawn([&] {
    sc_core::wait(sc_core::sc_time(10, sc_core::SC_US));
    c = share.transfer(600000, 40000000000ull, 1, 1);
  });
  sc_core::sc_start();
  // 0..10 us: group 0's flows 20 GB/s each (0.2 MB moved), group 1's 20 (0.2 MB).
  // 10 us on: group 0's 12.5 each; group 1's 20 (b) and 30 (c). c's 0.6 MB at
  // 30: 20 us, to 30 us; b's 0.8 MB left at 20: 40 us, to 50 us — but at 30 us
  // c ends: group 1's demand is 20 again: group 0 gets 80 (20 a flow).
  // b: 0.2 + 20 x 20 us = 0.6 MB by 30 us, 0.4 MB at 20 more: to 50 us.
  // Group 0's flows: 0.2 MB + 12.5 x 20 us = 0.45 MB by 30 us, + 20 x 20 us
  // = 0.85 MB by 50 us; then group 0 alone: 100 / 4 = 25 each, 0.15 MB in
  // 6 us: to 56 us.
  EXPECT_NEAR(static_cast<double>(c.value()), 20e-6 * 1e12, 2.0);  // from its start at 10 us
  EXPECT_NEAR(static_cast<double>(b.value()), 50e-6 * 1e12, 3.0);
  for (const sc_core::sc_time& t : a)
    EXPECT_NEAR(static_cast<double>(t.value()), 56e-6 * 1e12, 4.0);
}

TEST(BandwidthShare, OneGroupIsTheOneLevelShare) {
  // Every flow in group 3: exactly the flows' max-min share (the one-core case).
  BandwidthShare share("share", 100000000000ull);
  sc_core::sc_time a, b;
  sc_core::sc_spawn([&] { a = share.transfer(1000000, 10000000000ull, 1, 3); });
  sc_core::sc_spawn([&] { b = share.transfer(5000000, 0, 1, 3); });
  sc_core::sc_start();
  EXPECT_EQ(a.value(), 100000000u);                                     // 10 GB/s: 100 us
  EXPECT_NEAR(static_cast<double>(b.value()), 5e6 / 90e9 * 1e12, 2.0);  // the other 90 GB/s
}

// ---- one transfer ----------------------------------------------------------------

TEST(DmaEngines, OneTransferOn128PartitionsUsesSixteenEnginesAndMovesTheBytes) {
  DmaCore b;
  // 128 rows of 4 KiB, 8 KiB apart in HBM, to partitions 0..127 at 0x1000:
  // every engine moves 8 rows (32 KiB) at 33 B/ns; 16 x 33 = 528 GB/s is
  // under the core's 612.5, so nothing caps them.
  fill_pattern(b.hbm_at(0, 128 * 8 * kKiB), 128 * 8 * kKiB, 7);
  b.queue(0, {desc(hbm_ep(0, 8 * 1024), sbuf_ep(0, 0x1000), 128, 4096)});
  ASSERT_EQ(b.run().status, platform::RunStatus::Ok);
  const std::uint64_t want = kDmaLatencyPs + kEngineCostPs + bytes_ps(8 * 4096, kEngineBps) +
                             kHbmLatencyPs + kSbufLatencyPs;
  EXPECT_NEAR(static_cast<double>(b.at(0)), static_cast<double>(want), 2.0);
  for (unsigned r = 0; r < 128; ++r)
    ASSERT_EQ(std::memcmp(b.sbuf_at(r, 0x1000, 4096), b.hbm_at(r * 8 * kKiB, 4096), 4096), 0) << r;
  const trace::RunStats st = b.core.stats();
  unsigned engines = 0;
  for (const auto& e : st.engines)
    if (e.name.rfind("dma_engine", 0) == 0) {
      ++engines;
      EXPECT_EQ(e.instructions, 1u) << e.name;
      EXPECT_EQ(e.bytes_read, 8u * 4096) << e.name;
    }
  EXPECT_EQ(engines, 16u);
}

TEST(DmaEngines, FourPartitionsUseOneEngine) {
  // TIMING.md [J]'s profile example: A[4, 4096] BF16, 32 KiB on 4
  // partitions: one engine, 32 KiB at its bandwidth.
  DmaCore b;
  b.queue(3, {desc(hbm_ep(0, 8192), sbuf_ep(40, 0), 4, 8192)});
  ASSERT_EQ(b.run().status, platform::RunStatus::Ok);
  const std::uint64_t want = kDmaLatencyPs + kEngineCostPs + bytes_ps(32 * kKiB, kEngineBps) +
                             kHbmLatencyPs + kSbufLatencyPs;
  EXPECT_NEAR(static_cast<double>(b.at(3)), static_cast<double>(want), 2.0);
  std::vector<std::string> active;
  for (const auto& e : b.core.stats().engines)
    if (e.name.rfind("dma_engine", 0) == 0) active.push_back(e.name);
  EXPECT_EQ(active, std::vector<std::string>{"dma_engine5"});  // partitions 40..43: 40 / 8
}

TEST(DmaEngines, SbufToSbufRunsAtTheEngineBandwidth) {
  DmaCore b;
  fill_pattern(b.sbuf_at(0, 0, 8 * kKiB), 8 * kKiB, 3);
  // 8 rows of 8 KiB from partitions 0..7 to 64..71: by the destination's
  // partitions, engine 8 alone, 64 KiB at 33 B/ns.
  b.queue(0, {desc(sbuf_ep(0, 0), sbuf_ep(64, 0x4000), 8, 8 * 1024)});
  ASSERT_EQ(b.run().status, platform::RunStatus::Ok);
  const std::uint64_t want =
      kDmaLatencyPs + kEngineCostPs + bytes_ps(64 * kKiB, kEngineBps) + 2 * kSbufLatencyPs;
  EXPECT_NEAR(static_cast<double>(b.at(0)), static_cast<double>(want), 2.0);
  EXPECT_EQ(std::memcmp(b.sbuf_at(64, 0x4000, 8 * kKiB), b.sbuf_at(0, 0, 8 * kKiB), 8 * kKiB), 0);
}

TEST(DmaEngines, HbmToHbmRowsRoundRobinAndTheHbmCapsTheirSum) {
  DmaCore b;
  fill_pattern(b.hbm_at(0, kMiB), kMiB, 11);
  // 64 rows of 16 KiB HBM -> HBM: row r on engine r mod 16 (4 rows, 64 KiB
  // each); each byte crosses the HBM twice: 16 engines want 2 x 528 GB/s,
  // the core's 612.5 divides: every engine at 612.5 / 32 GB/s.
  b.queue(0, {desc(hbm_ep(0, 16 * kKiB), hbm_ep(2 * kMiB, 16 * kKiB), 64, 16 * 1024)});
  ASSERT_EQ(b.run().status, platform::RunStatus::Ok);
  const std::uint64_t want =
      kDmaLatencyPs + kEngineCostPs + bytes_ps(64 * kKiB, kHbmBps / 32) + 2 * kHbmLatencyPs;
  EXPECT_NEAR(static_cast<double>(b.at(0)), static_cast<double>(want), 16.0);
  EXPECT_EQ(std::memcmp(b.hbm_at(2 * kMiB, kMiB), b.hbm_at(0, kMiB), kMiB), 0);
}

// ---- streams and contention --------------------------------------------------------

TEST(DmaEngines, BackToBackTransfersOverlapTheLatencyAndPayTheQueueCostEach) {
  // 16 transfers of 128 x 512 B on one queue: each engine's share is
  // 4 KiB (124 ns at 33 B/ns), below the queue's 840 ns cost: the engines
  // take one every 840 ns after one start latency (the engine's own cost
  // once, on the first: the queue's next descriptors are fetched meanwhile).
  DmaCore b;
  std::vector<DmaDescriptor> ds;
  for (unsigned i = 0; i < 16; ++i)
    ds.push_back(desc(hbm_ep(i * 64 * kKiB, 512), sbuf_ep(0, 0), 128, 512));
  b.queue(0, ds);
  ASSERT_EQ(b.run().status, platform::RunStatus::Ok);
  const std::uint64_t data = bytes_ps(8 * 512, kEngineBps), fill = kHbmLatencyPs + kSbufLatencyPs;
  for (unsigned i = 0; i < 16; ++i)
    EXPECT_NEAR(static_cast<double>(b.at(0, i)),
                static_cast<double>(kDmaLatencyPs + i * kQueueCostPs +
                                    (i == 0 ? kEngineCostPs : 0) + data + fill),
                2.0)
        << i;
}

TEST(DmaEngines, TwoQueuesOverlapTheirCostsAndTheEnginesPayTheirsAtEachTurn) {
  // 4 transfers of 128 x 512 B dealt over dma0 and dma1: an engine takes
  // dma0's first (C + data), dma1's at once (another queue: C + data), dma0's
  // second when dma0's 840 ns are over since its first, dma1's second right
  // after it (its own 840 ns over by then): two queues' costs overlap.
  DmaCore b;
  b.queue(0, {desc(hbm_ep(0, 512), sbuf_ep(0, 0), 128, 512),
              desc(hbm_ep(2 * kMiB, 512), sbuf_ep(0, 0x400), 128, 512)});
  b.queue(1, {desc(hbm_ep(kMiB, 512), sbuf_ep(0, 0x200), 128, 512),
              desc(hbm_ep(3 * kMiB, 512), sbuf_ep(0, 0x600), 128, 512)});
  ASSERT_EQ(b.run().status, platform::RunStatus::Ok);
  const std::uint64_t turn = kEngineCostPs + bytes_ps(8 * 512, kEngineBps),
                      fill = kHbmLatencyPs + kSbufLatencyPs;
  const auto near = [&](std::uint64_t got, std::uint64_t want) {
    EXPECT_NEAR(static_cast<double>(got), static_cast<double>(kDmaLatencyPs + want + fill), 4.0);
  };
  near(b.at(0, 0), turn);
  near(b.at(1, 0), 2 * turn);
  near(b.at(0, 1), kQueueCostPs + turn);
  near(b.at(1, 1), kQueueCostPs + 2 * turn);
  // One queue would take 3 x 840 ns + the last share.
  EXPECT_LT(b.at(1, 1), kDmaLatencyPs + 3 * kQueueCostPs);
}

TEST(DmaEngines, TwoQueuesIntoTheSamePartitionsTakeTwiceAsLong) {
  // Two 64 KiB transfers into partitions 0..7 on two queues: one engine
  // carries both, one after the other (round robin: dma0 first), turning to
  // each queue once.
  DmaCore b;
  b.queue(0, {desc(hbm_ep(0, 8192), sbuf_ep(0, 0), 8, 8192)});
  b.queue(1, {desc(hbm_ep(kMiB, 8192), sbuf_ep(0, 0x8000), 8, 8192)});
  ASSERT_EQ(b.run().status, platform::RunStatus::Ok);
  const std::uint64_t one = kEngineCostPs + bytes_ps(64 * kKiB, kEngineBps),
                      fill = kHbmLatencyPs + kSbufLatencyPs;
  EXPECT_NEAR(static_cast<double>(b.at(0)), static_cast<double>(kDmaLatencyPs + one + fill), 2.0);
  EXPECT_NEAR(static_cast<double>(b.at(1)), static_cast<double>(kDmaLatencyPs + 2 * one + fill),
              4.0);
  // Into partitions 8..15 instead: engine 1, in parallel.
  DmaCore& c = b;
  c.reset();
  c.queue(0, {desc(hbm_ep(0, 8192), sbuf_ep(0, 0), 8, 8192)});
  c.queue(1, {desc(hbm_ep(kMiB, 8192), sbuf_ep(8, 0x8000), 8, 8192)});
  ASSERT_EQ(c.run().status, platform::RunStatus::Ok);
  EXPECT_EQ(c.at(0), c.at(1));
}

// n queues, each 128 rows x 8 KiB (1 MiB) HBM -> SBUF, submitted together;
// every queue's completion.
std::vector<std::uint64_t> queue_ends(DmaCore& b, unsigned n, timing::TimingConfig cfg,
                                      sc_core::sc_time quantum) {
  b.reset(cfg, quantum);
  for (unsigned k = 0; k < n; ++k)
    b.queue(k, {desc(hbm_ep(std::uint64_t{k} * kMiB, 8192), sbuf_ep(0, k * 8192), 128, 8192)});
  EXPECT_EQ(b.run().status, platform::RunStatus::Ok);
  std::vector<std::uint64_t> ends;
  for (unsigned k = 0; k < n; ++k) ends.push_back(b.at(k));
  return ends;
}

TEST(DmaEngines, SixteenQueuesTakeTurnsOnEveryEngine) {
  // Every engine carries 8 rows (64 KiB) of each of the 16 transfers, in
  // queue order (round robin from dma0), each of another queue than the one
  // before: transfer k lands (k + 1) shares and engine costs in.
  DmaCore b;
  const auto ends = queue_ends(b, 16, timing::default_timing(isa::Arch::Mariana),
                               sc_core::sc_time(1, sc_core::SC_US));
  const std::uint64_t share = kEngineCostPs + bytes_ps(64 * kKiB, kEngineBps),
                      fill = kHbmLatencyPs + kSbufLatencyPs;
  for (unsigned k = 0; k < 16; ++k)
    EXPECT_NEAR(static_cast<double>(ends[k]),
                static_cast<double>(kDmaLatencyPs + (k + 1) * share + fill), 2.0 * (k + 1))
        << k;
}

TEST(DmaEngines, TheHbmBandwidthCapsTheEngines) {
  // A 200 GB/s HBM under 16 engines of 33 B/ns: they share it, 12.5 GB/s each.
  timing::TimingConfig c = timing::default_timing(isa::Arch::Mariana);
  c.hbm.mbytes_per_s = 200000;
  DmaCore b;
  const auto ends = queue_ends(b, 1, c, sc_core::sc_time(1, sc_core::SC_US));
  EXPECT_NEAR(static_cast<double>(ends[0]),
              static_cast<double>(kDmaLatencyPs + kEngineCostPs + bytes_ps(64 * kKiB, 200e9 / 16) +
                                  kHbmLatencyPs + kSbufLatencyPs),
              2.0);
}

// The same times whatever the quantum (each share starts at its synced time).
TEST(DmaEngines, SameTimesWithA1nsAndA10usQuantum) {
  const timing::TimingConfig c = timing::default_timing(isa::Arch::Mariana);
  DmaCore b;
  const auto a = queue_ends(b, 16, c, sc_core::sc_time(1, sc_core::SC_US));
  EXPECT_EQ(queue_ends(b, 16, c, sc_core::sc_time(1, sc_core::SC_NS)), a);
  EXPECT_EQ(queue_ends(b, 16, c, sc_core::sc_time(10, sc_core::SC_US)), a);
}

// ---- accumulate on write --------------------------------------------------------

TEST(DmaEngines, AddOnWriteFp32AndBf16) {
  DmaCore b;
  // FP32: 8 rows of 64 elements HBM -> SBUF (+=); BF16: SBUF -> HBM (+=).
  std::vector<float> hsrc(8 * 64), sdst(8 * 64);
  for (unsigned i = 0; i < hsrc.size(); ++i) {
    hsrc[i] = 0.1f * static_cast<float>(i) - 3.0f;
    sdst[i] = 1.0f / static_cast<float>(i + 1);
  }
  std::memcpy(b.hbm_at(0, hsrc.size() * 4), hsrc.data(), hsrc.size() * 4);
  for (unsigned r = 0; r < 8; ++r) std::memcpy(b.sbuf_at(r, 0, 256), &sdst[r * 64], 256);
  std::vector<std::uint16_t> bsrc(4 * 128), bdst(4 * 128);
  std::uint32_t x = 9;
  for (unsigned i = 0; i < bsrc.size(); ++i) {
    x = x * 1664525u + 1013904223u;
    bsrc[i] = static_cast<std::uint16_t>(0x3C00 + (x >> 24));  // around 2^-7 .. 2^1
    bdst[i] = static_cast<std::uint16_t>(0x3F00 + (x >> 25));  // around 0.5 .. 1
  }
  for (unsigned r = 0; r < 4; ++r) std::memcpy(b.sbuf_at(20 + r, 0x100, 256), &bsrc[r * 128], 256);
  std::memcpy(b.hbm_at(kMiB, bdst.size() * 2), bdst.data(), bdst.size() * 2);
  b.queue(0, {desc(hbm_ep(0, 256), sbuf_ep(0, 0), 8, 256, 0x08)});
  b.queue(1, {desc(sbuf_ep(20, 0x100), hbm_ep(kMiB, 256), 4, 256, 0x05)});
  ASSERT_EQ(b.run().status, platform::RunStatus::Ok);
  for (unsigned r = 0; r < 8; ++r)
    for (unsigned e = 0; e < 64; ++e) {
      float got;
      std::memcpy(&got, b.sbuf_at(r, e * 4, 4), 4);
      ASSERT_EQ(got, sdst[r * 64 + e] + hsrc[r * 64 + e]) << r << " " << e;
    }
  const elemref::Def& bf16 = elemref::kDefs[1];
  for (unsigned i = 0; i < bdst.size(); ++i) {
    std::uint16_t got;
    std::memcpy(&got, b.hbm_at(kMiB + i * 2, 2), 2);
    const std::uint32_t want =
        elemref::nearest(bf16, elemref::value(bf16, bdst[i]) + elemref::value(bf16, bsrc[i]));
    ASSERT_EQ(got, want) << i;
  }
  // An add on an HBM destination reads it too.
  std::map<std::string, std::uint64_t> hbm_read;
  for (const auto& e : b.core.stats().engines)
    if (e.counters.count("hbm_read_bytes")) hbm_read[e.name] = e.counters.at("hbm_read_bytes");
  EXPECT_EQ(hbm_read["dma1"], 1024u);  // the destination, read to add
  EXPECT_EQ(hbm_read["dma0"], 2048u);  // the source
}

// ---- bad descriptors: named, nothing written -----------------------------------

namespace {

// Runs one descriptor that must fault naming `what`, with every SBUF byte
// and HBM [0, 1 MiB) filled beforehand and unchanged after.
void expect_fault(const DmaDescriptor& d, const std::string& what,
                  timing::TimingConfig c = timing::default_timing(isa::Arch::Mariana)) {
  DmaCore b(c);
  const std::uint32_t cap = c.sbuf_bytes_per_partition;
  for (unsigned p = 0; p < 128; ++p) std::memset(b.sbuf_at(p, 0, cap), 0xA5, cap);
  std::memset(b.hbm_at(0, kMiB), 0x5A, kMiB);
  b.queue(0, {d});
  const platform::CoreRunResult r = b.run();
  EXPECT_EQ(r.status, platform::RunStatus::Fault);
  EXPECT_NE(r.message.find(what), std::string::npos) << r.message;
  EXPECT_TRUE(b.done.empty());
  for (unsigned p = 0; p < 128; ++p) {
    const std::uint8_t* s = b.sbuf_at(p, 0, cap);
    ASSERT_TRUE(std::all_of(s, s + cap, [](std::uint8_t x) { return x == 0xA5; }))
        << "partition " << p << " written";
  }
  const std::uint8_t* h = b.hbm_at(0, kMiB);
  ASSERT_TRUE(std::all_of(h, h + kMiB, [](std::uint8_t x) { return x == 0x5A; }));
}

}  // namespace

// A 1 GiB HBM (the profile overrides the 18 GiB default the static check
// uses): rows 0..126 fit, row 127 does not.
timing::TimingConfig one_gib_hbm() {
  timing::TimingConfig c = timing::default_timing(isa::Arch::Mariana);
  c.hbm.bytes = std::uint64_t{1} << 30;
  return c;
}
TEST(DmaEngines, PastTheConfiguredHbmCapacityFaultsWritingNothing) {
  expect_fault(desc(hbm_ep((1u << 30) - 127 * 8192 - 4096, 8192), sbuf_ep(0, 0x2000), 128, 8192),
               "dma_hbm_in_capacity(src)", one_gib_hbm());
}
TEST(DmaEngines, PastTheConfiguredHbmCapacityAsDestinationFaults) {
  expect_fault(desc(sbuf_ep(0, 0x2000), hbm_ep((1u << 30) - 1000, 8192), 2, 1024),
               "dma_hbm_in_capacity(dst)", one_gib_hbm());
}

TEST(DmaEngines, RowCrossingAPartitionFaultsWritingNothing) {
  expect_fault(desc(hbm_ep(0, 8192), sbuf_ep(0, 0x3F000), 2, 8192),
               "dma_sbuf_row_in_partition(dst)");
}

TEST(DmaEngines, RowsPastTheLastPartitionFault) {
  expect_fault(desc(hbm_ep(0, 1024), sbuf_ep(100, 0x2000), 29, 1024),
               "dma_sbuf_rows_in_partitions(dst)");
}

TEST(DmaCheck, RuntimeChecksNameTheirPredicate) {
  const timing::TimingConfig cayman = timing::default_timing(isa::Arch::Cayman);
  const DmaCapacities caps = dma_capacities(cayman, cayman.hbm.bytes);
  const auto fails = [&](DmaDescriptor d, const std::string& what) {
    try {
      check_dma(d, caps);
      ADD_FAILURE() << "no fault for " << what;
    } catch (const DmaFault& e) {
      EXPECT_EQ(std::string(e.what()).rfind(what, 0), 0u) << e.what();
    }
  };
  const DmaDescriptor ok = desc(hbm_ep(0, 4096), sbuf_ep(0, 0), 64, 2048);
  EXPECT_NO_THROW(check_dma(ok, caps));
  DmaDescriptor d = ok;
  d.num_rows = 0;
  fails(d, "dma_valid_num_rows");
  d = ok;
  d.row_bytes = 0;
  fails(d, "dma_valid_row_bytes");
  d = ok;
  d.src.kind = 3;
  fails(d, "dma_valid_endpoint_kind(src)");
  d = ok;
  d.dst.addr = isa::psum_addr(0, 0);
  fails(d, "dma_sbuf_endpoint_address(dst)");
  d = ok;
  d.dst.row_stride = 4;
  fails(d, "dma_sbuf_endpoint_row_stride(dst)");
  d = ok;
  d.dst.addr = isa::sbuf_addr(0, 224 * 1024 - 2047);  // CAYMAN: 224 KiB
  fails(d, "address error: dma_sbuf_row_in_partition(dst)");
  d = ok;
  d.src.addr = 12 * isa::kGiB - 63 * 4096 - 2047;  // CAYMAN: 12 GiB
  fails(d, "address error: dma_hbm_in_capacity(src)");
  d = ok;
  d.dst = hbm_ep(0x100000, 1000);
  fails(d, "dma_hbm_dst_rows_disjoint");
  d = ok;
  d.dst_rmw_op = 2;
  fails(d, "dma_valid_rmw_op");
  d = ok;
  d.dst_rmw_op = 1;
  d.rmw_dtype = 0x13;
  fails(d, "dma_valid_rmw_dtype");
  d = ok;
  d.rmw_dtype = 0x08;
  fails(d, "dma_rmw_dtype_only_with_op");
  d = ok;
  d.dst_rmw_op = 1;
  d.rmw_dtype = 0x07;
  d.row_bytes = 2046;
  fails(d, "dma_rmw_row_bytes_multiple");
  // No HBM in the core at all.
  DmaCapacities none = caps;
  none.has_hbm = false;
  EXPECT_THROW(check_dma(ok, none), DmaFault);
}

}  // namespace tpb::sc
