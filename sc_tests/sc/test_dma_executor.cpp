// The DMA executor (SPEC §10) and the HBM bandwidth share it streams
// through, on a bench of four SBUF quadrants and an HBM behind one router
// with up to 16 queue threads: the time of a descriptor against the formula
// latency + bytes / min(queue bandwidth, what the HBM grants) + the fill, for
// one queue, for 4 (each at its cap) and for 16 (the HBM's 612.5 GB/s
// shared: 38.28 GB/s each), staggered starts (max-min fair, computed by
// hand), HBM -> HBM and SBUF -> SBUF; the same times with a 1 ns and a 10 us
// quantum; the bytes moved, the add on write; and bad descriptors faulting
// by predicate name with nothing written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "models/isa/address_map.h"
#include "models/sc/engine/dma_executor.h"
#include "models/sc/engine/timing_config.h"
#include "models/sc/memory/address_router.h"
#include "models/sc/memory/bandwidth_share.h"
#include "models/sc/memory/core_memory_map.h"
#include "models/sc/memory/hbm_memory.h"
#include "models/sc/memory/mem_port.h"
#include "models/sc/memory/partitioned_memory.h"
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

// One DMA queue: a thread that performs its descriptors in order, each
// after an optional wait, recording the results (or the fault).
class Queue : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Queue);
  MemPort port;
  struct Job {
    DmaDescriptor d;
    sc_core::sc_time delay_before;
  };
  std::vector<Job> jobs;
  std::vector<DmaResult> results;
  std::string fault;

  Queue(sc_core::sc_module_name n, BandwidthShare* hbm, const DmaTiming& t)
      : sc_core::sc_module(n), port("port"), exec_(port, hbm, t) {
    SC_THREAD(run);
  }

 private:
  void run() {
    tlm_utils::tlm_quantumkeeper qk;
    qk.reset();
    for (const Job& j : jobs) {
      qk.inc(j.delay_before);
      try {
        results.push_back(exec_.execute(j.d, qk));
      } catch (const DmaFault& e) {
        fault = e.what();
        return;
      }
    }
    qk.sync();
  }
  DmaExecutor exec_;
};

// Four SBUF quadrants and the HBM behind one router, n queues bound to it.
struct DmaBench {
  TimingConfig cfg;
  std::vector<std::unique_ptr<PartitionedMemory>> sbuf;
  HbmMemory hbm;
  AddressRouter router{"router"};
  std::vector<std::unique_ptr<Queue>> queues;

  explicit DmaBench(unsigned n, TimingConfig c = default_timing(isa::Arch::Mariana),
                    sc_core::sc_time quantum = sc_core::sc_time(1, sc_core::SC_US))
      : cfg(c), hbm("hbm", c.hbm.bytes, hbm_timing(c)) {
    tlm_utils::tlm_quantumkeeper::set_global_quantum(quantum);
    for (unsigned q = 0; q < isa::kNumQuadrants; ++q) {
      sbuf.push_back(std::make_unique<PartitionedMemory>(("sbuf" + std::to_string(q)).c_str(), 32,
                                                         cfg.sbuf_bytes_per_partition,
                                                         mem_timing(cfg, cfg.sbuf)));
      router.add_target(sbuf_quadrant_name(q), sbuf_quadrant_base(q), kSbufQuadrantSpan,
                        sbuf.back()->socket);
    }
    router.add_target("hbm", isa::kHbmBase, hbm.capacity(), hbm.socket);
    for (unsigned k = 0; k < n; ++k) {
      queues.push_back(std::make_unique<Queue>(("dma" + std::to_string(k)).c_str(), &hbm.bandwidth,
                                               dma_timing(cfg)));
      queues.back()->port.socket.bind(router.target_socket);
    }
  }
  std::uint8_t* sbuf_at(unsigned partition, std::uint32_t off, std::uint32_t len) {
    return sbuf[partition / 32]->backdoor((std::uint64_t{partition % 32} << 18) + off, len);
  }
  void run() { sc_core::sc_start(); }
};

// The formula's pieces on MARIANA's defaults, in ps.
constexpr std::uint64_t kDmaLatencyPs = 1300 * 1000;  // semaphore-to-start
constexpr std::uint64_t kHbmLatencyPs = 100 * 1000;
constexpr std::uint64_t kSbufLatencyPs = 42857;  // 60 cycles at 1.4 GHz
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

// ---- the executor: one queue -----------------------------------------------------

