// Randomised differential test of TensorDequantize through the whole platform
// (sequencer, kernel_info dispatch, firmware stubs, TLM memories) against the
// independent reference of test_platform_ref.h: random formats and groups,
// random 1-D / 2-D / 3-D patterns with positive and negative steps, src and
// dst shapes drawn independently, random channel counts and start partitions.
// Every drawn instruction must also pass the generation's validity checker, so
// this also cross-checks the static contract against what executes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "models/isa/checker.h"
#include "sc_tests/sc/test_platform_harness.h"

namespace tpb {
namespace {

using platref::DequantCase;

// A pattern of `count` words inside a window of `window_words`, or false when
// the drawn shape does not fit (the caller draws again).
bool random_pattern(std::mt19937& rng, std::uint32_t count, std::uint32_t window_words,
                    isa::Tensor3D& t) {
  // Split count into n0 * n1 * n2 with random divisors.
  auto divisor = [&](std::uint32_t n) {
    std::vector<std::uint32_t> d;
    for (std::uint32_t k = 1; k <= n; ++k)
      if (n % k == 0) d.push_back(k);
    return d[rng() % d.size()];
  };
  const std::uint32_t n2 = divisor(count);
  const std::uint32_t n1 = divisor(count / n2);
  const std::uint32_t n0 = count / n2 / n1;
  if (n0 > 65535 || n1 > 65535 || n2 > 65535) return false;
  const std::uint32_t num[3] = {n0, n1, n2};
  std::int64_t step[3];
  // Dim 0 is often contiguous (the DMI fast path); the others stride freely.
  step[0] = (rng() % 3 == 0) ? 1 : static_cast<std::int64_t>(rng() % 7) - 3;
  if (step[0] == 0) step[0] = 2;
  step[1] = static_cast<std::int64_t>(n0) * ((rng() % 2) ? 1 : -1) *
            (1 + static_cast<std::int64_t>(rng() % 3));
  step[2] = static_cast<std::int64_t>(n0) * n1 * 4 * ((rng() % 2) ? 1 : -1);
  // Span of the element offsets.
  std::int64_t lo = 0, hi = 0;
  for (int d = 0; d < 3; ++d) {
    const std::int64_t ext = step[d] * (static_cast<std::int64_t>(num[d]) - 1);
    lo += std::min<std::int64_t>(0, ext);
    hi += std::max<std::int64_t>(0, ext);
  }
  if (hi - lo + 1 > window_words) return false;
  const std::int64_t start = -lo + static_cast<std::int64_t>(rng() % (window_words - (hi - lo)));
  t = {};
  t.start_addr.raw = static_cast<std::uint32_t>(start * 4);  // bench adds window and partition
  for (int d = 0; d < 3; ++d) {
    if (step[d] < INT16_MIN || step[d] > INT16_MAX) return false;
    t.step_elem[d] = static_cast<std::int16_t>(num[d] > 1 ? step[d] : 0);
    t.num_elem[d] = static_cast<std::uint16_t>(num[d]);
  }
  // Destinations must not write one word twice (the checker's no-broadcast
  // rule covers zero steps only; distinct words keep the test's last-write
  // order out of the comparison).
  std::vector<std::int64_t> offs = platref::pattern_offsets(t);
  std::sort(offs.begin(), offs.end());
  return std::adjacent_find(offs.begin(), offs.end()) == offs.end();
}

std::vector<DequantCase> random_cases(std::uint32_t seed, unsigned n) {
  std::mt19937 rng(seed);
  const unsigned pairs[7][2] = {{1, 0}, {2, 0}, {3, 0}, {4, 0}, {1, 8}, {2, 8}, {3, 8}};
  const std::uint32_t window_words = platref::kWindowBytes / 4;
  std::vector<DequantCase> cases;
  while (cases.size() < n) {
    const auto& p = pairs[rng() % 7];
    const unsigned src_unit = p[1] == 8 ? 5 : p[0] == 4 ? 3 : 1;
    const unsigned dst_unit = p[1] == 8 ? 8 : p[0] == 4 ? 4 : 2;
    const std::uint32_t steps = 1 + rng() % 60;
    DequantCase c{p[0], p[1], {}, {}};
    if (!random_pattern(rng, steps * src_unit, window_words, c.src)) continue;
    if (!random_pattern(rng, steps * dst_unit, window_words, c.dst)) continue;
    cases.push_back(c);
  }
  return cases;
}

void run_random(std::uint32_t seed, unsigned channels, unsigned src_part, unsigned dst_part) {
  const std::vector<DequantCase> cases = random_cases(seed, 16);
  // Every drawn instruction passes the static contract as the bench places it.
  for (std::size_t k = 0; k < cases.size(); ++k) {
    isa::Tensor3D s = cases[k].src, d = cases[k].dst;
    s.start_addr.raw = isa::sbuf_addr(
        src_part, static_cast<std::uint32_t>(k) * platref::kWindowBytes + s.start_addr.raw);
    d.start_addr.raw =
        isa::sbuf_addr(dst_part, 0x20000 + static_cast<std::uint32_t>(k) * platref::kWindowBytes +
                                     d.start_addr.raw);
    const isa::CheckResult r = isa::check_instruction(
        platref::dequant_inst(cases[k].fmt, cases[k].group, channels, s, d), isa::Arch::Mariana);
    ASSERT_TRUE(r.valid()) << "case " << k << " fails " << r.failed.front();
  }
  platref::run_dequant_cases(cases, channels, src_part, dst_part);
}

TEST(PlatformDequantRandom, Seed1OneChannel) { run_random(1, 1, 77, 3); }
TEST(PlatformDequantRandom, Seed2ThirtyThreeChannels) { run_random(2, 33, 5, 90); }
TEST(PlatformDequantRandom, Seed3SameStartPartition) { run_random(3, 64, 40, 40); }
TEST(PlatformDequantRandom, Seed4AllChannels) { run_random(4, 128, 0, 0); }

}  // namespace
}  // namespace tpb
