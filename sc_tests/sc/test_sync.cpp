// SemaphoreBank (wait / update semantics of SPEC §2 EVENTS, across SC
// threads and through TLM), EngineRegisterFile and InstructionQueue.
#include <array>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "models/isa/address_map.h"
#include "models/sc/memory/address_router.h"
#include "models/sc/memory/engine_registers.h"
#include "models/sc/memory/instruction_queue.h"
#include "models/sc/memory/semaphore_bank.h"
#include "sc_tests/sc/test_memory_bench.h"

namespace tpb::sc {
namespace {

using isa::UpdateMode;
using isa::WaitMode;
using test::ns;
using test::run_sc;
using test::TestInitiator;

// The wait loop a sequencer runs (SPEC §7).
void wait_for(SemaphoreBank& s, WaitMode m, unsigned idx, std::uint32_t v) {
  while (!s.satisfied(m, idx, v)) sc_core::wait(s.changed_event());
}

// A bank whose socket is bound (SystemC refuses to start with an unbound one).
struct BoundBank {
  SemaphoreBank s{"sem"};
  TestInitiator init{"init"};
  BoundBank() { init.socket.bind(s.socket); }
};

TEST(SemaphoreBank, UpdatesIncrementDecrementWrapAndSet) {
  SemaphoreBank s("sem");
  s.apply_update(UpdateMode::Increment, 4, 999);  // value ignored
  EXPECT_EQ(s.get(4), 1u);
  s.apply_update(UpdateMode::Decrement, 4, 999);
  s.apply_update(UpdateMode::Decrement, 4, 999);
  EXPECT_EQ(s.get(4), 0xFFFFFFFFu);  // -1 wraps
  s.apply_update(UpdateMode::Increment, 4, 0);
  EXPECT_EQ(s.get(4), 0u);  // and back
  s.apply_update(UpdateMode::Set, 63, 0x12345678);
  EXPECT_EQ(s.get(63), 0x12345678u);
  s.apply_update(UpdateMode::None, 63, 1);
  EXPECT_EQ(s.get(63), 0x12345678u);
  EXPECT_THROW(s.get(64), std::out_of_range);
  EXPECT_THROW(s.apply_update(UpdateMode::Set, 64, 1), std::out_of_range);
  EXPECT_THROW(s.apply_update(static_cast<UpdateMode>(4), 0, 1), std::invalid_argument);
}

TEST(SemaphoreBank, SatisfiedFollowsTheWaitModes) {
  SemaphoreBank s("sem");
  s.set(1, 5);
  EXPECT_TRUE(s.satisfied(WaitMode::None, 1, 1000));
  EXPECT_TRUE(s.satisfied(WaitMode::Equal, 1, 5));
  EXPECT_FALSE(s.satisfied(WaitMode::Equal, 1, 4));
  EXPECT_FALSE(s.satisfied(WaitMode::Equal, 1, 6));
  EXPECT_TRUE(s.satisfied(WaitMode::GreaterEqual, 1, 4));
  EXPECT_TRUE(s.satisfied(WaitMode::GreaterEqual, 1, 5));
  EXPECT_FALSE(s.satisfied(WaitMode::GreaterEqual, 1, 6));
  s.set(1, 0xFFFFFFFF);  // unsigned comparison
  EXPECT_TRUE(s.satisfied(WaitMode::GreaterEqual, 1, 0x80000000));
  EXPECT_THROW(s.satisfied(WaitMode::Equal, 64, 0), std::out_of_range);
}

TEST(SemaphoreBank, EqualWaitWakesWhenTheCountIsReached) {
  BoundBank bb;
  SemaphoreBank& s = bb.s;
  sc_core::sc_time woke = sc_core::SC_ZERO_TIME;
  sc_core::sc_spawn([&] {
    wait_for(s, WaitMode::Equal, 3, 2);
    woke = sc_core::sc_time_stamp();
  });
  run_sc([&] {
    sc_core::wait(ns(10));
    s.apply_update(UpdateMode::Increment, 3, 0);
    sc_core::wait(ns(10));
    s.apply_update(UpdateMode::Increment, 3, 0);
    sc_core::wait(ns(10));
  });
  EXPECT_EQ(woke, ns(20));
}

TEST(SemaphoreBank, GreaterEqualWaitWakesOnOvershootButEqualDoesNot) {
  BoundBank bb;
  SemaphoreBank& s = bb.s;
  sc_core::sc_time ge_woke = sc_core::SC_ZERO_TIME;
  bool eq_woke = false;
  sc_core::sc_spawn([&] {
    wait_for(s, WaitMode::GreaterEqual, 5, 3);
    ge_woke = sc_core::sc_time_stamp();
  });
  sc_core::sc_spawn([&] {
    wait_for(s, WaitMode::Equal, 5, 2);  // 1 -> 4 skips 2
    eq_woke = true;
  });
  run_sc(
      [&] {
        sc_core::wait(ns(5));
        s.apply_update(UpdateMode::Set, 5, 1);
        sc_core::wait(ns(10));
        s.apply_update(UpdateMode::Set, 5, 4);
      },
      ns(100));
  EXPECT_EQ(ge_woke, ns(15));
  EXPECT_FALSE(eq_woke);
  EXPECT_EQ(s.get(5), 4u);
}

TEST(SemaphoreBank, ProducerConsumerHandshakeAcrossTwoThreads) {
  // Producer retires with +1; consumer waits >= i+1 then retires with sem[1]
  // = i+1 (Set), which the producer waits on with Equal before the next item.
  BoundBank bb;
  SemaphoreBank& s = bb.s;
  std::vector<std::pair<int, sc_core::sc_time>> consumed;
  sc_core::sc_spawn([&] {
    for (std::uint32_t i = 0; i < 3; ++i) {
      wait_for(s, WaitMode::GreaterEqual, 0, i + 1);
      sc_core::wait(ns(3));  // work
      consumed.emplace_back(static_cast<int>(i), sc_core::sc_time_stamp());
      s.apply_update(UpdateMode::Set, 1, i + 1);
    }
  });
  run_sc([&] {
    for (std::uint32_t i = 0; i < 3; ++i) {
      sc_core::wait(ns(10));  // work
      s.apply_update(UpdateMode::Increment, 0, 0);
      wait_for(s, WaitMode::Equal, 1, i + 1);
    }
  });
  ASSERT_EQ(consumed.size(), 3u);
  // Produced at 10, 23, 36; each consumed 3 ns later.
  EXPECT_EQ(consumed[0].second, ns(13));
  EXPECT_EQ(consumed[1].second, ns(26));
  EXPECT_EQ(consumed[2].second, ns(39));
}

TEST(SemaphoreBank, ObserverSeesEveryWriteIncludingBusWrites) {
  SemaphoreBank s("sem");
  TestInitiator init("init");
  init.socket.bind(s.socket);
  std::vector<std::pair<unsigned, std::uint32_t>> seen;
  s.set_observer([&](unsigned i, std::uint32_t v) { seen.emplace_back(i, v); });
  run_sc([&] {
    s.apply_update(UpdateMode::Increment, 7, 0);
    s.apply_update(UpdateMode::Set, 7, 1);  // same value: still a write
    s.apply_update(UpdateMode::None, 7, 0);
    const std::uint32_t two[2] = {11, 12};
    ASSERT_EQ(init.write(4 * 20, two, 8).status, tlm::TLM_OK_RESPONSE);
  });
  const std::vector<std::pair<unsigned, std::uint32_t>> expect = {
      {7, 1}, {7, 1}, {20, 11}, {21, 12}};
  EXPECT_EQ(seen, expect);
}

TEST(SemaphoreBank, BusWriteThroughTheRouterWakesAWaiter) {
  SemaphoreBank s("sem");
  AddressRouter router("router");
  TestInitiator init("init");
  router.add_target("sem", isa::kSemaphoreBase, SemaphoreBank::kSpan, s.socket);
  init.socket.bind(router.target_socket);
  sc_core::sc_time woke = sc_core::SC_ZERO_TIME;
  sc_core::sc_spawn([&] {
    wait_for(s, WaitMode::Equal, 62, 0xFEED);
    woke = sc_core::sc_time_stamp();
  });
  run_sc([&] {
    sc_core::wait(ns(7));
    const std::uint32_t v = 0xFEED;
    ASSERT_EQ(init.write(isa::kSemaphoreBase + 4 * 62, &v, 4).status, tlm::TLM_OK_RESPONSE);
  });
  EXPECT_EQ(woke, ns(7));
}

TEST(SemaphoreBank, TlmAccessRules) {
  MemTiming t;
  t.latency = ns(4);
  SemaphoreBank s("sem", t);
  TestInitiator init("init");
  init.socket.bind(s.socket);
  run_sc([&] {
    s.set(0, 100);
    s.set(1, 101);
    std::uint32_t two[2] = {};
    auto r = init.read(0, two, 8);
    EXPECT_EQ(r.status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(r.delay, ns(4));
    EXPECT_EQ(two[0], 100u);
    EXPECT_EQ(two[1], 101u);
    std::uint32_t v = 0;
    EXPECT_EQ(init.read(4 * 63, &v, 4).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(init.read(4 * 64, &v, 4).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(init.read(4 * 63, two, 8).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(init.read(2, &v, 4).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(init.read(0, &v, 2).status, tlm::TLM_BURST_ERROR_RESPONSE);
    EXPECT_EQ(init.access(tlm::TLM_READ_COMMAND, 0, two, 8, nullptr, 0, 4).status,
              tlm::TLM_BURST_ERROR_RESPONSE);
    const unsigned char be[4] = {0xFF, 0xFF, 0xFF, 0xFF};
    EXPECT_EQ(init.access(tlm::TLM_WRITE_COMMAND, 0, &v, 4, be, 4).status,
              tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    EXPECT_EQ(init.access(tlm::TLM_IGNORE_COMMAND, 0, &v, 4).status,
              tlm::TLM_COMMAND_ERROR_RESPONSE);
    EXPECT_EQ(s.get(0), 100u);  // none of the rejected accesses wrote
    tlm::tlm_dmi dmi;
    EXPECT_FALSE(init.get_dmi(0, dmi));
    EXPECT_EQ(dmi.get_end_address(), 255u);
    // Debug reads see the values; debug writes are refused (they would not
    // wake waiters).
    EXPECT_EQ(init.debug(tlm::TLM_READ_COMMAND, 4, &v, 4), 4u);
    EXPECT_EQ(v, 101u);
    EXPECT_EQ(init.debug(tlm::TLM_WRITE_COMMAND, 4, &v, 4), 0u);
  });
}

TEST(EngineRegisterFile, CppApiAndTlmViewAgree) {
  EngineRegisterFile regs("regs");
  TestInitiator init("init");
  init.socket.bind(regs.socket);
  EXPECT_THROW(regs.get(isa::Queue::Pe, 32), std::out_of_range);
  EXPECT_THROW(regs.set(static_cast<isa::Queue>(4), 0, 1), std::out_of_range);
  run_sc([&] {
    regs.set(isa::Queue::Dve, 31, 0xD0E31);
    EXPECT_EQ(init.read_u32(1 * 0x100 + 4 * 31), 0xD0E31u);
    const std::uint32_t v[4] = {10, 11, 12, 13};
    ASSERT_EQ(init.write(3 * 0x100 + 4 * 4, v, 16).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(regs.get(isa::Queue::Sfu, 4), 10u);
    EXPECT_EQ(regs.get(isa::Queue::Sfu, 7), 13u);
    EXPECT_EQ(regs.get(isa::Queue::Pool, 4), 0u);
    std::uint32_t r[2];
    EXPECT_EQ(init.read(0x80, r, 4).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);   // hole
    EXPECT_EQ(init.read(0x7C, r, 8).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);   // runs into hole
    EXPECT_EQ(init.read(0x500, r, 4).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);  // past act
    EXPECT_EQ(init.read(0x101, r, 4).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(init.read(0x100, r, 3).status, tlm::TLM_BURST_ERROR_RESPONSE);
  });
}

isa::RawInst word(std::uint8_t fill) {
  isa::RawInst w;
  w.fill(fill);
  w[0] = static_cast<std::uint8_t>(fill ^ 0x5A);
  return w;
}

// A queue of 8 words holding three, read at 2 ns + 1 ns per 64-byte beat,
// bound to a test initiator.
class InstructionQueueOfThree : public ::testing::Test {
 protected:
  static MemTiming timing() {
    MemTiming t;
    t.latency = ns(2);
    t.per_beat = ns(1);
    return t;
  }
  InstructionQueueOfThree() : q("queue", 64 * 8, timing()), init("init") {
    init.socket.bind(q.socket);
    q.load({word(1), word(2), word(3)});
  }
  InstructionQueue q;
  TestInitiator init;
};

TEST_F(InstructionQueueOfThree, FetchesLoadedWordsAndFaultsPastThem) {
  EXPECT_EQ(q.count(), 3u);
  run_sc([&] {
    for (std::uint8_t i = 0; i < 3; ++i) {
      isa::RawInst got{};
      auto r = init.read(64u * i, got.data(), 64);
      EXPECT_EQ(r.status, tlm::TLM_OK_RESPONSE);
      EXPECT_EQ(r.delay, ns(3));
      EXPECT_EQ(got, word(static_cast<std::uint8_t>(i + 1)));
    }
    isa::RawInst got{};
    EXPECT_EQ(init.read(64 * 3, got.data(), 64).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(init.read(64 * 2 + 8, got.data(), 64).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    // A write past the loaded words extends the program.
    const isa::RawInst w = word(9);
    ASSERT_EQ(init.write(64 * 5, w.data(), 64).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(q.count(), 6u);
    EXPECT_EQ(init.read(64 * 4, got.data(), 64).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(got, isa::RawInst{});  // the gap reads as zeros
    EXPECT_EQ(init.write(64 * 8, w.data(), 64).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  });
}

TEST_F(InstructionQueueOfThree, GrantsReadDmiOverTheLoadedWordsAndTakesItBackWhenTheyChange) {
  run_sc([&] {
    // The three words loaded, read only, at the queue's latency (2 ns).
    tlm::tlm_dmi dmi;
    ASSERT_TRUE(init.get_dmi(64, dmi));
    EXPECT_EQ(dmi.get_start_address(), 0u);
    EXPECT_EQ(dmi.get_end_address(), 64u * 3 - 1);
    EXPECT_TRUE(dmi.is_read_allowed());
    EXPECT_FALSE(dmi.is_write_allowed());
    EXPECT_EQ(dmi.get_read_latency(), ns(2));
    isa::RawInst got{};
    std::memcpy(got.data(), dmi.get_dmi_ptr() + 64 * 2, 64);
    EXPECT_EQ(got, word(3));
    // Past them: denied up to the end of the capacity.
    tlm::tlm_dmi past;
    EXPECT_FALSE(init.get_dmi(64 * 3, past));
    EXPECT_EQ(past.get_start_address(), 64u * 3);
    EXPECT_EQ(past.get_end_address(), 64u * 8 - 1);
    EXPECT_TRUE(init.invalidations.empty());
    // A write that extends the words takes both answers back, once.
    const isa::RawInst w = word(9);
    ASSERT_EQ(init.write(64 * 4, w.data(), 64).status, tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(init.invalidations.size(), 1u);
    EXPECT_EQ(init.invalidations[0], std::make_pair(std::uint64_t{0}, std::uint64_t{64 * 8 - 1}));
    ASSERT_EQ(init.write(64 * 4, w.data(), 64).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(init.invalidations.size(), 1u);  // the count did not change
    ASSERT_TRUE(init.get_dmi(64 * 4, dmi));
    EXPECT_EQ(dmi.get_end_address(), 64u * 5 - 1);
    std::memcpy(got.data(), dmi.get_dmi_ptr() + 64 * 4, 64);
    EXPECT_EQ(got, w);
    // A new program takes it back again.
    q.load({word(4)});
    EXPECT_EQ(init.invalidations.size(), 2u);
  });
}

TEST(InstructionQueue, AProgramLongerThanTheQueueStreamsThroughTheRing) {
  EXPECT_THROW(InstructionQueue("odd", 100, MemTiming{}), std::invalid_argument);
  InstructionQueue q("queue", 64 * 2, MemTiming{});
  // Five words through a ring of two: the first two are written at once.
  q.load({word(1), word(2), word(3), word(4), word(5)});
  EXPECT_EQ(q.total(), 5u);
  EXPECT_EQ(q.loaded(), 2u);
  EXPECT_EQ(q.count(), 2u);
  EXPECT_EQ(q.slot_addr(3), 64u);  // instruction 3 lives in slot 1
  TestInitiator init("init");
  init.socket.bind(q.socket);
  run_sc([&] {
    isa::RawInst got{};
    ASSERT_EQ(init.read(0, got.data(), 64).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(got, word(1));
    // Instruction 0 is fetched: its slot takes instruction 2.
    EXPECT_EQ(q.refill(1), 1u);
    ASSERT_EQ(init.read(0, got.data(), 64).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(got, word(3));
    ASSERT_EQ(init.read(64, got.data(), 64).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(got, word(2));
    // Wrapping in one refill of two: instructions 3 and 4 into slots 1 and 0.
    EXPECT_EQ(q.refill(2), 2u);
    ASSERT_EQ(init.read(64, got.data(), 64).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(got, word(4));
    ASSERT_EQ(init.read(0, got.data(), 64).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(got, word(5));
    // The program is all in: nothing more to write.
    EXPECT_EQ(q.refill(2), 0u);
    EXPECT_EQ(q.loaded(), 5u);
  });
  // A ring larger than the queue is refused; reloading a shorter program
  // clears the old words.
  EXPECT_THROW(q.attach(std::make_unique<isa::VectorSource>(std::vector<isa::RawInst>{}), 3),
               std::invalid_argument);
  q.load({word(7)});
  EXPECT_EQ(q.count(), 1u);
  EXPECT_EQ(q.total(), 1u);
}

}  // namespace
}  // namespace tpb::sc