TEST(DmaExecutor, OneQueueHbmToSbufIsTheFormulaAndMovesTheBytes) {
  DmaBench b(1);
  // 128 rows of 4 KiB, 8 KiB apart in HBM, to partitions 0..127 at 0x1000.
  const DmaDescriptor d = desc(hbm_ep(0x10000, 8192), sbuf_ep(0, 0x1000), 128, 4096);
  fill_pattern(b.hbm.backdoor(0x10000, 128 * 8192), 128 * 8192, 1);
  b.queues[0]->jobs = {{d, sc_core::SC_ZERO_TIME}};
  b.run();
  ASSERT_EQ(b.queues[0]->fault, "");
  ASSERT_EQ(b.queues[0]->results.size(), 1u);
  const DmaResult& r = b.queues[0]->results[0];
  EXPECT_EQ(r.bytes, 512 * kKiB);
  EXPECT_EQ(r.issue_ps, 0u);
  EXPECT_EQ(r.start_ps, kDmaLatencyPs);
  // 512 KiB at the queue's 38.4 GB/s (the HBM grants more than that).
  EXPECT_NEAR(static_cast<double>(r.end_ps),
              static_cast<double>(kDmaLatencyPs + bytes_ps(512 * kKiB, 38.4e9) + kHbmLatencyPs +
                                  kSbufLatencyPs),
              1.0);
  EXPECT_EQ(r.hbm_bytes, 512 * kKiB);
  for (unsigned row = 0; row < 128; ++row)
    ASSERT_EQ(
        std::memcmp(b.sbuf_at(row, 0x1000, 4096), b.hbm.backdoor(0x10000 + row * 8192, 4096), 4096),
        0)
        << "row " << row;
  EXPECT_EQ(b.queues[0]->port.bytes_read()[MemPort::kCountOther], 512 * kKiB);
}

TEST(DmaExecutor, SbufToSbufRunsAtTheQueueBandwidth) {
  DmaBench b(1);
  fill_pattern(b.sbuf_at(10, 0, 64 * kKiB), 64 * kKiB, 2);
  fill_pattern(b.sbuf_at(11, 0, 64 * kKiB), 64 * kKiB, 3);
  // Partitions 10, 11 -> 100, 101; 64 KiB rows.
  b.queues[0]->jobs = {{desc(sbuf_ep(10, 0), sbuf_ep(100, 0x8000), 2, 64 * kKiB), {}}};
  b.run();
  ASSERT_EQ(b.queues[0]->fault, "");
  const DmaResult& r = b.queues[0]->results[0];
  EXPECT_EQ(r.hbm_bytes, 0u);
  EXPECT_NEAR(
      static_cast<double>(r.end_ps),
      static_cast<double>(kDmaLatencyPs + bytes_ps(128 * kKiB, 38.4e9) + 2 * kSbufLatencyPs), 1.0);
  EXPECT_EQ(std::memcmp(b.sbuf_at(100, 0x8000, 64 * kKiB), b.sbuf_at(10, 0, 64 * kKiB), 64 * kKiB),
            0);
  EXPECT_EQ(std::memcmp(b.sbuf_at(101, 0x8000, 64 * kKiB), b.sbuf_at(11, 0, 64 * kKiB), 64 * kKiB),
            0);
}

TEST(DmaExecutor, HbmToHbmUsesTheHbmTwice) {
  // HBM at 50 GB/s: a copy reads and writes it, so it gets 25 GB/s, below
  // the queue's 38.4.
  TimingConfig c = default_timing(isa::Arch::Mariana);
  c.hbm.mbytes_per_s = 50000;
  DmaBench b(1, c);
  fill_pattern(b.hbm.backdoor(0, 16 * 3000), 16 * 3000, 4);
  b.queues[0]->jobs = {{desc(hbm_ep(0, 3000), hbm_ep(kMiB, 4096), 16, 3000), {}}};
  b.run();
  ASSERT_EQ(b.queues[0]->fault, "");
  const DmaResult& r = b.queues[0]->results[0];
  EXPECT_EQ(r.hbm_bytes, 2 * 48000u);
  EXPECT_NEAR(static_cast<double>(r.end_ps),
              static_cast<double>(kDmaLatencyPs + bytes_ps(48000, 25e9) + 2 * kHbmLatencyPs), 1.0);
  for (unsigned row = 0; row < 16; ++row)
    EXPECT_EQ(std::memcmp(b.hbm.backdoor(kMiB + row * 4096, 3000), b.hbm.backdoor(row * 3000, 3000),
                          3000),
              0);
}

// ---- queues sharing the HBM (contention modelled, measured here) ----------------

