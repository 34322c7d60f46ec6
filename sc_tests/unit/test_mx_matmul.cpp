// PE matmul numerics (models/numerics/mx_matmul.h) against a reference written
// here from the format definitions: codes decoded by their formulas in double,
// every FP32 rounding done from the exact value (a double product of two
// floats is exact; a double sum is corrected by its TwoSum error before
// rounding to float), k ascending (SPEC §5).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "models/numerics/mx_matmul.h"
#include "sc_tests/unit/test_mx_matmul_ref.h"

namespace {

using tpb::num::Format;
using namespace tpb::mxref;

const Format kMx[] = {Format::E4M3, Format::E5M2,    Format::E3M4,
                      Format::E2M5, Format::Fp4E2M1, Format::Int4};

TEST(MxMatmulNumerics, DtypeOrdinalsAndWordSizes) {
  EXPECT_EQ(tpb::num::mx_element_format(0x0E), Format::E4M3);
  EXPECT_EQ(tpb::num::mx_element_format(0x0F), Format::E5M2);
  EXPECT_EQ(tpb::num::mx_element_format(0x10), Format::Fp4E2M1);
  EXPECT_FALSE(tpb::num::mx_element_format(0x05).has_value());
  EXPECT_EQ(tpb::num::plain_element_format(0x05), Format::Bf16);
  EXPECT_FALSE(tpb::num::plain_element_format(0x10).has_value());
  EXPECT_EQ(tpb::num::mx_word_bytes(Format::E4M3), 4u);
  EXPECT_EQ(tpb::num::mx_word_bytes(Format::Fp4E2M1), 2u);
}

TEST(MxMatmulNumerics, E8M0ScaleIsExactAndFFIsNaN) {
  EXPECT_EQ(tpb::num::e8m0_scale(127), 1.0f);
  EXPECT_EQ(tpb::num::e8m0_scale(128), 2.0f);
  EXPECT_EQ(double(tpb::num::e8m0_scale(0)), std::ldexp(1.0, -127));
  EXPECT_EQ(double(tpb::num::e8m0_scale(254)), std::ldexp(1.0, 127));
  EXPECT_TRUE(std::isnan(tpb::num::e8m0_scale(0xFF)));
}

TEST(MxMatmulNumerics, DecodeX4EveryCodeInEveryLaneUnderEdgeScales) {
  const std::uint8_t scales[] = {0, 1, 100, 126, 127, 128, 140, 200, 253, 254, 255};
  for (Format f : kMx) {
    const bool four = tpb::num::mx_word_bytes(f) == 2;
    const unsigned codes = four ? 16 : 256;
    for (std::uint8_t s : scales)
      for (unsigned lane = 0; lane < 4; ++lane)
        for (unsigned c = 0; c < codes; ++c) {
          // code c in `lane`, a different code in the other lanes
          std::uint32_t word = 0;
          for (unsigned l = 0; l < 4; ++l) {
            const unsigned code = l == lane ? c : (c * 7 + l * 3 + 1) % codes;
            word |= code << (four ? 4 * l : 8 * l);
          }
          float out[4];
          tpb::num::decode_x4(f, word, s, out);
          const unsigned code = c;
          ASSERT_TRUE(same(out[lane], ref_value(f, code, s)))
              << int(f) << " code " << c << " lane " << lane << " s " << int(s) << ": got "
              << out[lane] << " want " << ref_value(f, code, s);
        }
  }
}

TEST(MxMatmulNumerics, PlainDecodeBf16Fp16Fp32) {
  EXPECT_EQ(tpb::num::decode_plain(Format::Bf16, 0x3F80), 1.0f);
  EXPECT_EQ(tpb::num::decode_plain(Format::Bf16, 0xC0A0), -5.0f);
  EXPECT_EQ(tpb::num::decode_plain(Format::Fp16, 0x3C00), 1.0f);
  EXPECT_EQ(double(tpb::num::decode_plain(Format::Fp16, 0x0001)), std::ldexp(1.0, -24));
  EXPECT_EQ(tpb::num::decode_plain(Format::Fp32, 0x40490FDBu), 3.14159274101257324f);
  EXPECT_TRUE(same(tpb::num::decode_plain(Format::E4M3, 0x7F), std::nanf("")));
}

// k ascending, one rounding per add: 2^24 + 1 + 1 stays 2^24; the other order
// would give 2^24 + 2.
TEST(MxMatmulNumerics, SumIsKAscendingWithOneRoundingPerAdd) {
  const float w[3] = {1, 1, 1};
  const float x[3] = {16777216.0f, 1.0f, 1.0f};
  float acc = 0;
  tpb::num::matmul_fp32(w, x, 3, 1, 1, &acc, false);
  EXPECT_EQ(acc, 16777216.0f);
  const float x2[3] = {1.0f, 1.0f, 16777216.0f};
  tpb::num::matmul_fp32(w, x2, 3, 1, 1, &acc, false);
  EXPECT_EQ(acc, 16777218.0f);
}

// Accumulate: the old PSUM value is the first addend.
TEST(MxMatmulNumerics, AccumulateStartsFromTheOldValue) {
  const float w[2] = {1, 1};
  const float x[2] = {1.0f, 1.0f};
  float acc = 16777216.0f;
  tpb::num::matmul_fp32(w, x, 2, 1, 1, &acc, true);
  EXPECT_EQ(acc, 16777216.0f);  // (2^24 + 1) + 1, each rounded to even
}

// No fused multiply-add: (1 + 2^-12)^2 rounds to 1 + 2^-11 before the add,
// so -(1 + 2^-11) + that is exactly 0 (an FMA would give 2^-24).
TEST(MxMatmulNumerics, ProductIsRoundedBeforeTheAdd) {
  const float a = 1.0f + std::ldexp(1.0f, -12);
  const float w[2] = {-1.0f, a};
  const float x[2] = {1.0f + std::ldexp(1.0f, -11), a};
  float acc = 7;
  tpb::num::matmul_fp32(w, x, 2, 1, 1, &acc, false);
  EXPECT_EQ(acc, 0.0f);
}

TEST(MxMatmulNumerics, SignedZeroAndSpecials) {
  const float w[2] = {-0.0f, -0.0f};
  const float x[2] = {1.0f, 1.0f};
  float acc = 5;
  tpb::num::matmul_fp32(w, x, 2, 1, 1, &acc, false);
  EXPECT_TRUE(std::signbit(acc) && acc == 0.0f);  // -0 + -0 = -0: the first addend is a product
  const float inf = std::numeric_limits<float>::infinity();
  const float wi[2] = {inf, 1.0f};
  const float xi[2] = {1.0f, -inf};
  tpb::num::matmul_fp32(wi, xi, 2, 1, 1, &acc, false);
  EXPECT_TRUE(std::isnan(acc));
}

// Random operands over a wide exponent range (rounding in nearly every add),
// M x N outputs, against the reference, accumulate on and off.
TEST(MxMatmulNumerics, RandomMatmulsAgainstTheReference) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t kdim = 1 + rng() % 512, M = 1 + rng() % 9, N = 1 + rng() % 70;
    const bool accumulate = trial % 2;
    const Format fw = kMx[rng() % 6], fx = kMx[rng() % 6];
    std::vector<float> w(kdim * M), x(kdim * N), acc(M * N), want(M * N);
    auto draw = [&](Format f) {
      const unsigned codes = tpb::num::mx_word_bytes(f) == 2 ? 16 : 256;
      std::uint32_t c = rng() % codes;
      // mostly finite codes: avoid the E4M3 / IEEE top codes most of the time
      if (rng() % 64 != 0) c &= (codes == 256 ? 0xEF : 0xF);
      const std::uint8_t s = std::uint8_t(110 + rng() % 36);
      return ref_value(f, c, s);
    };
    for (auto& v : w) v = draw(fw);
    for (auto& v : x) v = draw(fx);
    for (std::size_t i = 0; i < acc.size(); ++i) acc[i] = want[i] = draw(Format::E5M2);
    for (std::size_t m = 0; m < M; ++m)
      for (std::size_t n = 0; n < N; ++n) {
        float a = accumulate ? want[m * N + n] : ref_mul(w[m], x[n]);
        for (std::size_t k = accumulate ? 0 : 1; k < kdim; ++k)
          a = ref_add(a, ref_mul(w[k * M + m], x[k * N + n]));
        want[m * N + n] = a;
      }
    tpb::num::matmul_fp32(w.data(), x.data(), kdim, M, N, acc.data(), accumulate);
    for (std::size_t i = 0; i < acc.size(); ++i)
      ASSERT_TRUE(same(acc[i], want[i]))
          << "trial " << trial << " element " << i << ": got " << acc[i] << " want " << want[i];
  }
}

}  // namespace
