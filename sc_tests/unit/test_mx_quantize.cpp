// The MX quantizers of models/numerics/mx_quantize.h against the format
// definitions (test_numerics_ref.h: the E4M3 values by the textbook formula,
// rounding by a nearest-value search) and the definitions of their scales
// (OCP MX §6.3; the group-8 absmax rule as docs/KERNELS.md states it), and
// with the caller's threads cutting the work any way.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "models/numerics/mx_quantize.h"
#include "sc_tests/unit/test_numerics_ref.h"

namespace {

using namespace tpb;

// The caller's threads as a loop over chunks of exactly `chunk` items (a
// different cut from any real pool's), counting the chunks.
num::ForRanges chunked(std::size_t chunk, std::size_t& chunks) {
  return [chunk, &chunks](std::size_t n, std::size_t, const num::RangeBody& body) {
    for (std::size_t b = 0; b < n; b += chunk, ++chunks) body(b, std::min(n, b + chunk));
  };
}

TEST(MxQuantizeScale, IsTheLargestExponentLessTheElementsEmaxClamped) {
  // OCP MX §6.3: X = 2^(floor(log2(amax)) - emax_elem), as a biased E8M0.
  EXPECT_EQ(num::element_emax(num::Format::E4M3), 8);
  EXPECT_EQ(num::element_emax(num::Format::E5M2), 15);
  EXPECT_EQ(num::element_emax(num::Format::Fp4E2M1), 2);
  EXPECT_EQ(num::element_emax(num::Format::Fp6E2M3), 2);
  for (double amax : {1.0, 1.5, 448.0, 0x1p-100, 0x1.fffffep127}) {
    const int floor_log2 = static_cast<int>(std::floor(std::log2(amax)));
    EXPECT_EQ(num::mx_scale(num::biased_exponent(static_cast<float>(amax)), 8),
              floor_log2 - 8 + 127)
        << amax;
  }
  EXPECT_EQ(num::mx_scale(0, 8), 0);      // a block of zeros
  EXPECT_EQ(num::mx_scale(3, 8), 0);      // below 2^-127: clamped
  EXPECT_EQ(num::mx_scale(254, 0), 254);  // the largest finite scale
}

TEST(MxQuantizeScale, Group8AbsmaxIsTheSmallestPowerOfTwoThatHoldsTheGroup) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  std::uniform_int_distribution<int> ex(-40, 40);
  for (double top : {7.0, 1.0}) {
    std::vector<double> amaxes{top, 2 * top, top / 2, std::nextafter(top, 0.0), 3.0 * top / 4};
    for (int i = 0; i < 2000; ++i) amaxes.push_back(std::ldexp(mant(rng), ex(rng)));
    for (double amax : amaxes) {
      const int s = num::group8_scale(amax, num::Format::Int4, num::Group8Rule::Absmax, top);
      // amax <= top x 2^(s-127) and not with one power of two less.
      EXPECT_LE(amax, std::ldexp(top, s - 127)) << amax << " top " << top;
      EXPECT_GT(amax, std::ldexp(top, s - 128)) << amax << " top " << top;
    }
  }
  EXPECT_EQ(num::group8_scale(0.0, num::Format::Nf4, num::Group8Rule::Absmax, 1.0), 127);
  // The OCP rule is the MX scale with the code's emax (E2M1: 2).
  EXPECT_EQ(num::group8_scale(6.0, num::Format::Fp4E2M1, num::Group8Rule::Ocp, 6.0), 127);
}

TEST(MxQuantizeRows, CodesAndValuesAreTheFormatsOfTheScaledElements) {
  const std::size_t rows = 5, cols = 96;
  std::mt19937_64 rng(3);
  std::normal_distribution<float> n(0, 1);
  std::vector<float> x(rows * cols);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = std::ldexp(n(rng), static_cast<int>(i % 13) - 6);
  x[7] = 0.0f;
  std::vector<std::uint8_t> codes(x.size()), scales(rows * cols / 32);
  std::vector<float> used(x.size());
  num::MxRows q;
  q.x = x.data();
  q.rows = rows;
  q.cols = cols;
  q.codes = codes.data();
  q.scales = scales.data();
  q.used = used.data();
  std::size_t chunks = 0;
  num::mx_quantize_rows(q, chunked(2, chunks));
  EXPECT_EQ(chunks, 3u);  // rows {0, 1}, {2, 3}, {4}
  for (std::size_t b = 0; b < x.size() / 32; ++b) {
    unsigned top = 0;
    for (std::size_t i = 0; i < 32; ++i)
      top = std::max(top, (num::bits_from_f32(x[32 * b + i]) >> 23) & 0xFFu);
    const int s = static_cast<int>(top) - 8 < 0 ? 0 : static_cast<int>(top) - 8;
    ASSERT_EQ(scales[b], s) << "block " << b;
    for (std::size_t i = 32 * b; i < 32 * b + 32; ++i) {
      const double scaled = std::ldexp(static_cast<double>(x[i]), 127 - s);
      EXPECT_EQ(codes[i], numref::nearest_fp8(numref::kE4M3, scaled, 0x7F)) << i;
      EXPECT_EQ(used[i], static_cast<float>(numref::fp8(numref::kE4M3, codes[i])) *
                             std::ldexp(1.0f, s - 127))
          << i;
    }
  }
}

TEST(MxQuantizeRows, AnyCutOfTheRowsGivesTheSameBytes) {
  const std::size_t rows = 17, cols = 64;
  std::mt19937_64 rng(11);
  std::normal_distribution<float> n(0, 3);
  std::vector<float> x(rows * cols);
  for (float& v : x) v = n(rng);
  const auto run = [&](std::size_t chunk) {
    std::vector<std::uint8_t> out(x.size() + rows * cols / 32);
    std::vector<float> used(x.size());
    std::vector<std::uint16_t> bf16(x.size());
    num::MxRows q;
    q.x = x.data();
    q.rows = rows;
    q.cols = cols;
    q.code = num::Format::Fp4E2M1;
    q.emax = 2;
    q.bf16_first = true;
    q.codes = out.data();
    q.scales = out.data() + x.size();
    q.used = used.data();
    q.bf16 = bf16.data();
    std::size_t chunks = 0;
    num::mx_quantize_rows(q, chunked(chunk, chunks));
    return std::make_tuple(out, used, bf16);
  };
  const auto one = run(rows);
  for (std::size_t chunk : {1, 4, 16}) EXPECT_EQ(run(chunk), one) << chunk;
}

}  // namespace
