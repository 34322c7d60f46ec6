// Assembler: every instruction kind and every field, checked against the
// bytes at the seed offsets (hand-written hex) and through the encodings.h
// structs (decode_as), never against the assembler's own tables.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "models/isa/asm.h"
#include "models/isa/encodings.h"
#include "models/isa/program.h"

namespace tpb::isa {
namespace {

RawInst one(const std::string& text) {
  const Program p = parse_program(text, "t.tpb");
  EXPECT_EQ(p.size(), 1u) << text;
  for (const auto& q : p.queues)
    if (!q.empty()) return q.front().raw;
  return RawInst{};
}

RawInst from_hex(const std::string& hex) {
  RawInst r{};
  std::size_t n = 0;
  for (std::size_t i = 0; i < hex.size();) {
    if (hex[i] == ' ') {
      ++i;
      continue;
    }
    r.at(n++) = static_cast<std::uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16));
    i += 2;
  }
  EXPECT_EQ(n, 64u);
  return r;
}

std::string to_hex(const RawInst& r) {
  static const char* k = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (i) s += (i % 4) ? "" : " ";
    s += k[r[i] >> 4];
    s += k[r[i] & 15];
  }
  return s;
}

// Seed 000 §2: the S3D3_TENS_DEQUANT layout, byte by byte.
TEST(AsmEncode, TensorDequantizeBytesAtSeedOffsets) {
  const RawInst r =
      one("tensor_dequantize fmt=e2m1_to_e5m2 group=8 channels=32 "
          "src=t3d(sbuf(2, 0x40), step=[1, -2, 3], num=[16, 2, 1]) "
          "dst=t3d(sbuf(2, 0x1000), step=[1, 0, 0], num=[32, 1, 1]) wait=ge(sem3, 7) "
          "update=inc(sem4)");
  const RawInst want = from_hex(
      "7b100000"                                // header: opcode 0x7b, inst_word_len 16
      "02030104 07000000"                       // events: ge sem3, inc sem4, sem_value 7
      "40000800 0100feff 0300 1000 0200 0100"   // src: 0x00080040, steps 1,-2,3; nums 16,2,1
      "00000000"                                // reserved0
      "09 09 20 01 08"                          // in/out UINT32, 32 channels, fmt 1, group 8
      "00000000 000000"                         // reserved1
      "00100800 0100 0000 0000 2000 0100 0100"  // dst: 0x00081000, steps 1,0,0; nums 32,1,1
      "00000000");                              // reserved2
  EXPECT_EQ(to_hex(r), to_hex(want));
}

