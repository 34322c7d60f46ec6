// NF4 encode (seed 000 §4.2 codebook, SPEC §9 convert: nearest entry, ties to
// the even index, saturating at the end entries) against an exact rational
// reference written here: a double and the FP32 entries are scaled to one
// integer grid (__int128) and the distances compared without rounding.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include "models/numerics/formats.h"
#include "sc_tests/unit/test_numerics_ref.h"

namespace {

namespace ref = tpb::numref;
using tpb::num::encode;
using tpb::num::Format;
using i128 = __int128;

// x = m * 2^e exactly (m a 53-bit integer, or 0).
struct Exact {
  std::int64_t m;
  int e;
};
Exact exact(double x) {
  int e = 0;
  const double f = std::frexp(x, &e);  // x = f * 2^e, 0.5 <= |f| < 1
  return {static_cast<std::int64_t>(std::ldexp(f, 53)), e - 53};
}

// Sign of |v - a| - |v - b|, exactly, for finite v with 2^-60 <= |v| <= 4
// and FP32 entries a, b (|a|, |b| <= 1; their ulps are >= 2^-150 but every
// entry here is a multiple of 2^-30).
constexpr int kGrid = -120;  // every value compared is an integer multiple of 2^kGrid
int compare_distance(double v, float a, float b) {
  auto scaled = [](double x) -> i128 {
    if (x == 0) return 0;
    const Exact q = exact(x);
    EXPECT_GE(q.e, kGrid);
    return static_cast<i128>(q.m) * (i128{1} << (q.e - kGrid));  // m < 0: no shift of a negative
  };
  const i128 sv = scaled(v), sa = scaled(a), sb = scaled(b);
  const i128 da = sv > sa ? sv - sa : sa - sv, db = sv > sb ? sv - sb : sb - sv;
  return da < db ? -1 : (da > db ? 1 : 0);
}

// The reference index: the nearest entry by exact distance, a tie to the even
// index; saturating outside [-1, 1]; NaN the zero entry (index 7).
unsigned reference_nf4(double v) {
  if (std::isnan(v)) return 7;
  if (v <= -1.0) return 0;
  if (v >= 1.0) return 15;
  if (std::fabs(v) < 0x1p-60) return 7;  // nearer 0.0 than any other entry by far
  unsigned best = 0;
  for (unsigned i = 1; i < 16; ++i) {
    const int c = compare_distance(v, ref::kNf4[i], ref::kNf4[best]);
    if (c < 0 || (c == 0 && i % 2 == 0)) best = i;
  }
  return best;
}

std::string convert(const char* value) {
  std::string err;
  const auto r = tpb::num::convert_line(Format::Fp32, Format::Nf4, value, err);
  return r ? *r : "error: " + err;
}

// The reference itself on hand-checked points (so the comparisons below
// test the code, not a broken reference).
TEST(NumericsNf4, ReferenceAgreesWithHandCheckedPoints) {
  EXPECT_EQ(reference_nf4(0.5), 12u);  // 0.4407 is 0.0593 away, 0.5626 0.0626
  EXPECT_EQ(reference_nf4(-0.04), 7u);
  EXPECT_EQ(reference_nf4(-0.05), 6u);  // -0.0910 is 0.0410 away, 0 is 0.05
  EXPECT_EQ(reference_nf4(0.9), 15u);   // 1.0 is 0.1 away, 0.7229 0.177
  EXPECT_EQ(reference_nf4(1e300), 15u);
  EXPECT_EQ(reference_nf4(-ref::kInf), 0u);
}

TEST(NumericsNf4, EveryEntryEncodesToItsIndex) {
  for (unsigned i = 0; i < 16; ++i) {
    EXPECT_EQ(encode(Format::Nf4, ref::kNf4[i]), i);
    EXPECT_EQ(tpb::num::decode(Format::Nf4, i), static_cast<double>(ref::kNf4[i]));
  }
}

// Every midpoint (exact in double) and its neighbours one double ulp and one
// FP32 ulp either side, against the reference.
TEST(NumericsNf4, MidpointsAndTheirNeighboursMatchTheExactReference) {
  for (int i = 0; i < 15; ++i) {
    const double a = ref::kNf4[i], b = ref::kNf4[i + 1];
    const double mid = (a + b) / 2;
    ASSERT_EQ(mid - a, b - mid) << i;  // exact midpoint
    const unsigned even = i % 2 == 0 ? unsigned(i) : unsigned(i + 1);
    EXPECT_EQ(reference_nf4(mid), even) << i;
    EXPECT_EQ(encode(Format::Nf4, mid), even) << i;
    const double neighbours[] = {
        std::nextafter(mid, -2.0),
        std::nextafter(mid, 2.0),
        static_cast<double>(std::nextafter(static_cast<float>(mid), -2.0f)),
        static_cast<double>(std::nextafter(static_cast<float>(mid), 2.0f)),
        static_cast<double>(static_cast<float>(mid)),
    };
    for (const double v : neighbours) {
      EXPECT_EQ(encode(Format::Nf4, v), reference_nf4(v)) << i << " " << v;
      if (v != mid) {
        EXPECT_EQ(encode(Format::Nf4, v), v < mid ? unsigned(i) : unsigned(i + 1)) << i << " " << v;
      }
    }
  }
}

// Huge magnitudes and the infinities saturate to the end entries (the old
// nearest search lost every distance to rounding past 2^52 and picked 0xE).
TEST(NumericsNf4, HugeValuesAndInfinitiesSaturateToTheEndEntries) {
  const double huge[] = {0x1p52,  0x1p53 + 2, 1e20,      static_cast<double>(FLT_MAX),
                         DBL_MAX, ref::kInf,  1.0000001, 2.0};
  for (const double v : huge) {
    EXPECT_EQ(encode(Format::Nf4, v), 15u) << v;
    EXPECT_EQ(encode(Format::Nf4, -v), 0u) << v;
    EXPECT_EQ(reference_nf4(v), 15u);
    EXPECT_EQ(reference_nf4(-v), 0u);
  }
  EXPECT_EQ(encode(Format::Nf4, ref::kNaN), 7u);
  EXPECT_EQ(encode(Format::Nf4, -0.0), 7u);
  EXPECT_EQ(encode(Format::Nf4, DBL_TRUE_MIN), 7u);
  EXPECT_EQ(encode(Format::Nf4, -DBL_TRUE_MIN), 7u);
}

TEST(NumericsNf4, ConvertLinesSaturate) {
  EXPECT_EQ(convert("1e20"), "1e20 -> 0xF 1");
  EXPECT_EQ(convert("-1e20"), "-1e20 -> 0x0 -1");
  EXPECT_EQ(convert("inf"), "inf -> 0xF 1");
  EXPECT_EQ(convert("-inf"), "-inf -> 0x0 -1");
  EXPECT_EQ(convert("3.4028234663852886e38"), "3.4028234663852886e38 -> 0xF 1");
  EXPECT_EQ(convert("-3.4028234663852886e38"), "-3.4028234663852886e38 -> 0x0 -1");
  EXPECT_EQ(convert("1e39"), "1e39 -> 0xF 1");  // past FLT_MAX: fp32 Inf first
  EXPECT_EQ(convert("nan"), "nan -> 0x7 0");
  EXPECT_EQ(convert("0x7F7FFFFF"), "0x7F7FFFFF -> 0xF 1");   // FLT_MAX by its code
  EXPECT_EQ(convert("0xFF800000"), "0xFF800000 -> 0x0 -1");  // -Inf by its code
}

// Every FP32 value near each entry and midpoint, and random doubles and FP32
// values over the whole range, against the reference.
TEST(NumericsNf4, RandomAndDenseValuesMatchTheExactReference) {
  std::mt19937_64 rng(0x4e4634);
  std::uniform_real_distribution<double> in_range(-1.25, 1.25);
  for (int k = 0; k < 300000; ++k) {
    const double v = in_range(rng);
    ASSERT_EQ(encode(Format::Nf4, v), reference_nf4(v)) << v;
    const double f = static_cast<float>(v);
    ASSERT_EQ(encode(Format::Nf4, f), reference_nf4(f)) << f;
  }
  // Any FP32 bit pattern (every exponent, both signs, Inf and NaN).
  for (int k = 0; k < 300000; ++k) {
    const double f = tpb::num::f32_from_bits(static_cast<std::uint32_t>(rng()));
    ASSERT_EQ(encode(Format::Nf4, f), reference_nf4(f)) << f;
  }
  // 200 FP32 values either side of every entry and every midpoint.
  for (int i = 0; i < 16; ++i)
    for (const double centre : {static_cast<double>(ref::kNf4[i]),
                                i < 15 ? (double{ref::kNf4[i]} + ref::kNf4[i + 1]) / 2 : 1.0}) {
      float lo = static_cast<float>(centre), hi = lo;
      for (int s = 0; s < 200; ++s) {
        lo = std::nextafter(lo, -3.0f);
        hi = std::nextafter(hi, 3.0f);
        ASSERT_EQ(encode(Format::Nf4, lo), reference_nf4(lo)) << lo;
        ASSERT_EQ(encode(Format::Nf4, hi), reference_nf4(hi)) << hi;
      }
    }
}

}  // namespace
