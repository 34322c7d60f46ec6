// libtpbsim_dpi's functions (platform/dpi/tpbsim_dpi.h), called through the
// shared library's C ABI as a testbench's DPI-C calls reach them, against
// references written independently of the model: the literal code tables
// and FP8 nearest-code search of sc_tests/unit/test_numerics_ref.h, the
// TensorDequantize stream reference of sc_tests/sc/test_platform_ref.h, the
// QuantizeMX block reference of sc_tests/sc/test_dve_quantize_mx_ref.h, an
// exact rational TQUANT oracle (Boost.Multiprecision), and predicate names
// written out from the seeds. Bad arguments: a status and a message naming
// what is wrong, never an abort.
#include <gtest/gtest.h>

// GCC reports a false -Wmaybe-uninitialized inside Boost.Multiprecision.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "platform/dpi/tpbsim_dpi.h"
#include "sc_tests/sc/test_dve_quantize_mx_ref.h"
#include "sc_tests/sc/test_platform_ref.h"
#include "sc_tests/unit/test_numerics_ref.h"

namespace {

using namespace tpb;

std::uint32_t f32_bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
float f32_of(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
std::string err() { return tpb_dpi_last_error(); }

// ---- formats ---------------------------------------------------------------

struct FmtCase {
  const char* name;
  int id;
  unsigned bits;
};
const FmtCase kSmall[] = {{"e4m3", 3, 8},     {"e5m2", 4, 8},     {"e3m4", 5, 8},    {"e2m5", 6, 8},
                          {"fp6_e2m3", 7, 6}, {"fp6_e3m2", 8, 6}, {"fp4_e2m1", 9, 4}};

// The format's value of a code, from the test-side tables (NaN for NaN codes).
double ref_value(int id, unsigned code) {
  switch (id) {
    case 3:
      return numref::fp8(numref::kE4M3, code);
    case 4:
      return numref::fp8(numref::kE5M2, code);
    case 5:
      return numref::fp8(numref::kE3M4, code);
    case 6:
      return numref::fp8(numref::kE2M5, code);
    case 7:
      return numref::fp6(numref::kFp6E2M3, code);
    case 8:
      return numref::fp6(numref::kFp6E3M2, code);
    default:
      return numref::kFp4[code];
  }
}

// Nearest code of the format to v (ties to the even code), saturating.
unsigned ref_nearest(int id, double v) {
  if (id >= 3 && id <= 6) {
    const numref::Fp8Def* d[] = {&numref::kE4M3, &numref::kE5M2, &numref::kE3M4, &numref::kE2M5};
    return numref::nearest_fp8(*d[id - 3], v, 0x7F);
  }
  const unsigned n = id == 9 ? 16 : 64, half = n / 2;
  const unsigned sign = std::signbit(v) ? half : 0;
  unsigned best = sign;
  for (unsigned c = sign; c < sign + half; ++c) {
    const double dc = std::fabs(v - ref_value(id, c)), db = std::fabs(v - ref_value(id, best));
    if (dc < db || (dc == db && (c & 1) == 0 && (best & 1) == 1)) best = c;
  }
  return best;
}

TEST(DpiFormats, NamesGiveThePackageIds) {
  const char* names[] = {"fp32",     "bf16",     "fp16", "e4m3", "e5m2", "e3m4", "e2m5", "fp6_e2m3",
                         "fp6_e3m2", "fp4_e2m1", "int4", "nf4",  "e8m0", "s8",   "u8"};
  for (int i = 0; i < 15; ++i) EXPECT_EQ(tpb_dpi_format(names[i]), i) << names[i];
  EXPECT_EQ(tpb_dpi_format("fp8"), TPB_DPI_EARG);
  EXPECT_NE(err().find("'fp8' is not a format"), std::string::npos) << err();
  EXPECT_EQ(tpb_dpi_format(nullptr), TPB_DPI_EARG);
}

TEST(DpiFormats, EveryCodeOfEverySmallFormatToFp32IsItsTableValue) {
  for (const FmtCase& f : kSmall)
    for (unsigned c = 0; c < (1u << f.bits); ++c) {
      unsigned bits = 0;
      ASSERT_EQ(tpb_dpi_to_fp32(f.id, c, &bits), TPB_DPI_OK) << err();
      const double want = ref_value(f.id, c);
      if (std::isnan(want)) {
        EXPECT_EQ(bits, 0x7FC00000u) << f.name << " code " << c;
        continue;
      }
      EXPECT_EQ(static_cast<double>(f32_of(bits)), want) << f.name << " code " << c;
      EXPECT_EQ(std::signbit(f32_of(bits)), std::signbit(want)) << f.name << " code " << c;
      // And back: every non-NaN code is its own nearest code.
      unsigned back = 0;
      ASSERT_EQ(tpb_dpi_from_fp32(f.id, bits, 1, &back), TPB_DPI_OK);
      EXPECT_EQ(back, c) << f.name << " code " << c;
    }
}

TEST(DpiFormats, RandomFp32ToEverySmallFormatIsTheNearestCodeTiesToEven) {
  std::mt19937 rng(11);
  for (const FmtCase& f : kSmall) {
    const double maxv = std::ldexp(1.0, f.bits == 8 ? 17 : 6);
    for (int i = 0; i < 3000; ++i) {
      // Uniform in log scale over the format's range and past it, both signs;
      // every eighth value an exact midpoint between two codes.
      double v = std::ldexp(1.0 + (rng() % 4096) / 4096.0, int(rng() % 40) - 24);
      if (i % 8 == 0) {
        const unsigned c = rng() % ((1u << f.bits) / 2 - 1);
        const double a = ref_value(f.id, c), b = ref_value(f.id, c + 1);
        if (!std::isnan(a) && !std::isnan(b) && !std::isinf(b)) v = (a + b) / 2;
      }
      if (rng() & 1) v = -v;
      const float x = static_cast<float>(std::fmin(v, maxv));
      if (static_cast<double>(x) != std::fmin(v, maxv)) continue;  // keep the value exact
      unsigned code = 0;
      ASSERT_EQ(tpb_dpi_from_fp32(f.id, f32_bits(x), 1, &code), TPB_DPI_OK);
      EXPECT_EQ(code, ref_nearest(f.id, x)) << f.name << " " << x;
    }
  }
}

TEST(DpiFormats, OverflowSaturatesOrGoesToInfinityOrNaN) {
  unsigned c = 0;
  ASSERT_EQ(tpb_dpi_from_fp32(3, f32_bits(1e6f), 1, &c), TPB_DPI_OK);
  EXPECT_EQ(c, 0x7Eu);  // E4M3 448
  ASSERT_EQ(tpb_dpi_from_fp32(4, f32_bits(-1e6f), 1, &c), TPB_DPI_OK);
  EXPECT_EQ(c, 0xFBu);  // E5M2 -57344
  ASSERT_EQ(tpb_dpi_from_fp32(4, f32_bits(1e6f), 0, &c), TPB_DPI_OK);
  EXPECT_EQ(c, 0x7Cu);  // E5M2 +Inf
  ASSERT_EQ(tpb_dpi_from_fp32(3, f32_bits(1e6f), 0, &c), TPB_DPI_OK);
  EXPECT_EQ(c & 0x7F, 0x7Fu);  // E4M3 has no Inf: NaN
  ASSERT_EQ(tpb_dpi_from_fp32(3, 0x7FC00000u, 1, &c), TPB_DPI_OK);
  EXPECT_EQ(c & 0x7F, 0x7Fu);
  ASSERT_EQ(tpb_dpi_from_fp32(9, f32_bits(100.0f), 1, &c), TPB_DPI_OK);
  EXPECT_EQ(c, 0x7u);  // FP4 6.0
  // The wide formats: FP32 is the identity, BF16 its exact top half.
  ASSERT_EQ(tpb_dpi_from_fp32(0, 0x7F812345u, 1, &c), TPB_DPI_OK);
  EXPECT_EQ(c, 0x7F812345u);
  ASSERT_EQ(tpb_dpi_to_fp32(1, 0xFF81u, &c), TPB_DPI_OK);
  EXPECT_EQ(c, 0xFF810000u);
  ASSERT_EQ(tpb_dpi_to_fp32(12, 0x00u, &c), TPB_DPI_OK);
  EXPECT_EQ(static_cast<double>(f32_of(c)), std::ldexp(1.0, -127));  // E8M0 0 = 2^-127
}

TEST(DpiFormats, BadArgumentsAreStatusesWithMessages) {
  unsigned c = 0;
  EXPECT_EQ(tpb_dpi_to_fp32(16, 0, &c), TPB_DPI_EARG);  // e4m3_legacy is 15, the last
  EXPECT_NE(err().find("format id 16"), std::string::npos) << err();
  EXPECT_EQ(tpb_dpi_to_fp32(-1, 0, &c), TPB_DPI_EARG);
  EXPECT_EQ(tpb_dpi_to_fp32(9, 0x10, &c), TPB_DPI_EARG);
  EXPECT_NE(err().find("code 0x10 does not fit fp4_e2m1 (4 bits)"), std::string::npos) << err();
  EXPECT_EQ(tpb_dpi_from_fp32(3, 0, 1, nullptr), TPB_DPI_EARG);
  // A good call clears the message.
  EXPECT_EQ(tpb_dpi_to_fp32(3, 0x38, &c), TPB_DPI_OK);
  EXPECT_EQ(err(), "");
}

// ---- TensorDequantize --------------------------------------------------------

TEST(DpiDequant, EveryFormatAndGroupOnRandomWordsIsTheReference) {
  std::mt19937 rng(5);
  const struct {
    int fmt, group;
  } cases[] = {{1, 0}, {2, 0}, {3, 0}, {4, 0}, {1, 8}, {2, 8}, {3, 8}};
  for (const auto& k : cases) {
    const unsigned in_n = k.group == 8 ? 5 : k.fmt == 4 ? 3 : 1;
    for (int i = 0; i < 400; ++i) {
      std::vector<std::uint32_t> src(in_n);
      for (auto& w : src) w = rng();
      if (k.group == 8) {
        // Scales near 2^0, deep (subnormal results), huge (saturating), and 0xFF.
        std::uint32_t s = 0;
        for (int g = 0; g < 4; ++g) {
          const unsigned pick = rng() % 8;
          const unsigned b = pick == 0   ? 0xFF
                             : pick == 1 ? 100 + rng() % 20
                             : pick == 2 ? 135 + rng() % 20
                                         : 120 + rng() % 16;
          s |= b << (8 * g);
        }
        src[0] = s;
      }
      const std::vector<std::uint32_t> want = platref::dequant_ref(k.fmt, k.group, src);
      unsigned in[5] = {}, out[8] = {};
      for (unsigned j = 0; j < in_n; ++j) in[j] = src[j];
      ASSERT_EQ(tpb_dpi_dequant_step(k.fmt, k.group, in, out), int(want.size())) << err();
      const bool e4m3 = k.fmt == 3 || k.fmt == 4;
      for (std::size_t j = 0; j < want.size(); ++j)
        EXPECT_TRUE(platref::fp8_word_equal(e4m3, out[j], want[j]))
            << "fmt " << k.fmt << " group " << k.group << " word " << j << std::hex << ": 0x"
            << out[j] << " want 0x" << want[j];
      for (std::size_t j = want.size(); j < 8; ++j) EXPECT_EQ(out[j], 0u);
      // The one-word form of each code word.
      if (k.fmt == 4) continue;
      for (unsigned w = 0; w < (k.group == 8 ? 4u : 1u); ++w) {
        unsigned lo = 0, hi = 0;
        const int scale = k.group == 8 ? int((src[0] >> (8 * w)) & 0xFF) : 0;
        ASSERT_EQ(tpb_dpi_dequant_word(k.fmt, k.group, scale, k.group == 8 ? src[1 + w] : src[0],
                                       &lo, &hi),
                  TPB_DPI_OK)
            << err();
        EXPECT_TRUE(platref::fp8_word_equal(e4m3, lo, want[2 * w]));
        EXPECT_TRUE(platref::fp8_word_equal(e4m3, hi, want[2 * w + 1]));
      }
    }
  }
}

TEST(DpiDequant, BadFormatGroupAndFp6WordAreErrors) {
  unsigned in[5] = {}, out[8] = {}, lo, hi;
  EXPECT_EQ(tpb_dpi_dequant_step(0, 0, in, out), TPB_DPI_EARG);
  EXPECT_NE(err().find("dequant fmt 0"), std::string::npos) << err();
  EXPECT_EQ(tpb_dpi_dequant_step(4, 8, in, out), TPB_DPI_EARG);
  EXPECT_NE(err().find("group 8 is not valid for E2M3ToE4M3"), std::string::npos) << err();
  EXPECT_EQ(tpb_dpi_dequant_step(1, 4, in, out), TPB_DPI_EARG);
  EXPECT_EQ(tpb_dpi_dequant_step(1, -1, in, out), TPB_DPI_EARG);
  EXPECT_EQ(tpb_dpi_dequant_word(4, 0, 0, 0, &lo, &hi), TPB_DPI_EARG);
  EXPECT_NE(err().find("no one-word step"), std::string::npos) << err();
  EXPECT_EQ(tpb_dpi_dequant_word(1, 8, 256, 0, &lo, &hi), TPB_DPI_EARG);
  EXPECT_NE(err().find("scale 256"), std::string::npos) << err();
  EXPECT_EQ(tpb_dpi_dequant_step(1, 0, nullptr, out), TPB_DPI_EARG);
}

// ---- QuantizeMX --------------------------------------------------------------

TEST(DpiQuantizeMx, RandomBlocksOfEveryDtypeOutputAndEmaxAreTheReference) {
  const isa::Dtype dtypes[] = {isa::Dtype::Fp32, isa::Dtype::Bf16, isa::Dtype::Fp16};
  for (isa::Dtype d : dtypes)
    for (bool e4m3 : {true, false})
      for (bool alt : {false, true})
        for (std::uint32_t seed = 1; seed <= 60; ++seed) {
          unsigned in[32];
          std::uint32_t bits[8][4];
          for (unsigned r = 0; r < 8; ++r)
            for (unsigned k = 0; k < 4; ++k) {
              in[4 * r + k] = dveref::gen_elem(d, seed, r, k, true);
              bits[r][k] = dveref::fp32_bits(d, in[4 * r + k]);
            }
          std::uint8_t q[8][4];
          const std::uint8_t want_s = dveref::quantize_block(bits, e4m3, alt, q);
          unsigned out[8];
          unsigned char s = 0;
          ASSERT_EQ(
              tpb_dpi_quantize_mx(static_cast<int>(d), e4m3 ? 0xE : 0xF, alt ? 1 : 0, in, out, &s),
              TPB_DPI_OK)
              << err();
          EXPECT_EQ(s, want_s) << "seed " << seed;
          for (unsigned r = 0; r < 8; ++r)
            for (unsigned k = 0; k < 4; ++k)
              EXPECT_EQ((out[r] >> (8 * k)) & 0xFF, q[r][k])
                  << "seed " << seed << " partition " << r << " element " << k;
        }
}

TEST(DpiQuantizeMx, NaNAndInfBlocksGetScale0xFFAndNaNCodes) {
  unsigned in[32] = {}, out[8];
  unsigned char s = 0;
  for (unsigned i = 0; i < 32; ++i) in[i] = f32_bits(float(i));
  in[17] = 0xFF800000u;  // -Inf
  ASSERT_EQ(tpb_dpi_quantize_mx(0x8, 0xF, 0, in, out, &s), TPB_DPI_OK);
  EXPECT_EQ(s, 0xFF);
  for (unsigned r = 0; r < 8; ++r) EXPECT_EQ(out[r], 0x7F7F7F7Fu);
  in[17] = 0x7E00;  // FP16 NaN in an FP16 block
  for (unsigned i = 0; i < 32; ++i)
    if (i != 17) in[i] = 0x3C00;
  ASSERT_EQ(tpb_dpi_quantize_mx(0x6, 0xE, 0, in, out, &s), TPB_DPI_OK);
  EXPECT_EQ(s, 0xFF);
}

TEST(DpiQuantizeMx, BadDtypesAndWideCodesAreErrors) {
  unsigned in[32] = {}, out[8];
  unsigned char s;
  EXPECT_EQ(tpb_dpi_quantize_mx(0x9, 0xE, 0, in, out, &s), TPB_DPI_EARG);
  EXPECT_NE(err().find("in_dtype 0x9"), std::string::npos) << err();
  EXPECT_EQ(tpb_dpi_quantize_mx(0x8, 0x10, 0, in, out, &s), TPB_DPI_EARG);
  EXPECT_NE(err().find("out_dtype 0x10"), std::string::npos) << err();
  EXPECT_EQ(tpb_dpi_quantize_mx(0x8, 0xE, 2, in, out, &s), TPB_DPI_EARG);
  in[9] = 0x10000;
  EXPECT_EQ(tpb_dpi_quantize_mx(0x5, 0xE, 0, in, out, &s), TPB_DPI_EARG);
  EXPECT_NE(err().find("element 9 (partition 2, element 1)"), std::string::npos) << err();
}

// ---- TQUANT ------------------------------------------------------------------

using boost::multiprecision::cpp_int;
using boost::multiprecision::cpp_rational;

cpp_rational rational_of(float f) {
  int e = 0;
  const double m = std::frexp(static_cast<double>(f), &e);
  cpp_rational r(static_cast<long long>(std::ldexp(m, 30)));  // 24 significant bits: exact
  return e - 30 >= 0 ? r * cpp_rational(cpp_int(1) << (e - 30))
                     : r / cpp_rational(cpp_int(1) << (30 - e));
}

// y = round(x*m + zp) by rmode on exact rationals, then clamp or modulo 256.
void tquant_oracle(float x, float m, int zp, bool s8, int rmode, bool sat, int& code, int& flags) {
  const cpp_rational v = rational_of(x) * rational_of(m) + zp;
  const cpp_int n = numerator(v), d = denominator(v);
  cpp_int fl = n / d;
  if (fl * d != n && n < 0) fl -= 1;
  const cpp_rational frac = v - cpp_rational(fl);
  cpp_int y = fl;
  flags = 0;
  if (frac != 0) {
    flags |= 1;
    const cpp_rational h(1, 2);
    const bool up = rmode == 0   ? (frac > h || (frac == h && fl % 2 != 0))
                    : rmode == 1 ? v < 0
                    : rmode == 2 ? false
                    : rmode == 3 ? true
                                 : (frac > h || (frac == h && v > 0));
    if (up) y += 1;
  }
  const cpp_int lo = s8 ? -128 : 0, hi = s8 ? 127 : 255;
  if (y < lo || y > hi) {
    if (sat) {
      flags |= 2;
      y = y < lo ? lo : hi;
    } else {
      flags |= 4;
      y = ((y % 256) + 256) % 256;
    }
  }
  if (y < 0) y += 256;
  code = static_cast<int>(y);
}

TEST(DpiTquant, RandomElementsInEveryModeAreTheExactOracle) {
  std::mt19937 rng(3);
  for (int i = 0; i < 4000; ++i) {
    const float x =
        std::ldexp(float(int(rng() % 2000001) - 1000000) / 1000000.0f, int(rng() % 24) - 8);
    const float m = std::ldexp(1.0f + float(rng() % 1000) / 1000.0f, int(rng() % 16) - 8);
    const bool s8 = rng() & 1;
    const int zp = s8 ? int(rng() % 256) - 128 : int(rng() % 256);
    const int rmode = int(rng() % 5);
    const bool sat = rng() & 1;
    unsigned char got = 0;
    int flags = -1, want = 0, want_flags = 0;
    ASSERT_EQ(tpb_dpi_tquant(f32_bits(x), f32_bits(m), zp, s8 ? 4 : 5, rmode, sat, &got, &flags),
              TPB_DPI_OK)
        << err();
    tquant_oracle(x, m, zp, s8, rmode, sat, want, want_flags);
    EXPECT_EQ(int(got), want) << x << " * " << m << " + " << zp << " rmode " << rmode;
    EXPECT_EQ(flags, want_flags) << x << " * " << m << " + " << zp << " rmode " << rmode;
  }
}

TEST(DpiTquant, WhatTheSfuFaultsOnIsAnErrorNamingTheRule) {
  unsigned char y;
  int f;
  const unsigned one = 0x3F800000u;
  EXPECT_EQ(tpb_dpi_tquant(0x7FC00000u, one, 0, 4, 0, 1, &y, &f), TPB_DPI_EARG);
  EXPECT_NE(err().find("invalid source element: 0x7fc00000 is NaN"), std::string::npos) << err();
  EXPECT_EQ(tpb_dpi_tquant(0xFF800000u, one, 0, 4, 0, 1, &y, &f), TPB_DPI_EARG);
  EXPECT_NE(err().find("is Inf"), std::string::npos) << err();
  EXPECT_EQ(tpb_dpi_tquant(one, 0, 0, 4, 0, 1, &y, &f), TPB_DPI_EARG);
  EXPECT_NE(err().find("multiplier: 0x00000000 is zero"), std::string::npos) << err();
  EXPECT_EQ(tpb_dpi_tquant(one, 0xBF800000u, 0, 4, 0, 1, &y, &f), TPB_DPI_EARG);
  EXPECT_NE(err().find("is negative"), std::string::npos) << err();
  EXPECT_EQ(tpb_dpi_tquant(one, one, 128, 4, 0, 1, &y, &f), TPB_DPI_EARG);
  EXPECT_NE(err().find("zero point: 128 is not a canonical S8"), std::string::npos) << err();
  EXPECT_EQ(tpb_dpi_tquant(one, one, -1, 5, 0, 1, &y, &f), TPB_DPI_EARG);
  EXPECT_EQ(tpb_dpi_tquant(one, one, 0, 6, 0, 1, &y, &f), TPB_DPI_EARG);
  EXPECT_EQ(tpb_dpi_tquant(one, one, 0, 4, 5, 1, &y, &f), TPB_DPI_EARG);
  EXPECT_EQ(tpb_dpi_tquant(one, one, 0, 4, 0, 2, &y, &f), TPB_DPI_EARG);
  // 2.5 RNE -> 2 inexact; 300 Sat 0 wraps to 44.
  ASSERT_EQ(tpb_dpi_tquant(f32_bits(2.5f), one, 0, 4, 0, 1, &y, &f), TPB_DPI_OK);
  EXPECT_EQ(int(y), 2);
  EXPECT_EQ(f, 1);
  ASSERT_EQ(tpb_dpi_tquant(f32_bits(300.0f), one, 0, 5, 0, 0, &y, &f), TPB_DPI_OK);
  EXPECT_EQ(int(y), 44);
  EXPECT_EQ(f, 4);
}

// ---- instruction words -------------------------------------------------------

void assemble(const std::string& stmt, unsigned w[16]) {
  ASSERT_EQ(tpb_dpi_assemble(stmt.c_str(), w), TPB_DPI_OK) << stmt << ": " << err();
}

TEST(DpiCheck, NamesTheFailedPredicatesAsTpbsimCheckDoes) {
  EXPECT_EQ(tpb_dpi_arch("mariana"), 4);
  EXPECT_EQ(tpb_dpi_arch("CAYMAN"), 3);
  EXPECT_EQ(tpb_dpi_arch("nc9"), TPB_DPI_EARG);
  unsigned w[16];
  // traces/examples/invalid.tpb's first two words (their comments name the predicates).
  assemble(
      "tensor_dequantize fmt=e2m1_to_e5m2 group=4 channels=32 src=t3d(sbuf(0, 0x0), num=[16, 1, "
      "1]) dst=t3d(sbuf(0, 0x1000), num=[32, 1, 1])",
      w);
  EXPECT_EQ(tpb_dpi_check(4, w), 2);
  EXPECT_STREQ(tpb_dpi_check_failed(),
               "has_valid_group_size, s3d3_tens_dequant_element_count_check_t3d");
  assemble(
      "tensor_dequantize fmt=e2m3_to_e4m3 group=8 channels=32 src=t3d(sbuf(0, 0x0), num=[20, 1, "
      "1]) dst=t3d(sbuf(0, 0x1000), num=[32, 1, 1])",
      w);
  EXPECT_EQ(tpb_dpi_check(4, w), 2);
  EXPECT_STREQ(tpb_dpi_check_failed(),
               "has_valid_dequant_fmt_group_size, s3d3_tens_dequant_element_count_check_t3d");
  // A valid one; and the same word is invalid on SUNDA, which has no TensorDequantize.
  assemble(
      "tensor_dequantize fmt=e2m1_to_e5m2 channels=32 src=t3d(sbuf(0, 0x0), num=[16, 1, 1]) "
      "dst=t3d(sbuf(0, 0x1000), num=[32, 1, 1])",
      w);
  EXPECT_EQ(tpb_dpi_check(4, w), 0);
  EXPECT_STREQ(tpb_dpi_check_failed(), "");
  EXPECT_GT(tpb_dpi_check(2, w), 0);
  EXPECT_STRNE(tpb_dpi_check_failed(), "");
  // Byte i of the word is bits [8i+7:8i]: the opcode 0x7b is byte 0.
  EXPECT_EQ(w[0] & 0xFF, 0x7Bu);
  EXPECT_EQ((w[0] >> 8) & 0xFF, 16u);  // inst_word_len
  EXPECT_NE(std::string(tpb_dpi_disassemble(w)).find("tensor_dequantize fmt=e2m1_to_e5m2"),
            std::string::npos)
      << tpb_dpi_disassemble(w);
  // An unknown opcode.
  unsigned raw[16] = {0xEE};
  EXPECT_EQ(tpb_dpi_check(4, raw), 1);
  EXPECT_STREQ(tpb_dpi_check_failed(), "has_known_opcode");
  EXPECT_STREQ(tpb_dpi_disassemble(raw), "");
  EXPECT_STREQ(tpb_dpi_queue(raw), "pool");  // an unknown opcode's (convention)
  EXPECT_STREQ(tpb_dpi_queue(w), "pool");
  EXPECT_STREQ(tpb_dpi_queue(nullptr), "");
}

TEST(DpiCheck, QueueIsTheHeadersEngineElseTheHome) {
  unsigned w[16];
  assemble(".engine act\ntensor_copy channels=1 out_dtype=fp32 src=t3d(0) dst=t3d(0x40)", w);
  EXPECT_STREQ(tpb_dpi_queue(w), "act");
  assemble(".engine pool\ntensor_copy channels=1 out_dtype=fp32 src=t3d(0) dst=t3d(0x40)", w);
  EXPECT_STREQ(tpb_dpi_queue(w), "pool");
  // On its home engine the header names none.
  assemble(".engine dve\ntensor_copy channels=1 out_dtype=fp32 src=t3d(0) dst=t3d(0x40)", w);
  EXPECT_STREQ(tpb_dpi_queue(w), "dve");
  EXPECT_EQ((w[0] >> 16) & 0xF0, 0u);
  assemble(".engine act\nactivation func=exp channels=1 out_dtype=fp32 src=t3d(0) dst=t3d(0x40)",
           w);
  EXPECT_STREQ(tpb_dpi_queue(w), "act");
  assemble(".engine dma7\ndma_copy rows=1 row_bytes=4 src=sbuf(0, 0x0) dst=hbm(0x0, stride=4)", w);
  EXPECT_STREQ(tpb_dpi_queue(w), "dma7");
}

TEST(DpiCheck, RawWordsAndTquantBlocksAssembleToo) {
  unsigned w[16];
  std::string raw = ".raw 7b10";
  for (int i = 2; i < 64; ++i) raw += i == 12 ? "a5" : "00";
  assemble(raw, w);
  EXPECT_EQ(w[0], 0x107Bu);
  EXPECT_EQ(w[3], 0xA5u);  // byte 12
  for (int i = 4; i < 16; ++i) EXPECT_EQ(w[i], 0u);
  assemble(
      "BSTART.SFU TQUANT, FP32; B.DATR S8, RNE, Sat=1; B.DIM LB0=24; B.DIM LB1=8; B.DIM LB2=32; "
      "B.IOR r1, r2; B.IOT T1, mask=1111, <last>, ->T0<1>; BSTOP",
      w);
  EXPECT_EQ(w[0] & 0xFF, 0x6Au);  // the SFU's TQUANT word (docs/ASM.md)
  EXPECT_EQ(tpb_dpi_check(4, w), 0) << tpb_dpi_check_failed();
  EXPECT_EQ(tpb_dpi_assemble("# a comment only", w), TPB_DPI_EARG);
  EXPECT_NE(err().find("holds 0 instructions"), std::string::npos) << err();
  EXPECT_EQ(tpb_dpi_assemble((raw + "\n" + raw).c_str(), w), TPB_DPI_EARG);
  EXPECT_NE(err().find("holds 2 instructions"), std::string::npos) << err();
}

TEST(DpiCheck, BadArchAndSyntaxAreErrors) {
  unsigned w[16] = {};
  EXPECT_EQ(tpb_dpi_check(6, w), TPB_DPI_EARG);
  EXPECT_NE(err().find("arch 6"), std::string::npos) << err();
  EXPECT_STREQ(tpb_dpi_check_failed(), "");
  EXPECT_EQ(tpb_dpi_assemble("tensor_dequantize fmt=bogus", w), TPB_DPI_EARG);
  EXPECT_NE(err().find("column"), std::string::npos) << err();
  EXPECT_NE(err().find("bogus"), std::string::npos) << err();
  EXPECT_EQ(tpb_dpi_assemble(nullptr, w), TPB_DPI_EARG);
}

TEST(DpiThreads, EveryFunctionIsStatelessAcrossThreads) {
  // Four threads, each with its own errors and results, at once.
  std::vector<std::thread> ts;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([t, &bad] {
      for (int i = 0; i < 2000; ++i) {
        unsigned c = 0;
        if (t % 2) {
          if (tpb_dpi_to_fp32(99, 0, &c) != TPB_DPI_EARG ||
              std::string(tpb_dpi_last_error()).find("format id 99") == std::string::npos)
            ++bad[t];
        } else if (tpb_dpi_from_fp32(3, f32_bits(float(t + 1)), 1, &c) != TPB_DPI_OK ||
                   std::string(tpb_dpi_last_error()) != "") {
          ++bad[t];
        }
      }
    });
  for (auto& t : ts) t.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(bad[t], 0) << "thread " << t;
}

}  // namespace