TEST(AsmEncode, TensorDequantizeEveryField) {
  const RawInst r = one(
      "tensor_dequantize fmt=nf4_to_e4m3 group=0 channels=128 in_dtype=fp32 out_dtype=7 "
      "src=t3d(psum(5, 0x100), step=[-1, 2, -32768], num=[65535, 0, 3]) "
      "dst=mx(data=sbuf(64, 0x20), scale=sbuf(64, 0x3ff), num=[2, 255], step_data=-4, "
      "step_scale=32767, p=3, f=15, scale_dtype=fp8_e4m3) "
      "reserved0=[1, 2, 3, 4] reserved1=[5, 6, 7, 8, 9, 10, 11] reserved2=[0xfc, 0xfd, 0xfe, 0xff] "
      "opcode=0x7b inst_word_len=15 debug_cmd=1 debug_hint=0xab "
      "wait=eq(sem63, 0xffffffff) update=set(sem0, 0xffffffff)");
  const auto d = decode_as<S3D3TensDequant>(r);
  EXPECT_EQ(d.header.opcode, 0x7b);
  EXPECT_EQ(d.header.inst_word_len, 15);
  EXPECT_EQ(d.header.debug_cmd, 1);
  EXPECT_EQ(d.header.debug_hint, 0xab);
  EXPECT_EQ(d.events.wait_mode, 1);
  EXPECT_EQ(d.events.wait_idx, 63);
  EXPECT_EQ(d.events.update_mode, 3);
  EXPECT_EQ(d.events.update_idx, 0);
  EXPECT_EQ(d.events.sem_value, 0xffffffffu);
  EXPECT_EQ(d.dequant_fmt, 3);
  EXPECT_EQ(d.group_size, 0);
  EXPECT_EQ(d.num_active_channels, 128);
  EXPECT_EQ(d.in_dtype, 0x8);
  EXPECT_EQ(d.out_dtype, 0x7);
  // psum(5, 0x100): region 1 at bit 25, partition at bit 18 (SPEC §2).
  EXPECT_EQ(d.src_mem_pattern.t.start_addr.raw, (1u << 25) | (5u << 18) | 0x100u);
  EXPECT_EQ(d.src_mem_pattern.t.step_elem[0], -1);
  EXPECT_EQ(d.src_mem_pattern.t.step_elem[1], 2);
  EXPECT_EQ(d.src_mem_pattern.t.step_elem[2], -32768);
  EXPECT_EQ(d.src_mem_pattern.t.num_elem[0], 65535);
  EXPECT_EQ(d.src_mem_pattern.t.num_elem[1], 0);
  EXPECT_EQ(d.src_mem_pattern.t.num_elem[2], 3);
  // MXTENSOR_V2 (seed 003 §3.3): marker 0b00001 in bits[31:27] of data_addr.
  EXPECT_EQ(d.dst_mem_pattern.mx.data_addr.raw, 0x08000000u | (64u << 18) | 0x20u);
  EXPECT_TRUE(d.dst_mem_pattern.mx.data_addr.is_mxtensor_v2());
  EXPECT_EQ(d.dst_mem_pattern.mx.scale_addr.raw, (64u << 18) | 0x3ffu);
  EXPECT_EQ(d.dst_mem_pattern.mx.num_elem[0], 2);
  EXPECT_EQ(d.dst_mem_pattern.mx.num_elem[1], 255);
  EXPECT_EQ(d.dst_mem_pattern.mx.step_elem_data_1, -4);
  EXPECT_EQ(d.dst_mem_pattern.mx.step_elem_scale_1, 32767);
  EXPECT_EQ(d.dst_mem_pattern.mx.p_f_dim, 0xF3);  // F upper nibble, P lower nibble
  EXPECT_EQ(d.dst_mem_pattern.mx.scale_dtype, 0xE);
  const std::uint8_t r0[4] = {1, 2, 3, 4}, r1[7] = {5, 6, 7, 8, 9, 10, 11},
                     r2[4] = {0xfc, 0xfd, 0xfe, 0xff};
  EXPECT_EQ(0, std::memcmp(d.reserved0, r0, 4));
  EXPECT_EQ(0, std::memcmp(d.reserved1, r1, 7));
  EXPECT_EQ(0, std::memcmp(d.reserved2, r2, 4));
}

TEST(AsmEncode, DefaultsAreTheNaturalValidValues) {
  const RawInst r =
      one("tensor_dequantize fmt=int4_to_e5m2 channels=1 src=t3d(sbuf(0, 0)) dst=t3d(sbuf(0, 8))");
  const auto d = decode_as<S3D3TensDequant>(r);
  EXPECT_EQ(d.header.opcode, 0x7b);
  EXPECT_EQ(d.header.inst_word_len, 16);
  EXPECT_EQ(d.in_dtype, 0x9);  // UINT32 transport (seed 000 §3)
  EXPECT_EQ(d.out_dtype, 0x9);
  EXPECT_EQ(d.group_size, 0);
  EXPECT_EQ(d.events.wait_mode, 0);
  EXPECT_EQ(d.events.update_mode, 0);
  // t3d defaults: step [1,0,0], num [1,1,1]
  EXPECT_EQ(d.src_mem_pattern.t.step_elem[0], 1);
  EXPECT_EQ(d.src_mem_pattern.t.step_elem[1], 0);
  EXPECT_EQ(d.src_mem_pattern.t.num_elem[0], 1);
  EXPECT_EQ(d.src_mem_pattern.t.num_elem[2], 1);
  EXPECT_EQ(d.dst_mem_pattern.t.start_addr.raw, 8u);
}

// Seed 003 §2.5: S3DMX1_QUANT.
TEST(AsmEncode, QuantizeMxBytesAtSeedOffsets) {
  const RawInst r =
      one("quantize_mx channels=64 in_dtype=bf16 out_dtype=fp8_e5m2 "
          "src=t3d(sbuf(32, 0x200), step=[1, 0, 0], num=[64, 1, 1]) "
          "dst=mx1d(data=sbuf(32, 0x800), scale=sbuf(33, 0x10), num=16, step=-1, scale_pidx=1) "
          "update=dec(sem9)");
  const RawInst want = from_hex(
      "e3100000"
      "00000209 00000000"                        // update dec sem9
      "00000000"                                 // reserved0 (12..15)
      "00028000 0100 0000 0000 4000 0100 0100"   // src @16: sbuf(32,0x200) = 0x00800200
      "00"                                       // reserved1 (32)
      "40 05 0f"                                 // channels 64, in bf16, out E5M2
      "00000000 00000000 00000000"               // reserved2 (36..47)
      "00088000 10008400 1000 ff 01 00000000");  // dst @48: data, scale sbuf(33,0x10), num 16, step
                                                 // -1, pidx 1
  EXPECT_EQ(to_hex(r), to_hex(want));
}

