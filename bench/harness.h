// What every platform benchmark shares. SystemC allows one elaboration per
// process, and a TpbCore runs once: each benchmark iteration runs its
// platform instance in a forked child, which sends back a trivially copyable
// report through a pipe; the parent never elaborates.
#pragma once

#include <benchmark/benchmark.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <type_traits>

#include <systemc>

namespace tpb::bench {

// Runs fn() in a child process and returns its report; a default report when
// the child failed (its error is printed, prefixed by `who`).
template <typename Report, typename Fn>
Report in_child(const char* who, Fn fn) {
  static_assert(std::is_trivially_copyable_v<Report>);
  int fd[2];
  if (::pipe(fd) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fd[0]);
    Report r{};
    try {
      r = fn();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", who, e.what());
    }
    const ssize_t n = ::write(fd[1], &r, sizeof r);
    ::_exit(n == sizeof r ? 0 : 1);
  }
  ::close(fd[1]);
  Report r{};
  if (pid < 0 || ::read(fd[0], &r, sizeof r) != static_cast<ssize_t>(sizeof r)) r = Report{};
  ::close(fd[0]);
  int ws = 0;
  if (pid > 0 && ::waitpid(pid, &ws, 0) == pid && WIFSIGNALED(ws))
    std::fprintf(stderr, "%s: child killed by signal %d\n", who, WTERMSIG(ws));
  return r;
}

// The body of a benchmark program's sc_main (SystemC supplies main()).
inline int run_benchmarks(int argc, char** argv) {
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace tpb::bench
