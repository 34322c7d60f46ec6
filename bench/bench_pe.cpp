// PE matmul throughput through the whole platform (docs/PERFORMANCE.md):
//  - BM_PeMatmulMx/threads:T: one LdweightsMX (K = 128 partitions = 512
//    contraction values, M = 128) and 8 MatmulMX of N = 512 (MXFP8 E4M3)
//    through TpbCore with T host threads (fw::set_host_threads); counters
//    macs_per_second (wall), sim_pe_cycles, and x_reference: that rate over the
//    rate of bench/reference/matmul_loop.cpp (a plain k-ascending FP32 loop,
//    -O3 -march=native -ffp-contract=off) doing the same 8 matmuls on the same
//    values (the model's operands decoded to FP32: K = 512, M = 128, N = 512,
//    the first overwriting, the rest accumulating), timed in the same child
//    right after the run (median of 3). The loop's result must equal the
//    model's PSUM bit for bit, or the benchmark fails.
//  - BM_Pipeline/threads:T: traces/workloads/pipeline (POOL dequant -> DVE
//    QuantizeMX -> PE matmul); counter sim_cycles_per_second (simulated PE
//    cycles per wall second of run()).
//  - BM_Engine/threads:T/work:W, the other kernels that split (counter
//    instructions_per_second): W = 0, 20000 one-partition TensorDequantizes
//    of 16 words (too small to split: what threads must not slow down);
//    W = 1, 8 TensorDequantizes of 128 partitions x 16384 words (E2M1 group
//    0); W = 2, 8 QuantizeMX of 128 channels x 2048 FP32.
// One elaboration per process: every iteration forks a child that builds,
// loads and runs a fresh core and reports the wall time of run() alone.
#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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
#include "bench/reference/matmul_loop.h"
#include "firmware_stubs/common/host_threads.h"
#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/isa/program.h"
#include "models/numerics/mx_matmul.h"
#include "platform/core/tpb_core.h"
#include "platform/io/npy.h"