TEST(AsmEncode, QuantizeMxEveryField) {
  const RawInst r =
      one("quantize_mx channels=32 out_dtype=fp8_e4m3 src=i(02 00 00 10 01 02 03 04 05 06 07 08 09 "
          "0a 0b 0c) "
          "dst=mx1d(data=reg(r7), scale=addr_shape_reg(r31), num=65535, step=127, scale_pidx=255, "
          "reserved=[1, 2, 3, 4]) reserved0=[9, 9, 9, 9] reserved1=[7] "
          "reserved2=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]");
  const auto d = decode_as<S3DMX1Quant>(r);
  EXPECT_EQ(d.header.opcode, 0xe3);
  EXPECT_EQ(d.in_dtype, 0x8);  // default FP32
  EXPECT_EQ(d.out_dtype, 0xE);
  EXPECT_EQ(d.num_active_channels, 32);
  EXPECT_TRUE(d.src_mem_pattern.t.start_addr.is_indirect());
  EXPECT_EQ(d.src_mem_pattern.i.bytes[0], 0x02);
  EXPECT_EQ(d.src_mem_pattern.i.bytes[15], 0x0c);
  EXPECT_EQ(d.dst_mem_pattern.t.start_addr.raw, 0x80000007u);  // ADDR_REG top byte 0x80
  EXPECT_EQ(d.dst_mem_pattern.t.scale_addr.raw, 0xC000001Fu);  // ADDR_SHAPE_REG 0xC0
  EXPECT_EQ(d.dst_mem_pattern.t.num_elem[0], 65535);
  EXPECT_EQ(d.dst_mem_pattern.t.step_elem[0], 127);
  EXPECT_EQ(d.dst_mem_pattern.t.scale_pidx, 255);
  EXPECT_EQ(d.dst_mem_pattern.t.reserved[3], 4);
  EXPECT_EQ(d.reserved0[0], 9);
  EXPECT_EQ(d.reserved1[0], 7);
  EXPECT_EQ(d.reserved2[11], 12);
}

// Seed 003 §3.2: SMX1_LW (0x09) and SMX1D3_MM (0x0A).
TEST(AsmEncode, LdweightsMxFields) {
  const RawInst r =
      one("ldweights_mx in_dtype=fp8_e4m3 rows=64 cols=96 "
          "src=mx1d(data=sbuf(0, 0x100), scale=sbuf(0, 0x900), num=96, step=1)");
  EXPECT_EQ(r[0], 0x09);
  EXPECT_EQ(r[32], 0x0E);
  EXPECT_EQ(r[38], 64);
  EXPECT_EQ(r[39], 96);
  EXPECT_EQ(r[44], 0x3);  // row_grp default: two 32-row groups
  EXPECT_EQ(r[45], 0xF);  // col_grp default: 0xf (all columns enabled)
  EXPECT_EQ(r[16], 0x00);
  EXPECT_EQ(r[17], 0x01);  // start_addr 0x100 @16
  EXPECT_EQ(r[20], 0x00);
  EXPECT_EQ(r[21], 0x09);  // scale_addr 0x900 @20
  EXPECT_EQ(r[24], 96);    // num_elem @24

  const RawInst e =
      one("ldweights_mx in_dtype=int4 rows=128 cols=128 row_grp=0x5 col_grp=0xa "
          "src=mx1d(data=0, scale=0) reserved0=[1, 1, 1, 1] reserved1=[2, 2, 2, 2, 2] "
          "reserved2=[3, 3, 3, 3] "
          "reserved3=[4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4]");
  const auto d = decode_as<SMX1Lw>(e);
  EXPECT_EQ(d.in_dtype, 0x12);
  EXPECT_EQ(d.row_grp, 0x5);
  EXPECT_EQ(d.col_grp, 0xa);
  EXPECT_EQ(d.reserved0[3], 1);
  EXPECT_EQ(d.reserved1[4], 2);
  EXPECT_EQ(d.reserved2[0], 3);
  EXPECT_EQ(d.reserved3[17], 4);
}

