// DVE QuantizeMX (0xE3) through the platform (SPEC §4): values against the
// independent reference of test_dve_quantize_mx_ref.h for FP32 / BF16 / FP16
// into E4M3 / E5M2, 32..128 channels, start quadrants other than 0, strided
// and aliasing src patterns, negative dst steps, NaN / Inf blocks, the scale
// placement of every block row, register operands and run-time faults.
#include <gtest/gtest.h>

#include "sc_tests/sc/test_dve_quantize_mx_bench.h"

using namespace tpb;
using namespace tpb::dveref;
using isa::Dtype;

namespace {

QmxCase contiguous(Dtype in, bool e4m3, unsigned channels, std::uint16_t cols) {
  QmxCase c;
  c.in = in;
  c.e4m3 = e4m3;
  c.channels = channels;
  c.src = t3(0, 1, std::uint16_t(4 * cols));
  c.num = cols;
  return c;
}

}  // namespace

TEST(DveQuantizeMx, EveryInputAndOutputFormat32Channels) {
  std::vector<QmxCase> cases;
  std::uint32_t seed = 11;
  for (Dtype in : {Dtype::Fp32, Dtype::Bf16, Dtype::Fp16})
    for (bool e4m3 : {true, false}) {
      QmxCase c = contiguous(in, e4m3, 32, 24);
      c.seed = seed++;
      cases.push_back(c);
    }
  run_cases(cases);
}

TEST(DveQuantizeMx, Fp32ToE4M3With128ChannelsAndLastScalePidx) {
  // 16 block rows: scales on partitions 28..31, 60..63, 92..95, 124..127.
  QmxCase c = contiguous(Dtype::Fp32, true, 128, 40);
  c.pidx = 28;
  c.seed = 3;
  run_cases({c});
}

TEST(DveQuantizeMx, Bf16ToE5M2With64ChannelsInQuadrant32) {
  // Data and scales in quadrant 32; the src starts at partition 40.
  QmxCase c = contiguous(Dtype::Bf16, false, 64, 33);
  c.dst_part = 32;
  c.src_part = 40;
  c.pidx = 5;
  c.data_off = 0x40;
  c.scale_off = 0x17;
  c.seed = 5;
  run_cases({c});
}

TEST(DveQuantizeMx, Fp16ToE4M3With96ChannelsInQuadrant32) {
  QmxCase c = contiguous(Dtype::Fp16, true, 96, 16);
  c.dst_part = 32;
  c.src_part = 7;
  c.pidx = 2;
  c.seed = 7;
  run_cases({c});
}

TEST(DveQuantizeMx, Fp32ToE5M2With64ChannelsInQuadrant64) {
  // 64 channels from quadrant 64: rows 0..7 -> partitions 64..67 and 96..99.
  QmxCase c = contiguous(Dtype::Fp32, false, 64, 8);
  c.dst_part = 64;
  c.src_part = 64;
  c.seed = 9;
  run_cases({c});
}

TEST(DveQuantizeMx, StridedSourceAndDestinationPatterns) {
  std::vector<QmxCase> cases;
  // src 3-D: 6 x 4 x 2 elements with gaps, in pattern order (dim 0 innermost).
  QmxCase a;
  a.in = Dtype::Fp32;
  a.channels = 32;
  a.src = t3(0x10, 2, 6, 16, 4, 80, 2);
  a.num = 12;
  a.step = 3;
  a.seed = 21;
  cases.push_back(a);
  // Negative dst step: x4 word j at data - 4j bytes; src walks backwards.
  QmxCase b;
  b.in = Dtype::Bf16;
  b.e4m3 = false;
  b.channels = 64;
  b.src = t3(0x400, -1, 8, 8, 5);
  b.num = 10;
  b.step = -1;
  b.data_off = 0x100;
  b.pidx = 12;
  b.seed = 22;
  cases.push_back(b);
  // Aliasing src (step 0 in dim 1): the same 8 elements are read 3 times.
  QmxCase c;
  c.in = Dtype::Fp16;
  c.channels = 32;
  c.src = t3(0x20, 1, 8, 0, 3);
  c.num = 6;
  c.seed = 23;
  cases.push_back(c);
  run_cases(cases);
}

