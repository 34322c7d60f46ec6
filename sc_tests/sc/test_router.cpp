// AddressRouter: decode table, base subtraction, unmapped / row-overrun
// errors, DMI range translation (global, inclusive), invalidation fan-out, and
// the core address map built by map_core_memories (SPEC §2).
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "models/isa/address_map.h"
#include "models/sc/memory/address_router.h"
#include "models/sc/memory/core_memory_map.h"
#include "models/sc/memory/engine_registers.h"
#include "models/sc/memory/instruction_queue.h"
#include "models/sc/memory/partitioned_memory.h"
#include "models/sc/memory/semaphore_bank.h"
#include "sc_tests/sc/test_memory_bench.h"

namespace tpb::sc {
namespace {
using test::slot;

using test::InvalidatingTarget;
using test::ns;
using test::run_sc;
using test::TestInitiator;

MemTiming lat(double n) {
  MemTiming t;
  t.latency = ns(n);
  return t;
}

// Two memories at 0x1000'0000 and 0x2000'0000 plus an invalidating target at
// 0x3000'0000, two initiators.
struct RouterBench {
  AddressRouter router{"router"};
  PartitionedMemory a{"a", 2, 256 * 1024, lat(5)};
  PartitionedMemory b{"b", 4, 16 * 1024, lat(7)};
  InvalidatingTarget inv{"inv"};
  TestInitiator i0{"i0"}, i1{"i1"};
  static constexpr std::uint64_t kA = 0x10000000, kB = 0x20000000, kInv = 0x30000000;
  RouterBench() {
    router.add_target("a", kA, a.span(), a.socket);
    router.add_target("b", kB, b.span(), b.socket);
    // Expose only the first 2 KiB of the 4 KiB target: DMI and invalidation
    // ranges must be clipped to the row.
    router.add_target("inv", kInv, 2048, inv.socket);
    i0.socket.bind(router.target_socket);
    i1.socket.bind(router.target_socket);
  }
};

TEST(AddressRouter, TableListsRowsInPortOrderAndDecodes) {
  RouterBench rb;
  const auto& t = rb.router.table();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].name, "a");
  EXPECT_EQ(t[0].base, RouterBench::kA);
  EXPECT_EQ(t[0].size, slot(2));
  EXPECT_EQ(t[0].port, 0u);
  EXPECT_EQ(t[1].last(), RouterBench::kB + slot(4) - 1);
  EXPECT_EQ(t[2].port, 2u);
  EXPECT_EQ(rb.router.decode(RouterBench::kB + 5), &t[1]);
  EXPECT_EQ(rb.router.decode(RouterBench::kA - 1), nullptr);
  EXPECT_EQ(rb.router.decode(RouterBench::kInv + 2048), nullptr);
  EXPECT_EQ(rb.router.decode(RouterBench::kInv + 2047), &t[2]);
  run_sc([] {});
}