namespace {

using namespace tpb;

struct Report {
  double run_seconds = 0;
  double sim_ps = 0;
  double macs = 0;
  double ref_seconds = 0;  // the reference loop, same work (BM_PeMatmulMx)
  int ref_mismatches = 0;  // PSUM values that differ from the loop's
  int status = -1;
};

platform::CoreConfig quiet(isa::Arch a) {
  auto cfg = platform::default_core_config(a);
  return cfg;
}

Report finish(platform::TpbCore& core, std::chrono::steady_clock::time_point t0) {
  const platform::CoreRunResult r = core.run();
  Report rep;
  rep.run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rep.sim_ps = double(r.simulated_ps);
  rep.status = static_cast<int>(r.status);
  if (r.status != platform::RunStatus::Ok)
    std::fprintf(stderr, "bench_pe: %s\n", r.message.c_str());
  const auto s = core.stats();
  const auto& pe = s.engines[static_cast<unsigned>(isa::Queue::Pe)];
  const auto it = pe.counters.find("macs");
  rep.macs = it == pe.counters.end() ? 0 : double(it->second);
  return rep;
}

constexpr unsigned kRows = 128, kM = 128, kN = 512, kMatmuls = 8;

// The operands: partition p holds x4 words of E4M3 codes (the stationary's
// M columns are the first M of the moving's N), every partition the same
// scale bytes.
struct Operands {
  std::vector<std::uint32_t> words;  // [p][kN]
  std::vector<std::uint8_t> scales;  // [kN]
};
Operands make_operands() {
  Operands o;
  std::mt19937 rng(1);
  o.words.resize(std::size_t{kRows} * kN);
  for (auto& w : o.words) w = rng() & 0xEFEFEFEFu;  // finite E4M3 codes
  o.scales.resize(kN);
  for (auto& s : o.scales) s = std::uint8_t(120 + rng() % 10);
  return o;
}

// The reference loop on the same values: the 8 matmuls of matmul_once, the
// median time of 3 repetitions; acc gets the result.
double reference_seconds(const Operands& o, std::vector<float>& acc) {
  const std::size_t K = 4 * kRows;
  std::vector<float> w(K * kM), x(K * kN);
  for (unsigned p = 0; p < kRows; ++p)
    for (unsigned j = 0; j < kN; ++j) {
      float v[4];
      num::decode_x4(num::Format::E4M3, o.words[std::size_t{p} * kN + j], o.scales[j], v);
      for (unsigned l = 0; l < 4; ++l) {
        x[(4 * p + l) * kN + j] = v[l];
        if (j < kM) w[(4 * p + l) * kM + j] = v[l];
      }
    }
  acc.assign(std::size_t{kM} * kN, 0.0f);
  std::vector<double> t;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (unsigned i = 0; i < kMatmuls; ++i)
      bench::reference_matmul(w.data(), x.data(), K, kM, kN, acc.data(), i > 0);
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[1];
}

Report matmul_once(unsigned threads) {
  fw::set_host_threads(threads);
  auto core = std::make_unique<platform::TpbCore>("tpb", quiet(isa::Arch::Mariana));
  const Operands o = make_operands();
  for (unsigned p = 0; p < kRows; ++p) {
    const std::uint32_t* words = o.words.data() + std::size_t{p} * kN;
    core->load_memory(isa::sbuf_addr(p, 0x0), words, 4 * kM);
    core->load_memory(isa::sbuf_addr(p, 0x1000), words, 4 * kN);
    core->load_memory(isa::sbuf_addr(p, 0x8000), o.scales.data(), kM);
    core->load_memory(isa::sbuf_addr(p, 0x9000), o.scales.data(), kN);
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
  core->load_queue(isa::Queue::Pe, prog);
  Report rep = finish(*core, std::chrono::steady_clock::now());
  // The yardstick, side by side: the same work by the plain loop, which must
  // give the same bits.
  std::vector<float> acc;
  rep.ref_seconds = reference_seconds(o, acc);
  std::vector<float> got(kN);
  for (unsigned m = 0; m < kM; ++m) {
    core->dump_memory(isa::psum_addr(m, 0), got.data(), 4 * kN);
    for (unsigned n = 0; n < kN; ++n)
      rep.ref_mismatches += std::memcmp(&got[n], &acc[std::size_t{m} * kN + n], 4) != 0;
  }
  return rep;
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

// The program of BM_Engine's workload w.
std::string engine_program(int w) {
  std::string p = ".arch mariana\n";
  if (w == 0) {
    p += ".engine pool\n";
    for (int i = 0; i < 20000; ++i)
      p += "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 src=t3d(sbuf(0, 0x0), "
           "step=[1, 0, 0], num=[16, 1, 1]) dst=t3d(sbuf(0, 0x1000), step=[1, 0, 0], "
           "num=[32, 1, 1])\n";
  } else if (w == 1) {
    p += ".engine pool\n";
    for (int i = 0; i < 8; ++i)
      p += "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=128 src=t3d(sbuf(0, 0x0), "
           "step=[1, 0, 0], num=[16384, 1, 1]) dst=t3d(sbuf(0, 0x10000), step=[1, 0, 0], "
           "num=[32768, 1, 1])\n";
  } else {
    p += ".engine dve\n";
    for (int i = 0; i < 8; ++i)
      p += "quantize_mx channels=128 in_dtype=fp32 out_dtype=fp8_e4m3 src=t3d(sbuf(0, 0x0), "
           "step=[1, 0, 0], num=[2048, 1, 1]) dst=mx1d(data=sbuf(0, 0x10000), scale=sbuf(0, "
           "0x11000), num=512)\n";
  }
  return p;
}

Report engine_once(unsigned threads, int w) {
  fw::set_host_threads(threads);
  auto core = std::make_unique<platform::TpbCore>("tpb", quiet(isa::Arch::Mariana));
  core->load_program(isa::parse_program(engine_program(w), "engine.tpb"));
  std::mt19937 rng(3);
  std::vector<std::uint32_t> words(0x10000 / 4);
  for (unsigned p = 0; p < isa::kNumPartitions; ++p) {
    for (auto& x : words) x = w == 2 ? (rng() & 0x3FFFFFFFu) : rng();  // finite FP32 for QuantizeMX
    core->load_memory(isa::sbuf_addr(p, 0x0), words.data(), 4 * words.size());
    // The destinations touched once, as a preceding kernel's output would be.
    core->load_memory(isa::sbuf_addr(p, 0x10000), words.data(), 4 * words.size());
    core->load_memory(isa::sbuf_addr(p, 0x20000), words.data(), 4 * words.size());
  }
  return finish(*core, std::chrono::steady_clock::now());
}

void BM_PeMatmulMx(benchmark::State& state) {
  const unsigned threads = unsigned(state.range(0));
  Report last;
  double run = 0, ref = 0;
  for (auto _ : state) {
    last = bench::in_child<Report>("bench_pe", [&] { return matmul_once(threads); });
    if (last.status != 0) {
      state.SkipWithError("run did not complete");
      return;
    }
    if (last.ref_mismatches != 0) {
      state.SkipWithError("the reference loop's PSUM differs from the model's");
      return;
    }
    state.SetIterationTime(last.run_seconds);
    run += last.run_seconds;
    ref += last.ref_seconds;
  }
  const double n = double(state.iterations());
  state.counters["macs_per_second"] =
      benchmark::Counter(last.macs * n, benchmark::Counter::kIsRate);
  state.counters["ref_macs_per_second"] = last.macs * n / ref;
  // Model rate / loop rate, over the same iterations: the loop does the same MACs.
  state.counters["x_reference"] = ref / run;
  state.counters["macs"] = last.macs;
  state.counters["sim_pe_cycles"] = last.sim_ps * 2400.0 / 1e6;
}

void BM_Pipeline(benchmark::State& state) {
  const unsigned threads = unsigned(state.range(0));
  Report last;
  for (auto _ : state) {
    last = bench::in_child<Report>("bench_pe", [&] {
      fw::set_host_threads(threads);
      return pipeline_once();
    });
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

void BM_Engine(benchmark::State& state) {
  const unsigned threads = unsigned(state.range(0));
  const int w = int(state.range(1));
  Report last;
  double instructions = 0;
  for (auto _ : state) {
    last = bench::in_child<Report>("bench_pe", [&] { return engine_once(threads, w); });
    if (last.status != 0) {
      state.SkipWithError("run did not complete");
      return;
    }
    state.SetIterationTime(last.run_seconds);
    instructions += w == 0 ? 20000 : 8;
  }
  state.counters["instructions_per_second"] =
      benchmark::Counter(instructions, benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(BM_PeMatmulMx)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Pipeline)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Engine)
    ->ArgNames({"threads", "work"})
    ->ArgsProduct({{1, 2}, {0, 1, 2}})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// SystemC supplies main() and calls sc_main.
int sc_main(int argc, char** argv) { return tpb::bench::run_benchmarks(argc, argv); }
