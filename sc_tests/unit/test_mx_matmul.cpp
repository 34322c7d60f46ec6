// PE matmul numerics (models/numerics/mx_matmul.h) against a reference written
// here from the format definitions: codes decoded by their formulas in double,
// every FP32 rounding done from the exact value (a double product of two
// floats is exact; a double sum is corrected by its TwoSum error before
// rounding to float), k ascending (SPEC §5).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
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

// ---- SIMD paths (models/numerics/simd.h) -------------------------------------------

namespace {

using tpb::num::SimdPath;

// Forces a path for one scope.
struct ForcePath {
  explicit ForcePath(SimdPath p) { tpb::num::simd_force_path(p); }
  ~ForcePath() { tpb::num::simd_force_path(std::nullopt); }
};

bool same_bits(float a, float b) { return std::memcmp(&a, &b, 4) == 0; }

// The flags line of /proc/cpuinfo (what the kernel says the CPU has).
std::string cpu_flags() {
  std::FILE* f = std::fopen("/proc/cpuinfo", "r");
  if (!f) return "";
  char line[8192];
  std::string flags;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "flags", 5) == 0) {
      flags = std::string(" ") + line;
      break;
    }
  std::fclose(f);
  for (char& c : flags)
    if (c == '\t' || c == '\n' || c == ':') c = ' ';
  return flags + " ";
}

// The reference of SPEC §5 on row-major operands.
std::vector<float> reference_matmul(const std::vector<float>& w, const std::vector<float>& x,
                                    std::size_t kdim, std::size_t M, std::size_t N,
                                    std::vector<float> acc, bool accumulate) {
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t n = 0; n < N; ++n) {
      float a = accumulate ? acc[m * N + n] : ref_mul(w[m], x[n]);
      for (std::size_t k = accumulate ? 0 : 1; k < kdim; ++k)
        a = ref_add(a, ref_mul(w[k * M + m], x[k * N + n]));
      acc[m * N + n] = a;
    }
  return acc;
}

// A value for a random operand: mostly MX code x scale values over a wide
// range; sometimes a special (NaN with a payload, +-Inf, +-0, subnormal, huge).
float draw_value(std::mt19937_64& rng, bool specials) {
  const unsigned r = unsigned(rng() % 1000);
  if (specials && r < 40) {
    switch (r % 8) {
      case 0:
        return tpb::num::f32_from_bits(0x7FC00000u | std::uint32_t(rng() & 0x3FFFFF) |
                                       (rng() % 2 ? 0x80000000u : 0));
      case 1:
        return std::numeric_limits<float>::infinity();
      case 2:
        return -std::numeric_limits<float>::infinity();
      case 3:
        return rng() % 2 ? 0.0f : -0.0f;
      case 4:
        return tpb::num::f32_from_bits(std::uint32_t(1 + rng() % 0x7FFFFF));  // subnormal
      case 5:
        return std::ldexp(1.0f + float(rng() % 8) / 8, 100 + int(rng() % 27));  // huge
      case 6:
        return std::ldexp(1.0f + float(rng() % 8) / 8, -126 - int(rng() % 20));  // tiny
      default:
        return -std::ldexp(1.0f, 127);
    }
  }
  const Format f = kMx[rng() % 6];
  const unsigned codes = tpb::num::mx_word_bytes(f) == 2 ? 16 : 256;
  std::uint32_t c = std::uint32_t(rng() % codes) & (codes == 256 ? 0xEF : 0xF);
  return ref_value(f, c, std::uint8_t(100 + rng() % 56));
}

}  // namespace

