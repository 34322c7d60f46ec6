// A device of several cores when only one works (SPEC §15, issue 32 item 7):
// the same program on core 0 of a device of 1 core and of 8 cores, side by
// side. The program: 256 DMA transfers HBM -> SBUF over the 16 queues and
// 20000 one-partition TensorDequantize instructions on POOL (DMA engines,
// the HBM bandwidth share and a compute engine all busy). The other cores of
// the 8-core device have no program: they are elaborated but never started,
// so they should cost nothing per simulated nanosecond (the issue asks
// within 1.2x of the 1-core run). One Session per core count, made before
// the timed loop; wall time per run (manual time), process CPU seconds per
// run as a counter.
//
//   build/bench/bench_device --benchmark_repetitions=5 --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <time.h>

#include <chrono>
#include <memory>
#include <string>

#include "bench/harness.h"
#include "platform/run/session.h"

namespace {

using namespace tpb;

std::string program_text() {
  std::string t;
  for (unsigned i = 0; i < 256; ++i) {
    const unsigned q = i % 16;
    t += ".engine dma" + std::to_string(q) + "\n";
    t += "dma_copy rows=128 row_bytes=1024 src=hbm(" + std::to_string(i * 131072) +
         ", stride=1024) dst=sbuf(0, 0x" + (q % 2 ? std::string("8000") : std::string("0")) + ")\n";
  }
  t += ".engine pool\n";
  for (unsigned i = 0; i < 20000; ++i)
    t += "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 "
         "src=t3d(sbuf(0, 0x10000), step=[1, 0, 0], num=[4, 1, 1]) "
         "dst=t3d(sbuf(0, 0x14000), step=[1, 0, 0], num=[8, 1, 1])\n";
  return t;
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

void BM_Device_OneBusyCore(benchmark::State& state) {
  run::CoreSpec spec;
  spec.cores = static_cast<unsigned>(state.range(0));
  run::Session s(spec);
  const std::string text = program_text();
  run::SessionRequest req;
  double cpu = 0;
  std::uint64_t simulated = 0;
  for (auto _ : state) {
    std::unique_ptr<isa::SpooledProgram> p = run::program_from_text(text, "<program>");
    s.select(0);
    s.load(*p);
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = process_cpu_seconds();
    const run::SessionReport rep = s.run(req);
    cpu += process_cpu_seconds() - c0;
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (rep.result.status != platform::RunStatus::Ok) {
      state.SkipWithError(rep.result.message.c_str());
      return;
    }
    simulated = rep.result.simulated_ps - rep.result.start_ps;
  }
  state.counters["simulated_us"] = static_cast<double>(simulated) / 1e6;
  state.counters["process_cpu_s"] =
      state.iterations() ? cpu / static_cast<double>(state.iterations()) : 0.0;
}

}  // namespace

BENCHMARK(BM_Device_OneBusyCore)->Arg(1)->Arg(8)->UseManualTime()->Unit(benchmark::kMillisecond);

// SystemC supplies main() and calls sc_main.
int sc_main(int argc, char** argv) { return tpb::bench::run_benchmarks(argc, argv); }
