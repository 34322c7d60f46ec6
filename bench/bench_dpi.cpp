// The cost of one DPI-C call into libtpbsim_dpi (docs/COSIM.md,
// docs/PERFORMANCE.md): each per-transaction function called through the
// shared library's C ABI (the call a simulator's DPI layer makes), and, when
// Verilator is there, the same calls made from SystemVerilog
// (bench_dpi_loop.sv, Verilated): the argument marshalling of packed vectors
// and outputs included. Counter per_call: wall time of one call.
// Verilator's headers first: with SystemC's already included they would
// take its time (bench/harness.h includes SystemC; the loop is plain C++).
#ifdef TPBSIM_BENCH_SV
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <svdpi.h>
#include <verilated.h>

#include "Vbench_dpi_loop.h"
#include "Vbench_dpi_loop__Dpi.h"
#pragma GCC diagnostic pop
#endif

#include <benchmark/benchmark.h>

#include <cstdint>

#include "bench/harness.h"
#include "platform/dpi/tpbsim_dpi.h"

namespace {

std::uint32_t next(std::uint32_t& x) { return x = x * 1664525u + 1013904223u; }

void per_call(benchmark::State& s, std::int64_t calls_per_iteration = 1) {
  const double n = static_cast<double>(s.iterations() * calls_per_iteration);
  s.SetItemsProcessed(static_cast<std::int64_t>(n));
  s.counters["per_call"] =
      benchmark::Counter(n, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// ---- C ABI -----------------------------------------------------------------

void BM_C_DequantWord_E2M1(benchmark::State& s) {
  unsigned lo = 0, hi = 0;
  std::uint32_t w = 1;
  for (auto _ : s) {
    tpb_dpi_dequant_word(1, 0, 0, next(w), &lo, &hi);
    benchmark::DoNotOptimize(lo ^ hi);
  }
  per_call(s);
}

void BM_C_DequantWord_Nf4Mx(benchmark::State& s) {
  unsigned lo = 0, hi = 0;
  std::uint32_t w = 1;
  for (auto _ : s) {
    tpb_dpi_dequant_word(3, 8, 120, next(w), &lo, &hi);
    benchmark::DoNotOptimize(lo ^ hi);
  }
  per_call(s);
}

void BM_C_DequantStep_Mx(benchmark::State& s) {
  unsigned src[5] = {0x7F7E7D7Cu, 1, 2, 3, 4}, dst[8];
  std::uint32_t w = 1;
  for (auto _ : s) {
    src[1] = next(w);
    tpb_dpi_dequant_step(1, 8, src, dst);
    benchmark::DoNotOptimize(dst[0] ^ dst[7]);
  }
  per_call(s);
}

void BM_C_DequantStep_Fp6(benchmark::State& s) {
  unsigned src[5] = {1, 2, 3, 0, 0}, dst[8];
  std::uint32_t w = 1;
  for (auto _ : s) {
    src[0] = next(w);
    tpb_dpi_dequant_step(4, 0, src, dst);
    benchmark::DoNotOptimize(dst[0] ^ dst[3]);
  }
  per_call(s);
}

void BM_C_QuantizeMx_Bf16Block(benchmark::State& s) {
  unsigned in[32], out[8];
  unsigned char scale = 0;
  for (unsigned k = 0; k < 32; ++k) in[k] = 0x3F80u + 37 * k;
  std::uint32_t w = 1;
  for (auto _ : s) {
    in[0] = next(w) & 0xFFFFu;
    tpb_dpi_quantize_mx(0x5, 0xE, 0, in, out, &scale);
    benchmark::DoNotOptimize(out[0] + scale);
  }
  per_call(s);
}

void BM_C_Tquant(benchmark::State& s) {
  unsigned char y = 0;
  int flags = 0;
  std::uint32_t w = 1;
  for (auto _ : s) {
    tpb_dpi_tquant(0x3F000000u | (next(w) & 0x7FFFFFu), 0x3EBD70A4u, -7, 4, 0, 1, &y, &flags);
    benchmark::DoNotOptimize(y + flags);
  }
  per_call(s);
}

void BM_C_FromFp32_E4M3(benchmark::State& s) {
  unsigned c = 0;
  std::uint32_t w = 1;
  for (auto _ : s) {
    tpb_dpi_from_fp32(3, 0x3C000000u | (next(w) & 0x03FFFFFFu), 1, &c);
    benchmark::DoNotOptimize(c);
  }
  per_call(s);
}

void BM_C_ToFp32_E5M2(benchmark::State& s) {
  unsigned f = 0;
  std::uint32_t w = 1;
  for (auto _ : s) {
    tpb_dpi_to_fp32(4, next(w) & 0xFFu, &f);
    benchmark::DoNotOptimize(f);
  }
  per_call(s);
}

void BM_C_Check_TensorDequantize(benchmark::State& s) {
  unsigned word[16] = {0x107Bu};
  std::uint32_t w = 1;
  for (auto _ : s) {
    word[9] = next(w) & 0xFFu;  // group_size, byte 36
    benchmark::DoNotOptimize(tpb_dpi_check(4, word));
  }
  per_call(s);
}

BENCHMARK(BM_C_DequantWord_E2M1);
BENCHMARK(BM_C_DequantWord_Nf4Mx);
BENCHMARK(BM_C_DequantStep_Mx);
BENCHMARK(BM_C_DequantStep_Fp6);
BENCHMARK(BM_C_QuantizeMx_Bf16Block);
BENCHMARK(BM_C_Tquant);
BENCHMARK(BM_C_FromFp32_E4M3);
BENCHMARK(BM_C_ToFp32_E5M2);
BENCHMARK(BM_C_Check_TensorDequantize);

// ---- From SystemVerilog (Verilated) ------------------------------------------

#ifdef TPBSIM_BENCH_SV
struct SvLoop {
  VerilatedContext ctx;
  Vbench_dpi_loop top{&ctx, "TOP"};
  SvLoop() {
    top.eval();
    svSetScope(svGetScopeFromName("TOP.bench_dpi_loop"));
  }
};
SvLoop& sv() {
  static SvLoop* s = new SvLoop;  // never destroyed: Verilator's statics may go first
  return *s;
}

constexpr int kCalls = 1000;

void BM_Sv_DequantWord_E2M1(benchmark::State& s) {
  sv();
  for (auto _ : s) benchmark::DoNotOptimize(sv_dequant_words(kCalls));
  per_call(s, kCalls);
}
void BM_Sv_DequantStep_Mx(benchmark::State& s) {
  sv();
  for (auto _ : s) benchmark::DoNotOptimize(sv_dequant_chunks(kCalls));
  per_call(s, kCalls);
}
void BM_Sv_QuantizeMx_Bf16Block(benchmark::State& s) {
  sv();
  for (auto _ : s) benchmark::DoNotOptimize(sv_quantize_blocks(kCalls));
  per_call(s, kCalls);
}
void BM_Sv_Check_TensorDequantize(benchmark::State& s) {
  sv();
  for (auto _ : s) benchmark::DoNotOptimize(sv_checks(kCalls));
  per_call(s, kCalls);
}
BENCHMARK(BM_Sv_DequantWord_E2M1);
BENCHMARK(BM_Sv_DequantStep_Mx);
BENCHMARK(BM_Sv_QuantizeMx_Bf16Block);
BENCHMARK(BM_Sv_Check_TensorDequantize);
#endif

}  // namespace

// SystemC supplies main() and calls sc_main.
int sc_main(int argc, char** argv) { return tpb::bench::run_benchmarks(argc, argv); }