TEST(DveQuantizeMx, NanAndInfBlocksGiveScale0xFFAndNanOutputs) {
  std::vector<QmxCase> cases;
  std::uint32_t seed = 31;
  for (Dtype in : {Dtype::Fp32, Dtype::Bf16, Dtype::Fp16})
    for (bool e4m3 : {true, false}) {
      QmxCase c = contiguous(in, e4m3, 32, 32);
      c.specials = true;
      c.seed = seed++;
      cases.push_back(c);
    }
  // The generator must actually have produced special blocks.
  unsigned special = 0;
  for (unsigned ch = 0; ch < 32; ++ch)
    for (unsigned k = 0; k < 128; ++k) {
      const std::uint32_t b = fp32_bits(Dtype::Fp32, gen_elem(Dtype::Fp32, 31, ch, k, true));
      special += ((b >> 23) & 0xFF) == 0xFF;
    }
  EXPECT_GT(special, 4u);
  run_cases(cases);
}

TEST(DveQuantizeMx, HandWrittenBlockMatchesSpecArithmetic) {
  // One block, every value chosen by hand (SPEC §4, E4M3, ocp emax 8):
  // max biased exponent 127 + 3 (8.0 .. 15.9) -> s = 130 - 8 = 122,
  // q = x * 2^5: 10.0 -> 320 (0x7A), 1.0 -> 32 (0x60), 15.5 -> 496 > 448 -> 448
  // (0x7E), -0.75 -> -24 (0xDC). Block rows 1..3 hold 2^-10 and zeros.
  auto* core = new platform::TpbCore("tpb", platform::default_core_config(isa::Arch::Mariana));
  const float vals[4] = {10.0f, 1.0f, 15.5f, -0.75f};
  for (unsigned p = 0; p < 32; ++p) {
    float row[4] = {vals[0], vals[1], vals[2], vals[3]};
    if (p >= 8) row[0] = std::ldexp(1.0f, -10), row[1] = row[2] = row[3] = 0.0f;
    core->load_memory(isa::sbuf_addr(p, 0), row, 16);
  }
  core->load_queue(isa::Queue::Dve,
                   {qmx_inst(Dtype::Fp32, true, 32, t3(isa::sbuf_addr(0, 0), 1, 4),
                             isa::sbuf_addr(0, 0x100), isa::sbuf_addr(0, 0x200), 1)});
  const auto r = core->run();
  ASSERT_EQ(r.status, platform::RunStatus::Ok) << r.message;
  std::uint32_t w = 0;
  core->dump_memory(isa::sbuf_addr(3, 0x100), &w, 4);
  EXPECT_EQ(w, 0xDC7E607Au);
  std::uint8_t s = 0;
  core->dump_memory(isa::sbuf_addr(0, 0x200), &s, 1);
  EXPECT_EQ(s, 122);
  // Block rows 1..3: max exponent 127 - 10 -> s = 109, 2^-10 * 2^18 = 256 (0x78).
  core->dump_memory(isa::sbuf_addr(9, 0x100), &w, 4);
  EXPECT_EQ(w, 0x00000078u);
  core->dump_memory(isa::sbuf_addr(1, 0x200), &s, 1);
  EXPECT_EQ(s, 109);
}

TEST(DveQuantizeMx, RegisterAddressesAndShapesResolveAtRunTime) {
  // src start from r3, dst data from r5 with num_elem[0] from r6, scale from r9.
  auto* core = new platform::TpbCore("tpb", platform::default_core_config(isa::Arch::Mariana));
  QmxCase c = contiguous(Dtype::Fp32, true, 32, 16);
  c.dst_part = 32;
  c.seed = 41;
  Expected expect;
  auto prog = load_cases(*core, {c}, false, expect);
  auto q = isa::decode_as<isa::S3DMX1Quant>(prog[0]);
  core->set_reg(isa::Queue::Dve, 3, q.src_mem_pattern.t.start_addr.raw);
  core->set_reg(isa::Queue::Dve, 5, q.dst_mem_pattern.t.start_addr.raw);
  core->set_reg(isa::Queue::Dve, 6, 16);
  core->set_reg(isa::Queue::Dve, 9, q.dst_mem_pattern.t.scale_addr.raw);
  q.src_mem_pattern.t.start_addr.raw = 0x80000000u | 3;
  q.dst_mem_pattern.t.start_addr.raw = 0xC0000000u | 5;  // ADDR_SHAPE_REG
  q.dst_mem_pattern.t.num_elem[0] = 999;                 // ignored: the shape is in r6
  q.dst_mem_pattern.t.scale_addr.raw = 0x80000000u | 9;
  core->load_queue(isa::Queue::Dve, {isa::encode(q)});
  const auto r = core->run();
  ASSERT_EQ(r.status, platform::RunStatus::Ok) << r.message;
  check_windows(*core, expect);
}

