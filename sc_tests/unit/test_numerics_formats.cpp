// Numeric formats: decode against literal tables / textbook formulas, encode
// against round trips, midpoints, boundaries and hardware conversions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#if !defined(__FLT16_MANT_DIG__) && defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "models/numerics/formats.h"
#include "sc_tests/unit/test_numerics_ref.h"

namespace {

using tpb::num::decode;
using tpb::num::encode;
using tpb::num::Format;
using tpb::num::info;
using tpb::num::Overflow;
namespace ref = tpb::numref;

constexpr Overflow kSat = Overflow::Saturate;
constexpr Overflow kNoSat = Overflow::NonSaturate;

// Same value, with the sign of zero and NaN-ness compared too.
::testing::AssertionResult same_value(double got, double want) {
  if (std::isnan(want)) {
    if (std::isnan(got)) return ::testing::AssertionSuccess();
  } else if (got == want && std::signbit(got) == std::signbit(want)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "got " << got << ", want " << want;
}

// Reference value of any code of a format of at most 8 bits (test tables only).
double ref_value(Format f, unsigned c) {
  switch (f) {
    case Format::Fp4E2M1:
      return ref::kFp4[c];
    case Format::Int4:
      return ref::kInt4[c];
    case Format::Nf4:
      return ref::kNf4[c];
    case Format::Fp6E2M3:
      return ref::fp6(ref::kFp6E2M3, c);
    case Format::Fp6E3M2:
      return ref::fp6(ref::kFp6E3M2, c);
    case Format::E4M3:
      return ref::fp8(ref::kE4M3, c);
    case Format::E5M2:
      return ref::fp8(ref::kE5M2, c);
    case Format::E3M4:
      return ref::fp8(ref::kE3M4, c);
    case Format::E2M5:
      return ref::fp8(ref::kE2M5, c);
    case Format::E8M0:
      return c == 0xFF ? ref::kNaN : std::pow(2.0, static_cast<int>(c) - 127);
    case Format::S8:
      return c < 128 ? c : static_cast<double>(c) - 256.0;
    case Format::U8:
      return c;
    default:
      return ref::kNaN;
  }
}

const Format kSmall[] = {Format::Fp4E2M1, Format::Int4, Format::Nf4,  Format::Fp6E2M3,
                         Format::Fp6E3M2, Format::E4M3, Format::E5M2, Format::E3M4,
                         Format::E2M5,    Format::E8M0, Format::S8,   Format::U8};

// ---------------------------------------------------------------------------
// Format table

TEST(NumericsInfo, NamesWidthsAndMaxima) {
  struct Row {
    const char* name;
    unsigned bits;
    double max;
    bool inf, nan;
  };
  const Row rows[tpb::num::kNumFormats] = {
      {"fp32", 32, 3.4028234663852886e38, true, true},
      {"bf16", 16, 3.3895313892515355e38, true, true},
      {"fp16", 16, 65504, true, true},
      {"e4m3", 8, 448, false, true},
      {"e5m2", 8, 57344, true, true},
      {"e3m4", 8, 15.5, true, true},
      {"e2m5", 8, 3.9375, true, true},
      {"fp6_e2m3", 6, 7.5, false, false},
      {"fp6_e3m2", 6, 28, false, false},
      {"fp4_e2m1", 4, 6, false, false},
      {"int4", 4, 7, false, false},
      {"nf4", 4, 1, false, false},
      {"e8m0", 8, 1.7014118346046923e38, false, true},
      {"s8", 8, 127, false, false},
      {"u8", 8, 255, false, false},
      // SPEC §18: NKI's legacy float8_e4m3, IEEE-like (bias 7): 1.875 x 2^7.
      {"e4m3_legacy", 8, 240, true, true},
  };
  ASSERT_EQ(std::size(rows), static_cast<std::size_t>(tpb::num::kNumFormats));
  for (int i = 0; i < tpb::num::kNumFormats; ++i) {
    const auto f = static_cast<Format>(i);
    SCOPED_TRACE(rows[i].name);
    EXPECT_STREQ(info(f).name, rows[i].name);
    EXPECT_EQ(info(f).format, f);
    EXPECT_EQ(info(f).bits, rows[i].bits);
    EXPECT_EQ(info(f).max_finite, rows[i].max);
    EXPECT_EQ(info(f).has_inf, rows[i].inf);
    EXPECT_EQ(info(f).has_nan, rows[i].nan);
    ASSERT_TRUE(tpb::num::parse_format(rows[i].name).has_value());
    EXPECT_EQ(*tpb::num::parse_format(rows[i].name), f);
  }
  EXPECT_FALSE(tpb::num::parse_format("fp8").has_value());
  EXPECT_FALSE(tpb::num::parse_format("E4M3").has_value());
  EXPECT_FALSE(tpb::num::parse_format("").has_value());
}

TEST(NumericsInfo, Nf4CodebookIsTheQloraTable) {
  for (int i = 0; i < 16; ++i) EXPECT_EQ(tpb::num::kNf4Codebook[i], ref::kNf4[i]) << i;
  EXPECT_EQ(tpb::num::kNf4Codebook[7], 0.0f);
}

TEST(NumericsInfo, F32BitHelpers) {
  EXPECT_EQ(tpb::num::bits_from_f32(1.0f), 0x3F800000u);
  EXPECT_EQ(tpb::num::bits_from_f32(-2.5f), 0xC0200000u);
  EXPECT_EQ(tpb::num::f32_from_bits(0x3E99999Au), 0.3f);
  EXPECT_EQ(tpb::num::f32_from_bits(0x00000001u), std::ldexp(1.0f, -149));
  EXPECT_TRUE(std::isnan(tpb::num::f32_from_bits(0x7FC00000u)));
}

// ---------------------------------------------------------------------------
// decode: exhaustive over every code

TEST(NumericsDecode, EverySmallFormatCodeMatchesTheReference) {
  for (Format f : kSmall) {
    SCOPED_TRACE(info(f).name);
    const unsigned n = 1u << info(f).bits;
    for (unsigned c = 0; c < n; ++c) EXPECT_TRUE(same_value(decode(f, c), ref_value(f, c))) << c;
  }
}

TEST(NumericsDecode, Fp8SpotValuesFromTheSpec) {
  EXPECT_EQ(decode(Format::E4M3, 0x7E), 448.0);
  EXPECT_TRUE(std::isnan(decode(Format::E4M3, 0x7F)));
  EXPECT_TRUE(std::isnan(decode(Format::E4M3, 0xFF)));
  EXPECT_EQ(decode(Format::E4M3, 0x78), 256.0);  // top exponent is finite in fn
  EXPECT_EQ(decode(Format::E4M3, 0x08), 0.015625);
  EXPECT_EQ(decode(Format::E4M3, 0x01), 0.001953125);
  EXPECT_EQ(decode(Format::E5M2, 0x7B), 57344.0);
  EXPECT_EQ(decode(Format::E5M2, 0x7C), ref::kInf);
  EXPECT_EQ(decode(Format::E5M2, 0xFC), -ref::kInf);
  EXPECT_TRUE(std::isnan(decode(Format::E5M2, 0x7D)));
  EXPECT_EQ(decode(Format::E5M2, 0x01), 1.52587890625e-05);
  EXPECT_EQ(decode(Format::E3M4, 0x6F), 15.5);
  EXPECT_EQ(decode(Format::E3M4, 0x70), ref::kInf);
  EXPECT_EQ(decode(Format::E3M4, 0x01), 0.015625);
  EXPECT_EQ(decode(Format::E2M5, 0x5F), 3.9375);
  EXPECT_EQ(decode(Format::E2M5, 0x60), ref::kInf);
  EXPECT_EQ(decode(Format::E2M5, 0x01), 0.03125);
  EXPECT_EQ(decode(Format::E8M0, 0x7F), 1.0);
  EXPECT_EQ(decode(Format::E8M0, 0x00), std::ldexp(1.0, -127));
  EXPECT_EQ(decode(Format::E8M0, 0xFE), std::ldexp(1.0, 127));
}

TEST(NumericsDecode, Fp16EveryCodeMatchesTheFormula) {
  for (unsigned c = 0; c < 0x10000; ++c) {
    const int s = c >> 15, e = (c >> 10) & 0x1F, m = c & 0x3FF;
    double want;
    if (e == 31) {
      want = m ? ref::kNaN : ref::kInf;
    } else if (e == 0) {
      want = std::pow(2.0, -14) * (m / 1024.0);
    } else {
      want = std::pow(2.0, e - 15) * (1.0 + m / 1024.0);
    }
    if (s) want = -want;
    ASSERT_TRUE(same_value(decode(Format::Fp16, c), want)) << c;
  }
}

TEST(NumericsDecode, Bf16EveryCodeIsTheTopHalfOfAnFp32) {
  for (unsigned c = 0; c < 0x10000; ++c) {
    float f;
    const std::uint32_t b = c << 16;
    std::memcpy(&f, &b, 4);
    ASSERT_TRUE(same_value(decode(Format::Bf16, c), f)) << c;
  }
}

TEST(NumericsDecode, Fp32MatchesTheHardwareFloat) {
  std::mt19937 rng(1);
  std::vector<std::uint32_t> codes = {0,           0x80000000u, 1,           0x807FFFFFu,
                                      0x00800000u, 0x7F7FFFFFu, 0x7F800000u, 0xFF800000u,
                                      0x7FC00000u, 0x3F800000u};
  for (int i = 0; i < 200000; ++i) codes.push_back(rng());
  for (std::uint32_t c : codes) {
    float f;
    std::memcpy(&f, &c, 4);
    ASSERT_TRUE(same_value(decode(Format::Fp32, c), f)) << c;
  }
}

// ---------------------------------------------------------------------------
// encode: round trips

TEST(NumericsEncode, EveryNonNanCodeRoundTrips) {
  for (Format f : kSmall) {
    SCOPED_TRACE(info(f).name);
    const unsigned n = 1u << info(f).bits;
    for (unsigned c = 0; c < n; ++c) {
      const double v = ref_value(f, c);
      if (std::isnan(v)) continue;
      // NF4 has no -0 and INT4/S8/U8 no signed zero: every code is distinct.
      EXPECT_EQ(encode(f, v, kSat), c) << c;
      EXPECT_EQ(encode(f, v, kNoSat), c) << c;
    }
  }
  for (Format f : {Format::Fp16, Format::Bf16}) {
    for (unsigned c = 0; c < 0x10000; ++c) {
      const double v = decode(f, c);
      if (std::isnan(v)) continue;
      ASSERT_EQ(encode(f, v, kSat), c) << info(f).name << " " << c;
    }
  }
  std::mt19937 rng(2);
  for (int i = 0; i < 200000; ++i) {
    const std::uint32_t c = rng();
    float f;
    std::memcpy(&f, &c, 4);
    if (std::isnan(f)) continue;
    ASSERT_EQ(encode(Format::Fp32, f, kSat), c);
  }
}

// Every midpoint between two adjacent values of a small format rounds to the
// even code; one ulp (of double) either side goes to the nearer code.
void check_midpoints(Format f) {
  SCOPED_TRACE(info(f).name);
  struct Cv {
    unsigned code;
    double v;
  };
  std::vector<Cv> pos;
  const unsigned n = 1u << info(f).bits;
  for (unsigned c = 0; c < n; ++c) {
    const double v = ref_value(f, c);
    if (std::isnan(v) || std::isinf(v) || v < 0 || (v == 0 && std::signbit(v))) continue;
    pos.push_back({c, v});
  }
  std::sort(pos.begin(), pos.end(), [](const Cv& a, const Cv& b) { return a.v < b.v; });
  ASSERT_GE(pos.size(), 4u);
  for (std::size_t i = 0; i + 1 < pos.size(); ++i) {
    const Cv a = pos[i], b = pos[i + 1];
    const double mid = (a.v + b.v) / 2;
    const unsigned even = (a.code & 1u) == 0 ? a.code : b.code;
    EXPECT_EQ(encode(f, mid), even) << "mid " << mid;
    EXPECT_EQ(encode(f, std::nextafter(mid, ref::kInf)), b.code) << "above " << mid;
    EXPECT_EQ(encode(f, std::nextafter(mid, -ref::kInf)), a.code) << "below " << mid;
    if (info(f).is_float) {
      const unsigned sign = 1u << (info(f).bits - 1);
      const unsigned neg_even = even | sign;  // the sign bit does not change parity
      EXPECT_EQ(encode(f, -mid), neg_even) << "-mid " << mid;
      EXPECT_EQ(encode(f, -std::nextafter(mid, ref::kInf)), b.code | sign);
    }
  }
}

TEST(NumericsEncode, MidpointsRoundToTheEvenCode) {
  for (Format f : {Format::Fp4E2M1, Format::Fp6E2M3, Format::Fp6E3M2, Format::E4M3, Format::E5M2,
                   Format::E3M4, Format::E2M5})
    check_midpoints(f);
}

TEST(NumericsEncode, IntegerFormatsRoundHalfToEven) {
  // value, s8 saturating, s8 wrapping, u8 saturating, u8 wrapping, int4 sat, int4 wrap
  struct Row {
    double v;
    unsigned s8s, s8w, u8s, u8w, i4s, i4w;
  };
  const Row rows[] = {
      {0.5, 0x00, 0x00, 0x00, 0x00, 0x0, 0x0},    {1.5, 0x02, 0x02, 0x02, 0x02, 0x2, 0x2},
      {2.5, 0x02, 0x02, 0x02, 0x02, 0x2, 0x2},    {-2.5, 0xFE, 0xFE, 0x00, 0xFE, 0xE, 0xE},
      {-0.5, 0x00, 0x00, 0x00, 0x00, 0x0, 0x0},   {2.500001, 0x03, 0x03, 0x03, 0x03, 0x3, 0x3},
      {6.5, 0x06, 0x06, 0x06, 0x06, 0x6, 0x6},    {7.5, 0x08, 0x08, 0x08, 0x08, 0x7, 0x8},
      {-8.5, 0xF8, 0xF8, 0x00, 0xF8, 0x8, 0x8},   {-9.0, 0xF7, 0xF7, 0x00, 0xF7, 0x8, 0x7},
      {127.5, 0x7F, 0x80, 0x80, 0x80, 0x7, 0x0},  {-128.5, 0x80, 0x80, 0x00, 0x80, 0x8, 0x0},
      {-129.0, 0x80, 0x7F, 0x00, 0x7F, 0x8, 0xF}, {255.5, 0x7F, 0x00, 0xFF, 0x00, 0x7, 0x0},
      {300.0, 0x7F, 0x2C, 0xFF, 0x2C, 0x7, 0xC},  {-1.0, 0xFF, 0xFF, 0x00, 0xFF, 0xF, 0xF},
      {1e10, 0x7F, 0x00, 0xFF, 0x00, 0x7, 0x0},  // 1e10 = 2^10 * 9765625: multiple of 256
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.v);
    EXPECT_EQ(encode(Format::S8, r.v, kSat), r.s8s);
    EXPECT_EQ(encode(Format::S8, r.v, kNoSat), r.s8w);
    EXPECT_EQ(encode(Format::U8, r.v, kSat), r.u8s);
    EXPECT_EQ(encode(Format::U8, r.v, kNoSat), r.u8w);
    EXPECT_EQ(encode(Format::Int4, r.v, kSat), r.i4s);
    EXPECT_EQ(encode(Format::Int4, r.v, kNoSat), r.i4w);
  }
  // NaN has no integer code: 0. Inf saturates in both modes (wrap of Inf is undefined).
  for (Format f : {Format::S8, Format::U8, Format::Int4}) {
    EXPECT_EQ(encode(f, ref::kNaN, kSat), 0u);
    EXPECT_EQ(encode(f, ref::kNaN, kNoSat), 0u);
  }
  EXPECT_EQ(encode(Format::S8, ref::kInf, kNoSat), 0x7Fu);
  EXPECT_EQ(encode(Format::S8, -ref::kInf, kSat), 0x80u);
  EXPECT_EQ(encode(Format::U8, -ref::kInf, kNoSat), 0x00u);
}

TEST(NumericsEncode, Nf4NearestEntryTiesToEvenIndex) {
  for (int i = 0; i + 1 < 16; ++i) {
    const double a = ref::kNf4[i], b = ref::kNf4[i + 1];
    const double mid = (a + b) / 2;
    const unsigned even = (i & 1) == 0 ? i : i + 1;
    EXPECT_EQ(encode(Format::Nf4, mid), even) << i;
    EXPECT_EQ(encode(Format::Nf4, std::nextafter(mid, ref::kInf)), unsigned(i + 1)) << i;
    EXPECT_EQ(encode(Format::Nf4, std::nextafter(mid, -ref::kInf)), unsigned(i)) << i;
  }
  EXPECT_EQ(encode(Format::Nf4, 5.0), 15u);
  EXPECT_EQ(encode(Format::Nf4, -5.0), 0u);
  EXPECT_EQ(encode(Format::Nf4, -0.0), 7u);
  EXPECT_EQ(encode(Format::Nf4, ref::kNaN), 7u);  // no NaN: the zero code
  EXPECT_EQ(encode(Format::Nf4, 0.5), 12u);       // 0.4407 is nearer than 0.5626
  // Far past the ends (where |v| - entry absorbs the entries) and Inf: the ends.
  for (double v : {0x1p60, 1e30, 3.4e38, ref::kInf}) {
    EXPECT_EQ(encode(Format::Nf4, v), 15u) << v;
    EXPECT_EQ(encode(Format::Nf4, -v), 0u) << v;
  }
}

// ---------------------------------------------------------------------------
// encode: overflow, specials, subnormals

TEST(NumericsEncode, E4M3OverflowBoundaries) {
  EXPECT_EQ(encode(Format::E4M3, 448.0, kSat), 0x7Eu);
  EXPECT_EQ(encode(Format::E4M3, 464.0, kSat), 0x7Eu);  // tie 448|480: 448 is even
  EXPECT_EQ(encode(Format::E4M3, 464.0, kNoSat), 0x7Eu);
  EXPECT_EQ(encode(Format::E4M3, 464.0001, kSat), 0x7Eu);
  EXPECT_EQ(encode(Format::E4M3, 464.0001, kNoSat), 0x7Fu);  // rounds to 480: NaN
  EXPECT_EQ(encode(Format::E4M3, 480.0, kSat), 0x7Eu);
  EXPECT_EQ(encode(Format::E4M3, -480.0, kSat), 0xFEu);
  EXPECT_EQ(encode(Format::E4M3, 480.0, kNoSat), 0x7Fu);
  EXPECT_EQ(encode(Format::E4M3, -480.0, kNoSat), 0xFFu);
  EXPECT_EQ(encode(Format::E4M3, 1e30, kNoSat), 0x7Fu);
  EXPECT_EQ(encode(Format::E4M3, 1e30, kSat), 0x7Eu);
  // Top-binade values below 448 are finite (fn has no Inf): 416 = 1.625*256.
  EXPECT_EQ(encode(Format::E4M3, 416.0, kNoSat), 0x7Du);
}

TEST(NumericsEncode, E5M2OverflowBoundaries) {
  EXPECT_EQ(encode(Format::E5M2, 57344.0, kSat), 0x7Bu);
  EXPECT_EQ(encode(Format::E5M2, 61439.0, kSat), 0x7Bu);
  EXPECT_EQ(encode(Format::E5M2, 61439.0, kNoSat), 0x7Bu);
  EXPECT_EQ(encode(Format::E5M2, 61440.0, kSat), 0x7Bu);
  EXPECT_EQ(encode(Format::E5M2, 61440.0, kNoSat), 0x7Cu);  // tie 57344|65536 goes up: Inf
  EXPECT_EQ(encode(Format::E5M2, -61440.0, kNoSat), 0xFCu);
  EXPECT_EQ(encode(Format::E5M2, -1e300, kSat), 0xFBu);
  EXPECT_EQ(encode(Format::E3M4, 15.75, kNoSat), 0x70u);  // tie 15.5|16 -> Inf
  EXPECT_EQ(encode(Format::E3M4, 15.74, kNoSat), 0x6Fu);
  EXPECT_EQ(encode(Format::E3M4, 15.75, kSat), 0x6Fu);
  EXPECT_EQ(encode(Format::E2M5, 3.96875, kNoSat), 0x60u);
  EXPECT_EQ(encode(Format::E2M5, 3.96875, kSat), 0x5Fu);
  EXPECT_EQ(encode(Format::Fp16, 65520.0, kNoSat), 0x7C00u);
  EXPECT_EQ(encode(Format::Fp16, 65519.99, kNoSat), 0x7BFFu);
  EXPECT_EQ(encode(Format::Fp16, 65520.0, kSat), 0x7BFFu);
}

TEST(NumericsEncode, NoSpecialFormatsSaturateInBothModes) {
  for (Overflow ov : {kSat, kNoSat}) {
    EXPECT_EQ(encode(Format::Fp4E2M1, 7.0, ov), 0x7u);
    EXPECT_EQ(encode(Format::Fp4E2M1, -100.0, ov), 0xFu);
    EXPECT_EQ(encode(Format::Fp6E2M3, 7.75, ov), 0x1Fu);
    EXPECT_EQ(encode(Format::Fp6E3M2, -30.0, ov), 0x3Fu);
    EXPECT_EQ(encode(Format::Fp4E2M1, ref::kInf, ov), 0x7u);
    EXPECT_EQ(encode(Format::Fp6E3M2, -ref::kInf, ov), 0x3Fu);
    EXPECT_EQ(encode(Format::Fp4E2M1, ref::kNaN, ov), 0x0u);
    EXPECT_EQ(encode(Format::Fp6E2M3, ref::kNaN, ov), 0x0u);
  }
  EXPECT_EQ(encode(Format::Fp4E2M1, 5.0), 0x6u);  // tie 4|6 -> 4 (code 6 even)
  EXPECT_EQ(encode(Format::Fp4E2M1, 2.5), 0x4u);  // tie 2|3 -> 2 (code 4 even)
}

TEST(NumericsEncode, NanAndInfRules) {
  EXPECT_EQ(encode(Format::E4M3, ref::kNaN), 0x7Fu);
  EXPECT_EQ(encode(Format::E4M3, ref::kInf, kSat), 0x7Eu);
  EXPECT_EQ(encode(Format::E4M3, -ref::kInf, kSat), 0xFEu);
  EXPECT_EQ(encode(Format::E4M3, ref::kInf, kNoSat), 0x7Fu);
  for (Format f :
       {Format::E5M2, Format::E3M4, Format::E2M5, Format::Fp16, Format::Bf16, Format::Fp32}) {
    SCOPED_TRACE(info(f).name);
    EXPECT_TRUE(std::isnan(decode(f, encode(f, ref::kNaN))));
    // Inf is a value the format holds: kept, not saturated.
    EXPECT_EQ(decode(f, encode(f, ref::kInf, kSat)), ref::kInf);
    EXPECT_EQ(decode(f, encode(f, -ref::kInf, kNoSat)), -ref::kInf);
  }
  EXPECT_EQ(encode(Format::E5M2, ref::kNaN), 0x7Eu);  // canonical quiet NaN
  EXPECT_EQ(encode(Format::Fp32, ref::kNaN), 0x7FC00000u);
  EXPECT_EQ(encode(Format::Bf16, ref::kNaN), 0x7FC0u);
  EXPECT_EQ(encode(Format::Fp16, ref::kNaN), 0x7E00u);
}

TEST(NumericsEncode, SubnormalsAndUnderflowToSignedZero) {
  // FP6 E2M3 subnormals are m/8.
  EXPECT_EQ(encode(Format::Fp6E2M3, 0.125), 0x01u);
  EXPECT_EQ(encode(Format::Fp6E2M3, 0.0625), 0x00u);  // tie 0|0.125 -> 0
  EXPECT_EQ(encode(Format::Fp6E2M3, 0.0625000001), 0x01u);
  EXPECT_EQ(encode(Format::Fp6E2M3, 0.1875), 0x02u);   // tie -> even 0.25
  EXPECT_EQ(encode(Format::Fp6E2M3, 0.9375), 0x08u);   // tie 0.875|1 -> 1.0 (even)
  EXPECT_EQ(encode(Format::Fp6E2M3, -0.01), 0x20u);    // -0
  EXPECT_EQ(encode(Format::Fp6E3M2, 0.03125), 0x00u);  // tie 0|0.0625
  EXPECT_EQ(encode(Format::Fp6E3M2, 0.09375), 0x02u);  // tie 0.0625|0.125
  EXPECT_EQ(encode(Format::Fp6E3M2, -0.2), 0x23u);     // nearest -0.1875
  EXPECT_EQ(encode(Format::Fp4E2M1, 0.25), 0x0u);      // tie 0|0.5
  EXPECT_EQ(encode(Format::Fp4E2M1, -0.26), 0x9u);
  EXPECT_EQ(encode(Format::Fp4E2M1, -0.1), 0x8u);
  EXPECT_EQ(encode(Format::E4M3, std::ldexp(1.0, -10)), 0x00u);  // tie 0|2^-9
  EXPECT_EQ(encode(Format::E4M3, -std::ldexp(1.0, -10)), 0x80u);
  EXPECT_EQ(encode(Format::E4M3, std::ldexp(3.0, -10)), 0x02u);  // tie 1|2 -> 2
  EXPECT_EQ(encode(Format::E5M2, 1e-30), 0x00u);
  EXPECT_EQ(encode(Format::E5M2, -1e-300), 0x80u);
  EXPECT_EQ(encode(Format::E5M2, std::ldexp(1.0, -17) * 1.0000001), 0x01u);
  EXPECT_EQ(encode(Format::Fp32, 1e-50), 0x00000000u);
  EXPECT_EQ(encode(Format::Fp32, -1e-50), 0x80000000u);
  EXPECT_EQ(encode(Format::Fp32, std::ldexp(1.0, -150)), 0x00000000u);  // tie 0|2^-149
  EXPECT_EQ(encode(Format::Fp32, std::ldexp(3.0, -150)), 0x00000002u);  // 1.5 ulp -> 2
  EXPECT_EQ(encode(Format::Fp32, std::ldexp(3.0, -151)), 0x00000001u);  // 0.75 ulp -> 1
}

// FP32 -> BF16 by the well-known integer trick (add 0x7FFF + lsb, shift),
// which handles subnormals and overflow to Inf.
std::uint32_t bf16_rne_trick(std::uint32_t bits) {
  return (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
}

TEST(NumericsEncode, Fp32ToBf16MatchesTheIntegerTrick) {
  std::mt19937 rng(3);
  std::vector<std::uint32_t> codes;
  for (std::uint32_t c = 0; c < 0x40000; ++c) codes.push_back(c);                // subnormals
  for (std::uint32_t c = 0x7F7F0000u; c < 0x7F800000u; ++c) codes.push_back(c);  // overflow edge
  for (int i = 0; i < 300000; ++i) codes.push_back(rng());
  for (std::uint32_t c : codes) {
    float f;
    std::memcpy(&f, &c, 4);
    if (std::isnan(f)) continue;
    ASSERT_EQ(encode(Format::Bf16, f, kNoSat), bf16_rne_trick(c)) << std::hex << c;
    const std::uint32_t sat = bf16_rne_trick(c) & 0x7FFFu;
    if (sat == 0x7F80u && !std::isinf(f)) {
      ASSERT_EQ(encode(Format::Bf16, f, kSat), (c >> 16 & 0x8000u) | 0x7F7Fu) << std::hex << c;
    } else {
      ASSERT_EQ(encode(Format::Bf16, f, kSat), bf16_rne_trick(c)) << std::hex << c;
    }
  }
}

// The compiler's (or the CPU's) float -> FP16 conversion, round to nearest
// even: _Float16 where the compiler has it (GCC 12), else the F16C
// instruction (clang 14 has no _Float16 on x86-64: the sanitizer build).
#if defined(__FLT16_MANT_DIG__)
bool have_fp16_oracle() { return true; }
std::uint16_t fp16_oracle(float f) {
  const _Float16 h = static_cast<_Float16>(f);
  std::uint16_t hb;
  std::memcpy(&hb, &h, 2);
  return hb;
}
#elif defined(__x86_64__)
bool have_fp16_oracle() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
}
__attribute__((target("f16c"))) std::uint16_t fp16_oracle(float f) {
  return static_cast<std::uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}
#else
bool have_fp16_oracle() { return false; }
std::uint16_t fp16_oracle(float) { return 0; }
#endif

TEST(NumericsEncode, Fp32ToFp16MatchesTheCompilerConversion) {
  if (!have_fp16_oracle()) GTEST_SKIP() << "no _Float16 and no F16C on this compiler / CPU";
  std::mt19937 rng(4);
  std::vector<std::uint32_t> codes;
  // Every float from below the FP16 subnormals up past 65536, and random ones.
  for (std::uint32_t c = 0x32800000u; c < 0x47900000u; c += 331) codes.push_back(c);
  for (int i = 0; i < 300000; ++i) codes.push_back(rng());
  for (std::uint32_t c : codes) {
    float f;
    std::memcpy(&f, &c, 4);
    if (std::isnan(f)) continue;
    ASSERT_EQ(encode(Format::Fp16, f, kNoSat), fp16_oracle(f)) << std::hex << c;
  }
}

TEST(NumericsEncode, DoubleToFp32MatchesTheHardwareConversion) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 300000; ++i) {
    std::uint64_t b = rng();
    // Keep exponents near the FP32 range so subnormals and overflow get hit.
    b = (b & 0x800FFFFFFFFFFFFFull) |
        (static_cast<std::uint64_t>(1023 - 160 + (rng() % 300)) << 52);
    double d;
    std::memcpy(&d, &b, 8);
    const float f = static_cast<float>(d);
    ASSERT_EQ(encode(Format::Fp32, d, kNoSat), tpb::num::bits_from_f32(f)) << d;
  }
}

