// PartitionedMemory (SBUF quadrant / PSUM) as a TLM target: data, latency
// annotation, capacity and partition-boundary errors, byte enables, streaming
// width, DMI ranges (inclusive end) and debug transport.
#include <array>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "models/sc/engine/timing_config.h"
#include "models/sc/memory/mem_timing.h"
#include "models/sc/memory/partitioned_memory.h"
#include "sc_tests/sc/test_memory_bench.h"

namespace tpb::sc {
namespace {
using test::kKiB;
using test::slot;

using test::ns;
using test::run_sc;
using test::TestInitiator;

MemTiming timing_10_1() {
  MemTiming t;
  t.latency = ns(10);
  t.per_beat = ns(1);
  t.beat_bytes = 64;
  return t;
}

struct MemBench {
  PartitionedMemory mem;
  TestInitiator init{"init"};
  MemBench(unsigned parts, std::uint32_t bpp, MemTiming t = timing_10_1())
      : mem("mem", parts, bpp, t) {
    init.socket.bind(mem.socket);
  }
};

TEST(MemTiming, AccessDelayIsLatencyPlusWholeBeats) {
  const MemTiming t = timing_10_1();
  // Beats are ceil(len / 64): 1..64 bytes one beat, 65 two, 0 none.
  EXPECT_EQ(t.access_delay(0), ns(10));
  EXPECT_EQ(t.access_delay(1), ns(11));
  EXPECT_EQ(t.access_delay(64), ns(11));
  EXPECT_EQ(t.access_delay(65), ns(12));
  EXPECT_EQ(t.access_delay(4096), ns(10 + 64));
  MemTiming no_bw = t;
  no_bw.beat_bytes = 0;
  EXPECT_EQ(no_bw.access_delay(1000), ns(10));
}

// Power-of-two beats (shifted) and others (divided) give ceil(len / beat)
// beats, counted here by subtraction.
TEST(MemTiming, BeatsAreWholeForEveryBeatSize) {
  for (const unsigned beat : {1u, 2u, 3u, 4u, 48u, 64u, 100u, 128u, 1u << 20}) {
    MemTiming t = timing_10_1();
    t.beat_bytes = beat;
    for (std::uint64_t len : {0ull, 1ull, 2ull, 63ull, 64ull, 65ull, 127ull, 128ull, 129ull,
                              4095ull, 4096ull, 4097ull, 262144ull, 1000003ull}) {
      std::uint64_t beats = 0;
      for (std::uint64_t left = len; left > 0; left -= std::min<std::uint64_t>(left, beat)) ++beats;
      EXPECT_EQ(t.beats_time(len), ns(static_cast<double>(beats)))
          << len << " bytes, beat " << beat;
    }
  }
}

TEST(PartitionedMemory, WriteThenReadReturnsDataAndAnnotatesLatency) {
  MemBench b(32, 256 * kKiB);
  run_sc([&] {
    std::array<std::uint8_t, 100> w{}, r{};
    std::iota(w.begin(), w.end(), 1);
    const std::uint64_t a = slot(3) + 0x100;
    auto wr = b.init.write(a, w.data(), 100);
    EXPECT_EQ(wr.status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(wr.delay, ns(12));  // 10 + 2 beats
    auto rd = b.init.read(a, r.data(), 100);
    EXPECT_EQ(rd.status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(rd.delay, ns(12));
    EXPECT_EQ(r, w);
    // Layout: partition p at byte p << 18 of one buffer.
    const std::uint8_t* p = b.mem.backdoor(a, 100);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(std::memcmp(p, w.data(), 100), 0);
  });
}

TEST(PartitionedMemory, AccessPastCapacityIsAddressError) {
  MemBench b(32, 192 * kKiB);  // v2 SBUF
  run_sc([&] {
    std::uint8_t buf[8] = {0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA};
    const std::uint64_t end = 192 * kKiB;
    EXPECT_EQ(b.init.write(slot(7) + end - 4, buf, 4).status, tlm::TLM_OK_RESPONSE);
    auto over = b.init.write(slot(7) + end - 4, buf, 8);
    EXPECT_EQ(over.status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(over.delay, sc_core::SC_ZERO_TIME);  // no latency on an error
    EXPECT_EQ(b.init.read(slot(7) + end, buf, 1).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(b.init.read(slot(7) + 0x3FFFF, buf, 1).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(b.init.read(slot(32), buf, 1).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(b.init.read(~std::uint64_t{0} - 2, buf, 1).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    // Nothing was read into buf by the failed reads.
    for (std::uint8_t v : buf) EXPECT_EQ(v, 0xAA);
  });
}

TEST(PartitionedMemory, AccessCrossingAPartitionIsAddressError) {
  MemBench b(32, 256 * kKiB);
  run_sc([&] {
    std::uint8_t buf[8] = {};
    EXPECT_EQ(b.init.read(slot(1) - 4, buf, 8).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(b.init.read(slot(1) - 8, buf, 8).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.init.read(slot(31) + slot(1) - 8, buf, 8).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.init.read(slot(31) + slot(1) - 7, buf, 8).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  });
}

TEST(PartitionedMemory, PsumGeometry) {
  MemBench b(128, 16 * kKiB);
  run_sc([&] {
    std::uint32_t v = 0x11223344, r = 0;
    EXPECT_EQ(b.init.write(slot(127) + 16 * kKiB - 4, &v, 4).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.init.read(slot(127) + 16 * kKiB - 4, &r, 4).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(r, 0x11223344u);
    EXPECT_EQ(b.init.read(slot(127) + 16 * kKiB, &r, 1).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(b.init.read(slot(0) + 16 * kKiB, &r, 1).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(b.init.read(slot(128), &r, 1).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  });
}

TEST(PartitionedMemory, ByteEnablesWriteAndReadOnlyEnabledLanes) {
  MemBench b(32, 256 * kKiB);
  run_sc([&] {
    std::uint8_t ones[8];
    std::memset(ones, 0x11, 8);
    ASSERT_EQ(b.init.write(0x40, ones, 8).status, tlm::TLM_OK_RESPONSE);
    // Pattern of length 2 repeats over the 8 bytes: even lanes enabled.
    const unsigned char be[2] = {TLM_BYTE_ENABLED, TLM_BYTE_DISABLED};
    std::uint8_t w[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    auto wr = b.init.access(tlm::TLM_WRITE_COMMAND, 0x40, w, 8, be, 2);
    EXPECT_EQ(wr.status, tlm::TLM_OK_RESPONSE);
    std::uint8_t r[8];
    ASSERT_EQ(b.init.read(0x40, r, 8).status, tlm::TLM_OK_RESPONSE);
    const std::uint8_t expect[8] = {1, 0x11, 3, 0x11, 5, 0x11, 7, 0x11};
    EXPECT_EQ(std::memcmp(r, expect, 8), 0);

    // Read with the opposite lanes: disabled bytes of the buffer stay.
    const unsigned char be_odd[2] = {TLM_BYTE_DISABLED, TLM_BYTE_ENABLED};
    std::uint8_t rr[8];
    std::memset(rr, 0xEE, 8);
    EXPECT_EQ(b.init.access(tlm::TLM_READ_COMMAND, 0x40, rr, 8, be_odd, 2).status,
              tlm::TLM_OK_RESPONSE);
    const std::uint8_t expect_r[8] = {0xEE, 0x11, 0xEE, 0x11, 0xEE, 0x11, 0xEE, 0x11};
    EXPECT_EQ(std::memcmp(rr, expect_r, 8), 0);
  });
}

TEST(PartitionedMemory, MalformedByteEnablesAreByteEnableError) {
  MemBench b(32, 256 * kKiB);
  run_sc([&] {
    std::uint8_t w[4] = {9, 9, 9, 9};
    const unsigned char half[1] = {0x0F};  // neither enabled nor disabled
    EXPECT_EQ(b.init.access(tlm::TLM_WRITE_COMMAND, 0, w, 4, half, 1).status,
              tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    const unsigned char ok[1] = {TLM_BYTE_ENABLED};
    EXPECT_EQ(b.init.access(tlm::TLM_WRITE_COMMAND, 0, w, 4, ok, 0).status,
              tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);  // pointer with zero length
    std::uint32_t r = 0xFFFFFFFF;
    ASSERT_EQ(b.init.read(0, &r, 4).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(r, 0u);  // the rejected writes changed nothing
  });
}

TEST(PartitionedMemory, StreamingWidthBelowLengthIsBurstError) {
  MemBench b(32, 256 * kKiB);
  run_sc([&] {
    std::uint8_t buf[8] = {};
    EXPECT_EQ(b.init.access(tlm::TLM_READ_COMMAND, 0, buf, 8, nullptr, 0, 4).status,
              tlm::TLM_BURST_ERROR_RESPONSE);
    EXPECT_EQ(b.init.access(tlm::TLM_READ_COMMAND, 0, buf, 8, nullptr, 0, 8).status,
              tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.init.access(tlm::TLM_READ_COMMAND, 0, buf, 8, nullptr, 0, 64).status,
              tlm::TLM_OK_RESPONSE);
  });
}

TEST(PartitionedMemory, IgnoreCommandIsOkAndUnknownCommandIsCommandError) {
  MemBench b(32, 256 * kKiB);
  run_sc([&] {
    std::uint8_t buf[4] = {1, 2, 3, 4};
    EXPECT_EQ(b.init.access(tlm::TLM_IGNORE_COMMAND, 0, buf, 4).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.mem.backdoor(0, 4)[0], 0);  // ignore moved nothing
    EXPECT_EQ(b.init.access(static_cast<tlm::tlm_command>(3), 0, buf, 4).status,
              tlm::TLM_COMMAND_ERROR_RESPONSE);
  });
}

TEST(PartitionedMemory, FullSlotsGrantDmiOverTheWholeQuadrant) {
  MemBench b(32, 256 * kKiB);
  run_sc([&] {
    tlm::tlm_dmi dmi;
    ASSERT_TRUE(b.init.get_dmi(slot(9) + 0x1234, dmi));
    EXPECT_EQ(dmi.get_start_address(), 0u);
    EXPECT_EQ(dmi.get_end_address(), slot(32) - 1);  // inclusive
    EXPECT_TRUE(dmi.is_read_write_allowed());
    EXPECT_EQ(dmi.get_read_latency(), ns(10));
    EXPECT_EQ(dmi.get_write_latency(), ns(10));
    // Pointer arithmetic equals address arithmetic.
    const std::uint32_t v = 0xCAFEF00D;
    std::memcpy(dmi.get_dmi_ptr() + slot(9) + 0x1234, &v, 4);
    EXPECT_EQ(b.init.read_u32(slot(9) + 0x1234), 0xCAFEF00Du);
  });
}

TEST(PartitionedMemory, PartialSlotsGrantDmiPerPartitionAndDenyTheHole) {
  MemBench b(32, 192 * kKiB);
  run_sc([&] {
    tlm::tlm_dmi dmi;
    ASSERT_TRUE(b.init.get_dmi(slot(5) + 0x10, dmi));
    EXPECT_EQ(dmi.get_start_address(), slot(5));
    EXPECT_EQ(dmi.get_end_address(), slot(5) + 192 * kKiB - 1);
    const std::uint32_t v = 0x0BADF00D;
    ASSERT_EQ(b.init.write(slot(5) + 0x10, &v, 4).status, tlm::TLM_OK_RESPONSE);
    std::uint32_t got;
    std::memcpy(&got, dmi.get_dmi_ptr() + 0x10, 4);  // ptr is at the range start
    EXPECT_EQ(got, 0x0BADF00Du);

    tlm::tlm_dmi hole;
    EXPECT_FALSE(b.init.get_dmi(slot(5) + 200 * kKiB, hole));
    EXPECT_EQ(hole.get_start_address(), slot(5) + 192 * kKiB);
    EXPECT_EQ(hole.get_end_address(), slot(6) - 1);
    EXPECT_FALSE(hole.is_read_allowed());
    EXPECT_FALSE(hole.is_write_allowed());

    tlm::tlm_dmi above;
    EXPECT_FALSE(b.init.get_dmi(slot(40), above));
    EXPECT_EQ(above.get_start_address(), slot(32));
  });
}

TEST(PartitionedMemory, DmiRequestCarryingTheTimingExtensionGetsFullTiming) {
  MemBench b(128, 16 * kKiB);
  run_sc([&] {
    tlm::tlm_generic_payload t;
    t.set_address(slot(2));
    DmiTimingExtension ext;
    t.set_extension(&ext);
    tlm::tlm_dmi dmi;
    EXPECT_TRUE(b.init.socket->get_direct_mem_ptr(t, dmi));
    t.clear_extension(&ext);
    EXPECT_TRUE(ext.filled);
    EXPECT_EQ(ext.timing.latency, ns(10));
    EXPECT_EQ(ext.timing.per_beat, ns(1));
    EXPECT_EQ(ext.timing.beat_bytes, 64u);
  });
}

TEST(PartitionedMemory, DebugTransportIsClippedAtPartitionCapacity) {
  MemBench b(32, 192 * kKiB);
  run_sc([&] {
    std::uint8_t w[32];
    std::iota(w, w + 32, 100);
    EXPECT_EQ(b.init.debug(tlm::TLM_WRITE_COMMAND, slot(2) + 192 * kKiB - 16, w, 32), 16u);
    std::uint8_t r[16] = {};
    EXPECT_EQ(b.init.debug(tlm::TLM_READ_COMMAND, slot(2) + 192 * kKiB - 16, r, 16), 16u);
    EXPECT_EQ(std::memcmp(r, w, 16), 0);
    EXPECT_EQ(b.init.debug(tlm::TLM_READ_COMMAND, slot(2) + 192 * kKiB, r, 4), 0u);
    EXPECT_EQ(b.init.debug(tlm::TLM_READ_COMMAND, slot(33), r, 4), 0u);
  });
}

TEST(PartitionedMemory, ImpossibleGeometryThrowsAtConstruction) {
  EXPECT_THROW(PartitionedMemory("zero", 0, 1024, MemTiming{}), std::invalid_argument);
  EXPECT_THROW(PartitionedMemory("many", 129, 1024, MemTiming{}), std::invalid_argument);
  EXPECT_THROW(PartitionedMemory("big", 32, 256 * 1024 + 1, MemTiming{}), std::invalid_argument);
  EXPECT_THROW(PartitionedMemory("empty", 32, 0, MemTiming{}), std::invalid_argument);
}

}  // namespace
}  // namespace tpb::sc

namespace tpb::sc {
namespace {

// Beats and windows: 1 ns per 64-byte beat, 100 ns windows (100 beats each),
// 10 ns latency. Expected values are worked out by hand from a timeline of
// one beat per ns shared by all initiators.
MemTiming contended() {
  MemTiming t;
  t.latency = test::ns(10);
  t.per_beat = test::ns(1);
  t.beat_bytes = 64;
  t.contention_window = test::ns(100);
  return t;
}

TEST(BandwidthArbiter, OffWithoutAWindowAndNoStallForOneSequentialInitiator) {
  MemTiming t = contended();
  t.contention_window = sc_core::SC_ZERO_TIME;
  BandwidthArbiter off(t);
  EXPECT_FALSE(off.enabled());
  EXPECT_EQ(off.access(sc_core::SC_ZERO_TIME, sc_core::SC_ZERO_TIME, 64 * 500), test::ns(510));
  EXPECT_EQ(off.access(sc_core::SC_ZERO_TIME, sc_core::SC_ZERO_TIME, 64 * 500), test::ns(510));

  BandwidthArbiter a(contended());
  ASSERT_TRUE(a.enabled());
  // Back-to-back accesses, each issued when the previous one completed.
  EXPECT_EQ(a.access(sc_core::SC_ZERO_TIME, sc_core::SC_ZERO_TIME, 64 * 50), test::ns(60));
  EXPECT_EQ(a.access(sc_core::SC_ZERO_TIME, test::ns(60), 64 * 50), test::ns(60));
  EXPECT_EQ(a.access(sc_core::SC_ZERO_TIME, test::ns(120), 64 * 50), test::ns(60));
  EXPECT_EQ(a.total_stall(), sc_core::SC_ZERO_TIME);
}

TEST(BandwidthArbiter, TwoInitiatorsInOneWindowShareTheBeats) {
  BandwidthArbiter a(contended());
  // A: 80 beats from t=0 -> last beat at 80, +10 latency.
  EXPECT_EQ(a.access(sc_core::SC_ZERO_TIME, sc_core::SC_ZERO_TIME, 64 * 80), test::ns(90));
  // B: 80 beats from t=0 behind A's -> last beat at 160, +10 latency.
  EXPECT_EQ(a.access(sc_core::SC_ZERO_TIME, sc_core::SC_ZERO_TIME, 64 * 80), test::ns(170));
  EXPECT_EQ(a.total_stall(), test::ns(80));
}

TEST(BandwidthArbiter, AnInitiatorRunningAheadDoesNotDelayAnEarlierOne) {
  BandwidthArbiter a(contended());
  // Temporal decoupling: A runs first but its access is at t=500.
  EXPECT_EQ(a.access(sc_core::SC_ZERO_TIME, test::ns(500), 64 * 100), test::ns(110));
  // B's access at t=0 lies in an earlier window: no stall.
  EXPECT_EQ(a.access(sc_core::SC_ZERO_TIME, sc_core::SC_ZERO_TIME, 64 * 100), test::ns(110));
  // C at t=520 lands in A's full window and spills into the next one:
  // 10 beats in window 6 -> last beat at 610.
  EXPECT_EQ(a.access(sc_core::SC_ZERO_TIME, test::ns(520), 64 * 10), test::ns(610 - 520 + 10));
}

TEST(PartitionedMemory, BTransportBooksBandwidthWhenContentionIsOn) {
  MemBench b(32, 256 * kKiB, contended());
  run_sc([&] {
    std::vector<std::uint8_t> buf(64 * 80);
    auto first = b.init.read(0, buf.data(), 64 * 80);
    EXPECT_EQ(first.delay, ns(90));
    // The same partition (lane), also issued at t=0: behind the first.
    auto second = b.init.read(0x1000, buf.data(), 64 * 80);
    EXPECT_EQ(second.delay, ns(170));
    EXPECT_EQ(b.mem.arbiter().total_stall(), ns(80));
    // Another partition is another SRAM lane: no wait.
    auto third = b.init.read(slot(1), buf.data(), 64 * 80);
    EXPECT_EQ(third.delay, ns(90));
    EXPECT_EQ(b.mem.arbiter().total_stall(), ns(80));
  });
}

}  // namespace
}  // namespace tpb::sc

// The engine conflicts of TIMING.md as the default profiles book them: two
// engines streaming the same partition at the same time. v2 [A]: Vector and
// GpSimd share SBUF access, Vector and Scalar share PSUM; v3+ [B]: the SBUF
// conflict is lifted, PSUM conflicts only on the same bank.

namespace tpb::sc {
namespace {

// The stall the second of two 4 KiB reads of `addr2` sees after one of
// `addr1`, both issued at t = 0 on a target built from `m` of `arch`.
sc_core::sc_time second_stall(isa::Arch arch, bool psum, std::uint64_t addr1, std::uint64_t addr2) {
  const timing::TimingConfig c = timing::default_timing(arch);
  const timing::MemCycles& m = psum ? c.psum : c.sbuf;
  const MemTiming t = mem_timing(c, m);
  BandwidthArbiter a(t, psum ? 128 : 32,
                     psum ? c.psum_bytes_per_partition : c.sbuf_bytes_per_partition);
  mem_access_cost(t, &a, sc_core::SC_ZERO_TIME, 4096, addr1);
  const sc_core::sc_time second = mem_access_cost(t, &a, sc_core::SC_ZERO_TIME, 4096, addr2);
  return second - t.access_delay(4096);
}

TEST(EngineConflicts, SbufIsSharedOnV2AndNotFromV3) {
  const std::uint64_t p5 = std::uint64_t{5} << 18;
  EXPECT_GT(second_stall(isa::Arch::Sunda, false, p5, p5 + 0x8000), sc_core::SC_ZERO_TIME);
  for (isa::Arch a : {isa::Arch::Cayman, isa::Arch::Mariana, isa::Arch::Maverick})
    EXPECT_EQ(second_stall(a, false, p5, p5 + 0x8000), sc_core::SC_ZERO_TIME) << isa::arch_name(a);
  // Another partition never conflicts (its own SRAM).
  EXPECT_EQ(second_stall(isa::Arch::Sunda, false, p5, p5 + (1u << 18)), sc_core::SC_ZERO_TIME);
}

TEST(EngineConflicts, PsumConflictsOnV2AndOnlyInTheSameBankFromV3) {
  const std::uint64_t p7 = std::uint64_t{7} << 18;
  // Banks of 2 KiB: offset 0x000 is bank 0, 0x800 bank 1.
  EXPECT_GT(second_stall(isa::Arch::Sunda, true, p7, p7 + 0x800), sc_core::SC_ZERO_TIME);
  for (isa::Arch a : {isa::Arch::Cayman, isa::Arch::Mariana, isa::Arch::Maverick}) {
    EXPECT_GT(second_stall(a, true, p7, p7 + 0x100), sc_core::SC_ZERO_TIME) << isa::arch_name(a);
    EXPECT_EQ(second_stall(a, true, p7, p7 + 0x800), sc_core::SC_ZERO_TIME) << isa::arch_name(a);
  }
}

TEST(EngineConflicts, OneEngineAloneNeverWaitsForItself) {
  // Back to back on one lane, each access issued when the previous ended.
  const timing::TimingConfig c = timing::default_timing(isa::Arch::Sunda);
  const MemTiming t = mem_timing(c, c.sbuf);
  BandwidthArbiter a(t, 32, c.sbuf_bytes_per_partition);
  sc_core::sc_time at = sc_core::SC_ZERO_TIME;
  for (int k = 0; k < 20; ++k) {
    const sc_core::sc_time d = mem_access_cost(t, &a, at, 3000, 0);
    EXPECT_EQ(d, t.access_delay(3000)) << k;
    at += d;
  }
  EXPECT_EQ(a.total_stall(), sc_core::SC_ZERO_TIME);
}

}  // namespace
}  // namespace tpb::sc
