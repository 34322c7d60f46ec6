// Fuzz target: a whole short `tpbsim run` of a random program on the platform
// (docs/FUZZING.md).
//
// Input: a program exactly as `tpbsim run PROGRAM` reads it (program text, or
// a binary of 64-byte words), so that every kept input is a file a user can
// run. Inputs that do not parse, or hold more than kMaxInstructions
// instructions, are rejected before anything runs (the asm target fuzzes the
// parser).
//
// SystemC elaborates once per process and a TpbCore runs once, so every run
// is in a child process: the fuzz target forks, the child calls the CLI's
// cmd_run on the program (all four traces written to /dev/null) and exits
// with 10 + its exit code; the parent requires 10..13 (ok, bad input, fault,
// deadlock) and aborts on anything else -- a sanitizer report, a crash, an
// uncaught exception, or a run longer than TPBSIM_FUZZ_RUN_SECONDS (default
// 30 s, a hang) -- after copying the child's stderr to its own. Coverage:
// under libFuzzer the child copies its inline 8-bit counters into a shared
// mapping and the parent takes them over, so the run's coverage guides the
// fuzzer as an in-process target's would. The parent never touches SystemC.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "models/isa/program.h"
#include "platform/cli/commands.h"
#include "sc_tests/fuzz/fuzz_check.h"

// The coverage counters of this binary (fuzz_run_counters.cpp).
std::uint8_t* fuzz_counters_begin();
std::size_t fuzz_counters_size();

namespace {

constexpr std::size_t kMaxBytes = 8 * 1024;
constexpr std::size_t kMaxInstructions = 16;

struct State {
  std::string program;  // the input, written here for cmd_run
  std::string errors;   // the child's stderr
  std::uint8_t* shared = nullptr;
  std::size_t counters = 0;
  unsigned seconds = 30;
};

State& state() {
  static State s = [] {
    State st;
    const std::string base = "/tmp/tpbsim-fuzz-run-" + std::to_string(getpid());
    st.program = base + ".prog";
    st.errors = base + ".stderr";
    if (fuzz_counters_size() > 0) {
      st.counters = fuzz_counters_size();
      void* m =
          mmap(nullptr, st.counters, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
      FUZZ_CHECK(m != MAP_FAILED, "mmap of %zu bytes failed", st.counters);
      st.shared = static_cast<std::uint8_t*>(m);
    }
    if (const char* s = std::getenv("TPBSIM_FUZZ_RUN_SECONDS")) st.seconds = std::atoi(s);
    return st;
  }();
  // The two files go when the fuzzer does (not when a child exits).
  static const pid_t owner = getpid();
  static const bool cleanup = std::atexit([] {
    if (getpid() != owner) return;
    std::remove(state().program.c_str());
    std::remove(state().errors.c_str());
  }) == 0;
  (void)cleanup;
  return s;
}

void dump_child_stderr(const State& st) {
  std::ifstream in(st.errors);
  std::string line;
  while (std::getline(in, line)) std::fprintf(stderr, "  child: %s\n", line.c_str());
}

[[noreturn]] void child(const State& st) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  signal(SIGALRM, SIG_DFL);
  alarm(st.seconds);
  const int err = open(st.errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int null = open("/dev/null", O_WRONLY);
  if (err >= 0) dup2(err, 2);
  if (null >= 0) dup2(null, 1);
  const int rc = tpb::cli::cmd_run({st.program, "--quiet", "--stats", "/dev/null", "--retire",
                                    "/dev/null", "--vcd", "/dev/null", "--perfetto", "/dev/null"});
  if (st.shared) std::memcpy(st.shared, fuzz_counters_begin(), st.counters);
  std::fflush(nullptr);
  _exit(10 + rc);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxBytes) return -1;
  State& st = state();
  {
    std::ofstream out(st.program, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    out.close();
    FUZZ_CHECK(out.good(), "cannot write %s", st.program.c_str());
  }
  try {
    const tpb::isa::Program p = tpb::isa::load_program(st.program);
    if (p.size() > kMaxInstructions) return -1;
  } catch (const std::exception&) {
    return 0;  // refused before anything runs (asm target)
  }
  std::fflush(nullptr);
  const pid_t pid = fork();
  FUZZ_CHECK(pid >= 0, "fork failed: %s", std::strerror(errno));
  if (pid == 0) child(st);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) FUZZ_CHECK(errno == EINTR, "waitpid: %s", strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) >= 10 && WEXITSTATUS(status) <= 13) {
    if (st.shared) std::memcpy(fuzz_counters_begin(), st.shared, st.counters);
    return 0;
  }
  dump_child_stderr(st);
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
    FUZZ_CHECK(false, "the run took more than %u s (a hang)", st.seconds);
  if (WIFSIGNALED(status))
    FUZZ_CHECK(false, "the run died of signal %d (%s)", WTERMSIG(status),
               strsignal(WTERMSIG(status)));
  FUZZ_CHECK(false, "the run exited with %d, not 0..3", WEXITSTATUS(status) - 10);
  return 0;
}