TEST(AsmEncode, MatmulMxFields) {
  const RawInst r =
      one("matmul_mx in_dtype=fp4_e2m1 rows=128 acc=1 out_dtype=fp32 "
          "src=mx1d(data=sbuf(0, 0x1000), scale=sbuf(0, 0x2000), num=64) "
          "dst=t3d(psum(0, 0x0), step=[1, 0, 0], num=[64, 1, 1]) reserved2=[5] reserved3=[6, 7] "
          "reserved4=[8, 9, 10, 11] reserved0=[1, 2, 3, 4] reserved1=[1, 2, 3, 4, 5]");
  const auto d = decode_as<SMX1D3Mm>(r);
  EXPECT_EQ(d.header.opcode, 0x0A);
  EXPECT_EQ(d.in_dtype, 0x10);
  EXPECT_EQ(d.num_active_rows, 128);
  EXPECT_EQ(d.out_dtype, 0x8);
  EXPECT_EQ(d.psum_accumulate_flags, 1);
  EXPECT_EQ(d.src_mem_pattern.t.start_addr.raw, 0x1000u);
  EXPECT_EQ(d.src_mem_pattern.t.scale_addr.raw, 0x2000u);
  EXPECT_EQ(d.dst_mem_pattern.t.start_addr.raw, 1u << 25);
  EXPECT_EQ(d.dst_mem_pattern.t.num_elem[0], 64);
  EXPECT_EQ(d.reserved2[0], 5);
  EXPECT_EQ(d.reserved3[1], 7);
  EXPECT_EQ(d.reserved4[3], 11);
  EXPECT_EQ(d.reserved0[0], 1);
  EXPECT_EQ(d.reserved1[4], 5);
}

// Seed 003 §3.3 + encodings.h conventions: S3_LW (0x01) and S3D3_MM (0x02).
TEST(AsmEncode, LdweightsV5Fields) {
  const RawInst r = one(
      "ldweights in_dtype=fp8_e4m3 rows=128 cols=32 perf=oct_row_tiled "
      "src=mx(data=sbuf(0, 0x40), scale=sbuf(0, 0x8000), num=[32, 4], step_data=4, step_scale=1, "
      "p=5, f=2) reserved0=[1, 0, 0, 0] perf_mode=2 reserved1=[3] "
      "reserved2=[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9]");
  const auto d = decode_as<S3Lw>(r);
  EXPECT_EQ(d.header.opcode, 0x01);
  EXPECT_EQ(d.in_dtype, 0xE);
  EXPECT_EQ(d.num_active_rows, 128);
  EXPECT_EQ(d.num_active_cols, 32);
  EXPECT_EQ(d.row_grp, 0xF);
  EXPECT_EQ(d.col_grp, 0xF);
  EXPECT_EQ(r[39], 0x6);  // MX_PERF_MODE @39 (seed): OCT_ROW_TILED
  EXPECT_EQ(d.src_mem_pattern.mx.data_addr.marker(), 0x01);
  EXPECT_EQ(d.src_mem_pattern.mx.data_addr.address(), 0x40u);
  EXPECT_EQ(d.src_mem_pattern.mx.scale_addr.raw, 0x8000u);
  EXPECT_EQ(d.src_mem_pattern.mx.num_elem[0], 32);
  EXPECT_EQ(d.src_mem_pattern.mx.step_elem_data_1, 4);
  EXPECT_EQ(d.src_mem_pattern.mx.p_f_dim, 0x25);
  EXPECT_EQ(d.src_mem_pattern.mx.scale_dtype, 0x13);  // default E8M0
  EXPECT_EQ(d.reserved0[0], 1);
  EXPECT_EQ(d.perf, 2);  // SPEC §18 plain perf_mode @37 (convention), any byte settable
  EXPECT_EQ(d.reserved1[0], 3);
  EXPECT_EQ(d.reserved2[23], 9);
}