TEST(AddressRouter, OverlappingOrEmptyRowsAreRejected) {
  RouterBench rb;
  PartitionedMemory c("c", 1, 1024, MemTiming{});
  try {
    rb.router.add_target("c", RouterBench::kB + slot(4) - 1, 16, c.socket);
    FAIL() << "overlap accepted";
  } catch (const std::invalid_argument& e) {
    // The message names both rows.
    EXPECT_NE(std::string(e.what()).find("'c'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'b'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(rb.router.add_target("c", 0x40000000, 0, c.socket), std::invalid_argument);
  EXPECT_THROW(rb.router.add_target("c", ~std::uint64_t{0} - 4, 16, c.socket),
               std::invalid_argument);
  rb.router.add_target("c", 0x40000000, 1024, c.socket);  // valid row binds the socket
  run_sc([] {});
}

TEST(AddressRouter, ForwardsWithBaseSubtractedAndRestoresTheAddress) {
  RouterBench rb;
  run_sc([&] {
    const std::uint32_t v = 0x600DCAFE;
    auto w = rb.i0.write(RouterBench::kB + slot(3) + 0x20, &v, 4);
    EXPECT_EQ(w.status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(w.delay, ns(7));  // b's latency, not a's
    EXPECT_EQ(w.address_after, RouterBench::kB + slot(3) + 0x20);
    std::uint32_t got = 0;
    std::memcpy(&got, rb.b.backdoor(slot(3) + 0x20, 4), 4);
    EXPECT_EQ(got, 0x600DCAFEu);
    EXPECT_EQ(rb.i1.read_u32(RouterBench::kB + slot(3) + 0x20), 0x600DCAFEu);
    // The same local address in a is untouched.
    EXPECT_EQ(rb.i1.read_u32(RouterBench::kA + slot(1) + 0x20), 0u);
  });
}

TEST(AddressRouter, UnmappedAndRowOverrunAreAddressErrors) {
  RouterBench rb;
  run_sc([&] {
    std::uint8_t buf[16] = {};
    EXPECT_EQ(rb.i0.read(0, buf, 4).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(rb.i0.read(RouterBench::kA + slot(2), buf, 4).status,
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(rb.i0.read(RouterBench::kInv + 2040, buf, 16).status,
              tlm::TLM_ADDRESS_ERROR_RESPONSE);  // runs past the row end
    EXPECT_EQ(rb.i0.read(RouterBench::kInv + 2032, buf, 16).status, tlm::TLM_OK_RESPONSE);
    // The target's own errors come through unchanged.
    EXPECT_EQ(rb.i0.read(RouterBench::kB + 16 * 1024, buf, 4).status,
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
  });
}

TEST(AddressRouter, DmiRangesAreTranslatedToGlobalAddresses) {
  RouterBench rb;
  run_sc([&] {
    tlm::tlm_dmi da;
    ASSERT_TRUE(rb.i0.get_dmi(RouterBench::kA + 0x123, da));
    EXPECT_EQ(da.get_start_address(), RouterBench::kA);
    EXPECT_EQ(da.get_end_address(), RouterBench::kA + slot(2) - 1);
    EXPECT_EQ(da.get_dmi_ptr(), rb.a.backdoor(0, 1));

    tlm::tlm_dmi db;
    ASSERT_TRUE(rb.i0.get_dmi(RouterBench::kB + slot(2) + 8, db));
    EXPECT_EQ(db.get_start_address(), RouterBench::kB + slot(2));
    EXPECT_EQ(db.get_end_address(), RouterBench::kB + slot(2) + 16 * 1024 - 1);
    EXPECT_EQ(db.get_dmi_ptr(), rb.b.backdoor(slot(2), 1));

    // The target grants 4 KiB; the row exposes 2 KiB.
    tlm::tlm_dmi di;
    ASSERT_TRUE(rb.i0.get_dmi(RouterBench::kInv, di));
    EXPECT_EQ(di.get_start_address(), RouterBench::kInv);
    EXPECT_EQ(di.get_end_address(), RouterBench::kInv + 2047);

    // Unmapped: denied over the whole gap between rows.
    tlm::tlm_dmi gap;
    EXPECT_FALSE(rb.i0.get_dmi(RouterBench::kA + slot(2) + 5, gap));
    EXPECT_EQ(gap.get_start_address(), RouterBench::kA + slot(2));
    EXPECT_EQ(gap.get_end_address(), RouterBench::kB - 1);
    EXPECT_FALSE(gap.is_read_allowed());
    tlm::tlm_dmi low;
    EXPECT_FALSE(rb.i0.get_dmi(0x10, low));
    EXPECT_EQ(low.get_start_address(), 0u);
    EXPECT_EQ(low.get_end_address(), RouterBench::kA - 1);

    // A denial inside a row is translated too (b's unbacked slot tail).
    tlm::tlm_dmi tail;
    EXPECT_FALSE(rb.i0.get_dmi(RouterBench::kB + slot(1) + 20 * 1024, tail));
    EXPECT_EQ(tail.get_start_address(), RouterBench::kB + slot(1) + 16 * 1024);
    EXPECT_EQ(tail.get_end_address(), RouterBench::kB + slot(2) - 1);
  });
}

TEST(AddressRouter, InvalidationFansOutToEveryInitiatorInGlobalAddresses) {
  RouterBench rb;
  run_sc([&] {
    rb.inv.invalidate(0x100, 0x1FF);
    rb.inv.invalidate(0x400, ~std::uint64_t{0});  // clipped to the 2 KiB row
    rb.inv.invalidate(0x900, 0xA00);              // outside the row: dropped
    for (TestInitiator* i : {&rb.i0, &rb.i1}) {
      ASSERT_EQ(i->invalidations.size(), 2u) << i->name();
      EXPECT_EQ(i->invalidations[0].first, RouterBench::kInv + 0x100);
      EXPECT_EQ(i->invalidations[0].second, RouterBench::kInv + 0x1FF);
      EXPECT_EQ(i->invalidations[1].first, RouterBench::kInv + 0x400);
      EXPECT_EQ(i->invalidations[1].second, RouterBench::kInv + 2047);
    }
  });
}

TEST(AddressRouter, DebugTransportIsRoutedAndClippedAtTheRow) {
  RouterBench rb;
  run_sc([&] {
    std::uint8_t w[64];
    for (int i = 0; i < 64; ++i) w[i] = static_cast<std::uint8_t>(i + 1);
    EXPECT_EQ(rb.i0.debug(tlm::TLM_WRITE_COMMAND, RouterBench::kA + slot(1) + 16, w, 64), 64u);
    EXPECT_EQ(std::memcmp(rb.a.backdoor(slot(1) + 16, 64), w, 64), 0);
    std::uint8_t r[64] = {};
    EXPECT_EQ(rb.i0.debug(tlm::TLM_READ_COMMAND, RouterBench::kA + slot(2) - 32, r, 64), 32u);
    EXPECT_EQ(rb.i0.debug(tlm::TLM_READ_COMMAND, 0x5, r, 4), 0u);
  });
}

// The full core map: every row at the address SPEC §2 / address_map.h gives.
struct CoreBench {
  std::array<std::unique_ptr<PartitionedMemory>, 4> q;
  PartitionedMemory psum{"psum", 128, 16 * 1024, lat(2)};
  SemaphoreBank sem{"sem"};
  EngineRegisterFile regs{"regs"};
  std::array<std::unique_ptr<InstructionQueue>, 4> queues;
  AddressRouter router{"router"};
  TestInitiator init{"init"};
  explicit CoreBench(isa::Arch arch) {
    const auto cap = isa::default_capacity(arch);
    std::array<PartitionedMemory*, 4> qp{};
    std::array<InstructionQueue*, 4> qq{};
    for (unsigned i = 0; i < 4; ++i) {
      q[i] = std::make_unique<PartitionedMemory>(("sbuf_q" + std::to_string(i)).c_str(), 32,
                                                 cap.sbuf_bytes_per_partition, lat(1));
      queues[i] = std::make_unique<InstructionQueue>(("queue" + std::to_string(i)).c_str(),
                                                     isa::kQueueBytes, lat(1));
      qp[i] = q[i].get();
      qq[i] = queues[i].get();
    }
    map_core_memories(router, qp, psum, sem, regs, qq);
    init.socket.bind(router.target_socket);
  }
};

TEST(CoreMemoryMap, RowsSitWhereTheAddressMapSays) {
  CoreBench cb(isa::Arch::Mariana);
  const auto& t = cb.router.table();
  ASSERT_EQ(t.size(), 11u);
  // Values written from SPEC §2: region bits[26:25], partition bits[24:18].
  const struct {
    const char* name;
    std::uint64_t base, size;
  } expect[] = {
      {"sbuf.q0", 0x0000000, 0x0800000},  {"sbuf.q1", 0x0800000, 0x0800000},
      {"sbuf.q2", 0x1000000, 0x0800000},  {"sbuf.q3", 0x1800000, 0x0800000},
      {"psum", 0x2000000, 0x2000000},     {"sem", 0x6000000, 0x100},
      {"regs", 0x6001000, 0x500},         {"queue.pool", 0x6100000, 0x100000},
      {"queue.dve", 0x6200000, 0x100000}, {"queue.pe", 0x6300000, 0x100000},
      {"queue.sfu", 0x6400000, 0x100000},
  };
  for (std::size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(t[i].name, expect[i].name);
    EXPECT_EQ(t[i].base, expect[i].base) << t[i].name;
    EXPECT_EQ(t[i].size, expect[i].size) << t[i].name;
  }
  run_sc([] {});
}

TEST(CoreMemoryMap, GlobalAccessesReachTheRightTarget) {
  CoreBench cb(isa::Arch::Mariana);
  run_sc([&] {
    // Partition 70 is quadrant 2, local partition 6.
    const std::uint32_t v = 0xA5A5F00F;
    ASSERT_EQ(cb.init.write(isa::sbuf_addr(70, 0x40), &v, 4).status, tlm::TLM_OK_RESPONSE);
    std::uint32_t got = 0;
    std::memcpy(&got, cb.q[2]->backdoor(slot(6) + 0x40, 4), 4);
    EXPECT_EQ(got, v);
    EXPECT_EQ(cb.init.write(isa::psum_addr(127, 0x3FFC), &v, 4).status, tlm::TLM_OK_RESPONSE);
    std::memcpy(&got, cb.psum.backdoor(slot(127) + 0x3FFC, 4), 4);
    EXPECT_EQ(got, v);
    EXPECT_EQ(cb.init.read(isa::psum_addr(127, 0x4000), &got, 4).status,
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
    // An SBUF access may not straddle two quadrants.
    std::uint8_t b8[8];
    EXPECT_EQ(cb.init.read(isa::sbuf_addr(32, 0) - 4, b8, 8).status,
              tlm::TLM_ADDRESS_ERROR_RESPONSE);

    cb.sem.set(9, 77);
    EXPECT_EQ(cb.init.read_u32(isa::kSemaphoreBase + 4 * 9), 77u);
    const std::uint32_t r5 = 0x1234;
    ASSERT_EQ(cb.init.write(isa::kEngineRegBase + 2 * isa::kEngineRegStride + 4 * 5, &r5, 4).status,
              tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(cb.regs.get(isa::Queue::Pe, 5), 0x1234u);

    isa::RawInst inst{};
    for (std::size_t i = 0; i < inst.size(); ++i) inst[i] = static_cast<std::uint8_t>(0x80 + i);
    cb.queues[1]->load({isa::RawInst{}, inst});
    std::array<std::uint8_t, 64> fetched{};
    ASSERT_EQ(
        cb.init.read(isa::kQueueBase + 1 * isa::kQueueBytes + 64 * 1, fetched.data(), 64).status,
        tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(fetched, inst);

    // Holes in the control region and the unmapped SFU tile region.
    EXPECT_EQ(cb.init.read(isa::kSemaphoreBase + 0x100, &got, 4).status,
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(cb.init.read(isa::region_base(isa::Region::SfuTile), &got, 4).status,
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
  });
}

TEST(CoreMemoryMap, SbufCapacityFollowsTheGeneration) {
  CoreBench cb(isa::Arch::Sunda);  // 192 KiB per partition
  run_sc([&] {
    std::uint32_t v = 1;
    EXPECT_EQ(cb.init.write(isa::sbuf_addr(127, 192 * 1024 - 4), &v, 4).status,
              tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(cb.init.write(isa::sbuf_addr(127, 192 * 1024), &v, 4).status,
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(cb.init.write(isa::sbuf_addr(0, 224 * 1024), &v, 4).status,
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
  });
}

TEST(CoreMemoryMap, WrongGeometryIsRejectedNamingTheModule) {
  std::array<std::unique_ptr<PartitionedMemory>, 4> q;
  std::array<PartitionedMemory*, 4> qp{};
  for (unsigned i = 0; i < 4; ++i) {
    q[i] = std::make_unique<PartitionedMemory>(("sbuf_q" + std::to_string(i)).c_str(),
                                               i == 3 ? 16 : 32, 256 * 1024, MemTiming{});
    qp[i] = q[i].get();
  }
  PartitionedMemory psum("psum", 128, 16 * 1024, MemTiming{});
  SemaphoreBank sem("sem");
  EngineRegisterFile regs("regs");
  std::array<std::unique_ptr<InstructionQueue>, 4> queues;
  std::array<InstructionQueue*, 4> qq{};
  for (unsigned i = 0; i < 4; ++i) {
    queues[i] =
        std::make_unique<InstructionQueue>(("q" + std::to_string(i)).c_str(), 64 * 16, MemTiming{});
    qq[i] = queues[i].get();
  }
  AddressRouter router("router");
  try {
    map_core_memories(router, qp, psum, sem, regs, qq);
    FAIL() << "16-partition quadrant accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sbuf.q3"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tpb::sc
