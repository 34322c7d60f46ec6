// Sequencer behaviour through the platform API: kernel_info dispatch,
// not-modelled and unknown-opcode faults, semaphores between two engines,
// deadlock reports, address errors, invalid instructions.
#include <gtest/gtest.h>

#include <random>

#include "firmware_stubs/builtin_kernels.h"
#include "firmware_stubs/pool/tensor_dequantize.h"
#include "models/kernel/kernel.h"
#include "models/sc/engine/kernel_info_table.h"
#include "sc_tests/sc/test_platform_harness.h"

using namespace tpb;
using namespace tpb::platref;

namespace {

isa::RawInst raw_with_opcode(std::uint8_t op) {
  isa::RawInst r{};
  r[0] = op;
  r[1] = isa::kInstWordLen;
  return r;
}

isa::RawInst small_dequant(unsigned part, std::uint32_t src_off, std::uint32_t dst_off,
                           isa::Events ev = {}) {
  return dequant_inst(1, 0, 1, t3d(isa::sbuf_addr(part, src_off), 1, 4),
                      t3d(isa::sbuf_addr(part, dst_off), 1, 8), ev);
}

platform::CoreRunResult run_pool(
    const std::vector<isa::RawInst>& pool, const std::vector<isa::RawInst>& dve = {},
    platform::CoreConfig cfg = platform::default_core_config(isa::Arch::Mariana)) {
  auto* core = new platform::TpbCore("tpb", cfg);
  core->load_queue(isa::Queue::Pool, pool);
  core->load_queue(isa::Queue::Dve, dve);
  return core->run();
}

}  // namespace

TEST(KernelInfo, PoolTableIsTheSeventeenRecordSeedTableThenSpec18Records) {
  const std::vector<std::uint8_t> b = sc::pool_kernel_info_bytes();
  // The seed's 17 records, then SPEC §18's: tensor_copy, tensor_tensor,
  // tensor_scalar, memset, iota at idx17..21 (docs/CONVENTIONS.md).
  ASSERT_EQ(b.size(), 22u * 8);
  const std::uint8_t spec18[] = {0x23, 0x21, 0x22, 0x26, 0x27};
  for (unsigned k = 17; k < 22; ++k) EXPECT_EQ(b[k * 8 + 3], spec18[k - 17]) << k;
  // seed 000 §1: idx16 @ file off 0x7480 = 00 00 00 7b | c4 4d 00 01.
  const std::vector<std::uint8_t> idx16(b.begin() + 16 * 8, b.begin() + 17 * 8);
  EXPECT_EQ(idx16, (std::vector<std::uint8_t>{0x00, 0x00, 0x00, 0x7b, 0xc4, 0x4d, 0x00, 0x01}));
  EXPECT_EQ(b[14 * 8 + 3], 0xbe);  // GET_SEQUENCE_BOUNDS
  EXPECT_EQ(b[15 * 8 + 3], 0xf2);  // NONZERO_WITH_COUNT
  const sc::KernelInfoTable t(b);
  const auto r = t.lookup(0x7b);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->index, 16u);
  EXPECT_EQ(r->func_va, 0x01004dc4u);
  EXPECT_EQ(t.lookup(0xbe)->index, 14u);
  EXPECT_EQ(t.lookup(0xf2)->index, 15u);
  EXPECT_FALSE(t.lookup(0x00).has_value());  // empty records never match
  EXPECT_EQ(t.lookup(0x27)->index, 21u);
  EXPECT_EQ(t.bytes(), b);
  EXPECT_THROW(sc::KernelInfoTable(std::vector<std::uint8_t>(9)), std::invalid_argument);
}

TEST(KernelInfo, DveAndPeTablesPointAtTheirTrampolines) {
  const auto dve = sc::default_kernel_info(isa::Queue::Dve, isa::Arch::Mariana);
  ASSERT_TRUE(dve.lookup(0xe3).has_value());
  EXPECT_EQ(dve.lookup(0xe3)->func_va, 0x317au);
  const auto pe = sc::default_kernel_info(isa::Queue::Pe, isa::Arch::Mariana);
  EXPECT_EQ(pe.lookup(0x09)->func_va, 0x2bafu);
  EXPECT_EQ(pe.lookup(0x0a)->func_va, 0x2bb7u);
  const fw::KernelRegistry& k = fw::builtin_kernels();
  ASSERT_NE(k.find(0x317a), nullptr);  // DVE QuantizeMX trampoline (seed 003 §1)
  ASSERT_NE(k.find(0x2baf), nullptr);  // PE LdweightsMX handler (seed 003 §3.1)
  ASSERT_NE(k.find(0x2bb7), nullptr);  // PE MatmulMX handler
  ASSERT_NE(k.find(0x01004dc4), nullptr);
  ASSERT_NE(k.find(0x01004df0), nullptr);
  ASSERT_NE(k.find(0x0100511c), nullptr);
  EXPECT_EQ(k.find(0x01004df0)->name, "decode_tensor_dequantize");
}

