// TensorDequantize word streams (SPEC §3) and MX block quantize (SPEC §4),
// checked against a test-side reference: literal code tables, std::ldexp for
// the E8M0 scale, and a nearest-value search over all 256 FP8 codes with ties
// to the even code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "models/numerics/dequant_stream.h"
#include "models/numerics/mx_quantize.h"
#include "sc_tests/unit/test_numerics_ref.h"

namespace {

using tpb::isa::DequantFmt;
using tpb::num::dequant_code;
using tpb::num::dequant_force_portable;
using tpb::num::dequant_ratio;
using tpb::num::dequant_words;
namespace ref = tpb::numref;

const DequantFmt k4Bit[] = {DequantFmt::E2M1ToE5M2, DequantFmt::Int4ToE5M2, DequantFmt::Nf4ToE4M3};

double ref_in(DequantFmt f, unsigned code) {
  switch (f) {
    case DequantFmt::E2M1ToE5M2:
      return ref::kFp4[code & 0xF];
    case DequantFmt::Int4ToE5M2:
      return ref::kInt4[code & 0xF];
    case DequantFmt::Nf4ToE4M3:
      return ref::kNf4[code & 0xF];
    default:
      return ref::fp6(ref::kFp6E2M3, code & 0x3F);
  }
}

const ref::Fp8Def& ref_out(DequantFmt f) {
  return (f == DequantFmt::E2M1ToE5M2 || f == DequantFmt::Int4ToE5M2) ? ref::kE5M2 : ref::kE4M3;
}

// Reference output byte of one code, optional E8M0 scale s.
std::uint8_t ref_code(DequantFmt f, unsigned code, bool has_scale = false, unsigned s = 127) {
  if (has_scale && s == 0xFF) return 0x7F;
  double v = ref_in(f, code);
  if (has_scale) v = std::ldexp(v, static_cast<int>(s) - 127);
  return static_cast<std::uint8_t>(ref::nearest_fp8(ref_out(f), v, 0x7F));
}

std::uint8_t byte_of(const std::vector<std::uint32_t>& w, std::size_t i) {
  return static_cast<std::uint8_t>(w[i / 4] >> (8 * (i % 4)));
}

TEST(DequantRatio, PerFormatAndGroup) {
  for (DequantFmt f : k4Bit) {
    EXPECT_EQ(dequant_ratio(f, 0).src_words, 1u);
    EXPECT_EQ(dequant_ratio(f, 0).dst_words, 2u);
    EXPECT_EQ(dequant_ratio(f, 8).src_words, 5u);
    EXPECT_EQ(dequant_ratio(f, 8).dst_words, 8u);
    EXPECT_EQ(dequant_ratio(f, 4).src_words, 0u);
  }
  EXPECT_EQ(dequant_ratio(DequantFmt::E2M3ToE4M3, 0).src_words, 3u);
  EXPECT_EQ(dequant_ratio(DequantFmt::E2M3ToE4M3, 0).dst_words, 4u);
  EXPECT_EQ(dequant_ratio(DequantFmt::E2M3ToE4M3, 8).src_words, 0u);  // FP6 is never MX
  EXPECT_EQ(dequant_ratio(DequantFmt::Invalid, 0).dst_words, 0u);
  EXPECT_EQ(dequant_ratio(static_cast<DequantFmt>(9), 0).dst_words, 0u);
}

TEST(DequantStream, InvalidPairIsAnErrorNotUb) {
  std::uint32_t src[5] = {}, dst[8] = {};
  EXPECT_THROW(dequant_words(DequantFmt::E2M3ToE4M3, 8, src, dst, 1), std::invalid_argument);
  EXPECT_THROW(dequant_words(DequantFmt::Invalid, 0, src, dst, 1), std::invalid_argument);
  EXPECT_THROW(dequant_code(DequantFmt::Invalid, 0, false, 0), std::invalid_argument);
}

TEST(DequantStream, HandWorkedValues) {
  // FP4 6.0 -> E5M2 0x46; FP4 -0.5 -> E5M2 -0.5 = 0xB8; INT4 -8 -> 0xC8; NF4 1.0 -> E4M3 0x38.
  EXPECT_EQ(dequant_code(DequantFmt::E2M1ToE5M2, 0x7, false, 0), 0x46);
  EXPECT_EQ(dequant_code(DequantFmt::E2M1ToE5M2, 0x9, false, 0), 0xB8);
  EXPECT_EQ(dequant_code(DequantFmt::E2M1ToE5M2, 0x8, false, 0), 0x80);  // -0 stays -0
  EXPECT_EQ(dequant_code(DequantFmt::Int4ToE5M2, 0x8, false, 0), 0xC8);
  EXPECT_EQ(dequant_code(DequantFmt::Int4ToE5M2, 0x7, false, 0), 0x47);  // 7 = 1.75*4
  EXPECT_EQ(dequant_code(DequantFmt::Nf4ToE4M3, 0xF, false, 0), 0x38);
  EXPECT_EQ(dequant_code(DequantFmt::Nf4ToE4M3, 0x7, false, 0), 0x00);
  // FP6 subnormal 0b000001 is 0.125 = 2^-3 -> E4M3 0x20 (NOT the seed's 2^-1*1.125).
  EXPECT_EQ(dequant_code(DequantFmt::E2M3ToE4M3, 0x01, false, 0), 0x20);
  EXPECT_EQ(dequant_code(DequantFmt::E2M3ToE4M3, 0x07, false, 0), 0x36);  // 0.875 = 1.75/2
  EXPECT_EQ(dequant_code(DequantFmt::E2M3ToE4M3, 0x1F, false, 0), 0x4F);  // 7.5
  // MX: FP4 6.0 x 2^14 = 98304 saturates to 57344; 0.5 x 2^-20 underflows to 0.
  EXPECT_EQ(dequant_code(DequantFmt::E2M1ToE5M2, 0x7, true, 127 + 14), 0x7B);
  EXPECT_EQ(dequant_code(DequantFmt::E2M1ToE5M2, 0x1, true, 127 - 20), 0x00);
  EXPECT_EQ(dequant_code(DequantFmt::E2M1ToE5M2, 0x9, true, 127 - 20), 0x80);
  EXPECT_EQ(dequant_code(DequantFmt::Int4ToE5M2, 0x1, true, 0xFF), 0x7F);
  // E5M2 subnormal unit is 2^-16: INT4 3 x 2^-16 is code 3; 3 x 2^-17 = 1.5 units
  // ties to 2, 1 x 2^-17 = 0.5 unit ties to 0.
  EXPECT_EQ(dequant_code(DequantFmt::Int4ToE5M2, 0x3, true, 127 - 16), 0x03);
  EXPECT_EQ(dequant_code(DequantFmt::Int4ToE5M2, 0x3, true, 127 - 17), 0x02);
  EXPECT_EQ(dequant_code(DequantFmt::Int4ToE5M2, 0x1, true, 127 - 17), 0x00);
}

TEST(DequantStream, EveryCodeAndScaleMatchesTheReference) {
  for (DequantFmt f : k4Bit) {
    for (unsigned c = 0; c < 16; ++c) {
      ASSERT_EQ(dequant_code(f, c, false, 0), ref_code(f, c)) << int(f) << " " << c;
      for (unsigned s = 0; s < 256; ++s)
        ASSERT_EQ(dequant_code(f, c, true, s), ref_code(f, c, true, s))
            << int(f) << " code " << c << " scale " << s;
    }
  }
  for (unsigned c = 0; c < 64; ++c)
    ASSERT_EQ(dequant_code(DequantFmt::E2M3ToE4M3, c, false, 0),
              ref_code(DequantFmt::E2M3ToE4M3, c))
        << c;
}

TEST(DequantStream, Group0FourBitEveryCodeInEveryNibble) {
  for (DequantFmt f : k4Bit) {
    SCOPED_TRACE(int(f));
    // 16 words: word i holds code (i + k) & 0xF in nibble k -> every code in every position.
    std::vector<std::uint32_t> src(16), dst(32 + 1, 0xDEADBEEFu);
    for (unsigned i = 0; i < 16; ++i)
      for (unsigned k = 0; k < 8; ++k) src[i] |= ((i + k) & 0xFu) << (4 * k);
    dequant_words(f, 0, src.data(), dst.data(), src.size());
    EXPECT_EQ(dst[32], 0xDEADBEEFu);  // nothing past the last step
    for (unsigned i = 0; i < 16; ++i)
      for (unsigned k = 0; k < 8; ++k)
        EXPECT_EQ(byte_of(dst, 8 * i + k), ref_code(f, (i + k) & 0xF)) << i << " " << k;
  }
}

// Both the SIMD path and the portable table path, with a count that leaves a
// tail of 3 words after the 4-word SIMD steps.
TEST(DequantStream, Group0FourBitRandomWordsBothPaths) {
  std::mt19937 rng(11);
  for (bool portable : {false, true}) {
    SCOPED_TRACE(portable ? "portable" : "simd");
    dequant_force_portable(portable);
    for (DequantFmt f : k4Bit) {
      std::vector<std::uint32_t> src(1003), dst(2 * 1003 + 1, 0xDEADBEEFu);
      for (auto& w : src) w = rng();
      dequant_words(f, 0, src.data(), dst.data(), src.size());
      ASSERT_EQ(dst.back(), 0xDEADBEEFu);
      for (std::size_t i = 0; i < src.size(); ++i)
        for (unsigned k = 0; k < 8; ++k)
          ASSERT_EQ(byte_of(dst, 8 * i + k), ref_code(f, (src[i] >> (4 * k)) & 0xF));
    }
  }
  dequant_force_portable(false);
}

// Packs 6-bit codes into a little-endian bit string one bit at a time (a
// different algorithm from the word shifts under test).
std::vector<std::uint32_t> pack_fp6(const std::vector<unsigned>& codes) {
  std::vector<std::uint32_t> words(codes.size() * 6 / 32, 0);
  for (std::size_t k = 0; k < codes.size(); ++k)
    for (unsigned b = 0; b < 6; ++b) {
      const std::size_t bit = 6 * k + b;
      if ((codes[k] >> b) & 1u) words[bit / 32] |= 1u << (bit % 32);
    }
  return words;
}

TEST(DequantStream, Fp6PackingAcrossWordBoundaries) {
  // Code 5 straddles bits 30..35 (word 0/1) and code 10 bits 60..65 (word 1/2).
  std::vector<unsigned> codes(16, 0);
  codes[5] = 0x2D;   // -1.625 -> bits 30,31 in word 0, 32..35 in word 1
  codes[10] = 0x17;  // 3.75
  const auto src = pack_fp6(codes);
  ASSERT_EQ(src.size(), 3u);
  EXPECT_EQ(src[0], 0x40000000u);  // 0x2D = 0b101101: low bits 01 at 30..31
  EXPECT_EQ(src[1], 0x7000000Bu);  // 0x2D high bits 1011; 0x17 low bits 0111 at 28..31
  EXPECT_EQ(src[2], 0x00000001u);  // 0x17 high bits 01
  std::uint32_t dst[4];
  dequant_words(DequantFmt::E2M3ToE4M3, 0, src.data(), dst, 1);
  EXPECT_EQ(dst[0], 0u);
  EXPECT_EQ(dst[1], 0x0000BD00u);  // byte 5: -1.625 = E4M3 0xBD
  EXPECT_EQ(dst[2], 0x00470000u);  // byte 10: 3.75 = 1.875 x 2 = E4M3 0x47
  EXPECT_EQ(dst[3], 0u);
}

TEST(DequantStream, Fp6EveryCodeInEveryPosition) {
  // 64 steps x 16 positions: position k of step i holds code (i*5 + k*7) & 63,
  // so every code lands in every one of the 16 bit positions.
  std::vector<unsigned> codes;
  for (unsigned i = 0; i < 64; ++i)
    for (unsigned k = 0; k < 16; ++k) codes.push_back((i * 5 + k * 7) & 63);
  const auto src = pack_fp6(codes);
  std::vector<std::uint32_t> dst(64 * 4 + 1, 0xCAFEF00Du);
  dequant_words(DequantFmt::E2M3ToE4M3, 0, src.data(), dst.data(), 64);
  EXPECT_EQ(dst[64 * 4], 0xCAFEF00Du);
  for (std::size_t n = 0; n < codes.size(); ++n)
    ASSERT_EQ(byte_of(dst, n), ref_code(DequantFmt::E2M3ToE4M3, codes[n])) << n;
}

TEST(DequantStream, MxChunksWithSeveralScalesBothPaths) {
  const unsigned scales[] = {0,   1,   100, 110, 120, 126,  127, 128,
                             135, 140, 141, 150, 200, 0xFE, 0xFF};
  std::mt19937 rng(12);
  for (int run = 0; run < 6; ++run) {
    const DequantFmt f = k4Bit[run % 3];
    dequant_force_portable(run >= 3);
    SCOPED_TRACE(run >= 3 ? "portable" : "simd");
    SCOPED_TRACE(int(f));
    std::vector<std::uint32_t> src, dst;
    std::vector<unsigned> chunk_scales;
    const unsigned nchunks = 65;  // odd: the two-chunk SIMD steps leave a one-chunk tail
    for (unsigned ch = 0; ch < nchunks; ++ch) {
      std::uint32_t sw = 0;
      for (unsigned g = 0; g < 4; ++g) {
        const unsigned s = scales[(ch * 4 + g) % (sizeof scales / sizeof scales[0])];
        chunk_scales.push_back(s);
        sw |= s << (8 * g);
      }
      src.push_back(sw);
      for (unsigned g = 0; g < 4; ++g)
        src.push_back(ch < 16 ? 0x76543210u + 0x88888888u * (g & 1)
                              : static_cast<std::uint32_t>(rng()));
    }
    dst.assign(nchunks * 8 + 1, 0x12345678u);
    dequant_words(f, 8, src.data(), dst.data(), nchunks);
    EXPECT_EQ(dst[nchunks * 8], 0x12345678u);
    for (unsigned ch = 0; ch < nchunks; ++ch)
      for (unsigned n = 0; n < 32; ++n) {
        const unsigned g = n / 8;  // scale byte g covers codes 8g..8g+7
        const unsigned code = (src[ch * 5 + 1 + n / 8] >> (4 * (n % 8))) & 0xF;
        ASSERT_EQ(byte_of(dst, ch * 32 + n), ref_code(f, code, true, chunk_scales[ch * 4 + g]))
            << "chunk " << ch << " code index " << n;
      }
  }
  dequant_force_portable(false);
}

TEST(DequantStream, MxScaleExtremes) {
  // One E2M1 chunk, scales (byte 0..3) 0xFF NaN, 0xFE = 2^127 (saturates),
  // 0 = 2^-127 (underflows to signed zero), 0x7F = 1 (identity).
  const std::uint32_t src[5] = {0x7F00FEFFu, 0x76543210u, 0x76543210u, 0xFEDCBA98u, 0x76543210u};
  std::uint32_t dst[8];
  dequant_words(DequantFmt::E2M1ToE5M2, 8, src, dst, 1);
  EXPECT_EQ(dst[0], 0x7F7F7F7Fu);
  EXPECT_EQ(dst[1], 0x7F7F7F7Fu);
  EXPECT_EQ(dst[2], 0x7B7B7B00u);  // +0 stays 0; 0.5 .. 6 x 2^127 saturate to 57344
  EXPECT_EQ(dst[3], 0x7B7B7B7Bu);
  EXPECT_EQ(dst[4], 0x80808080u);  // -0 .. -6 x 2^-127 -> -0
  EXPECT_EQ(dst[5], 0x80808080u);
  EXPECT_EQ(dst[6], 0x3E3C3800u);  // 0, 0.5, 1, 1.5 in E5M2
  EXPECT_EQ(dst[7], 0x46444240u);  // 2, 3, 4, 6
}

// ---------------------------------------------------------------------------
// mx_quantize_block

// Biased FP32 exponent by a different route (ilogb on the value).
int ref_biased_exp(float x) {
  if (x == 0 || std::fpclassify(x) == FP_SUBNORMAL) return 0;
  return std::ilogb(x) + 127;
}

void ref_quantize(const float in[32], tpb::num::MxOut out, tpb::num::MxEmax emax,
                  std::uint32_t words[8], unsigned& scale) {
  const int off = out == tpb::num::MxOut::E4M3 ? (emax == tpb::num::MxEmax::Ocp ? 8 : 7)
                                               : (emax == tpb::num::MxEmax::Ocp ? 15 : 14);
  bool special = false;
  int mx = 0;
  for (int i = 0; i < 32; ++i) {
    special = special || !std::isfinite(in[i]);
    if (std::isfinite(in[i])) mx = std::max(mx, ref_biased_exp(in[i]));
  }
  if (special) {
    scale = 0xFF;
    for (int r = 0; r < 8; ++r) words[r] = 0x7F7F7F7Fu;
    return;
  }
  const int s = std::min(254, std::max(0, mx - off));
  scale = static_cast<unsigned>(s);
  const ref::Fp8Def& d = out == tpb::num::MxOut::E4M3 ? ref::kE4M3 : ref::kE5M2;
  for (int r = 0; r < 8; ++r) {
    words[r] = 0;
    for (int j = 0; j < 4; ++j) {
      const double q = static_cast<double>(in[4 * r + j]) / std::pow(2.0, s - 127);
      words[r] |= ref::nearest_fp8(d, q, 0x7F) << (8 * j);
    }
  }
}

void check_block(const float in[32], tpb::num::MxOut out, tpb::num::MxEmax emax) {
  std::uint32_t bits[32], got[8], want[8];
  for (int i = 0; i < 32; ++i) std::memcpy(&bits[i], &in[i], 4);
  unsigned want_s;
  ref_quantize(in, out, emax, want, want_s);
  const unsigned s = tpb::num::mx_quantize_block(bits, out, emax, got);
  ASSERT_EQ(s, want_s);
  for (int r = 0; r < 8; ++r) ASSERT_EQ(got[r], want[r]) << "row " << r;
}

const tpb::num::MxOut kOuts[] = {tpb::num::MxOut::E4M3, tpb::num::MxOut::E5M2};
const tpb::num::MxEmax kEmaxes[] = {tpb::num::MxEmax::Ocp, tpb::num::MxEmax::NeuronAlt};

TEST(MxQuantize, HandWorkedBlock) {
  // Max |x| = 3.0 (biased exponent 128): ocp E4M3 s = 120, x / 2^-7 = x * 128.
  float in[32] = {};
  in[0] = 1.0f;   // 128 = 2^7 -> E4M3 0x70
  in[1] = -3.0f;  // -384 = -1.5 x 2^8 -> 0xFC
  in[5] = 0.01f;  // row 1, element 1: 1.28 -> 1.25 = 0x3A
  in[31] = 3.5f;  // exponent 128 too: 448 -> 0x7E
  std::uint32_t bits[32], w[8];
  for (int i = 0; i < 32; ++i) std::memcpy(&bits[i], &in[i], 4);
  EXPECT_EQ(tpb::num::mx_quantize_block(bits, tpb::num::MxOut::E4M3, tpb::num::MxEmax::Ocp, w),
            120);
  EXPECT_EQ(w[0], 0x0000FC70u);  // element 4j in byte 0
  EXPECT_EQ(w[1], 0x00003A00u);
  EXPECT_EQ(w[7], 0x7E000000u);
  // neuron-alt: s = 121, x * 64; 3.5 * 64 = 224 = 0x76.
  EXPECT_EQ(
      tpb::num::mx_quantize_block(bits, tpb::num::MxOut::E4M3, tpb::num::MxEmax::NeuronAlt, w),
      121);
  EXPECT_EQ(w[7], 0x76000000u);
  // E5M2 ocp: s = 113, x * 2^14; 3.5 * 16384 = 57344 = 0x7B.
  EXPECT_EQ(tpb::num::mx_quantize_block(bits, tpb::num::MxOut::E5M2, tpb::num::MxEmax::Ocp, w),
            113);
  EXPECT_EQ(w[7], 0x7B000000u);
}

TEST(MxQuantize, SaturatesTheTopOfTheBinade) {
  // 1.99 * 2^E with emax 8 -> 509 > 448: saturates.
  float in[32];
  for (int i = 0; i < 32; ++i) in[i] = (i % 2 ? -1.99f : 1.99f) * 1024.0f;
  std::uint32_t bits[32], w[8];
  for (int i = 0; i < 32; ++i) std::memcpy(&bits[i], &in[i], 4);
  EXPECT_EQ(tpb::num::mx_quantize_block(bits, tpb::num::MxOut::E4M3, tpb::num::MxEmax::Ocp, w),
            137 - 8);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(w[r], 0xFE7EFE7Eu);
  EXPECT_EQ(tpb::num::mx_quantize_block(bits, tpb::num::MxOut::E5M2, tpb::num::MxEmax::Ocp, w),
            137 - 15);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(w[r], 0xFB7BFB7Bu);
  for (auto o : kOuts)
    for (auto e : kEmaxes) check_block(in, o, e);
}

TEST(MxQuantize, NanOrInfBlocks) {
  for (float special :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
        -std::numeric_limits<float>::infinity()}) {
    float in[32];
    for (int i = 0; i < 32; ++i) in[i] = 0.25f * i;
    in[17] = special;
    std::uint32_t bits[32], w[8];
    for (int i = 0; i < 32; ++i) std::memcpy(&bits[i], &in[i], 4);
    for (auto o : kOuts)
      for (auto e : kEmaxes) {
        EXPECT_EQ(tpb::num::mx_quantize_block(bits, o, e, w), 0xFF);
        for (int r = 0; r < 8; ++r) EXPECT_EQ(w[r], 0x7F7F7F7Fu);
      }
  }
}

