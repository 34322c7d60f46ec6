// Seed 000 §2 CORRECTION: on MARIANA and MAVERICK the TensorDequantize
// operands are the MEM_PATTERN3D union {TENSOR3D | INDIRECT16B | MXTENSOR_V2};
// the checker accepts an MXTENSOR_V2 member there and rejects it on CAYMAN,
// where the operands are plain TENSOR3D.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "models/isa/address_map.h"
#include "models/isa/checker.h"
#include "models/isa/encodings.h"

namespace {

using namespace tpb::isa;

RawInst dequant_with_mx_src() {
  S3D3TensDequant i{};
  i.header = {0x7b, 16, 0, 0};
  i.in_dtype = i.out_dtype = 0x09;
  i.num_active_channels = 32;
  i.dequant_fmt = 1;
  MxTensorV2 m{};
  m.data_addr.raw = (std::uint32_t{addr4::kMarkerMxTensorV2} << 27) | sbuf_addr(0, 0x100);
  m.scale_addr.raw = sbuf_addr(0, 0x2000);
  m.num_elem[0] = 4;
  m.num_elem[1] = 1;
  m.scale_dtype = 0x13;
  std::memcpy(&i.src_mem_pattern, &m, sizeof m);
  Tensor3D d{};
  d.start_addr.raw = sbuf_addr(0, 0x4000);
  d.step_elem[0] = 1;
  d.num_elem[0] = 8;
  d.num_elem[1] = d.num_elem[2] = 1;
  std::memcpy(&i.dst_mem_pattern, &d, sizeof d);
  return encode(i);
}

bool failed(const CheckResult& r, const std::string& name) {
  return std::find(r.failed.begin(), r.failed.end(), name) != r.failed.end();
}

TEST(DequantUnion, MxTensorV2OperandIsValidOnMarianaAndMaverick) {
  const RawInst raw = dequant_with_mx_src();
  for (Arch a : {Arch::Mariana, Arch::Maverick}) {
    const CheckResult r = check_instruction(raw, a);
    EXPECT_TRUE(r.valid()) << arch_name(a) << ": " << (r.failed.empty() ? "" : r.failed[0]);
  }
}

TEST(DequantUnion, MxTensorV2OperandIsInvalidOnCayman) {
  const CheckResult r = check_instruction(dequant_with_mx_src(), Arch::Cayman);
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(failed(r, "tensor3d_valid(src)"));
}

TEST(DequantUnion, MxTensorV2DestinationToo) {
  RawInst raw = dequant_with_mx_src();
  // swap: plain src, MXTENSOR_V2 dst
  std::uint8_t src[16], dst[16];
  std::memcpy(src, raw.data() + 12, 16);
  std::memcpy(dst, raw.data() + 44, 16);
  std::memcpy(raw.data() + 12, dst, 16);
  std::memcpy(raw.data() + 44, src, 16);
  EXPECT_TRUE(check_instruction(raw, Arch::Mariana).valid());
  // Still geometric: data past the partition fails mem3d_valid(dst).
  raw[44 + 2] = 0x03;  // data offset 0x3xxxx: past 256 KiB with 4 x 16-byte elements
  raw[44 + 1] = 0xFF;
  raw[44 + 0] = 0xF8;
  const CheckResult r = check_instruction(raw, Arch::Mariana);
  EXPECT_TRUE(failed(r, "mem3d_valid(dst)"));
}

}  // namespace
