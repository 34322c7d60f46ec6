// Round trips of every instruction struct: every field set, encoded, the bytes
// checked at the seed offsets (seed 000 §2, seed 003 §2.5, §3.2, §3.3; SPEC §2)
// written out by hand, decoded back. Plus the name tables of encodings.cpp.
#include <gtest/gtest.h>

#include <cstdint>

#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "sc_tests/unit/test_tensor3d.h"

namespace tpb::isa {
namespace {

// Little-endian readers written independently of the structs.
std::uint32_t le32(const RawInst& r, int off) {
  return r[off] | (r[off + 1] << 8) | (r[off + 2] << 16) | (std::uint32_t{r[off + 3]} << 24);
}
std::uint16_t le16(const RawInst& r, int off) {
  return static_cast<std::uint16_t>(r[off] | (r[off + 1] << 8));
}

void fill_header_events(Header& h, Events& e, std::uint8_t opcode) {
  h = Header{opcode, 16, 1, 0xA5};
  e = Events{2, 17, 3, 42, 0xDEADBEEF};
}
void expect_header_events(const RawInst& r, std::uint8_t opcode) {
  EXPECT_EQ(r[0], opcode);
  EXPECT_EQ(r[1], 16);
  EXPECT_EQ(r[2], 1);
  EXPECT_EQ(r[3], 0xA5);
  EXPECT_EQ(r[4], 2);
  EXPECT_EQ(r[5], 17);
  EXPECT_EQ(r[6], 3);
  EXPECT_EQ(r[7], 42);
  EXPECT_EQ(le32(r, 8), 0xDEADBEEFu);
}
using testref::t3d;
// TENSOR3D at `off`: start_addr@0, step_elem[3]@4 (i16), num_elem[3]@10 (u16).
void expect_t3d(const RawInst& r, int off, const Tensor3D& t) {
  EXPECT_EQ(le32(r, off), t.start_addr.raw);
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(static_cast<std::int16_t>(le16(r, off + 4 + 2 * d)), t.step_elem[d]);
    EXPECT_EQ(le16(r, off + 10 + 2 * d), t.num_elem[d]);
  }
}
template <typename T>
void expect_same_bytes(const T& a, const T& b) {
  EXPECT_EQ(encode(a), encode(b));
}

TEST(IsaEncodings, TensDequantCaymanRoundTrip) {
  S3D3TensDequantV3 i{};
  fill_header_events(i.header, i.events, 0x7b);
  i.src_mem_pattern = t3d(0x80012345, -3, 700, -32768, 1, 65535, 9);
  i.in_dtype = 0x09;
  i.out_dtype = 0x0E;
  i.num_active_channels = 128;
  i.dequant_fmt = 4;
  i.group_size = 8;
  i.dst_mem_pattern = t3d(0x00040000, 32767, 2, 1, 300, 2, 3);
  for (int k = 0; k < 4; ++k) i.reserved0[k] = static_cast<std::uint8_t>(0x10 + k);
  for (int k = 0; k < 7; ++k) i.reserved1[k] = static_cast<std::uint8_t>(0x20 + k);
  for (int k = 0; k < 4; ++k) i.reserved2[k] = static_cast<std::uint8_t>(0x30 + k);
  const RawInst r = encode(i);
  expect_header_events(r, 0x7b);
  expect_t3d(r, 12, i.src_mem_pattern);
  EXPECT_EQ(r[12], 0x45);  // little-endian start_addr
  EXPECT_EQ(r[15], 0x80);  // ADDR_REG marker byte
  EXPECT_EQ(r[16], 0xFD);  // step -3
  EXPECT_EQ(r[17], 0xFF);
  EXPECT_EQ(r[28], 0x10);
  EXPECT_EQ(r[31], 0x13);
  EXPECT_EQ(r[32], 0x09);
  EXPECT_EQ(r[33], 0x0E);
  EXPECT_EQ(r[34], 128);
  EXPECT_EQ(r[35], 4);
  EXPECT_EQ(r[36], 8);
  EXPECT_EQ(r[37], 0x20);
  EXPECT_EQ(r[43], 0x26);
  expect_t3d(r, 44, i.dst_mem_pattern);
  EXPECT_EQ(r[60], 0x30);
  EXPECT_EQ(r[63], 0x33);
  const auto back = decode_as<S3D3TensDequantV3>(r);
  expect_same_bytes(back, i);
  EXPECT_EQ(back.src_mem_pattern.step_elem[2], -32768);
  EXPECT_EQ(back.dst_mem_pattern.num_elem[0], 300);
  EXPECT_EQ(back.group_size, 8);
}

TEST(IsaEncodings, TensDequantUnionRoundTrip) {
  S3D3TensDequant i{};
  fill_header_events(i.header, i.events, 0x7b);
  // src as an MXTENSOR_V2 member, dst as TENSOR3D: both at the same offsets.
  i.src_mem_pattern.mx.data_addr.raw = 0x08001000;
  i.src_mem_pattern.mx.scale_addr.raw = 0x00042000;
  i.src_mem_pattern.mx.num_elem[0] = 7;
  i.src_mem_pattern.mx.num_elem[1] = 200;
  i.src_mem_pattern.mx.step_elem_data_1 = -5;
  i.src_mem_pattern.mx.step_elem_scale_1 = 300;
  i.src_mem_pattern.mx.p_f_dim = 0x53;
  i.src_mem_pattern.mx.scale_dtype = 0x13;
  i.dst_mem_pattern.t = t3d(0x02000040, 1, 2, 3, 4, 5, 6);
  i.in_dtype = 0x09;
  i.out_dtype = 0x09;
  i.num_active_channels = 5;
  i.dequant_fmt = 2;
  i.group_size = 0;
  const RawInst r = encode(i);
  expect_header_events(r, 0x7b);
  // MXTENSOR_V2 at 12: data_addr@0, scale_addr@4, num_elem[2]@8 (u8),
  // step_elem_data_1@10, step_elem_scale_1@12, p_f_dim@14, scale_dtype@15.
  EXPECT_EQ(le32(r, 12), 0x08001000u);
  EXPECT_EQ(r[15] >> 3, 0x01);  // marker_a4 = MXTENSOR_V2
  EXPECT_EQ(le32(r, 16), 0x00042000u);
  EXPECT_EQ(r[20], 7);
  EXPECT_EQ(r[21], 200);
  EXPECT_EQ(static_cast<std::int16_t>(le16(r, 22)), -5);
  EXPECT_EQ(le16(r, 24), 300);
  EXPECT_EQ(r[26], 0x53);
  EXPECT_EQ(r[27], 0x13);
  EXPECT_EQ(r[32], 0x09);
  EXPECT_EQ(r[34], 5);
  EXPECT_EQ(r[35], 2);
  expect_t3d(r, 44, i.dst_mem_pattern.t);
  const auto back = decode_as<S3D3TensDequant>(r);
  expect_same_bytes(back, i);
  EXPECT_EQ(back.src_mem_pattern.mx.step_elem_data_1, -5);
}

TEST(IsaEncodings, QuantizeMxRoundTrip) {
  S3DMX1Quant i{};
  fill_header_events(i.header, i.events, 0xe3);
  i.src_mem_pattern.t = t3d(0x00080010, 1, 4, -8, 4, 3, 2);
  i.num_active_channels = 96;
  i.in_dtype = 0x05;
  i.out_dtype = 0x0F;
  i.dst_mem_pattern.t.start_addr.raw = 0x00800100;
  i.dst_mem_pattern.t.scale_addr.raw = 0x00800800;
  i.dst_mem_pattern.t.num_elem[0] = 0x1234;
  i.dst_mem_pattern.t.step_elem[0] = -2;
  i.dst_mem_pattern.t.scale_pidx = 4;
  for (int k = 0; k < 4; ++k) i.dst_mem_pattern.t.reserved[k] = static_cast<std::uint8_t>(k + 1);
  i.reserved0[0] = 0x61;
  i.reserved1[0] = 0x62;
  i.reserved2[11] = 0x63;
  const RawInst r = encode(i);
  expect_header_events(r, 0xe3);
  EXPECT_EQ(r[12], 0x61);
  expect_t3d(r, 16, i.src_mem_pattern.t);
  EXPECT_EQ(r[32], 0x62);
  EXPECT_EQ(r[33], 96);
  EXPECT_EQ(r[34], 0x05);
  EXPECT_EQ(r[35], 0x0F);
  EXPECT_EQ(r[47], 0x63);
  // MXTENSOR1D at 48: start_addr@0, scale_addr@4, num_elem@8 (u16),
  // step_elem@10 (i8), scale_pidx@11, reserved@12..15.
  EXPECT_EQ(le32(r, 48), 0x00800100u);
  EXPECT_EQ(le32(r, 52), 0x00800800u);
  EXPECT_EQ(le16(r, 56), 0x1234);
  EXPECT_EQ(r[58], 0xFE);
  EXPECT_EQ(r[59], 4);
  EXPECT_EQ(r[60], 1);
  EXPECT_EQ(r[63], 4);
  const auto back = decode_as<S3DMX1Quant>(r);
  expect_same_bytes(back, i);
  EXPECT_EQ(back.dst_mem_pattern.t.step_elem[0], -2);
}

TEST(IsaEncodings, LdweightsMxRoundTrip) {
  SMX1Lw i{};
  fill_header_events(i.header, i.events, 0x09);
  i.src_mem_pattern.t.start_addr.raw = 0x00000040;
  i.src_mem_pattern.t.scale_addr.raw = 0x00004000;
  i.src_mem_pattern.t.num_elem[0] = 128;
  i.src_mem_pattern.t.step_elem[0] = 1;
  i.src_mem_pattern.t.scale_pidx = 2;
  i.in_dtype = 0x10;
  i.num_active_rows = 96;
  i.num_active_cols = 77;
  i.row_grp = 0x7;
  i.col_grp = 0xf;
  i.reserved1[4] = 0x71;
  i.reserved2[0] = 0x72;
  i.reserved3[17] = 0x73;
  const RawInst r = encode(i);
  expect_header_events(r, 0x09);
  EXPECT_EQ(le32(r, 16), 0x40u);
  EXPECT_EQ(le32(r, 20), 0x4000u);
  EXPECT_EQ(le16(r, 24), 128);
  EXPECT_EQ(r[26], 1);
  EXPECT_EQ(r[27], 2);
  EXPECT_EQ(r[32], 0x10);
  EXPECT_EQ(r[37], 0x71);
  EXPECT_EQ(r[38], 96);
  EXPECT_EQ(r[39], 77);
  EXPECT_EQ(r[40], 0x72);
  EXPECT_EQ(r[44], 0x7);
  EXPECT_EQ(r[45], 0xf);
  EXPECT_EQ(r[63], 0x73);
  expect_same_bytes(decode_as<SMX1Lw>(r), i);
}

TEST(IsaEncodings, MatmulMxRoundTrip) {
  SMX1D3Mm i{};
  fill_header_events(i.header, i.events, 0x0A);
  i.src_mem_pattern.t.start_addr.raw = 0x00008000;
  i.src_mem_pattern.t.scale_addr.raw = 0x0000C000;
  i.src_mem_pattern.t.num_elem[0] = 513;
  i.src_mem_pattern.t.step_elem[0] = -1;
  i.src_mem_pattern.t.scale_pidx = 28;
  i.in_dtype = 0x12;
  i.num_active_rows = 64;
  i.out_dtype = 0x08;
  i.psum_accumulate_flags = 1;
  i.dst_mem_pattern.t = t3d(0x02000000, 1, 64, 0, 64, 2, 1);
  i.reserved2[0] = 0x81;
  i.reserved3[1] = 0x82;
  i.reserved4[3] = 0x83;
  const RawInst r = encode(i);
  expect_header_events(r, 0x0A);
  EXPECT_EQ(le32(r, 16), 0x8000u);
  EXPECT_EQ(le32(r, 20), 0xC000u);
  EXPECT_EQ(le16(r, 24), 513);
  EXPECT_EQ(r[26], 0xFF);
  EXPECT_EQ(r[27], 28);
  EXPECT_EQ(r[32], 0x12);
  EXPECT_EQ(r[38], 64);
  EXPECT_EQ(r[39], 0x81);
  EXPECT_EQ(r[40], 0x08);
  EXPECT_EQ(r[42], 0x82);
  EXPECT_EQ(r[43], 1);
  EXPECT_EQ(r[47], 0x83);
  expect_t3d(r, 48, i.dst_mem_pattern.t);
  expect_same_bytes(decode_as<SMX1D3Mm>(r), i);
}

TEST(IsaEncodings, LdweightsV5RoundTrip) {
  S3Lw i{};
  fill_header_events(i.header, i.events, 0x01);
  i.src_mem_pattern.t = t3d(0x00000100, 1, 0, 0, 128, 1, 1);
  i.in_dtype = 0x0E;
  i.num_active_rows = 32;
  i.num_active_cols = 128;
  i.row_grp = 0x1;
  i.col_grp = 0xf;
  i.mx_perf_mode = 6;
  i.reserved0[1] = 0x91;
  i.perf = 0x94;  // SPEC §18 plain perf_mode @37 (convention)
  i.reserved1[0] = 0x92;
  i.reserved2[23] = 0x93;
  const RawInst r = encode(i);
  expect_header_events(r, 0x01);
  expect_t3d(r, 12, i.src_mem_pattern.t);
  EXPECT_EQ(r[29], 0x91);
  EXPECT_EQ(r[32], 0x0E);
  EXPECT_EQ(r[33], 32);
  EXPECT_EQ(r[34], 128);
  EXPECT_EQ(r[35], 0x1);
  EXPECT_EQ(r[36], 0xf);
  EXPECT_EQ(r[37], 0x94);
  EXPECT_EQ(r[38], 0x92);
  EXPECT_EQ(r[39], 6);  // mx_perf_mode@39 (seed 003 §3.3)
  EXPECT_EQ(r[63], 0x93);
  expect_same_bytes(decode_as<S3Lw>(r), i);
}

TEST(IsaEncodings, MatmulV5RoundTrip) {
  S3D3Mm i{};
  fill_header_events(i.header, i.events, 0x02);
  i.src_mem_pattern.t = t3d(0x00000200, 2, 0, 0, 16, 1, 1);
  i.in_dtype = 0x06;
  i.out_dtype = 0x08;
  i.num_active_rows = 96;
  i.psum_accumulate_flags = 1;
  i.mx_perf_mode = 3;
  i.dst_mem_pattern.t = t3d(0x02040000, 1, 0, 0, 16, 1, 1);
  i.transpose = 0xA4;  // SPEC §18 plain fields @36, @37 (conventions)
  i.perf = 0xA5;
  i.reserved1[1] = 0xA1;
  i.reserved2[2] = 0xA2;
  i.reserved3[0] = 0xA3;
  const RawInst r = encode(i);
  expect_header_events(r, 0x02);
  expect_t3d(r, 12, i.src_mem_pattern.t);
  EXPECT_EQ(r[32], 0x06);
  EXPECT_EQ(r[33], 0x08);
  EXPECT_EQ(r[34], 96);
  EXPECT_EQ(r[35], 1);
  EXPECT_EQ(r[36], 0xA4);
  EXPECT_EQ(r[37], 0xA5);
  EXPECT_EQ(r[39], 0xA1);
  EXPECT_EQ(r[40], 3);  // mx_perf_mode@40 (seed 003 §3.3)
  EXPECT_EQ(r[43], 0xA2);
  expect_t3d(r, 44, i.dst_mem_pattern.t);
  EXPECT_EQ(r[60], 0xA3);
  expect_same_bytes(decode_as<S3D3Mm>(r), i);
}

TEST(IsaEncodings, Addr4Fields) {
  // SPEC §2: marker_a4 = bits[31:27], address = bits[26:0].
  EXPECT_EQ(Addr4{0x80000007}.marker(), addr4::kMarkerAddrReg);
  EXPECT_EQ(Addr4{0x80000007}.reg_index(), 7u);
  EXPECT_EQ(Addr4{0x40000000}.marker(), addr4::kMarkerShapeReg);
  EXPECT_EQ(Addr4{0xC0000000}.marker(), addr4::kMarkerAddrShapeReg);
  EXPECT_TRUE(Addr4{0x0FFFFFFF}.is_mxtensor_v2());
  EXPECT_EQ(Addr4{0x0FFFFFFF}.address(), 0x07FFFFFFu);
  EXPECT_TRUE(Addr4{0x10000000}.is_indirect());
  // SBUF partition 5 offset 0x123 = 5 << 18 | 0x123; PSUM region bit 25.
  EXPECT_EQ(sbuf_addr(5, 0x123), 0x00140123u);
  EXPECT_EQ(psum_addr(1, 0), 0x02040000u);
  EXPECT_EQ(region_of(0x06000000), Region::Control);
}

TEST(IsaNames, Arch) {
  Arch a{};
  EXPECT_TRUE(parse_arch("MARIANA", a));
  EXPECT_EQ(a, Arch::Mariana);
  EXPECT_TRUE(parse_arch("v2", a));
  EXPECT_EQ(a, Arch::Sunda);
  EXPECT_FALSE(parse_arch("trn2", a));
  EXPECT_FALSE(parse_arch("", a));
  for (Arch x : {Arch::Sunda, Arch::Cayman, Arch::Mariana, Arch::Maverick}) {
    Arch y{};
    ASSERT_TRUE(parse_arch(arch_name(x), y));
    EXPECT_EQ(x, y);
  }
  EXPECT_EQ(arch_name(Arch::Maverick), "maverick");
  EXPECT_EQ(nc_version(Arch::Cayman), 3);
}

TEST(IsaNames, Opcodes) {
  EXPECT_EQ(opcode_mnemonic(0x7b), "tensor_dequantize");
  EXPECT_EQ(opcode_mnemonic(0xe3), "quantize_mx");
  EXPECT_EQ(opcode_mnemonic(0x09), "ldweights_mx");
  EXPECT_EQ(opcode_mnemonic(0x0A), "matmul_mx");
  EXPECT_EQ(opcode_mnemonic(0x01), "ldweights");
  EXPECT_EQ(opcode_mnemonic(0x02), "matmul");
  EXPECT_EQ(opcode_mnemonic(0xbe), "get_sequence_bounds");
  EXPECT_EQ(opcode_mnemonic(0xf2), "nonzero_with_count");
  EXPECT_EQ(opcode_mnemonic(0x6a), "tquant");       // seed 002 block word (convention)
  EXPECT_EQ(opcode_mnemonic(0x23), "tensor_copy");  // SPEC §11 (convention)
  EXPECT_EQ(opcode_mnemonic(0xd0), "dma_copy");     // SPEC §10 (convention)
  // SPEC §18 (conventions): 0x20..0x2b.
  const char* vec[] = {"activation",    "tensor_tensor",      "tensor_scalar", "tensor_copy",
                       "tensor_reduce", "tensor_tensor_scan", "memset",        "iota",
                       "reciprocal",    "bn_stats",           "bn_aggr",       "nc_transpose"};
  for (int k = 0; k < 12; ++k)
    EXPECT_EQ(opcode_mnemonic(static_cast<std::uint8_t>(0x20 + k)), vec[k]);
  EXPECT_EQ(opcode_mnemonic(0xf0), "nop");  // SPEC §18 (convention)
  // Every other opcode has none: OpcodeTable.UnknownOpcodes, against the
  // table's expected rows.
}

TEST(IsaNames, Dtypes) {
  // {ordinal, name, bytes}: SPEC §2 ordinals, sizes from the format widths.
  const struct {
    std::uint8_t ord;
    const char* name;
    unsigned size;
  } table[] = {{0x01, "int8", 1},
               {0x02, "uint8", 1},
               {0x03, "int16", 2},
               {0x04, "uint16", 2},
               {0x05, "bf16", 2},
               {0x06, "fp16", 2},
               {0x07, "int32", 4},
               {0x08, "fp32", 4},
               {0x09, "uint32", 4},
               {0x0A, "fp32r", 4},
               {0x0C, "fp8_exp2", 1},
               {0x0D, "fp8_exp3", 1},
               {0x0B, "fp8_exp4_legacy", 1},  // SPEC §18 (convention)
               {0x0E, "fp8_exp4", 1},
               {0x0F, "fp8_exp5", 1},
               {0x10, "fp4_exp2", 1},
               {0x12, "int4", 1},
               {0x13, "sfp8_e8", 1}};
  for (const auto& t : table) {
    EXPECT_EQ(dtype_name(t.ord), t.name);
    EXPECT_EQ(dtype_size(t.ord), t.size) << t.name;
    std::uint8_t out = 0;
    ASSERT_TRUE(parse_dtype(t.name, out));
    EXPECT_EQ(out, t.ord);
  }
  for (std::uint8_t bad : {0x11, 0x14, 0xFF}) {
    EXPECT_EQ(dtype_name(bad), "");
    EXPECT_EQ(dtype_size(bad), 0u);
  }
  std::uint8_t out = 0;
  EXPECT_TRUE(parse_dtype("E4M3", out));
  EXPECT_EQ(out, 0x0E);
  EXPECT_TRUE(parse_dtype("e8m0", out));
  EXPECT_EQ(out, 0x13);
  EXPECT_FALSE(parse_dtype("fp64", out));
}

TEST(IsaNames, Engines) {
  EXPECT_STREQ(engine_name(Queue::Pool), "pool");
  EXPECT_STREQ(engine_name(Queue::Sfu), "sfu");
  EXPECT_EQ(parse_engine("dve"), Queue::Dve);
  EXPECT_EQ(parse_engine("PE"), Queue::Pe);
  EXPECT_EQ(parse_engine("act"), Queue::Act);  // SPEC §18
  EXPECT_EQ(parse_engine("dma0"), std::nullopt);
  EXPECT_EQ(parse_engine(nullptr), std::nullopt);
}

}  // namespace
}  // namespace tpb::isa