TEST(AsmEncode, MatmulV5Fields) {
  const RawInst r =
      one("matmul in_dtype=bf16 out_dtype=fp32 rows=64 acc=3 perf=quad_row_interleave "
          "src=t3d(shape_reg(sbuf(1, 0x10)), step=[2, 0, 0], num=[8, 1, 1]) "
          "dst=t3d(psum(0, 0x800), step=[1, 0, 0], num=[8, 1, 1]) reserved0=[1, 1, 1, 1] "
          "transpose=2 perf_mode=double_row reserved1=[2, 2] reserved2=[3, 3, 3] "
          "reserved3=[4, 4, 4, 4]");
  const auto d = decode_as<S3D3Mm>(r);
  EXPECT_EQ(d.header.opcode, 0x02);
  EXPECT_EQ(d.in_dtype, 0x5);
  EXPECT_EQ(d.out_dtype, 0x8);
  EXPECT_EQ(d.num_active_rows, 64);
  EXPECT_EQ(d.psum_accumulate_flags, 3);
  EXPECT_EQ(r[40], 0x2);  // MX_PERF_MODE @40 (seed): QUAD_ROW_INTERLEAVE
  EXPECT_EQ(d.src_mem_pattern.t.start_addr.raw, 0x40000000u | (1u << 18) | 0x10u);
  EXPECT_TRUE(d.src_mem_pattern.t.start_addr.shape_from_register());
  EXPECT_EQ(d.dst_mem_pattern.t.start_addr.raw, (1u << 25) | 0x800u);
  EXPECT_EQ(d.transpose, 2);  // SPEC §18 plain fields @36, @37 (conventions)
  EXPECT_EQ(d.perf, 1);
  EXPECT_EQ(d.reserved1[1], 2);
  EXPECT_EQ(d.reserved2[2], 3);
  EXPECT_EQ(d.reserved3[0], 4);
}

TEST(AsmEncode, Addr4Forms) {
  auto src_addr = [](const std::string& a) {
    const RawInst r =
        one("tensor_dequantize fmt=1 channels=1 src=t3d(" + a + ") dst=t3d(sbuf(0, 0))");
    return decode_as<S3D3TensDequant>(r).src_mem_pattern.t.start_addr.raw;
  };
  EXPECT_EQ(src_addr("0"), 0u);
  EXPECT_EQ(src_addr("0x7ffffff"), 0x07FFFFFFu);
  EXPECT_EQ(src_addr("sbuf(127, 0x3ffff)"), (127u << 18) | 0x3FFFFu);
  EXPECT_EQ(src_addr("psum(0, 0)"), 0x02000000u);
  EXPECT_EQ(src_addr("reg(r0)"), 0x80000000u);
  EXPECT_EQ(src_addr("reg(r31)"), 0x8000001Fu);
  EXPECT_EQ(src_addr("shape_reg(0x100)"), 0x40000100u);
  EXPECT_EQ(src_addr("addr_shape_reg(r3)"), 0xC0000003u);
  EXPECT_EQ(src_addr("mxv2(sbuf(0, 4))"), 0x08000004u);
  EXPECT_EQ(src_addr("indirect(sbuf(0, 4))"), 0x10000004u);
  EXPECT_EQ(src_addr("addr4(0xdeadbeef)"), 0xDEADBEEFu);
  EXPECT_EQ(src_addr("0x4000000"), 0x04000000u);  // SFU tile region, as a number
}

TEST(AsmEncode, EventsRawFields) {
  const RawInst r =
      one("quantize_mx channels=32 out_dtype=e4m3 src=t3d(0) dst=mx1d(data=0, scale=0) "
          "wait_mode=9 wait_idx=200 update_mode=4 update_idx=77 sem_value=0x12345678");
  const Events e = events_of(r);
  EXPECT_EQ(e.wait_mode, 9);
  EXPECT_EQ(e.wait_idx, 200);
  EXPECT_EQ(e.update_mode, 4);
  EXPECT_EQ(e.update_idx, 77);
  EXPECT_EQ(e.sem_value, 0x12345678u);
  // wait= and update=set agreeing on sem_value is fine.
  const RawInst s =
      one("quantize_mx channels=32 out_dtype=e4m3 src=t3d(0) dst=mx1d(data=0, scale=0) "
          "wait=eq(sem1, 5) update=set(sem2, 5)");
  EXPECT_EQ(events_of(s).sem_value, 5u);
  EXPECT_EQ(events_of(s).update_mode, 3);
}

