// Throughput of the TensorDequantize word transforms against memcpy of the
// same source bytes (SPEC §3). Bytes processed = source bytes read.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "models/numerics/dequant_stream.h"

namespace {

using tpb::isa::DequantFmt;

constexpr std::size_t kSrcBytes = 16u << 20;  // 16 MiB of source words

std::vector<std::uint32_t> random_words(std::size_t n) {
  std::vector<std::uint32_t> v(n);
  std::mt19937 rng(42);
  for (auto& w : v) w = rng();
  return v;
}

// portable = true: the table paths every host has; false: the SIMD paths
// chosen at run time where the host has them (SSSE3 / AVX2).
void BM_Dequant(benchmark::State& state, DequantFmt fmt, unsigned group, bool portable) {
  tpb::num::dequant_force_portable(portable);
  const auto r = tpb::num::dequant_ratio(fmt, group);
  const std::size_t steps = kSrcBytes / 4 / r.src_words;
  auto src = random_words(steps * r.src_words);
  if (group == 8) {
    // Realistic MX scales: around 127, never 0xFF.
    std::mt19937 rng(7);
    for (std::size_t i = 0; i < steps; ++i) {
      std::uint32_t sw = 0;
      for (int g = 0; g < 4; ++g) sw |= (110u + rng() % 34u) << (8 * g);
      src[i * 5] = sw;
    }
  }
  std::vector<std::uint32_t> dst(steps * r.dst_words);
  tpb::num::dequant_words(fmt, group, src.data(), dst.data(), 1);  // build tables outside timing
  for (auto _ : state) {
    tpb::num::dequant_words(fmt, group, src.data(), dst.data(), steps);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(src.size() * 4));
  state.counters["dst_bytes"] = static_cast<double>(dst.size() * 4);
  tpb::num::dequant_force_portable(false);
}

void BM_Memcpy(benchmark::State& state) {
  const auto src = random_words(kSrcBytes / 4);
  std::vector<std::uint32_t> dst(src.size());
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kSrcBytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(kSrcBytes));
}

BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Dequant, e2m1_g0, DequantFmt::E2M1ToE5M2, 0, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Dequant, e2m1_g0_portable, DequantFmt::E2M1ToE5M2, 0, true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Dequant, int4_g0, DequantFmt::Int4ToE5M2, 0, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Dequant, int4_g0_portable, DequantFmt::Int4ToE5M2, 0, true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Dequant, nf4_g0, DequantFmt::Nf4ToE4M3, 0, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Dequant, nf4_g0_portable, DequantFmt::Nf4ToE4M3, 0, true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Dequant, e2m3_g0, DequantFmt::E2M3ToE4M3, 0, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Dequant, e2m3_g0_portable, DequantFmt::E2M3ToE4M3, 0, true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Dequant, e2m1_g8, DequantFmt::E2M1ToE5M2, 8, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Dequant, e2m1_g8_portable, DequantFmt::E2M1ToE5M2, 8, true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Dequant, int4_g8, DequantFmt::Int4ToE5M2, 8, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Dequant, int4_g8_portable, DequantFmt::Int4ToE5M2, 8, true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Dequant, nf4_g8, DequantFmt::Nf4ToE4M3, 8, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Dequant, nf4_g8_portable, DequantFmt::Nf4ToE4M3, 8, true)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
