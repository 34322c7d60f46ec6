// timing::ClockDivider and the cycles_to_ps that uses it, against the
// hardware divide and a 128-bit reference of the rounding rule
// (ps = round(cycles * 1e6 / mhz), saturating at kMaxPs).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "models/timing/timing_profile.h"

namespace tpb::timing {
namespace {

std::uint64_t ref_ps(std::uint64_t cycles, std::uint32_t mhz) {
  const unsigned __int128 d = mhz > 1 ? mhz : 1;
  const unsigned __int128 ps = (static_cast<unsigned __int128>(cycles) * 1000000u + mhz / 2) / d;
  return ps > TimingConfig::kMaxPs ? TimingConfig::kMaxPs : static_cast<std::uint64_t>(ps);
}

const std::vector<std::uint32_t>& divisors() {
  static const std::vector<std::uint32_t> v = {
      0,    1,    2,     3,     7,     600,      1000,        1200,
      1400, 2400, 65535, 65536, 99991, 1u << 31, 0xFFFFFFFEu, 0xFFFFFFFFu};
  return v;
}

TEST(ClockDivider, QuotientIsTheHardwareDivideOnEdgesAndRandomNumerators) {
  std::mt19937_64 rng(20261201);
  for (const std::uint32_t mhz : divisors()) {
    const ClockDivider c(mhz);
    const std::uint64_t d = mhz > 1 ? mhz : 1;
    EXPECT_EQ(c.mhz(), mhz);
    std::vector<std::uint64_t> ns = {0,
                                     1,
                                     d - 1,
                                     d,
                                     d + 1,
                                     2 * d - 1,
                                     2 * d,
                                     UINT64_MAX,
                                     UINT64_MAX - 1,
                                     UINT64_MAX - d,
                                     UINT64_MAX / d * d,
                                     UINT64_MAX / d * d - 1};
    for (int k = 0; k < 20000; ++k) {
      const std::uint64_t n = rng() >> (rng() % 64);  // every magnitude
      ns.push_back(n);
      ns.push_back(n / d * d);  // exact multiples and their neighbours
      ns.push_back(n / d * d - 1);
    }
    for (const std::uint64_t n : ns) ASSERT_EQ(c.quotient(n), n / d) << n << " / " << d;
  }
}

TEST(ClockDivider, CyclesToPsIsTheSameWithEitherDivisorAndRoundsToNearest) {
  std::mt19937_64 rng(7);
  for (const std::uint32_t mhz : divisors()) {
    const ClockDivider c(mhz);
    std::vector<std::uint64_t> cycles = {0,
                                         1,
                                         2,
                                         1000,
                                         TimingConfig::kNarrowCycles - 1,
                                         TimingConfig::kNarrowCycles,
                                         TimingConfig::kNarrowCycles + 1,
                                         UINT64_MAX};
    for (int k = 0; k < 5000; ++k) cycles.push_back(rng() >> (rng() % 64));
    for (const std::uint64_t n : cycles) {
      const std::uint64_t want = ref_ps(n, mhz);
      ASSERT_EQ(TimingConfig::cycles_to_ps(n, c), want) << n << " cycles at " << mhz;
      ASSERT_EQ(TimingConfig::cycles_to_ps(n, mhz), want) << n << " cycles at " << mhz;
    }
  }
  // Known values: 1200 MHz is 833.33 ps a cycle, 1400 MHz 714.29.
  EXPECT_EQ(TimingConfig::cycles_to_ps(1, ClockDivider(1200)), 833u);
  EXPECT_EQ(TimingConfig::cycles_to_ps(3, ClockDivider(1200)), 2500u);
  EXPECT_EQ(TimingConfig::cycles_to_ps(1, ClockDivider(1400)), 714u);
  EXPECT_EQ(TimingConfig::cycles_to_ps(7, ClockDivider(1400)), 5000u);
}

}  // namespace
}  // namespace tpb::timing
