// platform::Device (SPEC §15) as an embedding uses it: N cores in one
// elaboration, one HBM (a byte written through one core's backdoor is every
// core's), one retire order over the cores, a remote semaphore update that
// releases another core's wait, and each core ending on its own (a core
// that waits for ever is a deadlock of that core only).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
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

TEST(Device, ItsCoresKeepThePerCoreProfileAndReachTheDevicesHbm) {
  const platform::CoreConfig cfg = platform::default_core_config(isa::Arch::Mariana);
  platform::Device dev(3, cfg);
  EXPECT_EQ(dev.config().timing.hbm.bytes, cfg.timing.hbm.bytes);
  EXPECT_EQ(dev.config().hbm_capacity(), 3 * cfg.timing.hbm.bytes);
  EXPECT_EQ(dev.core(1).hbm.capacity(), 3 * cfg.timing.hbm.bytes);
  // --dump-timing: the profile's per-core figure, not marked as an override.
  const nlohmann::json t = dev.effective_timing();
  EXPECT_EQ(t["hbm"]["bytes"], cfg.timing.hbm.bytes);
  EXPECT_EQ(t["sources"]["hbm.bytes"].get<std::string>().find("override"), std::string::npos)
      << t["sources"]["hbm.bytes"];
}

// A device of one core is a core alone: the same run, the same result and
// message (no core prefix), the same retires.
TEST(Device, ADeviceOfOneRunsAsACoreAlone) {
  const platform::CoreConfig cfg = platform::default_core_config(isa::Arch::Mariana);
  platform::TpbCore alone("alone", cfg);
  platform::Device dev(1, cfg);
  const std::string prog =
      ".engine pool\n"
      "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=2 src=t3d(sbuf(0, 0x0), step=[1, 0, "
      "0], num=[16, 1, 1]) dst=t3d(sbuf(0, 0x100), step=[1, 0, 0], num=[32, 1, 1])\n"
      "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 src=t3d(sbuf(4, 0x0), step=[1, 0, "
      "0], num=[4, 1, 1]) dst=t3d(sbuf(4, 0x100), step=[1, 0, 0], num=[8, 1, 1]) "
      "wait=ge(sem5, 1)\n";
  struct Outcome {
    platform::CoreRunResult r;
    std::vector<std::tuple<std::uint64_t, isa::Queue, std::uint64_t>> retires;
  };
  const auto setup_into = [](Outcome& o) {
    platform::CoreRunSetup s;
    s.retire_sink = [&o](const sc::RetireRecord& r) {
      o.retires.emplace_back(r.end_ps, r.engine, r.index);
    };
    return s;
  };
  Outcome a, d;
  platref::load_mariana_asm(alone, prog);
  a.r = alone.run(setup_into(a));
  platref::load_mariana_asm(dev.core(0), prog);
  const platform::DeviceRunResult r = dev.run({true}, setup_into(d));
  ASSERT_TRUE(r.per[0].has_value());
  d.r = r.total;
  EXPECT_EQ(a.r.status, platform::RunStatus::Deadlock);
  EXPECT_EQ(d.r.status, a.r.status);
  EXPECT_EQ(d.r.message, a.r.message);  // "pool instruction 1 waits for sem[5] ..."
  EXPECT_EQ(r.per[0]->message, a.r.message);
  EXPECT_EQ(d.r.instructions, 1u);
  EXPECT_EQ(d.r.instructions, a.r.instructions);
  EXPECT_EQ(d.r.simulated_ps - d.r.start_ps, a.r.simulated_ps - a.r.start_ps);
  ASSERT_EQ(d.retires.size(), a.retires.size());
  for (std::size_t i = 0; i < d.retires.size(); ++i) {
    EXPECT_EQ(std::get<0>(d.retires[i]) - d.r.start_ps, std::get<0>(a.retires[i]) - a.r.start_ps);
    EXPECT_EQ(std::get<1>(d.retires[i]), std::get<1>(a.retires[i]));
    EXPECT_EQ(std::get<2>(d.retires[i]), std::get<2>(a.retires[i]));
  }
}

}  // namespace
}  // namespace tpb
