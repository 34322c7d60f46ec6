// Throughput of a whole-platform TensorDequantize (SPEC §3, §9) against memcpy
// of the same bytes, measured in the same run (docs/PERFORMANCE.md).
//
// A 128-partition TensorDequantize of >= 8 MiB of packed input goes through
// the platform C++ API (TpbCore: load program, load SBUF, run, VCD off).
// SystemC allows one elaboration per process and TpbCore runs once, so every
// iteration forks a child that builds, loads and runs a fresh core and sends
// back the wall time of run() alone; the parent reports it as the iteration
// time (UseManualTime). Counters: bytes_per_second (packed input bytes),
// x_memcpy (throughput / memcpy throughput of the same bytes, goal >= 0.25),
// setup_ms (core construction + loads), sim_us (simulated time).
#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "bench/harness.h"
#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/numerics/dequant_stream.h"
#include "platform/core/tpb_core.h"

namespace {

using namespace tpb;

constexpr unsigned kChannels = 128;

struct Workload {
  isa::DequantFmt fmt;
  unsigned group;
  std::uint32_t src_words;  // per partition
  std::uint32_t dst_words;
  std::uint32_t src_off, dst_off;
  std::size_t input_bytes() const { return std::size_t(kChannels) * src_words * 4; }
};

// E2M1 group 0: 64 KiB of packed words per partition -> 128 KiB of E5M2.
// E2M1 MX group 8: 3277 chunks of 5 words (64 KiB + 4 B) -> 26216 words.
Workload e2m1_g0() { return {isa::DequantFmt::E2M1ToE5M2, 0, 16384, 32768, 0, 0x10000}; }
Workload e2m1_g8() { return {isa::DequantFmt::E2M1ToE5M2, 8, 16385, 26216, 0, 0x10100}; }

isa::RawInst make_inst(const Workload& w) {
  isa::S3D3TensDequant d;
  std::memset(&d, 0, sizeof d);
  d.header = {static_cast<std::uint8_t>(isa::Opcode::TensorDequantize), isa::kInstWordLen, 0, 0};
  d.in_dtype = d.out_dtype = static_cast<std::uint8_t>(isa::Dtype::Uint32);
  d.num_active_channels = kChannels;
  d.dequant_fmt = static_cast<std::uint8_t>(w.fmt);
  d.group_size = static_cast<std::uint8_t>(w.group);
  // num_elem is u16: a 2-D pattern of rows of at most 65535 words (src rows of 5*k words
  // keep MX chunks whole, which the element-count check asks of dim 0).
  auto pattern = [](std::uint32_t off, std::uint32_t words) {
    isa::Tensor3D t{};
    t.start_addr.raw = isa::sbuf_addr(0, off);
    std::uint32_t rows = 1;
    while (words / rows > 65535 || words % rows) ++rows;
    t.step_elem[0] = 1;
    t.step_elem[1] = static_cast<std::int16_t>(words / rows);
    t.num_elem[0] = static_cast<std::uint16_t>(words / rows);
    t.num_elem[1] = static_cast<std::uint16_t>(rows);
    t.num_elem[2] = 1;
    return t;
  };
  d.src_mem_pattern.t = pattern(w.src_off, w.src_words);
  d.dst_mem_pattern.t = pattern(w.dst_off, w.dst_words);
  return isa::encode(d);
}

std::vector<std::uint8_t> make_input(const Workload& w) {
  std::vector<std::uint8_t> in(w.input_bytes());
  std::mt19937 rng(42);
  for (std::size_t i = 0; i < in.size(); i += 4) {
    std::uint32_t v = rng();
    if (w.group == 8 && ((i / 4) % w.src_words) % 5 == 0)
      v = 0x7f7f7f7fu ^ (v & 0x03030303u);  // scales near 2^0 keep values finite
    std::memcpy(&in[i], &v, 4);
  }
  return in;
}

struct ChildReport {
  double run_seconds = 0;
  double setup_seconds = 0;
  double sim_us = 0;
  int status = -1;  // RunStatus, or -1 when the child failed
};

// Runs one platform instance in this (child) process.
ChildReport run_once(const Workload& w, const std::vector<std::uint8_t>& input) {
  ChildReport rep;
  const auto t0 = std::chrono::steady_clock::now();
  auto cfg = platform::default_core_config(isa::Arch::Mariana);
  auto core = std::make_unique<platform::TpbCore>("tpb", cfg);
  core->load_queue(isa::Queue::Pool, {make_inst(w)});
  const std::size_t row = std::size_t(w.src_words) * 4;
  for (unsigned p = 0; p < kChannels; ++p)
    core->load_memory(isa::sbuf_addr(p, w.src_off), input.data() + p * row, row);
  // Steady state, as memcpy's warm buffers: the destination pages are touched
  // (a zero fill, as a preceding kernel's output would) and the dequant
  // tables are built (once per process) before the timed run.
  const std::vector<std::uint8_t> zeros(std::size_t(w.dst_words) * 4, 0);
  for (unsigned p = 0; p < kChannels; ++p)
    core->load_memory(isa::sbuf_addr(p, w.dst_off), zeros.data(), zeros.size());
  {
    std::uint32_t in[5] = {0x7f7f7f7fu, 0, 0, 0, 0}, out[8];
    num::dequant_words(w.fmt, w.group, in, out, 1);
  }
  const auto t1 = std::chrono::steady_clock::now();
  const platform::CoreRunResult r = core->run();
  const auto t2 = std::chrono::steady_clock::now();
  rep.setup_seconds = std::chrono::duration<double>(t1 - t0).count();
  rep.run_seconds = std::chrono::duration<double>(t2 - t1).count();
  rep.sim_us = r.simulated_ps / 1e6;
  rep.status = static_cast<int>(r.status);
  if (r.status != platform::RunStatus::Ok)
    std::fprintf(stderr, "bench_platform: run %s: %s\n", platform::status_name(r.status),
                 r.message.c_str());
  return rep;
}

// Forks, runs one platform instance in the child, returns its report.
ChildReport run_in_child(const Workload& w, const std::vector<std::uint8_t>& input) {
  return bench::in_child<ChildReport>("bench_platform", [&] {
    ChildReport rep;
    try {
      rep = run_once(w, input);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_platform: %s\n", e.what());
      rep.status = -1;
    }
    return rep;
  });
}

// Seconds for one memcpy of `bytes` (median of 15, warm buffers), measured
// once per process so the ratio compares like with like.
double memcpy_seconds(std::size_t bytes) {
  static std::size_t cached_bytes = 0;
  static double cached = 0;
  if (cached_bytes == bytes) return cached;
  std::vector<std::uint8_t> a(bytes, 1), b(bytes, 0);
  std::vector<double> t;
  for (int i = 0; i < 15; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    std::memcpy(b.data(), a.data(), bytes);
    benchmark::ClobberMemory();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  cached_bytes = bytes;
  cached = t[t.size() / 2];
  return cached;
}

void BM_memcpy(benchmark::State& state) {
  const std::size_t bytes = e2m1_g0().input_bytes();
  std::vector<std::uint8_t> a(bytes, 1), b(bytes, 0);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

void run_platform_bench(benchmark::State& state, const Workload& w) {
  const std::vector<std::uint8_t> input = make_input(w);
  double run_total = 0, setup_total = 0, sim_us = 0;
  for (auto _ : state) {
    const ChildReport rep = run_in_child(w, input);
    if (rep.status != static_cast<int>(platform::RunStatus::Ok)) {
      state.SkipWithError("platform run did not complete (status != ok)");
      return;
    }
    state.SetIterationTime(rep.run_seconds);
    run_total += rep.run_seconds;
    setup_total += rep.setup_seconds;
    sim_us = rep.sim_us;
  }
  const double n = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * w.input_bytes()));
  state.counters["x_memcpy"] = memcpy_seconds(w.input_bytes()) / (run_total / n);
  state.counters["setup_ms"] = 1e3 * setup_total / n;
  state.counters["sim_us"] = sim_us;
}

void BM_Dequant_E2M1_G0_128x64KiB(benchmark::State& state) { run_platform_bench(state, e2m1_g0()); }
void BM_Dequant_E2M1_MX8_128x64KiB(benchmark::State& state) {
  run_platform_bench(state, e2m1_g8());
}

BENCHMARK(BM_memcpy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Dequant_E2M1_G0_128x64KiB)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Dequant_E2M1_MX8_128x64KiB)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace

// SystemC supplies main() and calls sc_main.
int sc_main(int argc, char** argv) { return tpb::bench::run_benchmarks(argc, argv); }
