// platform::Device (SPEC §15) as an embedding uses it: N cores in one
// elaboration, one HBM (a byte written through one core's backdoor is every
// core's), one retire order over the cores, a remote semaphore update that
// releases another core's wait, and each core ending on its own (a core
// that waits for ever is a deadlock of that core only).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "platform/core/device.h"
#include "sc_tests/sc/test_platform_harness.h"

namespace tpb {
namespace {

TEST(Device, CoresShareTheHbmRetireInOneOrderAndSignalEachOther) {
  platform::Device dev(3, platform::default_core_config(isa::Arch::Mariana));
  ASSERT_EQ(dev.cores(), 3u);
  EXPECT_EQ(dev.hbm_bytes(), 3 * (144 * isa::kGiB / 8));
  EXPECT_EQ(dev.core(2).hbm.capacity(), dev.hbm_bytes());
  // Written through core 2, read through core 0: one storage.
  std::vector<std::uint8_t> row(256);
  for (unsigned i = 0; i < row.size(); ++i) row[i] = static_cast<std::uint8_t>(i * 7 + 1);
  dev.core(2).load_memory(isa::hbm_addr(0x1000), row.data(), row.size());
  EXPECT_EQ(dev.core(0).dump_memory(isa::hbm_addr(0x1000), row.size()), row);
  // Core 0 copies the row to 0x8000 and then signals core 1, which loads it;
  // core 2 stays idle.
  platref::load_mariana_asm(
      dev.core(0),
      ".engine dma0\n"
      "dma_copy rows=1 row_bytes=256 src=hbm(0x1000) dst=hbm(0x8000) update=inc(core1:sem9)\n");
  platref::load_mariana_asm(dev.core(1),
                            ".engine dma5\n"
                            "dma_copy rows=1 row_bytes=256 src=hbm(0x8000) dst=sbuf(3, 0x40) "
                            "wait=ge(sem9, 1)\n");
  std::vector<sc::RetireRecord> order;
  platform::CoreRunSetup setup;
  setup.retire_sink = [&](const sc::RetireRecord& r) { order.push_back(r); };
  const platform::DeviceRunResult r = dev.run({true, true, false}, setup);
  ASSERT_EQ(r.total.status, platform::RunStatus::Ok) << r.total.message;
  ASSERT_TRUE(r.per[0] && r.per[1]);
  EXPECT_FALSE(r.per[2]);
  EXPECT_EQ(r.total.instructions, 2u);
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(order[0].core, 0u);
  EXPECT_EQ(order[1].core, 1u);
  EXPECT_LT(order[0].end_ps, order[1].end_ps);
  EXPECT_EQ(r.total.simulated_ps, r.per[1]->simulated_ps);
  EXPECT_EQ(dev.core(1).dump_memory(isa::sbuf_addr(3, 0x40), row.size()), row);
  EXPECT_EQ(dev.core(1).semaphores().get(9), 1u);
  EXPECT_EQ(dev.core(0).semaphores().get(9), 0u);
}

TEST(Device, ACoreThatWaitsForEverIsTheDeadlockOfThatCoreOnly) {
  platform::Device dev(2, platform::default_core_config(isa::Arch::Mariana));
  platref::load_mariana_asm(dev.core(0),
                            ".engine dma0\n"
                            "dma_copy rows=1 row_bytes=64 src=hbm(0x0) dst=sbuf(0, 0x0)\n");
  platref::load_mariana_asm(dev.core(1),
                            ".engine dma1\n"
                            "dma_copy rows=1 row_bytes=64 src=hbm(0x0) dst=sbuf(0, 0x0) "
                            "wait=ge(sem3, 1)\n");
  const platform::DeviceRunResult r = dev.run({true, true}, platform::CoreRunSetup{});
  EXPECT_EQ(r.total.status, platform::RunStatus::Deadlock);
  ASSERT_TRUE(r.per[0] && r.per[1]);
  EXPECT_EQ(r.per[0]->status, platform::RunStatus::Ok);
  EXPECT_EQ(r.per[1]->status, platform::RunStatus::Deadlock);
  EXPECT_NE(r.total.message.find("core1: dma1 instruction 0 waits for sem[3]"), std::string::npos)
      << r.total.message;
  EXPECT_EQ(r.total.instructions, 1u);
}

TEST(Device, BadCoreCountsAndAnHbmPastTheWindowAreRefused) {
  const platform::CoreConfig cfg = platform::default_core_config(isa::Arch::Mariana);
  EXPECT_THROW(platform::Device::validate(0, cfg), std::invalid_argument);
  EXPECT_THROW(platform::Device::validate(platform::Device::kMaxCores + 1, cfg),
               std::invalid_argument);
  platform::CoreConfig big = cfg;
  big.timing.hbm.bytes = isa::kHbmWindow / 2;
  EXPECT_NO_THROW(platform::Device::validate(2, big));
  EXPECT_THROW(platform::Device::validate(3, big), std::invalid_argument);
}

}  // namespace
}  // namespace tpb