TEST(AsmEncode, OpcodeOverrideAndRaw) {
  const RawInst r = one("tensor_dequantize opcode=0x7c fmt=1 channels=1 src=t3d(0) dst=t3d(0)");
  EXPECT_EQ(r[0], 0x7c);
  std::string raw = ".raw";
  for (int i = 0; i < 64; ++i)
    raw += " " + std::string(i < 16 ? "0" : "") + [&] {
      char b[4];
      std::snprintf(b, sizeof b, "%x", i);
      return std::string(b);
    }();
  const RawInst w = one(raw);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(w[static_cast<std::size_t>(i)], i);
  // 128 contiguous digits, continued over two lines
  std::string contiguous = ".raw ";
  for (int i = 0; i < 32; ++i) contiguous += "ab";
  contiguous += " \\\n  ";
  for (int i = 0; i < 32; ++i) contiguous += "cd";
  const RawInst c = one(contiguous);
  EXPECT_EQ(c[0], 0xab);
  EXPECT_EQ(c[31], 0xab);
  EXPECT_EQ(c[32], 0xcd);
  EXPECT_EQ(c[63], 0xcd);
}

TEST(AsmEncode, DirectivesEnginesRegsArch) {
  const Program p = parse_program(
      "# a comment\n"
      ".arch MAVERICK   # case-insensitive\n"
      ".reg pool r0 = 0xffffffff\n"
      ".reg pe r31 = -1\n"
      "tensor_dequantize fmt=1 channels=1 src=t3d(0) dst=t3d(0)\n"
      ".engine pe\n"
      "matmul in_dtype=bf16 rows=1 src=t3d(0) \\\n"
      "   dst=t3d(psum(0, 0))\n"
      ".engine sfu\n"
      ".raw " +
          std::string(128, '0') +
          "\n"
          ".engine dve\n",
      "p.tpb");
  ASSERT_TRUE(p.arch.has_value());
  EXPECT_EQ(*p.arch, Arch::Maverick);
  ASSERT_EQ(p.regs.size(), 2u);
  EXPECT_EQ(p.regs[0].engine, Queue::Pool);
  EXPECT_EQ(p.regs[0].reg, 0u);
  EXPECT_EQ(p.regs[0].value, 0xffffffffu);
  EXPECT_EQ(p.regs[1].engine, Queue::Pe);
  EXPECT_EQ(p.regs[1].reg, 31u);
  EXPECT_EQ(p.regs[1].value, 0xffffffffu);
  EXPECT_EQ(p.queues[0].size(), 1u);
  EXPECT_EQ(p.queues[1].size(), 0u);
  ASSERT_EQ(p.queues[2].size(), 1u);
  EXPECT_EQ(p.queues[2][0].raw[0], 0x02);
  EXPECT_EQ(p.queues[2][0].loc.line, 7);
  EXPECT_EQ(p.queues[2][0].loc.col, 1);
  EXPECT_EQ(p.queues[3].size(), 1u);
  EXPECT_EQ(p.size(), 3u);
  const auto bin = to_binary(p);
  ASSERT_EQ(bin.size(), 3u * 64);
  EXPECT_EQ(bin[0], 0x7b);    // pool first
  EXPECT_EQ(bin[64], 0x02);   // then pe
  EXPECT_EQ(bin[128], 0x00);  // then sfu
}

TEST(AsmEncode, HomeEngines) {
  EXPECT_EQ(home_engine(0x7b), Queue::Pool);
  EXPECT_EQ(home_engine(0xbe), Queue::Pool);
  EXPECT_EQ(home_engine(0xf2), Queue::Pool);
  EXPECT_EQ(home_engine(0xe3), Queue::Dve);
  EXPECT_EQ(home_engine(0x01), Queue::Pe);
  EXPECT_EQ(home_engine(0x02), Queue::Pe);
  EXPECT_EQ(home_engine(0x09), Queue::Pe);
  EXPECT_EQ(home_engine(0x0a), Queue::Pe);
  EXPECT_EQ(home_engine(0x55), Queue::Pool);
}

TEST(AsmEncode, ParseBinary) {
  std::vector<std::uint8_t> bytes(3 * 64, 0);
  bytes[0] = 0xe3;
  bytes[64] = 0x7b;
  bytes[128] = 0x0a;
  const Program p = parse_binary(bytes, "x.bin");
  EXPECT_EQ(p.queues[0].size(), 1u);
  EXPECT_EQ(p.queues[1].size(), 1u);
  EXPECT_EQ(p.queues[2].size(), 1u);
  EXPECT_EQ(p.queues[0][0].loc.line, 0);
  bytes.resize(100);
  try {
    parse_binary(bytes, "x.bin");
    FAIL() << "no error for a 100-byte binary";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("x.bin"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("100"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tpb::isa