namespace {

// n queues, each 128 rows x 8 KiB (1 MiB) HBM -> SBUF starting together;
// every queue's end time.
std::vector<std::uint64_t> run_queues(unsigned n, sc_core::sc_time quantum) {
  DmaBench b(n, default_timing(isa::Arch::Mariana), quantum);
  for (unsigned q = 0; q < n; ++q) {
    fill_pattern(b.hbm.backdoor(q * kMiB, kMiB), kMiB, 10 + q);
    b.queues[q]->jobs = {{desc(hbm_ep(q * kMiB, 8192), sbuf_ep(0, q * 8192), 128, 8192), {}}};
  }
  b.run();
  std::vector<std::uint64_t> ends;
  for (unsigned q = 0; q < n; ++q) {
    EXPECT_EQ(b.queues[q]->fault, "");
    EXPECT_EQ(b.queues[q]->results.size(), 1u);
    if (!b.queues[q]->results.empty()) ends.push_back(b.queues[q]->results[0].end_ps);
    for (unsigned row = 0; row < 128; row += 31)
      EXPECT_EQ(std::memcmp(b.sbuf_at(row, q * 8192, 8192),
                            b.hbm.backdoor(q * kMiB + row * 8192, 8192), 8192),
                0)
          << "queue " << q << " row " << row;
  }
  EXPECT_EQ(b.hbm.bandwidth.peak_flows(), n);
  return ends;
}

void expect_sixteen_share(sc_core::sc_time quantum) {
  // 16 x 38.4 = 614.4 GB/s asked of a 612.5 GB/s share: each gets 612.5 / 16.
  const std::vector<std::uint64_t> ends = run_queues(16, quantum);
  ASSERT_EQ(ends.size(), 16u);
  const double want = kDmaLatencyPs + 1e12 * kMiB / (612.5e9 / 16) + kHbmLatencyPs + kSbufLatencyPs;
  for (unsigned q = 0; q < 16; ++q)
    EXPECT_NEAR(static_cast<double>(ends[q]), want, 1.0) << "queue " << q;
  // The 16 MiB left the HBM at its bandwidth, not at 16 x the queue's.
  const double transfer_s = (ends[0] - kDmaLatencyPs - kHbmLatencyPs - kSbufLatencyPs) / 1e12;
  EXPECT_NEAR(16 * kMiB / transfer_s / 1e9, 612.5, 0.01);
}

}  // namespace

TEST(DmaExecutor, FourQueuesEachRunAtTheirCap) {
  const std::vector<std::uint64_t> ends = run_queues(4, sc_core::sc_time(1, sc_core::SC_US));
  ASSERT_EQ(ends.size(), 4u);
  for (std::uint64_t e : ends)
    EXPECT_NEAR(static_cast<double>(e),
                static_cast<double>(kDmaLatencyPs + bytes_ps(kMiB, 38.4e9) + kHbmLatencyPs +
                                    kSbufLatencyPs),
                1.0);
}

TEST(DmaExecutor, SixteenQueuesShareThePerCoreHbmBandwidth) {
  expect_sixteen_share(sc_core::sc_time(1, sc_core::SC_US));
}
// The same times whatever the quantum (each flow starts at its synced time).
TEST(DmaExecutor, SixteenQueuesSameTimesWithA1nsQuantum) {
  expect_sixteen_share(sc_core::sc_time(1, sc_core::SC_NS));
}
TEST(DmaExecutor, SixteenQueuesSameTimesWithA10usQuantum) {
  expect_sixteen_share(sc_core::sc_time(10, sc_core::SC_US));
}

TEST(DmaExecutor, StaggeredQueuesShareMaxMinFair) {
  // HBM 50 GB/s, two queues of 38.4: q0 starts alone, q1 10 us later.
  TimingConfig c = default_timing(isa::Arch::Mariana);
  c.hbm.mbytes_per_s = 50000;
  DmaBench b(2, c);
  b.queues[0]->jobs = {{desc(hbm_ep(0, 8192), sbuf_ep(0, 0), 128, 8192), {}}};
  b.queues[1]->jobs = {{desc(hbm_ep(kMiB, 8192), sbuf_ep(0, 8192), 128, 8192),
                        sc_core::sc_time(10, sc_core::SC_US)}};
  b.run();
  ASSERT_EQ(b.queues[0]->results.size(), 1u);
  ASSERT_EQ(b.queues[1]->results.size(), 1u);
  // By hand: q0 alone at 38.4 GB/s for 10 us (384000 B), then both at 25 GB/s
  // until q0's remaining 664576 B are through (26.58304 us); then q1 alone at
  // 38.4 for its remaining 384000 B (10 us).
  const double s0 = kDmaLatencyPs, s1 = 10e6 + kDmaLatencyPs;
  const double q0_end = s1 + (kMiB - 384000.0) / 25e9 * 1e12;
  const double q1_end = q0_end + 384000.0 / 38.4e9 * 1e12;
  const double fill = kHbmLatencyPs + kSbufLatencyPs;
  EXPECT_EQ(b.queues[0]->results[0].start_ps, static_cast<std::uint64_t>(s0));
  EXPECT_EQ(b.queues[1]->results[0].start_ps, static_cast<std::uint64_t>(s1));
  EXPECT_NEAR(static_cast<double>(b.queues[0]->results[0].end_ps), q0_end + fill, 1.0);
  EXPECT_NEAR(static_cast<double>(b.queues[1]->results[0].end_ps), q1_end + fill, 1.0);
}

