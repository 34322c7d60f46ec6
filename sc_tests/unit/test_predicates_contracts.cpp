// Contracts of the checker: a valid base instruction per contract, and for
// every predicate name the checker can report an instruction that fails that
// predicate alone (seed 000 §2.1, §4.1; seed 003 §2.5, §3, §5, §6.1).
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "models/isa/address_map.h"
#include "models/isa/checker.h"
#include "models/isa/encodings.h"

namespace tpb::isa {
namespace {

constexpr Arch kAllArchs[] = {Arch::Sunda, Arch::Cayman, Arch::Mariana, Arch::Maverick};
const std::vector<Arch> kAllGens(std::begin(kAllArchs), std::end(kAllArchs));

// Byte writers independent of the structs (offsets from the seeds).
void put32(RawInst& r, int off, std::uint32_t v) {
  for (int k = 0; k < 4; ++k) r[off + k] = static_cast<std::uint8_t>(v >> (8 * k));
}
void put16(RawInst& r, int off, std::uint16_t v) {
  r[off] = static_cast<std::uint8_t>(v);
  r[off + 1] = static_cast<std::uint8_t>(v >> 8);
}
// TENSOR3D at `off`.
void put_t3d(RawInst& r, int off, std::uint32_t addr, std::int16_t s0, std::int16_t s1,
             std::int16_t s2, std::uint16_t n0, std::uint16_t n1, std::uint16_t n2) {
  put32(r, off, addr);
  put16(r, off + 4, static_cast<std::uint16_t>(s0));
  put16(r, off + 6, static_cast<std::uint16_t>(s1));
  put16(r, off + 8, static_cast<std::uint16_t>(s2));
  put16(r, off + 10, n0);
  put16(r, off + 12, n1);
  put16(r, off + 14, n2);
}
RawInst with_header(std::uint8_t opcode) {
  RawInst r{};
  r[0] = opcode;
  r[1] = 16;
  return r;
}
constexpr std::uint32_t kMxV2 = 0x08000000;      // marker_a4 0b00001
constexpr std::uint32_t kIndirect = 0x10000000;  // marker_a4 0b00010
constexpr std::uint32_t kAddrReg = 0x80000000;
std::uint32_t sb(unsigned p, std::uint32_t off) { return sbuf_addr(p, off); }
std::uint32_t ps(unsigned p, std::uint32_t off) { return psum_addr(p, off); }

// ---- valid bases -------------------------------------------------------------
// TensorDequantize FP4 E2M1 -> E5M2, no MX: 64 src words -> 128 dst words.
RawInst dequant_base() {
  RawInst r = with_header(0x7b);
  put_t3d(r, 12, sb(0, 0x1000), 1, 16, 64, 16, 4, 1);
  r[32] = 0x09;
  r[33] = 0x09;
  r[34] = 64;
  r[35] = 1;
  r[36] = 0;
  put_t3d(r, 44, sb(0, 0x2000), 1, 32, 128, 32, 4, 1);
  return r;
}
// QuantizeMX FP32 -> E4M3, 32 partitions, 64 elements -> 16 x4 words.
RawInst quant_base() {
  RawInst r = with_header(0xe3);
  put_t3d(r, 16, sb(0, 0), 1, 0, 0, 64, 1, 1);
  r[33] = 32;
  r[34] = 0x08;
  r[35] = 0x0E;
  put32(r, 48, sb(32, 0x100));
  put32(r, 52, sb(32, 0x800));
  put16(r, 56, 16);
  r[58] = 1;
  r[59] = 4;
  return r;
}
RawInst lwmx_base() {
  RawInst r = with_header(0x09);
  put32(r, 16, sb(0, 0));
  put32(r, 20, sb(0, 0x4000));
  put16(r, 24, 128);
  r[26] = 1;
  r[27] = 0;
  r[32] = 0x0E;
  r[38] = 128;
  r[39] = 128;
  r[44] = 0xf;
  r[45] = 0xf;
  return r;
}
RawInst mmmx_base() {
  RawInst r = with_header(0x0A);
  put32(r, 16, sb(0, 0x8000));
  put32(r, 20, sb(0, 0xC000));
  put16(r, 24, 64);
  r[26] = 1;
  r[32] = 0x10;
  r[38] = 128;
  r[40] = 0x08;
  r[43] = 1;
  put_t3d(r, 48, ps(0, 0), 1, 0, 0, 64, 1, 1);
  return r;
}
// MXTENSOR_V2 operand at `off`: 32 x 4 x4 elements, E8M0 scales.
void put_mxv2(RawInst& r, int off) {
  put32(r, off, kMxV2 | sb(0, 0));
  put32(r, off + 4, sb(0, 0x10000));
  r[off + 8] = 32;
  r[off + 9] = 4;
  put16(r, off + 10, 32);
  put16(r, off + 12, 32);
  r[off + 14] = 0x57;
  r[off + 15] = 0x13;
}
RawInst lw5_mx_base() {
  RawInst r = with_header(0x01);
  put_mxv2(r, 12);
  r[32] = 0x0E;
  r[33] = 128;
  r[34] = 128;
  r[35] = 0xf;
  r[36] = 0xf;
  r[39] = 1;
  return r;
}
RawInst lw5_plain_base() {
  RawInst r = with_header(0x01);
  put_t3d(r, 12, sb(0, 0), 1, 0, 0, 128, 1, 1);
  r[32] = 0x05;
  r[33] = 128;
  r[34] = 128;
  r[35] = 0xf;
  r[36] = 0xf;
  return r;
}
RawInst mm5_mx_base() {
  RawInst r = with_header(0x02);
  put_mxv2(r, 12);
  r[32] = 0x0F;
  r[33] = 0x08;
  r[34] = 128;
  r[40] = 4;
  put_t3d(r, 44, ps(0, 0), 1, 0, 0, 32, 1, 1);
  return r;
}
RawInst mm5_plain_base() {
  RawInst r = with_header(0x02);
  put_t3d(r, 12, sb(0, 0), 1, 0, 0, 128, 1, 1);
  r[32] = 0x06;
  r[33] = 0x08;
  r[34] = 64;
  r[35] = 1;
  put_t3d(r, 44, ps(0, 0), 1, 0, 0, 128, 1, 1);
  return r;
}

// A TQUANT block word (seed 002): the checker sees only its header, events,
// opcode and generation; the rest is the SFU kernel's (test_sfu_tquant.cpp).
RawInst tquant_base() { return with_header(0x6a); }

// DVE tensor_copy (SPEC §11): 64 partitions of 128 FP32 PSUM elements to
// BF16 in SBUF.
RawInst tcopy_base() {
  RawInst r = with_header(0x23);
  put_t3d(r, 12, ps(0, 0x100), 1, 0, 0, 128, 1, 1);
  r[32] = 0x08;
  r[33] = 0x05;
  r[34] = 64;
  put_t3d(r, 44, sb(0, 0x1000), 1, 0, 0, 128, 1, 1);
  return r;
}

// ---- SPEC §18 vector instructions (every generation) --------------------------
constexpr std::uint32_t kOneF32 = 0x3f800000, kTwoF32 = 0x40000000;
// activation: exp of 32 partitions x 64 FP32 to BF16, scale 1.0.
RawInst act_base() {
  RawInst r = with_header(0x20);
  put_t3d(r, 12, sb(0, 0), 1, 0, 0, 64, 1, 1);
  r[28] = 0x08;
  r[29] = 0x05;
  r[30] = 32;
  r[31] = 1;
  put32(r, 32, kOneF32);
  put_t3d(r, 44, sb(0, 0x1000), 1, 0, 0, 64, 1, 1);
  return r;
}
// tensor_tensor add, FP32, src1 at 0x400 of the same shape.
RawInst tt_base() {
  RawInst r = with_header(0x21);
  put_t3d(r, 12, sb(0, 0), 1, 0, 0, 64, 1, 1);
  put32(r, 28, sb(0, 0x400));
  put16(r, 32, 1);
  r[38] = r[39] = r[40] = 0x08;
  r[41] = 32;
  r[42] = 1;
  put_t3d(r, 44, sb(0, 0x800), 1, 0, 0, 64, 1, 1);
  return r;
}
// tensor_scalar (x * 2) + 0.
RawInst ts_base() {
  RawInst r = with_header(0x22);
  put_t3d(r, 12, sb(0, 0), 1, 0, 0, 64, 1, 1);
  r[28] = r[29] = 0x08;
  r[30] = 32;
  r[31] = 3;
  put32(r, 32, kTwoF32);
  r[40] = 1;
  put_t3d(r, 44, sb(0, 0x800), 1, 0, 0, 64, 1, 1);
  return r;
}
// tensor_reduce add of the innermost dimension of [4][64] -> 4 per partition.
RawInst reduce_base() {
  RawInst r = with_header(0x24);
  put_t3d(r, 12, sb(0, 0), 1, 64, 0, 64, 4, 1);
  r[28] = r[29] = 0x08;
  r[30] = 32;
  r[31] = 1;
  r[32] = 1;
  put_t3d(r, 44, sb(0, 0x800), 1, 0, 0, 4, 1, 1);
  return r;
}
// tensor_tensor_scan multiply then add, initial 0.
RawInst scan_base() {
  RawInst r = tt_base();
  r[0] = 0x25;
  r[42] = 3;
  r[43] = 1;
  return r;
}
RawInst memset_base() {
  RawInst r = with_header(0x26);
  r[29] = 0x05;
  r[30] = 32;
  put32(r, 32, 0x3f80);
  put_t3d(r, 44, sb(0, 0x800), 1, 0, 0, 64, 1, 1);
  return r;
}
RawInst iota_base() {
  RawInst r = with_header(0x27);
  put32(r, 20, 1);
  put16(r, 32, 64);
  put16(r, 34, 1);
  put16(r, 36, 1);
  r[38] = 0x08;
  r[39] = 32;
  put_t3d(r, 44, sb(0, 0x800), 1, 0, 0, 64, 1, 1);
  return r;
}
// The one-input layout (tensor_copy's): src@12, in@32, out@33, ch@34, dst@44.
RawInst unary(std::uint8_t op, std::uint16_t n_src, std::uint16_t n_dst, std::uint8_t ch) {
  RawInst r = with_header(op);
  put_t3d(r, 12, sb(0, 0), 1, 0, 0, n_src, 1, 1);
  r[32] = r[33] = 0x08;
  r[34] = ch;
  put_t3d(r, 44, sb(64, 0x800), 1, 0, 0, n_dst, 1, 1);
  return r;
}
RawInst recip_base() { return unary(0x28, 64, 64, 32); }
RawInst bn_stats_base() { return unary(0x29, 64, 6, 32); }
RawInst bn_aggr_base() { return unary(0x2a, 6, 2, 32); }
RawInst transpose_base() { return unary(0x2b, 16, 16, 16); }  // 16 x 16 into partitions 64..79

// A DMA descriptor (SPEC §10): 64 rows of 2 KiB from HBM offset 0x10000
// (4 KiB apart) to SBUF partitions 0..63 at offset 0x1000.
void put64(RawInst& r, int off, std::uint64_t v) {
  for (int k = 0; k < 8; ++k) r[off + k] = static_cast<std::uint8_t>(v >> (8 * k));
}
RawInst dma_base() {
  RawInst r = with_header(0xd0);
  r[12] = 64;
  put32(r, 16, 2048);
  put64(r, 32, 0x10000);  // src: HBM
  put32(r, 40, 4096);
  r[44] = 0;
  put64(r, 48, sb(0, 0x1000));  // dst: SBUF
  r[60] = 1;
  return r;
}
// The wait-only instruction (SPEC §18) under .engine dma7 (queue byte 11).
RawInst nop_base() {
  RawInst r = with_header(0xf0);
  r[12] = 11;
  return r;
}

// The base turned into HBM -> HBM: dst at HBM offset 0x1000000, rows 4 KiB apart.
void dma_to_hbm(RawInst& r) {
  put64(r, 48, 0x1000000);
  put32(r, 56, 4096);
  r[60] = 0;
}
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

struct Base {
  const char* name;
  RawInst (*make)();
  std::vector<Arch> valid_on;
  const char* nc_predicate;
};
const std::vector<Base>& bases() {
  static const std::vector<Base> b = {
      {"dequant",
       dequant_base,
       {Arch::Cayman, Arch::Mariana, Arch::Maverick},
       "has_valid_nc_tens_dequant"},
      {"quant", quant_base, {Arch::Mariana, Arch::Maverick}, "s3dmx1_quant_valid_nc"},
      {"lwmx", lwmx_base, {Arch::Mariana}, "smx1_lw_valid_nc"},
      {"mmmx", mmmx_base, {Arch::Mariana}, "smx1d3_mm_valid_nc"},
      {"lw5_mx", lw5_mx_base, {Arch::Maverick}, "s3_lw_valid_nc"},
      {"lw5_plain", lw5_plain_base, kAllGens, ""},  // SPEC §18: plain on every generation
      {"mm5_mx", mm5_mx_base, {Arch::Maverick}, "s3d3_mm_valid_nc"},
      {"mm5_plain", mm5_plain_base, kAllGens, ""},
      {"tquant", tquant_base, {Arch::Cayman, Arch::Mariana, Arch::Maverick}, "tquant_valid_nc"},
      {"tensor_copy", tcopy_base, {Arch::Sunda, Arch::Cayman, Arch::Mariana, Arch::Maverick}, ""},
      {"dma_copy", dma_base, {Arch::Sunda, Arch::Cayman, Arch::Mariana, Arch::Maverick}, ""},
      {"activation", act_base, kAllGens, ""},
      {"tensor_tensor", tt_base, kAllGens, ""},
      {"tensor_scalar", ts_base, kAllGens, ""},
      {"tensor_reduce", reduce_base, kAllGens, ""},
      {"tensor_tensor_scan", scan_base, kAllGens, ""},
      {"memset", memset_base, kAllGens, ""},
      {"iota", iota_base, kAllGens, ""},
      {"reciprocal", recip_base, kAllGens, ""},
      {"bn_stats", bn_stats_base, kAllGens, ""},
      {"bn_aggr", bn_aggr_base, kAllGens, ""},
      {"nc_transpose", transpose_base, kAllGens, ""},
  };
  return b;
}

std::string join(const std::vector<std::string_view>& v) {
  std::string s;
  for (auto n : v) s += std::string(n) + " ";
  return s;
}

TEST(IsaContracts, BasesValidOnTheirGenerationsOnlyNcFailsElsewhere) {
  for (const Base& b : bases()) {
    const RawInst raw = b.make();
    for (Arch a : kAllArchs) {
      const CheckResult r = check_instruction(raw, a);
      EXPECT_EQ(r.contract, contract_for_opcode(raw[0]));
      const bool valid_here =
          std::find(b.valid_on.begin(), b.valid_on.end(), a) != b.valid_on.end();
      if (valid_here) {
        EXPECT_TRUE(r.valid()) << b.name << " on " << arch_name(a) << ": " << join(r.failed);
      } else {
        EXPECT_EQ(r.failed, std::vector<std::string_view>{b.nc_predicate})
            << b.name << " on " << arch_name(a) << ": " << join(r.failed);
      }
    }
  }
}

// ---- one failing predicate per case ------------------------------------------
struct Case {
  std::string name;  // the only predicate expected to fail
  Arch arch;
  RawInst (*base)();
  std::function<void(RawInst&)> mutate;
  std::string contract = "";  // run with check_as when set
};

const std::vector<Case>& cases() {
  const Arch C = Arch::Cayman, M = Arch::Mariana, V = Arch::Maverick, S = Arch::Sunda;
  static const std::vector<Case> c = {
      {"has_known_opcode", M, dequant_base, [](RawInst& r) { r[0] = 0x55; }},
      {"has_known_opcode", M, dequant_base, [](RawInst& r) { r[0] = 0xbe; }},
      // ---- TensorDequantize, CAYMAN form
      {"has_valid_neuron_header", C, dequant_base, [](RawInst& r) { r[1] = 15; }},
      {"has_valid_neuron_header", C, dequant_base, [](RawInst& r) { r[2] = 2; }},
      {"has_valid_neuron_events", C, dequant_base, [](RawInst& r) { r[4] = 3; }},
      {"has_valid_neuron_events", C, dequant_base, [](RawInst& r) { r[7] = 64; }},
      {"has_tensor_dequantize_opcode", C, dequant_base, [](RawInst& r) { r[0] = 0xe3; },
       "is_valid_tensor_dequantize"},
      {"has_valid_nc_tens_dequant", S, dequant_base, [](RawInst&) {}},
      {"check_active_channels", C, dequant_base, [](RawInst& r) { r[34] = 0; }},
      {"has_valid_dequant_fmt", C, dequant_base,
       [](RawInst& r) {
         r[35] = 5;
         r[15] |= 0x40;  // SHAPE_REG: the ratio check is skipped
       }},
      {"has_valid_group_size", C, dequant_base,
       [](RawInst& r) {
         r[36] = 4;
         r[15] |= 0x40;
       }},
      {"has_valid_dequant_fmt_group_size", C, dequant_base,
       [](RawInst& r) {
         r[35] = 4;  // FP6 can never be MX (seed 000 §5)
         r[36] = 8;
         r[47] |= 0x40;
       }},
      {"s3d3_tens_dequant_reserved_zero", C, dequant_base, [](RawInst& r) { r[28] = 1; }},
      {"s3d3_tens_dequant_reserved_zero", C, dequant_base, [](RawInst& r) { r[43] = 0x80; }},
      {"s3d3_tens_dequant_reserved_zero", C, dequant_base, [](RawInst& r) { r[63] = 1; }},
      {"has_valid_tens_dequant_in_dtype", C, dequant_base, [](RawInst& r) { r[32] = 0x08; }},
      {"has_valid_tens_dequant_out_dtype", C, dequant_base, [](RawInst& r) { r[33] = 0x07; }},
      {"start_addr_active_channels(src)", C, dequant_base,
       [](RawInst& r) { put32(r, 12, sb(65, 0x1000)); }},
      {"start_addr_active_channels(dst)", C, dequant_base,
       [](RawInst& r) { put32(r, 44, sb(100, 0x2000)); }},
      {"tensor3d_valid(src)", C, dequant_base, [](RawInst& r) { put32(r, 12, ps(0, 0)); }},
      {"tensor3d_valid(src)", C, dequant_base,
       [](RawInst& r) { put32(r, 12, 0x20000000 | sb(0, 0x1000)); }},  // marker 0b00100
      {"tensor3d_valid(src)", C, dequant_base,
       [](RawInst& r) { put16(r, 16, static_cast<std::uint16_t>(-1000)); }},  // below 0
      {"tensor3d_valid(dst)", C, dequant_base,
       [](RawInst& r) { put16(r, 50, 0); }},  // a write broadcast on dim 1
      {"tensor3d_valid(dst)", C, dequant_base,
       [](RawInst& r) { put32(r, 44, sb(0, 224 * 1024 - 256)); }},  // past 224 KiB
      {"tensor3d_valid(dst)", C, dequant_base,
       [](RawInst& r) { put32(r, 44, 0x04000000); }},  // SFU tile region
      {"s3d3_tens_dequant_element_count_check_t3d", C, dequant_base,
       [](RawInst& r) { put16(r, 54, 31); }},
      {"s3d3_tens_dequant_element_count_check_t3d", C, dequant_base,
       [](RawInst& r) { r[36] = 8; }},  // MX needs 8:5
      // ---- TensorDequantize, MARIANA/MAVERICK form
      {"has_valid_nc_tens_dequant", S, dequant_base, [](RawInst&) {}},
      {"check_active_channels", M, dequant_base, [](RawInst& r) { r[34] = 0; }},
      {"s3d3_tens_dequant_reserved_zero", V, dequant_base, [](RawInst& r) { r[37] = 1; }},
      {"check_m3d_active_channels(src)", M, dequant_base,
       [](RawInst& r) { put32(r, 12, sb(65, 0x1000)); }},
      {"check_m3d_active_channels(dst)", V, dequant_base,
       [](RawInst& r) { put32(r, 44, sb(100, 0x2000)); }},
      {"mem3d_valid(src)", M, dequant_base, [](RawInst& r) { put32(r, 12, ps(0, 0)); }},
      {"mem3d_valid(src)", V, dequant_base,
       [](RawInst& r) { put32(r, 12, kMxV2 | sb(0, 0x1000)); }},  // no MX operand here
      {"mem3d_valid(dst)", M, dequant_base, [](RawInst& r) { put16(r, 50, 0); }},
      {"mem3d_valid(dst)", M, dequant_base,
       [](RawInst& r) { put32(r, 44, sb(0, 256 * 1024 - 256)); }},  // past 256 KiB
      {"indirect_quadrant_check_src3d", M, dequant_base,
       [](RawInst& r) {
         put32(r, 12, kIndirect | sb(0, 0x1000));
         put32(r, 16, sb(40, 0));  // index list in quadrant 1
       }},
      {"indirect_quadrant_check_src3d_dst3d", V, dequant_base,
       [](RawInst& r) {
         put32(r, 12, kIndirect | sb(32, 0x1000));
         put32(r, 16, sb(33, 0));  // same quadrant as its data
       }},                         // dst stays in quadrant 0
      {"s3d3_tens_dequant_element_count_check_t3d", V, dequant_base,
       [](RawInst& r) { put16(r, 22, 15); }},
      // ---- QuantizeMX
      {"has_valid_neuron_header", M, quant_base, [](RawInst& r) { r[1] = 0; }},
      {"has_valid_neuron_events", V, quant_base, [](RawInst& r) { r[6] = 4; }},
      {"has_quantize_mx_opcode", M, quant_base, [](RawInst& r) { r[0] = 0x7b; },
       "is_valid_s3dmx1_quant"},
      {"s3dmx1_quant_valid_nc", C, quant_base, [](RawInst&) {}},
      {"s3dmx1_quant_reserved_zero", M, quant_base, [](RawInst& r) { r[32] = 1; }},
      {"s3dmx1_quant_reserved_zero", M, quant_base, [](RawInst& r) { r[13] = 1; }},
      {"s3dmx1_quant_reserved_zero", M, quant_base, [](RawInst& r) { r[61] = 1; }},
      {"s3dmx1_quant_valid_active_channels", M, quant_base, [](RawInst& r) { r[33] = 16; }},
      {"is_valid_dtype", M, quant_base, [](RawInst& r) { r[34] = 0x0B; }},
      {"is_valid_dtype", M, quant_base, [](RawInst& r) { r[34] = 0x0A; }},  // FP32R
      {"s3dmx1_quant_valid_in_dtype", M, quant_base, [](RawInst& r) { r[34] = 0x01; }},
      {"is_valid_dtype_inc_fp4", M, quant_base, [](RawInst& r) { r[35] = 0x10; }},
      {"s3dmx1_quant_valid_out_dtype", V, quant_base, [](RawInst& r) { r[35] = 0x05; }},
      {"s3dmx1_quant_valid_out_dtype", V, quant_base, [](RawInst& r) { r[35] = 0x0C; }},
      {"mem3d_valid(src)", M, quant_base, [](RawInst& r) { put32(r, 16, ps(0, 0)); }},
      {"mem3d_valid(src)", M, quant_base,
       [](RawInst& r) { put32(r, 16, kIndirect | sb(0, 0)); }},  // no indirect here
      {"check_m3d_active_channels(src)", M, quant_base,
       [](RawInst& r) { put32(r, 16, sb(100, 0)); }},
      {"mxmem1d_valid(dst)", M, quant_base, [](RawInst& r) { r[59] = 29; }},
      {"mxmem1d_valid(dst)", M, quant_base, [](RawInst& r) { r[58] = 0; }},  // write broadcast
      {"check_mx1d_active_channels(dst)", M, quant_base,
       [](RawInst& r) {
         r[33] = 64;
         put32(r, 48, sb(96, 0x100));
         put32(r, 52, sb(96, 0x800));
       }},
      {"valid_s3dmx1_quant_sbuf_quadrant", V, quant_base,
       [](RawInst& r) { put32(r, 52, sb(33, 0x800)); }},
      {"valid_s3dmx1_quant_sbuf_quadrant", V, quant_base,
       [](RawInst& r) { put32(r, 52, sb(64, 0x800)); }},  // another quadrant
      {"s3dmx1_quant_element_count_check", M, quant_base, [](RawInst& r) { put16(r, 56, 15); }},
      // ---- LdweightsMX (v4)
      {"has_ldweights_mx_opcode", M, lwmx_base, [](RawInst& r) { r[0] = 0x0A; },
       "is_valid_smx1_lw"},
      {"smx1_lw_valid_nc", V, lwmx_base, [](RawInst&) {}},
      {"smx1_lw_reserved_zero", M, lwmx_base, [](RawInst& r) { r[50] = 1; }},
      {"smx1_lw_reserved_zero", M, lwmx_base, [](RawInst& r) { r[29] = 1; }},
      {"is_valid_mx_dtype", M, lwmx_base, [](RawInst& r) { r[32] = 0x05; }},
      {"valid_row_grp_active_rows", M, lwmx_base, [](RawInst& r) { r[44] = 0x7; }},
      {"valid_row_grp_active_rows", M, lwmx_base,
       [](RawInst& r) {
         r[38] = 64;
         r[44] = 0x6;  // groups 1..2, not from row 0
       }},
      {"valid_col_grp_active_cols", M, lwmx_base, [](RawInst& r) { r[39] = 0; }},
      {"valid_col_grp_active_cols", M, lwmx_base, [](RawInst& r) { r[45] = 0x7; }},
      {"mxmem1d_valid(src)", M, lwmx_base, [](RawInst& r) { put16(r, 24, 0); }},
      {"check_mx1d_active_channels(src)", M, lwmx_base,
       [](RawInst& r) {
         r[38] = 64;
         r[44] = 0x3;
         put32(r, 16, sb(96, 0));
         put32(r, 20, sb(96, 0x4000));
       }},
      {"valid_mx_sbuf_quadrant", M, lwmx_base, [](RawInst& r) { put32(r, 20, sb(1, 0x4000)); }},
      // ---- MatmulMX (v4)
      {"has_matmul_mx_opcode", M, mmmx_base, [](RawInst& r) { r[0] = 0x09; },
       "is_valid_smx1d3_mm"},
      {"smx1d3_mm_valid_nc", V, mmmx_base, [](RawInst&) {}},
      {"smx1d3_mm_reserved_zero", M, mmmx_base, [](RawInst& r) { r[39] = 1; }},
      {"is_valid_dtype_inc_fp4", M, mmmx_base, [](RawInst& r) { r[32] = 0x11; }},
      {"valid_mm_out_dtype", M, mmmx_base, [](RawInst& r) { r[40] = 0x05; }},
      {"valid_mm_active_rows", M, mmmx_base, [](RawInst& r) { r[38] = 48; }},
      {"valid_psum_accumulate_flags", M, mmmx_base, [](RawInst& r) { r[43] = 3; }},
      {"mxmem1d_valid(src)", M, mmmx_base,
       [](RawInst& r) { put32(r, 16, sb(0, 256 * 1024 - 64)); }},  // 64 x u16 overflow
      {"check_mx1d_active_channels(src)", M, mmmx_base,
       [](RawInst& r) {
         r[38] = 64;
         put32(r, 16, sb(96, 0x8000));
         put32(r, 20, sb(96, 0xC000));
       }},
      {"valid_mx_sbuf_quadrant", M, mmmx_base, [](RawInst& r) { put32(r, 20, sb(2, 0xC000)); }},
      {"mem3d_valid(dst)", M, mmmx_base, [](RawInst& r) { put32(r, 48, sb(0, 0)); }},
      {"mem3d_valid(dst)", M, mmmx_base,
       [](RawInst& r) { put32(r, 48, ps(0, 16 * 1024 - 128)); }},  // past PSUM 16 KiB
      // ---- LDWEIGHTS (v5)
      {"has_ldweights_opcode", V, lw5_mx_base, [](RawInst& r) { r[0] = 0x02; },
       "is_valid_s3_lw"},
      {"s3_lw_valid_nc", M, lw5_mx_base, [](RawInst&) {}},
      {"s3_lw_reserved_zero", V, lw5_mx_base, [](RawInst& r) { r[45] = 1; }},
      {"s3_lw_reserved_zero", V, lw5_plain_base, [](RawInst& r) { r[30] = 1; }},
      {"s3_lw_mode_checks", V, lw5_mx_base, [](RawInst& r) { r[27] = 0; }},
      {"is_valid_mx_dtype", V, lw5_mx_base, [](RawInst& r) { r[32] = 0x05; }},
      {"valid_plain_mm_dtype", V, lw5_plain_base, [](RawInst& r) { r[32] = 0x01; }},
      {"valid_plain_mm_dtype", V, lw5_plain_base, [](RawInst& r) { r[32] = 0x10; }},
      {"valid_mx_perf_mode", V, lw5_mx_base, [](RawInst& r) { r[39] = 7; }},
      {"mx_perf_mode_only_in_mx_mode", V, lw5_plain_base, [](RawInst& r) { r[39] = 4; }},
      {"valid_row_grp_active_rows", V, lw5_mx_base, [](RawInst& r) { r[33] = 96; }},
      {"valid_col_grp_active_cols", V, lw5_mx_base, [](RawInst& r) { r[36] = 0; }},
      {"mem3d_valid(src)", V, lw5_mx_base, [](RawInst& r) { r[21] = 0; }},
      {"mem3d_valid(src)", V, lw5_plain_base, [](RawInst& r) { put32(r, 12, ps(0, 0)); }},
      {"check_m3d_active_channels(src)", V, lw5_mx_base,
       [](RawInst& r) {
         r[33] = 64;
         r[35] = 0x3;
         put32(r, 12, kMxV2 | sb(96, 0));
         put32(r, 16, sb(96, 0x10000));
       }},
      {"check_m3d_active_channels(src)", V, lw5_plain_base,
       [](RawInst& r) { put32(r, 12, sb(1, 0)); }},
      {"valid_mx_sbuf_quadrant", V, lw5_mx_base,
       [](RawInst& r) { put32(r, 16, sb(5, 0x10000)); }},
      // ---- TQUANT block word (seed 002)
      {"has_tquant_opcode", M, tquant_base, [](RawInst& r) { r[0] = 0x7b; },
       "is_valid_tquant_block"},
      {"tquant_valid_nc", S, tquant_base, [](RawInst&) {}},
      // ---- MATMUL (v5)
      {"has_matmul_opcode", V, mm5_mx_base, [](RawInst& r) { r[0] = 0x01; }, "is_valid_s3d3_mm"},
      {"s3d3_mm_valid_nc", M, mm5_mx_base, [](RawInst&) {}},
      {"s3d3_mm_reserved_zero", V, mm5_mx_base, [](RawInst& r) { r[62] = 1; }},
      {"s3d3_mm_mode_checks", V, mm5_mx_base, [](RawInst& r) { r[27] = 0x0E; }},
      {"is_valid_mx_dtype", V, mm5_mx_base, [](RawInst& r) { r[32] = 0x08; }},
      {"valid_plain_mm_dtype", V, mm5_plain_base, [](RawInst& r) { r[32] = 0x12; }},
      {"valid_mm_out_dtype", V, mm5_mx_base, [](RawInst& r) { r[33] = 0x05; }},
      {"valid_mm_active_rows", V, mm5_mx_base, [](RawInst& r) { r[34] = 48; }},
      {"valid_psum_accumulate_flags", V, mm5_mx_base, [](RawInst& r) { r[35] = 0x80; }},
      {"valid_mx_perf_mode", V, mm5_mx_base, [](RawInst& r) { r[40] = 0xFF; }},
      {"mx_perf_mode_only_in_mx_mode", V, mm5_plain_base, [](RawInst& r) { r[40] = 2; }},
      {"mem3d_valid(src)", V, mm5_mx_base,
       [](RawInst& r) { put32(r, 16, sb(0, 256 * 1024 - 64)); }},  // scales past capacity
      {"mem3d_valid(dst)", V, mm5_mx_base, [](RawInst& r) { put32(r, 44, sb(0, 0)); }},
      {"check_m3d_active_channels(src)", V, mm5_plain_base,
       [](RawInst& r) { put32(r, 12, sb(65, 0)); }},
      {"valid_mx_sbuf_quadrant", V, mm5_mx_base,
       [](RawInst& r) { put32(r, 16, sb(32, 0x10000)); }},
      // ---- DVE tensor_copy (SPEC §11)
      {"has_valid_neuron_header", S, tcopy_base, [](RawInst& r) { r[1] = 0; }},
      {"has_valid_neuron_events", M, tcopy_base, [](RawInst& r) { r[5] = 64; }},
      {"has_valid_neuron_header", M, tcopy_base, [](RawInst& r) { r[2] = 0x60; }},  // selector 6
      {"has_tensor_copy_opcode", M, tcopy_base, [](RawInst& r) { r[0] = 0x7b; },
       "is_valid_tensor_copy"},
      {"tensor_copy_reserved_zero", M, tcopy_base, [](RawInst& r) { r[30] = 1; }},
      {"tensor_copy_reserved_zero", C, tcopy_base, [](RawInst& r) { r[40] = 1; }},
      {"tensor_copy_reserved_zero", V, tcopy_base, [](RawInst& r) { r[62] = 1; }},
      {"check_active_channels", M, tcopy_base, [](RawInst& r) { r[34] = 0; }},
      {"valid_vector_dtype(src)", M, tcopy_base, [](RawInst& r) { r[32] = 0x11; }},
      {"valid_vector_dtype(src)", M, tcopy_base, [](RawInst& r) { r[32] = 0x0A; }},  // FP32R
      {"valid_vector_dtype(dst)", M, tcopy_base, [](RawInst& r) { r[33] = 0x13; }},  // E8M0
      {"valid_vector_dtype(dst)", M, tcopy_base, [](RawInst& r) { r[33] = 0x10; }},  // FP4
      // SPEC §18: the POOL (GpSimd) cannot reach PSUM; the v2 ACT runs no tensor_copy.
      {"mem3d_valid(src)", C, tcopy_base, [](RawInst& r) { r[2] = 0x10; }},
      {"valid_engine_for_opcode", S, tcopy_base, [](RawInst& r) { r[2] = 0x50; }},
      {"mem3d_valid(src)", M, tcopy_base, [](RawInst& r) { put32(r, 12, 0x04000000); }},
      {"mem3d_valid(src)", M, tcopy_base,
       [](RawInst& r) { put32(r, 12, kIndirect | ps(0, 0)); }},  // no indirect here
      {"mem3d_valid(src)", V, tcopy_base,
       [](RawInst& r) { put32(r, 12, kMxV2 | ps(0, 0)); }},  // no MX operand here
      {"mem3d_valid(src)", C, tcopy_base,
       [](RawInst& r) { put32(r, 12, ps(0, 16 * 1024 - 256)); }},  // past PSUM 16 KiB
      {"mem3d_valid(dst)", M, tcopy_base, [](RawInst& r) { put16(r, 48, 0); }},  // broadcast
      {"mem3d_valid(dst)", M, tcopy_base,
       [](RawInst& r) { put32(r, 44, sb(0, 256 * 1024 - 128)); }},
      {"mem3d_valid(dst)", S, tcopy_base,
       [](RawInst& r) { put32(r, 44, sb(0, 192 * 1024 - 128)); }},  // v2: 192 KiB
      {"check_m3d_active_channels(src)", M, tcopy_base,
       [](RawInst& r) { put32(r, 12, ps(100, 0)); }},
      {"check_m3d_active_channels(dst)", C, tcopy_base,
       [](RawInst& r) { put32(r, 44, sb(65, 0x1000)); }},
      {"tensor_copy_element_count_check", M, tcopy_base, [](RawInst& r) { put16(r, 54, 127); }},
      // ---- PE plain mode (SPEC §18)
      {"valid_plain_mm_dtype", C, lw5_plain_base, [](RawInst& r) { r[32] = 0x0E; }},  // OCP: v4 on
      {"valid_plain_row_grp_active_rows", S, lw5_plain_base, [](RawInst& r) { r[35] = 0x7; }},
      {"valid_plain_mm_active_rows", C, mm5_plain_base, [](RawInst& r) { r[34] = 0; }},
      {"valid_matmul_perf_mode", M, mm5_plain_base, [](RawInst& r) { r[37] = 1; }},  // FP16
      {"valid_matmul_perf_mode", S, mm5_plain_base,
       [](RawInst& r) {
         r[32] = 0x0F;
         r[37] = 1;  // double row from v3
       }},
      {"valid_matmul_transpose", M, mm5_plain_base, [](RawInst& r) { r[36] = 2; }},
      {"matmul_transpose_out_dtype", M, mm5_plain_base, [](RawInst& r) { r[36] = 1; }},
      {"plain_fields_only_in_plain_mode", V, lw5_mx_base, [](RawInst& r) { r[37] = 1; }},
      // ---- activation (SPEC §18)
      {"has_activation_opcode", M, act_base, [](RawInst& r) { r[0] = 0x21; },
       "is_valid_activation"},
      {"activation_reserved_zero", M, act_base, [](RawInst& r) { r[40] = 2; }},
      {"check_active_channels", S, act_base, [](RawInst& r) { r[30] = 0; }},
      {"activation_valid_func", C, act_base, [](RawInst& r) { r[31] = 17; }},
      {"valid_vector_dtype(src)", M, act_base, [](RawInst& r) { r[28] = 0x0A; }},
      {"valid_vector_dtype(dst)", V, act_base, [](RawInst& r) { r[29] = 0x13; }},
      {"mem3d_valid(src)", M, act_base, [](RawInst& r) { put32(r, 12, 0x04000000); }},
      {"mem3d_valid(dst)", M, act_base, [](RawInst& r) { put16(r, 48, 0); }},
      {"check_m3d_active_channels(src)", M, act_base,
       [](RawInst& r) { put32(r, 12, sb(100, 0)); }},
      {"check_m3d_active_channels(dst)", M, act_base,
       [](RawInst& r) { put32(r, 44, sb(100, 0x1000)); }},
      {"same_element_count(dst)", M, act_base, [](RawInst& r) { put16(r, 54, 63); }},
      {"vector_operand_valid(scale)", M, act_base, [](RawInst& r) { r[40] = 1; }},  // 1.0's bits
      {"valid_vector_dtype(bias)", M, act_base,
       [](RawInst& r) {
         r[41] = 0x13;
         put32(r, 36, sb(0, 0x2000));
       }},
      {"vector_operand_valid(bias)", M, act_base,
       [](RawInst& r) {
         r[41] = 0x08;
         put32(r, 36, sb(100, 0x2000));
       }},
      {"activation_valid_reduce", M, act_base, [](RawInst& r) { r[42] = 0x03; }},
      {"activation_reduce_op_on_nc", S, act_base, [](RawInst& r) { r[42] = 0x32; }},  // max: v3 on
      {"valid_vector_dtype(reduce_res)", M, act_base,
       [](RawInst& r) {
         r[43] = 0x0A;
         put32(r, 60, sb(0, 0x3000));
       }},
      {"vector_operand_valid(reduce_res)", M, act_base,
       [](RawInst& r) {
         r[43] = 0x08;
         put32(r, 60, ps(0, 16 * 1024 - 2));
       }},
      {"valid_engine_for_opcode", M, act_base, [](RawInst& r) { r[2] = 0x20; }},  // DVE: v5 only
      // ---- tensor_tensor
      {"has_tensor_tensor_opcode", M, tt_base, [](RawInst& r) { r[0] = 0x22; },
       "is_valid_tensor_tensor"},
      {"tensor_tensor_reserved_zero", M, tt_base, [](RawInst& r) { r[43] = 1; }},
      {"tensor_tensor_reserved_zero", C, tt_base, [](RawInst& r) { r[42] |= 0x20; }},
      {"tensor_tensor_valid_op", M, tt_base, [](RawInst& r) { r[42] = 13; }},  // power: POOL only
      {"tensor_tensor_valid_op", S, tt_base,
       [](RawInst& r) {
         r[2] = 0x10;  // the POOL
         r[42] = 7;
       }},
      {"valid_vector_dtype(src1)", M, tt_base, [](RawInst& r) { r[39] = 0x0A; }},
      {"tensor3d_valid(src1)", M, tt_base, [](RawInst& r) { put32(r, 28, 0x04000000); }},
      {"start_addr_active_channels(src1)", M, tt_base,
       [](RawInst& r) { put32(r, 28, sb(100, 0x400)); }},
      {"inputs_not_both_psum", V, tt_base,
       [](RawInst& r) {
         put32(r, 12, ps(0, 0));
         put32(r, 28, ps(0, 0x400));
       }},
      // ---- tensor_scalar
      {"has_tensor_scalar_opcode", M, ts_base, [](RawInst& r) { r[0] = 0x21; },
       "is_valid_tensor_scalar"},
      {"tensor_scalar_reserved_zero", M, ts_base, [](RawInst& r) { r[41] = 1; }},
      {"tensor_scalar_valid_ops", M, ts_base, [](RawInst& r) { r[31] = 0; }},
      {"tensor_scalar_valid_ops", C, ts_base,
       [](RawInst& r) {
         r[2] = 0x50;  // the ACT: (multiply, add), (multiply, -), (add, -)
         r[31] = 2;
       }},
      {"tensor_scalar_valid_ops", S, ts_base, [](RawInst& r) { r[2] = 0x10; }},  // POOL: rsqrt
      {"vector_operand_valid(operand0)", M, ts_base, [](RawInst& r) { r[31] |= 0x40; }},
      {"vector_operand_valid(operand1)", M, ts_base,
       [](RawInst& r) {
         r[40] |= 0x40;
         put32(r, 36, sb(120, 0));
       }},
      // ---- tensor_reduce
      {"has_tensor_reduce_opcode", M, reduce_base, [](RawInst& r) { r[0] = 0x21; },
       "is_valid_tensor_reduce"},
      {"tensor_reduce_reserved_zero", M, reduce_base, [](RawInst& r) { r[35] = 1; }},
      {"tensor_reduce_valid_op", M, reduce_base, [](RawInst& r) { r[31] = 2; }},
      {"tensor_reduce_valid_axes", M, reduce_base, [](RawInst& r) { r[32] = 4; }},
      {"tensor_reduce_valid_keepdims", M, reduce_base, [](RawInst& r) { r[33] = 2; }},
      {"tensor_reduce_element_count_check", M, reduce_base, [](RawInst& r) { r[32] = 2; }},
      {"reduce_src_fits_partition", M, reduce_base,
       [](RawInst& r) {  // 65535 x 4 of one broadcast FP32: 1 MiB a partition
         put_t3d(r, 12, sb(0, 0), 0, 0, 0, 65535, 4, 1);
       }},
      // ---- tensor_tensor_scan
      {"has_tensor_tensor_scan_opcode", M, scan_base, [](RawInst& r) { r[0] = 0x21; },
       "is_valid_tensor_tensor_scan"},
      {"tensor_tensor_scan_reserved_zero", M, scan_base, [](RawInst& r) { r[43] |= 0x20; }},
      {"tensor_tensor_scan_valid_ops", M, scan_base, [](RawInst& r) { r[43] = 17; }},
      {"vector_operand_valid(initial)", M, scan_base,
       [](RawInst& r) {
         r[42] |= 0x40;
         put32(r, 60, ps(100, 0));
       }},
      // ---- memset, iota
      {"has_memset_opcode", M, memset_base, [](RawInst& r) { r[0] = 0x21; }, "is_valid_memset"},
      {"memset_reserved_zero", M, memset_base, [](RawInst& r) { r[12] = 1; }},
      {"mem3d_valid(dst)", M, memset_base,
       [](RawInst& r) {
         r[2] = 0x10;  // the POOL cannot reach PSUM
         put32(r, 44, ps(0, 0));
       }},
      {"has_iota_opcode", M, iota_base, [](RawInst& r) { r[0] = 0x21; }, "is_valid_iota"},
      {"iota_reserved_zero", M, iota_base, [](RawInst& r) { r[41] = 1; }},
      {"iota_valid_pattern", M, iota_base, [](RawInst& r) { put16(r, 34, 0); }},
      {"iota_element_count_check", M, iota_base, [](RawInst& r) { put16(r, 32, 63); }},
      // ---- reciprocal, bn_stats, bn_aggr, nc_transpose
      {"has_reciprocal_opcode", M, recip_base, [](RawInst& r) { r[0] = 0x23; },
       "is_valid_reciprocal"},
      {"unary_reserved_zero", M, recip_base, [](RawInst& r) { r[30] = 1; }},
      {"has_bn_stats_opcode", M, bn_stats_base, [](RawInst& r) { r[0] = 0x23; },
       "is_valid_bn_stats"},
      {"bn_stats_element_count_check", M, bn_stats_base, [](RawInst& r) { put16(r, 54, 5); }},
      {"has_bn_aggr_opcode", M, bn_aggr_base, [](RawInst& r) { r[0] = 0x23; },
       "is_valid_bn_aggr"},
      {"bn_aggr_element_count_check", M, bn_aggr_base, [](RawInst& r) { put16(r, 22, 7); }},
      {"reduce_src_fits_partition", M, bn_aggr_base,
       [](RawInst& r) { put_t3d(r, 12, sb(0, 0), 0, 0, 0, 3, 65535, 1); }},
      {"has_nc_transpose_opcode", M, transpose_base, [](RawInst& r) { r[0] = 0x23; },
       "is_valid_nc_transpose"},
      {"nc_transpose_valid_shape", M, transpose_base, [](RawInst& r) { put16(r, 22, 33); }},
      {"nc_transpose_same_dtype", M, transpose_base, [](RawInst& r) { r[33] = 0x05; }},
      {"nc_transpose_element_count_check", M, transpose_base, [](RawInst& r) { put16(r, 54, 15); }},
      {"nc_transpose_dst_partitions", M, transpose_base,
       [](RawInst& r) { put32(r, 44, sb(120, 0)); }},
      // ---- DMA descriptor (SPEC §10)
      {"has_valid_neuron_header", M, dma_base, [](RawInst& r) { r[2] = 7; }},
      {"has_valid_neuron_events", S, dma_base, [](RawInst& r) { r[4] = 3; }},
      {"has_dma_copy_opcode", M, dma_base, [](RawInst& r) { r[0] = 0x7b; }, "is_valid_dma_copy"},
      {"has_nop_opcode", S, nop_base, [](RawInst& r) { r[0] = 0x23; }, "is_valid_nop"},
      {"nop_reserved_zero", C, nop_base, [](RawInst& r) { r[13] = 1; }},
      {"nop_reserved_zero", V, nop_base, [](RawInst& r) { r[63] = 0x80; }},
      {"nop_valid_queue", M, nop_base, [](RawInst& r) { r[12] = 21; }},  // act is 20
      {"dma_copy_reserved_zero", M, dma_base, [](RawInst& r) { r[21] = 1; }},
      {"dma_valid_queue", M, dma_base, [](RawInst& r) { r[15] = 16; }},
      // byte 20, update_core (SPEC §15): past the 32 cores, or without an update
      {"dma_valid_update_core", M, dma_base, [](RawInst& r) { r[20] = 33; }},
      {"dma_valid_update_core", S, dma_base, [](RawInst& r) { r[20] = 2; }},
      {"dma_copy_reserved_zero", C, dma_base, [](RawInst& r) { r[25] = 1; }},
      {"dma_copy_reserved_zero", V, dma_base, [](RawInst& r) { r[45] = 1; }},
      {"dma_copy_reserved_zero", S, dma_base, [](RawInst& r) { r[63] = 1; }},
      {"dma_valid_num_rows", M, dma_base, [](RawInst& r) { r[12] = 0; }},
      {"dma_valid_num_rows", M, dma_base,
       [](RawInst& r) {
         dma_to_hbm(r);
         r[12] = 129;
       }},
      {"dma_valid_row_bytes", M, dma_base, [](RawInst& r) { put32(r, 16, 0); }},
      {"dma_valid_endpoint_kind(src)", M, dma_base, [](RawInst& r) { r[44] = 2; }},
      {"dma_valid_endpoint_kind(dst)", V, dma_base, [](RawInst& r) { r[60] = 7; }},
      {"dma_sbuf_endpoint_address(dst)", M, dma_base,
       [](RawInst& r) { put64(r, 48, ps(0, 0x1000)); }},  // PSUM is not a DMA endpoint
      {"dma_sbuf_endpoint_address(dst)", M, dma_base,
       [](RawInst& r) { put64(r, 48, std::uint64_t{1} << 32); }},
      {"dma_sbuf_endpoint_address(dst)", C, dma_base,
       [](RawInst& r) { put64(r, 48, kAddrReg | sb(0, 0x1000)); }},  // immediate only
      {"dma_sbuf_endpoint_address(src)", M, dma_base,
       [](RawInst& r) {
         put64(r, 32, 0x06000000);  // the control region
         put32(r, 40, 0);
         r[44] = 1;
       }},
      {"dma_sbuf_endpoint_row_stride(dst)", M, dma_base, [](RawInst& r) { put32(r, 56, 1); }},
      {"dma_sbuf_endpoint_row_stride(src)", M, dma_base,
       [](RawInst& r) {
         put64(r, 32, sb(0, 0));
         r[44] = 1;  // stride 4096 stays
       }},
      {"dma_sbuf_rows_in_partitions(dst)", M, dma_base,
       [](RawInst& r) { put64(r, 48, sb(65, 0x1000)); }},
      {"dma_sbuf_rows_in_partitions(src)", S, dma_base,
       [](RawInst& r) {
         put64(r, 32, sb(100, 0));
         put32(r, 40, 0);
         r[44] = 1;
       }},
      {"dma_sbuf_row_in_partition(dst)", M, dma_base,
       [](RawInst& r) { put64(r, 48, sb(0, 0x3FC00)); }},  // 255 KiB + 2 KiB
      {"dma_sbuf_row_in_partition(dst)", C, dma_base,
       [](RawInst& r) { put64(r, 48, sb(0, 0x37C00)); }},  // v3: 224 KiB
      {"dma_sbuf_row_in_partition(src)", V, dma_base,
       [](RawInst& r) {
         put64(r, 32, sb(0, 0x3FC00));
         put32(r, 40, 0);
         r[44] = 1;
       }},
      {"dma_hbm_in_capacity(src)", M, dma_base,
       [](RawInst& r) { put64(r, 32, 18 * kGiB - 1000); }},
      {"dma_hbm_in_capacity(src)", C, dma_base,
       [](RawInst& r) { put64(r, 32, 12 * kGiB - 63 * 4096 - 2047); }},  // v3: 12 GiB
      {"dma_hbm_in_capacity(src)", S, dma_base, [](RawInst& r) { put64(r, 32, ~std::uint64_t{0}); }},
      {"dma_hbm_in_capacity(src)", M, dma_base,
       [](RawInst& r) { put32(r, 40, 0xFFFFFFFFu); }},  // 63 rows of 4 GiB
      {"dma_hbm_in_capacity(dst)", V, dma_base,
       [](RawInst& r) {
         dma_to_hbm(r);
         put64(r, 48, 18 * kGiB - 63 * 4096 - 2047);
       }},
      {"dma_hbm_dst_rows_disjoint", M, dma_base,
       [](RawInst& r) {
         dma_to_hbm(r);
         put32(r, 56, 1024);
       }},
      {"dma_valid_rmw_op", M, dma_base, [](RawInst& r) { r[13] = 2; }},
      {"dma_valid_rmw_dtype", M, dma_base,
       [](RawInst& r) {
         r[13] = 1;
         r[14] = 0x13;  // E8M0 is no add type
       }},
      {"dma_valid_rmw_dtype", C, dma_base, [](RawInst& r) { r[13] = 1; }},  // no dtype
      {"dma_rmw_dtype_only_with_op", M, dma_base, [](RawInst& r) { r[14] = 0x08; }},
      {"dma_rmw_row_bytes_multiple", M, dma_base,
       [](RawInst& r) {
         r[13] = 1;
         r[14] = 0x08;
         put32(r, 16, 2046);
       }},
  };
  return c;
}

TEST(IsaContracts, EachCaseFailsExactlyItsPredicate) {
  for (const Case& c : cases()) {
    RawInst raw = c.base();
    c.mutate(raw);
    CheckResult r;
    if (c.contract.empty()) {
      r = check_instruction(raw, c.arch);
    } else {
      auto opt = check_as(raw, c.arch, c.contract);
      ASSERT_TRUE(opt.has_value()) << c.contract;
      r = *opt;
    }
    EXPECT_EQ(r.failed, std::vector<std::string_view>{c.name})
        << "case " << c.name << " on " << arch_name(c.arch) << ": got " << join(r.failed);
  }
}

TEST(IsaContracts, EveryPredicateNameHasAFailAloneCase) {
  std::set<std::string> covered;
  for (const Case& c : cases()) covered.insert(c.name);
  std::set<std::string> names;
  for (auto n : all_predicate_names()) {
    EXPECT_TRUE(names.insert(std::string(n)).second) << "duplicate name " << n;
    EXPECT_TRUE(covered.count(std::string(n))) << "no fail-alone case for " << n;
  }
  for (const auto& n : covered) EXPECT_TRUE(names.count(n)) << n << " not in all_predicate_names";
}

TEST(IsaContracts, ValidRegisterFormsAndUnknownContract) {
  // ADDR_REG on the dequant src: address and partition unknown statically,
  // everything checkable still checked (SPEC §2, seed 000 §2).
  RawInst raw = dequant_base();
  put32(raw, 12, kAddrReg | 4);
  EXPECT_TRUE(check_instruction(raw, Arch::Cayman).valid());
  // ADDR_SHAPE_REG: the shape rides registers, num_elem may be zero.
  put32(raw, 12, 0xC0000004);
  put16(raw, 22, 0);
  EXPECT_TRUE(check_instruction(raw, Arch::Mariana).valid());
  // The same zero count with an immediate address is a pattern error and a
  // ratio error.
  put32(raw, 12, sb(0, 0x1000));
  EXPECT_EQ(check_instruction(raw, Arch::Cayman).failed,
            (std::vector<std::string_view>{"tensor3d_valid(src)",
                                           "s3d3_tens_dequant_element_count_check_t3d"}));
  // An MX scale address from a register: quadrant and extent re-checked at run time.
  raw = mm5_mx_base();
  put32(raw, 16, kAddrReg | 3);
  EXPECT_TRUE(check_instruction(raw, Arch::Maverick).valid());
  raw = quant_base();
  put32(raw, 48, kAddrReg | 1);
  EXPECT_TRUE(check_instruction(raw, Arch::Mariana).valid());
  EXPECT_FALSE(check_as(dequant_base(), Arch::Cayman, "is_valid_nothing").has_value());
  // tensor_copy with register operands; a DMA descriptor's HBM rows exactly
  // filling the capacity, on every generation.
  raw = tcopy_base();
  put32(raw, 12, kAddrReg | 7);
  put32(raw, 44, 0xC0000003);
  EXPECT_TRUE(check_instruction(raw, Arch::Mariana).valid());
  for (Arch a : kAllArchs) {
    const std::uint64_t cap = a == Arch::Sunda    ? 16 * kGiB
                              : a == Arch::Cayman ? 12 * kGiB
                                                  : 18 * kGiB;
    raw = dma_base();
    put64(raw, 32, cap - 63 * 4096 - 2048);
    EXPECT_TRUE(check_instruction(raw, a).valid()) << arch_name(a);
    put64(raw, 32, cap - 63 * 4096 - 2047);
    EXPECT_EQ(check_instruction(raw, a).failed,
              std::vector<std::string_view>{"dma_hbm_in_capacity(src)"})
        << arch_name(a);
  }
  for (auto c : all_contract_names()) {
    EXPECT_TRUE(check_as(dequant_base(), Arch::Mariana, c).has_value());
  }
}

TEST(IsaContracts, ReportsEveryFailureInContractOrder) {
  RawInst raw = dequant_base();
  raw[1] = 0;      // header
  raw[34] = 0;     // channels
  raw[32] = 0x08;  // in dtype
  raw[60] = 9;     // reserved2
  const CheckResult r = check_instruction(raw, Arch::Sunda);
  EXPECT_EQ(r.contract, "is_valid_tensor_dequantize");
  EXPECT_EQ(r.failed,
            (std::vector<std::string_view>{
                "has_valid_neuron_header", "has_valid_nc_tens_dequant", "check_active_channels",
                "s3d3_tens_dequant_reserved_zero", "has_valid_tens_dequant_in_dtype"}));
}

TEST(IsaContracts, DequantRatiosPerFormat) {
  // seed 000 §4.1 / SPEC §3: (fmt, grp, src words, dst words, valid).
  const struct {
    std::uint8_t fmt, grp;
    std::uint16_t src, dst;
    bool ok;
  } table[] = {
      {1, 0, 3, 6, true},  {2, 0, 3, 6, true},   {3, 0, 10, 20, true}, {1, 0, 3, 5, false},
      {4, 0, 3, 4, true},  {4, 0, 6, 8, true},   {4, 0, 4, 5, false},  {4, 0, 2, 3, false},
      {1, 8, 5, 8, true},  {3, 8, 10, 16, true}, {2, 8, 5, 9, false},  {1, 8, 4, 6, false},
      {4, 8, 5, 8, false}, {0, 0, 3, 6, false},
  };
  for (const auto& t : table) {
    RawInst raw = dequant_base();
    raw[35] = t.fmt;
    raw[36] = t.grp;
    put_t3d(raw, 12, sb(0, 0x1000), 1, 0, 0, t.src, 1, 1);
    put_t3d(raw, 44, sb(0, 0x2000), 1, 0, 0, t.dst, 1, 1);
    const auto f = check_instruction(raw, Arch::Cayman).failed;
    const bool count_ok =
        std::find(f.begin(), f.end(), "s3d3_tens_dequant_element_count_check_t3d") == f.end();
    EXPECT_EQ(count_ok, t.ok) << int(t.fmt) << "/" << int(t.grp) << " " << t.src << ":" << t.dst;
  }
}

// Random words: no crash, every reported name is a known predicate name.
TEST(IsaContracts, FuzzRandomWords) {
  std::set<std::string_view> known(all_predicate_names().begin(), all_predicate_names().end());
  std::mt19937_64 rng(0x7b5eedu);
  auto random_word = [&rng]() {
    RawInst r;
    for (auto& b : r) b = static_cast<std::uint8_t>(rng());
    return r;
  };
  std::size_t checks = 0, valid = 0;
  auto run = [&](const RawInst& raw) {
    for (Arch a : kAllArchs) {
      const CheckResult r = check_instruction(raw, a);
      ++checks;
      valid += r.valid();
      EXPECT_EQ(r.contract, contract_for_opcode(raw[0]));
      for (auto n : r.failed) ASSERT_TRUE(known.count(n)) << n;
    }
  };
  for (int k = 0; k < 200000; ++k) run(random_word());
  const std::uint8_t ops[] = {0x01, 0x02, 0x09, 0x0A, 0x7b, 0xe3};
  for (std::uint8_t op : ops) {
    for (int k = 0; k < 20000; ++k) {
      RawInst r = random_word();
      r[0] = op;
      if (k % 2) r[1] = 16;  // half with a valid header
      run(r);
    }
  }
  // Mutations of the valid bases reach deep into the contracts.
  for (const Base& b : bases()) {
    for (int k = 0; k < 20000; ++k) {
      RawInst r = b.make();
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f)
        r[1 + rng() % 63] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
      run(r);
    }
  }
  EXPECT_EQ(checks, (200000u + 6u * 20000u + bases().size() * 20000u) * 4u);
  EXPECT_GT(valid, 0u);  // some base mutations stay valid (e.g. debug_hint)
}

}  // namespace
}  // namespace tpb::isa