TEST(MxMatmulSimd, PathNamesHostSupportAndForcing) {
  EXPECT_EQ(tpb::num::simd_path_from_name("baseline"), SimdPath::Baseline);
  EXPECT_EQ(tpb::num::simd_path_from_name("avx2"), SimdPath::Avx2);
  EXPECT_EQ(tpb::num::simd_path_from_name("avx512"), SimdPath::Avx512);
  EXPECT_FALSE(tpb::num::simd_path_from_name("sse9").has_value());
  EXPECT_TRUE(tpb::num::simd_path_supported(SimdPath::Baseline));
#if defined(__x86_64__)
  // The host's own account of its CPU, /proc/cpuinfo, decides what must run.
  const std::string flags = cpu_flags();
  if (!flags.empty()) {
    EXPECT_EQ(tpb::num::simd_path_supported(SimdPath::Avx2),
              flags.find(" avx2 ") != std::string::npos);
    EXPECT_EQ(tpb::num::simd_path_supported(SimdPath::Avx512),
              flags.find(" avx512f ") != std::string::npos);
  }
#endif
  const std::vector<SimdPath> paths = tpb::num::simd_supported_paths();
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths.front(), SimdPath::Baseline);
  for (SimdPath p : {SimdPath::Baseline, SimdPath::Avx2, SimdPath::Avx512}) {
    if (tpb::num::simd_path_supported(p)) {
      ForcePath f(p);
      EXPECT_EQ(tpb::num::simd_path(), p);
    } else {
      try {
        tpb::num::simd_force_path(p);
        FAIL() << "forcing an unsupported path was accepted";
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(tpb::num::simd_path_name(p)), std::string::npos);
      }
    }
  }
  // Unforced: the host's best path (or TPBSIM_SIMD's choice).
  std::string warning;
  EXPECT_EQ(tpb::num::simd_path(),
            tpb::num::simd_path_for_env(std::getenv("TPBSIM_SIMD"), warning));
}

TEST(MxMatmulSimd, EnvironmentValuesAndTheirWarnings) {
  std::string warning;
  const SimdPath best = tpb::num::simd_supported_paths().back();
  EXPECT_EQ(tpb::num::simd_path_for_env(nullptr, warning), best);
  EXPECT_TRUE(warning.empty());
  EXPECT_EQ(tpb::num::simd_path_for_env("auto", warning), best);
  EXPECT_TRUE(warning.empty());
  EXPECT_EQ(tpb::num::simd_path_for_env("baseline", warning), SimdPath::Baseline);
  EXPECT_TRUE(warning.empty());
  EXPECT_EQ(tpb::num::simd_path_for_env("avx3", warning), best);
  EXPECT_NE(warning.find("TPBSIM_SIMD=avx3 names no SIMD path"), std::string::npos) << warning;
  const SimdPath got = tpb::num::simd_path_for_env("avx512", warning);
  if (tpb::num::simd_path_supported(SimdPath::Avx512)) {
    EXPECT_EQ(got, SimdPath::Avx512);
    EXPECT_TRUE(warning.empty());
  } else {
    EXPECT_EQ(got, best);  // the best at or below AVX-512
    EXPECT_NE(warning.find("this host does not support avx512"), std::string::npos) << warning;
  }
}

// Random shapes (tile edges in M and N, short and long contractions), values
// over the whole FP32 range with NaN payloads, infinities, signed zeros,
// subnormals and overflowing products: every path against the reference,
// and bit for bit against the baseline path.
TEST(MxMatmulSimd, RandomShapesOnEveryPathAgainstTheReference) {
  std::mt19937_64 rng(2024);
  const std::size_t Ms[] = {1, 3, 7, 8, 9, 15, 16, 17, 31, 64, 100, 128, 130};
  const std::size_t Ns[] = {1, 2, 5, 31, 32, 33, 63, 65, 100, 200, 512, 513};
  for (int trial = 0; trial < 36; ++trial) {
    const std::size_t M = Ms[rng() % std::size(Ms)], N = Ns[rng() % std::size(Ns)];
    // Keep the reference's work bounded: M x N x kdim <= 2^21.
    const std::size_t kmax =
        std::max<std::size_t>(1, std::min<std::size_t>(600, (1u << 21) / (M * N)));
    const std::size_t kdim = trial < 3 ? std::size_t(trial + 1) : 1 + rng() % kmax;
    const bool accumulate = trial % 2 == 1, specials = trial % 3 != 0;
    std::vector<float> w(kdim * M), x(kdim * N), acc0(M * N);
    for (auto& v : w) v = draw_value(rng, specials);
    for (auto& v : x) v = draw_value(rng, specials);
    for (auto& v : acc0) v = draw_value(rng, specials);
    const std::vector<float> want = reference_matmul(w, x, kdim, M, N, acc0, accumulate);
    std::vector<float> base;
    for (SimdPath p : tpb::num::simd_supported_paths()) {
      std::vector<float> acc = acc0;
      tpb::num::matmul_fp32(w.data(), x.data(), kdim, M, N, acc.data(), accumulate, p);
      for (std::size_t i = 0; i < acc.size(); ++i)
        ASSERT_TRUE(same(acc[i], want[i]))
            << tpb::num::simd_path_name(p) << " trial " << trial << " (K " << kdim << ", M " << M
            << ", N " << N << ") element " << i << ": got " << acc[i] << " want " << want[i];
      if (p == SimdPath::Baseline) {
        base = acc;
        continue;
      }
      for (std::size_t i = 0; i < acc.size(); ++i)
        ASSERT_TRUE(same_bits(acc[i], base[i]))
            << tpb::num::simd_path_name(p) << " trial " << trial << " element " << i << ": bits 0x"
            << std::hex << tpb::num::bits_from_f32(acc[i]) << " baseline 0x"
            << tpb::num::bits_from_f32(base[i]);
    }
  }
}