TEST(DmaExecutor, BackToBackDescriptorsEachPayTheLatency) {
  DmaBench b(1);
  const DmaDescriptor d = desc(hbm_ep(0, 1024), sbuf_ep(0, 0), 4, 1024);
  b.queues[0]->jobs = {{d, {}}, {d, {}}, {d, {}}};
  b.run();
  ASSERT_EQ(b.queues[0]->results.size(), 3u);
  const std::uint64_t one = kDmaLatencyPs + bytes_ps(4096, 38.4e9) + kHbmLatencyPs + kSbufLatencyPs;
  for (unsigned k = 0; k < 3; ++k) {
    EXPECT_NEAR(static_cast<double>(b.queues[0]->results[k].issue_ps), double(k * one), 1.0 * k);
    EXPECT_NEAR(static_cast<double>(b.queues[0]->results[k].end_ps), double((k + 1) * one),
                1.0 * (k + 1));
  }
}

// ---- accumulate on write --------------------------------------------------------

TEST(DmaExecutor, AddOnWriteFp32AndBf16) {
  DmaBench b(2);
  // FP32: 8 rows of 64 elements HBM -> SBUF (+=); BF16: SBUF -> HBM (+=).
  std::vector<float> hsrc(8 * 64), sdst(8 * 64);
  for (unsigned i = 0; i < hsrc.size(); ++i) {
    hsrc[i] = 0.1f * static_cast<float>(i) - 3.0f;
    sdst[i] = 1.0f / static_cast<float>(i + 1);
  }
  std::memcpy(b.hbm.backdoor(0, hsrc.size() * 4), hsrc.data(), hsrc.size() * 4);
  for (unsigned r = 0; r < 8; ++r) std::memcpy(b.sbuf_at(r, 0, 256), &sdst[r * 64], 256);
  std::vector<std::uint16_t> bsrc(4 * 128), bdst(4 * 128);
  std::uint32_t x = 9;
  for (unsigned i = 0; i < bsrc.size(); ++i) {
    x = x * 1664525u + 1013904223u;
    bsrc[i] = static_cast<std::uint16_t>(0x3C00 + (x >> 24));  // around 2^-7 .. 2^1
    bdst[i] = static_cast<std::uint16_t>(0x3F00 + (x >> 25));  // around 0.5 .. 1
  }
  for (unsigned r = 0; r < 4; ++r) std::memcpy(b.sbuf_at(20 + r, 0x100, 256), &bsrc[r * 128], 256);
  std::memcpy(b.hbm.backdoor(kMiB, bdst.size() * 2), bdst.data(), bdst.size() * 2);
  b.queues[0]->jobs = {{desc(hbm_ep(0, 256), sbuf_ep(0, 0), 8, 256, 0x08), {}}};
  b.queues[1]->jobs = {{desc(sbuf_ep(20, 0x100), hbm_ep(kMiB, 256), 4, 256, 0x05), {}}};
  b.run();
  ASSERT_EQ(b.queues[0]->fault, "");
  ASSERT_EQ(b.queues[1]->fault, "");
  for (unsigned r = 0; r < 8; ++r)
    for (unsigned e = 0; e < 64; ++e) {
      float got;
      std::memcpy(&got, b.sbuf_at(r, e * 4, 4), 4);
      ASSERT_EQ(got, sdst[r * 64 + e] + hsrc[r * 64 + e]) << r << " " << e;
    }
  const elemref::Def& bf16 = elemref::kDefs[1];
  for (unsigned i = 0; i < bdst.size(); ++i) {
    std::uint16_t got;
    std::memcpy(&got, b.hbm.backdoor(kMiB + i * 2, 2), 2);
    const std::uint32_t want =
        elemref::nearest(bf16, elemref::value(bf16, bdst[i]) + elemref::value(bf16, bsrc[i]));
    ASSERT_EQ(got, want) << i;
  }
  // An add on an HBM destination reads it too: two HBM streams of 1 KiB.
  EXPECT_EQ(b.queues[1]->results[0].hbm_bytes, 2 * 1024u);
  EXPECT_EQ(b.queues[0]->results[0].hbm_bytes, 2048u);  // the source only
}