TEST(Sequencer, GetSequenceBoundsFaultsNotModelled) {
  const auto r = run_pool({raw_with_opcode(0xbe)});
  ASSERT_EQ(r.status, platform::RunStatus::Fault);
  EXPECT_NE(r.message.find("pool instruction 0"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("0xbe"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("idx14"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("not modelled"), std::string::npos) << r.message;
}

TEST(Sequencer, NonzeroWithCountFaultsNotModelledAfterARetire) {
  const auto r = run_pool({small_dequant(0, 0, 0x100), raw_with_opcode(0xf2)});
  ASSERT_EQ(r.status, platform::RunStatus::Fault);
  EXPECT_EQ(r.instructions, 1u);
  EXPECT_NE(r.message.find("pool instruction 1"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("0xf2"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("idx15"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("not modelled"), std::string::npos) << r.message;
}

TEST(Sequencer, UnknownOpcodeFaults) {
  const auto r = run_pool({raw_with_opcode(0x55)});
  ASSERT_EQ(r.status, platform::RunStatus::Fault);
  EXPECT_NE(r.message.find("unknown opcode 0x55"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("pool instruction 0"), std::string::npos) << r.message;
}

TEST(Sequencer, DequantOnTheDveQueueIsUnknownThere) {
  const auto r = run_pool({}, {small_dequant(0, 0, 0x100)});
  ASSERT_EQ(r.status, platform::RunStatus::Fault);
  EXPECT_NE(r.message.find("dve instruction 0"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("unknown opcode 0x7b"), std::string::npos) << r.message;
}

TEST(Sequencer, InvalidInstructionNamesThePredicate) {
  isa::RawInst bad = small_dequant(0, 0, 0x100);
  bad[36] = 3;  // group_size 3 (seed 000 §5: 0 or 8)
  const auto r = run_pool({bad});
  ASSERT_EQ(r.status, platform::RunStatus::Fault);
  EXPECT_NE(r.message.find("has_valid_group_size"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("invalid instruction"), std::string::npos) << r.message;
  EXPECT_EQ(r.instructions, 0u);
}

TEST(Sequencer, SundaHasNoTensorDequantize) {
  const auto r =
      run_pool({small_dequant(0, 0, 0x100)}, {}, platform::default_core_config(isa::Arch::Sunda));
  ASSERT_EQ(r.status, platform::RunStatus::Fault);
  EXPECT_NE(r.message.find("has_valid_nc_tens_dequant"), std::string::npos) << r.message;
}

TEST(Sequencer, AddressPastCapacityFromARegisterFaults) {
  // Cayman SBUF is 224 KiB per partition: offset 0x3F000 (252 KiB) is past it.
  platform::CoreConfig cfg = platform::default_core_config(isa::Arch::Cayman);
  auto* core = new platform::TpbCore("tpb", cfg);
  isa::Tensor3D src = t3d(0x80000000u | 5u, 1, 4);  // ADDR_REG r5
  core->set_reg(isa::Queue::Pool, 5, isa::sbuf_addr(2, 0x3F000));
  core->load_queue(isa::Queue::Pool,
                   {dequant_inst(1, 0, 1, src, t3d(isa::sbuf_addr(2, 0x100), 1, 8))});
  const auto r = core->run();
  ASSERT_EQ(r.status, platform::RunStatus::Fault);
  EXPECT_NE(r.message.find("pool instruction 0"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("address error"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("0x00bf000"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("0x7b"), std::string::npos) << r.message;
}

TEST(Sequencer, RegisterAddressAndShape) {
  // ADDR_SHAPE_REG: src address in r3, shape in r4..r6; dst address in r10.
  auto* core = new platform::TpbCore("tpb", platform::default_core_config(isa::Arch::Mariana));
  core->set_reg(isa::Queue::Pool, 3, isa::sbuf_addr(9, 0x40));
  core->set_reg(isa::Queue::Pool, 4, 2);
  core->set_reg(isa::Queue::Pool, 5, 3);
  core->set_reg(isa::Queue::Pool, 6, 1);
  core->set_reg(isa::Queue::Pool, 10, isa::sbuf_addr(9, 0x800));
  const isa::Tensor3D src = t3d(0xC0000000u | 3u, 1, 0, 2, 0);  // 2 x 3 words, rows 2 apart
  const isa::Tensor3D dst = t3d(0x80000000u | 10u, 1, 12);
  core->load_queue(isa::Queue::Pool, {dequant_inst(2, 0, 1, src, dst)});
  const std::vector<std::uint32_t> words = {0x76543210u, 0xFEDCBA98u, 0xdeadbeefu,
                                            0x01234567u, 0x89abcdefu, 0x0f0f0f0fu};
  core->load_memory(isa::sbuf_addr(9, 0x40), words.data(), 24);
  const auto r = core->run();
  ASSERT_EQ(r.status, platform::RunStatus::Ok) << r.message;
  // Gather order (dim 0 innermost, rows 2 words apart): 0,1, 2,3, 4,5.
  const auto want = dequant_ref(2, 0, words);
  std::vector<std::uint32_t> got(12);
  core->dump_memory(isa::sbuf_addr(9, 0x800), got.data(), 48);
  EXPECT_EQ(got, want);
  // Spot values: INT4 code 1 -> 1.0 = E5M2 0x3C, code 0xF (-1) -> 0xBC.
  EXPECT_EQ(got[0] & 0xFF, 0x00u);
  EXPECT_EQ((got[0] >> 8) & 0xFF, 0x3Cu);
  EXPECT_EQ((got[3] >> 24) & 0xFF, 0xBCu);
}

TEST(Sequencer, ShapeRegisterRuntimeCountCheckFaults) {
  auto* core = new platform::TpbCore("tpb", platform::default_core_config(isa::Arch::Mariana));
  core->set_reg(isa::Queue::Pool, 0, 7);  // r1..r3 = 7 x 1 x 1 src words
  core->set_reg(isa::Queue::Pool, 1, 7);
  core->set_reg(isa::Queue::Pool, 2, 1);
  core->set_reg(isa::Queue::Pool, 3, 1);
  const isa::Tensor3D src = t3d(0x40000000u | isa::sbuf_addr(0, 0), 1, 0);  // SHAPE_REG, N = 0
  core->load_queue(isa::Queue::Pool,
                   {dequant_inst(1, 8, 1, src, t3d(isa::sbuf_addr(0, 0x800), 1, 8))});
  const auto r = core->run();
  ASSERT_EQ(r.status, platform::RunStatus::Fault);
  EXPECT_NE(r.message.find("s3d3_tens_dequant_element_count_check_t3d"), std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("src 7 words"), std::string::npos) << r.message;
}

TEST(Sequencer, SemaphoresOrderTwoEnginesStreams) {
  // The DVE gets a drop-in kernel_info table routing 0x7b to the POOL stub,
  // so both engines run real kernels. POOL: A -> B, then sem[2] = 5.
  // DVE waits sem[2] == 5, then B -> C (reading what POOL wrote).
  platform::CoreConfig cfg = platform::default_core_config(isa::Arch::Mariana);
  cfg.kernel_info[1] = {0, 0, 0, 0x7b, 0xc4, 0x4d, 0x00, 0x01};
  auto* core = new platform::TpbCore("tpb", cfg);
  std::vector<std::string> retired;
  core->set_retire_sink(
      [&](const sc::RetireRecord& rr) { retired.push_back(platform::TpbCore::format_retire(rr)); });
  const std::vector<std::uint32_t> a = {0x11223344u, 0x55667788u, 0x99aabbccu, 0x0u};
  core->load_memory(isa::sbuf_addr(1, 0), a.data(), 16);
  isa::Events post{}, wait{};
  post.update_mode = 3, post.update_idx = 2, post.sem_value = 5;
  wait.wait_mode = 1, wait.wait_idx = 2, wait.sem_value = 5;
  // POOL: 4 words -> 8 words at 0x100; three more to delay the post.
  std::vector<isa::RawInst> pool;
  for (int i = 0; i < 3; ++i) pool.push_back(small_dequant(1, 0, 0x400 + 0x100 * i));
  pool.push_back(small_dequant(1, 0, 0x100, post));
  core->load_queue(isa::Queue::Pool, pool);
  // DVE: B (first 4 of the 8 words at 0x100) -> 8 words at 0x200.
  core->load_queue(isa::Queue::Dve, {small_dequant(1, 0x100, 0x200, wait)});
  const auto r = core->run();
  ASSERT_EQ(r.status, platform::RunStatus::Ok) << r.message;
  ASSERT_EQ(retired.size(), 5u);
  EXPECT_NE(retired[3].find("pool"), std::string::npos) << retired[3];
  EXPECT_NE(retired[4].find("dve"), std::string::npos) << retired[4];
  const auto b = dequant_ref(1, 0, a);
  const auto c = dequant_ref(1, 0, std::vector<std::uint32_t>(b.begin(), b.begin() + 4));
  std::vector<std::uint32_t> got(8);
  core->dump_memory(isa::sbuf_addr(1, 0x200), got.data(), 32);
  EXPECT_EQ(got, c);
  EXPECT_EQ(core->semaphores().get(2), 5u);
  const auto s = core->stats();
  EXPECT_GT(s.engines[1].stall_cycles, 0u);  // the DVE waited
  EXPECT_EQ(s.engines[1].instructions, 1u);
  EXPECT_EQ(s.engines[0].instructions, 4u);
}

TEST(Sequencer, DeadlockNamesEveryBlockedEngine) {
  isa::Events w3{}, w4{};
  w3.wait_mode = 1, w3.wait_idx = 3, w3.sem_value = 1;
  w4.wait_mode = 2, w4.wait_idx = 4, w4.sem_value = 2;
  isa::RawInst dve = raw_with_opcode(0xe3);
  std::memcpy(dve.data() + 4, &w4, sizeof(w4));
  const auto r = run_pool({small_dequant(0, 0, 0x100), small_dequant(0, 0, 0x200, w3)}, {dve});
  ASSERT_EQ(r.status, platform::RunStatus::Deadlock) << r.message;
  EXPECT_EQ(r.instructions, 1u);
  EXPECT_NE(r.message.find("pool instruction 1 waits for sem[3] == 1 (sem[3] = 0)"),
            std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("dve instruction 0 waits for sem[4] >= 2 (sem[4] = 0)"),
            std::string::npos)
      << r.message;
}

// engine_cycles rounds ps x MHz / 10^6 to nearest (ties up), in 64-bit
// arithmetic while the product fits and in 128-bit past it: hand-worked
// values, then both sides of the 64-bit edge and random times against a
// 128-bit reference, for several clocks.
TEST(EngineCycles, RoundsToNearestOnBothSidesOfThe64BitEdge) {
  timing::TimingConfig c;
  auto cycles = [&](std::uint32_t mhz, std::uint64_t ps) {
    c.clock_mhz[static_cast<unsigned>(isa::Queue::Pool)] = mhz;
    return sc::engine_cycles(c, isa::Queue::Pool, sc::ps_time(ps));
  };
  EXPECT_EQ(cycles(1200, 0), 0u);
  EXPECT_EQ(cycles(1200, 416), 0u);   // 0.4992 cycles
  EXPECT_EQ(cycles(1200, 417), 1u);   // 0.5004
  EXPECT_EQ(cycles(1200, 1250), 2u);  // 1.5 exactly: up
  EXPECT_EQ(cycles(1200, 151667), 182u);
  EXPECT_EQ(cycles(1, UINT64_MAX), 18446744073710u);  // (2^64 - 1 + 500000) / 10^6
  auto reference = [](std::uint32_t mhz, std::uint64_t ps) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(ps) * mhz + 500000) /
                                      1000000);
  };
  std::mt19937_64 rng(20261201);
  for (std::uint32_t mhz : {1u, 7u, 1200u, 1400u, 2400u, 999999u, 4294967295u}) {
    // The largest ps whose product and rounding term still fit in 64 bits.
    const std::uint64_t edge = (UINT64_MAX - 500000) / mhz;
    for (std::uint64_t d = 0; d < 4; ++d)
      for (std::uint64_t ps : {edge - d, edge + 1 + d})
        EXPECT_EQ(cycles(mhz, ps), reference(mhz, ps)) << mhz << " MHz, " << ps << " ps";
    for (int i = 0; i < 2000; ++i) {
      const std::uint64_t ps = rng() >> (i % 64);
      ASSERT_EQ(cycles(mhz, ps), reference(mhz, ps)) << mhz << " MHz, " << ps << " ps";
    }
  }
}
