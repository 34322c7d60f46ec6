// Exploration at scale (docs/PERFORMANCE.md): `tpbsim run` of a binary of
// one-partition dequants, as a user runs it (the CLI in a child process),
// with tracing off, with VCD + Perfetto at the default level (instructions
// only above 16384) and at bundle level, with the race check (SPEC §14,
// `--racecheck`, tracing off); and `tpbsim asm` of the same
// program as text. Also one DMA queue of one-row HBM -> SBUF descriptors
// (issue 40: linear time, bounded memory), without and with the race check. Reported per run: wall
// time (manual time), instructions and simulated POOL cycles per wall second, peak resident memory
// and the trace bytes written.
//
//   build/bench/bench_scale --benchmark_counters_tabular=true
//
// The argument is the program's length (1,000,000 by default).
#include <benchmark/benchmark.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sc_tests/scratch_dir.h"

namespace {

const char* kLine =
    "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 "
    "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[4, 1, 1]) "
    "dst=t3d(sbuf(0, 0x4000), step=[1, 0, 0], num=[8, 1, 1])\n";

// The programs and outputs (2.3 GiB at the default length), removed when
// the benchmarks end (sc_tests/scratch_dir.h).
std::string scratch() {
  static const std::string dir = tpb::testutil::make_scratch_dir("bench-scale");
  return dir;
}

// One DMA queue of n one-row descriptors: one assembled word, repeated.
std::string dma_program(long n) {
  const std::string base = scratch() + "/dma" + std::to_string(n);
  if (struct stat st{}; stat((base + ".bin").c_str(), &st) == 0) return base + ".bin";
  std::ofstream(base + "1.tpb")
      << ".arch mariana\n.engine dma0\n"
         "dma_copy rows=1 row_bytes=64 src=hbm(0x40, stride=64) dst=sbuf(5, 0x0)\n";
  const std::string cmd =
      std::string(TPBSIM_BIN) + " asm " + base + "1.tpb -o " + base + "1.bin >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "bench_scale: asm failed\n");
  std::string word(64, '\0');
  std::ifstream(base + "1.bin", std::ios::binary).read(word.data(), 64);
  std::ofstream f(base + ".bin", std::ios::binary);
  for (long i = 0; i < n; ++i) f.write(word.data(), 64);
  return base + ".bin";
}

// The program as text and as a binary (assembled once, by tpbsim asm).
std::string program(long n, bool text) {
  const std::string base = scratch() + "/p" + std::to_string(n);
  if (struct stat st{}; stat((base + ".bin").c_str(), &st) != 0) {
    std::ofstream f(base + ".tpb");
    f << ".arch mariana\n.engine pool\n";
    for (long i = 0; i < n; ++i) f << kLine;
    f.close();
    const std::string cmd =
        std::string(TPBSIM_BIN) + " asm " + base + ".tpb -o " + base + ".bin >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "bench_scale: asm failed\n");
  }
  return base + (text ? ".tpb" : ".bin");
}

struct Child {
  double wall = 0;
  long max_rss_kb = 0;
  int status = -1;
};

// Runs argv as a child process: wall time and its peak resident memory.
Child spawn(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout)) _exit(127);
    execv(argv[0], argv.data());
    _exit(127);
  }
  Child c;
  int ws = 0;
  struct rusage ru {};
  if (pid > 0 && wait4(pid, &ws, 0, &ru) == pid) {
    c.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    c.max_rss_kb = ru.ru_maxrss;
    c.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
  }
  return c;
}

