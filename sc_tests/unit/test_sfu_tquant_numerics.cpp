// TQUANT arithmetic (seed 002, SPEC §6) against an oracle written with exact
// rational arithmetic (boost::multiprecision::cpp_rational): x and the
// multiplier are decoded with frexp into exact rationals, x * m + zp is formed
// as a rational, rounded by RMode from its floor and fractional part, then
// clamped or reduced modulo 256 with big integers. Independent of the model's
// 128-bit dyadic method.
#include <gtest/gtest.h>

// GCC reports a false -Wmaybe-uninitialized inside Boost.Multiprecision's
// cpp_int limbs where this file instantiates it.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <cstring>
#include <random>

#include "models/numerics/tquant.h"

namespace {

using boost::multiprecision::cpp_int;
using boost::multiprecision::cpp_rational;
using tpb::num::QuantResult;
using tpb::num::QuantType;
using tpb::num::RMode;

std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// The exact rational value of a finite float.
cpp_rational exact(float f) {
  int e = 0;
  const double m = std::frexp(static_cast<double>(f), &e);      // f = m * 2^e, |m| in [0.5, 1)
  const auto mant = static_cast<long long>(std::ldexp(m, 53));  // exact: 24 significant bits
  cpp_rational r(mant);
  const int sh = e - 53;
  if (sh >= 0)
    r *= cpp_rational(cpp_int(1) << sh);
  else
    r /= cpp_rational(cpp_int(1) << -sh);
  return r;
}

cpp_int floor_of(const cpp_rational& v) {
  const cpp_int n = numerator(v), d = denominator(v);  // d > 0
  cpp_int q = n / d;                                   // truncates toward zero
  if (q * d != n && n < 0) q -= 1;
  return q;
}

QuantResult oracle(float x, float m, int zp, QuantType t, RMode rm, bool sat) {
  const cpp_rational v = exact(x) * exact(m) + cpp_rational(zp);
  const cpp_int fl = floor_of(v);
  const cpp_rational frac = v - cpp_rational(fl);  // in [0, 1)
  QuantResult out;
  cpp_int y = fl;
  if (frac != 0) {
    out.inexact = true;
    const cpp_rational half(1, 2);
    switch (rm) {
      case RMode::Rne:
        y = frac > half ? fl + 1 : frac < half ? fl : (fl % 2 != 0 ? fl + 1 : fl);
        break;
      case RMode::Rmm:
        y = frac > half ? fl + 1 : frac < half ? fl : (v > 0 ? fl + 1 : fl);
        break;
      case RMode::Rtz:
        y = v > 0 ? fl : fl + 1;
        break;
      case RMode::Rdn:
        y = fl;
        break;
      case RMode::Rup:
        y = fl + 1;
        break;
    }
  }
  const cpp_int lo = t == QuantType::S8 ? -128 : 0, hi = t == QuantType::S8 ? 127 : 255;
  if (y < lo || y > hi) {
    if (sat) {
      out.saturated = true;
      y = y < lo ? lo : hi;
    } else {
      out.wrapped = true;
      y = ((y % 256) + 256) % 256;  // the residue in [0, 256)
    }
  }
  if (y < 0) y += 256;
  out.code = static_cast<std::uint8_t>(static_cast<unsigned>(y));
  return out;
}

constexpr RMode kModes[] = {RMode::Rne, RMode::Rtz, RMode::Rdn, RMode::Rup, RMode::Rmm};
constexpr QuantType kTypes[] = {QuantType::S8, QuantType::U8};

void expect_same(float x, float m, int zp, QuantType t, RMode rm, bool sat) {
  const QuantResult got = tpb::num::tquant_element(bits_of(x), bits_of(m), zp, t, rm, sat);
  const QuantResult want = oracle(x, m, zp, t, rm, sat);
  const auto what = ::testing::Message() << "x=" << x << " m=" << m << " zp=" << zp << " "
                                         << (t == QuantType::S8 ? "S8" : "U8") << " "
                                         << tpb::num::rmode_name(rm) << " sat=" << sat;
  EXPECT_EQ(int(got.code), int(want.code)) << what;
  EXPECT_EQ(got.inexact, want.inexact) << what;
  EXPECT_EQ(got.saturated, want.saturated) << what;
  EXPECT_EQ(got.wrapped, want.wrapped) << what;
}

void all_modes(float x, float m, int zp) {
  for (QuantType t : kTypes) {
    if (t == QuantType::S8 ? (zp < -128 || zp > 127) : (zp < 0 || zp > 255)) continue;
    for (RMode rm : kModes)
      for (bool sat : {false, true}) expect_same(x, m, zp, t, rm, sat);
  }
}

// Ties +-0.5, +-1.5, +-2.5 after scaling (x * m), with and without a zero
// point: every RMode x Sat x S8/U8.
TEST(TquantNumerics, TiesAfterScalingEveryModeAgainstTheOracle) {
  for (float tie : {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f})
    for (float m : {1.0f, 0.5f, 2.0f, 0.25f, 3.0f})
      for (int zp : {0, 1, -1, 3, -128, 127, 128, 255}) all_modes(tie / m, m, zp);
}

// Hand-written values of the ties (independent of both implementations).
TEST(TquantNumerics, TieTable) {
  struct Row {
    float v;
    int rne, rtz, rdn, rup, rmm;
  } rows[] = {{0.5f, 0, 0, 0, 1, 1},    {1.5f, 2, 1, 1, 2, 2},       {2.5f, 2, 2, 2, 3, 3},
              {-0.5f, 0, 0, -1, 0, -1}, {-1.5f, -2, -1, -2, -1, -2}, {-2.5f, -2, -2, -3, -2, -3}};
  for (const Row& r : rows) {
    const int want[] = {r.rne, r.rtz, r.rdn, r.rup, r.rmm};
    for (unsigned i = 0; i < 5; ++i) {
      const QuantResult q = tpb::num::tquant_element(bits_of(r.v * 4), bits_of(0.25f), 0,
                                                     QuantType::S8, kModes[i], true);
      EXPECT_EQ(static_cast<std::int8_t>(q.code), want[i]) << r.v << " mode " << i;
      EXPECT_TRUE(q.inexact);
    }
  }
}

TEST(TquantNumerics, BoundsAndBeyond) {
  for (float x :
       {127.0f,  127.4f, 127.5f,  127.6f,   128.0f,    128.5f,   -128.0f,       -128.5f,
        -129.0f, 255.0f, 255.5f,  256.0f,   256.5f,    -0.4f,    -0.5f,         -0.6f,
        -1.0f,   383.0f, -383.5f, 1000.25f, -1000.75f, 65535.5f, 2147483648.0f, -2147483648.0f})
    for (int zp : {0, -128, -5, 5, 127, 200, 255}) all_modes(x, 1.0f, zp);
  // Hand-written: Sat 1 clamps, Sat 0 wraps modulo 256.
  auto q = [](float x, QuantType t, bool sat) {
    return tpb::num::tquant_element(bits_of(x), bits_of(1.0f), 0, t, RMode::Rne, sat);
  };
  EXPECT_EQ(q(200.0f, QuantType::S8, true).code, 0x7F);
  EXPECT_TRUE(q(200.0f, QuantType::S8, true).saturated);
  EXPECT_EQ(q(200.0f, QuantType::S8, false).code, 200);  // -56 as S8
  EXPECT_TRUE(q(200.0f, QuantType::S8, false).wrapped);
  EXPECT_EQ(q(-1.0f, QuantType::U8, true).code, 0);
  EXPECT_EQ(q(-1.0f, QuantType::U8, false).code, 255);
  EXPECT_EQ(q(256.0f, QuantType::U8, false).code, 0);
  EXPECT_EQ(q(127.0f, QuantType::S8, true).saturated, false);
  EXPECT_EQ(q(127.0f, QuantType::S8, true).inexact, false);
}

// Huge products in modulo mode: the residue of the exact integer.
TEST(TquantNumerics, HugeValuesModulo) {
  for (float x : {1e30f, -1e30f, 3.4028235e38f, -3.4028235e38f, 1e20f, 1.5e19f, 3e18f, -7.1e16f,
                  1.8446744e19f, 4294967296.0f, 4294967295.0f, 16777217.0f})
    for (float m : {1.0f, 3.4028235e38f, 1e-30f, 0.1f, 7.0f, 1.5f})
      for (int zp : {0, 1, -1, 77, 255, -128}) all_modes(x, m, zp);
  // 1e30f is an integer multiple of 2^76: 0 mod 256, so y = zp.
  const QuantResult r =
      tpb::num::tquant_element(bits_of(1e30f), bits_of(1.0f), 5, QuantType::U8, RMode::Rne, false);
  EXPECT_EQ(r.code, 5);
  EXPECT_TRUE(r.wrapped);
  EXPECT_FALSE(r.inexact);
}

// Tiny products next to a zero point: the only rounding decides.
TEST(TquantNumerics, TinyProductsAndNegativeZeroPoints) {
  for (float x : {1e-45f, -1e-45f, 1e-30f, -1e-38f, 5.9e-39f, 0.0f, -0.0f, 1e-7f, -0.49999997f})
    for (float m : {1e-45f, 1.0f, 3.4028235e38f, 1e-10f})
      for (int zp : {0, 1, -1, -128, -127, 127, 255, 100}) all_modes(x, m, zp);
}

TEST(TquantNumerics, RandomAgainstTheOracle) {
  std::mt19937 rng(0x7a57u);
  std::uniform_int_distribution<std::uint32_t> any;
  for (int i = 0; i < 20000; ++i) {
    std::uint32_t xb = any(rng), mb = any(rng) & 0x7FFFFFFFu;
    // Favour magnitudes near the destination range.
    if (i % 2) xb = (xb & 0x807FFFFFu) | ((120u + any(rng) % 24u) << 23);
    if (i % 3) mb = (mb & 0x007FFFFFu) | ((110u + any(rng) % 30u) << 23);
    float x, m;
    std::memcpy(&x, &xb, 4);
    std::memcpy(&m, &mb, 4);
    if (!std::isfinite(x) || !std::isfinite(m) || m == 0.0f) continue;
    const QuantType t = kTypes[any(rng) % 2];
    const int zp = t == QuantType::S8 ? static_cast<int>(any(rng) % 256) - 128
                                      : static_cast<int>(any(rng) % 256);
    expect_same(x, m, zp, t, kModes[any(rng) % 5], any(rng) % 2);
  }
}

}  // namespace
