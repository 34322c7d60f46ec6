// PE matmul throughput through the whole platform (docs/PERFORMANCE.md):
//  - BM_PeMatmulMx: one LdweightsMX (K = 128 partitions = 512 contraction
//    values, M = 128) and 8 MatmulMX of N = 512 (MXFP8 E4M3) through TpbCore;
//    counter macs_per_second (wall), sim_pe_cycles.
//  - BM_Pipeline: traces/workloads/pipeline (POOL dequant -> DVE QuantizeMX ->
//    PE matmul); counter sim_cycles_per_second (simulated PE cycles per wall
//    second of run()).
// One elaboration per process: every iteration forks a child that builds,
// loads and runs a fresh core and reports the wall time of run() alone.
#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/harness.h"
#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/isa/program.h"
#include "platform/core/tpb_core.h"
#include "platform/io/npy.h"

namespace {

using namespace tpb;

struct Report {
  double run_seconds = 0;
  double sim_ps = 0;
  double macs = 0;
  int status = -1;
};

platform::CoreConfig quiet(isa::Arch a) {
  auto cfg = platform::default_core_config(a);
  return cfg;
}

Report finish(platform::TpbCore& core, std::chrono::steady_clock::time_point t0) {
  const platform::RunResult r = core.run();
  Report rep;
  rep.run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rep.sim_ps = double(r.simulated_ps);
  rep.status = static_cast<int>(r.status);
  if (r.status != platform::RunStatus::Ok)
    std::fprintf(stderr, "bench_pe: %s\n", r.message.c_str());
  const auto s = core.stats();
  const auto& pe = s.engines[static_cast<unsigned>(isa::Engine::Pe)];
  const auto it = pe.counters.find("macs");
  rep.macs = it == pe.counters.end() ? 0 : double(it->second);
  return rep;
}

constexpr unsigned kRows = 128, kM = 128, kN = 512, kMatmuls = 8;

Report matmul_once() {
  auto core = std::make_unique<platform::TpbCore>("tpb", quiet(isa::Arch::Mariana));
  std::mt19937 rng(1);
  std::vector<std::uint32_t> words(kN);
  std::vector<std::uint8_t> scales(kN);
  for (unsigned p = 0; p < kRows; ++p) {
    for (auto& w : words) w = rng() & 0xEFEFEFEFu;  // finite E4M3 codes
    core->load_memory(isa::sbuf_addr(p, 0x0), words.data(), 4 * kM);
    core->load_memory(isa::sbuf_addr(p, 0x1000), words.data(), 4 * kN);
  }
  for (auto& s : scales) s = std::uint8_t(120 + rng() % 10);
  for (unsigned p = 0; p < kRows; ++p) {
    core->load_memory(isa::sbuf_addr(p, 0x8000), scales.data(), kM);
    core->load_memory(isa::sbuf_addr(p, 0x9000), scales.data(), kN);
  }
  auto mx1d = [](std::uint32_t data, std::uint32_t scale, unsigned num) {
    isa::MxTensor1D t{};
    t.start_addr.raw = isa::sbuf_addr(0, data);
    t.scale_addr.raw = isa::sbuf_addr(0, scale);
    t.num_elem[0] = std::uint16_t(num);
    t.step_elem[0] = 1;
    isa::MxMemPattern1D m;
    std::memcpy(&m, &t, sizeof t);
    return m;
  };
  std::vector<isa::RawInst> prog;
  isa::SMX1Lw lw{};
  lw.header = {0x09, 16, 0, 0};
  lw.src_mem_pattern = mx1d(0x0, 0x8000, kM);
  lw.in_dtype = static_cast<std::uint8_t>(isa::Dtype::Fp8Exp4);
  lw.num_active_rows = kRows;
  lw.num_active_cols = kM;
  lw.row_grp = 0xF;
  lw.col_grp = 0xF;
  prog.push_back(isa::encode(lw));
  for (unsigned i = 0; i < kMatmuls; ++i) {
    isa::SMX1D3Mm mm{};
    mm.header = {0x0A, 16, 0, 0};
    mm.src_mem_pattern = mx1d(0x1000, 0x9000, kN);
    mm.in_dtype = static_cast<std::uint8_t>(isa::Dtype::Fp8Exp4);
    mm.num_active_rows = kRows;
    mm.out_dtype = static_cast<std::uint8_t>(isa::Dtype::Fp32);
    mm.psum_accumulate_flags = i > 0;
    isa::Tensor3D d{};
    d.start_addr.raw = isa::psum_addr(0, 0);
    d.step_elem[0] = 1;
    d.num_elem[0] = kN;
    d.num_elem[1] = d.num_elem[2] = 1;
    std::memcpy(&mm.dst_mem_pattern, &d, sizeof d);
    prog.push_back(isa::encode(mm));
  }
  core->load_queue(isa::Engine::Pe, prog);
  return finish(*core, std::chrono::steady_clock::now());
}

Report pipeline_once() {
  const std::string wl = std::string(TPB_SOURCE_DIR) + "/traces/workloads/pipeline/";
  auto core = std::make_unique<platform::TpbCore>("tpb", quiet(isa::Arch::Mariana));
  core->load_program(isa::load_program(wl + "program.tpb"));
  auto load = [&](const std::string& f, std::uint32_t off) {
    const io::NpyArray a = io::read_npy(wl + f);
    const std::size_t row = a.data.size() / a.shape[0];
    for (std::size_t r = 0; r < a.shape[0]; ++r)
      core->load_memory(isa::sbuf_addr(unsigned(r), off), a.data.data() + r * row, row);
  };
  load("activations.npy", 0x0);
  load("weights_mxfp4.npy", 0x1000);
  return finish(*core, std::chrono::steady_clock::now());
}

void BM_PeMatmulMx(benchmark::State& state) {
  Report last;
  for (auto _ : state) {
    last = bench::in_child<Report>("bench_pe", matmul_once);
    if (last.status != 0) {
      state.SkipWithError("run did not complete");
      return;
    }
    state.SetIterationTime(last.run_seconds);
  }
  state.counters["macs_per_second"] =
      benchmark::Counter(last.macs * double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["macs"] = last.macs;
  state.counters["sim_pe_cycles"] = last.sim_ps * 2400.0 / 1e6;
}

void BM_Pipeline(benchmark::State& state) {
  Report last;
  for (auto _ : state) {
    last = bench::in_child<Report>("bench_pe", pipeline_once);
    if (last.status != 0) {
      state.SkipWithError("run did not complete");
      return;
    }
    state.SetIterationTime(last.run_seconds);
  }
  const double cycles = last.sim_ps * 2400.0 / 1e6;  // PE clock, 2.4 GHz
  state.counters["sim_cycles_per_second"] =
      benchmark::Counter(cycles * double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["sim_pe_cycles"] = cycles;
}

}  // namespace

BENCHMARK(BM_PeMatmulMx)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Pipeline)->UseManualTime()->Unit(benchmark::kMillisecond);

// SystemC supplies main() and calls sc_main.
int sc_main(int argc, char** argv) { return tpb::bench::run_benchmarks(argc, argv); }