std::uint64_t size_of(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

enum Mode { kOff, kTraces, kTracesBundle, kRaceCheck, kDma, kDmaRaceCheck };

void run_bench(benchmark::State& state, Mode mode) {
  const long n = state.range(0);
  const bool dma = mode == kDma || mode == kDmaRaceCheck;
  const std::string bin = dma ? dma_program(n) : program(n, false), d = scratch();
  Child c;
  nlohmann::json stats;
  double total = 0;  // wall over the iterations: the counters are per mean run
  for (auto _ : state) {
    // Each run writes new files: the last run's are removed first, off the
    // clock (ext4 takes 70-100 ms to unlink a 100 MiB file, which a run
    // replacing it pays at its end; docs/PERFORMANCE.md).
    for (const char* f : {"/s.json", "/t.vcd", "/t.json", "/t.gtkw"}) std::remove((d + f).c_str());
    std::vector<std::string> args = {TPBSIM_BIN, "run", bin, "-q", "--stats", d + "/s.json"};
    if (mode == kRaceCheck || mode == kDmaRaceCheck) args.push_back("--racecheck");
    if (mode == kTraces || mode == kTracesBundle) {
      for (const char* a : {"--vcd", "--perfetto"}) args.push_back(a);
      args.insert(args.end() - 1, d + "/t.vcd");
      args.push_back(d + "/t.json");
      if (mode == kTracesBundle) {
        args.push_back("--trace-level");
        args.push_back("bundle");
      }
    }
    c = spawn(args);
    if (c.status != 0) {
      state.SkipWithError("tpbsim run failed");
      return;
    }
    state.SetIterationTime(c.wall);
    total += c.wall;
    stats = nlohmann::json::parse(std::ifstream(d + "/s.json"));
  }
  const double wall = total / static_cast<double>(state.iterations());
  const double pool_cycles = stats["engines"][0]["busy_cycles"].get<double>();
  state.counters["instr_per_s"] = benchmark::Counter(static_cast<double>(n) / wall);
  if (!dma) state.counters["pool_cycles_per_s"] = benchmark::Counter(pool_cycles / wall);
  state.counters["peak_rss_MiB"] = benchmark::Counter(static_cast<double>(c.max_rss_kb) / 1024);
  state.counters["trace_MiB"] = benchmark::Counter(
      static_cast<double>(size_of(d + "/t.vcd") + size_of(d + "/t.json")) / (1 << 20));
}

void BM_Run_TracingOff(benchmark::State& s) { run_bench(s, kOff); }
void BM_Run_VcdPerfetto(benchmark::State& s) { run_bench(s, kTraces); }
void BM_Run_VcdPerfettoBundles(benchmark::State& s) { run_bench(s, kTracesBundle); }
void BM_Run_RaceCheck(benchmark::State& s) { run_bench(s, kRaceCheck); }
void BM_Run_DmaQueue(benchmark::State& s) { run_bench(s, kDma); }
void BM_Run_DmaQueueRaceCheck(benchmark::State& s) { run_bench(s, kDmaRaceCheck); }

void BM_Asm_Text(benchmark::State& state) {
  const long n = state.range(0);
  const std::string text = program(n, true), d = scratch();
  Child c;
  for (auto _ : state) {
    c = spawn({TPBSIM_BIN, "asm", text, "-o", d + "/asm.bin"});
    if (c.status != 0) {
      state.SkipWithError("tpbsim asm failed");
      return;
    }
    state.SetIterationTime(c.wall);
  }
  state.counters["lines_per_s"] = benchmark::Counter(static_cast<double>(n) / c.wall);
  state.counters["peak_rss_MiB"] = benchmark::Counter(static_cast<double>(c.max_rss_kb) / 1024);
}

constexpr long kN = 1000000;
BENCHMARK(BM_Run_TracingOff)->Arg(kN)->Iterations(3)->UseManualTime()->Unit(benchmark::kSecond);
BENCHMARK(BM_Run_VcdPerfetto)->Arg(kN)->Iterations(3)->UseManualTime()->Unit(benchmark::kSecond);
BENCHMARK(BM_Run_VcdPerfettoBundles)
    ->Arg(kN)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);
BENCHMARK(BM_Run_RaceCheck)->Arg(kN)->Iterations(3)->UseManualTime()->Unit(benchmark::kSecond);
BENCHMARK(BM_Asm_Text)->Arg(kN)->Iterations(1)->UseManualTime()->Unit(benchmark::kSecond);
BENCHMARK(BM_Run_DmaQueue)
    ->Arg(40000)
    ->Arg(160000)
    ->Arg(kN)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);
BENCHMARK(BM_Run_DmaQueueRaceCheck)
    ->Arg(160000)
    ->Arg(kN)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
