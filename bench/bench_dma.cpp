// Wall-clock cost of the data paths of HBM, DMA and tensor_copy
// (docs/PERFORMANCE.md): the element conversion of tensor_copy against
// memcpy of the same bytes, and DMA queues of a core moving 1 MiB each from
// HBM to SBUF on its DMA engines (one elaboration per forked child).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "bench/harness.h"
#include "models/isa/address_map.h"
#include "models/numerics/element_ops.h"
#include "platform/core/tpb_core.h"

using namespace tpb;

namespace {

constexpr std::size_t kElems = 128 * 4096;  // a 128-partition tile of 4096 elements

void BM_Memcpy(benchmark::State& st) {
  const std::size_t bytes = static_cast<std::size_t>(st.range(0));
  std::vector<std::uint8_t> a(bytes, 1), b(bytes);
  for (auto _ : st) {
    std::memcpy(b.data(), a.data(), bytes);
    benchmark::DoNotOptimize(b.data());
  }
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * bytes));
}

// num::convert_elements over one tile; bytes processed = source bytes.
void BM_Convert(benchmark::State& st, std::uint8_t in, std::uint8_t out) {
  const unsigned si = isa::dtype_size(in), so = isa::dtype_size(out);
  std::vector<std::uint8_t> src(kElems * si), dst(kElems * so);
  std::uint32_t x = 1;
  for (auto& b : src) b = static_cast<std::uint8_t>((x = x * 1664525u + 1013904223u) >> 24);
  if (in == 0x08)  // finite FP32 values around 1
    for (std::size_t i = 0; i < kElems; ++i) {
      const std::uint32_t v = 0x3E000000u + ((x = x * 1664525u + 1013904223u) >> 7);
      std::memcpy(src.data() + 4 * i, &v, 4);
    }
  for (auto _ : st) {
    num::convert_elements(in, out, src.data(), dst.data(), kElems);
    benchmark::DoNotOptimize(dst.data());
  }
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * src.size()));
  st.counters["Melem_per_s"] = benchmark::Counter(
      static_cast<double>(st.iterations() * kElems) / 1e6, benchmark::Counter::kIsRate);
}

// ---- DMA queues on a core: n queues moving 1 MiB each from HBM to SBUF ----

struct DmaReport {
  double wall_ms;
  double cpu_ms;  // of the simulation, in the child
  double sim_us;
  std::uint64_t bytes;
};

DmaReport run_queues(unsigned n) {
  platform::TpbCore core("tpb", platform::default_core_config(isa::Arch::Mariana));
  for (unsigned k = 0; k < n; ++k) {
    isa::RawInst raw{};
    isa::DmaDescriptor d{};
    d.header = {0xd0, isa::kInstWordLen, 0, 0};
    d.num_rows = 128;
    d.row_bytes = 8192;
    d.src.addr = std::uint64_t{k} << 20;
    d.src.row_stride = 8192;
    d.src.kind = 0;
    d.dst.addr = isa::sbuf_addr(0, k * 8192);
    d.dst.kind = 1;
    d.queue = static_cast<std::uint8_t>(k);
    std::memcpy(raw.data(), &d, sizeof d);
    core.load_queue(isa::dma_queue(k), {raw});
    const std::vector<std::uint8_t> fill(1 << 20, static_cast<std::uint8_t>(k));
    core.load_memory(isa::hbm_addr(d.src.addr), fill.data(), fill.size());
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  const platform::CoreRunResult r = core.run();
  const std::clock_t c1 = std::clock();
  const auto t1 = std::chrono::steady_clock::now();
  return {std::chrono::duration<double, std::milli>(t1 - t0).count(),
          1e3 * static_cast<double>(c1 - c0) / CLOCKS_PER_SEC,
          static_cast<double>(r.simulated_ps) / 1e6, std::uint64_t{n} << 20};
}

void BM_DmaQueues(benchmark::State& st) {
  const auto n = static_cast<unsigned>(st.range(0));
  DmaReport r{};
  for (auto _ : st) {
    r = bench::in_child<DmaReport>("BM_DmaQueues", [n] { return run_queues(n); });
    st.SetIterationTime(r.wall_ms / 1e3);
  }
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * r.bytes));
  st.counters["child_cpu_ms"] = r.cpu_ms;
  st.counters["sim_us"] = r.sim_us;
  st.counters["sim_GBps"] = r.bytes / (r.sim_us * 1e-6) / 1e9;
}

}  // namespace

BENCHMARK(BM_Memcpy)->Arg(2 << 20)->Arg(4 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Convert, fp32_to_bf16, 0x08, 0x05)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Convert, fp32_to_fp8_e4m3, 0x08, 0x0E)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Convert, bf16_to_fp32, 0x05, 0x08)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Convert, fp8_e4m3_to_bf16, 0x0E, 0x05)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Convert, fp32_same, 0x08, 0x08)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DmaQueues)->Arg(1)->Arg(16)->UseManualTime()->Unit(benchmark::kMillisecond);

int sc_main(int argc, char** argv) { return tpb::bench::run_benchmarks(argc, argv); }
