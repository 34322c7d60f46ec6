#include "platform/run/stop_signals.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "platform/run/staged_outputs.h"

namespace tpb::run {

namespace {

std::atomic<int> g_signal{0};
std::atomic<int> g_window{0};
StopMode g_mode = StopMode::Run;

// The line a stop at once prints, made before any signal (the handler only
// calls write(2)).
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
char g_abort_line[3][256];

// Children the signal is passed to: a fixed table of atomics.
constexpr int kMaxChildren = 1024;
std::atomic<pid_t> g_children[kMaxChildren];

void forward(int sig, const siginfo_t* info) {
  // Sent by a process to this one (kill, a batch system): pass it on. A
  // terminal's signal (SI_KERNEL) reached the whole process group already.
  if (!info || info->si_code > 0) return;
  for (auto& c : g_children)
    if (const pid_t p = c.load(); p > 0) ::kill(p, sig);
}

void on_stop(int sig, siginfo_t* info, void*) {
  const int saved_errno = errno;
  int none = 0;
  const bool first = g_signal.compare_exchange_strong(none, sig);
  forward(sig, info);
  if (g_mode == StopMode::Supervise || (first && g_window.load() > 0)) {
    errno = saved_errno;
    return;
  }
  remove_staging_files_now();
  for (int i = 0; i < 3; ++i)
    if (kStopSignals[i] == sig) {
      const ssize_t n = ::write(2, g_abort_line[i], std::strlen(g_abort_line[i]));
      (void)n;
    }
  ::_exit(128 + sig);
}

}  // namespace

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGXFSZ:
      return "SIGXFSZ";
    case SIGKILL:
      return "SIGKILL";
    default:
      return "signal";
  }
}

void install_stop_signals(const char* tool, StopMode mode) {
  g_mode = mode;
  for (int i = 0; i < 3; ++i)
    std::snprintf(g_abort_line[i], sizeof g_abort_line[i],
                  "%s: interrupted (%s): stopped at once; outputs not yet complete are not "
                  "written (no partial file is left)\n",
                  tool, signal_name(kStopSignals[i]));
  struct sigaction sa {};
  sa.sa_sigaction = on_stop;
  sa.sa_flags = SA_SIGINFO;  // no SA_RESTART: sleeps and waits wake up
  sigemptyset(&sa.sa_mask);
  for (int s : kStopSignals) sigaddset(&sa.sa_mask, s);
  for (int s : kStopSignals) ::sigaction(s, &sa, nullptr);
  // Write errors, not deaths: EPIPE and EFBIG are reported naming the file.
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGXFSZ, SIG_IGN);
}

void reset_signals_for_exec() {
  ::signal(SIGPIPE, SIG_DFL);
  ::signal(SIGXFSZ, SIG_DFL);
}

int stop_signal() { return g_signal.load(); }

StopWindow::StopWindow() { g_window.fetch_add(1); }
StopWindow::~StopWindow() { g_window.fetch_sub(1); }

void add_stop_child(pid_t pid) {
  for (auto& c : g_children) {
    pid_t free_slot = 0;
    if (c.compare_exchange_strong(free_slot, pid)) break;
  }
  // The signal may have come before the child was in the table.
  if (const int s = g_signal.load(); s != 0) ::kill(pid, s);
}

void remove_stop_child(pid_t pid) {
  for (auto& c : g_children) {
    pid_t p = pid;
    if (c.compare_exchange_strong(p, 0)) break;
  }
}

}  // namespace tpb::run