namespace {

platform::CoreRunResult run_one(const isa::RawInst& inst,
                                const std::vector<std::pair<unsigned, std::uint32_t>>& regs = {}) {
  auto* core = new platform::TpbCore("tpb", platform::default_core_config(isa::Arch::Mariana));
  for (const auto& [r, v] : regs) core->set_reg(isa::Queue::Dve, r, v);
  core->load_queue(isa::Queue::Dve, {inst});
  return core->run();
}

isa::RawInst reg_inst(std::uint16_t num, std::uint8_t pidx = 0) {
  return qmx_inst(Dtype::Fp32, true, 32, t3(0x80000000u | 3, 1, 64), 0x80000000u | 5,
                  0x80000000u | 9, num, 1, pidx);
}

}  // namespace

TEST(DveQuantizeMxFaults, ScaleInAnotherQuadrantThanDataFaultsNamingBoth) {
  const auto r = run_one(reg_inst(16), {{3, isa::sbuf_addr(0, 0)},
                                        {5, isa::sbuf_addr(32, 0x1000)},
                                        {9, isa::sbuf_addr(64, 0x2000)}});
  ASSERT_EQ(r.status, platform::RunStatus::Fault);
  EXPECT_NE(r.message.find("dve instruction 0"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("valid_s3dmx1_quant_sbuf_quadrant"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("0x0801000"), std::string::npos) << r.message;  // data
  EXPECT_NE(r.message.find("0x1002000"), std::string::npos) << r.message;  // scale
}

TEST(DveQuantizeMxFaults, DataOffQuadrantStartFaults) {
  const auto r = run_one(reg_inst(16), {{3, isa::sbuf_addr(0, 0)},
                                        {5, isa::sbuf_addr(33, 0x1000)},
                                        {9, isa::sbuf_addr(33, 0x2000)}});
  ASSERT_EQ(r.status, platform::RunStatus::Fault);
  EXPECT_NE(r.message.find("partition 33"), std::string::npos) << r.message;
}

TEST(DveQuantizeMxFaults, RegisterShapeElementCountMismatchFaults) {
  auto q = isa::decode_as<isa::S3DMX1Quant>(reg_inst(16));
  q.dst_mem_pattern.t.start_addr.raw = 0xC0000000u | 5;
  const auto r = run_one(isa::encode(q), {{3, isa::sbuf_addr(0, 0)},
                                          {5, isa::sbuf_addr(0, 0x1000)},
                                          {6, 15},
                                          {9, isa::sbuf_addr(0, 0x2000)}});
  ASSERT_EQ(r.status, platform::RunStatus::Fault);
  EXPECT_NE(r.message.find("s3dmx1_quant_element_count_check"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("64 elements"), std::string::npos) << r.message;
}

TEST(DveQuantizeMxFaults, SourceLeavingThePartitionIsAnAddressError) {
  // 64 FP32 elements from 16 bytes below the end of the partition slot.
  const auto r = run_one(reg_inst(16), {{3, isa::sbuf_addr(0, isa::kPartitionSlot - 16)},
                                        {5, isa::sbuf_addr(0, 0x1000)},
                                        {9, isa::sbuf_addr(0, 0x2000)}});
  ASSERT_EQ(r.status, platform::RunStatus::Fault);
  EXPECT_NE(r.message.find("address error"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("src"), std::string::npos) << r.message;
}

TEST(DveQuantizeMxFaults, SourceInPsumFaults) {
  const auto r = run_one(
      reg_inst(16),
      {{3, isa::psum_addr(0, 0)}, {5, isa::sbuf_addr(0, 0x1000)}, {9, isa::sbuf_addr(0, 0x2000)}});
  ASSERT_EQ(r.status, platform::RunStatus::Fault);
  EXPECT_NE(r.message.find("not in SBUF"), std::string::npos) << r.message;
}

TEST(DveQuantizeMxFaults, InvalidStaticOperandsAreRejectedByTheChecker) {
  // out_dtype FP4 never reaches the kernel: the checker names the predicate.
  auto q = isa::decode_as<isa::S3DMX1Quant>(qmx_inst(Dtype::Fp32, true, 32, t3(0, 1, 64),
                                                     isa::sbuf_addr(0, 0x1000),
                                                     isa::sbuf_addr(0, 0x2000), 16));
  q.out_dtype = static_cast<std::uint8_t>(Dtype::Fp4Exp2);
  const auto r = run_one(isa::encode(q));
  ASSERT_EQ(r.status, platform::RunStatus::Fault);
  EXPECT_NE(r.message.find("is_valid_dtype_inc_fp4"), std::string::npos) << r.message;
}
