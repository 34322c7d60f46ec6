// The run API from C++ (platform/run/session.h), the yardstick of the Python
// module's cost (bench/bench_python.py runs this program and the same runs
// through `import tpbsim` side by side; docs/PERFORMANCE.md):
//  - BM_RunApi_Pipeline: traces/workloads/pipeline (POOL dequant -> two DVE
//    QuantizeMX -> PE ldweights_mx + matmul_mx) from its text;
//  - BM_RunApi_Dequant/N: N one-partition TensorDequantize words (POOL).
// Each iteration is what core.run(program) does: the program from text or
// words, Session::load, Session::run keeping the retires; one Session for the
// process (the core runs program after program). Wall time per iteration;
// the counter process_cpu_s is the process's CPU time per iteration.
//
//   build/bench/bench_run_api --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <time.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench/harness.h"
#include "models/isa/program.h"
#include "platform/io/npy.h"
#include "platform/run/arrays.h"
#include "platform/run/session.h"

namespace {

using namespace tpb;

const char* kDequant =
    ".engine pool\n"
    "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 "
    "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[4, 1, 1]) "
    "dst=t3d(sbuf(0, 0x4000), step=[1, 0, 0], num=[8, 1, 1])\n";

run::Session& session() {
  static run::Session s{run::CoreSpec{}};
  return s;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void load_rows(run::Session& s, const std::string& file, std::uint32_t offset) {
  const io::NpyArray a = io::read_npy(file);
  const std::size_t rows = a.shape.size() == 2 ? a.shape[0] : 1;
  run::write_place(s, run::HostPlace::rows(isa::Region::Sbuf, 0, offset), a.data.data(), rows,
                   a.data.size() / rows);
}

// CPU time of the whole process (every thread), seconds: on a loaded host it
// counts the work, not the wait for a core.
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

template <typename MakeProgram>
void run_loop(benchmark::State& state, MakeProgram make) {
  run::Session& s = session();
  run::SessionRequest req;
  req.keep_retires = true;
  std::uint64_t instructions = 0;
  double cpu = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = process_cpu_seconds();
    std::unique_ptr<isa::SpooledProgram> p = make();
    s.load(*p);
    const run::SessionReport rep = s.run(req);
    const double c1 = process_cpu_seconds();
    const auto t1 = std::chrono::steady_clock::now();
    if (rep.result.status != platform::RunStatus::Ok) {
      state.SkipWithError(rep.result.message.c_str());
      return;
    }
    instructions = rep.result.instructions;
    cpu += c1 - c0;
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
  state.counters["instructions"] = static_cast<double>(instructions);
  // Process CPU seconds per iteration (bench_python.py compares it too).
  state.counters["process_cpu_s"] =
      state.iterations() ? cpu / static_cast<double>(state.iterations()) : 0.0;
}

void BM_RunApi_Pipeline(benchmark::State& state) {
  const std::string wl = std::string(TPB_SOURCE_DIR) + "/traces/workloads/pipeline/";
  load_rows(session(), wl + "activations.npy", 0x0);
  load_rows(session(), wl + "weights_mxfp4.npy", 0x1000);
  const std::string text = read_file(wl + "program.tpb");
  run_loop(state, [&] { return run::program_from_text(text, "<program>"); });
}

void BM_RunApi_Dequant(benchmark::State& state) {
  const std::vector<std::uint8_t> one = isa::to_binary(isa::parse_program(kDequant, "<program>"));
  std::vector<std::uint8_t> words;
  for (long i = 0; i < state.range(0); ++i) words.insert(words.end(), one.begin(), one.end());
  run_loop(state, [&] { return run::program_from_words(words.data(), words.size(), "<program>"); });
}

}  // namespace

BENCHMARK(BM_RunApi_Pipeline)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RunApi_Dequant)->Arg(100000)->UseManualTime()->Unit(benchmark::kMillisecond);

// SystemC supplies main() and calls sc_main.
int sc_main(int argc, char** argv) { return tpb::bench::run_benchmarks(argc, argv); }