TEST(NumericsEncode, E8M0MantissaLessRounding) {
  EXPECT_EQ(encode(Format::E8M0, 1.0), 0x7Fu);
  EXPECT_EQ(encode(Format::E8M0, 3.0), 0x81u);  // 1.5*2 ties up to 4
  EXPECT_EQ(encode(Format::E8M0, 2.99), 0x80u);
  EXPECT_EQ(encode(Format::E8M0, 6.0), 0x82u);   // 1.5*4 -> 8
  EXPECT_EQ(encode(Format::E8M0, 0.75), 0x7Fu);  // 1.5*0.5 -> 1
  EXPECT_EQ(encode(Format::E8M0, 0.7499), 0x7Eu);
  EXPECT_EQ(encode(Format::E8M0, std::ldexp(1.0, -127)), 0x00u);
  EXPECT_EQ(encode(Format::E8M0, std::ldexp(1.0, -140)), 0x00u);
  EXPECT_EQ(encode(Format::E8M0, 0.0), 0x00u);
  EXPECT_EQ(encode(Format::E8M0, -0.0), 0x00u);
  EXPECT_EQ(encode(Format::E8M0, -1.0), 0xFFu);
  EXPECT_EQ(encode(Format::E8M0, ref::kNaN), 0xFFu);
  EXPECT_EQ(encode(Format::E8M0, std::ldexp(1.0, 127)), 0xFEu);
  EXPECT_EQ(encode(Format::E8M0, std::ldexp(1.5, 127), kSat), 0xFEu);
  EXPECT_EQ(encode(Format::E8M0, std::ldexp(1.5, 127), kNoSat), 0xFFu);
  EXPECT_EQ(encode(Format::E8M0, std::ldexp(1.4, 127), kNoSat), 0xFEu);
  EXPECT_EQ(encode(Format::E8M0, ref::kInf, kSat), 0xFEu);
  EXPECT_EQ(encode(Format::E8M0, ref::kInf, kNoSat), 0xFFu);
}

}  // namespace