TEST(MxQuantize, ScaleClampsAtZeroForTinyBlocks) {
  float in[32];
  for (int i = 0; i < 32; ++i) in[i] = std::ldexp(static_cast<float>(i - 16), -140);  // subnormal
  std::uint32_t bits[32], w[8];
  for (int i = 0; i < 32; ++i) std::memcpy(&bits[i], &in[i], 4);
  EXPECT_EQ(tpb::num::mx_quantize_block(bits, tpb::num::MxOut::E4M3, tpb::num::MxEmax::Ocp, w), 0);
  for (auto o : kOuts)
    for (auto e : kEmaxes) check_block(in, o, e);
  float zeros[32] = {};
  zeros[3] = -0.0f;
  for (auto o : kOuts)
    for (auto e : kEmaxes) check_block(zeros, o, e);
}

TEST(MxQuantize, RandomBlocksMatchTheReference) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> mant(-2.0f, 2.0f);
  std::uniform_int_distribution<int> ex(-140, 127), spread(0, 30);
  for (int b = 0; b < 1000; ++b) {
    float in[32];
    const int base = ex(rng);
    for (int i = 0; i < 32; ++i) {
      const int e = std::max(-149, std::min(126, base - spread(rng)));
      in[i] = std::ldexp(mant(rng), e);
    }
    for (auto o : kOuts)
      for (auto e : kEmaxes) check_block(in, o, e);
  }
}

}  // namespace