// ---- bad descriptors: named, nothing written -----------------------------------

namespace {

// Runs one descriptor that must fault naming `what`, with every SBUF byte
// and HBM [0, 1 MiB) filled beforehand and unchanged after.
void expect_fault(const DmaDescriptor& d, const std::string& what,
                  TimingConfig c = default_timing(isa::Arch::Mariana)) {
  DmaBench b(1, c);
  const std::uint32_t cap = c.sbuf_bytes_per_partition;
  for (unsigned p = 0; p < 128; ++p) std::memset(b.sbuf_at(p, 0, cap), 0xA5, cap);
  std::memset(b.hbm.backdoor(0, kMiB), 0x5A, kMiB);
  b.queues[0]->jobs = {{d, {}}};
  b.run();
  EXPECT_NE(b.queues[0]->fault.find(what), std::string::npos) << b.queues[0]->fault;
  EXPECT_TRUE(b.queues[0]->results.empty());
  for (unsigned p = 0; p < 128; ++p) {
    const std::uint8_t* s = b.sbuf_at(p, 0, cap);
    ASSERT_TRUE(std::all_of(s, s + cap, [](std::uint8_t x) { return x == 0xA5; }))
        << "partition " << p << " written";
  }
  const std::uint8_t* h = b.hbm.backdoor(0, kMiB);
  ASSERT_TRUE(std::all_of(h, h + kMiB, [](std::uint8_t x) { return x == 0x5A; }));
}

}  // namespace

// A 1 GiB HBM (the profile overrides the 18 GiB default the static check
// uses): rows 0..126 fit, row 127 does not.
TimingConfig one_gib_hbm() {
  TimingConfig c = default_timing(isa::Arch::Mariana);
  c.hbm.bytes = std::uint64_t{1} << 30;
  return c;
}
TEST(DmaExecutor, PastTheConfiguredHbmCapacityFaultsWritingNothing) {
  expect_fault(desc(hbm_ep((1u << 30) - 127 * 8192 - 4096, 8192), sbuf_ep(0, 0x2000), 128, 8192),
               "address error: dma_hbm_in_capacity(src)", one_gib_hbm());
}
TEST(DmaExecutor, PastTheConfiguredHbmCapacityAsDestinationFaults) {
  expect_fault(desc(sbuf_ep(0, 0x2000), hbm_ep((1u << 30) - 1000, 8192), 2, 1024),
               "address error: dma_hbm_in_capacity(dst)", one_gib_hbm());
}

TEST(DmaExecutor, RowCrossingAPartitionFaultsWritingNothing) {
  expect_fault(desc(hbm_ep(0, 8192), sbuf_ep(0, 0x3F000), 2, 8192),
               "dma_sbuf_row_in_partition(dst)");
}

TEST(DmaExecutor, RowsPastTheLastPartitionFault) {
  expect_fault(desc(hbm_ep(0, 1024), sbuf_ep(100, 0x2000), 29, 1024),
               "dma_sbuf_rows_in_partitions(dst)");
}

TEST(DmaExecutor, RuntimeChecksNameTheirPredicate) {
  MemPort port("port");
  BandwidthShare share("share", 1000);
  const DmaExecutor ex(port, &share, dma_timing(default_timing(isa::Arch::Cayman)));
  const auto fails = [&](DmaDescriptor d, const std::string& what) {
    try {
      ex.check(d);
      ADD_FAILURE() << "no fault for " << what;
    } catch (const DmaFault& e) {
      EXPECT_EQ(std::string(e.what()).rfind(what, 0), 0u) << e.what();
    }
  };
  const DmaDescriptor ok = desc(hbm_ep(0, 4096), sbuf_ep(0, 0), 64, 2048);
  EXPECT_NO_THROW(ex.check(ok));
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
  const DmaExecutor none(port, nullptr, dma_timing(default_timing(isa::Arch::Cayman)));
  EXPECT_THROW(none.check(ok), DmaFault);
}

}  // namespace tpb::sc
