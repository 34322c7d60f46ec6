// The core's HBM and DMA queues (SPEC §10) from C++: a descriptor writing
// near the end of the 18 GiB HBM leaves host memory small; reset() gives a
// fresh, empty HBM of the new configuration's capacity; a DMA fault names
// the queue, the instruction and the predicate and writes nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "models/isa/program.h"
#include "platform/core/tpb_core.h"
#include "sc_tests/sc/test_platform_harness.h"

namespace tpb {
namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

TEST(CoreDma, OneRowNearTheEndOfHbmKeepsHostMemorySmallAndResetEmptiesIt) {
  platform::TpbCore core("tpb", platform::default_core_config(isa::Arch::Mariana));
  const std::uint64_t cap = 144 * isa::kGiB / 8;  // TIMING.md [L]: trn3 144 GiB / 8 cores
  ASSERT_EQ(core.hbm.capacity(), cap);
  std::vector<std::uint8_t> row(64);
  for (unsigned i = 0; i < 64; ++i) row[i] = static_cast<std::uint8_t>(3 * i + 1);
  core.load_memory(isa::sbuf_addr(5, 0x100), row.data(), row.size());
  platref::load_mariana_asm(
      core, ".engine dma9\ndma_copy rows=1 row_bytes=64 src=sbuf(5, 0x100) dst=hbm(" +
                std::to_string(cap - 64) + ")\n");
  const platform::CoreRunResult r = core.run();
  ASSERT_EQ(r.status, platform::RunStatus::Ok) << r.message;
  EXPECT_EQ(core.dump_memory(isa::hbm_addr(cap - 64), 64), row);
  EXPECT_LT(core.hbm.resident_bytes(), 1 * kMiB);
  // A fresh core of cayman: 12 GiB, nothing resident, zeros.
  core.reset(platform::default_core_config(isa::Arch::Cayman));
  EXPECT_EQ(core.hbm.capacity(), 96 * isa::kGiB / 8);
  EXPECT_EQ(core.hbm.resident_bytes(), 0u);
  EXPECT_EQ(core.dump_memory(isa::hbm_addr(0), 64), std::vector<std::uint8_t>(64, 0));
  EXPECT_THROW(core.dump_memory(isa::hbm_addr(96 * isa::kGiB / 8 - 8), 16), std::runtime_error);
}

TEST(CoreDma, PastTheConfiguredCapacityFaultsNamingThePredicateAndWritesNothing) {
  platform::CoreConfig cfg = platform::default_core_config(isa::Arch::Mariana);
  cfg.timing.hbm.bytes = 1 << 20;
  platform::TpbCore core("tpb", cfg);
  const std::vector<std::uint8_t> bg(4096, 0xa5);
  for (unsigned p = 0; p < 2; ++p) core.load_memory(isa::sbuf_addr(p, 0), bg.data(), bg.size());
  platref::load_mariana_asm(
      core,
      ".engine dma2\ndma_copy rows=2 row_bytes=4096 src=hbm(0xff000, stride=4096) "
      "dst=sbuf(0, 0x0) update=inc(sem1)\n");
  const platform::CoreRunResult r = core.run();
  ASSERT_EQ(r.status, platform::RunStatus::Fault);
  ASSERT_TRUE(r.fault.has_value());
  EXPECT_EQ(r.fault->engine, isa::Queue::Dma2);
  EXPECT_EQ(r.fault->index, 0u);
  // Judged statically against the configured capacity (as the default one is).
  EXPECT_EQ(r.fault->kind, "invalid");
  EXPECT_NE(r.message.find("dma2 instruction 0 (opcode 0xd0 dma_copy): invalid instruction on "
                           "mariana (is_valid_dma_copy): failed dma_hbm_in_capacity(src)"),
            std::string::npos)
      << r.message;
  for (unsigned p = 0; p < 2; ++p) EXPECT_EQ(core.dump_memory(isa::sbuf_addr(p, 0), 4096), bg);
  EXPECT_EQ(core.semaphores().get(1), 0u);  // no update on a fault
  // A DMA queue runs descriptors only.
  platref::load_mariana_asm(core,
                            ".engine dma4\ntensor_copy channels=1 out_dtype=bf16 "
                            "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[4, 1, 1]) "
                            "dst=t3d(sbuf(0, 0x100), step=[1, 0, 0], num=[4, 1, 1])\n");
  const platform::CoreRunResult r2 = core.run();
  ASSERT_EQ(r2.status, platform::RunStatus::Fault);
  EXPECT_EQ(r2.fault->kind, "dispatch");
  EXPECT_NE(r2.message.find("a DMA queue executes DMA descriptors only"), std::string::npos)
      << r2.message;
}

}  // namespace
}  // namespace tpb
