// MemPort: DMI fast path (memcpy + the same latency b_transport would add),
// b_transport fallback, one DMI request per region until invalidation,
// partition-crossing errors even inside a DMI region, byte accounting.
#include <array>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "models/isa/address_map.h"
#include "models/sc/memory/address_router.h"
#include "models/sc/memory/mem_port.h"
#include "models/sc/memory/partitioned_memory.h"
#include "models/sc/memory/semaphore_bank.h"
#include "sc_tests/sc/test_memory_bench.h"

namespace tpb::sc {
namespace {
using test::slot;

using test::InvalidatingTarget;
using test::ns;
using test::run_sc;

MemTiming sbuf_timing() {
  MemTiming t;
  t.latency = ns(10);
  t.per_beat = ns(1);
  t.beat_bytes = 64;
  return t;
}

// Quadrants 0 and 1 of the SBUF, the PSUM, the semaphores and a read-only-DMI
// target in the SFU tile region, all at their SPEC §2 addresses.
struct PortBench {
  PartitionedMemory q0{"q0", 32, 256 * 1024, sbuf_timing()};
  PartitionedMemory q1{"q1", 32, 256 * 1024, sbuf_timing()};
  PartitionedMemory psum{"psum", 128, 16 * 1024, sbuf_timing()};
  SemaphoreBank sem{"sem", [] {
                      MemTiming t;
                      t.latency = ns(4);
                      return t;
                    }()};
  InvalidatingTarget tiles{"tiles"};
  AddressRouter router{"router"};
  MemPort port{"port"};
  static constexpr std::uint64_t kTiles = isa::region_base(isa::Region::SfuTile);
  PortBench() {
    router.add_target("sbuf.q0", isa::sbuf_addr(0, 0), q0.span(), q0.socket);
    router.add_target("sbuf.q1", isa::sbuf_addr(32, 0), q1.span(), q1.socket);
    router.add_target("psum", isa::psum_addr(0, 0), psum.span(), psum.socket);
    router.add_target("sem", isa::kSemaphoreBase, SemaphoreBank::kSpan, sem.socket);
    router.add_target("tiles", kTiles, InvalidatingTarget::kSize, tiles.socket);
    port.socket.bind(router.target_socket);
  }
};

TEST(MemPort, CounterIndexFollowsTheAddressMap) {
  // Table from SPEC §2: SBUF quadrant = partition / 32; PSUM; the rest.
  EXPECT_EQ(MemPort::counter_index(isa::sbuf_addr(0, 0)), MemPort::kCountSbufQ0);
  EXPECT_EQ(MemPort::counter_index(isa::sbuf_addr(31, 0x3FFFF)), MemPort::kCountSbufQ0);
  EXPECT_EQ(MemPort::counter_index(isa::sbuf_addr(32, 0)), MemPort::kCountSbufQ1);
  EXPECT_EQ(MemPort::counter_index(isa::sbuf_addr(64, 8)), MemPort::kCountSbufQ2);
  EXPECT_EQ(MemPort::counter_index(isa::sbuf_addr(127, 8)), MemPort::kCountSbufQ3);
  EXPECT_EQ(MemPort::counter_index(isa::psum_addr(0, 0)), MemPort::kCountPsum);
  EXPECT_EQ(MemPort::counter_index(isa::psum_addr(127, 0x3FFF)), MemPort::kCountPsum);
  EXPECT_EQ(MemPort::counter_index(isa::kSemaphoreBase), MemPort::kCountOther);
  EXPECT_EQ(MemPort::counter_index(isa::region_base(isa::Region::SfuTile)), MemPort::kCountOther);
  EXPECT_EQ(MemPort::counter_index(std::uint64_t{1} << 40), MemPort::kCountOther);
}

TEST(MemPort, DmiPathMovesDataWithTheTargetsFullTimingAndAsksOnce) {
  PortBench pb;
  run_sc([&] {
    std::vector<std::uint8_t> w(300), r(300);
    std::iota(w.begin(), w.end(), 0);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(pb.port.write(isa::sbuf_addr(3, 0x80), w.data(), 300, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(d, ns(10 + 5));  // 300 bytes = 5 beats of 64, as b_transport charges
    EXPECT_EQ(std::memcmp(pb.q0.backdoor(slot(3) + 0x80, 300), w.data(), 300), 0);
    for (int i = 0; i < 10; ++i) {
      d = sc_core::SC_ZERO_TIME;
      ASSERT_EQ(pb.port.read(isa::sbuf_addr(5 + i, 0), r.data(), 64, d), tlm::TLM_OK_RESPONSE);
      EXPECT_EQ(d, ns(11));
    }
    d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(pb.port.read(isa::sbuf_addr(3, 0x80), r.data(), 300, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(r, w);
    // One DMI request for the whole of quadrant 0.
    EXPECT_EQ(pb.port.dmi_requests(), 1u);
    d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(pb.port.read(isa::sbuf_addr(40, 0), r.data(), 8, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(pb.port.dmi_requests(), 2u);  // quadrant 1 is another region

    EXPECT_EQ(pb.port.bytes_written()[MemPort::kCountSbufQ0], 300u);
    EXPECT_EQ(pb.port.bytes_read()[MemPort::kCountSbufQ0], 10u * 64 + 300);
    EXPECT_EQ(pb.port.bytes_read()[MemPort::kCountSbufQ1], 8u);
    EXPECT_EQ(pb.port.bytes_read()[MemPort::kCountPsum], 0u);
  });
}

TEST(MemPort, PsumDmiIsPerPartition) {
  PortBench pb;
  run_sc([&] {
    std::uint32_t v = 7;
    sc_core::sc_time d;
    for (unsigned p = 0; p < 4; ++p)
      ASSERT_EQ(pb.port.write(isa::psum_addr(p, 0x100), &v, 4, d), tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(pb.port.write(isa::psum_addr(2, 0x200), &v, 4, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(pb.port.dmi_requests(), 4u);
    EXPECT_EQ(pb.port.bytes_written()[MemPort::kCountPsum], 20u);
    // Past the 16 KiB: the cached denial of the slot tail sends it to the
    // target, which answers with an address error (and no bytes counted).
    EXPECT_EQ(pb.port.write(isa::psum_addr(2, 0x4000), &v, 4, d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(pb.port.write(isa::psum_addr(2, 0x4100), &v, 4, d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(pb.port.dmi_requests(), 5u);  // the denial was cached
    EXPECT_EQ(pb.port.bytes_written()[MemPort::kCountPsum], 20u);
  });
}

TEST(MemPort, PartitionCrossingIsAnAddressErrorEvenInsideADmiRegion) {
  PortBench pb;
  run_sc([&] {
    std::uint8_t buf[16] = {};
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(pb.port.read(isa::sbuf_addr(1, 0), buf, 16, d), tlm::TLM_OK_RESPONSE);  // DMI
    d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(pb.port.read(isa::sbuf_addr(2, 0) - 8, buf, 16, d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(d, sc_core::SC_ZERO_TIME);
    EXPECT_FALSE(pb.port.dmi(isa::sbuf_addr(2, 0) - 8, 16, false).has_value());
    EXPECT_EQ(pb.port.bytes_read()[MemPort::kCountSbufQ0], 16u);
    // Unmapped addresses: error from the router, no DMI.
    EXPECT_EQ(pb.port.read(isa::sbuf_addr(64, 0), buf, 4, d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_FALSE(pb.port.dmi(isa::sbuf_addr(64, 0), 4, false).has_value());
  });
}

TEST(MemPort, NonDmiTargetsUseBTransportAndTheDenialIsCached) {
  PortBench pb;
  run_sc([&] {
    pb.sem.set(3, 0xABCD);
    std::uint32_t v = 0;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(pb.port.read(isa::kSemaphoreBase + 12, &v, 4, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(v, 0xABCDu);
    EXPECT_EQ(d, ns(4));
    const std::uint32_t w = 5;
    for (int i = 0; i < 5; ++i)
      ASSERT_EQ(pb.port.write(isa::kSemaphoreBase + 8, &w, 4, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(pb.sem.get(2), 5u);
    EXPECT_EQ(pb.port.dmi_requests(), 1u);
    EXPECT_EQ(pb.port.bytes_read()[MemPort::kCountOther], 4u);
    EXPECT_EQ(pb.port.bytes_written()[MemPort::kCountOther], 20u);
    // A misaligned semaphore access is the target's error, passed through.
    EXPECT_EQ(pb.port.read(isa::kSemaphoreBase + 2, &v, 4, d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
  });
}

TEST(MemPort, ReadOnlyDmiServesReadsAndSendsWritesToTheTarget) {
  PortBench pb;
  run_sc([&] {
    pb.tiles.mem[100] = 42;
    std::uint8_t v = 0;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(pb.port.read(PortBench::kTiles + 100, &v, 1, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(v, 42);
    EXPECT_EQ(d, ns(2));  // flat DMI read latency: this target reports no MemTiming
    auto span = pb.port.dmi(PortBench::kTiles + 100, 10, false);
    ASSERT_TRUE(span.has_value());
    EXPECT_EQ(span->ptr, &pb.tiles.mem[100]);
    EXPECT_FALSE(span->timing.has_value());
    EXPECT_EQ(span->cost(10, sc_core::SC_ZERO_TIME, false), ns(2));
    EXPECT_FALSE(pb.port.dmi(PortBench::kTiles + 100, 10, true).has_value());
    d = sc_core::SC_ZERO_TIME;
    const std::uint8_t w = 9;
    ASSERT_EQ(pb.port.write(PortBench::kTiles + 101, &w, 1, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(d, ns(3));  // b_transport latency
    EXPECT_EQ(pb.tiles.mem[101], 9);
    EXPECT_EQ(pb.tiles.dmi_requests, 1u);
  });
}

TEST(MemPort, InvalidationDropsOverlappingRegionsOnly) {
  PortBench pb;
  run_sc([&] {
    std::uint8_t v = 0;
    sc_core::sc_time d;
    ASSERT_EQ(pb.port.read(PortBench::kTiles, &v, 1, d), tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(pb.port.read(isa::sbuf_addr(0, 0), &v, 1, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(pb.port.dmi_requests(), 2u);
    pb.tiles.invalidate(0x10, 0x20);
    ASSERT_EQ(pb.port.read(isa::sbuf_addr(0, 0), &v, 1, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(pb.port.dmi_requests(), 2u);  // the SBUF region survived
    ASSERT_EQ(pb.port.read(PortBench::kTiles + 0x800, &v, 1, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(pb.port.dmi_requests(), 3u);  // the tile region was asked for again
    EXPECT_EQ(pb.tiles.dmi_requests, 2u);
  });
}

TEST(MemPort, DmiSpanPointsAtTheAddressAndCarriesTiming) {
  PortBench pb;
  run_sc([&] {
    auto s = pb.port.dmi(isa::sbuf_addr(33, 0x40), 128, true);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->ptr, pb.q1.backdoor(slot(1) + 0x40, 128));
    EXPECT_EQ(s->read_latency, ns(10));
    EXPECT_EQ(s->write_latency, ns(10));
    ASSERT_TRUE(s->timing.has_value());
    EXPECT_EQ(s->timing->access_delay(128), ns(12));
    EXPECT_EQ(s->arbiter, nullptr);  // no contention window configured
    EXPECT_EQ(s->cost(128, sc_core::SC_ZERO_TIME, true), ns(12));
    // dmi() moves no data, so it counts nothing; account() does.
    EXPECT_EQ(pb.port.bytes_written()[MemPort::kCountSbufQ1], 0u);
    pb.port.account(isa::sbuf_addr(33, 0x40), 128, true);
    EXPECT_EQ(pb.port.bytes_written()[MemPort::kCountSbufQ1], 128u);
    EXPECT_FALSE(pb.port.dmi(isa::sbuf_addr(33, 0x40), 0, false).has_value());
  });
}

// Shared totals (a core's byte counters): the sum of the sharing ports'
// counters through accesses, a roll-back by set_counts, a port joining with
// counts of its own and a port leaving.
TEST(MemPort, SharedTotalsAreTheSumOfTheSharingPorts) {
  MemPort a{"a"}, b{"b"};
  MemPort::Totals totals;
  a.share_totals(&totals);
  a.account(isa::sbuf_addr(33, 0), 100, true);
  a.account(isa::sbuf_addr(2, 0), 5, false);
  b.account(isa::psum_addr(0, 0), 7, false);  // before b shares: added when it does
  b.share_totals(&totals);
  b.account(isa::sbuf_addr(34, 0), 11, true);
  b.account(0x7000000, 3, false);  // outside SBUF / PSUM: the "other" counter
  auto expect_sum = [&](const char* when) {
    for (unsigned i = 0; i < MemPort::kNumCounters; ++i) {
      EXPECT_EQ(totals.read[i], a.bytes_read()[i] + b.bytes_read()[i]) << when << " read " << i;
      EXPECT_EQ(totals.written[i], a.bytes_written()[i] + b.bytes_written()[i])
          << when << " written " << i;
    }
  };
  expect_sum("after the accesses");
  EXPECT_EQ(totals.written[MemPort::kCountSbufQ1], 111u);
  EXPECT_EQ(totals.read[MemPort::kCountSbufQ0], 5u);
  EXPECT_EQ(totals.read[MemPort::kCountPsum], 7u);
  EXPECT_EQ(totals.read[MemPort::kCountOther], 3u);
  a.set_counts({}, {});  // a fault's roll-back
  expect_sum("after a's roll-back");
  EXPECT_EQ(totals.written[MemPort::kCountSbufQ1], 11u);
  b.share_totals(nullptr);
  EXPECT_EQ(b.bytes_read()[MemPort::kCountPsum], 7u);  // b keeps its own
  for (unsigned i = 0; i < MemPort::kNumCounters; ++i)
    EXPECT_EQ(totals.read[i] + totals.written[i], 0u) << i;
}

TEST(MemPort, ZeroLengthAccessIsANoOp) {
  PortBench pb;
  run_sc([&] {
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(pb.port.read(0x7FFFFFF, nullptr, 0, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(d, sc_core::SC_ZERO_TIME);
    EXPECT_EQ(pb.port.dmi_requests(), 0u);
  });
}

}  // namespace
}  // namespace tpb::sc

namespace tpb::sc {
namespace {

TEST(MemPort, DmiAccessesOfTwoPortsContendForAQuadrantsBandwidth) {
  MemTiming t = sbuf_timing();
  t.contention_window = ns(100);
  PartitionedMemory q0("q0", 32, 256 * 1024, t);
  AddressRouter router("router");
  MemPort a("a"), b("b");
  test::TestInitiator init("init");
  router.add_target("sbuf.q0", 0, q0.span(), q0.socket);
  a.socket.bind(router.target_socket);
  b.socket.bind(router.target_socket);
  init.socket.bind(router.target_socket);
  run_sc([&] {
    std::vector<std::uint8_t> buf(64 * 80);
    sc_core::sc_time da = sc_core::SC_ZERO_TIME, db = sc_core::SC_ZERO_TIME;
    // Both read partition 0: one SRAM lane (other partitions, and the write
    // port, are other lanes).
    ASSERT_EQ(a.read(isa::sbuf_addr(0, 0), buf.data(), 64 * 80, da), tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(b.read(isa::sbuf_addr(0, 0x2000), buf.data(), 64 * 80, db), tlm::TLM_OK_RESPONSE);
    // Same timeline as the arbiter test: 80 beats alone, then 80 behind them.
    EXPECT_EQ(da, ns(90));
    EXPECT_EQ(db, ns(170));
    ASSERT_TRUE(b.dmi(isa::sbuf_addr(2, 0), 64, false).has_value());
    EXPECT_EQ(b.dmi(isa::sbuf_addr(2, 0), 64, false)->arbiter, &q0.arbiter());
    // A b_transport access in the same window waits behind both: window 0
    // is full (160 beats spilled to 60 in window 1); 1 beat -> 161, +10.
    std::uint8_t one[64];
    EXPECT_EQ(init.read(0x100, one, 64).delay, ns(171));
    EXPECT_EQ(a.dmi_requests(), 1u);
    // A caller using the span books through DmiSpan::cost: window 1 now holds
    // 61 beats; 39 more fit, the 40th spills to window 2 -> 200 + 1, +10.
    auto span = a.dmi(isa::sbuf_addr(0, 0x8000), 64 * 40, false);
    ASSERT_TRUE(span.has_value());
    EXPECT_EQ(span->cost(64 * 40, sc_core::SC_ZERO_TIME, false), ns(211));
  });
}

}  // namespace
}  // namespace tpb::sc

namespace tpb::sc {
namespace {

// One memory-cost path: direct() charges what read()/write() charge for the
// same bytes (both through mem_access_cost), counts them, and is the path
// read()/write() themselves take under DMI.
TEST(MemPort, DirectChargesAndCountsAsReadAndWriteDo) {
  PortBench pb;
  run_sc([&] {
    std::vector<std::uint8_t> buf(200, 0x5A);
    sc_core::sc_time d_rw = sc_core::SC_ZERO_TIME, d_direct = sc_core::SC_ZERO_TIME;
    ASSERT_EQ(pb.port.write(isa::sbuf_addr(2, 0x100), buf.data(), 200, d_rw), tlm::TLM_OK_RESPONSE);
    std::uint8_t* p = pb.port.direct(isa::sbuf_addr(3, 0x100), 200, true, d_direct);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p, pb.q0.backdoor(slot(3) + 0x100, 200));
    // 10 ns latency + ceil(200 / 64) = 4 beats of 1 ns, both ways.
    EXPECT_EQ(d_rw, ns(14));
    EXPECT_EQ(d_direct, ns(14));
    EXPECT_EQ(pb.port.bytes_written()[MemPort::kCountSbufQ0], 400u);
    // Outside DMI (the semaphores grant none): nullptr, nothing charged.
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(pb.port.direct(isa::kSemaphoreBase, 4, false, d), nullptr);
    EXPECT_EQ(d, sc_core::SC_ZERO_TIME);
    // A partition crossing is never served directly.
    EXPECT_EQ(pb.port.direct(isa::sbuf_addr(4, 0x3FFF0), 32, false, d), nullptr);
  });
}

// The observer hook: every b_transport and debug access is reported with its
// data and time; while observed the target grants no DMI, and attaching an
// observer invalidates DMI already granted, so nothing bypasses it.
TEST(PartitionedMemoryObserver, SeesEveryAccessAndTurnsDmiOff) {
  PortBench pb;
  run_sc([&] {
    std::uint32_t w = 0xCAFEF00Du, r = 0;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    // DMI granted and cached first.
    ASSERT_EQ(pb.port.write(isa::sbuf_addr(1, 0x10), &w, 4, d), tlm::TLM_OK_RESPONSE);
    ASSERT_TRUE(pb.port.dmi(isa::sbuf_addr(1, 0x10), 4, false).has_value());
    std::vector<MemOp> ops;
    std::vector<std::uint32_t> seen_words;
    pb.q0.add_observer([&](const MemOp& op) {
      ops.push_back(op);
      std::uint32_t v = 0;
      std::memcpy(&v, op.data, std::min(4u, op.len));
      seen_words.push_back(v);
    });
    EXPECT_TRUE(pb.q0.observed());
    // The cached region is gone and a new request is denied.
    EXPECT_FALSE(pb.port.dmi(isa::sbuf_addr(1, 0x10), 4, false).has_value());
    d = ns(7);
    ASSERT_EQ(pb.port.read(isa::sbuf_addr(1, 0x10), &r, 4, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(r, 0xCAFEF00Du);
    EXPECT_EQ(d, ns(7 + 11));  // the same cost through b_transport
    w = 0x01020304u;
    ASSERT_EQ(pb.port.write(isa::sbuf_addr(2, 0x20), &w, 4, d), tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(ops.size(), 2u);
    EXPECT_EQ(ops[0].cmd, tlm::TLM_READ_COMMAND);
    EXPECT_EQ(ops[0].addr, slot(1) + 0x10);
    EXPECT_EQ(ops[0].len, 4u);
    EXPECT_EQ(ops[0].time, ns(7));  // issue time: now + the initiator's offset
    EXPECT_FALSE(ops[0].debug);
    EXPECT_EQ(ops[1].cmd, tlm::TLM_WRITE_COMMAND);
    EXPECT_EQ(ops[1].addr, slot(2) + 0x20);
    EXPECT_EQ(ops[1].time, ns(18));
    EXPECT_EQ(seen_words, (std::vector<std::uint32_t>{0xCAFEF00Du, 0x01020304u}));
    // Other targets are not observed: the PSUM still grants DMI.
    EXPECT_TRUE(pb.port.dmi(isa::psum_addr(0, 0), 4, false).has_value());
  });
}

}  // namespace
}  // namespace tpb::sc