// The edge cases by name, each with its value from the format definitions,
// on every path: FP32 products of large scales overflow to Inf, Inf - Inf is
// NaN, tiny products underflow to subnormals or zero, subnormal sums are
// exact, a huge sum overflows, -0 survives an overwrite.
TEST(MxMatmulSimd, OverflowInfNaNSubnormalAndSignedZeroOnEveryPath) {
  const float inf = std::numeric_limits<float>::infinity();
  const float big = std::ldexp(1.0f, 127), tiny = std::ldexp(1.0f, -70);
  // Output n uses column n of x against one row of w (M = 1) over k = 0, 1.
  struct Case {
    float w0, x0, w1, x1, want;  // NaN want: any NaN
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Case cases[] = {
      {big, big, 0.0f, 1.0f, inf},                       // 2^254 overflows
      {big, -2.0f, 1.0f, 1.0f, -inf},                    // -2^128 overflows
      {big, big, -big, big, nan},                        // Inf + -Inf
      {tiny, tiny, 0.0f, 0.0f, std::ldexp(1.0f, -140)},  // subnormal product, exact
      {tiny, std::ldexp(1.0f, -80), 1.0f, 0.0f, 0.0f},   // 2^-150 ties to 0
      {tiny, std::ldexp(1.5f, -80), 0.0f, 0.0f, std::ldexp(1.0f, -149)},  // rounds up to 2^-149
      {std::ldexp(1.0f, -140), 1.0f, std::ldexp(1.0f, -141), 1.0f,
       std::ldexp(3.0f, -141)},                                         // subnormal sum, exact
      {std::ldexp(1.5f, 127), 1.0f, std::ldexp(1.5f, 127), 1.0f, inf},  // sum overflows
      {-0.0f, 1.0f, -0.0f, 5.0f, -0.0f},                                // -0 + -0
      {-0.0f, 1.0f, 0.0f, 5.0f, 0.0f},                                  // -0 + +0 = +0
      {nan, 1.0f, 1.0f, 1.0f, nan},
      {inf, 0.0f, 1.0f, 1.0f, nan},  // Inf x 0
  };
  const std::size_t N = std::size(cases);
  std::vector<float> w = {1.0f, 1.0f}, x(2 * N);
  // One W value per k for all outputs would tie the cases together: M = N
  // rows instead, each output (n, n) its own case; the others are checked
  // against the reference.
  const std::size_t M = N;
  w.assign(2 * M, 0.0f);
  for (std::size_t i = 0; i < N; ++i) {
    w[0 * M + i] = cases[i].w0;
    w[1 * M + i] = cases[i].w1;
    x[0 * N + i] = cases[i].x0;
    x[1 * N + i] = cases[i].x1;
  }
  const std::vector<float> want = reference_matmul(w, x, 2, M, N, std::vector<float>(M * N), false);
  for (SimdPath p : tpb::num::simd_supported_paths()) {
    std::vector<float> acc(M * N, 7.0f);
    tpb::num::matmul_fp32(w.data(), x.data(), 2, M, N, acc.data(), false, p);
    for (std::size_t i = 0; i < N; ++i) {
      const float got = acc[i * N + i];
      if (std::isnan(cases[i].want))
        EXPECT_TRUE(std::isnan(got)) << tpb::num::simd_path_name(p) << " case " << i << ": " << got;
      else
        EXPECT_TRUE(same_bits(got, cases[i].want)) << tpb::num::simd_path_name(p) << " case " << i
                                                   << ": got " << got << " want " << cases[i].want;
    }
    for (std::size_t e = 0; e < M * N; ++e)
      ASSERT_TRUE(same(acc[e], want[e])) << tpb::num::simd_path_name(p) << " element " << e;
  }
  // The decode side of an overflowing product: 448 x 2^127 is +Inf, 2^-127
  // scales keep subnormals (E4M3 0x01 = 2^-9: 2^-136).
  float v[4];
  tpb::num::decode_x4(Format::E4M3, 0x0000017Eu, 254, v);  // lanes: 0x7E (448), 0x01, 0, 0
  EXPECT_EQ(v[0], inf);
  EXPECT_EQ(double(v[1]), std::ldexp(1.0, 118));
  tpb::num::decode_x4(Format::E4M3, 0x00000001u, 0, v);
  EXPECT_EQ(double(v[0]), std::ldexp(1.0, -136));
}

// A tile range split anywhere (as threads split it) gives the same bits as
// the whole, on every path.
TEST(MxMatmulSimd, AnyTileSplitGivesTheSameBits) {
  std::mt19937_64 rng(8);
  const std::size_t kdim = 96, M = 37, N = 150;
  std::vector<float> w(kdim * M), x(kdim * N);
  for (auto& v : w) v = draw_value(rng, true);
  for (auto& v : x) v = draw_value(rng, true);
  tpb::num::PackedFloats wp, xp;
  tpb::num::pack(w.data(), tpb::num::packed_w_layout(kdim, M), wp);
  tpb::num::pack(x.data(), tpb::num::packed_x_layout(kdim, N), xp);
  const std::size_t tiles = tpb::num::matmul_tiles(M, N);
  EXPECT_EQ(tiles, 5u * 5u);  // ceil(37 / 8) x ceil(150 / 32)
  for (SimdPath p : tpb::num::simd_supported_paths()) {
    std::vector<float> whole(M * N), split(M * N);
    tpb::num::matmul_packed(wp.data(), xp.data(), kdim, M, N, whole.data(), false, 0, tiles, p);
    for (std::size_t t = 0; t < tiles;) {
      const std::size_t e = std::min(tiles, t + 1 + rng() % 6);
      tpb::num::matmul_packed(wp.data(), xp.data(), kdim, M, N, split.data(), false, t, e, p);
      t = e;
    }
    EXPECT_EQ(std::memcmp(whole.data(), split.data(), whole.size() * 4), 0)
        << tpb::num::simd_path_name(p);
  }
}

// The packed decode of a partition: every value as the reference decodes it,
// at the packed index, with the padding left alone; plain elements likewise.
TEST(MxMatmulSimd, PartitionDecodeIntoThePackedLayout) {
  std::mt19937_64 rng(12);
  const std::size_t C = 45;  // not a multiple of either panel width
  for (Format f : kMx) {
    const unsigned wb = tpb::num::mx_word_bytes(f);
    std::vector<std::uint8_t> words(C * wb), scales(C);
    for (auto& b : words) b = std::uint8_t(rng());
    for (std::size_t j = 0; j < C; ++j) scales[j] = j == 3 ? 0xFF : std::uint8_t(rng());
    for (const tpb::num::PackedLayout L :
         {tpb::num::packed_w_layout(12, C), tpb::num::packed_x_layout(12, C)}) {
      std::vector<float> out(L.size(), 1234.0f);
      tpb::num::decode_mx_partition(f, words.data(), scales.data(), 2, L, out.data());
      for (std::size_t j = 0; j < C; ++j) {
        std::uint32_t word = 0;
        std::memcpy(&word, words.data() + j * wb, wb);
        for (unsigned l = 0; l < 4; ++l) {
          const std::uint32_t code = wb == 2 ? (word >> (4 * l)) & 0xF : (word >> (8 * l)) & 0xFF;
          ASSERT_TRUE(same(out[L.index(8 + l, j)], ref_value(f, code, scales[j])))
              << int(f) << " column " << j << " lane " << l;
        }
      }
      std::size_t untouched = 0;
      for (float v : out) untouched += v == 1234.0f;
      EXPECT_EQ(untouched, L.size() - 4 * C);  // only partition 2's k = 8..11, columns < C
    }
  }
  for (Format f : {Format::Bf16, Format::Fp16, Format::Fp32, Format::E4M3, Format::E5M2,
                   Format::E3M4, Format::E2M5}) {
    const unsigned eb = tpb::num::plain_elem_bytes(f);
    std::vector<std::uint8_t> elems(C * eb);
    for (auto& b : elems) b = std::uint8_t(rng());
    const tpb::num::PackedLayout L = tpb::num::packed_x_layout(5, C);
    std::vector<float> out(L.size(), 1234.0f);
    tpb::num::decode_plain_partition(f, elems.data(), 4, L, out.data());
    for (std::size_t j = 0; j < C; ++j) {
      std::uint32_t code = 0;
      std::memcpy(&code, elems.data() + j * eb, eb);
      ASSERT_TRUE(same(out[L.index(4, j)], ref_plain(f, code))) << int(f) << " column " << j;
      ASSERT_TRUE(same_bits(out[L.index(4, j)], tpb::num::decode_plain(f, code)))
          << int(f) << " column " << j;
    }
  }
}

#if defined(__x86_64__)
// NaN bits (docs/CONVENTIONS.md): NaNs with payloads (quiet and signalling)
// meet each other, infinities and zeros; every path gives the bits of the
// x86 rule in the order of the scalar loop: product X x W, sum product +
// partial sum, decode code value x scale.
TEST(MxMatmulSimd, NaNBitsFollowTheX86RuleInOneOrderOnEveryPath) {
  std::mt19937_64 rng(99);
  const auto nanish = [&]() -> float {
    switch (rng() % 6) {
      case 0:
        return f32_bits(0x7FC00000u | std::uint32_t(rng() & 0x3FFFFF));  // quiet, payload
      case 1:
        return f32_bits(0xFF800000u | std::uint32_t(1 + rng() % 0x3FFFFF));  // signalling
      case 2:
        return rng() % 2 ? std::numeric_limits<float>::infinity()
                         : -std::numeric_limits<float>::infinity();
      case 3:
        return rng() % 2 ? 0.0f : -0.0f;
      default:
        return float(int(rng() % 9) - 4);
    }
  };
  const std::size_t kdim = 9, M = 11, N = 70;
  for (int trial = 0; trial < 6; ++trial) {
    const bool accumulate = trial % 2;
    std::vector<float> w(kdim * M), x(kdim * N), acc0(M * N);
    for (auto& v : w) v = nanish();
    for (auto& v : x) v = nanish();
    for (auto& v : acc0) v = nanish();
    std::vector<float> want(M * N);
    for (std::size_t m = 0; m < M; ++m)
      for (std::size_t n = 0; n < N; ++n) {
        float a = accumulate ? acc0[m * N + n] : ref_mul_x86(x[n], w[m]);
        for (std::size_t k = accumulate ? 0 : 1; k < kdim; ++k)
          a = ref_add_x86(ref_mul_x86(x[k * N + n], w[k * M + m]), a);
        want[m * N + n] = a;
      }
    for (SimdPath p : tpb::num::simd_supported_paths()) {
      std::vector<float> acc = acc0;
      tpb::num::matmul_fp32(w.data(), x.data(), kdim, M, N, acc.data(), accumulate, p);
      for (std::size_t i = 0; i < acc.size(); ++i)
        ASSERT_TRUE(same_bits(acc[i], want[i]))
            << tpb::num::simd_path_name(p) << " trial " << trial << " element " << i << ": 0x"
            << std::hex << tpb::num::bits_from_f32(acc[i]) << " want 0x"
            << tpb::num::bits_from_f32(want[i]);
    }
  }
  // Decode: an E4M3 NaN code under the NaN scale keeps the code's NaN.
  float v[4];
  tpb::num::decode_x4(Format::E4M3, 0x000000FFu, 0xFF, v);  // lane 0: -NaN code, lane 1: +0
  const float code_nan = static_cast<float>(tpb::num::decode(Format::E4M3, 0xFF));
  EXPECT_TRUE(same_bits(v[0], quieted(code_nan)));
  EXPECT_TRUE(same_bits(v[1], quieted(std::numeric_limits<float>::quiet_NaN())));
}
#endif
