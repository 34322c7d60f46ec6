// HbmMemory (SPEC §10) as a TLM target: data and the latency annotation,
// zeros where nothing was written, past capacity an address error with
// nothing written, command / byte-enable / streaming-width errors, DMI over
// one chunk (inclusive end) charged as b_transport, debug transport
// clipped at the capacity, reached through the router at 2^40; and sparse
// lazy storage: host memory and address space follow what was written, not
// the capacity; DMI one 2 MiB chunk at a time; accesses across chunks.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "models/isa/address_map.h"
#include "models/sc/engine/timing_config.h"
#include "models/sc/memory/address_router.h"
#include "models/sc/memory/hbm_memory.h"
#include "models/sc/memory/mem_port.h"
#include "sc_tests/sc/test_memory_bench.h"

namespace tpb::sc {
#if defined(__SANITIZE_ADDRESS__)
#define TPB_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TPB_TEST_ASAN 1
#endif
#endif
#ifdef TPB_TEST_ASAN
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif

namespace {
using test::kMiB;

using test::ns;
using test::run_sc;
using test::TestInitiator;

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

HbmTiming timing_100ns() { return HbmTiming{ns(100), 612500000000ull}; }

struct HbmBench {
  HbmMemory hbm;
  TestInitiator init{"init"};
  explicit HbmBench(std::uint64_t cap = 18 * kGiB) : hbm("hbm", cap, timing_100ns()) {
    init.socket.bind(hbm.socket);
  }
};

// Resident host memory of this process (/proc/self/status VmRSS), bytes.
std::uint64_t rss_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

TEST(HbmMemory, WritesStickUntouchedBytesReadZeroEveryAccessPaysTheLatency) {
  HbmBench b;
  run_sc([&] {
    std::vector<std::uint8_t> w(300), r(300, 0xEE);
    std::iota(w.begin(), w.end(), 7);
    const std::uint64_t cap = b.hbm.capacity();
    for (std::uint64_t a : {std::uint64_t{0}, 12345 * kMiB + 3, cap - 300}) {
      const test::Access wr = b.init.write(a, w.data(), 300);
      EXPECT_EQ(wr.status, tlm::TLM_OK_RESPONSE);
      EXPECT_EQ(wr.delay, ns(100));  // latency only: bandwidth is the share's
      const test::Access rd = b.init.read(a, r.data(), 300);
      EXPECT_EQ(rd.status, tlm::TLM_OK_RESPONSE);
      EXPECT_EQ(rd.delay, ns(100));
      EXPECT_EQ(r, w) << a;
    }
    // Never written: zeros.
    std::fill(r.begin(), r.end(), 0xEE);
    EXPECT_EQ(b.init.read(7 * kGiB, r.data(), 300).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(r, std::vector<std::uint8_t>(300, 0));
    EXPECT_EQ(b.init.read(299, r.data(), 2).status, tlm::TLM_OK_RESPONSE);  // tail of a write
    EXPECT_EQ(r[0], w[299]);
    EXPECT_EQ(r[1], 0);
    // A zero-length access and the ignore command are fine.
    EXPECT_EQ(b.init.read(cap, nullptr, 0).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.init.access(tlm::TLM_IGNORE_COMMAND, 64, r.data(), 4).status, tlm::TLM_OK_RESPONSE);
  });
}

TEST(HbmMemory, PastCapacityIsAnAddressErrorAndWritesNothing) {
  HbmBench b(1 * kGiB);
  run_sc([&] {
    const std::uint64_t cap = b.hbm.capacity();
    std::vector<std::uint8_t> w(64, 0x5A);
    EXPECT_EQ(b.init.write(cap, w.data(), 1).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(b.init.write(cap - 32, w.data(), 64).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(b.init.write(~std::uint64_t{0} - 8, w.data(), 64).status,
              tlm::TLM_ADDRESS_ERROR_RESPONSE);  // no wrap-around
    EXPECT_EQ(b.init.read(cap + 4096, w.data(), 4).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    // The straddling write left the last bytes inside untouched.
    std::vector<std::uint8_t> r(32, 0xEE);
    EXPECT_EQ(b.init.read(cap - 32, r.data(), 32).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(r, std::vector<std::uint8_t>(32, 0));
    EXPECT_EQ(b.init.write(cap - 64, w.data(), 64).status, tlm::TLM_OK_RESPONSE);
  });
}

TEST(HbmMemory, CommandByteEnableAndStreamingWidthErrors) {
  HbmBench b(64 * kMiB);
  run_sc([&] {
    std::uint8_t d[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    EXPECT_EQ(b.init.access(static_cast<tlm::tlm_command>(3), 0, d, 8).status,
              tlm::TLM_COMMAND_ERROR_RESPONSE);
    EXPECT_EQ(b.init.access(tlm::TLM_WRITE_COMMAND, 0, d, 8, nullptr, 0, 4).status,
              tlm::TLM_BURST_ERROR_RESPONSE);
    const unsigned char bad[2] = {0xFF, 0x12};
    EXPECT_EQ(b.init.access(tlm::TLM_WRITE_COMMAND, 0, d, 8, bad, 2).status,
              tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    // Byte enables repeat over the data: every other byte written.
    const unsigned char every_other[2] = {TLM_BYTE_ENABLED, TLM_BYTE_DISABLED};
    EXPECT_EQ(b.init.access(tlm::TLM_WRITE_COMMAND, 16, d, 8, every_other, 2).status,
              tlm::TLM_OK_RESPONSE);
    std::uint8_t r[8];
    EXPECT_EQ(b.init.read(16, r, 8).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(std::vector<std::uint8_t>(r, r + 8),
              (std::vector<std::uint8_t>{1, 0, 3, 0, 5, 0, 7, 0}));
  });
}

TEST(HbmMemory, DmiCoversOneChunkWithAnInclusiveEndAndTheLatency) {
  const std::uint64_t chunk = HbmStorage::kChunkBytes;  // 2 MiB
  HbmBench b(3 * kGiB + 100);
  run_sc([&] {
    tlm::tlm_dmi dmi;
    ASSERT_TRUE(b.init.get_dmi(2 * kGiB + 5, dmi));
    EXPECT_EQ(dmi.get_start_address(), 2 * kGiB);
    EXPECT_EQ(dmi.get_end_address(), 2 * kGiB + chunk - 1);
    EXPECT_TRUE(dmi.is_read_write_allowed());
    EXPECT_EQ(dmi.get_read_latency(), ns(100));
    EXPECT_EQ(dmi.get_write_latency(), ns(100));
    // A byte written through the pointer reads back through b_transport.
    dmi.get_dmi_ptr()[chunk - 1] = 0x42;
    std::uint8_t r = 0;
    EXPECT_EQ(b.init.read(2 * kGiB + chunk - 1, &r, 1).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(r, 0x42);
    // The last chunk ends at the capacity.
    tlm::tlm_dmi last;
    ASSERT_TRUE(b.init.get_dmi(3 * kGiB + 99, last));
    EXPECT_EQ(last.get_start_address(), 3 * kGiB);
    EXPECT_EQ(last.get_end_address(), 3 * kGiB + 99);
    tlm::tlm_dmi none;
    EXPECT_FALSE(b.init.get_dmi(3 * kGiB + 100, none));
    EXPECT_EQ(none.get_start_address(), 3 * kGiB + 100);
    EXPECT_EQ(none.get_end_address(), ~std::uint64_t{0});
    // Two chunks mapped, nothing else.
    EXPECT_EQ(b.hbm.mapped_bytes(), 2 * chunk);
  });
}

// An access across a chunk boundary (b_transport, with and without byte
// enables) and a debug access across one land where a contiguous memory would
// put them.
TEST(HbmMemory, AccessesAcrossChunkBoundaries) {
  const std::uint64_t chunk = HbmStorage::kChunkBytes;
  HbmBench b(64 * kMiB);
  run_sc([&] {
    std::vector<std::uint8_t> w(300), r(300, 0xEE);
    std::iota(w.begin(), w.end(), 1);
    ASSERT_EQ(b.init.write(chunk - 100, w.data(), 300).status, tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(b.init.read(chunk - 100, r.data(), 300).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(r, w);
    const unsigned char every_other[2] = {TLM_BYTE_ENABLED, TLM_BYTE_DISABLED};
    std::vector<std::uint8_t> z(8, 0xAA);
    ASSERT_EQ(
        b.init.access(tlm::TLM_WRITE_COMMAND, 2 * chunk - 4, z.data(), 8, every_other, 2).status,
        tlm::TLM_OK_RESPONSE);
    std::vector<std::uint8_t> got(8);
    EXPECT_EQ(b.init.debug(tlm::TLM_READ_COMMAND, 2 * chunk - 4, got.data(), 8), 8u);
    EXPECT_EQ(got, (std::vector<std::uint8_t>{0xAA, 0, 0xAA, 0, 0xAA, 0, 0xAA, 0}));
    EXPECT_EQ(b.init.debug(tlm::TLM_WRITE_COMMAND, 3 * chunk - 2, w.data(), 4), 4u);
    EXPECT_EQ(b.init.read(3 * chunk - 2, r.data(), 4).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(std::vector<std::uint8_t>(r.begin(), r.begin() + 4),
              std::vector<std::uint8_t>(w.begin(), w.begin() + 4));
    EXPECT_EQ(b.hbm.backdoor(chunk - 2, 4), nullptr);  // a backdoor stays in one chunk
  });
}

TEST(HbmMemory, DebugTransportIsClippedAtTheCapacity) {
  HbmBench b(1 * kGiB);
  run_sc([&] {
    std::vector<std::uint8_t> w(100, 9), r(100, 0);
    EXPECT_EQ(b.init.debug(tlm::TLM_WRITE_COMMAND, kGiB - 40, w.data(), 100), 40u);
    EXPECT_EQ(b.init.debug(tlm::TLM_READ_COMMAND, kGiB - 40, r.data(), 100), 40u);
    EXPECT_EQ(std::vector<std::uint8_t>(r.begin(), r.begin() + 40),
              std::vector<std::uint8_t>(40, 9));
    EXPECT_EQ(b.init.debug(tlm::TLM_READ_COMMAND, kGiB, r.data(), 4), 0u);
    EXPECT_EQ(b.hbm.backdoor(kGiB - 40, 41), nullptr);
    ASSERT_NE(b.hbm.backdoor(kGiB - 40, 40), nullptr);
    EXPECT_EQ(*b.hbm.backdoor(kGiB - 40, 40), 9);
  });
}

TEST(HbmMemory, CapacityLimits) {
  EXPECT_THROW(HbmMemory("zero", 0, timing_100ns()), std::invalid_argument);
  EXPECT_THROW(HbmMemory("huge", isa::kHbmWindow + 1, timing_100ns()), std::invalid_argument);
  EXPECT_THROW(HbmMemory("nobw", kGiB, HbmTiming{ns(1), 0}), std::invalid_argument);
  // The whole 2^40 window: nothing is mapped for it (a table of a pointer
  // per 2 MiB chunk, 4 MiB).
  const std::uint64_t before = rss_bytes();
  HbmMemory full("full", isa::kHbmWindow, timing_100ns());
  EXPECT_EQ(full.capacity(), isa::kHbmWindow);
  EXPECT_EQ(full.mapped_bytes(), 0u);
  EXPECT_LT(rss_bytes(), before + 8 * kMiB);
}

// SPEC §10 / the issue: a run that touches 64 MB holds about 64 MB of host
// memory whatever the capacity, and one byte near the end stays small.
TEST(HbmMemory, SparseStorageFollowsWhatIsWritten) {
  HbmBench b;  // 18 GiB
  const std::uint64_t cap = b.hbm.capacity();
  run_sc([&] {
    const std::uint64_t base = rss_bytes();
    std::uint8_t one = 1;
    ASSERT_EQ(b.init.write(cap - 1, &one, 1).status, tlm::TLM_OK_RESPONSE);
    EXPECT_LT(rss_bytes() - base, 1 * kMiB) << "one byte near the end";
    // 64 MiB in 1024 chunks of 64 KiB spread over the whole capacity.
    std::vector<std::uint8_t> chunk(64 * 1024, 0x77);
    const std::uint64_t stride = (cap - chunk.size()) / 1023 / 4096 * 4096;
    for (std::uint64_t k = 0; k < 1024; ++k)
      ASSERT_EQ(b.init.write(k * stride, chunk.data(), chunk.size()).status, tlm::TLM_OK_RESPONSE);
    const std::uint64_t grown = rss_bytes() - base;
    EXPECT_GE(grown, 60 * kMiB);
    // AddressSanitizer adds its shadow (an eighth of what is touched) and its
    // allocator's slack to the process's resident size.
    EXPECT_LE(grown, (kAsan ? 72 + 8 + 16 : 72) * kMiB);
    // Address space: the 2 MiB chunks written (a write may straddle two),
    // nothing more: about 2 of the 18 GiB.
    const std::uint64_t mapped = b.hbm.mapped_bytes();
    EXPECT_LE(mapped, (2 * 1024 + 1) * HbmStorage::kChunkBytes);
    // Reading 1 GiB that nobody wrote allocates nothing (the zero page).
    std::vector<std::uint8_t> r(16 * kMiB);
    for (std::uint64_t k = 0; k < 64; ++k)
      ASSERT_EQ(b.init.read(cap / 2 + k * r.size(), r.data(), r.size()).status,
                tlm::TLM_OK_RESPONSE);
    EXPECT_LE(rss_bytes() - base, grown + 16 * kMiB + 4 * kMiB);  // r itself, page tables
    EXPECT_EQ(b.hbm.mapped_bytes(), mapped);
  });
}

// Reached through the router at isa::kHbmBase = 2^40 (SPEC §10), by a MemPort
// that takes DMI and charges it as b_transport.
TEST(HbmMemory, ThroughTheRouterAt2To40) {
  HbmMemory hbm("hbm", 2 * kGiB, timing_100ns());
  AddressRouter router("router");
  MemPort port("port");
  router.add_target("hbm", isa::kHbmBase, hbm.capacity(), hbm.socket);
  port.socket.bind(router.target_socket);
  run_sc([&] {
    std::uint32_t w = 0xCAFEF00D, r = 0;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(port.write(isa::hbm_addr(kGiB + 8), &w, 4, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(d, ns(100));
    EXPECT_EQ(port.read(isa::hbm_addr(kGiB + 8), &r, 4, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(d, ns(200));
    EXPECT_EQ(r, w);
    EXPECT_GE(port.dmi_requests(), 1u);  // served by DMI, charged the same
    EXPECT_EQ(*reinterpret_cast<std::uint32_t*>(hbm.backdoor(kGiB + 8, 4)), w);
    EXPECT_EQ(port.write(isa::hbm_addr(2 * kGiB - 2), &w, 4, d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(port.read(isa::hbm_addr(2 * kGiB), &r, 4, d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
  });
}

}  // namespace
}  // namespace tpb::sc
